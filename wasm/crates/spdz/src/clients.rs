//! Inputs from external clients: parties that run no preprocessing, hold no MAC key share and no
//! share of anything, and only want to give inputs to a computation that a few MASCOT parties
//! (the "servers") run for them.
//!
//! **Protocol** (Damgård, Damgård, Nielsen, Nordholt, Toft, "Confidential Benchmarking based on
//! Multiparty Computation", FC 2016: input through a Beaver triple whose product the client
//! checks; the method MP-SPDZ's external clients use too):
//!
//! 1. The servers take one checked (sacrificed) triple ([[a]], [[b]], [[c]]), c = a·b, per mask
//!    the client needs ([`Party::client_masks`]; every server calls it with the same count in the
//!    same order, so the masks get the same ids everywhere). Each server sends the client its
//!    value shares a_i, b_i, c_i (not its MAC shares) over a private channel, and keeps [[a]].
//! 2. The client ([`client_masked_inputs`]) adds up every server's shares and checks c = a·b for
//!    every triple. A server that sends a_i + e instead of a_i moves the client's a to a + e, and
//!    would have to move c by e·b to pass, but it does not know b: the check catches it except
//!    with probability 1/|F| (likewise for b; a changed c alone always fails). Then it uses a as
//!    its mask: it sends ε = x − a to every server.
//! 3. The servers set [[x]] = [[a]] + ε (as for a party's input, [`Share::add_const`]) inside
//!    [`Party::run_with_clients`], after agreeing that they all hold the same ε (a hash of every
//!    ε goes into the run's opening broadcast, and the ε into the transcript that every MAC check
//!    compares). b and c are never used again: a triple whose b the client saw must not be
//!    multiplied with.
//!
//! An integer input of k bits takes k masks, one per bit (lowest first, two's complement for
//! signed). Its bits are range-checked per client, so that a malicious client is refused instead
//! of aborting the run for everyone: the servers square every client bit (Beaver), open a coin ρ
//! only then, and open z_c = Σ_j ρ_j (b_j² − b_j) over all bits of all inputs of client c
//! ([`ClientInput::client`]); everything opened so far, the z_c included, is MAC-checked before
//! anything is decided. A client with z_c ≠ 0 is refused: every input of it counts as 0 and its
//! masks are consumed anyway ([`Party::run_with_clients`] returns the refused ids). An honest
//! client's z_c is 0 (it reveals nothing); a server that shifts an opening to frame an honest
//! client fails the MAC check (`MAC_CHECK_FAILED`, the run aborts), never causes a refusal. A
//! client whose bits are not all 0/1 gets z_c ≠ 0 except with probability 1/|F|. A field input
//! takes one mask.
//!
//! **What it guarantees.** Against any set of corrupt servers short of all of them (and any
//! corrupt clients): an honest client's input stays hidden (a is uniform and the honest servers'
//! shares of it are never revealed), and either the computation uses exactly the x the client
//! meant or the client refuses to send (a changed share) or the run aborts (a changed ε or mask:
//! the MAC checks). The client learns nothing but a, which it chose to use as a one-time pad.
//! The shares must travel over a channel only the client can read: whoever sees every server's
//! shares knows a and so x.
//!
//! **Each mask is used once.** Masks are held under ids until a run consumes them or
//! [`Party::drop_client_masks`] forgets them (a client that went away); an id is never handed out
//! twice (a per-party counter), and a consumed or dropped mask cannot be used again.

use crate::error::SpdzError;
use crate::field::Field;
use crate::online::input_digits;
use crate::party::Party;
use crate::program::{Kind, Program, MAX_PARTIES};
use crate::share::{Share, Triple};
use crate::wipe::{wipe, Wiping};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use subtle::Choice;
use webmpc_core::channel::Channel;

