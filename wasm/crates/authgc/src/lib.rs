//! Multi-party authenticated garbling (Wang–Ranellucci–Katz, "Global-Scale Secure Multiparty
//! Computation", CCS 2017): n parties evaluate a Boolean circuit; any n − 1 of them may be
//! corrupted and deviate arbitrarily. Security is **malicious with abort**: a cheating party can
//! make the honest parties abort (and the abort may depend on nothing but its own choices), but
//! it cannot learn anything beyond its outputs or make an honest party accept a wrong output.
//!
//! # Abort, not identifiable abort
//!
//! WRK17 gives security with abort, **not identifiable abort**: an honest party that aborts knows
//! that someone deviated, not always who. Many checks test a value several parties contributed
//! to (a sum, a label the evaluator rebuilds from every garbler's rows, a digest of what everyone
//! saw), and a corrupt party can make such a check fail for an honest party's contribution. So a
//! [`AuthGcError::CheatingDetected`] names a culprit **only where the failed check proves that
//! party deviated** — its own message failed a check that only its own values and the checking
//! party's keys determine (a MAC under the checker's key on a value only it opened, a commitment
//! only it made, a label only it could have sent) — and says "the check cannot tell which party"
//! otherwise (`culprit: Culprit(None)`). Every site that builds the error says why it can or
//! cannot blame. With two parties every failed check proves the other party deviated, but the
//! sites do not rely on that unless their own argument covers it.
//!
//! # Layers
//!
//! * [`share`]: authenticated bits and BDOZ-style authenticated shares ⟨x⟩ (pure math).
//! * [`commit`]: hash commitments (pure).
//! * [`net`]: the protocol helpers every phase uses over a [`Channel`](webmpc_core::channel::Channel):
//!   concurrent exchanges with all peers, opening shares with a MAC check on every revealed bit,
//!   coin tossing after commitment, simultaneous broadcast, and a broadcast-consistency log.
//! * [`preprocess`]: the F_Pre interface ([`preprocess::Preprocessor`]) the garbling protocol
//!   consumes, and F_Pre.AND on wire masks from random AND triples.
//! * [`fpre`]: the real F_Pre (Π_aBit, Π_aShare, Π_HaAND, Π_LaAND, bucketing) on KOS Δ-OT.
//! * `ideal` (feature `ideal`): a trusted-dealer F_Pre for tests.
//! * [`online`]: the distributed garbling, input processing, evaluation and output protocol.
//!
//! # Conventions
//!
//! Parties are `0..n`. Each party i holds a global key Δ_i, fresh per protocol instance, used
//! both as its MAC key and as its free-XOR offset. "P_i's bit x is authenticated to P_j" means
//! P_j holds a key K_j[x] and P_i holds the tag M_j[x] = K_j[x] ⊕ x·Δ_j.

pub mod commit;
pub mod fpre;
#[cfg(feature = "ideal")]
pub mod ideal;
pub mod net;
pub mod online;
pub mod preprocess;
pub mod share;

use webmpc_circuit::CircuitError;
use webmpc_core::channel::{ChannelError, PartyId};
use webmpc_core::KernelError;
use webmpc_ot::OtError;

/// The statistical security parameter ρ used unless the caller asks for more: a cheating party
/// escapes a check with probability at most about 2^-ρ.
pub const DEFAULT_RHO: usize = 40;

/// The smallest ρ accepted.
pub const MIN_RHO: usize = 40;

/// The phases of the protocol, as the paper separates them; errors name the phase they arose in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Base OTs and the OT-extension instances between every pair of parties.
    Setup,
    /// Authenticated shares and AND triples, for a bound on the number of gates only.
    Independent,
    /// Wire masks and garbled tables for a known circuit, before inputs.
    Dependent,
    /// Input processing, evaluation and output.
    Online,
}

impl Phase {
    /// A stable lower-case name, mirrored by the SDK's progress events.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Independent => "function-independent preprocessing",
            Phase::Dependent => "function-dependent preprocessing",
            Phase::Online => "online",
        }
    }
}

