//! Inputs from external clients: parties that run no preprocessing and hold no key, and only give
//! inputs to a circuit that a few authgc parties (the "servers") garble and evaluate for them.
//!
//! # The protocol
//!
//! A client's input is an input value of the circuit whose owner is [`CLIENT`]. Its wires get
//! masks ⟨λ⟩ like any input wire; for a party's input, WRK17 (Wang, Ranellucci, Katz,
//! "Global-Scale Secure Multiparty Computation", CCS 2017: its input processing) opens λ to the
//! owner with MACs it checks under its own keys. A client has no keys, so the opening is checked
//! differently: by a random linear test whose coins the client draws *after* every server has sent
//! its shares, and whose answer the servers open among themselves under MACs. The test is the
//! random-linear-combination check that authenticated secret sharing uses throughout (the batch
//! MAC check of SPDZ, Damgård et al., "Practical Covertly Secure MPC for Dishonest Majority",
//! ESORICS 2013; the aBit consistency check of WRK17's F_Pre, after Keller–Orsini–Scholl,
//! CRYPTO 2015), with two differences: the coins come from the party it protects, and a spare
//! random mask μ pads the answer so that opening it reveals nothing of λ. The role it plays is
//! that of the client's triple check in Damgård et al., "Confidential Benchmarking based on
//! Multiparty Computation" (FC 2016), which MASCOT's client inputs use (`webmpc_spdz::clients`);
//! the construction and its argument below are this crate's.
//!
//! 1. [`prepare`](super::AuthGcParty::prepare) gives every client value of width w, besides its
//!    w wire masks, [`CLIENT_CHECK_BITS`] (σ) more random authenticated bits ⟨μ⟩.
//! 2. Each server sends the client its share bits of λ and μ
//!    ([`client_mask_shares`](super::AuthGcParty::client_mask_shares); bits only, no tags),
//!    over a channel only the client can read. The client XORs them ([`ClientMasks::combine`]).
//! 3. The client draws a random σ × w bit matrix R, computes its view v = R·λ ⊕ μ of the
//!    servers' masks, and sends every server x̂ = x ⊕ λ, R and v ([`ClientMasks::message`]). The
//!    caller makes sure that every server holds the same message before the run (the SDK: a
//!    signature by the client and an exchange of digests among the servers; a client that showed
//!    servers different messages is dropped there). The run binds a digest of every client
//!    message into its agreement, so a server that passes another aborts the run.
//! 4. In the run ([`run_with_clients`](super::AuthGcParty::run_with_clients)) the servers open
//!    ⟨R·λ ⊕ μ⟩ to one another, MAC-checked, in the flight that opens the parties' input masks.
//!    A client whose v differs is **refused**; every honest server sees the same opened values and
//!    the same v, so all of them refuse the same clients.
//! 5. A refused or absent client's value is replaced: its bit 0 (the **presence bit**) becomes 0
//!    (its mask is opened to the servers, a second flight only if some client was refused) and its
//!    other bits are arbitrary. A circuit over client values must therefore treat bit 0 of each
//!    as "this client's input counts" and ignore the value's other bits when it is 0; an honest
//!    client sets it to 1.
//!
//! # Why a server cannot change a client's input
//!
//! A corrupt server that sends the client its share of λ and μ flipped by (δ, ε) moves the
//! client's view to λ ⊕ δ and μ ⊕ ε, so the client sends x̂ = x ⊕ λ ⊕ δ: the circuit would see
//! x ⊕ δ. The server fixes δ and ε before R exists (the client draws R only after it has every
//! server's shares). The client's view is then v = R·λ ⊕ μ ⊕ (R·δ ⊕ ε), while the MAC-checked
//! opening gives R·λ ⊕ μ; for δ ≠ 0, R·δ is uniform over σ bits, so the two agree with
//! probability 2^-σ and the client is refused otherwise. Changing x̂, R or v on the way is not
//! possible over the client's authenticated channel to each server, and a server that runs with
//! another message than the others aborts the run at the agreement (step 3; the client's
//! signature is the evidence the servers show one another); opening anything else than R·λ ⊕ μ
//! fails the MAC check (abort). What the corrupt servers can do: make the run abort (always), or make the
//! client be refused (it learns so from the outcome) — never make the circuit take another value
//! for it.
//!
//! # Why the client's input stays hidden
//!
//! The servers see x̂ = x ⊕ λ, R, v and the opened R·λ ⊕ μ: as long as one server is honest, its
//! shares of λ and μ are uniform and never revealed, so x̂ is a one-time pad of x and μ pads
//! R·λ. A refused client's λ is never opened except bit 0, its presence bit, which it sets to 1
//! whatever its input. The client learns λ and μ, its own pad.
//!
//! **The circuit must gate a client's value by its presence bit, for privacy too.** A refused
//! client's other bits enter the circuit as λ_i (x̂ set to 0), and λ_i = x̂_i ⊕ x_i ⊕ δ_i with x̂_i
//! public and δ_i known to the server that changed them: its input, up to a known offset. The
//! same holds for a client whose message some server saw but the run dropped. A circuit that lets
//! those bits reach an output when the presence bit is 0 leaks them; one that ANDs every bit with
//! the presence bit (w ANDs per client) does not.
//!
//! **What the outputs say about each input.** Any one server can leave chosen clients out (refused
//! or dropped: they learn it, the others do not), so the outputs may be over fewer inputs than the
//! clients expect; the SDK tells every client how many inputs counted.
//!
//! # What a client can do
//!
//! Choose its input (any w-bit value: a client value is a w-bit string by construction, so a range
//! check is the width itself), send a wrong v (it is refused) or none (absent). It cannot change
//! another client's input or any server's: it only ever sends its own message.
//!
//! **Cost.** σ + w random authenticated masks per client value (no AND triple) and σ opened bits;
//! the check adds no flight to an honest run.

