//! GC teleportation (Lu et al. Figs. 5–6), the pure parts: the machine M^GC, the garbler's (P1)
//! and the evaluator's (P2) computations, the σ/τ hashes and every check P2 makes. No IO and no
//! randomness source: seeds and shares come in as arguments.
//!
//! # The garbled function f*
//!
//! `f*(x1, (x2⁰, x2¹)) = f(x1, x2⁰ ⊕ x2¹)`. Instead of a new circuit, each input wire `w` of `f`
//! owned by the evaluator gets two *share* wires with zero-labels `S⁰_w`, `S¹_w`, and `w`'s own
//! zero-label is `S⁰_w ⊕ S¹_w` (a free XOR). The evaluator's active label for `w` is the XOR of
//! the two share labels it holds. All labels come from the seed `k` through the label PRF
//! `AES_k(domain ‖ index)` (domains: input wire, share 0, share 1, constant gate, Δ).
//!
//! # What moves (malicious mode adds the bracketed parts)
//!
//! * P2 → enclave: x2⁰ (with the job header). P2 → P1: x2¹.
//! * Enclave → P2: labels of x2⁰, the tables F, the decoding bits d [and every σ].
//! * P1 → P2: labels of x1 and of x2¹ [and τ].
//! * P2 → P1, after P2's checks: the outputs revealed to P1 as bits [as output-wire labels, which
//!   P1 checks: [`GarblerOutputs`]].
//!
//! # σ and τ, and why SHA-256
//!
//! `σ = SHA-256("webmpc/teleport/gc-sigma/v1" ‖ sid ‖ kind ‖ wire ‖ bit ‖ label)` for both labels
//! of every share wire (indexed by the bit they encode: P2 knows its shares) and of every
//! garbler input wire (indexed by the label's *colour*, so P2 learns nothing about x1 from which σ
//! matches). `τ = SHA-256("webmpc/teleport/gc-tau/v1" ‖ job header ‖ F ‖ d ‖ σ…)`.
//!
//! Theorem 2 of the paper needs **collision resistance**: a malicious enclave passes P2's checks
//! with different tables, decoding bits or labels only by finding a second input with the same
//! τ or σ as the honest garbler's. Fixed-key-AES hashes are correlation robust, not collision
//! resistant (and τ compresses megabytes), so τ and σ use SHA-256. σ must also hide the label it
//! hashes when P2 sees σ of the label it does *not* hold (`X ⊕ Δ`): SHA-256 as a random oracle is
//! correlation robust, which a bare CR hash need not be. The cost is input-sized (4 hashes per
//! evaluator input bit, 2 per garbler input bit), not circuit-sized, except τ over F.
//!
//! The check on the garbler's own input labels goes beyond the paper's Fig. 6: without it a
//! malicious garbler could send a label that is neither `X⁰` nor `X¹` and make P2's output an
//! arbitrary function of x2, which the simulator of Theorem 2 (Case 2) cannot extract an x1 for.
//!
//! P2 checks τ first and the labels only if τ matched, so when σ's are forged the outcome never
//! depends on x2: a malicious enclave cannot learn bits of x2¹ from which check fails.

use crate::circuit::{decode_gates, Gate, Header, PIECE_GATES};
use crate::grr3::{Evaluator, Garbler, DOM_CONST};
use crate::job::{JobHeader, JobKind, Mode, Owner};
use crate::TeleportError;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use webmpc_core::aes::Aes128;
use webmpc_core::Block;

const DOM_INPUT: u64 = 1;
const DOM_SHARE: [u64; 2] = [2, 3];
const DOM_DELTA: u64 = 5;
const _: () = assert!(DOM_CONST == 4);

/// A σ or τ: a SHA-256 digest.
pub type Digest32 = [u8; 32];

/// The keys the garbling seed `k` expands into: Δ and the label PRF.
pub struct GcKeys {
    delta: Block,
    prf: Aes128,
}

