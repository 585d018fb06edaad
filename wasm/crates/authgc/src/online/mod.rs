//! Distributed garbling, input processing, evaluation and output (WRK17 Figs. 2–3) over any
//! [`Preprocessor`](crate::preprocess::Preprocessor).
