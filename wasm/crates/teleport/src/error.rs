//! Typed errors with stable machine-readable codes. Messages name the phase or check that failed
//! and who is suspected, never a secret value (no seed, label, input bit or key material).

use alloc::string::String;

/// A check a party makes in malicious mode (all but the last are the evaluator's, P2's). Which one
/// failed says who may have cheated; the protocol has no accountability beyond that (Lu et al.
/// §5): the party aborts without proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// τ̂ ≠ τ for a GC run: the tables, decoding bits or σ's from the enclave differ from what the
    /// garbler committed to. Either the enclave or the garbler lied.
    GcTau,
    /// A chunk's τ̂ ≠ τ for teleported ROTs: the enclave's ROT outputs or σ's differ from what the
    /// garbler (sender) committed to. Either the enclave or the sender lied.
    RotTau,
    /// An x2⁰ label from the enclave does not hash to its σ (τ already matched, so the σ's are the
    /// garbler's): the enclave lied.
    EnclaveLabels,
    /// An x2¹ label from the garbler does not hash to its σ: the garbler lied.
    GarblerShareLabels,
    /// A label of the garbler's own input does not hash to either σ of its wire: the garbler sent
    /// something that is not a label of that wire.
    GarblerInputLabels,
    /// The garbler's check (beyond the paper, which gives P1 no output): an output label P2 sent
    /// for an output revealed to P1 is neither label of its wire. P2 lied about P1's output.
    EvaluatorOutputLabels,
}

impl Check {
    /// A short stable name (part of error messages and of the C ABI's error text).
    pub fn name(self) -> &'static str {
        match self {
            Check::GcTau => "gc-tau",
            Check::RotTau => "rot-tau",
            Check::EnclaveLabels => "enclave-x2-share-labels",
            Check::GarblerShareLabels => "garbler-x2-share-labels",
            Check::GarblerInputLabels => "garbler-input-labels",
            Check::EvaluatorOutputLabels => "evaluator-output-labels",
        }
    }

    /// Who failed the check, as far as the evaluator can tell.
    pub fn suspect(self) -> &'static str {
        match self {
            Check::GcTau | Check::RotTau => "enclave or garbler",
            Check::EnclaveLabels => "enclave",
            Check::GarblerShareLabels | Check::GarblerInputLabels => "garbler",
            Check::EvaluatorOutputLabels => "evaluator",
        }
    }
}

/// Why the enclave's evidence was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceRefusal {
    /// The evidence comes from the simulation backend and the policy does not allow it.
    SimulatedRefused,
    /// The evidence is well formed, but its measurement is not one the policy pins (for its
    /// format: simulated and Open Enclave pins are kept apart).
    MeasurementMismatch,
    /// The signature or quote does not verify, or it does not bind the enclave's key and the
    /// session's challenge.
    Invalid,
    /// An Open Enclave quote arrived, but no verifier was configured to check it.
    NoVerifier,
    /// An Open Enclave quote arrived, but the policy pins no Open Enclave identity.
    NoPolicy,
    /// The enclave runs in SGX debug mode: its host can read its memory.
    DebugEnclave,
    /// The enclave's signer (MRSIGNER, or the simulation signer key) is not a pinned one.
    SignerMismatch,
    /// The enclave's product id (ISVPRODID) is not the pinned one.
    ProductMismatch,
    /// The enclave's security version (ISVSVN) is below the policy's minimum.
    SvnTooLow,
    /// The platform's TCB status is not one the policy accepts (revoked and unknown never are).
    TcbStatus,
    /// The evidence does not answer this party's fresh nonce: it was made for another session.
    Stale,
}