/// Most client masks one server holds at once (handed out, neither used nor dropped): 2^20, so
/// one [`Party::client_masks`] answer is at most 48 MiB, under the 64 MiB the JavaScript
/// transports accept.
pub const MAX_CLIENT_MASKS: usize = 1 << 20;
/// Bytes per client mask in a [`Party::client_masks`] answer: a_i, b_i, c_i.
pub const CLIENT_SHARE_BYTES: usize = 48;
/// Largest client mask id (ids stay safe integers in JavaScript).
const MAX_ID: u64 = (1 << 53) - 1;

/// One client input of a run: the masks it used (ids `first_mask ..`) and the client's
/// ε = x − a, one per mask (16 bytes each, canonical field elements), in the order
/// [`client_masked_inputs`] returned them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInput {
    /// The client it belongs to (several inputs may belong to one client; a client whose integer
    /// input is out of range is refused with all its inputs).
    pub client: u32,
    /// The id of its first mask (as returned by [`Party::client_masks`], plus an offset if one
    /// call served several inputs).
    pub first_mask: u64,
    /// ε per mask: one for a field input, one per bit for an integer input.
    pub masked: Vec<[u8; 16]>,
}

impl ClientInput {
    /// One [`ClientInput`] per input of `kinds` from a client's ε (`masked`, as
    /// [`client_masked_inputs`] returned it) when the inputs used consecutive masks from
    /// `first_mask` on (one [`Party::client_masks`] call for all of them), all of `client`.
    pub fn split(client: u32, first_mask: u64, kinds: &[Kind], masked: &[u8]) -> Result<Vec<ClientInput>, SpdzError> {
        let masks = kinds.iter().try_fold(0usize, |acc, k| acc.checked_add(k.input_masks()));
        if masks.and_then(|m| m.checked_mul(16)) != Some(masked.len()) {
            return Err(SpdzError::InvalidArgument("masked values do not match the input kinds (16 bytes per mask)".into()));
        }
        let mut it = masked.chunks_exact(16).map(|c| <[u8; 16]>::try_from(c).expect("16 bytes"));
        let mut at = first_mask;
        let mut out = Vec::with_capacity(kinds.len());
        for k in kinds {
            let m = k.input_masks();
            out.push(ClientInput { client, first_mask: at, masked: it.by_ref().take(m).collect() });
            at = at.saturating_add(m as u64);
        }
        Ok(out)
    }
}

/// The masks of one [`Party::client_masks`] call. A used mask is wiped in place and marked dead,
/// so no copy of it lingers in a moved map node.
struct Batch<F: Field> {
    masks: Wiping<Share<F>>,
    live: Vec<bool>,
    left: usize,
}

/// The client masks a party holds, by id, and the next id to hand out.
pub struct ClientMasks<F: Field> {
    next: u64,
    held: usize,
    /// Keyed by the batch's first id.
    batches: BTreeMap<u64, Batch<F>>,
}

impl<F: Field> Default for ClientMasks<F> {
    fn default() -> Self {
        ClientMasks { next: 0, held: 0, batches: BTreeMap::new() }
    }
}

impl<F: Field> ClientMasks<F> {
    /// The next id to be handed out (every server's must agree).
    pub(crate) fn next_id(&self) -> u64 {
        self.next
    }

