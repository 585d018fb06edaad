//! The SPDZ online phase and the program interpreter.
//!
//! **Security.** Malicious, up to n − 1 corrupt parties, with abort. Every value opened during
//! the computation (Beaver's ε and δ, comparison masks) is logged and MAC-checked, with
//! coefficients from a coin opened only then, together with the parties' broadcast transcripts
//! (inputs' ε, every opened value; P5, P9):
//!
//! * **before a comparison opens a masked value that depends on anything unchecked** (a Beaver
//!   product, an earlier comparison, an integer input whose range is not yet verified). Beaver
//!   openings are perfectly masked, but a comparison's c = a + r hides a only statistically and
//!   only while a is small: a party that adds an error e to an opened ε turns x·y into
//!   x·y + e·y, and c would then reveal e·y + r, i.e. y. Checking first makes every compared
//!   value correct (or the run aborts) before c is opened;
//! * before any output is opened, and again after the outputs are opened (to everyone, or to one
//!   party as y + r with r that party's input mask), before anything is returned.
//!
//! Triples, bits and masks are taken from the store and never reused (P7).
//!
//! **Aborts are not unanimous.** Openings and check messages go point to point; the broadcast
//! transcripts are compared inside each MAC check, but nothing echoes the last check's messages
//! (without a broadcast channel no dishonest-majority protocol can make the final decision
//! unanimous). A corrupt party can therefore make one honest party abort while another, which got
//! consistent messages, outputs. What it cannot do is make any honest party output a wrong value,
//! or learn anything beyond its outputs: a party that outputs has checked everything. Callers
//! that need agreement on success must run their own agreement step after the output (and an
//! honest party that aborts tells its peers why when the SDK closes its transport).
//! `tests/selective_abort.rs` shows what each honest party sees.
//!
//! **Every sharing is a random sharing.** Input masks and random bits are re-randomised with a
//! pairwise-seeded zero-sharing when they are made ([`crate::zero`]), so every party's share of
//! any value (in particular of an output opened share by share, to everyone or to its
//! recipients) is uniform given the value: an opening reveals the value and nothing about which
//! party's input contributed what.
//!
//! **Inputs and ranges.** A field input is one masked broadcast ε = x − r. An integer input of k
//! bits is input as its k bits, each with its own mask, and the parties check b² = b for every
//! bit (one Beaver product each, all in one round; the claims b·b − b = 0 go into the next MAC
//! check, which runs before any comparison or output depends on them). b² = b has only the roots
//! 0 and 1 in a field, and an owner can put any element into its ε, so this is exactly the
//! check that the shared value is Σ 2^i b_i (minus 2^(k−1)·b_(k−1) if signed) with bits b_i:
//! a malicious owner cannot input anything outside the declared range. The openings of the
//! check are masked by fresh triples and reveal nothing about the bits.
//! An external client's integer input ([`crate::clients`]) is squared in the same round, but
//! checked per client instead of aborting the run: after a coin ρ, z_c = Σ ρ_j (b_j² − b_j) over
//! client c's bits is opened, everything opened so far is MAC-checked, and a client with
//! z_c ≠ 0 is refused (its inputs count as 0).
//!
//! **Comparisons** ([`crate::online_core`]) return 0 or 1 whatever their operands, so SELECT on a
//! comparison never mixes its two branches; operands outside the declared width (only possible
//! through the program itself, e.g. field inputs or overflowing products) give a wrong bit and are
//! hidden less well (see [`crate::program`]).
//!
//! **Schedule.** Each instruction gets a level: linear instructions share the level of their
//! latest operand, MUL/SELECT/LT/LE/EQ add one. Levels run in order; all interactive
//! instructions of a level form one wave: their Beaver openings and the comparisons' masked
//! openings go out in one round, then the comparisons' carry and product trees run in lockstep,
//! one Beaver round per tree level for all of them, and less-than's final XOR rides along with
//! the deepest tree. Linear instructions cost no communication. Openings are sent in messages of
//! at most [`OPEN_CHUNK`] elements (16 MiB), one round per chunk, so no message exceeds what the
//! transports accept whatever the size of a level.

use crate::error::SpdzError;
use crate::field::Field;
use crate::net::{decode_elems, CoinCommitment};
use crate::online_core::{
    carry_leaves, carry_level_apply, carry_level_pairs, eq_factors, low_bits, ltz_from, product_level_apply,
    product_level_pairs, stat_sec, xor_from_product,
};
use crate::party::Party;
use crate::program::{Instr, Kind, Owner, Program};
use crate::share::{Share, Triple};
use crate::store::Counts;
use crate::wipe::Wiping;
use webmpc_core::channel::Channel;
use std::collections::BTreeMap;

/// Most elements in one opening or input message: 16 MiB, a quarter of what the JavaScript
/// transports accept (64 MiB).
pub const OPEN_CHUNK: usize = 1 << 20;

