//! Oblivious transfer for webmpc.
//!
//! * [`base`]: 128 base OTs in one round trip, Masny–Rindal "endemic" OT on ristretto255.
//! * [`kos`]: KOS malicious OT extension with the consistency check of the revised KOS paper
//!   (eprint 2015/546, Fig. 10), producing Δ-correlated OT (COT with a global Δ), random OT,
//!   correlated OT and chosen-message OT, in bounded-memory chunks.
//! * [`ideal`] (feature `ideal`): trusted-dealer versions of the same interfaces, so protocols
//!   built on OT can be tested against them; the real implementation passes the same tests.
//!
//! The interfaces are the traits below. Every OT is identified by a tweak that is unique across
//! batches, sessions and peers (see [`kos`]); hashing a correlation without its tweak is what
//! broke MASCOT's OT (Guo–Katz–Wang–Yu, App. C).
//!
//! Conventions: Δ-OT sender holds keys `K_j` and Δ; the receiver with choice bit `b_j` holds
//! `M_j = K_j ⊕ b_j·Δ`. Random OT sender holds `(m0_j, m1_j)`; the receiver holds `b_j` and
//! `m_{b_j}`. Choice bits are `bool`s at the API and never branch the code that handles them.
//!
//! **Security.** KOS is secure against a malicious sender or receiver, with abort; its one
//! known, tolerable leakage (a cheating receiver can guess bits of Δ, being caught with
//! probability ½ per guess) is why **Δ is never zero and never reused after an abort**, and why
//! hashed outputs on a caller-chosen Δ need an explicit opt-in. The rules are in [`kos`]; the
//! ideal functionality enforces the same ones, so code tested against it behaves the same with
//! the real protocol.

pub mod base;
#[cfg(feature = "ideal")]
pub mod contract;
#[cfg(feature = "ideal")]
pub mod ideal;
pub mod kos;
mod kos_core;
pub mod local;

use webmpc_core::channel::{ChannelError, PartyId};
use webmpc_core::{Block, KernelError};

pub use kos::{KosReceiver, KosSender};

/// Refuses Δ = 0, the one value that makes Δ-OT transfer nothing (`M_j = K_j` for every choice)
/// and hashed OT give the receiver both messages. Shared by [`kos`] and [`ideal`].
pub(crate) fn check_delta(delta: Block) -> Result<(), OtError> {
    use subtle::ConstantTimeEq;
    // Constant time, although only the error path depends on it: Δ is the sender's secret.
    if bool::from(delta.0.ct_eq(&[0u8; 16])) {
        return Err(OtError::InvalidArgument("Δ must be nonzero (with Δ = 0 the receiver gets both messages)".into()));
    }
    Ok(())
}

/// The error of a hashed-output call on an instance whose Δ the caller chose without opting in.
pub(crate) fn hashed_outputs_refused() -> OtError {
    OtError::InvalidArgument(
        "random, correlated and chosen-message OT need a random Δ or the explicit opt-in for a caller-chosen Δ \
         (KosSender::setup_hashed_with_delta, ideal::pair_hashed_with_delta)"
            .into(),
    )
}

/// An empty vector with room for `n` items, or a typed error when memory cannot hold them (a
/// huge OT count must not abort the process, or trap a Wasm instance).
pub(crate) fn try_vec<T>(what: &'static str, n: usize) -> Result<Vec<T>, OtError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let limit = isize::MAX as usize / core::mem::size_of::<T>().max(1);
        OtError::Kernel(KernelError::TooLarge { what, requested: n.to_string(), limit })
    })?;
    Ok(v)
}

/// Identifies one protocol instance. Both parties must use the same value, and no two instances
/// between the same parties may share one (derive per-instance ids with [`SessionId::derive`]).
/// It is hashed into every base-OT key and every OT-extension tweak.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionId(pub [u8; 32]);

impl SessionId {
    /// A sub-session id for `label`, e.g. one per OT-extension instance within a session.
    pub fn derive(&self, label: &[u8]) -> SessionId {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"webmpc/session-id/derive/v1");
        h.update(self.0);
        h.update((label.len() as u64).to_le_bytes());
        h.update(label);
        SessionId(h.finalize().into())
    }

    /// A fresh random id from the platform CSPRNG (tests and single-process runs; networked
    /// sessions agree on theirs during the handshake).
    pub fn random() -> Result<SessionId, OtError> {
        let mut id = [0u8; 32];
        webmpc_core::random::fill(&mut id)?;
        Ok(SessionId(id))
    }
}