    /// How many masks are held.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    fn locate(&self, id: u64) -> Option<(u64, usize)> {
        let (&first, b) = self.batches.range(..=id).next_back()?;
        let at = usize::try_from(id - first).ok()?;
        (at < b.live.len() && b.live[at]).then_some((first, at))
    }

    /// Whether mask `id` is held.
    pub(crate) fn has(&self, id: u64) -> bool {
        self.locate(id).is_some()
    }

    /// Removes mask `id`, returning it (the caller wipes it).
    pub(crate) fn take(&mut self, id: u64) -> Option<Share<F>> {
        let (first, at) = self.locate(id)?;
        let b = self.batches.get_mut(&first).expect("located");
        let s = b.masks[at];
        wipe(&mut b.masks[at..at + 1]);
        b.live[at] = false;
        b.left -= 1;
        self.held -= 1;
        if b.left == 0 {
            // Dropping the batch wipes it.
            self.batches.remove(&first);
        }
        Some(s)
    }

    fn add(&mut self, masks: Vec<Share<F>>) -> u64 {
        let first = self.next;
        let n = masks.len();
        if n > 0 {
            self.batches.insert(first, Batch { masks: Wiping(masks), live: vec![true; n], left: n });
        }
        self.next += n as u64;
        self.held += n;
        first
    }

    /// Forgets every held mask with an id in `first .. first + count`.
    fn forget(&mut self, first: u64, count: usize) {
        let end = first.saturating_add(count as u64);
        let ids: Vec<u64> = self
            .batches
            .range(..end)
            .flat_map(|(&f, b)| {
                (0..b.live.len()).filter(|&i| b.live[i]).map(move |i| f + i as u64).filter(|&id| id >= first && id < end)
            })
            .collect();
        for id in ids {
            if let Some(mut s) = self.take(id) {
                wipe(core::slice::from_mut(&mut s));
            }
        }
    }

    /// Wipes and forgets every held mask (the counter stays).
    pub(crate) fn wipe(&mut self) {
        self.batches.clear();
        self.held = 0;
    }
}

impl<F: Field, C: Channel> Party<F, C> {
    /// Hands out `count` client masks: takes `count` triples from the store (generating the
    /// shortfall first, which needs every server), keeps each [[a]] under the ids
    /// `first .. first + count`, and returns `(first, shares)` with this server's value shares
    /// a_i ‖ b_i ‖ c_i per mask ([`CLIENT_SHARE_BYTES`] each, each element 16 bytes little-endian)
    /// for the client, who passes every server's bytes to [`client_masked_inputs`]. Secret: send
    /// them to the client over a private channel, and wipe them.
    ///
    /// Every server must call it with the same counts in the same order (ids come from a
    /// per-party counter, triples from the front of the store); [`Party::run_with_clients`] checks
    /// that the counters agree. Refused (`INVALID_ARGUMENT`, nothing consumed) when more than
    /// [`MAX_CLIENT_MASKS`] masks would be held.
    pub async fn client_masks(&mut self, count: usize) -> Result<(u64, Vec<u8>), SpdzError> {
        if self.poisoned {
            return Err(SpdzError::Poisoned);
        }
        let held = self.clients.held();
        if count > MAX_CLIENT_MASKS - held {
            return Err(SpdzError::InvalidArgument(format!(
                "at most {MAX_CLIENT_MASKS} client masks may be held at once ({held} held, {count} asked for)"
            )));
        }
        if self.clients.next_id() + count as u64 > MAX_ID {
            return Err(SpdzError::InvalidArgument("client mask ids exhausted: start a new session".into()));
        }
        let have = self.store.triples.len();
        if have < count {
            self.preprocess_triples(count - have, |_, _| {}).await?;
        }
        let triples: Wiping<Triple<F>> = Wiping(self.store.triples.drain(..count).collect());
        let mut out = Vec::with_capacity(CLIENT_SHARE_BYTES * count);
        for t in triples.iter() {
            for s in [t.a, t.b, t.c] {
                out.extend_from_slice(&s.value.to_bytes());
            }
        }
        let first = self.clients.add(triples.iter().map(|t| t.a).collect());
        Ok((first, out))
    }

    /// Forgets the held client masks with ids in `first .. first + count` (a client that went
    /// away): they are wiped and can never be used. Ids not held are ignored. Every server
    /// should drop the same masks.
    pub fn drop_client_masks(&mut self, first: u64, count: usize) {
        self.clients.forget(first, count);
    }

    /// How many client masks this party holds (handed out, neither used nor dropped).
    pub fn client_masks_held(&self) -> usize {
        self.clients.held()
    }
}

/// The client inputs of one run, checked against the program and the masks held; nothing taken
/// yet.
pub(crate) struct Prepared<F> {
    /// Mask ids, flattened in program order.
    pub ids: Vec<u64>,
    /// ε per mask, in the same order.
    pub eps: Vec<F>,
    /// The client of each client input, in program order.
    pub owners: Vec<u32>,
    /// SHA-256 of every (first mask, ε): what the servers compare before the run.
    pub digest: [u8; 32],
}