impl GcKeys {
    /// Expands the seed: the PRF is AES-128 keyed by the seed; Δ is its output on the Δ domain
    /// with the lsb forced to 1 (point-and-permute).
    pub fn from_seed(seed: Block) -> Self {
        let prf = Aes128::new(seed);
        let delta = Block::from_u128(prf.encrypt_block(Block::from_u128((DOM_DELTA as u128) << 64)).to_u128() | 1);
        GcKeys { delta, prf }
    }

    fn prf(&self, domain: u64, index: u32) -> Block {
        self.prf.encrypt_block(Block::from_u128(((domain as u128) << 64) | index as u128))
    }

    fn with_bit(&self, zero: Block, bit: bool) -> Block {
        zero ^ (self.delta & Block::mask_from_bit(bit as u8))
    }
}

impl Drop for GcKeys {
    fn drop(&mut self) {
        Block::wipe(core::slice::from_mut(&mut self.delta));
    }
}

/// Which input wires belong to whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The garbler's input wires (x1, in input-value order).
    pub garbler: Vec<u32>,
    /// The evaluator's input wires (x2, in input-value order).
    pub evaluator: Vec<u32>,
}

impl Layout {
    /// The layout of `header` under `owners` (one per input value).
    pub fn new(header: &Header, owners: &[Owner]) -> Result<Layout, TeleportError> {
        if owners.len() != header.inputs.len() {
            return Err(TeleportError::ParameterMismatch("input owners (count differs from the circuit's inputs)"));
        }
        let mut layout = Layout { garbler: Vec::new(), evaluator: Vec::new() };
        for (i, o) in owners.iter().enumerate() {
            let wires = header.input_wires(i);
            match o {
                Owner::Garbler => layout.garbler.extend(wires),
                Owner::Evaluator => layout.evaluator.extend(wires),
            }
        }
        Ok(layout)
    }
}

/// The GC job a header describes: its session, mode, circuit hash and owners.
pub(crate) fn gc_parts(job: &JobHeader) -> Result<(&[u8; 32], &[Owner]), TeleportError> {
    match &job.kind {
        JobKind::Gc { circuit_hash, owners } => Ok((circuit_hash, owners)),
        JobKind::Rot { .. } => Err(TeleportError::InvalidArgument("a GC job header was expected".into())),
    }
}

/// Which σ family a digest belongs to.
#[derive(Clone, Copy)]
enum SigmaKind {
    /// A garbler input wire, indexed by colour.
    Garbler = 0,
    /// Share 0 (x2⁰) of an evaluator wire, indexed by value.
    Share0 = 1,
    /// Share 1 (x2¹), indexed by value.
    Share1 = 2,
}

fn sigma(sid: &[u8; 32], kind: SigmaKind, wire: u32, bit: bool, label: Block) -> Digest32 {
    webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(27 + 32 + 1 + 4 + 1 + 16));
    Sha256::new()
        .chain_update(b"webmpc/teleport/gc-sigma/v1")
        .chain_update(sid)
        .chain_update([kind as u8])
        .chain_update(wire.to_le_bytes())
        .chain_update([bit as u8])
        .chain_update(label.0)
        .finalize()
        .into()
}

/// Every σ of a job, in τ order: garbler wires (colour 0, colour 1), then share-0 wires
/// (value 0, value 1), then share-1 wires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sigmas {
    /// `2 · n1` digests.
    pub garbler: Vec<Digest32>,
    /// `2 · n2` digests.
    pub share0: Vec<Digest32>,
    /// `2 · n2` digests.
    pub share1: Vec<Digest32>,
}

impl Sigmas {
    /// Number of digests for `n1` garbler and `n2` evaluator input bits.
    pub fn count(n1: usize, n2: usize) -> usize {
        2 * n1 + 4 * n2
    }

    /// All digests, in τ order.
    pub fn iter(&self) -> impl Iterator<Item = &Digest32> {
        self.garbler.iter().chain(&self.share0).chain(&self.share1)
    }