use crate::share::{pack_bits, unpack_bits, AuthShares};
use crate::AuthGcError;
use sha2::{Digest, Sha256};
use webmpc_core::channel::PartyId;

/// The owner of an input value that an external client gives (in [`Roles::owners`](super::Roles)).
pub const CLIENT: PartyId = usize::MAX;

/// σ, the test's rows: a server that changes a client's mask passes with probability 2^-σ.
pub const CLIENT_CHECK_BITS: usize = 40;

/// Most bits one client value may have (its message is (σ + 1)·w/8 + σ/8 bytes: 20,997 at this
/// bound).
pub const MAX_CLIENT_VALUE_BITS: usize = 4096;

fn invalid(msg: impl Into<String>) -> AuthGcError {
    AuthGcError::InvalidArgument(msg.into())
}

/// Bytes of a server's mask shares for a client value of `width` bits.
pub fn client_share_bytes(width: usize) -> usize {
    (width + CLIENT_CHECK_BITS).div_ceil(8)
}

/// What a client sends every server for one client value (step 3 of the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientMessage {
    /// x̂ = x ⊕ λ, w bits.
    pub masked: Vec<bool>,
    /// R, σ rows of w bits (row k is `challenge[k * w .. (k + 1) * w]`).
    pub challenge: Vec<bool>,
    /// v = R·λ ⊕ μ as the client sees it, σ bits.
    pub view: Vec<bool>,
}

impl ClientMessage {
    /// Bytes of the encoding for a value of `width` bits.
    pub fn encoded_len(width: usize) -> usize {
        width.div_ceil(8) * (1 + CLIENT_CHECK_BITS) + CLIENT_CHECK_BITS.div_ceil(8)
    }

    /// The fixed encoding: x̂ packed, then each row of R packed, then v packed (each packed
    /// little-endian bit first, padding bits zero).
    pub fn encode(&self) -> Vec<u8> {
        let w = self.masked.len();
        let mut out = pack_bits(&self.masked);
        for row in self.challenge.chunks(w.max(1)) {
            out.extend_from_slice(&pack_bits(row));
        }
        out.extend_from_slice(&pack_bits(&self.view));
        out
    }

    /// Decodes a message for a value of `width` bits; refuses a wrong length or nonzero padding.
    pub fn decode(bytes: &[u8], width: usize) -> Result<ClientMessage, AuthGcError> {
        if width == 0 || width > MAX_CLIENT_VALUE_BITS {
            return Err(invalid(format!("a client value has 1 to {MAX_CLIENT_VALUE_BITS} bits, not {width}")));
        }
        if bytes.len() != Self::encoded_len(width) {
            return Err(invalid(format!(
                "a client message for a {width}-bit value has {} bytes, not {}",
                bytes.len(),
                Self::encoded_len(width)
            )));
        }
        let row = width.div_ceil(8);
        let bad = || invalid("a client message has nonzero padding bits");
        let masked = unpack_bits(&bytes[..row], width).ok_or_else(bad)?;
        let mut challenge = Vec::with_capacity(width * CLIENT_CHECK_BITS);
        for k in 0..CLIENT_CHECK_BITS {
            let at = row * (1 + k);
            challenge.extend(unpack_bits(&bytes[at..at + row], width).ok_or_else(bad)?);
        }
        let view = unpack_bits(&bytes[row * (1 + CLIENT_CHECK_BITS)..], CLIENT_CHECK_BITS).ok_or_else(bad)?;
        Ok(ClientMessage { masked, challenge, view })
    }

    /// Decodes the client messages of a run, one per client value of `widths`, each behind a flag
    /// byte: 1, then the message ([`encode`](Self::encode)); 0 for a client that gave none.
    /// Refuses another flag, a truncated message and bytes left over.
    pub fn decode_all(bytes: &[u8], widths: &[usize]) -> Result<Vec<Option<ClientMessage>>, AuthGcError> {
        let truncated = || invalid("the client messages are truncated");
        let mut at = 0usize;
        let mut out = Vec::with_capacity(widths.len());
        for &w in widths {
            let flag = *bytes.get(at).ok_or_else(truncated)?;
            at += 1;
            out.push(match flag {
                0 => None,
                1 => {
                    let len = Self::encoded_len(w);
                    let m = Self::decode(bytes.get(at..at + len).ok_or_else(truncated)?, w)?;
                    at += len;
                    Some(m)
                }
                _ => return Err(invalid("a client message flag must be 0 or 1")),
            });
        }
        if at != bytes.len() {
            return Err(invalid("the client messages are longer than the circuit's client inputs"));
        }
        Ok(out)
    }