#[cfg(any(test, feature = "ideal"))]
std::thread_local! {
    static CHUNK_FOR_TESTS: core::cell::Cell<usize> = const { core::cell::Cell::new(OPEN_CHUNK) };
}

/// Sets the chunk size of openings and input broadcasts on this thread (tests only: so that a
/// small program crosses chunk boundaries).
#[cfg(any(test, feature = "ideal"))]
pub fn set_open_chunk_for_tests(elements: usize) {
    CHUNK_FOR_TESTS.with(|c| c.set(elements.clamp(1, OPEN_CHUNK)));
}

fn open_chunk() -> usize {
    #[cfg(any(test, feature = "ideal"))]
    return CHUNK_FOR_TESTS.with(|c| c.get());
    #[cfg(not(any(test, feature = "ideal")))]
    OPEN_CHUNK
}

/// One comparison of a wave.
enum Tree<F> {
    /// LT: carry-tree nodes (G, P), lowest position first; r″_0 and c_m for the final
    /// LTZ = 1 − (c_m ⊕ r″_0 ⊕ u); `xor` = r″_0 ⊕ u once the tree is done.
    Carry { nodes: Vec<(Share<F>, Share<F>)>, r_m: Share<F>, c_m: bool, xor: Option<Share<F>> },
    /// EQ: factors of the product.
    Prod(Vec<Share<F>>),
}

/// The online engine over one party: its opened-value log (`Party::online_log`), the values
/// claimed to be zero, and preprocessing consumption.
pub struct Engine<'p, F: Field, C: Channel> {
    p: &'p mut Party<F, C>,
    /// MAC shares of values claimed to be 0 (the input range checks), for the next check.
    zeros: Vec<F>,
    /// Openings so far in this run (cheating tests pick one by its index).
    #[cfg(any(test, feature = "ideal"))]
    opens: usize,
}

fn exhausted(what: &str) -> SpdzError {
    SpdzError::InvalidArgument(format!("preprocessing exhausted: not enough {what}"))
}

fn pow2<F: Field>(e: usize) -> F {
    F::from_bits(1u128 << e)
}

impl<'p, F: Field, C: Channel> Engine<'p, F, C> {
    /// An engine on `p`'s store.
    pub fn new(p: &'p mut Party<F, C>) -> Self {
        Engine {
            p,
            zeros: Vec::new(),
            #[cfg(any(test, feature = "ideal"))]
            opens: 0,
        }
    }

    fn me(&self) -> usize {
        self.p.me()
    }

    fn constant(&self, c: F) -> Share<F> {
        Share::constant(c, self.p.me(), self.p.delta)
    }

    fn take_triples(&mut self, k: usize) -> Result<Vec<Triple<F>>, SpdzError> {
        if self.p.store.triples.len() < k {
            return Err(exhausted("triples"));
        }
        Ok(self.p.store.triples.drain(..k).collect())
    }

    fn take_bits(&mut self, k: usize) -> Result<Vec<Share<F>>, SpdzError> {
        if self.p.store.bits.len() < k {
            return Err(exhausted("random bits"));
        }
        Ok(self.p.store.bits.drain(..k).collect())
    }

    /// Opens to everyone (in rounds of at most [`OPEN_CHUNK`] values) and logs the values for
    /// the next check.
    pub async fn open(&mut self, shares: &[Share<F>]) -> Result<Vec<F>, SpdzError> {
        #[cfg(any(test, feature = "ideal"))]
        let mut shifted = Vec::new();
        #[cfg(any(test, feature = "ideal"))]
        let shares = {
            let shift = self.p.cheat.online_open_shift::<F>(self.opens);
            self.opens += 1;
            match (shift, shares.first()) {
                (Some(by), Some(_)) => {
                    shifted = shares.to_vec();
                    shifted[0].value += by;
                    &shifted[..]
                }
                _ => shares,
            }
        };
        let mut out = Vec::with_capacity(shares.len());
        for chunk in shares.chunks(open_chunk()) {
            let v = self.p.open(chunk).await?;
            self.p.online_log.extend(v.iter().zip(chunk).map(|(v, s)| (*v, s.mac)));
            out.extend(v);
        }
        #[cfg(any(test, feature = "ideal"))]
        crate::wipe::wipe(&mut shifted);
        Ok(out)
    }

    /// Beaver multiplication of many pairs in one round.
    pub async fn mul(&mut self, pairs: &[(Share<F>, Share<F>)]) -> Result<Vec<Share<F>>, SpdzError> {
        let triples = Wiping(self.take_triples(pairs.len())?);
        let mut to_open = Wiping(Vec::with_capacity(2 * pairs.len()));
        for ((x, y), t) in pairs.iter().zip(triples.iter()) {
            to_open.push(*x - t.a);
            to_open.push(*y - t.b);
        }
        let vals = self.open(&to_open).await?;
        Ok(self.beaver_finish(&triples, &vals))
    }

