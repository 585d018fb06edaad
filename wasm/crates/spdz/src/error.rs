//! Errors of the MASCOT protocols. No variant carries a secret: they name the check or phase that
//! failed and, when a check can tell, the peer at fault.

use crate::program::ProgramError;
use webmpc_core::channel::{ChannelError, PartyId};
use webmpc_core::KernelError;
use webmpc_ot::OtError;

/// Why a MASCOT protocol step failed. After any error the party is poisoned: its shares, MAC
/// keys and preprocessing may be out of step with the other parties and are never used again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpdzError {
    /// The channel to a peer failed (disconnect, timeout, wrong length, …).
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// The OT layer failed (including its own cheating checks).
    #[error(transparent)]
    Ot(#[from] OtError),
    /// A MAC check failed: some party changed a value it opened, used an inconsistent value in
    /// COPE, or lied about its share. The check cannot tell who.
    #[error("MAC check failed in the {phase}: aborting")]
    MacCheckFailed {
        /// Where the check ran (input check, sacrifice, online opening, output, …).
        phase: &'static str,
    },
    /// The sacrifice of Π_Triple rejected a triple: some party deviated in Multiply.
    #[error("triple sacrifice failed: aborting")]
    SacrificeFailed,
    /// A client's check of the servers' client masks failed ([`crate::clients`]): reconstructed
    /// from every server's shares, some triple has c ≠ a·b, so some server changed a share it
    /// sent (or a share was lost or damaged on the way). Code `CHEATING_DETECTED` with no peer:
    /// the client cannot tell which server. The client must not send any input.
    #[error("the servers' client masks do not verify (c ≠ a·b): some server changed its share; no input was made")]
    ClientMasksInvalid,
    /// A check that identifies its culprit failed (a commitment that does not open, a broadcast
    /// seen differently by different parties).
    #[error("party {peer} failed the {check}: aborting")]
    CheatingDetected {
        /// The peer at fault (for a broadcast mismatch: the peer whose view differs).
        peer: PartyId,
        /// Which check failed.
        check: &'static str,
    },
    /// A peer sent bytes that do not decode (a non-canonical field element, a wrong length).
    #[error("party {peer} sent a malformed {what}")]
    Malformed {
        /// The peer concerned.
        peer: PartyId,
        /// What failed to decode.
        what: &'static str,
    },
    /// The parties disagree on public parameters (program, field, counts of preprocessed data).
    #[error("party {peer} disagrees on the {what}")]
    ParameterMismatch {
        /// The peer whose parameters differ.
        peer: PartyId,
        /// Which parameter.
        what: &'static str,
    },
    /// A program that does not decode or validate.
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// The caller passed an invalid argument (never a secret in the text).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// This party failed earlier (an abort, a lost peer) and its state cannot be used again:
    /// code `SESSION_FAILED`, distinct from `BUSY` (a call while another runs), because
    /// retrying cannot help; start a new session.
    #[error("this MASCOT party failed earlier and cannot be used again")]
    Poisoned,
    /// A kernel failed (only the platform CSPRNG can fail here).
    #[error(transparent)]
    Kernel(#[from] KernelError),
}

impl SpdzError {
    /// A stable machine-readable code, mirrored by the TypeScript SDK (`ts/errors.ts`).
    pub fn code(&self) -> &'static str {
        match self {
            SpdzError::Channel(e) => e.code(),
            SpdzError::Ot(e) => e.code(),
            SpdzError::MacCheckFailed { .. } => "MAC_CHECK_FAILED",
            SpdzError::SacrificeFailed => "SACRIFICE_FAILED",
            SpdzError::CheatingDetected { .. } | SpdzError::ClientMasksInvalid => "CHEATING_DETECTED",
            SpdzError::Malformed { .. } => "MALFORMED_MESSAGE",
            SpdzError::ParameterMismatch { .. } => "PARAMETER_MISMATCH",
            SpdzError::Program(e) => e.code(),
            SpdzError::InvalidArgument(_) => "INVALID_ARGUMENT",
            SpdzError::Poisoned => "SESSION_FAILED",
            SpdzError::Kernel(e) => e.code(),
        }
    }

    /// The peer at fault, when the failed check can tell.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            SpdzError::CheatingDetected { peer, .. }
            | SpdzError::Malformed { peer, .. }
            | SpdzError::ParameterMismatch { peer, .. } => Some(*peer),
            SpdzError::Ot(OtError::CheatingDetected { peer, .. } | OtError::Malformed { peer, .. }) => Some(*peer),
            _ => None,
        }
    }

    /// True when the failure came from the transport underneath (the binding rethrows the
    /// transport's own error then).
    pub fn is_transport(&self) -> bool {
        matches!(
            self,
            SpdzError::Channel(ChannelError::Transport { .. })
                | SpdzError::Ot(OtError::Channel(ChannelError::Transport { .. }))
        )
    }
}