impl EvidenceRefusal {
    /// A short stable name (the SDK's `reason`).
    pub fn name(self) -> &'static str {
        match self {
            EvidenceRefusal::SimulatedRefused => "simulated",
            EvidenceRefusal::MeasurementMismatch => "measurement-mismatch",
            EvidenceRefusal::Invalid => "invalid",
            EvidenceRefusal::NoVerifier => "no-verifier",
            EvidenceRefusal::NoPolicy => "no-policy",
            EvidenceRefusal::DebugEnclave => "debug-enclave",
            EvidenceRefusal::SignerMismatch => "signer-mismatch",
            EvidenceRefusal::ProductMismatch => "product-mismatch",
            EvidenceRefusal::SvnTooLow => "svn-too-low",
            EvidenceRefusal::TcbStatus => "tcb-status",
            EvidenceRefusal::Stale => "stale",
        }
    }
}

/// Everything a teleport party, the enclave program or the C ABI can refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TeleportError {
    /// A malicious-mode check failed (see [`Check`]); the run must be discarded.
    #[error("teleport check {} failed (suspect: {}): aborting", .0.name(), .0.suspect())]
    CheckFailed(Check),
    /// The two parties (or a party and the enclave) do not describe the same job.
    #[error("the parties disagree on the {0}")]
    ParameterMismatch(&'static str),
    /// A message does not decode (truncated, padded, bad tag, wrong length).
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// A message arrived that the current state does not expect.
    #[error("unexpected {got} while {state}")]
    UnexpectedMessage {
        /// What the receiver was doing.
        state: &'static str,
        /// What arrived.
        got: &'static str,
    },
    /// A size above what the receiver accepts (before anything is allocated for it).
    #[error("{what}: {got} exceeds the limit of {limit}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// The size asked for.
        got: u64,
        /// The limit.
        limit: u64,
    },
    /// A sealed secret does not open: wrong key or role, tampered ciphertext, or a job header
    /// other than the one it was sealed for.
    #[error("the sealed secret does not open for this enclave, role and job")]
    SealOpenFailed,
    /// The enclave's evidence was refused by the policy.
    #[error("enclave evidence refused: {}", .0.name())]
    EvidenceRefused(EvidenceRefusal),
    /// The caller's own arguments are invalid.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The enclave program (or its host) reported an error: its code, and its detail (which names
    /// a limit or a check, never a secret; cut to printable text of bounded length).
    #[error("the enclave reported {code}: {detail}")]
    Remote {
        /// The stable code (`TOO_LARGE`, `PARAMETER_MISMATCH`, `ENCLAVE_PROGRAM_EXITED`, …).
        code: String,
        /// What the enclave said about it.
        detail: String,
    },
    /// A kernel failed (only the platform CSPRNG can).
    #[error(transparent)]
    Kernel(#[from] webmpc_core::KernelError),
    /// The channel failed.
    #[cfg(feature = "std")]
    #[error(transparent)]
    Channel(#[from] webmpc_core::channel::ChannelError),
}

impl TeleportError {
    /// A stable machine-readable code, for the SDK's typed errors and the C ABI.
    pub fn code(&self) -> &'static str {
        match self {
            TeleportError::CheckFailed(_) => "ENCLAVE_CHECK_FAILED",
            TeleportError::ParameterMismatch(_) => "PARAMETER_MISMATCH",
            TeleportError::Malformed(_) => "MALFORMED_MESSAGE",
            TeleportError::UnexpectedMessage { .. } => "UNEXPECTED_MESSAGE",
            TeleportError::TooLarge { .. } => "TOO_LARGE",
            TeleportError::SealOpenFailed => "SEAL_OPEN_FAILED",
            TeleportError::EvidenceRefused(EvidenceRefusal::SimulatedRefused) => "SIMULATED_ENCLAVE_REFUSED",
            TeleportError::EvidenceRefused(EvidenceRefusal::MeasurementMismatch) => "ENCLAVE_MEASUREMENT_MISMATCH",
            TeleportError::EvidenceRefused(_) => "EVIDENCE_INVALID",
            TeleportError::InvalidArgument(_) => "INVALID_ARGUMENT",
            TeleportError::Remote { .. } => "ENCLAVE_FAILED",
            TeleportError::Kernel(e) => e.code(),
            #[cfg(feature = "std")]
            TeleportError::Channel(e) => e.code(),
        }
    }
}
