//! The job header: what the garbler, the evaluator and the enclave must agree on before anything
//! secret moves. Both parties send it to each other (and compare) and to the enclave (which
//! compares the two copies, the paper's `assert f1 = f2` / `ℓ1 = ℓ2`); it is the associated data
//! of the sealed seed, so a seed sealed for one job cannot be replayed into another.
//!
//! Encoding (little-endian): `"WTJ1"`, kind (1 = ROT, 2 = GC), mode (0 = semi-honest,
//! 1 = malicious), two zero bytes, the 32-byte session id, then for ROT the count (u64), for GC
//! the circuit's content hash (32 bytes), the number of input values (u32) and one owner byte per
//! value (0 = garbler, 1 = evaluator).

use crate::bytes::Reader;
use crate::TeleportError;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};

const MAGIC: [u8; 4] = *b"WTJ1";
/// Most ROTs one job may ask for (the per-OT index must fit the tweak space).
pub const MAX_ROTS: u64 = 1 << 48;

/// Security setting of a run (Lu et al.'s [S] and [M]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every entity follows the protocol; one may be curious.
    SemiHonest,
    /// One entity (enclave, garbler or evaluator) may deviate; the evaluator checks σ/τ and aborts.
    Malicious,
}

/// Who supplies an input value of a GC job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The garbler (P1): x1.
    Garbler,
    /// The evaluator (P2): x2, split as x2⁰ (to the enclave) ⊕ x2¹ (to the garbler).
    Evaluator,
}

/// What a job computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    /// `count` random OTs, the garbler as sender and the evaluator as receiver.
    Rot {
        /// Number of ROTs.
        count: u64,
    },
    /// One garbled-circuit evaluation of the circuit with this content hash.
    Gc {
        /// SHA-256 of the circuit's binary form (`webmpc_circuit::Circuit::content_hash`).
        circuit_hash: [u8; 32],
        /// The owner of each input value, in order.
        owners: Vec<Owner>,
    },
}

/// A job: session, mode and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobHeader {
    /// Session id, unique per job between these parties (it seeds every tweak).
    pub sid: [u8; 32],
    /// Semi-honest or malicious.
    pub mode: Mode,
    /// ROT or GC.
    pub kind: JobKind,
}

impl JobHeader {
    /// The canonical encoding (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(80);
        v.extend_from_slice(&MAGIC);
        v.push(match self.kind {
            JobKind::Rot { .. } => 1,
            JobKind::Gc { .. } => 2,
        });
        v.push(match self.mode {
            Mode::SemiHonest => 0,
            Mode::Malicious => 1,
        });
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&self.sid);
        match &self.kind {
            JobKind::Rot { count } => v.extend_from_slice(&count.to_le_bytes()),
            JobKind::Gc { circuit_hash, owners } => {
                v.extend_from_slice(circuit_hash);
                v.extend_from_slice(&(owners.len() as u32).to_le_bytes());
                v.extend(owners.iter().map(|o| matches!(o, Owner::Evaluator) as u8));
            }
        }
        v
    }

    /// Decodes an encoding; everything must be read and canonical.
    pub fn decode(bytes: &[u8]) -> Result<JobHeader, TeleportError> {
        let what = "job header";
        let bad = TeleportError::Malformed(what);
        let mut r = Reader::new(bytes, what);
        if r.array::<4>()? != MAGIC {
            return Err(bad);
        }
        let kind = r.u8()?;
        let mode = match r.u8()? {
            0 => Mode::SemiHonest,
            1 => Mode::Malicious,
            _ => return Err(bad),
        };
        if r.array::<2>()? != [0, 0] {
            return Err(bad);
        }
        let sid = r.array::<32>()?;
        let kind = match kind {
            1 => {
                let count = r.u64()?;
                if count > MAX_ROTS {
                    return Err(TeleportError::TooLarge { what: "ROT count", got: count, limit: MAX_ROTS });
                }
                JobKind::Rot { count }
            }
            2 => {
                let circuit_hash = r.array::<32>()?;
                let n = r.u32()? as usize;
                let owners = r
                    .take(n)?
                    .iter()
                    .map(|b| match b {
                        0 => Ok(Owner::Garbler),
                        1 => Ok(Owner::Evaluator),
                        _ => Err(TeleportError::Malformed(what)),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                JobKind::Gc { circuit_hash, owners }
            }
            _ => return Err(bad),
        };
        r.finish()?;
        Ok(JobHeader { sid, mode, kind })
    }

    /// The 64-bit tweak tag of this job's hashes: the first 8 bytes of
    /// SHA-256(label ‖ sid), with a label per job kind so ROT and GC tweaks never meet.
    pub fn tag(&self) -> u64 {
        let label: &[u8] = match self.kind {
            JobKind::Rot { .. } => b"webmpc/teleport/rot-tag/v1",
            JobKind::Gc { .. } => b"webmpc/teleport/gc-tag/v1",
        };
        let h = Sha256::new().chain_update(label).chain_update(self.sid).finalize();
        u64::from_le_bytes(h[..8].try_into().expect("8 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_reject_noise() {
        for h in [
            JobHeader { sid: [7; 32], mode: Mode::Malicious, kind: JobKind::Rot { count: 1000 } },
            JobHeader {
                sid: [1; 32],
                mode: Mode::SemiHonest,
                kind: JobKind::Gc { circuit_hash: [9; 32], owners: alloc::vec![Owner::Garbler, Owner::Evaluator] },
            },
        ] {
            let enc = h.encode();
            assert_eq!(JobHeader::decode(&enc).unwrap(), h);
            let mut longer = enc.clone();
            longer.push(0);
            assert!(JobHeader::decode(&longer).is_err());
            assert!(JobHeader::decode(&enc[..enc.len() - 1]).is_err());
        }
        let mut bad = JobHeader { sid: [0; 32], mode: Mode::Malicious, kind: JobKind::Rot { count: 1 } }.encode();
        bad[5] = 2;
        assert!(JobHeader::decode(&bad).is_err());
    }

    #[test]
    fn tags_differ_by_session_and_kind() {
        let a = JobHeader { sid: [1; 32], mode: Mode::Malicious, kind: JobKind::Rot { count: 1 } };
        let mut b = a.clone();
        b.sid[0] = 2;
        let c = JobHeader { kind: JobKind::Gc { circuit_hash: [0; 32], owners: Vec::new() }, ..a.clone() };
        assert_ne!(a.tag(), b.tag());
        assert_ne!(a.tag(), c.tag());
    }
}