impl core::fmt::Display for Phase {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Who failed a check, when the check proves it (see the [crate docs](crate#abort-not-identifiable-abort)):
/// `None` means the check cannot tell which party deviated, and then nobody may be named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Culprit(pub Option<PartyId>);

/// The text of a cheating verdict: names the culprit only when there is one.
fn describe_cheating(culprit: &Culprit, check: &str) -> String {
    match culprit.0 {
        Some(p) => format!("party {p} failed the {check}"),
        None => format!("the {check} failed, and the check cannot tell which party deviated"),
    }
}

/// Why an authenticated-garbling protocol failed. No variant carries a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthGcError {
    /// The channel to a peer failed (disconnect, timeout, wrong message length, …).
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// The OT layer failed (its own checks included).
    #[error(transparent)]
    Ot(#[from] OtError),
    /// A check that honest parties always pass failed: someone cheated (or messages were
    /// corrupted). The instance must be abandoned; nothing derived from it may be used.
    #[error("{phase}: {}: aborting", describe_cheating(culprit, check))]
    CheatingDetected {
        /// The phase the check belongs to.
        phase: Phase,
        /// The party the failed check proves deviated; `None` when it cannot tell (most checks
        /// on values several parties contributed to).
        culprit: Culprit,
        /// Which check failed (a stable, human-readable name).
        check: &'static str,
    },
    /// A peer sent bytes that do not decode (bad length, non-canonical padding, …). Naming the
    /// peer is always right: the bytes are its own message (channels are point to point and
    /// authenticated), and an honest party's messages always decode.
    #[error("{phase}: party {peer} sent a malformed {what}")]
    Malformed {
        /// The phase the message belongs to.
        phase: Phase,
        /// The peer concerned.
        peer: PartyId,
        /// What failed to decode.
        what: &'static str,
    },
    /// The parties disagree on public parameters (circuit, sizes, roles, ρ).
    #[error("party {peer} disagrees on the {what}")]
    ParameterMismatch {
        /// The peer concerned.
        peer: PartyId,
        /// Which parameter differs.
        what: &'static str,
    },
    /// The caller passed an invalid argument.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A kernel failed (only the platform CSPRNG can fail here).
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The circuit (typically one streamed in pieces) failed to decode or validate.
    #[error(transparent)]
    Circuit(#[from] CircuitError),
    /// A streamed circuit does not match the content hash the parties agreed on; found before any
    /// output is revealed.
    #[error("the circuit does not match the agreed content hash ({0})")]
    CircuitMismatch(&'static str),
}

impl AuthGcError {
    /// A stable machine-readable code, mirrored by the TypeScript SDK.
    pub fn code(&self) -> &'static str {
        match self {
            AuthGcError::Channel(e) => e.code(),
            AuthGcError::Ot(e) => e.code(),
            AuthGcError::CheatingDetected { .. } => "CHEATING_DETECTED",
            AuthGcError::Malformed { .. } => "MALFORMED_MESSAGE",
            AuthGcError::ParameterMismatch { .. } => "PARAMETER_MISMATCH",
            AuthGcError::InvalidArgument(_) => "INVALID_ARGUMENT",
            AuthGcError::Kernel(e) => e.code(),
            AuthGcError::Circuit(e) => e.code(),
            AuthGcError::CircuitMismatch(_) => "PARAMETER_MISMATCH",
        }
    }

    /// The phase the error arose in, when it is a protocol verdict.
    pub fn phase(&self) -> Option<Phase> {
        match self {
            AuthGcError::CheatingDetected { phase, .. } | AuthGcError::Malformed { phase, .. } => Some(*phase),
            _ => None,
        }
    }

    /// The peer concerned, when known.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            AuthGcError::Channel(e) => Some(e.peer()),
            AuthGcError::Ot(OtError::Channel(e)) => Some(e.peer()),
            AuthGcError::Ot(OtError::CheatingDetected { peer, .. } | OtError::Malformed { peer, .. }) => Some(*peer),
            AuthGcError::CheatingDetected { culprit, .. } => culprit.0,
            AuthGcError::Malformed { peer, .. } | AuthGcError::ParameterMismatch { peer, .. } => Some(*peer),
            _ => None,
        }
    }

    /// A cheating verdict of `check`, against `peer` only if the check proves `peer` deviated
    /// (`None`: it cannot tell which party did).
    pub fn cheating(phase: Phase, peer: Option<PartyId>, check: &'static str) -> AuthGcError {
        AuthGcError::CheatingDetected { phase, culprit: Culprit(peer), check }
    }
}

/// Checks a statistical security parameter.
pub fn check_rho(rho: usize) -> Result<usize, AuthGcError> {
    if !(MIN_RHO..=128).contains(&rho) {
        return Err(AuthGcError::InvalidArgument(format!("rho must be in [{MIN_RHO}, 128], got {rho}")));
    }
    Ok(rho)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cheating_verdict_names_a_party_only_with_a_culprit() {
        let named = AuthGcError::cheating(Phase::Online, Some(2), "tag check on a decrypted garbled row");
        assert_eq!(named.to_string(), "online: party 2 failed the tag check on a decrypted garbled row: aborting");
        assert_eq!(named.peer(), Some(2));
        // What the CLI prints and the SDK's message carries: no party, and it says why.
        let unnamed = AuthGcError::cheating(Phase::Online, None, "tag check on a decrypted garbled row");
        assert_eq!(
            unnamed.to_string(),
            "online: the tag check on a decrypted garbled row failed, and the check cannot tell which party deviated: aborting"
        );
        assert_eq!(unnamed.peer(), None);
    }
}