/// Checks `clients` against `program`'s client inputs and the masks `held`, before any message:
/// one entry per client input, as many ε as the input takes masks, each ε canonical, every mask
/// held and none named twice.
pub(crate) fn prepare<F: Field>(
    program: &Program,
    clients: &[ClientInput],
    held: &ClientMasks<F>,
) -> Result<Prepared<F>, SpdzError> {
    let kinds = program.client_inputs();
    if kinds.len() != clients.len() {
        return Err(SpdzError::InvalidArgument(format!(
            "{} client inputs given; the program has {}",
            clients.len(),
            kinds.len()
        )));
    }
    let mut h = Sha256::new();
    h.update(b"webmpc/spdz/client-inputs");
    h.update((clients.len() as u64).to_le_bytes());
    let mut ids = Vec::new();
    let mut eps = Vec::new();
    for (i, (k, c)) in kinds.iter().zip(clients).enumerate() {
        let m = k.input_masks();
        if c.masked.len() != m {
            return Err(SpdzError::InvalidArgument(format!(
                "client input {i} has {} masked values; its kind takes {m}",
                c.masked.len()
            )));
        }
        let ok = c.first_mask.checked_add(m as u64).is_some_and(|end| (c.first_mask..end).all(|id| held.has(id)));
        if !ok {
            return Err(SpdzError::InvalidArgument(format!(
                "client input {i}: client masks {} .. {} are not all held (never handed out, used or dropped)",
                c.first_mask,
                c.first_mask.saturating_add(m as u64)
            )));
        }
        h.update(c.first_mask.to_le_bytes());
        h.update(c.client.to_le_bytes());
        for e in &c.masked {
            eps.push(F::from_bytes(*e).ok_or_else(|| {
                SpdzError::InvalidArgument(format!("client input {i}: a masked value is not a canonical field element"))
            })?);
            h.update(e);
        }
        ids.extend(c.first_mask..c.first_mask + m as u64);
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(SpdzError::InvalidArgument("two client inputs name the same client mask".into()));
    }
    Ok(Prepared { ids, eps, owners: clients.iter().map(|c| c.client).collect(), digest: h.finalize().into() })
}