    /// Splits a flat list (τ order) for a layout.
    pub fn from_flat(flat: Vec<Digest32>, layout: &Layout) -> Result<Sigmas, TeleportError> {
        let (n1, n2) = (layout.garbler.len(), layout.evaluator.len());
        if flat.len() != Self::count(n1, n2) {
            return Err(TeleportError::Malformed("σ list (wrong count)"));
        }
        let mut it = flat.into_iter();
        let garbler = it.by_ref().take(2 * n1).collect();
        let share0 = it.by_ref().take(2 * n2).collect();
        let share1 = it.collect();
        Ok(Sigmas { garbler, share0, share1 })
    }
}

/// The σ's of every input label the seed defines (M^GC and P1 compute the same list).
pub fn sigmas(keys: &GcKeys, sid: &[u8; 32], layout: &Layout) -> Sigmas {
    let mut s = Sigmas { garbler: Vec::new(), share0: Vec::new(), share1: Vec::new() };
    for &w in &layout.garbler {
        let zero = keys.prf(DOM_INPUT, w);
        // Index by colour: the colour-c label is zero ⊕ (c ⊕ lsb zero)·Δ.
        for c in [false, true] {
            s.garbler.push(sigma(sid, SigmaKind::Garbler, w, c, keys.with_bit(zero, c ^ zero.lsb())));
        }
    }
    for (share, out, kind) in [(0, &mut s.share0, SigmaKind::Share0), (1, &mut s.share1, SigmaKind::Share1)] {
        for &w in &layout.evaluator {
            let zero = keys.prf(DOM_SHARE[share], w);
            for v in [false, true] {
                out.push(sigma(sid, kind, w, v, keys.with_bit(zero, v)));
            }
        }
    }
    s
}

/// τ, computed as the tables stream past.
pub struct TauHasher(Sha256, usize);

impl TauHasher {
    /// Starts τ for `job` (its canonical encoding is hashed first).
    pub fn new(job: &JobHeader) -> Self {
        let mut h = Sha256::new();
        h.update(b"webmpc/teleport/gc-tau/v1");
        let job = job.encode();
        crate::bytes::put_prefixed(&mut HashSink(&mut h), &job);
        // Bytes absorbed, for the roofline's SHA-256 block count (the prefix is 4 bytes).
        TauHasher(h, 25 + 4 + job.len())
    }

    /// Absorbs the next tables, in stream order.
    pub fn tables(&mut self, tables: &[u8]) {
        self.0.update(tables);
        self.1 += tables.len();
    }

    /// Absorbs the decoding bits and the σ's and returns τ.
    pub fn finish(mut self, decoding: &[u8], sigmas: &Sigmas) -> Digest32 {
        self.0.update(decoding);
        self.1 += decoding.len();
        for s in sigmas.iter() {
            self.0.update(s);
            self.1 += s.len();
        }
        webmpc_core::count::add(webmpc_core::count::Op::ShaBlock, webmpc_core::count::sha256_blocks(self.1));
        self.0.finalize().into()
    }
}

/// Lets `put_prefixed` write straight into a hash.
struct HashSink<'a>(&'a mut Sha256);

