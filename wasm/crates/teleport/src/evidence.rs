//! Evidence: what an enclave shows the garbler before the garbler seals its seed, and the pinned
//! policy the garbler checks it against.
//!
//! An evidence frame (see [`crate::frames`]) carries a format byte, the enclave's X25519 public
//! key and the format's evidence bytes:
//!
//! * [`FORMAT_SIMULATED`] — the **simulation backend**: no hardware protection at all. The evidence
//!   is `"WSE1" ‖ measurement (32) ‖ enclave pk (32) ‖ simulated = 1 ‖ signer pk (32) ‖ Ed25519
//!   signature (64)` over everything before the signature, by a *software* key of the enclave
//!   program. It proves only which program binary (measurement = SHA-256 of it) claims to hold the
//!   key. Clients refuse it unless the policy sets `allow_simulated`.
//! * [`FORMAT_OPEN_ENCLAVE`] — an Open Enclave evidence blob from `oe_get_evidence`, whose custom
//!   claims are the report data `SHA-256("webmpc/teleport/report-data/v1" ‖ pk)`
//!   ([`crate::seal::report_data`]). Verifying it needs the Open Enclave verifier
//!   (`oe_verify_evidence`, host side); the policy supplies it as a callback returning the
//!   claims, and the policy then checks the measurement (MRENCLAVE / unique id) and the report data.

use crate::bytes::Reader;
use crate::{EvidenceRefusal, TeleportError};
use alloc::vec::Vec;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

/// Format byte of simulation-backend evidence.
pub const FORMAT_SIMULATED: u8 = 1;
/// Format byte of Open Enclave evidence.
pub const FORMAT_OPEN_ENCLAVE: u8 = 2;

const SIM_MAGIC: [u8; 4] = *b"WSE1";
const SIM_BODY: usize = 4 + 32 + 32 + 1 + 32;
/// Bytes of simulated evidence.
pub const SIM_LEN: usize = SIM_BODY + 64;

/// The software evidence key of the simulation backend. Anyone can run the program with any key:
/// this signature authenticates nothing beyond "the program that holds this key says so".
pub struct SimulatedSigner {
    key: SigningKey,
    measurement: [u8; 32],
}

impl SimulatedSigner {
    /// A signer with the Ed25519 seed `seed` for a program with `measurement`.
    pub fn new(seed: [u8; 32], measurement: [u8; 32]) -> Self {
        SimulatedSigner { key: SigningKey::from_bytes(&seed), measurement }
    }

    /// The signer's public key (clients may pin it).
    pub fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The evidence bytes for the enclave key `enclave_pk`.
    pub fn evidence(&self, enclave_pk: &[u8; 32]) -> Vec<u8> {
        let mut v = Vec::with_capacity(SIM_LEN);
        v.extend_from_slice(&SIM_MAGIC);
        v.extend_from_slice(&self.measurement);
        v.extend_from_slice(enclave_pk);
        v.push(1);
        v.extend_from_slice(&self.public());
        let sig = self.key.sign(&v);
        v.extend_from_slice(&sig.to_bytes());
        v
    }
}

/// What an Open Enclave verifier reports for verified evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OeClaims {
    /// The enclave's measurement (MRENCLAVE, `OE_CLAIM_UNIQUE_ID`).
    pub unique_id: [u8; 32],
    /// The custom claims the enclave bound (must be the report data of its key).
    pub report_data: [u8; 32],
}

/// An Open Enclave evidence verifier: `oe_verify_evidence` and claim extraction, or an error.
pub type OeVerifier<'a> = &'a dyn Fn(&[u8]) -> Result<OeClaims, TeleportError>;

/// The garbler's pinned policy.
#[derive(Clone, Copy, Default)]
pub struct Policy<'a> {
    /// Accept simulation-backend evidence (the SDK's `allowSimulatedEnclave: true`).
    pub allow_simulated: bool,
    /// The accepted measurements (at least one must match).
    pub measurements: &'a [[u8; 32]],
    /// For simulated evidence: if set, the accepted signer keys.
    pub simulation_signers: Option<&'a [[u8; 32]]>,
    /// For Open Enclave evidence: the verifier.
    pub oe_verifier: Option<OeVerifier<'a>>,
}

/// A decoded evidence frame payload: format, enclave key, evidence bytes.
pub(crate) fn encode_frame(format: u8, enclave_pk: &[u8; 32], evidence: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + 32 + 4 + evidence.len());
    v.push(format);
    v.extend_from_slice(enclave_pk);
    crate::bytes::put_prefixed(&mut v, evidence);
    v
}