    /// [[z]] = [[c]] + ε·[[b]] + δ·[[a]] + ε·δ from the opened (ε, δ) pairs.
    fn beaver_finish(&self, triples: &[Triple<F>], vals: &[F]) -> Vec<Share<F>> {
        triples
            .iter()
            .enumerate()
            .map(|(h, t)| {
                let (e, d) = (vals[2 * h], vals[2 * h + 1]);
                (t.c + t.b.scale(e) + t.a.scale(d)).add_const(e * d, self.me(), self.p.delta)
            })
            .collect()
    }

    /// Claims that the shared value `s` is 0: the next check verifies it through its MAC, without
    /// opening it.
    pub fn claim_zero(&mut self, s: Share<F>) {
        self.zeros.push(s.mac);
    }

    /// Checks every value opened and every zero claim since the last check (MAC check with a
    /// coin opened now, plus the broadcast transcripts). `phase` names a failure of the openings;
    /// a failed zero claim is the input range check.
    pub async fn check(&mut self, coin: CoinCommitment, phase: &'static str) -> Result<(), SpdzError> {
        let mut prg = self.p.net.open_coin(coin).await?;
        let opened = core::mem::take(&mut self.p.online_log);
        let zeros = core::mem::take(&mut self.zeros);
        let sigmas = [self.p.opened_sigma(&mut prg, &opened, &[]), self.p.opened_sigma(&mut prg, &[], &zeros)];
        self.p
            .check_sigmas(&sigmas, |k| SpdzError::MacCheckFailed {
                phase: if k == 0 { phase } else { "input range check" },
            })
            .await
    }

    /// One wave: Beaver products of `muls`, LTZ of each `(a, k)` in `lts` (a ∈ [−2^k, 2^k)) and
    /// EQZ of each `(a, k)` in `eqs` (|a| < 2^k). Every comparison result is a bit.
    #[allow(clippy::type_complexity)]
    pub async fn wave(
        &mut self,
        muls: &[(Share<F>, Share<F>)],
        lts: &[(Share<F>, usize)],
        eqs: &[(Share<F>, usize)],
    ) -> Result<(Vec<Share<F>>, Vec<Share<F>>, Vec<Share<F>>), SpdzError> {
        let triples = Wiping(self.take_triples(muls.len())?);
        let mut to_open = Wiping(Vec::with_capacity(2 * muls.len() + lts.len() + eqs.len()));
        for ((x, y), t) in muls.iter().zip(triples.iter()) {
            to_open.push(*x - t.a);
            to_open.push(*y - t.b);
        }
        let one = self.constant(F::ONE);
        // c = a + 2^m + r′ + 2^m·r″: m bits of r′, κ(m) + 1 bits of r″ (LT: m = k; EQ: K = k).
        let mut masks = Vec::with_capacity(lts.len() + eqs.len());
        for (a, m) in lts.iter().chain(eqs) {
            let rb = Wiping(self.take_bits(*m)?);
            let rr = Wiping(self.take_bits(stat_sec(*m) + 1)?);
            to_open.push(*a + self.constant(pow2(*m)) + weighted(&rb) + weighted(&rr).scale(pow2(*m)));
            masks.push((rb, rr[0]));
        }
        let vals = self.open(&to_open).await?;
        let z = self.beaver_finish(&triples, &vals);
        let cs = &vals[2 * muls.len()..];
        let mut trees = Vec::with_capacity(masks.len());
        for (i, ((_, m), (rb, r_m))) in lts.iter().chain(eqs).zip(&masks).enumerate() {
            let c = cs[i].bits();
            let bits = low_bits(c, *m);
            trees.push(if i < lts.len() {
                Tree::Carry { nodes: carry_leaves(&bits, rb, one), r_m: *r_m, c_m: (c >> m) & 1 == 1, xor: None }
            } else {
                Tree::Prod(eq_factors(&bits, rb, one))
            });
        }
        drop(masks);
        loop {
            let mut pairs = Vec::new();
            for t in &trees {
                match t {
                    Tree::Carry { nodes, r_m, xor: None, .. } if nodes.len() == 1 => pairs.push((*r_m, nodes[0].0)),
                    Tree::Carry { nodes, xor: None, .. } => pairs.extend(carry_level_pairs(nodes)),
                    Tree::Carry { .. } => {}
                    Tree::Prod(f) => pairs.extend(product_level_pairs(f)),
                }
            }
            if pairs.is_empty() {
                break;
            }
            let prods = Wiping(self.mul(&pairs).await?);
            let mut it = prods.iter().copied();
            for t in trees.iter_mut() {
                match t {
                    Tree::Carry { nodes, r_m, xor: xor @ None, .. } => {
                        if nodes.len() == 1 {
                            let p = it.next().expect("one product for the final XOR");
                            *xor = Some(xor_from_product(*r_m, nodes[0].0, p));
                        } else {
                            *nodes = carry_level_apply(nodes, &mut it);
                        }
                    }
                    Tree::Carry { .. } => {}
                    Tree::Prod(f) => {
                        if f.len() > 1 {
                            *f = product_level_apply(f, &mut it);
                        }
                    }
                }
            }
        }
        let mut lt_out = Vec::with_capacity(lts.len());
        let mut eq_out = Vec::with_capacity(eqs.len());
        for t in trees {
            match t {
                Tree::Carry { c_m, xor, .. } => lt_out.push(ltz_from(c_m, xor.expect("every tree finished"), one)),
                Tree::Prod(f) => eq_out.push(f[0]),
            }
        }
        Ok((z, lt_out, eq_out))
    }
}