impl crate::bytes::Sink for HashSink<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The garbling of one GC job, chunk by chunk: what M^GC runs in the enclave (and what a
/// malicious-mode garbler runs to compute τ). Memory is the wire labels plus one chunk.
pub struct GcGarbling {
    keys: GcKeys,
    header: Header,
    layout: Layout,
    garbler: Garbler,
    gates_done: u64,
    gates: Vec<Gate>,
}

impl GcGarbling {
    /// Sets up the garbling of the circuit with `header`, for `job`, from `seed`.
    pub fn new(seed: Block, job: &JobHeader, header: Header) -> Result<Self, TeleportError> {
        let (_, owners) = gc_parts(job)?;
        let layout = Layout::new(&header, owners)?;
        let keys = GcKeys::from_seed(seed);
        let mut garbler = Garbler::new(keys.delta, keys.prf.clone(), header.wires, job.tag());
        for &w in &layout.garbler {
            garbler.set_label(w, keys.prf(DOM_INPUT, w));
        }
        for &w in &layout.evaluator {
            garbler.set_label(w, keys.prf(DOM_SHARE[0], w) ^ keys.prf(DOM_SHARE[1], w));
        }
        Ok(GcGarbling { keys, header, layout, garbler, gates_done: 0, gates: Vec::new() })
    }

    /// The circuit's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The input layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The keys (Δ and the label PRF).
    pub fn keys(&self) -> &GcKeys {
        &self.keys
    }

    /// The labels of the evaluator's x2⁰ shares (one bit per evaluator input wire).
    pub fn share0_labels(&self, x2_0: &[bool]) -> Result<Vec<Block>, TeleportError> {
        share_labels(&self.keys, &self.layout, 0, x2_0)
    }

    /// Garbles the next piece of encoded gates (at most [`PIECE_GATES`]) and appends its tables.
    pub fn garble_piece(&mut self, piece: &[u8], tables: &mut Vec<u8>) -> Result<(), TeleportError> {
        let mut gates = core::mem::take(&mut self.gates);
        let r = decode_gates(piece, self.header.wires, PIECE_GATES, &mut gates)
            .and_then(|()| self.garble_gates(&gates, tables));
        self.gates = gates;
        r
    }

    /// Garbles decoded gates (the next ones of the circuit) and appends their tables.
    pub fn garble_gates(&mut self, gates: &[Gate], tables: &mut Vec<u8>) -> Result<(), TeleportError> {
        if self.gates_done + gates.len() as u64 > self.header.gates {
            return Err(TeleportError::Malformed("circuit (more gates than its header declares)"));
        }
        self.garbler.garble_chunk(gates, self.gates_done, tables)?;
        self.gates_done += gates.len() as u64;
        Ok(())
    }

    /// Whether every gate has been garbled.
    pub fn finished(&self) -> bool {
        self.gates_done == self.header.gates
    }

    /// The decoding bits d (the permute bit of each output wire's zero-label), packed; valid once
    /// every gate is garbled.
    pub fn decoding(&self) -> Vec<u8> {
        let bits: Vec<bool> = self.header.output_wires().map(|w| self.garbler.label(w).lsb()).collect();
        crate::bytes::pack_bits(&bits)
    }
}

fn share_labels(keys: &GcKeys, layout: &Layout, share: usize, bits: &[bool]) -> Result<Vec<Block>, TeleportError> {
    if bits.len() != layout.evaluator.len() {
        return Err(TeleportError::ParameterMismatch("number of evaluator input bits"));
    }
    Ok(layout.evaluator.iter().zip(bits).map(|(&w, &b)| keys.with_bit(keys.prf(DOM_SHARE[share], w), b)).collect())
}

/// What M^GC returns to P2 (Fig. 5): labels of x2⁰, F, d, and in malicious mode every σ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcMachineOutput {
    /// Labels of the x2⁰ shares.
    pub share0_labels: Vec<Block>,
    /// The garbled tables, in gate order.
    pub tables: Vec<u8>,
    /// Decoding bits, packed.
    pub decoding: Vec<u8>,
    /// Malicious mode: every σ.
    pub sigmas: Option<Sigmas>,
}

/// M^GC as one pure function over an in-memory circuit (the enclave runs the same steps piece by
/// piece; see [`crate::machine`]). `circuit` is the binary form; the caller has checked that both
/// parties named its hash.
pub fn m_gc(seed: Block, job: &JobHeader, circuit: &[u8], x2_0: &[bool]) -> Result<GcMachineOutput, TeleportError> {
    let ranges = crate::circuit::pieces(circuit)?;
    let (header, _) = Header::parse(circuit)?;
    let mut g = GcGarbling::new(seed, job, header)?;
    let share0_labels = g.share0_labels(x2_0)?;
    let mut tables = Vec::new();
    for r in &ranges[1..] {
        g.garble_piece(&circuit[r.clone()], &mut tables)?;
    }
    let sigmas = (job.mode == Mode::Malicious).then(|| sigmas(&g.keys, &job.sid, &g.layout));
    Ok(GcMachineOutput { share0_labels, decoding: g.decoding(), tables, sigmas })
}

