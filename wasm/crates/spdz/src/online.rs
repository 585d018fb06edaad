//! The SPDZ online phase and the program interpreter.
//!
//! **Security.** Malicious, up to n − 1 corrupt parties, with abort. Every value opened during
//! the computation (Beaver's ε and δ, comparison masks) is logged; before any output is opened,
//! all of them are MAC-checked together with coefficients from a coin opened only then, and the
//! parties' broadcast transcripts (inputs' ε, every opened value) are compared (P5, P9). Outputs
//! are then opened — to everyone, or to one party as y + r with r that party's input mask — and
//! checked again before anything is returned. Triples, bits and masks are taken from the store
//! and never reused (P7).
//!
//! **Schedule.** Each instruction gets a level: linear instructions share the level of their
//! latest operand, MUL/SELECT/LT/LE/EQ add one. Levels run in order; all interactive
//! instructions of a level form one wave: their Beaver openings and the comparisons' masked
//! openings go out in one round, then the comparisons' carry and product trees run in lockstep,
//! one Beaver round per tree level for all of them. Linear instructions cost no communication.
//!
//! **Ranges.** The protocol cannot check that a party's integer input lies in its declared range
//! (that would need a bit decomposition per input). A party that inputs an out-of-range value
//! gets unspecified comparison results involving it; honest inputs stay hidden.

use crate::error::SpdzError;
use crate::field::Field;
use crate::online_core::{low_bits, STAT_SEC};
use crate::party::Party;
use crate::program::{Instr, Kind, Program};
use crate::share::{Share, Triple};
use crate::store::Counts;
use webmpc_core::channel::Channel;

/// One interactive operation of a wave.
enum Tree<F> {
    /// LT: carry tree nodes (G, P), lowest position first.
    Carry(Vec<(Share<F>, Share<F>)>),
    /// EQ: factors of the product.
    Prod(Vec<Share<F>>),
}

impl<F> Tree<F> {
    fn len(&self) -> usize {
        match self {
            Tree::Carry(v) => v.len(),
            Tree::Prod(v) => v.len(),
        }
    }
}

/// The online engine over one party: opened-value log and preprocessing consumption.
pub struct Engine<'p, F: Field, C: Channel> {
    p: &'p mut Party<F, C>,
    opened: Vec<(F, F)>,
}

fn exhausted(what: &str) -> SpdzError {
    SpdzError::InvalidArgument(format!("preprocessing exhausted: not enough {what}"))
}