/// Σ 2^i·[[b_i]].
fn weighted<F: Field>(bits: &[Share<F>]) -> Share<F> {
    let mut acc = Share::ZERO;
    for b in bits.iter().rev() {
        acc = acc.scale(F::ONE + F::ONE) + *b;
    }
    acc
}

/// Converts this party's raw input (16 little-endian bytes) of kind `kind` into a field element,
/// checking its range.
pub fn encode_input<F: Field>(kind: Kind, raw: [u8; 16]) -> Result<F, SpdzError> {
    let bad = |what: &str| SpdzError::InvalidArgument(format!("input out of range for its kind ({what})"));
    match kind {
        Kind::Field => F::from_bytes(raw).ok_or_else(|| bad("not a canonical field element")),
        Kind::Unsigned(k) => {
            let v = u128::from_le_bytes(raw);
            if k == 0 || (k < 128 && v >> k != 0) {
                return Err(bad("unsigned"));
            }
            Ok(F::from_bits(v))
        }
        Kind::Signed(k) => {
            if k == 0 || k > 64 {
                return Err(bad("signed width"));
            }
            let v = i128::from_le_bytes(raw);
            let lim = 1i128 << (k - 1);
            if v < -lim || v >= lim {
                return Err(bad("signed"));
            }
            Ok(if v >= 0 { F::from_bits(v as u128) } else { -F::from_bits(v.unsigned_abs()) })
        }
    }
}

/// What this party inputs for one input of kind `kind`: the element itself (field), or its k
/// bits, lowest first, as elements 0 or 1 (integers; two's complement for signed). Checks the
/// range like [`encode_input`].
pub fn input_digits<F: Field>(kind: Kind, raw: [u8; 16]) -> Result<Vec<F>, SpdzError> {
    let x = encode_input::<F>(kind, raw)?;
    Ok(match kind {
        Kind::Field => vec![x],
        Kind::Unsigned(k) | Kind::Signed(k) => {
            let v = u128::from_le_bytes(raw);
            (0..k as usize).map(|i| F::from_u64(((v >> i) & 1) as u64)).collect()
        }
    })
}

/// Reads an output of kind `kind` as 16 little-endian bytes: the canonical element (field,
/// unsigned) or the signed integer in (−p/2, p/2] in two's complement (signed).
pub fn decode_output<F: Field>(kind: Kind, v: F) -> [u8; 16] {
    match kind {
        Kind::Field | Kind::Unsigned(_) => v.to_bytes(),
        Kind::Signed(_) => {
            let x = u128::from_le_bytes(v.to_bytes());
            let half = (-F::ONE).bits() / 2;
            if x > half {
                let mag = (-v).bits();
                (-(mag as i128)).to_le_bytes()
            } else {
                x.to_le_bytes()
            }
        }
    }
}

impl<F: Field, C: Channel> Party<F, C> {
    /// Makes sure the store holds what `need` asks for, generating the shortfall (bits first:
    /// they consume triples).
    pub async fn top_up(&mut self, need: &Counts) -> Result<(), SpdzError> {
        let have = self.store.counts();
        if need.bits > have.bits {
            self.preprocess_bits(need.bits - have.bits, |_, _| {}).await?;
        }
        let have = self.store.counts();
        if need.triples > have.triples {
            self.preprocess_triples(need.triples - have.triples, |_, _| {}).await?;
        }
        let have = self.store.counts();
        let masks: Vec<usize> = need.masks.iter().zip(&have.masks).map(|(n, h)| n.saturating_sub(*h)).collect();
        self.preprocess_masks(&masks).await
    }

    /// Runs `program` with this party's `inputs` (16 little-endian bytes each, in the order of
    /// its inputs in the program: see [`encode_input`]). Returns one entry per output: `Some`
    /// (16 bytes, see [`decode_output`]) for outputs revealed to this party, `None` otherwise.
    /// Missing preprocessing is generated first. `progress(done, total)` counts instructions.
    ///
    /// The program is validated first ([`Program::validate`]); a program or inputs that do not
    /// fit are refused before any message is sent, and the party stays usable. A program with
    /// client inputs is refused (`INVALID_ARGUMENT`): it runs through
    /// [`Party::run_with_clients`].
    pub async fn run(
        &mut self,
        program: &Program,
        inputs: &[[u8; 16]],
        progress: impl FnMut(usize, usize),
    ) -> Result<Vec<Option<[u8; 16]>>, SpdzError> {
        if program.has_client_inputs() {
            return Err(SpdzError::InvalidArgument("program has client inputs: use run_with_clients".into()));
        }
        Ok(self.run_with_clients(program, inputs, &[], progress).await?.0)
    }

