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
use webmpc_core::gf128::{gf128_inner_product, gf128_mul};
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

/// Padding bits Π_aBit appends to every batch and throws away after its consistency check.
///
/// The check reveals X = Σ_m χ_m·x_m ∈ GF(2^128), i.e. 128 GF(2)-linear combinations of the bits
/// (bit b of X combines the bits x_m with the b-th bits of the χ_m as coefficients). The last
/// `p` bits are uniform and discarded, so X is a uniform value independent of the kept bits as
/// soon as the 128 × p matrix of the padding columns' coefficients has full rank 128. Its rows are
/// uniform and independent, so by the union bound of WRK17 Lemma B.1 it is rank-deficient with
/// probability at most 2^{128 − p}: `p = 128 + ρ` bounds the leakage by 2^{−ρ}. (The paper's 2ρ
/// padding for 2ρ one-bit checks gives the vacuous bound 2^0; the rule "padding ≥ checks + ρ"
/// is what the lemma needs, with 128 checks here.)
pub fn abit_padding(rho: usize) -> usize {
    KAPPA + rho
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
/// * ρ = 40 and ℓ ≥ 320: emp-agmpc's thresholds (5 / 4 / 3), as [`emp_bucket`].
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

/// What a hash of a Δ-OT key is for; part of its tweak, so HaAND's and LaAND's hashes of the same
/// key are independent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum HashUse {
    /// Π_HaAND's one-bit hashes of K and K ⊕ Δ.
    HalfAnd = 1,
    /// Π_LaAND's κ-bit hashes of K and K ⊕ Δ.
    LeakyAnd = 2,
}

/// The session part of every tweak: 64 bits of SHA-256 of the instance's session id.
pub fn tweak_tag(session: &[u8; 32]) -> u64 {
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/fpre/tweak-tag/v1");
    h.update(session);
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
}

/// The tweak of leaky triple `counter` for the key `holder` holds on `owner`'s bit, as a
/// little-endian 128-bit integer:
///
/// ```text
/// bits 0..40 counter | 40..50 holder | 50..60 owner | 60..64 use | 64..128 session tag
/// ```
///
/// Injective in (use, holder, owner, counter) within an instance, so no two hashes of an instance
/// share a tweak (across calls, batches and pairs: the counter runs over the instance's lifetime);
/// across sessions the tags differ except with probability 2^{−64}, and each instance has its own
/// fresh Δ anyway. Triple `counter + k` of a contiguous run has tweak `base + k`, which is the form
/// [`Hasher::tccr_many_counter`] takes.
pub fn tweak_base(tag: u64, usage: HashUse, holder: usize, owner: usize, counter: u64) -> u128 {
    debug_assert!(holder < MAX_PARTIES && owner < MAX_PARTIES && counter < MAX_LEAKY);
    (tag as u128) << 64 | (usage as u128) << 60 | (owner as u128) << 50 | (holder as u128) << 40 | counter as u128
}

fn tccr(input: &[Block], base: u128, out: &mut [Block]) {
    // The caller keeps counter + len < 2^40, so the low 40 bits never carry into the pair fields
    // and nothing wraps.
    Hasher::fixed().tccr_many_counter(input, base, out).expect("tweak range checked by the caller");
}

// ---------------------------------------------------------------------------------------------
// Π_aBit: the consistency check
// ---------------------------------------------------------------------------------------------

/// One party's side of the Π_aBit check over its view `shares` (of its own bits and everyone's
/// keys): X = Σ χ_m·x_m, its combined tags under each peer's key and its combined keys on each
/// peer's bits.
#[derive(Clone, PartialEq, Eq)]
pub struct AbitCombination {
    /// X = Σ_m χ_m·x_m (χ_m where this party's bit is set).
    pub x: Block,
    /// `macs[j]` = Σ_m χ_m·M_j[x_m] (zero at this party's own index).
    pub macs: Vec<Block>,
    /// `keys[j]` = Σ_m χ_m·K_me[x^j_m] (zero at this party's own index).
    pub keys: Vec<Block>,
}

