//! The pure part of F_Pre: parameters, tweaks, and the local computations of Π_aBit, Π_aShare,
//! Π_HaAND, Π_LaAND and bucketing. No IO, no async and no randomness source of its own (the
//! public coins and every party's random bits come in as arguments); the driver in
//! [`super`] runs them over the network.
//!
//! Every function here is constant-time in secret bits (selection through masks) and batched:
//! hashes go through [`Hasher::tccr_many_counter`] in chunks, GF(2^128) sums through
//! [`gf128_inner_product`].

use crate::preprocess::Triples;
use crate::share::{mask, AuthShares};
use sha2::{Digest, Sha256};
use webmpc_core::gf128::gf128_inner_product;
use webmpc_core::hash::Hasher;
use webmpc_core::prg::Prg;
use webmpc_core::Block;

/// κ: bits of a MAC key, of Δ and of a GF(2^128) element.
pub const KAPPA: usize = 128;

/// Blocks hashed or combined per step: the scratch stays in L1 and the batch kernels get long
/// enough runs to amortise their setup.
const CHUNK: usize = 1024;

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// One-bit consistency checks Π_aBit runs per batch: ρ. Each catches a party that authenticated
/// different bits to different peers with probability 1/2, independently (a fixed nonzero
/// difference vector is orthogonal to a uniform coefficient vector with probability 1/2), so a
/// cheater passes all of them with probability 2^{−ρ}.
pub fn abit_checks(rho: usize) -> usize {
    rho
}

/// Padding bits Π_aBit appends to every batch and throws away after its consistency check:
/// checks + ρ = 2ρ.
///
/// The checks reveal k = ρ GF(2)-linear combinations of the bits. The last `p` bits are uniform
/// and discarded, so the revealed combinations are uniform and independent of the kept bits as
/// soon as the k × p matrix of the padding columns' coefficients has rank k. Its rows are uniform
/// and independent, so by the union bound of WRK17 Lemma B.1 it is rank-deficient with
/// probability at most 2^{k − p}: `p = k + ρ` bounds the leakage by 2^{−ρ}. (The paper's 2ρ
/// checks with 2ρ padding give the vacuous bound 2^0; "padding ≥ checks + ρ" is what the lemma
/// needs.)
pub fn abit_padding(rho: usize) -> usize {
    abit_checks(rho) + rho
}

/// The bucket size and the number of triples a batch actually generates (at least the number
/// requested; the surplus is discarded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketPlan {
    /// B: leaky triples per output triple.
    pub bucket: usize,
    /// ℓ: output triples generated (≥ requested).
    pub triples: usize,
}

impl BucketPlan {
    /// Leaky triples the batch needs: B·ℓ.
    pub fn leaky(&self) -> usize {
        self.bucket * self.triples
    }
}

/// Upper bound on the probability that bucketing leaves some output triple leaky, for ℓ output
/// triples in buckets of B, compared against 2^{−ρ}: `true` iff the bound is at most 2^{−ρ}.
///
/// The adversary attacks t of the L = B·ℓ leaky triples (a selective failure on x); each attack
/// goes unnoticed with probability 1/2, independently, so all t survive with probability 2^{−t}.
/// The buckets are a uniformly random partition drawn afterwards, so a given bucket consists of
/// attacked triples only with probability C(t, B) / C(L, B); a union bound over the ℓ buckets and
/// a maximum over t gives
///
/// ```text
/// ε(ℓ, B) = max_t 2^{−t} · ℓ · C(t, B) / C(L, B) = max_t 2^{−t} · ℓ · Π_{i<B} (t − i) / (L − i).
/// ```
///
/// The term grows while t + 1 < 2B and shrinks after, so t ≤ 4B + 4 covers the maximum. Only
/// IEEE basic operations are used (correctly rounded, so every platform — native, Wasm in any
/// engine — computes the same bits and all parties agree on the plan).
pub fn bucketing_secure(triples: usize, bucket: usize, rho: usize) -> bool {
    if triples == 0 || bucket < 2 {
        return triples == 0;
    }
    let total = triples * bucket;
    let mut threshold = 1.0f64;
    for _ in 0..rho {
        threshold *= 0.5;
    }
    let mut pow = 1.0f64;
    for _ in 0..bucket {
        pow *= 0.5;
    }
    let mut worst = 0.0f64;
    for t in bucket..=total.min(4 * bucket + 4) {
        let mut term = triples as f64 * pow;
        for i in 0..bucket {
            term *= (t - i) as f64 / (total - i) as f64;
        }
        worst = worst.max(term);
        pow *= 0.5;
    }
    worst <= threshold
}

/// emp-agmpc's bucket sizes for ρ = 40 (ℓ ≥ 3,100 → 4, ℓ ≥ 280,000 → 3, else 5), valid from
/// ℓ = 320 on; [`bucketing_secure`] reproduces them (its exact crossovers are 320, 3,044 and
/// 276,325).
fn emp_bucket(triples: usize) -> usize {
    if triples >= 280_000 {
        3
    } else if triples >= 3_100 {
        4
    } else {
        5
    }
}