impl core::fmt::Debug for SessionId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Public, but long: the first bytes are enough to tell sessions apart in logs.
        write!(f, "SessionId({:02x}{:02x}{:02x}{:02x}…)", self.0[0], self.0[1], self.0[2], self.0[3])
    }
}

/// Why an OT protocol failed. No variant carries secret data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OtError {
    /// The channel to the peer failed (disconnect, timeout, wrong message length, …).
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// A check that an honest peer always passes failed: the peer cheated (or its messages were
    /// corrupted). The session must be aborted; nothing derived from it may be used.
    #[error("party {peer} failed the {check}: aborting")]
    CheatingDetected {
        /// The peer that failed the check.
        peer: PartyId,
        /// Which check failed.
        check: &'static str,
    },
    /// The peer sent bytes that do not decode (e.g. not a valid ristretto255 point).
    #[error("party {peer} sent a malformed {what}")]
    Malformed {
        /// The peer concerned.
        peer: PartyId,
        /// What failed to decode.
        what: &'static str,
    },
    /// The caller passed an invalid argument.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A kernel failed (only the platform CSPRNG can fail here).
    #[error(transparent)]
    Kernel(#[from] KernelError),
}

impl OtError {
    /// A stable machine-readable code, mirrored by the TypeScript SDK.
    pub fn code(&self) -> &'static str {
        match self {
            OtError::Channel(e) => e.code(),
            OtError::CheatingDetected { .. } => "CHEATING_DETECTED",
            OtError::Malformed { .. } => "MALFORMED_MESSAGE",
            OtError::InvalidArgument(_) => "INVALID_ARGUMENT",
            OtError::Kernel(e) => e.code(),
        }
    }
}

/// Δ-OT (correlated OT with a global Δ) sender: the form garbling and authenticated bits consume.
#[allow(async_fn_in_trait)]
pub trait CotSender {
    /// The global correlation Δ, fixed for the instance's lifetime.
    fn delta(&self) -> Block;
    /// Returns `n` keys `K_j`; the receiver's `j`-th output is `K_j ⊕ b_j·Δ`.
    async fn send_cot(&mut self, n: usize) -> Result<Vec<Block>, OtError>;
}

/// Δ-OT receiver.
#[allow(async_fn_in_trait)]
pub trait CotReceiver {
    /// Returns `M_j = K_j ⊕ b_j·Δ` for the chosen bits `b`.
    async fn receive_cot(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError>;
}

/// Random OT sender: both messages are random and independent across OTs.
#[allow(async_fn_in_trait)]
pub trait RotSender {
    /// Returns `n` message pairs `(m0_j, m1_j)`.
    async fn send_random(&mut self, n: usize) -> Result<Vec<[Block; 2]>, OtError>;
}

/// Random OT receiver: the choice bits are random too.
#[allow(async_fn_in_trait)]
pub trait RotReceiver {
    /// Returns the random choice bits `b_j` and `m_{b_j}`.
    async fn receive_random(&mut self, n: usize) -> Result<(Vec<bool>, Vec<Block>), OtError>;
}

/// Chosen-message and correlated OT sender.
#[allow(async_fn_in_trait)]
pub trait OtSender {
    /// Transfers `messages[j][b_j]` to the receiver.
    async fn send_chosen(&mut self, messages: &[[Block; 2]]) -> Result<(), OtError>;
    /// Correlated OT: returns random `m0_j`; the receiver gets `m0_j ⊕ b_j·correlations[j]`.
    async fn send_correlated(&mut self, correlations: &[Block]) -> Result<Vec<Block>, OtError>;
}

/// Chosen-message and correlated OT receiver.
#[allow(async_fn_in_trait)]
pub trait OtReceiver {
    /// Returns `messages[j][b_j]`.
    async fn receive_chosen(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError>;
    /// Returns `m0_j ⊕ b_j·correlations[j]`.
    async fn receive_correlated(&mut self, choices: &[bool]) -> Result<Vec<Block>, OtError>;
}