/// Combines a batch with the coefficients χ_m expanded from the public `seed` (AES-CTR). The
/// coefficients are streamed in chunks, so a batch of any size costs no extra memory.
pub fn abit_combine(seed: Block, shares: &AuthShares) -> AbitCombination {
    let n = shares.parties();
    let mut out = AbitCombination { x: Block::ZERO, macs: vec![Block::ZERO; n], keys: vec![Block::ZERO; n] };
    let mut prg = Prg::from_seed(seed);
    let mut chi = vec![Block::ZERO; CHUNK];
    let len = shares.len();
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let chi = &mut chi[..end - off];
        prg.fill_blocks(chi);
        for (c, &b) in chi.iter().zip(&shares.bits[off..end]) {
            out.x ^= *c & mask(b);
        }
        for j in shares.peers() {
            out.macs[j] ^= gf128_inner_product(chi, &shares.macs[j][off..end]).expect("equal lengths");
            out.keys[j] ^= gf128_inner_product(chi, &shares.keys[j][off..end]).expect("equal lengths");
        }
    }
    out
}

/// The coefficient χ_index that [`abit_combine`] uses for position `index` (tests of deviating
/// parties; the protocol itself streams them).
pub fn abit_coefficient(seed: Block, index: usize) -> Block {
    let mut prg = Prg::from_seed(seed);
    let mut skip = vec![Block::ZERO; index + 1];
    prg.fill_blocks(&mut skip);
    skip[index]
}

/// The verifier's test of a prover's (X, combined tag) against its own combined keys:
/// Σχ·M = Σχ·K ⊕ X·Δ, by linearity of M = K ⊕ x·Δ. Constant-time.
pub fn abit_verify(key_sum: Block, x: Block, mac_sum: Block, delta: Block) -> bool {
    key_sum ^ gf128_mul(x, delta) == mac_sum
}

// ---------------------------------------------------------------------------------------------
// Π_aShare: the global-key consistency check
// ---------------------------------------------------------------------------------------------

/// C0_r = ⊕_{k≠me} K_me[x^k_r] for every position r: the prover's key sums (C1 = C0 ⊕ Δ).
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
// Π_HaAND
// ---------------------------------------------------------------------------------------------

/// The key holder's message for one peer: for each triple t, with K_t its key on the peer's x_t,
/// `h0[t] = lsb(H(K_t)) ⊕ s_t` and `h1[t] = lsb(H(K_t ⊕ Δ)) ⊕ s_t ⊕ y_t` (H = TCCR with tweak
/// `base + t`).
pub fn haand_send(
    keys: &[Block],
    delta: Block,
    y: &[bool],
    s: &[bool],
    base: u128,
    h0: &mut [bool],
    h1: &mut [bool],
) {
    let len = keys.len();
    assert!(y.len() == len && s.len() == len && h0.len() == len && h1.len() == len, "HaAND lengths");
    let mut shifted = vec![Block::ZERO; CHUNK.min(len)];
    let mut a = vec![Block::ZERO; CHUNK.min(len)];
    let mut b = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let k = &keys[off..end];
        let (sh, a, b) = (&mut shifted[..k.len()], &mut a[..k.len()], &mut b[..k.len()]);
        for (d, &x) in sh.iter_mut().zip(k) {
            *d = x ^ delta;
        }
        tccr(k, base + off as u128, a);
        tccr(sh, base + off as u128, b);
        for t in 0..k.len() {
            h0[off + t] = a[t].lsb() ^ s[off + t];
            h1[off + t] = b[t].lsb() ^ s[off + t] ^ y[off + t];
        }
    }
    Block::wipe(&mut shifted);
    Block::wipe(&mut a);
    Block::wipe(&mut b);
}

/// The bit owner's side: with M_t its tag under the holder's key and x_t its bit,
/// `t_t = h_{x_t}[t] ⊕ lsb(H(M_t))`, which equals s_t ⊕ x_t·y_t.
pub fn haand_receive(macs: &[Block], x: &[bool], h0: &[bool], h1: &[bool], base: u128, out: &mut [bool]) {
    let len = macs.len();
    assert!(x.len() == len && h0.len() == len && h1.len() == len && out.len() == len, "HaAND lengths");
    let mut hm = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let hm = &mut hm[..end - off];
        tccr(&macs[off..end], base + off as u128, hm);
        for t in off..end {
            // h_x without a branch on x.
            let picked = h0[t] ^ (x[t] & (h0[t] ^ h1[t]));
            out[t] = picked ^ hm[t - off].lsb();
        }
    }
    Block::wipe(&mut hm);
}

// ---------------------------------------------------------------------------------------------
// Π_LaAND
// ---------------------------------------------------------------------------------------------