/// The client's side: checks the servers' client masks and masks its inputs with them. Pure: no
/// channel; the caller sends the result to every server.
///
/// `server_shares[i]` is server i's bytes from [`Party::client_masks`] (every server's, each
/// [`CLIENT_SHARE_BYTES`]·Σ masks long, where an input of kind `kinds[j]` takes
/// [`Kind::input_masks`] masks, in order); `values[j]` is input j (16 little-endian bytes, as
/// for a party's input, see [`crate::online::encode_input`]). Returns ε = x − a per mask (16 bytes
/// each, in order): the `masked` of the run's [`ClientInput`]s.
///
/// Errors: a value out of range for its kind, a kind the field does not allow, or shares of the
/// wrong length, `INVALID_ARGUMENT`; a triple with c ≠ a·b (or an element that does not decode),
/// [`SpdzError::ClientMasksInvalid`] (`CHEATING_DETECTED`): some server changed what it sent;
/// send nothing. Every triple is checked before the result is decided (no early exit).
pub fn client_masked_inputs<F: Field>(
    server_shares: &[&[u8]],
    kinds: &[Kind],
    values: &[[u8; 16]],
) -> Result<Vec<u8>, SpdzError> {
    let bad = |m: String| SpdzError::InvalidArgument(m);
    if kinds.len() != values.len() {
        return Err(bad(format!("{} values for {} input kinds", values.len(), kinds.len())));
    }
    if server_shares.is_empty() || server_shares.len() > MAX_PARTIES {
        return Err(bad(format!("client masks from 1 ..= {MAX_PARTIES} servers are needed (got {})", server_shares.len())));
    }
    if let Some(j) = kinds.iter().position(|k| !k.is_valid_input(F::KIND)) {
        return Err(bad(format!("input {j}: not an input kind of this field")));
    }
    let masks = kinds.iter().try_fold(0usize, |acc, k| acc.checked_add(k.input_masks())).unwrap_or(usize::MAX);
    if masks > MAX_CLIENT_MASKS {
        return Err(bad(format!("the inputs take {masks} client masks; at most {MAX_CLIENT_MASKS} at once")));
    }
    if let Some(i) = server_shares.iter().position(|s| s.len() != CLIENT_SHARE_BYTES * masks) {
        return Err(bad(format!(
            "server {i}'s client-mask shares have {} bytes; the inputs take {}",
            server_shares[i].len(),
            CLIENT_SHARE_BYTES * masks
        )));
    }
    // The client's own values first: a value out of range is the caller's mistake.
    let mut digits = Wiping(Vec::with_capacity(masks));
    for (k, v) in kinds.iter().zip(values) {
        let mut d = input_digits::<F>(*k, *v)?;
        digits.extend_from_slice(&d);
        wipe(&mut d);
    }
    // Reconstruct every a, b, c and fold all the checks into one flag.
    let mut ok = Choice::from(1u8);
    let mut a = Wiping(vec![F::ZERO; masks]);
    for (t, a_t) in a.iter_mut().enumerate() {
        let mut abc = [F::ZERO; 3];
        for s in server_shares {
            for (j, acc) in abc.iter_mut().enumerate() {
                let at = CLIENT_SHARE_BYTES * t + 16 * j;
                let x = F::from_bytes(s[at..at + 16].try_into().expect("16 bytes"));
                ok &= Choice::from(x.is_some() as u8);
                *acc += x.unwrap_or(F::ZERO);
            }
        }
        ok &= (abc[0] * abc[1]).ct_eq(&abc[2]);
        *a_t = abc[0];
        wipe(&mut abc);
    }
    if !bool::from(ok) {
        return Err(SpdzError::ClientMasksInvalid);
    }
    let mut out = Vec::with_capacity(16 * masks);
    for (d, a) in digits.iter().zip(a.iter()) {
        out.extend_from_slice(&(*d - *a).to_bytes());
    }
    Ok(out)
}

/// The wire form of a run's client inputs (the MASCOT binding's `runWithClients`): for each
/// client input in program order, its first mask id (u64 little-endian), its client id (u32
/// little-endian), then its ε (16 bytes per mask; how many follows from the input's kind).
pub fn encode_client_inputs(clients: &[ClientInput]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in clients {
        out.extend_from_slice(&c.first_mask.to_le_bytes());
        out.extend_from_slice(&c.client.to_le_bytes());
        for e in &c.masked {
            out.extend_from_slice(e);
        }
    }
    out
}

/// Reads [`encode_client_inputs`]'s form for `program` (`INVALID_ARGUMENT` unless the length is
/// exactly what the program's client inputs take).
pub fn decode_client_inputs(program: &Program, bytes: &[u8]) -> Result<Vec<ClientInput>, SpdzError> {
    let kinds = program.client_inputs();
    let need = kinds.iter().try_fold(0usize, |acc, k| acc.checked_add(12 + 16 * k.input_masks()));
    if need != Some(bytes.len()) {
        let need = need.map_or("more than memory holds".to_string(), |n| n.to_string());
        return Err(SpdzError::InvalidArgument(format!(
            "client inputs are {} bytes; the program's {} client inputs take {need} (8-byte first mask id, 4-byte client id, then 16 bytes per mask)",
            bytes.len(),
            kinds.len()
        )));
    }
    let mut at = 0;
    let mut out = Vec::with_capacity(kinds.len());
    for k in kinds {
        let first_mask = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        at += 8;
        let client = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        at += 4;
        let masked = bytes[at..at + 16 * k.input_masks()].chunks_exact(16).map(|c| c.try_into().expect("16 bytes")).collect();
        at += 16 * k.input_masks();
        out.push(ClientInput { client, first_mask, masked });
    }
    Ok(out)
}