/// What P1 sends P2: its input labels, the x2¹ labels and, in malicious mode, τ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GarblerLabels {
    /// Active labels of x1, in layout order.
    pub x1: Vec<Block>,
    /// Labels of the x2¹ shares.
    pub share1: Vec<Block>,
    /// Malicious mode: τ.
    pub tau: Option<Digest32>,
}

impl GarblerLabels {
    /// Wire encoding: the x1 labels, the x2¹ labels, then τ if present (lengths are implied by
    /// the job, which both sides know).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16 * (self.x1.len() + self.share1.len()) + 32);
        for b in self.x1.iter().chain(&self.share1) {
            v.extend_from_slice(&b.0);
        }
        if let Some(t) = &self.tau {
            v.extend_from_slice(t);
        }
        v
    }

    /// Decodes for `n1` garbler and `n2` evaluator input bits in `mode`.
    pub fn decode(bytes: &[u8], n1: usize, n2: usize, mode: Mode) -> Result<Self, TeleportError> {
        let mut r = crate::bytes::Reader::new(bytes, "garbler labels");
        let x1 = r.blocks(n1)?;
        let share1 = r.blocks(n2)?;
        let tau = if mode == Mode::Malicious { Some(r.array::<32>()?) } else { None };
        r.finish()?;
        Ok(GarblerLabels { x1, share1, tau })
    }
}

/// P1's side (Fig. 6): from the seed, its input bits x1 and P2's x2¹, the labels it sends P2. In
/// semi-honest mode this is `n1 + n2` AES calls; in malicious mode P1 also garbles the whole
/// circuit (`circuit`, the binary form) to compute τ.
pub fn garbler_labels(
    seed: Block,
    job: &JobHeader,
    circuit: &[u8],
    x1: &[bool],
    x2_1: &[bool],
) -> Result<GarblerLabels, TeleportError> {
    let (header, _) = Header::parse(circuit)?;
    let none = alloc::vec![false; header.outputs.len()];
    Ok(garbler_side(seed, job, circuit, x1, x2_1, &none)?.0)
}

/// [`garbler_labels`], and what P1 needs to read the outputs revealed to it (`reveal[i]`: output
/// value `i` is): in malicious mode the zero-labels of those output wires and Δ, kept from the
/// garbling P1 runs for τ anyway.
pub fn garbler_side(
    seed: Block,
    job: &JobHeader,
    circuit: &[u8],
    x1: &[bool],
    x2_1: &[bool],
    reveal: &[bool],
) -> Result<(GarblerLabels, GarblerOutputs), TeleportError> {
    let (header, _) = Header::parse(circuit)?;
    let (_, owners) = gc_parts(job)?;
    let layout = Layout::new(&header, owners)?;
    if x1.len() != layout.garbler.len() {
        return Err(TeleportError::InvalidArgument(alloc::format!(
            "{} garbler input bits given; the circuit wants {}",
            x1.len(),
            layout.garbler.len()
        )));
    }
    if reveal.len() != header.outputs.len() {
        return Err(TeleportError::InvalidArgument("one output assignment per output value is needed".into()));
    }
    let keys = GcKeys::from_seed(seed);
    let x1_labels = layout.garbler.iter().zip(x1).map(|(&w, &b)| keys.with_bit(keys.prf(DOM_INPUT, w), b)).collect();
    let share1 = share_labels(&keys, &layout, 1, x2_1)?;
    let mut outputs = GarblerOutputs { widths: header.outputs.clone(), reveal: reveal.to_vec(), delta: None, zero: Vec::new() };
    let tau = match job.mode {
        Mode::SemiHonest => None,
        Mode::Malicious => {
            let ranges = crate::circuit::pieces(circuit)?;
            let mut g = GcGarbling::new(seed, job, header)?;
            let mut tau = TauHasher::new(job);
            let mut tables = Vec::new();
            for r in &ranges[1..] {
                tables.clear();
                g.garble_piece(&circuit[r.clone()], &mut tables)?;
                tau.tables(&tables);
            }
            let s = sigmas(&keys, &job.sid, &layout);
            outputs.delta = Some(keys.delta);
            outputs.zero = revealed_wires(&g.header, reveal).map(|w| g.garbler.label(w)).collect();
            Some(tau.finish(&g.decoding(), &s))
        }
    };
    Ok((GarblerLabels { x1: x1_labels, share1, tau }, outputs))
}