/// Φ_t = y_t·Δ ⊕ ⊕_{k≠me} (K_me[y^k_t] ⊕ M_k[y^me_t]): this party's share of y_t·(⊕_i Δ_i).
pub fn phi(y: &AuthShares, delta: Block) -> Vec<Block> {
    let mut out: Vec<Block> = y.bits.iter().map(|&b| delta & mask(b)).collect();
    for j in y.peers() {
        for ((o, k), m) in out.iter_mut().zip(&y.keys[j]).zip(&y.macs[j]) {
            *o ^= *k ^ *m;
        }
    }
    out
}

/// The key holder's side for one peer: with K_t its key on the peer's x_t,
/// `u[t] = H(K_t ⊕ Δ) ⊕ H(K_t) ⊕ Φ_t` (the message) and `acc[t] ^= H(K_t)` (its key K[x]_Φ, folded
/// straight into this party's check value).
pub fn laand_send(keys: &[Block], delta: Block, phi: &[Block], base: u128, u: &mut [Block], acc: &mut [Block]) {
    let len = keys.len();
    assert!(phi.len() == len && u.len() == len && acc.len() == len, "LaAND lengths");
    let mut shifted = vec![Block::ZERO; CHUNK.min(len)];
    let mut a = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let k = &keys[off..end];
        let (sh, a) = (&mut shifted[..k.len()], &mut a[..k.len()]);
        for (d, &x) in sh.iter_mut().zip(k) {
            *d = x ^ delta;
        }
        tccr(k, base + off as u128, a);
        let u = &mut u[off..end];
        tccr(sh, base + off as u128, u);
        for t in 0..k.len() {
            u[t] ^= a[t] ^ phi[off + t];
            acc[off + t] ^= a[t];
        }
    }
    Block::wipe(&mut shifted);
    Block::wipe(&mut a);
}

/// The bit owner's side: `acc[t] ^= x_t·U_t ⊕ H(M_t)` (its tag M[x]_Φ = K[x]_Φ ⊕ x·Φ_holder).
pub fn laand_receive(macs: &[Block], x: &[bool], u: &[Block], base: u128, acc: &mut [Block]) {
    let len = macs.len();
    assert!(x.len() == len && u.len() == len && acc.len() == len, "LaAND lengths");
    let mut hm = vec![Block::ZERO; CHUNK.min(len)];
    for off in (0..len).step_by(CHUNK) {
        let end = (off + CHUNK).min(len);
        let hm = &mut hm[..end - off];
        tccr(&macs[off..end], base + off as u128, hm);
        for t in off..end {
            acc[t] ^= (u[t] & mask(x[t])) ^ hm[t - off];
        }
    }
    Block::wipe(&mut hm);
}

/// The local terms of H_i: `acc[t] ^= x_t·Φ_t ⊕ z_t·Δ ⊕ ⊕_{k≠me} (K_me[z^k_t] ⊕ M_k[z^me_t])`.
/// With the hashed terms already in `acc`, the result is this party's H_i; the XOR of all
/// parties' H_i is (x·y ⊕ z)·(⊕_i Δ_i), zero exactly for a correct triple (Δ's are nonzero).
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
    let mut word = [0u8; 8];
    for i in (1..len).rev() {
        let range = i as u64 + 1;
        // Largest multiple of `range` that fits in u64: draws at or above it are rejected.
        let zone = u64::MAX - (u64::MAX % range);
        let j = loop {
            prg.fill_bytes(&mut word);
            let r = u64::from_le_bytes(word);
            if r < zone {
                break (r % range) as usize;
            }
        };
        perm.swap(i, j);
    }
    perm
}

/// Gathers `⊕ over k of src[idx[k]]` shapes: `out[p] = src[first[p]] ⊕ src[second[p]]`, for every
/// column of the batch (bits, tags, keys).
fn gather_xor(src: &AuthShares, first: &[usize], second: &[usize]) -> AuthShares {
    let pick = |v: &Vec<Block>| -> Vec<Block> {
        if v.is_empty() {
            Vec::new()
        } else {
            first.iter().zip(second).map(|(&a, &b)| v[a] ^ v[b]).collect()
        }
    };
    AuthShares {
        me: src.me,
        bits: first.iter().zip(second).map(|(&a, &b)| src.bits[a] ^ src.bits[b]).collect(),
        macs: src.macs.iter().map(pick).collect(),
        keys: src.keys.iter().map(pick).collect(),
    }
}