/// The bucketing plan for `requested` triples at statistical security ρ.
///
/// * ρ = 40 and ℓ ≥ 320: emp-agmpc's thresholds (5 / 4 / 3), from 3,100 and 280,000 triples.
/// * Otherwise (fewer triples, or ρ > 40): the cheapest (B, ℓ′ ≥ ℓ) — fewest leaky triples B·ℓ′ —
///   with [`bucketing_secure`]`(ℓ′, B, ρ)`. Small batches need either a larger B or generating
///   more triples than asked (emp-agmpc always generates at least 320); e.g. ρ = 40 and ℓ = 1
///   gives B = 40 (40 leaky triples instead of emp-agmpc's 5 × 320).
pub fn bucket_plan(requested: usize, rho: usize) -> BucketPlan {
    if requested == 0 {
        return BucketPlan { bucket: 0, triples: 0 };
    }
    if rho == 40 && requested >= 320 {
        return BucketPlan { bucket: emp_bucket(requested), triples: requested };
    }
    let cap = requested.saturating_mul(4).saturating_add(4096);
    let mut best: Option<BucketPlan> = None;
    for bucket in 2..=rho.max(2) {
        if !bucketing_secure(cap, bucket, rho) {
            continue;
        }
        // The bound falls as ℓ grows: the smallest secure ℓ′ ≥ requested by bisection.
        let (mut lo, mut hi) = (requested, cap);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bucketing_secure(mid, bucket, rho) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let plan = BucketPlan { bucket, triples: lo };
        if best.is_none_or(|b| plan.leaky() < b.leaky()) {
            best = Some(plan);
        }
    }
    // B = ρ with ℓ′ = requested always qualifies (ε(ℓ, ρ) ≤ ε(1, ρ) = 2^{−ρ}), so best is set.
    best.unwrap_or(BucketPlan { bucket: rho, triples: requested })
}

// ---------------------------------------------------------------------------------------------
// Tweaks
// ---------------------------------------------------------------------------------------------

/// Parties a tweak can name (10 bits each for the key holder and the bit owner).
pub const MAX_PARTIES: usize = 1 << 10;
/// Leaky triples one instance can hash before its tweak counter is exhausted.
pub const MAX_LEAKY: u64 = 1 << 40;

/// What a hash of a Δ-OT key is for; part of its tweak, so that hashes for different purposes
/// (today one, shared by Π_HaAND and Π_LaAND) can never share a tweak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum HashUse {
    /// The hashes of K and K ⊕ Δ shared by Π_HaAND (bit 0) and Π_LaAND (bits 1..127).
    AndTriple = 1,
}

/// The most F_Pre instances of one party that can share its global key Δ_i: the primary (index
/// 0) and its parallel instances (1..), each with its own tweak domain (the low byte of the tag).
pub const MAX_INSTANCES: usize = 1 << 8;

/// The session part of every tweak for F_Pre instance `instance` of a party (0: the primary,
/// 1..: its parallel instances, [`super::RealPreprocessor::setup_with_delta`]): 56 bits of
/// SHA-256 of the instance's session id, then the instance index in the low byte.
///
/// The index makes the tweaks of a party's instances disjoint **unconditionally**: they share
/// Δ_i, so a tweak repeated between two of them would be a TCCR query repeated under the same
/// secret, and a 64-bit hash of distinct session ids differs only with probability 1 − 2^{−64}
/// (or less, if a party could grind the session id). With the index in the tweak, two instances
/// of one session never meet, whatever their session ids hash to.
pub fn tweak_tag(session: &[u8; 32], instance: u8) -> u64 {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/fpre/tweak-tag/v2");
    h.update(session);
    let d = h.finalize();
    let tag = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
    (tag & !0xff) | u64::from(instance)
}

/// The tweak of leaky triple `counter` for the key `holder` holds on `owner`'s bit, as a
/// little-endian 128-bit integer:
///
/// ```text
/// bits 0..40 counter | 40..50 holder | 50..60 owner | 60..64 use | 64..72 instance | 72..128 session tag
/// ```
///
/// (`tag` is [`tweak_tag`]: the instance index and the session tag.) Injective in (instance, use,
/// holder, owner, counter) within a session, so no two hashes of a party's instances share a
/// tweak — not within an instance (the counter runs over the instance's lifetime, across calls,
/// batches and pairs), and not between the primary and a parallel instance, which hash under
/// the same Δ_i (the instance field differs); across sessions the tags differ except with
/// probability 2^{−56}, and each session has its own fresh Δ anyway. Triple `counter + k` of a
/// contiguous run has tweak `base + k`, which is the form [`Hasher::tccr_many_counter`] takes.
pub fn tweak_base(tag: u64, usage: HashUse, holder: usize, owner: usize, counter: u64) -> u128 {
    debug_assert!(holder < MAX_PARTIES && owner < MAX_PARTIES && counter < MAX_LEAKY);
    (tag as u128) << 64 | (usage as u128) << 60 | (owner as u128) << 50 | (holder as u128) << 40 | counter as u128
}

// ---------------------------------------------------------------------------------------------
// Π_aBit: the consistency check
// ---------------------------------------------------------------------------------------------

/// Positions per chunk of coefficients (a multiple of 64): each check's coefficients for a chunk
/// are `ABIT_CHUNK / 64` words drawn from the PRG, chunk after chunk, check after check.
const ABIT_CHUNK: usize = 1024;
const WORDS: usize = ABIT_CHUNK / 64;

/// One party's side of the Π_aBit check over its view `shares`: for each check j < k, the parity
/// X_j = ⊕_m r_{j,m}·x_m of its own bits, the combined tags ⊕_m r_{j,m}·M_p\[x_m\] under each peer
/// p's key and the combined keys ⊕_m r_{j,m}·K_me\[x^p_m\] on each peer's bits.
#[derive(Clone, PartialEq, Eq)]
pub struct AbitCombination {
    /// Bit j is X_j.
    pub x: u128,
    /// `macs[p][j]` (empty at this party's own index).
    pub macs: Vec<Vec<Block>>,
    /// `keys[p][j]` (empty at this party's own index).
    pub keys: Vec<Vec<Block>>,
}