/// The output wires of the output values `reveal` selects, in order.
fn revealed_wires<'a>(header: &'a Header, reveal: &'a [bool]) -> impl Iterator<Item = u32> + 'a {
    let mut wires = header.output_wires();
    header.outputs.iter().zip(reveal).flat_map(move |(&n, &r)| {
        let these: Vec<u32> = wires.by_ref().take(n as usize).collect();
        if r { these } else { Vec::new() }
    })
}

/// What P1 needs to read the outputs P2 reports to it after evaluation.
///
/// * Semi-honest mode: P2 sends the revealed bits (packed). P1 takes them on trust, as every
///   party trusts the others to follow a semi-honest protocol.
/// * Malicious mode: P2 sends the **active output labels** of the revealed wires. P1 accepts a
///   label only if it equals the wire's zero-label `Z` or `Z ⊕ Δ` (compared in constant time) and
///   reads the bit from which. A P2 that lies must produce the label it did not compute, i.e.
///   guess Δ (authenticity of the garbling): it can make P1 abort
///   ([`crate::Check::EvaluatorOutputLabels`]), not change P1's output. A malicious enclave
///   cannot either: P2 checked τ before evaluating, so its labels come from P1's garbling.
pub struct GarblerOutputs {
    widths: Vec<u32>,
    reveal: Vec<bool>,
    delta: Option<Block>,
    zero: Vec<Block>,
}

impl Drop for GarblerOutputs {
    fn drop(&mut self) {
        Block::wipe(&mut self.zero);
        if let Some(d) = &mut self.delta {
            Block::wipe(core::slice::from_mut(d));
        }
    }
}

impl GarblerOutputs {
    fn revealed_bits(&self) -> usize {
        self.widths.iter().zip(&self.reveal).filter(|(_, &r)| r).map(|(&w, _)| w as usize).sum()
    }

    /// Reads P2's report: one entry per output value, `Some(bits)` where revealed to P1.
    pub fn decode(&self, msg: &[u8]) -> Result<Vec<Option<Vec<bool>>>, TeleportError> {
        let n = self.revealed_bits();
        let bits = match self.delta {
            None => crate::bytes::unpack_bits(msg, n, "the garbler's outputs")?,
            Some(delta) => {
                if msg.len() != 16 * n {
                    return Err(TeleportError::Malformed("the garbler's output labels"));
                }
                let mut ok = subtle::Choice::from(1u8);
                let mut bits = Vec::with_capacity(n);
                for (z, l) in self.zero.iter().zip(msg.chunks_exact(16)) {
                    let is0 = l.ct_eq(&z.0[..]);
                    let is1 = l.ct_eq(&(*z ^ delta).0[..]);
                    ok &= is0 | is1;
                    bits.push(bool::from(is1));
                }
                if !bool::from(ok) {
                    return Err(TeleportError::CheckFailed(crate::Check::EvaluatorOutputLabels));
                }
                bits
            }
        };
        let mut it = bits.into_iter();
        Ok(self
            .widths
            .iter()
            .zip(&self.reveal)
            .map(|(&w, &r)| r.then(|| it.by_ref().take(w as usize).collect()))
            .collect())
    }
}