    /// [`Party::run`] for a program with inputs from external clients ([`crate::clients`]):
    /// `clients` has one entry per client-owned input, in program order, with the ids of the
    /// client masks it used and the client's ε per mask (as many as the input's kind takes).
    /// Those masks must be held (from [`Party::client_masks`], not used or dropped); the run
    /// consumes them.
    ///
    /// Everything is checked before any message (the party stays usable on such a refusal); then
    /// the servers compare the program, their preprocessing state, their client-mask counters
    /// and a hash of every client input: servers given different client inputs fail with
    /// `ParameterMismatch { what: "client inputs" }` before anything is consumed.
    ///
    /// Returns the outputs (as [`Party::run`]) and the ids of the refused clients (sorted,
    /// unique): clients with an integer input whose digits are not all bits. Every input of a
    /// refused client counts as 0; its masks are consumed anyway. Every server returns the same
    /// list (it is decided from opened, MAC-checked values).
    pub async fn run_with_clients(
        &mut self,
        program: &Program,
        inputs: &[[u8; 16]],
        clients: &[crate::clients::ClientInput],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<(Vec<Option<[u8; 16]>>, Vec<u32>), SpdzError> {
        program.validate()?;
        let me = self.me();
        let n = self.parties();
        if program.parties != n {
            return Err(crate::ProgramError::Mismatch(format!(
                "program is for {} parties, session has {n}",
                program.parties
            ))
            .into());
        }
        if program.field != F::KIND {
            return Err(crate::ProgramError::Mismatch("program is for the other field".into()).into());
        }
        let kinds = program.inputs_of(me);
        if kinds.len() != inputs.len() {
            return Err(SpdzError::InvalidArgument(format!(
                "{} inputs given; this party owns {}",
                inputs.len(),
                kinds.len()
            )));
        }
        let client = crate::clients::prepare::<F>(program, clients, &self.clients)?;
        let mut mine = Wiping(Vec::new());
        for (k, r) in kinds.iter().zip(inputs) {
            let mut d = input_digits::<F>(*k, *r)?;
            mine.extend_from_slice(&d);
            crate::wipe::wipe(&mut d);
        }
        // Same program, same preprocessing state (store and client-mask counter) and same client
        // inputs everywhere, before anything is consumed.
        self.guarded(async |p| {
            let mut msg = program.hash().to_vec();
            let c = p.store.counts();
            msg.extend_from_slice(&(c.triples as u64).to_le_bytes());
            msg.extend_from_slice(&(c.bits as u64).to_le_bytes());
            for m in &c.masks {
                msg.extend_from_slice(&(*m as u64).to_le_bytes());
            }
            msg.extend_from_slice(&p.clients.next_id().to_le_bytes());
            let state_end = msg.len();
            msg.extend_from_slice(&client.digest);
            let got = p.net.broadcast(msg.clone()).await?;
            for (j, g) in got.into_iter().enumerate() {
                if let Some(g) = g {
                    if g.len() != msg.len() || g[..32] != msg[..32] {
                        return Err(SpdzError::ParameterMismatch { peer: j, what: "program" });
                    }
                    if g[..state_end] != msg[..state_end] {
                        return Err(SpdzError::ParameterMismatch { peer: j, what: "preprocessing state" });
                    }
                    if g != msg {
                        return Err(SpdzError::ParameterMismatch { peer: j, what: "client inputs" });
                    }
                }
            }
            Ok(())
        })
        .await?;
        self.top_up(&program.requirements()).await?;
        self.guarded(async |p| {
            // Held (checked above, and nothing ran since that could take them).
            let masks: Wiping<Share<F>> =
                Wiping(client.ids.iter().map(|id| p.clients.take(*id).expect("checked client mask")).collect());
            execute(p, program, &mine, (&masks, &client.eps, &client.owners), &mut progress).await
        })
        .await
    }
}

/// The run's schedule, fixed by the program alone (so every party computes the same).
struct Plan {
    /// Instruction indices per level, in program order.
    by_level: Vec<Vec<usize>>,
    /// Whether a MAC check runs before the wave of each level.
    check_before: Vec<bool>,
    /// How many such checks.
    checks: usize,
}

/// Levels, and before which waves everything opened so far must be checked: before a wave whose
/// comparisons depend on an unchecked interactive result. Each value carries the latest
/// unchecked "epoch" it depends on: 0 none, 1 the input range check (integer inputs), l + 1 the
/// wave of level l; a check before level l covers every epoch up to l.
fn plan(program: &Program) -> Plan {
    let n_in = program.inputs.len();
    let total = n_in + program.instrs.len();
    let mut level = vec![0usize; total];
    let mut max_level = 0;
    for (i, ins) in program.instrs.iter().enumerate() {
        let l = ins.operands().iter().map(|o| level[*o as usize]).max().unwrap_or(0);
        let l = if ins.is_interactive() { l + 1 } else { l };
        level[n_in + i] = l;
        max_level = max_level.max(l);
    }
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); max_level + 1];
    for i in 0..program.instrs.len() {
        by_level[level[n_in + i]].push(i);
    }
    let mut epoch = vec![0usize; total];
    for (i, input) in program.inputs.iter().enumerate() {
        epoch[i] = (input.kind.range_bits() > 0) as usize;
    }
    let mut checked = 0;
    let mut check_before = vec![false; max_level + 1];
    let mut checks = 0;
    for (l, instrs) in by_level.iter().enumerate() {
        let dirty = instrs.iter().any(|&i| match program.instrs[i] {
            Instr::Lt(a, b, _) | Instr::Le(a, b, _) | Instr::Eq(a, b, _) => {
                epoch[a as usize] > checked || epoch[b as usize] > checked
            }
            _ => false,
        });
        if dirty {
            check_before[l] = true;
            checks += 1;
            checked = l;
        }
        for &i in instrs {
            let ins = &program.instrs[i];
            epoch[n_in + i] = if ins.is_interactive() {
                l + 1
            } else {
                ins.operands().iter().map(|o| epoch[*o as usize]).max().unwrap_or(0)
            };
        }
    }
    Plan { by_level, check_before, checks }
}