    fn check_shape(&self, width: usize) -> Result<(), AuthGcError> {
        if self.masked.len() != width || self.challenge.len() != width * CLIENT_CHECK_BITS || self.view.len() != CLIENT_CHECK_BITS {
            return Err(invalid(format!("a client message does not fit its {width}-bit input value")));
        }
        Ok(())
    }
}

/// A client's masks for one value, from every server's shares: λ (its one-time pad) and μ.
pub struct ClientMasks {
    lambda: Vec<bool>,
    mu: Vec<bool>,
}

impl Drop for ClientMasks {
    fn drop(&mut self) {
        self.lambda.iter_mut().chain(self.mu.iter_mut()).for_each(|b| *b = false);
    }
}

impl ClientMasks {
    /// XORs every server's shares ([`client_mask_shares`](super::AuthGcParty::client_mask_shares),
    /// all servers', any order) for a value of `width` bits.
    pub fn combine(width: usize, shares: &[&[u8]]) -> Result<ClientMasks, AuthGcError> {
        if width == 0 || width > MAX_CLIENT_VALUE_BITS {
            return Err(invalid(format!("a client value has 1 to {MAX_CLIENT_VALUE_BITS} bits, not {width}")));
        }
        if shares.len() < 2 {
            return Err(invalid("a client needs the mask shares of every server (two at least)"));
        }
        // Built in place, so that a refusal half-way wipes what was combined (Drop).
        let mut masks = ClientMasks { lambda: vec![false; width], mu: vec![false; CLIENT_CHECK_BITS] };
        for (s, bytes) in shares.iter().enumerate() {
            let mut bits = unpack_bits(bytes, width + CLIENT_CHECK_BITS)
                .filter(|_| bytes.len() == client_share_bytes(width))
                .ok_or_else(|| invalid(format!("server {s}'s mask shares do not decode for a {width}-bit value")))?;
            for (a, b) in masks.lambda.iter_mut().chain(masks.mu.iter_mut()).zip(&bits) {
                *a ^= b;
            }
            bits.iter_mut().for_each(|b| *b = false);
        }
        Ok(masks)
    }

    /// The message that gives `value` (w bits; bit 0 is the presence bit and must be 1 for the
    /// value to count), with a fresh challenge from the platform CSPRNG.
    pub fn message(&self, value: &[bool]) -> Result<ClientMessage, AuthGcError> {
        let w = self.lambda.len();
        if value.len() != w {
            return Err(invalid(format!("the value has {} bits; the input takes {w}", value.len())));
        }
        let bits = w * CLIENT_CHECK_BITS;
        let mut coins = vec![0u8; bits.div_ceil(8)];
        webmpc_core::random::fill(&mut coins).map_err(|e| invalid(format!("no randomness: {e}")))?;
        if bits % 8 != 0 {
            coins[bits / 8] &= (1 << (bits % 8)) - 1; // the padding bits unpack_bits refuses
        }
        let challenge = unpack_bits(&coins, bits).expect("padding cleared");
        let view = sketch(&challenge, &self.lambda, &self.mu);
        let masked = value.iter().zip(&self.lambda).map(|(x, l)| x ^ l).collect();
        Ok(ClientMessage { masked, challenge, view })
    }
}

/// R·λ ⊕ μ over GF(2): row k of `challenge` dotted with λ, plus μ_k.
fn sketch(challenge: &[bool], lambda: &[bool], mu: &[bool]) -> Vec<bool> {
    let w = lambda.len();
    mu.iter().enumerate().map(|(k, &m)| challenge[k * w..(k + 1) * w].iter().zip(lambda).fold(m, |acc, (&r, &l)| acc ^ (r & l))).collect()
}

/// The servers' shares of R·λ ⊕ μ for one client value (local: XORs of authenticated shares).
pub(super) fn sketch_shares(challenge: &[bool], lambda: &AuthShares, mu: &AuthShares) -> AuthShares {
    let w = lambda.len();
    let mut out = mu.clone();
    for k in 0..mu.len() {
        for i in (0..w).filter(|&i| challenge[k * w + i]) {
            out.xor_one(k, lambda, i);
        }
    }
    out
}

/// Checks every client message against its value's width; returns a digest of them all (the
/// run binds it into the agreement: servers that hold different messages abort there).
pub(super) fn messages_digest(widths: &[usize], clients: &[Option<ClientMessage>]) -> Result<[u8; 32], AuthGcError> {
    if widths.len() != clients.len() {
        return Err(invalid(format!("{} client messages given for {} client input values", clients.len(), widths.len())));
    }
    let mut h = Sha256::new();
    h.update(b"webmpc/authgc/client-messages/v1");
    for (&w, m) in widths.iter().zip(clients) {
        match m {
            None => h.update([0]),
            Some(m) => {
                m.check_shape(w)?;
                let bytes = m.encode();
                h.update([1]);
                h.update((bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
            }
        }
    }
    Ok(h.finalize().into())
}