/// Adds `⊕_m r_{j,m}·col[m]` to `acc[j]` for every check j, over one chunk. Groups of four
/// positions share a table of the 16 XOR combinations of their blocks (11 XORs), after which each
/// check costs one lookup indexed by its four coefficient bits — public coins, so the secret
/// blocks are never used as an index.
fn combine_chunk(col: &[Block], words: &[u64], k: usize, acc: &mut [u128]) {
    let mut table = [0u128; 16];
    for (g, quad) in col.chunks(4).enumerate() {
        let mut v = [0u128; 4];
        for (d, b) in v.iter_mut().zip(quad) {
            *d = b.to_u128();
        }
        table[1] = v[0];
        table[2] = v[1];
        table[3] = v[0] ^ v[1];
        table[4] = v[2];
        for i in 5..8 {
            table[i] = v[2] ^ table[i - 4];
        }
        table[8] = v[3];
        for i in 9..16 {
            table[i] = v[3] ^ table[i - 8];
        }
        let (word, shift) = (g / 16, 4 * (g % 16));
        for (j, a) in acc.iter_mut().enumerate().take(k) {
            *a ^= table[((words[j * WORDS + word] >> shift) & 15) as usize];
        }
    }
    table.iter_mut().for_each(|t| *t = 0);
}

/// Combines a batch with the k one-bit coefficient vectors expanded from the public `seed`
/// (AES-CTR), chunk by chunk, so a batch of any size costs no extra memory.
pub fn abit_combine(seed: Block, k: usize, shares: &AuthShares) -> AbitCombination {
    assert!(k <= 128, "at most 128 checks");
    let n = shares.parties();
    let me = shares.me;
    let mut macs = vec![vec![0u128; k]; n];
    let mut keys = vec![vec![0u128; k]; n];
    let mut x = 0u128;
    let mut prg = Prg::from_seed(seed);
    let mut words = vec![0u64; k * WORDS];
    let mut bytes = vec![0u8; 8 * k * WORDS];
    let len = shares.len();
    for off in (0..len).step_by(ABIT_CHUNK) {
        let end = (off + ABIT_CHUNK).min(len);
        next_words(&mut prg, &mut bytes, &mut words);
        let mut bits = [0u64; WORDS];
        for (m, &b) in shares.bits[off..end].iter().enumerate() {
            bits[m / 64] |= (b as u64) << (m % 64);
        }
        for j in 0..k {
            let parity = (0..WORDS).fold(0u32, |p, w| p ^ (words[j * WORDS + w] & bits[w]).count_ones()) & 1;
            x ^= (parity as u128) << j;
        }
        bits.iter_mut().for_each(|w| *w = 0);
        for p in (0..n).filter(|&p| p != me) {
            combine_chunk(&shares.macs[p][off..end], &words, k, &mut macs[p]);
            combine_chunk(&shares.keys[p][off..end], &words, k, &mut keys[p]);
        }
    }
    let blocks = |v: Vec<Vec<u128>>| -> Vec<Vec<Block>> {
        v.into_iter()
            .enumerate()
            .map(|(p, c)| if p == me { Vec::new() } else { c.into_iter().map(Block::from_u128).collect() })
            .collect()
    };
    AbitCombination { x, macs: blocks(macs), keys: blocks(keys) }
}