/// Broadcasts this party's input ε (`mine`) and receives every peer's (`len(j)` elements), in
/// rounds of at most [`OPEN_CHUNK`] elements per message; everything goes into the transcript.
async fn broadcast_inputs<F: Field, C: Channel>(
    p: &mut Party<F, C>,
    mine: &[F],
    len: impl Fn(usize) -> usize,
) -> Result<Vec<Vec<F>>, SpdzError> {
    let me = p.me();
    let n = p.parties();
    let chunk = open_chunk();
    let rounds = (0..n).map(|j| len(j).div_ceil(chunk)).max().unwrap_or(0);
    let range = |r: usize, l: usize| (r * chunk).min(l)..((r + 1) * chunk).min(l);
    let mut got: Vec<Vec<F>> = (0..n).map(|_| Vec::new()).collect();
    for r in 0..rounds {
        let msgs = (0..n)
            .map(|j| {
                (j != me).then(|| {
                    #[allow(unused_mut)]
                    let mut v = mine[range(r, mine.len())].to_vec();
                    #[cfg(any(test, feature = "ideal"))]
                    if r == 0 {
                        p.cheat.on_input_to(j, &mut v);
                    }
                    F::write_vec(&v)
                })
            })
            .collect();
        for (j, m) in p.net.exchange(msgs).await?.into_iter().enumerate() {
            if j == me {
                continue;
            }
            let m = m.ok_or(SpdzError::Malformed { peer: j, what: "input broadcast" })?;
            got[j].extend(decode_elems::<F>(j, &m, range(r, len(j)).len(), "input broadcast")?);
        }
    }
    got[me] = mine.to_vec();
    for g in &got {
        p.net.absorb_elems(b"input", g);
    }
    Ok(got)
}

