//! AES-128 encryption, constant-time on every backend.
//!
//! * Wasm with SIMD128: bitsliced, 8 blocks per step ([`bitsliced`] over `v128`).
//! * x86_64 with AES-NI: the hardware instructions.
//! * Anything else: the same bitsliced code over a portable `u128` lane.
//!
//! Only encryption is provided: every use in webmpc (hashing, PRG in counter mode, garbling)
//! needs the forward permutation alone.

mod bitsliced;
mod key_schedule;
mod lane;
mod sbox;

// A `no_std` build for a target without SSE (e.g. `x86_64-unknown-none`) cannot run AES-NI at all.
#[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
mod aesni;

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::error::{blocks_of, one_block};
use crate::{Block, KernelError};

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type FastLane = crate::simd::wasm::WasmLane;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type FastLane = crate::simd::PortableLane;

/// Which implementation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Bitsliced over Wasm SIMD128 `v128` lanes.
    WasmSimd128Bitsliced,
    /// Bitsliced over a portable `u128` lane (same algorithm as the Wasm path).
    PortableBitsliced,
    /// x86_64 AES-NI instructions.
    AesNi,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::WasmSimd128Bitsliced => "wasm-simd128-bitsliced",
            Backend::PortableBitsliced => "portable-bitsliced",
            Backend::AesNi => "aes-ni",
        }
    }

    /// The fastest backend this build and CPU have.
    pub fn best() -> Backend {
        #[cfg(all(target_arch = "x86_64", feature = "std"))]
        {
            static HAS_AESNI: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            if *HAS_AESNI.get_or_init(aesni::available) {
                return Backend::AesNi;
            }
        }
        #[cfg(all(target_arch = "x86_64", not(feature = "std"), target_feature = "sse2"))]
        if aesni::available() {
            return Backend::AesNi;
        }
        if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
            Backend::WasmSimd128Bitsliced
        } else {
            Backend::PortableBitsliced
        }
    }

    /// Whether this build and CPU can run `self`. A Wasm build with SIMD128 carries only the
    /// SIMD lane: the portable lane runs the same algorithm and is cross-checked natively, so
    /// shipping it would only add code and key storage.
    pub fn is_available(self) -> bool {
        let simd_wasm = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
        match self {
            Backend::WasmSimd128Bitsliced => simd_wasm,
            Backend::PortableBitsliced => !simd_wasm,
            Backend::AesNi => Backend::best() == Backend::AesNi,
        }
    }

    /// Every backend this build and CPU can run (for cross-checking tests and benches).
    pub fn available() -> Vec<Backend> {
        [Backend::AesNi, Backend::WasmSimd128Bitsliced, Backend::PortableBitsliced]
            .into_iter()
            .filter(|b| b.is_available())
            .collect()
    }
}

/// An AES-128 key, expanded and (for the bitsliced backends) bitsliced once.
pub struct Aes128 {
    keys: Box<KeyMaterial>,
    backend: Backend,
}

/// On the heap and built in place, so that moving an `Aes128` (into an `Option`, a `Prg`, a JS
/// wrapper) moves a pointer and leaves no copies of the key schedule in stale stack frames.
#[derive(Clone)]
struct KeyMaterial {
    round_keys: [Block; 11],
    fast: bitsliced::SlicedKeys<FastLane>,
}

impl Aes128 {
    /// Expands `key` for the fastest available backend.
    pub fn new(key: Block) -> Self {
        Self::with_backend(key, Backend::best()).expect("the best backend is always available")
    }

    /// Expands `key` for a specific backend; `None` if this build or CPU cannot run it.
    pub fn with_backend(key: Block, backend: Backend) -> Option<Self> {
        if !backend.is_available() {
            return None;
        }
        let mut keys = Box::new(KeyMaterial { round_keys: [Block::ZERO; 11], fast: bitsliced::SlicedKeys::zeroed() });
        key_schedule::expand_key(&key, &mut keys.round_keys);
        crate::count::add(crate::count::Op::AesKeyExpansion, 1);
        let KeyMaterial { round_keys, fast } = &mut *keys;
        fast.fill(round_keys);
        Some(Aes128 { keys, backend })
    }

    /// Parses a 16-byte key.
    pub fn from_key_bytes(key: &[u8]) -> Result<Self, KernelError> {
        Ok(Self::new(one_block("AES key", key)?))
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Encrypts `blocks` in place (ECB over independent blocks; any count, including zero).
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        crate::count::add(crate::count::Op::AesBlock, blocks.len() as u64);
        match self.backend {
            #[cfg(all(target_arch = "x86_64", any(feature = "std", target_feature = "sse2")))]
            // SAFETY: `with_backend` only selects AES-NI after runtime detection succeeded.
            Backend::AesNi => unsafe { aesni::encrypt_blocks(&self.keys.round_keys, blocks) },
            _ => bitsliced::encrypt_blocks(&self.keys.fast, blocks),
        }
    }

    /// Encrypts one block. Prefer the batch call: the bitsliced backends always work on eight.
    pub fn encrypt_block(&self, block: Block) -> Block {
        let mut b = [block];
        self.encrypt_blocks(&mut b);
        b[0]
    }