/// The next chunk of coefficient words from the PRG, read little-endian so every platform draws
/// the same coefficients.
fn next_words(prg: &mut Prg, bytes: &mut [u8], words: &mut [u64]) {
    prg.fill_bytes(bytes);
    for (w, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        *w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
}

/// The coefficients r_{j,index} of position `index` for every check j (bit j), as
/// [`abit_combine`] draws them (tests of deviating parties; the protocol streams them).
pub fn abit_coefficients(seed: Block, k: usize, index: usize) -> u128 {
    let mut prg = Prg::from_seed(seed);
    let mut words = vec![0u64; k * WORDS];
    let mut bytes = vec![0u8; 8 * k * WORDS];
    for _ in 0..=index / ABIT_CHUNK {
        next_words(&mut prg, &mut bytes, &mut words);
    }
    let m = index % ABIT_CHUNK;
    (0..k).fold(0u128, |c, j| c | (((words[j * WORDS + m / 64] >> (m % 64)) & 1) as u128) << j)
}

/// The verifier's test of a prover's X and combined tags against its own combined keys: for every
/// check j, tag_j = key_j ⊕ X_j·Δ, by linearity of M = K ⊕ x·Δ. Constant-time.
pub fn abit_verify(key_sums: &[Block], x: u128, mac_sums: &[Block], delta: Block) -> bool {
    assert_eq!(key_sums.len(), mac_sums.len(), "one combined key per combined tag");
    let mut diff = 0u128;
    for (j, (k, m)) in key_sums.iter().zip(mac_sums).enumerate() {
        diff |= (*k ^ (delta & mask((x >> j) & 1 == 1)) ^ *m).to_u128();
    }
    use subtle::ConstantTimeEq;
    bool::from(diff.ct_eq(&0u128))
}

// ---------------------------------------------------------------------------------------------
// Π_aShare: the global-key consistency check
// ---------------------------------------------------------------------------------------------

/// C0_r = ⊕_{k≠me} K_me\[x^k_r\] for every position r: the prover's key sums (C1 = C0 ⊕ Δ).
pub fn key_sums(shares: &AuthShares) -> Vec<Block> {
    let mut out = vec![Block::ZERO; shares.len()];
    for j in shares.peers() {
        for (o, k) in out.iter_mut().zip(&shares.keys[j]) {
            *o ^= *k;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Π_HaAND and Π_LaAND: the hashed messages
// ---------------------------------------------------------------------------------------------

/// The bits of a hash the LaAND check uses: all but bit 0, which is Π_HaAND's.
pub const LAAND_BITS: Block = Block::from_u128(!1u128);

fn tccr(input: &[Block], base: u128, out: &mut [Block]) {
    // The caller keeps counter + len < 2^40, so the low 40 bits never carry into the pair fields
    // and nothing wraps.
    Hasher::fixed().tccr_many_counter(input, base, out).expect("tweak range checked by the caller");
}

/// The key holder's messages to one peer for a batch of leaky triples, with K_t its key on the
/// peer's x_t and H = TCCR with tweak `base + t`. One hash per key serves both protocols: bit 0
/// (the lsb) is Π_HaAND's, bits 1..127 are Π_LaAND's (a random oracle's — and TCCR's — output
/// bits are jointly pseudorandom, so the two parts are independent hashes):
///
/// * HaAND: `h0[t] = lsb(H(K_t)) ⊕ s_t`, `h1[t] = lsb(H(K_t ⊕ Δ)) ⊕ s_t ⊕ y_t`;
/// * LaAND: `u[t] = (H(K_t ⊕ Δ) ⊕ H(K_t) ⊕ Φ_t)` with bit 0 cleared — otherwise
///   lsb(u) ⊕ h0 ⊕ h1 would reveal lsb(Φ_t) ⊕ y_t — and `acc[t] ^= H(K_t)` (its key K\[x\]_Φ, folded
///   into this party's check value, whose bit 0 is dropped at the end).
#[allow(clippy::too_many_arguments)]
pub fn leaky_and_send(
    keys: &[Block],
    delta: Block,
    y: &[bool],
    s: &[bool],
    phi: &[Block],
    base: u128,
    h0: &mut [bool],
    h1: &mut [bool],
    u: &mut [Block],
    acc: &mut [Block],
) {
    let len = keys.len();
    assert!(
        [y.len(), s.len(), phi.len(), h0.len(), h1.len(), u.len(), acc.len()].iter().all(|&l| l == len),
        "HaAND/LaAND lengths"
    );
    let mut shifted = vec![Block::ZERO; CHUNK.min(len)];
    let mut a = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let k = &keys[off..end];
        let w = k.len();
        let (sh, a) = (&mut shifted[..w], &mut a[..w]);
        for (d, &x) in sh.iter_mut().zip(k) {
            *d = x ^ delta;
        }
        let b = &mut u[off..end];
        tccr(k, base + off as u128, a);
        tccr(sh, base + off as u128, b);
        for t in 0..w {
            h0[off + t] = a[t].lsb() ^ s[off + t];
            h1[off + t] = b[t].lsb() ^ s[off + t] ^ y[off + t];
            b[t] = (b[t] ^ a[t] ^ phi[off + t]) & LAAND_BITS;
            acc[off + t] ^= a[t];
        }
    }
    Block::wipe(&mut shifted);
    Block::wipe(&mut a);
}

/// The bit owner's side, with M_t its tag under the holder's key and x_t its bit:
/// `t_out[t] = h_{x_t}[t] ⊕ lsb(H(M_t))` (= s_t ⊕ x_t·y_t, its HaAND share) and
/// `acc[t] ^= x_t·U_t ⊕ H(M_t)` (its tag M\[x\]_Φ = K\[x\]_Φ ⊕ x·Φ_holder, on bits 1..127).
#[allow(clippy::too_many_arguments)]
pub fn leaky_and_receive(
    macs: &[Block],
    x: &[bool],
    h0: &[bool],
    h1: &[bool],
    u: &[Block],
    base: u128,
    t_out: &mut [bool],
    acc: &mut [Block],
) {
    let len = macs.len();
    assert!(
        [x.len(), h0.len(), h1.len(), u.len(), t_out.len(), acc.len()].iter().all(|&l| l == len),
        "HaAND/LaAND lengths"
    );
    let mut hm = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let hm = &mut hm[..end - off];
        tccr(&macs[off..end], base + off as u128, hm);
        for (i, h) in hm.iter().enumerate() {
            let t = off + i;
            // h_x without a branch on x.
            t_out[t] = h0[t] ^ (x[t] & (h0[t] ^ h1[t])) ^ h.lsb();
            acc[t] ^= (u[t] & mask(x[t])) ^ *h;
        }
    }
    Block::wipe(&mut hm);
}

/// Φ_t = y_t·Δ ⊕ ⊕_{k≠me} (K_me\[y^k_t\] ⊕ M_k\[y^me_t\]): this party's share of y_t·(⊕_i Δ_i).
pub fn phi(y: &AuthShares, delta: Block) -> Vec<Block> {
    let mut out: Vec<Block> = y.bits.iter().map(|&b| delta & mask(b)).collect();
    for j in y.peers() {
        for ((o, k), m) in out.iter_mut().zip(&y.keys[j]).zip(&y.macs[j]) {
            *o ^= *k ^ *m;
        }
    }
    out
}

/// The local terms of H_i: `acc[t] ^= x_t·Φ_t ⊕ z_t·Δ ⊕ ⊕_{k≠me} (K_me[z^k_t] ⊕ M_k[z^me_t])`,
/// then bit 0 is cleared. With the hashed terms already in `acc`, the result is this party's H_i;
/// the XOR of all parties' H_i is (x·y ⊕ z)·(⊕_i Δ_i) on bits 1..127, zero for a correct triple
/// and nonzero for a wrong one unless ⊕Δ_i vanishes on those bits (probability 2^{−127}).
pub fn laand_local_terms(x: &[bool], z: &AuthShares, phi: &[Block], delta: Block, acc: &mut [Block]) {
    let len = acc.len();
    assert!(x.len() == len && z.len() == len && phi.len() == len, "LaAND lengths");
    for t in 0..len {
        acc[t] ^= (phi[t] & mask(x[t])) ^ (delta & mask(z.bits[t]));
    }
    for j in z.peers() {
        for ((a, k), m) in acc.iter_mut().zip(&z.keys[j]).zip(&z.macs[j]) {
            *a ^= *k ^ *m;
        }
    }
    for a in acc.iter_mut() {
        *a &= LAAND_BITS;
    }
}

/// h = Σ_t χ_t·H_t in GF(2^128), with χ_t expanded from the public `seed` (AES-CTR): the one
/// value each party commits to and opens for the LaAND check (see the module docs of `fpre` for
/// why this is as strong as opening every H_t).
pub fn laand_compress(seed: Block, h: &[Block]) -> Block {
    let mut prg = Prg::from_seed(seed);
    let mut chi = vec![Block::ZERO; CHUNK.min(h.len())];
    let mut out = Block::ZERO;
    for part in h.chunks(CHUNK) {
        let chi = &mut chi[..part.len()];
        prg.fill_blocks(chi);
        out ^= gf128_inner_product(chi, part).expect("equal lengths");
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Bucketing (Π_aAND)
// ---------------------------------------------------------------------------------------------

/// A uniformly random permutation of `0..len` from the public `seed` (Fisher–Yates with rejection
/// sampling, so it is exactly uniform given uniform coins). Public data: branches are fine.
pub fn bucket_permutation(seed: Block, len: usize) -> Vec<u32> {
    assert!(len <= u32::MAX as usize, "permutation too long");
    let mut prg = Prg::from_seed(seed);
    let mut perm: Vec<u32> = (0..len as u32).collect();
    // Draws come from the PRG 512 at a time (one call per batch, not per draw).
    let mut bytes = [0u8; 8 * 512];
    let mut pool = [0u64; 512];
    let mut used = pool.len();
    let mut draw = || {
        if used == pool.len() {
            prg.fill_bytes(&mut bytes);
            for (w, c) in pool.iter_mut().zip(bytes.chunks_exact(8)) {
                *w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            }
            used = 0;
        }
        used += 1;
        pool[used - 1]
    };
    for i in (1..len).rev() {
        let range = i as u64 + 1;
        // Largest multiple of `range` that fits in u64: draws at or above it are rejected.
        let zone = u64::MAX - (u64::MAX % range);
        let j = loop {
            let r = draw();
            if r < zone {
                break (r % range) as usize;
            }
        };
        perm.swap(i, j);
    }
    perm
}

/// One column of every party-indexed vector of a batch, or nothing at this party's own index.
fn columns(v: &AuthShares, f: impl Fn(&[Block]) -> Vec<Block>) -> (Vec<Vec<Block>>, Vec<Vec<Block>>) {
    let me = v.me;
    let pick = |cols: &Vec<Vec<Block>>| -> Vec<Vec<Block>> {
        cols.iter().enumerate().map(|(j, c)| if j == me { Vec::new() } else { f(c) }).collect()
    };
    (pick(&v.macs), pick(&v.keys))
}

/// The differences bucketing opens: for bucket b (leaky triples `perm[bB..bB+B]`, the first one
/// the bucket's head) and s = 1..B, `d_{b,s} = y_head ⊕ y_{perm[bB+s]}`, at position b·(B−1)+s−1.
pub fn bucket_differences(y: &AuthShares, perm: &[u32], bucket: usize) -> AuthShares {
    let gather = |c: &[Block]| -> Vec<Block> {
        let mut out = Vec::with_capacity(perm.len() / bucket * (bucket - 1));
        for b in perm.chunks_exact(bucket) {
            let head = c[b[0] as usize];
            out.extend(b[1..].iter().map(|&o| head ^ c[o as usize]));
        }
        out
    };
    let (macs, keys) = columns(y, gather);
    let mut bits = Vec::with_capacity(perm.len() / bucket * (bucket - 1));
    for b in perm.chunks_exact(bucket) {
        let head = y.bits[b[0] as usize];
        bits.extend(b[1..].iter().map(|&o| head ^ y.bits[o as usize]));
    }
    AuthShares { me: y.me, bits, macs, keys }
}

/// Folds every bucket into one triple, given the opened differences `d` (as laid out by
/// [`bucket_differences`]): x = ⊕_s x_s, y = y_head, z = ⊕_s z_s ⊕ ⊕_{s≥1} d_s·x_s. Correct
/// because x_s·y_head = x_s·y_s ⊕ d_s·x_s = z_s ⊕ d_s·x_s; private because x is the XOR of the
/// bucket's x's, so one unleaked x_s hides it.
pub fn fold_buckets(leaky: &Triples, perm: &[u32], bucket: usize, d: &[bool]) -> Triples {
    let buckets = perm.len() / bucket;
    assert_eq!(d.len(), buckets * (bucket - 1), "one opened difference per non-head bucket member");
    // x and z of one column: walk each bucket once.
    let fold_x = |c: &[Block]| -> Vec<Block> {
        perm.chunks_exact(bucket).map(|b| b.iter().fold(Block::ZERO, |a, &i| a ^ c[i as usize])).collect()
    };
    let fold_z = |z: &[Block], x: &[Block]| -> Vec<Block> {
        perm.chunks_exact(bucket)
            .zip(d.chunks_exact(bucket - 1))
            .map(|(b, ds)| {
                let mut acc = z[b[0] as usize];
                for (&i, &dm) in b[1..].iter().zip(ds) {
                    acc ^= z[i as usize] ^ (x[i as usize] & mask(dm));
                }
                acc
            })
            .collect()
    };
    let me = leaky.x.me;
    let heads: Vec<usize> = perm.chunks_exact(bucket).map(|b| b[0] as usize).collect();
    let (xm, xk) = columns(&leaky.x, fold_x);
    let x_bits: Vec<bool> =
        perm.chunks_exact(bucket).map(|b| b.iter().fold(false, |a, &i| a ^ leaky.x.bits[i as usize])).collect();
    let z_bits: Vec<bool> = perm
        .chunks_exact(bucket)
        .zip(d.chunks_exact(bucket - 1))
        .map(|(b, ds)| {
            let mut acc = leaky.z.bits[b[0] as usize];
            for (&i, &dm) in b[1..].iter().zip(ds) {
                acc ^= leaky.z.bits[i as usize] ^ (dm & leaky.x.bits[i as usize]);
            }
            acc
        })
        .collect();
    let col = |cols: &[Vec<Block>], xcols: &[Vec<Block>]| -> Vec<Vec<Block>> {
        (0..cols.len()).map(|j| if j == me { Vec::new() } else { fold_z(&cols[j], &xcols[j]) }).collect()
    };
    let z = AuthShares {
        me,
        bits: z_bits,
        macs: col(&leaky.z.macs, &leaky.x.macs),
        keys: col(&leaky.z.keys, &leaky.x.keys),
    };
    let x = AuthShares { me, bits: x_bits, macs: xm, keys: xk };
    Triples { x, y: leaky.y.select(&heads), z }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ideal::{deal, deal_triples, reconstruct};
    use crate::share::expected_macs;

    fn deltas(prg: &mut Prg, n: usize) -> Vec<Block> {
        (0..n).map(|_| prg.next_block()).collect()
    }

    fn column<T: Clone>(views: &[T]) -> Vec<T> {
        views.to_vec()
    }

    #[test]
    fn bucket_plans_follow_emp_agmpc_at_rho_40_and_the_bound_elsewhere() {
        for (l, b) in [(320, 5), (3_099, 5), (3_100, 4), (279_999, 4), (280_000, 3), (1 << 20, 3)] {
            assert_eq!(bucket_plan(l, 40), BucketPlan { bucket: b, triples: l }, "ℓ = {l}");
            assert!(bucketing_secure(l, b, 40), "emp-agmpc's choice meets the bound at ℓ = {l}");
        }
        // The bound's own crossovers sit just below emp-agmpc's rounded thresholds.
        assert!(bucketing_secure(3_044, 4, 40) && !bucketing_secure(3_043, 4, 40));
        assert!(bucketing_secure(276_325, 3, 40) && !bucketing_secure(276_324, 3, 40));
        assert!(bucketing_secure(320, 5, 40) && !bucketing_secure(319, 5, 40));
        // Small batches: a larger bucket beats padding the batch to 320.
        assert_eq!(bucket_plan(1, 40), BucketPlan { bucket: 40, triples: 1 });
        assert_eq!(bucket_plan(0, 40), BucketPlan { bucket: 0, triples: 0 });
        for l in [1, 2, 7, 50, 100, 319] {
            let p = bucket_plan(l, 40);
            assert!(p.triples >= l && bucketing_secure(p.triples, p.bucket, 40), "ℓ = {l}: {p:?}");
            assert!(p.leaky() <= 5 * 320, "never worse than emp-agmpc's minimum batch");
        }
        // ρ > 40: derived from the bound, and more conservative than at 40.
        for l in [1, 300, 3_100, 280_000] {
            let p = bucket_plan(l, 64);
            assert!(p.triples >= l && bucketing_secure(p.triples, p.bucket, 64), "ℓ = {l}: {p:?}");
            assert!(p.bucket >= bucket_plan(l, 40).bucket);
            assert!(!bucketing_secure(p.triples, p.bucket - 1, 64) || p.triples > l);
        }
        // B = 4 would need ℓ ≥ 779,083 at ρ = 64; B = 5 needs 20,434.
        assert_eq!(bucket_plan(280_000, 64), BucketPlan { bucket: 5, triples: 280_000 });
    }

    #[test]
    fn tweaks_are_injective_in_their_fields() {
        let tag = tweak_tag(&[7; 32], 0);
        assert_ne!(tag, tweak_tag(&[8; 32], 0));
        let mut seen = std::collections::HashSet::new();
        for usage in [HashUse::AndTriple] {
            for holder in [0, 1, 2, MAX_PARTIES - 1] {
                for owner in [0, 1, 2, MAX_PARTIES - 1] {
                    for counter in [0, 1, 1000, MAX_LEAKY - 1] {
                        assert!(seen.insert(tweak_base(tag, usage, holder, owner, counter)));
                    }
                }
            }
        }
        assert_eq!(tweak_base(tag, HashUse::AndTriple, 3, 1, 10) + 5, tweak_base(tag, HashUse::AndTriple, 3, 1, 15));
    }

    #[test]
    fn two_instances_of_a_party_never_repeat_a_tweak() {
        // The primary (0) and parallel instances (1, 2, 255) of one party share Δ_i. Whatever
        // their session ids hash to — here even the same id, the worst case — the instance field
        // keeps every tweak of one instance out of every other's whole range.
        for (a, b) in [([3u8; 32], [4u8; 32]), ([3u8; 32], [3u8; 32])] {
            let tags: Vec<u64> = [0u8, 1, 2, 255].iter().map(|&i| tweak_tag(&a, i)).chain([tweak_tag(&b, 1)]).collect();
            for (x, &tx) in tags.iter().enumerate() {
                for &ty in &tags[x + 1..] {
                    if tx == ty {
                        continue; // the same instance index of the same id: the same instance
                    }
                    // Every tweak of an instance lies in [tag·2^64, (tag + 1)·2^64): disjoint
                    // ranges for different (tag, instance) pairs.
                    let lo = |t: u64| tweak_base(t, HashUse::AndTriple, 0, 0, 0);
                    let hi = |t: u64| tweak_base(t, HashUse::AndTriple, MAX_PARTIES - 1, MAX_PARTIES - 1, MAX_LEAKY - 1);
                    assert!(hi(tx) < lo(ty) || hi(ty) < lo(tx), "{tx:x} and {ty:x} overlap");
                }
            }
            assert_eq!(tweak_tag(&a, 0) >> 8, tweak_tag(&a, 200) >> 8, "the same session tag");
            assert_eq!(tweak_tag(&a, 200) & 0xff, 200, "the instance in the low byte");
        }
    }

    #[test]
    fn abit_check_accepts_consistent_bits_and_rejects_a_flipped_one() {
        let mut prg = Prg::from_seed(Block::from_u128(1));
        let d = deltas(&mut prg, 3);
        // Not a multiple of the chunk or of the 4-position groups.
        let views = deal(&mut prg, &d, 3001);
        let seed = Block::from_u128(42);
        let k = 40;
        let comb: Vec<AbitCombination> = views.iter().map(|v| abit_combine(seed, k, v)).collect();
        for i in 0..3 {
            for p in (0..3).filter(|&p| p != i) {
                assert!(abit_verify(&comb[p].keys[i], comb[i].x, &comb[i].macs[p], d[p]));
            }
        }
        // Party 0 authenticated bit 1234 to party 2 with the opposite value: its tag there is
        // K ⊕ (1 − x)·Δ_2. With the X that matches party 1's view, party 2 rejects; with the X of
        // the flipped bits, party 1 rejects (the X's differ, which broadcast consistency catches).
        let mut bad = views[0].clone();
        bad.bits[1234] ^= true;
        bad.macs[2][1234] ^= d[2];
        let skewed = abit_combine(seed, k, &bad);
        assert_ne!(skewed.x, comb[0].x, "this seed's coefficients of position 1234 are not all zero");
        assert_eq!(skewed.x ^ comb[0].x, abit_coefficients(seed, k, 1234));
        assert!(!abit_verify(&comb[2].keys[0], comb[0].x, &skewed.macs[2], d[2]));
        assert!(abit_verify(&comb[2].keys[0], skewed.x, &skewed.macs[2], d[2]));
        assert!(!abit_verify(&comb[1].keys[0], skewed.x, &comb[0].macs[1], d[1]));
        // A tag sum off by anything but a multiple of Δ fails.
        let mut forged = comb[0].macs[1].clone();
        forged[7] ^= Block::from_u128(1);
        assert!(!abit_verify(&comb[1].keys[0], comb[0].x, &forged, d[1]));
    }

    #[test]
    fn abit_coefficients_are_uniform_looking_and_position_specific() {
        let seed = Block::from_u128(5);
        let c: Vec<u128> = (0..3000).map(|i| abit_coefficients(seed, 40, i)).collect();
        assert!(c.iter().all(|&x| x < 1 << 40));
        let ones: u32 = c.iter().map(|x| x.count_ones()).sum();
        // 120,000 fair coin flips: the count is within ±1% of half except with tiny probability.
        assert!((59_000..61_000).contains(&ones), "{ones}");
        let distinct: std::collections::HashSet<u128> = c.iter().copied().collect();
        assert!(distinct.len() > 2990);
    }

    #[test]
    fn haand_and_laand_compute_a_correct_triple_and_the_check_catches_a_wrong_one() {
        let n = 3;
        let len = 1100;
        let mut prg = Prg::from_seed(Block::from_u128(2));
        let d = deltas(&mut prg, n);
        let x = deal(&mut prg, &d, len);
        let y = deal(&mut prg, &d, len);
        let r = deal(&mut prg, &d, len);
        let tag = tweak_tag(&[1; 32], 0);
        let bases = |i, j| tweak_base(tag, HashUse::AndTriple, i, j, 0);
        let phis: Vec<Vec<Block>> = (0..n).map(|i| phi(&y[i], d[i])).collect();
        let mut acc = vec![vec![Block::ZERO; len]; n];
        // z^i = x^i y^i ⊕ ⊕ (s ⊕ t) over every ordered pair (holder i, owner j).
        let mut v: Vec<Vec<bool>> =
            (0..n).map(|i| x[i].bits.iter().zip(&y[i].bits).map(|(a, b)| a & b).collect()).collect();
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let s: Vec<bool> = (0..len).map(|_| prg.next_block().lsb()).collect();
                let (mut h0, mut h1, mut u) = (vec![false; len], vec![false; len], vec![Block::ZERO; len]);
                let mut a = std::mem::take(&mut acc[i]);
                leaky_and_send(
                    &x[i].keys[j],
                    d[i],
                    &y[i].bits,
                    &s,
                    &phis[i],
                    bases(i, j),
                    &mut h0,
                    &mut h1,
                    &mut u,
                    &mut a,
                );
                acc[i] = a;
                let mut t = vec![false; len];
                let mut a = std::mem::take(&mut acc[j]);
                leaky_and_receive(&x[j].macs[i], &x[j].bits, &h0, &h1, &u, bases(i, j), &mut t, &mut a);
                acc[j] = a;
                for k in 0..len {
                    v[i][k] ^= s[k];
                    v[j][k] ^= t[k];
                }
            }
        }
        // e^i = z^i ⊕ r^i ; ⟨z⟩ = ⟨r⟩ ⊕ e.
        let mut z = column(&r);
        for i in 0..n {
            let e: Vec<bool> = v[i].iter().zip(&r[i].bits).map(|(a, b)| a ^ b).collect();
            for view in z.iter_mut() {
                view.add_public(&e, d[view.me], i);
            }
        }
        let vx = reconstruct(&x, &d);
        let vy = reconstruct(&y, &d);
        let vz = reconstruct(&z, &d);
        assert!((0..len).all(|k| vz[k] == (vx[k] & vy[k])), "HaAND gives a correct triple");

        let check = |z: &[AuthShares]| -> (Vec<bool>, bool) {
            let mut h = acc.clone();
            for i in 0..n {
                laand_local_terms(&x[i].bits, &z[i], &phis[i], d[i], &mut h[i]);
            }
            let per_triple = (0..len).map(|k| (0..n).fold(Block::ZERO, |a, i| a ^ h[i][k]) == Block::ZERO).collect();
            let seed = Block::from_u128(77);
            let compressed = (0..n).fold(Block::ZERO, |a, i| a ^ laand_compress(seed, &h[i])) == Block::ZERO;
            (per_triple, compressed)
        };
        let (per_triple, compressed) = check(&z);
        assert!(per_triple.iter().all(|&ok| ok) && compressed, "a correct batch passes");
        // Party 1 flips its share of z_5 (with a consistent tag, as if it broadcast e ⊕ 1).
        let mut wrong = z.clone();
        wrong[1].bits[5] ^= true;
        for j in [0, 2] {
            let t = expected_macs(&wrong[j].keys[1], &wrong[1].bits, d[j]);
            wrong[1].macs[j] = t;
        }
        let (per_triple, compressed) = check(&wrong);
        assert!(!per_triple[5] && per_triple.iter().enumerate().all(|(k, &ok)| ok || k == 5));
        assert!(!compressed, "the compressed check sees the wrong triple");
    }

    #[test]
    fn bucketing_folds_correct_triples_into_correct_triples() {
        let n = 3;
        let mut prg = Prg::from_seed(Block::from_u128(3));
        let d = deltas(&mut prg, n);
        for bucket in [2, 3, 4, 5] {
            let buckets = 57;
            let leaky = deal_triples(&mut prg, &d, buckets * bucket);
            let perm = bucket_permutation(Block::from_u128(bucket as u128), buckets * bucket);
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            assert!(sorted.iter().enumerate().all(|(i, &p)| p as usize == i), "a permutation");
            let ds: Vec<AuthShares> = leaky.iter().map(|t| bucket_differences(&t.y, &perm, bucket)).collect();
            let dv = reconstruct(&ds, &d);
            let out: Vec<Triples> = leaky.iter().map(|t| fold_buckets(t, &perm, bucket, &dv)).collect();
            let x = reconstruct(&out.iter().map(|t| t.x.clone()).collect::<Vec<_>>(), &d);
            let y = reconstruct(&out.iter().map(|t| t.y.clone()).collect::<Vec<_>>(), &d);
            let z = reconstruct(&out.iter().map(|t| t.z.clone()).collect::<Vec<_>>(), &d);
            assert_eq!(x.len(), buckets);
            assert!((0..buckets).all(|k| z[k] == (x[k] & y[k])), "B = {bucket}");
            // x is the XOR of the bucket's x's.
            let lx = reconstruct(&leaky.iter().map(|t| t.x.clone()).collect::<Vec<_>>(), &d);
            assert!((0..buckets).all(|b| x[b] == (0..bucket).fold(false, |a, s| a ^ lx[perm[b * bucket + s] as usize])));
        }
    }

    #[test]
    fn permutations_differ_by_seed_and_are_deterministic() {
        let a = bucket_permutation(Block::from_u128(1), 1000);
        assert_eq!(a, bucket_permutation(Block::from_u128(1), 1000));
        assert_ne!(a, bucket_permutation(Block::from_u128(2), 1000));
        assert!(bucket_permutation(Block::ZERO, 0).is_empty());
        assert_eq!(bucket_permutation(Block::ZERO, 1), vec![0]);
    }

    #[test]
    fn key_sums_open_to_the_xor_of_the_verifiers_tags() {
        let mut prg = Prg::from_seed(Block::from_u128(4));
        let d = deltas(&mut prg, 4);
        let v = deal(&mut prg, &d, 40);
        for prover in 0..4 {
            let c0 = key_sums(&v[prover]);
            for (r, c) in c0.iter().enumerate() {
                let b = (0..4).filter(|&k| k != prover).fold(false, |a, k| a ^ v[k].bits[r]);
                let opened = *c ^ (d[prover] & mask(b));
                let tags = (0..4).filter(|&k| k != prover).fold(Block::ZERO, |a, k| a ^ v[k].macs[prover][r]);
                assert_eq!(opened, tags);
            }
        }
    }
}