/// Splits P2's input: `x2⁰` random (from the caller's randomness, `coins`), `x2¹ = x2 ⊕ x2⁰`.
pub fn split_input(x2: &[bool], coins: &[u8]) -> Result<(Vec<bool>, Vec<bool>), TeleportError> {
    if coins.len() != x2.len().div_ceil(8) {
        return Err(TeleportError::InvalidArgument("one random bit per evaluator input bit is needed".into()));
    }
    let x2_0: Vec<bool> = (0..x2.len()).map(|i| (coins[i / 8] >> (i % 8)) & 1 == 1).collect();
    let x2_1 = x2.iter().zip(&x2_0).map(|(a, b)| a ^ b).collect();
    Ok((x2_0, x2_1))
}

/// P2's evaluation state for one GC job: built from the labels of P1 and of the enclave, fed the
/// tables as they stream, then checked (malicious mode) and decoded.
pub struct GcEvaluation {
    job: JobHeader,
    header: Header,
    layout: Layout,
    evaluator: Evaluator,
    gates_done: u64,
    tau: Option<TauHasher>,
    x2_0: Vec<bool>,
    x2_1: Vec<bool>,
    from_garbler: GarblerLabels,
    share0: Vec<Block>,
    gates: Vec<Gate>,
}

impl GcEvaluation {
    /// Starts evaluation with P2's shares, P1's labels and the enclave's x2⁰ labels.
    pub fn new(
        job: &JobHeader,
        header: Header,
        (x2_0, x2_1): (Vec<bool>, Vec<bool>),
        from_garbler: GarblerLabels,
        share0: Vec<Block>,
    ) -> Result<Self, TeleportError> {
        let (_, owners) = gc_parts(job)?;
        let layout = Layout::new(&header, owners)?;
        let (n1, n2) = (layout.garbler.len(), layout.evaluator.len());
        if from_garbler.x1.len() != n1 || from_garbler.share1.len() != n2 || share0.len() != n2 {
            return Err(TeleportError::Malformed("input labels (wrong count)"));
        }
        if x2_0.len() != n2 || x2_1.len() != n2 {
            return Err(TeleportError::InvalidArgument("evaluator shares do not fit the circuit".into()));
        }
        let mut evaluator = Evaluator::new(header.wires, job.tag());
        for (&w, &z) in layout.garbler.iter().zip(&from_garbler.x1) {
            evaluator.set_label(w, z);
        }
        for (i, &w) in layout.evaluator.iter().enumerate() {
            evaluator.set_label(w, share0[i] ^ from_garbler.share1[i]);
        }
        let tau = (job.mode == Mode::Malicious).then(|| TauHasher::new(job));
        Ok(GcEvaluation {
            job: job.clone(),
            header,
            layout,
            evaluator,
            gates_done: 0,
            tau,
            x2_0,
            x2_1,
            from_garbler,
            share0,
            gates: Vec::new(),
        })
    }

    /// Evaluates the next piece of encoded gates with its tables.
    pub fn evaluate_piece(&mut self, piece: &[u8], tables: &[u8]) -> Result<(), TeleportError> {
        let mut gates = core::mem::take(&mut self.gates);
        let r = decode_gates(piece, self.header.wires, PIECE_GATES, &mut gates).and_then(|()| {
            if self.gates_done + gates.len() as u64 > self.header.gates {
                return Err(TeleportError::Malformed("circuit (more gates than its header declares)"));
            }
            self.evaluator.evaluate_chunk(&gates, self.gates_done, tables)?;
            self.gates_done += gates.len() as u64;
            if let Some(t) = &mut self.tau {
                t.tables(tables);
            }
            Ok(())
        });
        self.gates = gates;
        r
    }

    /// Gates evaluated so far.
    pub fn gates_done(&self) -> u64 {
        self.gates_done
    }

    /// Runs P2's checks (malicious mode: τ, then the enclave's and the garbler's labels against
    /// the σ's) and decodes the outputs with `decoding` (packed bits). Returns the output bits of
    /// each output value.
    pub fn finish(self, decoding: &[u8], sigmas: Option<Vec<Digest32>>) -> Result<Vec<Vec<bool>>, TeleportError> {
        let none = alloc::vec![false; self.header.outputs.len()];
        Ok(self.finish_revealing(decoding, sigmas, &none)?.0)
    }