    /// Encrypts a byte buffer in place; its length must be a multiple of 16.
    pub fn encrypt_bytes(&self, bytes: &mut [u8]) -> Result<(), KernelError> {
        blocks_of("AES input", bytes)?;
        let blocks = Block::slice_from_bytes_mut(bytes).expect("length checked above");
        self.encrypt_blocks(blocks);
        Ok(())
    }
}

impl Clone for Aes128 {
    fn clone(&self) -> Self {
        Aes128 { keys: self.keys.clone(), backend: self.backend }
    }
}

impl Drop for Aes128 {
    fn drop(&mut self) {
        Block::wipe(&mut self.keys.round_keys);
        self.keys.fast.wipe();
    }
}

/// The public key of the fixed-key permutation π used by the hashes: the first 128 bits of the
/// fractional part of π in hexadecimal (nothing up our sleeve). Public by design (Guo et al.
/// model π as a random permutation that every party can evaluate).
pub const FIXED_KEY: Block =
    Block([0x24, 0x3f, 0x6a, 0x88, 0x85, 0xa3, 0x08, 0xd3, 0x13, 0x19, 0x8a, 0x2e, 0x03, 0x70, 0x73, 0x44]);

/// π: AES-128 under [`FIXED_KEY`], expanded and bitsliced once per process.
pub fn fixed_key_aes() -> &'static Aes128 {
    #[cfg(feature = "std")]
    {
        static PI: std::sync::OnceLock<Aes128> = std::sync::OnceLock::new();
        PI.get_or_init(|| Aes128::new(FIXED_KEY))
    }
    #[cfg(not(feature = "std"))]
    {
        // Racing initialisers may each build one; the first stored wins and the rest are dropped.
        static PI: once_cell::race::OnceBox<Aes128> = once_cell::race::OnceBox::new();
        PI.get_or_init(|| Box::new(Aes128::new(FIXED_KEY)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::aes::cipher::{BlockEncrypt, KeyInit};
    use proptest::prelude::*;

    fn hex16(s: &str) -> Block {
        let mut b = [0u8; 16];
        for i in 0..16 {
            b[i] = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        Block(b)
    }

    fn rustcrypto(key: Block, blocks: &[Block]) -> Vec<Block> {
        let c = ::aes::Aes128::new(&key.0.into());
        blocks
            .iter()
            .map(|b| {
                let mut g = b.0.into();
                c.encrypt_block(&mut g);
                Block(g.into())
            })
            .collect()
    }

    #[test]
    fn fips197_appendix_c1_on_every_backend() {
        let key = hex16("000102030405060708090a0b0c0d0e0f");
        let pt = hex16("00112233445566778899aabbccddeeff");
        for backend in Backend::available() {
            let aes = Aes128::with_backend(key, backend).unwrap();
            assert_eq!(aes.encrypt_block(pt).to_hex(), "69c4e0d86a7b0430d8cdb78070b4c55a", "{backend:?}");
        }
    }

    #[test]
    fn sp800_38a_f11_ecb_on_every_backend() {
        let key = hex16("2b7e151628aed2a6abf7158809cf4f3c");
        let pts = [
            "6bc1bee22e409f96e93d7e117393172a",
            "ae2d8a571e03ac9c9eb76fac45af8e51",
            "30c81c46a35ce411e5fbc1191a0a52ef",
            "f69f2445df4f9b17ad2b417be66c3710",
        ];
        let cts = [
            "3ad77bb40d7a3660a89ecaf32466ef97",
            "f5d3d58503b9699de785895a96fdbaaf",
            "43b1cd7f598ece23881b00e3ed030688",
            "7b0c785e27e8ad3f8223207104725dd4",
        ];
        for backend in Backend::available() {
            let aes = Aes128::with_backend(key, backend).unwrap();
            let mut blocks: Vec<Block> = pts.iter().map(|s| hex16(s)).collect();
            aes.encrypt_blocks(&mut blocks);
            let got: Vec<String> = blocks.iter().map(Block::to_hex).collect();
            assert_eq!(got, cts, "{backend:?}");
        }
    }

    #[test]
    fn fixed_key_zero_vector() {
        // Key 0, plaintext 0 (also in the reference circuits' README).
        let aes = Aes128::with_backend(Block::ZERO, Backend::PortableBitsliced).unwrap();
        assert_eq!(aes.encrypt_block(Block::ZERO).to_hex(), "66e94bd4ef8a2c3b884cfa59ca342b2e");
    }

    #[test]
    fn ragged_byte_input_is_an_error() {
        let aes = fixed_key_aes();
        assert!(matches!(aes.encrypt_bytes(&mut [0u8; 17]), Err(KernelError::RaggedLength { len: 17, .. })));
        assert!(aes.encrypt_bytes(&mut []).is_ok());
        assert!(Aes128::from_key_bytes(&[0u8; 15]).is_err());
    }

    proptest! {
        #[test]
        fn every_backend_matches_rustcrypto(key in any::<[u8; 16]>(), data in proptest::collection::vec(any::<[u8; 16]>(), 0..70)) {
            let key = Block(key);
            let input: Vec<Block> = data.into_iter().map(Block).collect();
            let expected = rustcrypto(key, &input);
            for backend in Backend::available() {
                let mut got = input.clone();
                Aes128::with_backend(key, backend).unwrap().encrypt_blocks(&mut got);
                prop_assert_eq!(&got, &expected, "{:?}", backend);
            }
        }
    }
}