/// The differences bucketing opens: for bucket b (leaky triples `perm[bB..bB+B]`, the first one
/// the bucket's head) and s = 1..B, `d_{b,s} = y_head ⊕ y_{perm[bB+s]}`, at position b·(B−1)+s−1.
pub fn bucket_differences(y: &AuthShares, perm: &[u32], bucket: usize) -> AuthShares {
    let buckets = perm.len() / bucket;
    let mut heads = Vec::with_capacity(buckets * (bucket - 1));
    let mut others = Vec::with_capacity(buckets * (bucket - 1));
    for b in 0..buckets {
        for s in 1..bucket {
            heads.push(perm[b * bucket] as usize);
            others.push(perm[b * bucket + s] as usize);
        }
    }
    gather_xor(y, &heads, &others)
}

/// Folds every bucket into one triple, given the opened differences `d` (as laid out by
/// [`bucket_differences`]): x = ⊕_s x_s, y = y_head, z = ⊕_s z_s ⊕ ⊕_{s≥1} d_s·x_s. Correct
/// because x_s·y_head = x_s·y_s ⊕ d_s·x_s = z_s ⊕ d_s·x_s; private because x is the XOR of the
/// bucket's x's, so one unleaked x_s hides it.
pub fn fold_buckets(leaky: &Triples, perm: &[u32], bucket: usize, d: &[bool]) -> Triples {
    let buckets = perm.len() / bucket;
    assert_eq!(d.len(), buckets * (bucket - 1), "one opened difference per non-head bucket member");
    let heads: Vec<usize> = (0..buckets).map(|b| perm[b * bucket] as usize).collect();
    let mut x = leaky.x.select(&heads);
    let y = leaky.y.select(&heads);
    let mut z = leaky.z.select(&heads);
    let me = leaky.x.me;
    for s in 1..bucket {
        let idx: Vec<usize> = (0..buckets).map(|b| perm[b * bucket + s] as usize).collect();
        let ds: Vec<bool> = (0..buckets).map(|b| d[b * (bucket - 1) + s - 1]).collect();
        // z ^= z_s ⊕ d_s·x_s ; x ^= x_s, column by column without materialising d_s·⟨x_s⟩.
        for (b, &i) in idx.iter().enumerate() {
            let dm = ds[b];
            z.bits[b] ^= leaky.z.bits[i] ^ (dm & leaky.x.bits[i]);
            x.bits[b] ^= leaky.x.bits[i];
        }
        for j in (0..leaky.x.parties()).filter(|&j| j != me) {
            for (b, &i) in idx.iter().enumerate() {
                let dm = mask(ds[b]);
                z.macs[j][b] ^= leaky.z.macs[j][i] ^ (leaky.x.macs[j][i] & dm);
                z.keys[j][b] ^= leaky.z.keys[j][i] ^ (leaky.x.keys[j][i] & dm);
                x.macs[j][b] ^= leaky.x.macs[j][i];
                x.keys[j][b] ^= leaky.x.keys[j][i];
            }
        }
    }
    Triples { x, y, z }
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
        let tag = tweak_tag(&[7; 32]);
        assert_ne!(tag, tweak_tag(&[8; 32]));
        let mut seen = std::collections::HashSet::new();
        for usage in [HashUse::HalfAnd, HashUse::LeakyAnd] {
            for holder in [0, 1, 2, MAX_PARTIES - 1] {
                for owner in [0, 1, 2, MAX_PARTIES - 1] {
                    for counter in [0, 1, 1000, MAX_LEAKY - 1] {
                        assert!(seen.insert(tweak_base(tag, usage, holder, owner, counter)));
                    }
                }
            }
        }
        assert_eq!(tweak_base(tag, HashUse::HalfAnd, 3, 1, 10) + 5, tweak_base(tag, HashUse::HalfAnd, 3, 1, 15));
    }

    #[test]
    fn abit_check_accepts_consistent_bits_and_rejects_a_flipped_one() {
        let mut prg = Prg::from_seed(Block::from_u128(1));
        let d = deltas(&mut prg, 3);
        let views = deal(&mut prg, &d, 3000);
        let seed = Block::from_u128(42);
        let comb: Vec<AbitCombination> = views.iter().map(|v| abit_combine(seed, v)).collect();
        for i in 0..3 {
            for k in (0..3).filter(|&k| k != i) {
                assert!(abit_verify(comb[k].keys[i], comb[i].x, comb[i].macs[k], d[k]));
            }
        }
        // Party 0 authenticated bit 1234 to party 2 with the opposite value: its tag there is
        // K ⊕ (1 − x)·Δ_2, and whatever single X it announces fails one verifier.
        let mut bad = views[0].clone();
        bad.bits[1234] ^= true;
        bad.macs[2][1234] ^= d[2];
        let honest_x = comb[0].x;
        let skewed = abit_combine(seed, &bad);
        assert!(abit_verify(comb[1].keys[0], honest_x, comb[0].macs[1], d[1]));
        assert!(!abit_verify(comb[2].keys[0], honest_x, skewed.macs[2], d[2]));
        assert!(!abit_verify(comb[1].keys[0], skewed.x, comb[0].macs[1], d[1]));
        assert!(abit_verify(comb[2].keys[0], skewed.x, skewed.macs[2], d[2]));
    }

    #[test]
    fn the_coefficient_of_a_position_is_the_one_the_combination_uses() {
        let mut prg = Prg::from_seed(Block::from_u128(9));
        let d = deltas(&mut prg, 2);
        let mut v = deal(&mut prg, &d, 2500).swap_remove(0);
        v.bits.iter_mut().for_each(|b| *b = false);
        for i in [0, 1, 1023, 1024, 2499] {
            v.bits[i] = true;
            assert_eq!(abit_combine(Block::from_u128(5), &v).x, abit_coefficient(Block::from_u128(5), i));
            v.bits[i] = false;
        }
    }

    #[test]
    fn haand_and_laand_compute_a_correct_triple_and_the_check_catches_a_wrong_one() {
        let n = 3;
        let len = 700;
        let mut prg = Prg::from_seed(Block::from_u128(2));
        let d = deltas(&mut prg, n);
        let x = deal(&mut prg, &d, len);
        let y = deal(&mut prg, &d, len);
        let r = deal(&mut prg, &d, len);
        let tag = tweak_tag(&[1; 32]);
        let s: Vec<Vec<Vec<bool>>> =
            (0..n).map(|_| (0..n).map(|_| (0..len).map(|_| prg.next_block().lsb()).collect()).collect()).collect();
        // HaAND between every ordered pair (holder i, owner j).
        let mut v: Vec<Vec<bool>> = (0..n).map(|i| x[i].bits.iter().zip(&y[i].bits).map(|(a, b)| a & b).collect()).collect();
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let base = tweak_base(tag, HashUse::HalfAnd, i, j, 0);
                let (mut h0, mut h1) = (vec![false; len], vec![false; len]);
                haand_send(&x[i].keys[j], d[i], &y[i].bits, &s[i][j], base, &mut h0, &mut h1);
                let mut t = vec![false; len];
                haand_receive(&x[j].macs[i], &x[j].bits, &h0, &h1, base, &mut t);
                for k in 0..len {
                    v[i][k] ^= s[i][j][k];
                    v[j][k] ^= t[k];
                }
            }
        }
        // z^i = x^i y^i ⊕ v^i ; e^i = z^i ⊕ r^i ; ⟨z⟩ = ⟨r⟩ ⊕ e.
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

        let check = |z: &[AuthShares]| -> Vec<bool> {
            let phis: Vec<Vec<Block>> = (0..n).map(|i| phi(&y[i], d[i])).collect();
            let mut acc = vec![vec![Block::ZERO; len]; n];
            for i in 0..n {
                for j in (0..n).filter(|&j| j != i) {
                    let base = tweak_base(tag, HashUse::LeakyAnd, i, j, 0);
                    let mut u = vec![Block::ZERO; len];
                    laand_send(&x[i].keys[j], d[i], &phis[i], base, &mut u, &mut acc[i]);
                    let mut got = acc[j].clone();
                    laand_receive(&x[j].macs[i], &x[j].bits, &u, base, &mut got);
                    acc[j] = got;
                }
            }
            for i in 0..n {
                laand_local_terms(&x[i].bits, &z[i], &phis[i], d[i], &mut acc[i]);
            }
            (0..len).map(|k| (0..n).fold(Block::ZERO, |a, i| a ^ acc[i][k]) == Block::ZERO).collect()
        };
        assert!(check(&z).iter().all(|&ok| ok), "a correct triple passes");
        // Party 1 flips its share of z_5 (with a consistent tag, as if it broadcast e ⊕ 1).
        let mut wrong = z.clone();
        wrong[1].bits[5] ^= true;
        for j in [0, 2] {
            let t = expected_macs(&wrong[j].keys[1], &wrong[1].bits, d[j]);
            wrong[1].macs[j] = t;
        }
        let verdict = check(&wrong);
        assert!(!verdict[5] && verdict.iter().enumerate().all(|(k, &ok)| ok || k == 5));
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
