//! The real F_Pre (WRK17 §5 and App. B) over KOS Δ-OT: Π_aBit, Π_aShare, Π_HaAND, Π_LaAND and
//! bucketing, implementing [`Preprocessor`](crate::preprocess::Preprocessor).
