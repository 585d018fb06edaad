//! Errors of the kernel layer. Messages name the offending argument and its length, never its
//! contents (which may be secret).

use alloc::string::String;

/// What a kernel call can refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A byte length that must be a multiple of some unit (16 for blocks) is not.
    #[error("{what}: length {len} is not a multiple of {unit} bytes")]
    RaggedLength { what: &'static str, len: usize, unit: usize },
    /// Two arguments that must have the same length do not.
    #[error("{what}: lengths differ ({left} vs {right})")]
    LengthMismatch { what: &'static str, left: usize, right: usize },
    /// An argument has the wrong fixed size (a key, a seed, a tweak).
    #[error("{what}: expected {expected} bytes, got {got}")]
    WrongSize { what: &'static str, expected: usize, got: usize },
    /// A dimension outside what the kernel supports.
    #[error("{what}: {detail}")]
    InvalidDimension { what: &'static str, detail: String },
    /// A caller-chosen size above what one call may allocate.
    #[error("{what}: {requested} exceeds the limit of {limit} per call")]
    TooLarge { what: &'static str, requested: String, limit: usize },
    /// The platform CSPRNG failed (no `crypto.getRandomValues`, no `getrandom(2)`).
    #[error("platform randomness unavailable: {0}")]
    Entropy(String),
}

impl KernelError {
    /// A stable machine-readable code, used by the bindings to build typed JS errors.
    pub fn code(&self) -> &'static str {
        match self {
            KernelError::RaggedLength { .. } => "RAGGED_LENGTH",
            KernelError::LengthMismatch { .. } => "LENGTH_MISMATCH",
            KernelError::WrongSize { .. } => "WRONG_SIZE",
            KernelError::InvalidDimension { .. } => "INVALID_DIMENSION",
            KernelError::TooLarge { .. } => "TOO_LARGE",
            KernelError::Entropy(_) => "ENTROPY_UNAVAILABLE",
        }
    }
}

/// Views `bytes` as blocks or says why not.
pub fn blocks_of<'a>(what: &'static str, bytes: &'a [u8]) -> Result<&'a [crate::Block], KernelError> {
    crate::Block::slice_from_bytes(bytes).ok_or(KernelError::RaggedLength { what, len: bytes.len(), unit: 16 })
}

/// Reads exactly one block from `bytes` or says why not.
pub fn one_block(what: &'static str, bytes: &[u8]) -> Result<crate::Block, KernelError> {
    let arr: [u8; 16] =
        bytes.try_into().map_err(|_| KernelError::WrongSize { what, expected: 16, got: bytes.len() })?;
    Ok(crate::Block(arr))
}