    /// [`finish`](Self::finish), and the report for P1 of the output values `reveal` selects (see
    /// [`GarblerOutputs`]): the bits in semi-honest mode, the active labels in malicious mode. It
    /// exists only once every check passed.
    pub fn finish_revealing(
        self,
        decoding: &[u8],
        sigmas: Option<Vec<Digest32>>,
        reveal: &[bool],
    ) -> Result<(Vec<Vec<bool>>, Vec<u8>), TeleportError> {
        if reveal.len() != self.header.outputs.len() {
            return Err(TeleportError::InvalidArgument("one output assignment per output value is needed".into()));
        }
        if self.gates_done != self.header.gates {
            return Err(TeleportError::Malformed("garbled circuit (fewer gates than the circuit has)"));
        }
        let out_bits = self.header.output_bits().unwrap_or(0) as usize;
        let d = crate::bytes::unpack_bits(decoding, out_bits, "decoding bits")?;
        if let Some(tau_hasher) = self.tau {
            let flat = sigmas.ok_or(TeleportError::Malformed("input labels (σ's missing in malicious mode)"))?;
            let s = Sigmas::from_flat(flat, &self.layout)?;
            let tau_hat = tau_hasher.finish(decoding, &s);
            let tau = self.from_garbler.tau.ok_or(TeleportError::Malformed("garbler labels (τ missing)"))?;
            if !bool::from(tau_hat.ct_eq(&tau)) {
                return Err(TeleportError::CheckFailed(crate::Check::GcTau));
            }
            let sid = &self.job.sid;
            let ok = |kind, w: u32, bit: bool, label: Block, want: &Digest32| {
                bool::from(sigma(sid, kind, w, bit, label).ct_eq(want))
            };
            let mut enclave_ok = true;
            let mut share_ok = true;
            for (i, &w) in self.layout.evaluator.iter().enumerate() {
                let (b0, b1) = (self.x2_0[i], self.x2_1[i]);
                enclave_ok &= ok(SigmaKind::Share0, w, b0, self.share0[i], &s.share0[2 * i + b0 as usize]);
                share_ok &= ok(SigmaKind::Share1, w, b1, self.from_garbler.share1[i], &s.share1[2 * i + b1 as usize]);
            }
            let mut x1_ok = true;
            for (i, &w) in self.layout.garbler.iter().enumerate() {
                let z = self.from_garbler.x1[i];
                x1_ok &= ok(SigmaKind::Garbler, w, z.lsb(), z, &s.garbler[2 * i + z.lsb() as usize]);
            }
            if !enclave_ok {
                return Err(TeleportError::CheckFailed(crate::Check::EnclaveLabels));
            }
            if !share_ok {
                return Err(TeleportError::CheckFailed(crate::Check::GarblerShareLabels));
            }
            if !x1_ok {
                return Err(TeleportError::CheckFailed(crate::Check::GarblerInputLabels));
            }
        }
        let mut bits = self.header.output_wires().zip(d).map(|(w, d)| self.evaluator.label(w).lsb() ^ d);
        let outputs: Vec<Vec<bool>> = self.header.outputs.iter().map(|&n| bits.by_ref().take(n as usize).collect()).collect();
        let report = match self.job.mode {
            Mode::SemiHonest => {
                let revealed: Vec<bool> = outputs.iter().zip(reveal).filter(|(_, &r)| r).flat_map(|(o, _)| o.iter().copied()).collect();
                crate::bytes::pack_bits(&revealed)
            }
            Mode::Malicious => {
                let mut v = Vec::new();
                for w in revealed_wires(&self.header, reveal) {
                    v.extend_from_slice(&self.evaluator.label(w).0);
                }
                v
            }
        };
        Ok((outputs, report))
    }
}