/// Checks an evidence frame's payload against `policy`; returns the enclave's X25519 key.
pub fn verify(payload: &[u8], policy: &Policy<'_>) -> Result<[u8; 32], TeleportError> {
    let refuse = |r| TeleportError::EvidenceRefused(r);
    let mut r = Reader::new(payload, "evidence");
    let format = r.u8()?;
    let pk = r.array::<32>()?;
    let evidence = r.prefixed()?;
    r.finish()?;
    match format {
        FORMAT_SIMULATED => {
            if !policy.allow_simulated {
                return Err(refuse(EvidenceRefusal::SimulatedRefused));
            }
            if evidence.len() != SIM_LEN || evidence[..4] != SIM_MAGIC || evidence[68] != 1 {
                return Err(refuse(EvidenceRefusal::Invalid));
            }
            let (body, sig) = evidence.split_at(SIM_BODY);
            let signer: [u8; 32] = body[69..].try_into().expect("32 bytes");
            let key = VerifyingKey::from_bytes(&signer).map_err(|_| refuse(EvidenceRefusal::Invalid))?;
            let sig = Signature::from_bytes(sig.try_into().expect("64 bytes"));
            key.verify(body, &sig).map_err(|_| refuse(EvidenceRefusal::Invalid))?;
            if body[36..68] != pk {
                return Err(refuse(EvidenceRefusal::Invalid));
            }
            if policy.simulation_signers.is_some_and(|s| !s.contains(&signer)) {
                return Err(refuse(EvidenceRefusal::Invalid));
            }
            if !policy.measurements.iter().any(|m| m[..] == body[4..36]) {
                return Err(refuse(EvidenceRefusal::MeasurementMismatch));
            }
            Ok(pk)
        }
        FORMAT_OPEN_ENCLAVE => {
            let verifier = policy.oe_verifier.ok_or(refuse(EvidenceRefusal::NoVerifier))?;
            let claims = verifier(evidence)?;
            if claims.report_data != crate::seal::report_data(&pk) {
                return Err(refuse(EvidenceRefusal::Invalid));
            }
            if !policy.measurements.contains(&claims.unique_id) {
                return Err(refuse(EvidenceRefusal::MeasurementMismatch));
            }
            Ok(pk)
        }
        _ => Err(TeleportError::Malformed("evidence (unknown format)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_evidence_is_checked_against_the_policy() {
        let m = [5u8; 32];
        let signer = SimulatedSigner::new([1; 32], m);
        let pk = [8u8; 32];
        let frame = encode_frame(FORMAT_SIMULATED, &pk, &signer.evidence(&pk));
        let ok = Policy { allow_simulated: true, measurements: &[m], ..Policy::default() };
        assert_eq!(verify(&frame, &ok).unwrap(), pk);
        let refused = Policy { allow_simulated: false, ..ok };
        assert_eq!(verify(&frame, &refused).unwrap_err().code(), "SIMULATED_ENCLAVE_REFUSED");
        let other = Policy { measurements: &[[6; 32]], ..ok };
        assert_eq!(verify(&frame, &other).unwrap_err().code(), "ENCLAVE_MEASUREMENT_MISMATCH");
        let pinned = Policy { simulation_signers: Some(&[[0; 32]]), ..ok };
        assert_eq!(verify(&frame, &pinned).unwrap_err().code(), "EVIDENCE_INVALID");
        // The evidence binds the key: a frame naming another key fails, as does a flipped byte.
        let swapped = encode_frame(FORMAT_SIMULATED, &[9; 32], &signer.evidence(&pk));
        assert_eq!(verify(&swapped, &ok).unwrap_err().code(), "EVIDENCE_INVALID");
        let mut ev = signer.evidence(&pk);
        ev[10] ^= 1;
        assert_eq!(verify(&encode_frame(FORMAT_SIMULATED, &pk, &ev), &ok).unwrap_err().code(), "EVIDENCE_INVALID");
    }

    #[test]
    fn open_enclave_evidence_needs_a_verifier_and_the_right_claims() {
        let pk = [8u8; 32];
        let frame = encode_frame(FORMAT_OPEN_ENCLAVE, &pk, b"quote");
        let m = [5u8; 32];
        let none = Policy { measurements: &[m], ..Policy::default() };
        assert_eq!(verify(&frame, &none).unwrap_err().code(), "EVIDENCE_INVALID");
        let good = |_: &[u8]| Ok(OeClaims { unique_id: m, report_data: crate::seal::report_data(&pk) });
        assert_eq!(verify(&frame, &Policy { oe_verifier: Some(&good), ..none }).unwrap(), pk);
        let wrong_key = |_: &[u8]| Ok(OeClaims { unique_id: m, report_data: [0; 32] });
        assert!(verify(&frame, &Policy { oe_verifier: Some(&wrong_key), ..none }).is_err());
        let wrong_m = |_: &[u8]| Ok(OeClaims { unique_id: [1; 32], report_data: crate::seal::report_data(&pk) });
        assert_eq!(
            verify(&frame, &Policy { oe_verifier: Some(&wrong_m), ..none }).unwrap_err().code(),
            "ENCLAVE_MEASUREMENT_MISMATCH"
        );
    }
}