impl<'p, F: Field, C: Channel> Engine<'p, F, C> {
    /// An engine on `p`'s store.
    pub fn new(p: &'p mut Party<F, C>) -> Self {
        Engine { p, opened: Vec::new() }
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

    /// Opens to everyone and logs the values for the next check.
    pub async fn open(&mut self, shares: &[Share<F>]) -> Result<Vec<F>, SpdzError> {
        let v = self.p.open(shares).await?;
        self.opened.extend(v.iter().zip(shares).map(|(v, s)| (*v, s.mac)));
        Ok(v)
    }

    /// Beaver multiplication of many pairs in one round.
    pub async fn mul(&mut self, pairs: &[(Share<F>, Share<F>)]) -> Result<Vec<Share<F>>, SpdzError> {
        let triples = self.take_triples(pairs.len())?;
        let mut to_open = Vec::with_capacity(2 * pairs.len());
        for ((x, y), t) in pairs.iter().zip(&triples) {
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

    /// Checks every value opened so far (MAC check with a fresh coin, plus transcripts).
    async fn check(&mut self, coin: crate::net::CoinCommitment, phase: &'static str) -> Result<(), SpdzError> {
        let mut prg = self.p.net.open_coin(coin).await?;
        let opened = core::mem::take(&mut self.opened);
        let sigma = self.p.opened_sigma(&mut prg, &opened, &[]);
        self.p.check_sigmas(&[sigma], |_| SpdzError::MacCheckFailed { phase }).await
    }

    /// One wave: Beaver products of `muls`, LTZ of each `(a, k)` in `lts` (a on k + 1 bits) and
    /// EQZ of each `(a, k)` in `eqs` (|a| < 2^k).
    #[allow(clippy::type_complexity)]
    pub async fn wave(
        &mut self,
        muls: &[(Share<F>, Share<F>)],
        lts: &[(Share<F>, usize)],
        eqs: &[(Share<F>, usize)],
    ) -> Result<(Vec<Share<F>>, Vec<Share<F>>, Vec<Share<F>>), SpdzError> {
        let triples = self.take_triples(muls.len())?;
        let mut to_open = Vec::with_capacity(2 * muls.len() + lts.len() + eqs.len());
        for ((x, y), t) in muls.iter().zip(&triples) {
            to_open.push(*x - t.a);
            to_open.push(*y - t.b);
        }
        let pow2 = |e: usize| F::from_bits(1u128 << e);
        // LTZ masks: m = k bits of r′, κ + 1 bits of r″.
        let mut lt_masks = Vec::with_capacity(lts.len());
        for (a, k) in lts {
            let m = *k;
            let rb = self.take_bits(m)?;
            let rr = self.take_bits(STAT_SEC + 1)?;
            let r1 = weighted(&rb);
            let r2 = weighted(&rr);
            let c = *a + self.constant(pow2(m)) + r2.scale(pow2(m)) + r1;
            to_open.push(c);
            lt_masks.push((rb, r1));
        }
        let mut eq_masks = Vec::with_capacity(eqs.len());
        for (a, k) in eqs {
            let rb = self.take_bits(*k)?;
            let rr = self.take_bits(STAT_SEC)?;
            let r1 = weighted(&rb);
            let r2 = weighted(&rr);
            let c = *a + self.constant(pow2(*k)) + r1 + r2.scale(pow2(*k));
            to_open.push(c);
            eq_masks.push(rb);
        }
        let vals = self.open(&to_open).await?;
        let z = self.beaver_finish(&triples, &vals);
        let cs = &vals[2 * muls.len()..];
        let mut trees = Vec::with_capacity(lts.len() + eqs.len());
        for ((_, k), (rb, _)) in lts.iter().zip(&lt_masks) {
            let c = cs[trees.len()];
            let bits = low_bits(c.bits(), *k);
            let nodes = rb
                .iter()
                .zip(&bits)
                .map(|(r, ci)| if *ci { (Share::ZERO, *r) } else { (*r, self.constant(F::ONE) - *r) })
                .collect();
            trees.push(Tree::Carry(nodes));
        }
        for ((_, k), rb) in eqs.iter().zip(&eq_masks) {
            let c = cs[trees.len()];
            let bits = low_bits(c.bits(), *k);
            let factors =
                rb.iter().zip(&bits).map(|(r, ci)| if *ci { *r } else { self.constant(F::ONE) - *r }).collect();
            trees.push(Tree::Prod(factors));
        }
        while trees.iter().any(|t| t.len() > 1) {
            let mut pairs = Vec::new();
            for t in &trees {
                match t {
                    Tree::Carry(v) => {
                        for p in v.chunks_exact(2) {
                            // p[0] lower, p[1] higher: (G_h + P_h·G_l, P_h·P_l).
                            pairs.push((p[1].1, p[0].0));
                            pairs.push((p[1].1, p[0].1));
                        }
                    }
                    Tree::Prod(v) => {
                        for p in v.chunks_exact(2) {
                            pairs.push((p[0], p[1]));
                        }
                    }
                }
            }
            let prods = self.mul(&pairs).await?;
            let mut it = prods.into_iter();
            for t in trees.iter_mut() {
                match t {
                    Tree::Carry(v) => {
                        let mut next = Vec::with_capacity(v.len().div_ceil(2));
                        for p in v.chunks(2) {
                            if p.len() == 2 {
                                let pg = it.next().expect("product");
                                let pp = it.next().expect("product");
                                next.push((p[1].0 + pg, pp));
                            } else {
                                next.push(p[0]);
                            }
                        }
                        *v = next;
                    }
                    Tree::Prod(v) => {
                        let mut next = Vec::with_capacity(v.len().div_ceil(2));
                        for p in v.chunks(2) {
                            next.push(if p.len() == 2 { it.next().expect("product") } else { p[0] });
                        }
                        *v = next;
                    }
                }
            }
        }
        let mut lt_out = Vec::with_capacity(lts.len());
        for (i, ((a, k), (_, r1))) in lts.iter().zip(&lt_masks).enumerate() {
            let Tree::Carry(v) = &trees[i] else { unreachable!("LT trees come first") };
            let u = v[0].0;
            let m = *k;
            let c_low = F::from_bits(cs[i].bits() & ((1u128 << m) - 1));
            // a′ = c′ − r′ + 2^m·u; LTZ = −(a − a′)·2^−m = (a′ − a)·2^−m.
            let a_mod = self.constant(c_low) - *r1 + u.scale(pow2(m));
            let inv = pow2(m).invert().expect("2^m is invertible");
            lt_out.push((a_mod - *a).scale(inv));
        }
        let eq_out = trees[lts.len()..]
            .iter()
            .map(|t| match t {
                Tree::Prod(v) => v[0],
                Tree::Carry(_) => unreachable!("EQ trees come last"),
            })
            .collect();
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
            if k < 128 && v >> k != 0 {
                return Err(bad("unsigned"));
            }
            Ok(F::from_bits(v))
        }
        Kind::Signed(k) => {
            let v = i128::from_le_bytes(raw);
            let lim = 1i128 << (k - 1);
            if v < -lim || v >= lim {
                return Err(bad("signed"));
            }
            Ok(if v >= 0 { F::from_bits(v as u128) } else { -F::from_bits(v.unsigned_abs()) })
        }
    }
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
    pub async fn run(
        &mut self,
        program: &Program,
        inputs: &[[u8; 16]],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Vec<Option<[u8; 16]>>, SpdzError> {
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
        let mine: Vec<F> = kinds.iter().zip(inputs).map(|(k, r)| encode_input(*k, *r)).collect::<Result<_, _>>()?;
        // Same program and same preprocessing state everywhere, before anything is consumed.
        self.guarded(async |p| {
            let mut msg = program.hash().to_vec();
            let c = p.store.counts();
            msg.extend_from_slice(&(c.triples as u64).to_le_bytes());
            msg.extend_from_slice(&(c.bits as u64).to_le_bytes());
            for m in &c.masks {
                msg.extend_from_slice(&(*m as u64).to_le_bytes());
            }
            let got = p.net.broadcast(msg.clone()).await?;
            for (j, g) in got.into_iter().enumerate() {
                if let Some(g) = g {
                    if g.len() != msg.len() || g[..32] != msg[..32] {
                        return Err(SpdzError::ParameterMismatch { peer: j, what: "program" });
                    }
                    if g != msg {
                        return Err(SpdzError::ParameterMismatch { peer: j, what: "preprocessing state" });
                    }
                }
            }
            Ok(())
        })
        .await?;
        self.top_up(&program.requirements()).await?;
        self.guarded(async |p| execute(p, program, &mine, &mut progress).await).await
    }
}

async fn execute<F: Field, C: Channel>(
    p: &mut Party<F, C>,
    program: &Program,
    mine: &[F],
    progress: &mut impl FnMut(usize, usize),
) -> Result<Vec<Option<[u8; 16]>>, SpdzError> {
    let me = p.me();
    let n = p.parties();
    let delta = p.delta;
    let coin_check = p.net.commit_coin(b"online/check").await?;
    let coin_out = p.net.commit_coin(b"online/output").await?;
    // Inputs: the owner broadcasts ε = x − r for its mask r; [[x]] = [[r]] + ε.
    let n_in = program.inputs.len();
    let mut values: Vec<Share<F>> = vec![Share::ZERO; n_in + program.instrs.len()];
    let mut masks_used: Vec<Vec<Share<F>>> = vec![Vec::new(); n];
    let mut eps_mine = Vec::with_capacity(mine.len());
    for input in &program.inputs {
        let (sh, r) = p.store.masks[input.owner].pop_front().ok_or_else(|| exhausted("input masks"))?;
        if input.owner == me {
            let r = r.ok_or_else(|| exhausted("own input masks"))?;
            eps_mine.push(mine[eps_mine.len()] - r);
        }
        masks_used[input.owner].push(sh);
    }
    let msgs = (0..n)
        .map(|j| {
            (j != me).then(|| {
                #[allow(unused_mut)]
                let mut v = eps_mine.clone();
                #[cfg(any(test, feature = "ideal"))]
                p.cheat.on_input_to(j, &mut v);
                F::write_vec(&v)
            })
        })
        .collect();
    let got = p.net.exchange(msgs).await?;
    let mut eps: Vec<Vec<F>> = vec![Vec::new(); n];
    for (j, g) in got.into_iter().enumerate() {
        eps[j] = if j == me {
            eps_mine.clone()
        } else {
            let g = g.ok_or(SpdzError::Malformed { peer: j, what: "input broadcast" })?;
            crate::net::decode_elems(j, &g, masks_used[j].len(), "input broadcast")?
        };
        p.net.absorb_elems(b"input", &eps[j]);
    }
    let mut next = vec![0usize; n];
    for (i, input) in program.inputs.iter().enumerate() {
        let j = input.owner;
        values[i] = masks_used[j][next[j]].add_const(eps[j][next[j]], me, delta);
        next[j] += 1;
    }
    // Levels.
    let mut level = vec![0u32; n_in + program.instrs.len()];
    let mut max_level = 0;
    for (i, ins) in program.instrs.iter().enumerate() {
        let l = ins.operands().iter().map(|o| level[*o as usize]).max().unwrap_or(0);
        let l = if ins.is_interactive() { l + 1 } else { l };
        level[n_in + i] = l;
        max_level = max_level.max(l);
    }
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); max_level as usize + 1];
    for i in 0..program.instrs.len() {
        by_level[level[n_in + i] as usize].push(i);
    }
    let total = program.instrs.len();
    let mut done = 0;
    let field = |c: &[u8; 16]| F::from_bytes(*c).expect("validated at decode");
    for instrs in &by_level {
        let mut eng = Engine::new(p);
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
            let (z, l, e) = eng.wave(&muls, &lts, &eqs).await?;
            for ((i, add), z) in mul_at.into_iter().zip(z) {
                values[n_in + i] = match add {
                    Some(b) => z + b,
                    None => z,
                };
            }
            for ((i, negate), l) in lt_at.into_iter().zip(l) {
                values[n_in + i] = if negate { Share::constant(F::ONE, me, delta) - l } else { l };
            }
            for (i, e) in eq_at.into_iter().zip(e) {
                values[n_in + i] = e;
            }
        }
        let opened = core::mem::take(&mut eng.opened);
        drop(eng);
        p_log(p, opened);
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
    // Check everything opened so far before any output is opened (P5).
    let log = core::mem::take(&mut p.online_log);
    let mut eng = Engine::new(p);
    eng.opened = log;
    eng.check(coin_check, "online phase").await?;
    // Open the outputs: to everyone, or y + r_P to each recipient P.
    let mut to_open = Vec::new();
    let mut plan = Vec::new();
    for o in &program.outputs {
        let v = values[o.value as usize];
        match &o.recipients {
            None => {
                plan.push((None, to_open.len()));
                to_open.push(v);
            }
            Some(rs) => {
                for &r in rs {
                    let (sh, known) = eng.p.store.masks[r].pop_front().ok_or_else(|| exhausted("output masks"))?;
                    plan.push((Some((r, known)), to_open.len()));
                    to_open.push(v + sh);
                }
            }
        }
    }
    let opened = eng.open(&to_open).await?;
    eng.check(coin_out, "output").await?;
    drop(eng);
    let mut out = Vec::with_capacity(program.outputs.len());
    let mut it = plan.into_iter();
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
    Ok(out)
}

fn p_log<F: Field, C: Channel>(p: &mut Party<F, C>, opened: Vec<(F, F)>) {
    p.online_log.extend(opened);
}