/// Runs `program` on `p`: `mine` is this party's input digits (see [`input_digits`]), `clients`
/// the client masks and ε of the client inputs, flattened in program order, and the client of
/// each client input. Returns the outputs and the refused clients.
async fn execute<F: Field, C: Channel>(
    p: &mut Party<F, C>,
    program: &Program,
    mine: &[F],
    clients: (&[Share<F>], &[F], &[u32]),
    progress: &mut impl FnMut(usize, usize),
) -> Result<(Vec<Option<[u8; 16]>>, Vec<u32>), SpdzError> {
    let me = p.me();
    let n = p.parties();
    let delta = p.delta;
    let plan = plan(program);
    // One coin per check: the planned ones before comparisons, before the outputs, after them.
    // With client integer inputs, two more: ρ for the per-client range check and its MAC check.
    let client_bits_in = program.inputs.iter().any(|i| i.owner == Owner::Client && i.kind.range_bits() > 0);
    let extra = if client_bits_in { 2 } else { 0 };
    let mut coins = p.net.commit_coins(&vec![&b"online/check"[..]; plan.checks + 2 + extra]).await?.into_iter();
    let mut coin = move || coins.next().expect("one coin per planned check");
    // Inputs: the owner broadcasts ε = x − r for each mask r (one per field input, one per bit
    // of an integer input); [[x]] = [[r]] + ε.
    let n_in = program.inputs.len();
    let mut values: Wiping<Share<F>> = Wiping(vec![Share::ZERO; n_in + program.instrs.len()]);
    let mut masks_used: Vec<Wiping<Share<F>>> = (0..n).map(|_| Wiping(Vec::new())).collect();
    let mut eps_mine = Wiping(Vec::with_capacity(mine.len()));
    for input in &program.inputs {
        // A client's input uses its client masks (below), not input masks.
        let Owner::Party(j) = input.owner else { continue };
        for _ in 0..input.kind.input_masks() {
            let (sh, r) = p.store.masks[j].pop_front().ok_or_else(|| exhausted("input masks"))?;
            if j == me {
                let r = r.ok_or_else(|| exhausted("own input masks"))?;
                let x = *mine.get(eps_mine.len()).ok_or_else(|| exhausted("own inputs"))?;
                eps_mine.push(x - r);
            }
            masks_used[j].push(sh);
        }
    }
    let eps = broadcast_inputs(p, &eps_mine, |j| masks_used[j].len()).await?;
    // The clients' ε: every party got the same (the opening broadcast compared their hash); into
    // the transcript like the parties' ε, so every MAC check compares them again.
    let (client_masks, client_eps, client_of) = clients;
    #[cfg(any(test, feature = "ideal"))]
    let changed = p.cheat.on_client_eps(client_eps);
    #[cfg(any(test, feature = "ideal"))]
    let (client_eps, absorbed) = match &changed {
        Some((v, in_transcript)) => (&v[..], if *in_transcript { &v[..] } else { client_eps }),
        None => (client_eps, client_eps),
    };
    #[cfg(not(any(test, feature = "ideal")))]
    let absorbed = client_eps;
    p.net.absorb_elems(b"client-input", absorbed);
    let mut next = vec![0usize; n];
    let mut next_client = 0;
    let mut range_bits: Wiping<Share<F>> = Wiping(Vec::new());
    // Client input bits, and per client its input indices and the positions of its bits.
    let mut client_bits: Wiping<Share<F>> = Wiping(Vec::new());
    let mut per_client: BTreeMap<u32, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    let mut next_input = 0;
    for (i, input) in program.inputs.iter().enumerate() {
        let owner = match input.owner {
            Owner::Client => {
                let c = client_of[next_input];
                next_input += 1;
                per_client.entry(c).or_default().0.push(i);
                Some(c)
            }
            Owner::Party(_) => None,
        };
        let mut take = || match input.owner {
            Owner::Party(j) => {
                let s = masks_used[j][next[j]].add_const(eps[j][next[j]], me, delta);
                next[j] += 1;
                s
            }
            Owner::Client => {
                let s = client_masks[next_client].add_const(client_eps[next_client], me, delta);
                next_client += 1;
                s
            }
        };
        values[i] = match input.kind {
            Kind::Field => take(),
            Kind::Unsigned(k) | Kind::Signed(k) => {
                let k = k as usize;
                let mut bits: Vec<Share<F>> = (0..k).map(|_| take()).collect();
                let v = match input.kind {
                    Kind::Signed(_) => weighted(&bits[..k - 1]) - bits[k - 1].scale(pow2(k - 1)),
                    _ => weighted(&bits),
                };
                match owner {
                    Some(c) => {
                        let at = per_client.get_mut(&c).expect("entered above");
                        at.1.extend(client_bits.len()..client_bits.len() + k);
                        client_bits.extend_from_slice(&bits);
                    }
                    None => range_bits.extend_from_slice(&bits),
                }
                crate::wipe::wipe(&mut bits);
                v
            }
        };
    }
    let mut eng = Engine::new(p);
    // The range check: b·b − b = 0 for every input bit, one Beaver round for all (parties' and
    // clients' bits). A party's bits are claimed zero (the next MAC check aborts the run if not);
    // a client's are checked per client below.
    let mut refused = Vec::new();
    if !(range_bits.is_empty() && client_bits.is_empty()) {
        let pairs: Wiping<(Share<F>, Share<F>)> =
            Wiping(range_bits.iter().chain(client_bits.iter()).map(|b| (*b, *b)).collect());
        let squares = Wiping(eng.mul(&pairs).await?);
        for (sq, b) in squares.iter().zip(range_bits.iter()) {
            eng.claim_zero(*sq - *b);
        }
        if !client_bits.is_empty() {
            // ρ only now: the client bits and their squares are fixed. z_c = Σ ρ_j (b_j² − b_j)
            // over client c's bits is 0 for an honest client (so opening it reveals nothing),
            // and ≠ 0 except with probability 1/|F| for a client with a non-bit digit.
            let mut prg = eng.p.net.open_coin(coin()).await?;
            let sq = &squares[range_bits.len()..];
            let mut z: Wiping<Share<F>> = Wiping(Vec::with_capacity(per_client.len()));
            let mut who = Vec::new();
            for (c, (_, at)) in &per_client {
                if at.is_empty() {
                    continue;
                }
                let mut acc = Share::ZERO;
                for &j in at {
                    acc = acc + (sq[j] - client_bits[j]).scale(F::random(&mut prg));
                }
                z.push(acc);
                who.push(*c);
            }
            #[cfg(any(test, feature = "ideal"))]
            if let (Some(by), Some(s)) = (eng.p.cheat.client_check_shift::<F>(), z.first_mut()) {
                s.value += by;
            }
            let opened = eng.open(&z).await?;
            // Before deciding: a server that shifted an opening (to frame an honest client)
            // fails here, and the run aborts instead of refusing anyone.
            eng.check(coin(), "client range check").await?;
            for (c, v) in who.into_iter().zip(opened) {
                if v != F::ZERO {
                    refused.push(c);
                    for &i in &per_client[&c].0 {
                        values[i] = Share::constant(F::ZERO, me, delta);
                    }
                }
            }
        }
    }
    let total = program.instrs.len();
    let mut done = 0;
    let field = |c: &[u8; 16]| F::from_bytes(*c).expect("validated by Program::validate");
    for (l, instrs) in plan.by_level.iter().enumerate() {
        if plan.check_before[l] {
            eng.check(coin(), "online phase (before a comparison)").await?;
        }
        let (mut muls, mut mul_at) = (Vec::new(), Vec::new());
        let (mut lts, mut lt_at) = (Vec::new(), Vec::new());
        let (mut eqs, mut eq_at) = (Vec::new(), Vec::new());
        for &i in instrs {
            let v = |o: u32| values[o as usize];
            match program.instrs[i] {
                Instr::Mul(a, b) => {
                    muls.push((v(a), v(b)));
                    mul_at.push((i, None));
                }
                Instr::Select(c, a, b) => {
                    muls.push((v(c), v(a) - v(b)));
                    mul_at.push((i, Some(v(b))));
                }
                Instr::Lt(a, b, k) => {
                    lts.push((v(a) - v(b), k as usize));
                    lt_at.push((i, false));
                }
                Instr::Le(a, b, k) => {
                    lts.push((v(b) - v(a), k as usize));
                    lt_at.push((i, true));
                }
                Instr::Eq(a, b, k) => {
                    eqs.push((v(a) - v(b), k as usize));
                    eq_at.push(i);
                }
                _ => {}
            }
        }
        if !(muls.is_empty() && lts.is_empty() && eqs.is_empty()) {
            let (z, lt, eq) = eng.wave(&muls, &lts, &eqs).await?;
            for ((i, add), z) in mul_at.into_iter().zip(z) {
                values[n_in + i] = match add {
                    Some(b) => z + b,
                    None => z,
                };
            }
            for ((i, negate), l) in lt_at.into_iter().zip(lt) {
                values[n_in + i] = if negate { Share::constant(F::ONE, me, delta) - l } else { l };
            }
            for (i, e) in eq_at.into_iter().zip(eq) {
                values[n_in + i] = e;
            }
            crate::wipe::wipe(&mut muls);
            crate::wipe::wipe(&mut lts);
            crate::wipe::wipe(&mut eqs);
        }
        for &i in instrs {
            let v = |o: u32| values[o as usize];
            let out = match program.instrs[i] {
                Instr::Add(a, b) => v(a) + v(b),
                Instr::Sub(a, b) => v(a) - v(b),
                Instr::Neg(a) => -v(a),
                Instr::MulConst(a, c) => v(a).scale(field(&c)),
                Instr::AddConst(a, c) => v(a).add_const(field(&c), me, delta),
                Instr::Const(c) => Share::constant(field(&c), me, delta),
                _ => continue,
            };
            values[n_in + i] = out;
        }
        done += instrs.len();
        progress(done, total);
    }
    // Check everything opened so far (and the range claims) before any output is opened (P5).
    eng.check(coin(), "online phase").await?;
    // Open the outputs: to everyone, or y + r_P to each recipient P.
    let mut to_open = Wiping(Vec::new());
    let mut plan_out = Vec::new();
    for o in &program.outputs {
        let v = values[o.value as usize];
        match &o.recipients {
            None => {
                plan_out.push((None, to_open.len()));
                to_open.push(v);
            }
            Some(rs) => {
                for &r in rs {
                    let (sh, known) = eng.p.store.masks[r].pop_front().ok_or_else(|| exhausted("output masks"))?;
                    plan_out.push((Some((r, known)), to_open.len()));
                    to_open.push(v + sh);
                }
            }
        }
    }
    #[cfg(any(test, feature = "ideal"))]
    if eng.p.cheat.wrong_output_share() {
        if let Some(s) = to_open.first_mut() {
            s.value += F::ONE;
        }
    }
    let opened = eng.open(&to_open).await?;
    eng.check(coin(), "output").await?;
    drop(eng);
    let mut out = Vec::with_capacity(program.outputs.len());
    let mut it = plan_out.into_iter();
    for o in &program.outputs {
        let count = o.recipients.as_ref().map_or(1, |r| r.len());
        let mut mine_out = None;
        for _ in 0..count {
            let (who, at) = it.next().expect("one plan entry per opening");
            match who {
                None => mine_out = Some(opened[at]),
                Some((r, known)) if r == me => {
                    mine_out = Some(opened[at] - known.ok_or_else(|| exhausted("own masks"))?)
                }
                Some(_) => {}
            }
        }
        out.push(mine_out.map(|v| decode_output(o.kind, v)));
    }
    Ok((out, refused))
}
