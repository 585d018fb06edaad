//! Evidence: what an enclave shows both parties before they seal anything to it, and the pinned
//! policy each party checks it against.
//!
//! # Freshness
//!
//! The enclave makes its evidence only after the session's **challenge**: a fresh 32-byte nonce
//! from each verifier (the garbler's, relayed by the evaluator, and the evaluator's own). The
//! evidence binds the enclave's X25519 key *and both nonces* through its report data
//! ([`report_data`]), so evidence recorded in an earlier session (say, of an enclave instance whose
//! key later leaked) cannot be replayed: a party refuses evidence whose challenge does not carry
//! the nonce it just chose ([`EvidenceRefusal::Stale`]).
//!
//! # Formats
//!
//! An evidence frame (see [`crate::frames`]) carries a format byte, the enclave's X25519 public
//! key, the challenge and the format's evidence bytes:
//!
//! * [`FORMAT_SIMULATED`] — the **simulation backend**: no hardware protection at all. The evidence
//!   is `"WSE2" ‖ measurement (32) ‖ report data (32) ‖ simulated = 1 ‖ signer pk (32) ‖ Ed25519
//!   signature (64)` over everything before the signature, by a *software* key of the enclave
//!   program. It proves only which program binary (measurement = SHA-256 of it) claims to hold the
//!   key. Refused unless the policy sets `allow_simulated`, and checked against the policy's
//!   **simulated** measurements only: those pins are kept apart from the Open Enclave ones, so a
//!   policy that allows simulation (whose evidence anyone can sign) never accepts a simulated claim
//!   of a real MRENCLAVE.
//! * [`FORMAT_OPEN_ENCLAVE`] — an Open Enclave evidence blob from `oe_get_evidence`, whose custom
//!   claims are the report data. Verifying its signature chain needs the Open Enclave verifier
//!   (`oe_verify_evidence`, host side); the policy supplies it as a callback returning the claims
//!   ([`OeClaims`]), and [`check_open_enclave`] then applies [`OePolicy`]: not a debug enclave,
//!   the pinned signer (MRSIGNER), product id and minimum security version, an acceptable TCB
//!   status, a pinned measurement (MRENCLAVE) if any is pinned, and the report data.
//!
//! The rules are pure functions over parsed claims ([`check_simulated`], [`check_open_enclave`]),
//! so each is tested with stub claims; with the simulation backend there is no real SGX quote.

use crate::bytes::Reader;
use crate::{EvidenceRefusal, TeleportError};
use alloc::vec::Vec;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier as _, VerifyingKey};
use sha2::{Digest, Sha256};

/// Format byte of simulation-backend evidence.
pub const FORMAT_SIMULATED: u8 = 1;
/// Format byte of Open Enclave evidence.
pub const FORMAT_OPEN_ENCLAVE: u8 = 2;

const SIM_MAGIC: [u8; 4] = *b"WSE2";
const SIM_BODY: usize = 4 + 32 + 32 + 1 + 32;
/// Bytes of simulated evidence.
pub const SIM_LEN: usize = SIM_BODY + 64;

/// The two verifiers' fresh nonces of one session; the evidence binds both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The garbler's nonce (it reaches the enclave through the evaluator).
    pub garbler: [u8; 32],
    /// The evaluator's nonce.
    pub evaluator: [u8; 32],
}

/// Bytes of an encoded [`Challenge`].
pub const CHALLENGE_LEN: usize = 64;

impl Challenge {
    /// `garbler ‖ evaluator`.
    pub fn encode(&self) -> [u8; CHALLENGE_LEN] {
        let mut v = [0u8; CHALLENGE_LEN];
        v[..32].copy_from_slice(&self.garbler);
        v[32..].copy_from_slice(&self.evaluator);
        v
    }

    /// Decodes exactly [`CHALLENGE_LEN`] bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, TeleportError> {
        if bytes.len() != CHALLENGE_LEN {
            return Err(TeleportError::Malformed("challenge"));
        }
        Ok(Challenge { garbler: bytes[..32].try_into().expect("32"), evaluator: bytes[32..].try_into().expect("32") })
    }
}

/// Which verifier checks a piece of evidence (whose nonce must be in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verifier {
    /// The garbler (P1).
    Garbler,
    /// The evaluator (P2).
    Evaluator,
}

/// The report data an evidence must carry for the enclave key `pk` under `challenge`:
/// `SHA-256("webmpc/teleport/report-data/v2" ‖ pk ‖ garbler nonce ‖ evaluator nonce)`.
pub fn report_data(pk: &[u8; 32], challenge: &Challenge) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"webmpc/teleport/report-data/v2")
        .chain_update(pk)
        .chain_update(challenge.garbler)
        .chain_update(challenge.evaluator)
        .finalize()
        .into()
}

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

    /// The evidence bytes for `report_data` ([`report_data`] of the enclave key and challenge).
    pub fn evidence(&self, report_data: &[u8; 32]) -> Vec<u8> {
        let mut v = Vec::with_capacity(SIM_LEN);
        v.extend_from_slice(&SIM_MAGIC);
        v.extend_from_slice(&self.measurement);
        v.extend_from_slice(report_data);
        v.push(1);
        v.extend_from_slice(&self.public());
        let sig = self.key.sign(&v);
        v.extend_from_slice(&sig.to_bytes());
        v
    }
}

/// What a verified simulated evidence claims (its signature checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimClaims {
    /// SHA-256 of the program binary, as the program claims.
    pub measurement: [u8; 32],
    /// The software signer's Ed25519 key.
    pub signer: [u8; 32],
    /// The report data the signature covers.
    pub report_data: [u8; 32],
}

/// An SGX TCB status as the Open Enclave verifier reports it (`OE_CLAIM_TCB_STATUS`), by name so
/// that the claim extractor (`webmpc_host --verify-evidence`) and this crate agree without sharing
/// the SDK's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcbStatus {
    /// The platform is up to date.
    UpToDate,
    /// Up to date, but the enclave's software mitigations matter (a policy may accept it).
    SwHardeningNeeded,
    /// Up to date, but the platform's configuration needs attention.
    ConfigurationNeeded,
    /// Both of the above.
    ConfigurationAndSwHardeningNeeded,
    /// The platform's TCB is out of date.
    OutOfDate,
    /// Out of date and the configuration needs attention.
    OutOfDateConfigurationNeeded,
    /// The platform's keys are revoked: never acceptable.
    Revoked,
    /// Missing or unrecognised: never acceptable.
    Invalid,
}

impl TcbStatus {
    /// The stable name (`up-to-date`, `sw-hardening-needed`, …).
    pub fn name(self) -> &'static str {
        match self {
            TcbStatus::UpToDate => "up-to-date",
            TcbStatus::SwHardeningNeeded => "sw-hardening-needed",
            TcbStatus::ConfigurationNeeded => "configuration-needed",
            TcbStatus::ConfigurationAndSwHardeningNeeded => "configuration-and-sw-hardening-needed",
            TcbStatus::OutOfDate => "out-of-date",
            TcbStatus::OutOfDateConfigurationNeeded => "out-of-date-configuration-needed",
            TcbStatus::Revoked => "revoked",
            TcbStatus::Invalid => "invalid",
        }
    }

    /// The status with this name; anything else is [`TcbStatus::Invalid`].
    pub fn from_name(name: &str) -> TcbStatus {
        [
            TcbStatus::UpToDate,
            TcbStatus::SwHardeningNeeded,
            TcbStatus::ConfigurationNeeded,
            TcbStatus::ConfigurationAndSwHardeningNeeded,
            TcbStatus::OutOfDate,
            TcbStatus::OutOfDateConfigurationNeeded,
            TcbStatus::Revoked,
        ]
        .into_iter()
        .find(|s| s.name() == name)
        .unwrap_or(TcbStatus::Invalid)
    }
}

/// What an Open Enclave verifier reports for evidence whose signature chain it verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OeClaims {
    /// MRENCLAVE (`OE_CLAIM_UNIQUE_ID`).
    pub unique_id: [u8; 32],
    /// MRSIGNER (`OE_CLAIM_SIGNER_ID`).
    pub signer_id: [u8; 32],
    /// ISVPRODID (the first two bytes, little-endian, of `OE_CLAIM_PRODUCT_ID`).
    pub product_id: u16,
    /// ISVSVN (`OE_CLAIM_SECURITY_VERSION`).
    pub security_version: u32,
    /// Whether the SGX debug attribute is set (`OE_EVIDENCE_ATTRIBUTES_SGX_DEBUG` in
    /// `OE_CLAIM_ATTRIBUTES`): a debug enclave's memory is readable by its host.
    pub debug: bool,
    /// `OE_CLAIM_TCB_STATUS`.
    pub tcb_status: TcbStatus,
    /// The custom claims the enclave bound (must be [`report_data`] of its key and the challenge).
    pub report_data: [u8; 32],
}

/// Parses the claims `webmpc_host --verify-evidence FILE` prints (one `name value` per line:
/// `unique_id`, `signer_id`, `report_data` in hex, `product_id`, `security_version`, `debug`,
/// `tcb_status` as [`TcbStatus::name`]) — the host verifies the quote with `oe_verify_evidence`,
/// this crate applies the policy. Anything missing or malformed is [`EvidenceRefusal::Invalid`].
pub fn parse_host_claims(text: &str) -> Result<OeClaims, TeleportError> {
    let bad = TeleportError::EvidenceRefused(EvidenceRefusal::Invalid);
    let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')).map(str::trim).ok_or(bad.clone());
    let hex32 = |name: &str| -> Result<[u8; 32], TeleportError> {
        let h = field(name)?;
        if h.len() != 64 || !h.is_ascii() {
            return Err(bad.clone());
        }
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).map_err(|_| bad.clone())?;
        }
        Ok(out)
    };
    Ok(OeClaims {
        unique_id: hex32("unique_id")?,
        signer_id: hex32("signer_id")?,
        product_id: field("product_id")?.parse().map_err(|_| bad.clone())?,
        security_version: field("security_version")?.parse().map_err(|_| bad.clone())?,
        debug: match field("debug")? {
            "0" => false,
            "1" => true,
            _ => return Err(bad.clone()),
        },
        tcb_status: TcbStatus::from_name(field("tcb_status")?),
        report_data: hex32("report_data")?,
    })
}

/// An Open Enclave evidence verifier: `oe_verify_evidence` and claim extraction, or an error.
pub type OeVerifier<'a> = &'a dyn Fn(&[u8]) -> Result<OeClaims, TeleportError>;

/// What a party accepts of an Open Enclave enclave.
#[derive(Clone, Copy, Debug)]
pub struct OePolicy<'a> {
    /// The accepted signers (MRSIGNER); at least one must match (an empty list accepts none).
    pub signers: &'a [[u8; 32]],
    /// The product id (ISVPRODID) the signer gave this enclave.
    pub product_id: u16,
    /// The lowest accepted security version (ISVSVN): older, possibly vulnerable builds of the
    /// same product are refused.
    pub min_svn: u32,
    /// The accepted measurements (MRENCLAVE). Empty: any enclave of the pinned signer, product and
    /// version (the signer-based policy that lets the signer ship fixes); otherwise one must match.
    pub measurements: &'a [[u8; 32]],
    /// The acceptable TCB statuses ([`TcbStatus::Revoked`] and [`TcbStatus::Invalid`] never are).
    pub tcb: &'a [TcbStatus],
}

/// The TCB statuses [`OePolicy::tcb`] usually lists: an up-to-date platform only.
pub const UP_TO_DATE: &[TcbStatus] = &[TcbStatus::UpToDate];

/// A party's pinned policy.
#[derive(Clone, Copy, Default)]
pub struct Policy<'a> {
    /// Accept simulation-backend evidence (the SDK's `allowSimulatedEnclave: true`).
    pub allow_simulated: bool,
    /// For simulated evidence: the accepted program measurements (SHA-256 of the binary). Kept
    /// apart from [`OePolicy::measurements`] on purpose (see the module docs).
    pub simulated_measurements: &'a [[u8; 32]],
    /// For simulated evidence: if set, the accepted signer keys.
    pub simulation_signers: Option<&'a [[u8; 32]]>,
    /// For Open Enclave evidence: the policy (none: such evidence is refused).
    pub open_enclave: Option<OePolicy<'a>>,
    /// For Open Enclave evidence: the verifier.
    pub oe_verifier: Option<OeVerifier<'a>>,
}

/// An evidence frame's payload: format, enclave key, challenge, evidence.
pub(crate) fn encode_frame(format: u8, enclave_pk: &[u8; 32], challenge: &Challenge, evidence: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + 32 + CHALLENGE_LEN + 4 + evidence.len());
    v.push(format);
    v.extend_from_slice(enclave_pk);
    v.extend_from_slice(&challenge.encode());
    crate::bytes::put_prefixed(&mut v, evidence);
    v
}

/// Checks verified simulated claims against `policy`, for the report data `expected`.
pub fn check_simulated(claims: &SimClaims, policy: &Policy<'_>, expected: &[u8; 32]) -> Result<(), EvidenceRefusal> {
    if !policy.allow_simulated {
        return Err(EvidenceRefusal::SimulatedRefused);
    }
    if &claims.report_data != expected {
        return Err(EvidenceRefusal::Invalid);
    }
    if policy.simulation_signers.is_some_and(|s| !s.contains(&claims.signer)) {
        return Err(EvidenceRefusal::SignerMismatch);
    }
    if !policy.simulated_measurements.contains(&claims.measurement) {
        return Err(EvidenceRefusal::MeasurementMismatch);
    }
    Ok(())
}

/// Checks verified Open Enclave claims against `policy`, for the report data `expected`. The
/// order puts what no policy can accept first.
pub fn check_open_enclave(claims: &OeClaims, policy: &OePolicy<'_>, expected: &[u8; 32]) -> Result<(), EvidenceRefusal> {
    if claims.debug {
        return Err(EvidenceRefusal::DebugEnclave);
    }
    if &claims.report_data != expected {
        return Err(EvidenceRefusal::Invalid);
    }
    if matches!(claims.tcb_status, TcbStatus::Revoked | TcbStatus::Invalid) || !policy.tcb.contains(&claims.tcb_status) {
        return Err(EvidenceRefusal::TcbStatus);
    }
    if !policy.signers.contains(&claims.signer_id) {
        return Err(EvidenceRefusal::SignerMismatch);
    }
    if claims.product_id != policy.product_id {
        return Err(EvidenceRefusal::ProductMismatch);
    }
    if claims.security_version < policy.min_svn {
        return Err(EvidenceRefusal::SvnTooLow);
    }
    if !policy.measurements.is_empty() && !policy.measurements.contains(&claims.unique_id) {
        return Err(EvidenceRefusal::MeasurementMismatch);
    }
    Ok(())
}

/// Verifies simulated evidence bytes' signature and returns its claims.
fn simulated_claims(evidence: &[u8]) -> Result<SimClaims, EvidenceRefusal> {
    if evidence.len() != SIM_LEN || evidence[..4] != SIM_MAGIC || evidence[68] != 1 {
        return Err(EvidenceRefusal::Invalid);
    }
    let (body, sig) = evidence.split_at(SIM_BODY);
    let signer: [u8; 32] = body[69..].try_into().expect("32 bytes");
    let key = VerifyingKey::from_bytes(&signer).map_err(|_| EvidenceRefusal::Invalid)?;
    let sig = Signature::from_bytes(sig.try_into().expect("64 bytes"));
    key.verify(body, &sig).map_err(|_| EvidenceRefusal::Invalid)?;
    Ok(SimClaims {
        measurement: body[4..36].try_into().expect("32 bytes"),
        report_data: body[36..68].try_into().expect("32 bytes"),
        signer,
    })
}

/// Checks an evidence frame's payload against `policy` as `who`, whose fresh nonce is `nonce`;
/// returns the enclave's X25519 key and the challenge the evidence answers.
pub fn verify(payload: &[u8], policy: &Policy<'_>, who: Verifier, nonce: &[u8; 32]) -> Result<([u8; 32], Challenge), TeleportError> {
    let refuse = TeleportError::EvidenceRefused;
    let mut r = Reader::new(payload, "evidence");
    let format = r.u8()?;
    let pk = r.array::<32>()?;
    let challenge = Challenge::decode(r.take(CHALLENGE_LEN)?)?;
    let evidence = r.prefixed()?;
    r.finish()?;
    let mine = match who {
        Verifier::Garbler => &challenge.garbler,
        Verifier::Evaluator => &challenge.evaluator,
    };
    if mine != nonce {
        return Err(refuse(EvidenceRefusal::Stale));
    }
    let expected = report_data(&pk, &challenge);
    match format {
        FORMAT_SIMULATED => {
            if !policy.allow_simulated {
                return Err(refuse(EvidenceRefusal::SimulatedRefused));
            }
            check_simulated(&simulated_claims(evidence).map_err(refuse)?, policy, &expected).map_err(refuse)?;
        }
        FORMAT_OPEN_ENCLAVE => {
            let verifier = policy.oe_verifier.ok_or(refuse(EvidenceRefusal::NoVerifier))?;
            let oe = policy.open_enclave.as_ref().ok_or(refuse(EvidenceRefusal::NoPolicy))?;
            check_open_enclave(&verifier(evidence)?, oe, &expected).map_err(refuse)?;
        }
        _ => return Err(TeleportError::Malformed("evidence (unknown format)")),
    }
    Ok((pk, challenge))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: [u8; 32] = [5; 32];
    const MRSIGNER: [u8; 32] = [6; 32];
    const PK: [u8; 32] = [8; 32];
    const CH: Challenge = Challenge { garbler: [1; 32], evaluator: [2; 32] };

    fn sim_frame(signer: &SimulatedSigner, pk: &[u8; 32], challenge: &Challenge, bound: &Challenge) -> Vec<u8> {
        encode_frame(FORMAT_SIMULATED, pk, challenge, &signer.evidence(&report_data(pk, bound)))
    }

    #[test]
    fn simulated_evidence_is_checked_against_the_policy() {
        let signer = SimulatedSigner::new([1; 32], M);
        let frame = sim_frame(&signer, &PK, &CH, &CH);
        let ok = Policy { allow_simulated: true, simulated_measurements: &[M], ..Policy::default() };
        assert_eq!(verify(&frame, &ok, Verifier::Garbler, &CH.garbler).unwrap(), (PK, CH));
        assert_eq!(verify(&frame, &ok, Verifier::Evaluator, &CH.evaluator).unwrap(), (PK, CH));
        let refused = Policy { allow_simulated: false, ..ok };
        assert_eq!(verify(&frame, &refused, Verifier::Garbler, &CH.garbler).unwrap_err().code(), "SIMULATED_ENCLAVE_REFUSED");
        let other = Policy { simulated_measurements: &[[6; 32]], ..ok };
        assert_eq!(verify(&frame, &other, Verifier::Garbler, &CH.garbler).unwrap_err().code(), "ENCLAVE_MEASUREMENT_MISMATCH");
        let pinned = Policy { simulation_signers: Some(&[[0; 32]]), ..ok };
        assert_eq!(
            verify(&frame, &pinned, Verifier::Garbler, &CH.garbler).unwrap_err(),
            TeleportError::EvidenceRefused(EvidenceRefusal::SignerMismatch)
        );
        // The evidence binds the key: a frame naming another key fails, as does a flipped byte.
        let swapped = encode_frame(FORMAT_SIMULATED, &[9; 32], &CH, &signer.evidence(&report_data(&PK, &CH)));
        assert_eq!(verify(&swapped, &ok, Verifier::Garbler, &CH.garbler).unwrap_err().code(), "EVIDENCE_INVALID");
        let mut ev = signer.evidence(&report_data(&PK, &CH));
        ev[10] ^= 1;
        let flipped = encode_frame(FORMAT_SIMULATED, &PK, &CH, &ev);
        assert_eq!(verify(&flipped, &ok, Verifier::Garbler, &CH.garbler).unwrap_err().code(), "EVIDENCE_INVALID");
    }

    #[test]
    fn allowing_simulation_never_accepts_a_simulated_claim_of_a_pinned_open_enclave_measurement() {
        // Anyone can sign simulated evidence claiming the real MRENCLAVE `M`.
        let forger = SimulatedSigner::new([66; 32], M);
        let frame = sim_frame(&forger, &PK, &CH, &CH);
        let oe = OePolicy { signers: &[MRSIGNER], product_id: 1, min_svn: 1, measurements: &[M], tcb: UP_TO_DATE };
        let policy = Policy { allow_simulated: true, simulated_measurements: &[[7; 32]], open_enclave: Some(oe), ..Policy::default() };
        assert_eq!(
            verify(&frame, &policy, Verifier::Garbler, &CH.garbler).unwrap_err(),
            TeleportError::EvidenceRefused(EvidenceRefusal::MeasurementMismatch)
        );
        // And the other way round: Open Enclave evidence claiming the simulation program's
        // measurement meets only the Open Enclave pins.
        let frame = encode_frame(FORMAT_OPEN_ENCLAVE, &PK, &CH, b"quote");
        let claims_sim_measurement = |_: &[u8]| Ok(OeClaims { unique_id: [7; 32], ..oe_claims(&PK) });
        let policy = Policy { oe_verifier: Some(&claims_sim_measurement), ..policy };
        assert_eq!(
            verify(&frame, &policy, Verifier::Garbler, &CH.garbler).unwrap_err(),
            TeleportError::EvidenceRefused(EvidenceRefusal::MeasurementMismatch)
        );
    }

    #[test]
    fn stale_or_missing_nonces_are_refused() {
        let signer = SimulatedSigner::new([1; 32], M);
        let ok = Policy { allow_simulated: true, simulated_measurements: &[M], ..Policy::default() };
        let frame = sim_frame(&signer, &PK, &CH, &CH);
        // Evidence from an earlier session: its challenge lacks this party's fresh nonce.
        for (who, nonce) in [(Verifier::Garbler, [3u8; 32]), (Verifier::Evaluator, [3u8; 32])] {
            assert_eq!(verify(&frame, &ok, who, &nonce).unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::Stale));
        }
        // A host that rewrites the challenge in the frame: the signed report data binds the old one.
        let fresh = Challenge { garbler: [3; 32], ..CH };
        let rewritten = sim_frame(&signer, &PK, &fresh, &CH);
        assert_eq!(
            verify(&rewritten, &ok, Verifier::Garbler, &fresh.garbler).unwrap_err(),
            TeleportError::EvidenceRefused(EvidenceRefusal::Invalid)
        );
        // No challenge at all (an evidence frame of the format before nonces).
        let mut old = alloc::vec![FORMAT_SIMULATED];
        old.extend_from_slice(&PK);
        crate::bytes::put_prefixed(&mut old, &signer.evidence(&report_data(&PK, &CH)));
        assert_eq!(verify(&old, &ok, Verifier::Garbler, &CH.garbler).unwrap_err().code(), "MALFORMED_MESSAGE");
    }

    fn oe_claims(pk: &[u8; 32]) -> OeClaims {
        OeClaims {
            unique_id: M,
            signer_id: MRSIGNER,
            product_id: 1,
            security_version: 3,
            debug: false,
            tcb_status: TcbStatus::UpToDate,
            report_data: report_data(pk, &CH),
        }
    }

    #[test]
    fn each_open_enclave_rule_refuses_its_stub_claim() {
        let rd = report_data(&PK, &CH);
        let policy = OePolicy { signers: &[MRSIGNER], product_id: 1, min_svn: 3, measurements: &[M], tcb: UP_TO_DATE };
        let good = oe_claims(&PK);
        assert_eq!(check_open_enclave(&good, &policy, &rd), Ok(()));
        let refused = |edit: &dyn Fn(&mut OeClaims), p: &OePolicy<'_>| {
            let mut c = good.clone();
            edit(&mut c);
            check_open_enclave(&c, p, &rd).unwrap_err()
        };
        assert_eq!(refused(&|c| c.debug = true, &policy), EvidenceRefusal::DebugEnclave);
        assert_eq!(refused(&|c| c.signer_id = [9; 32], &policy), EvidenceRefusal::SignerMismatch);
        assert_eq!(refused(&|c| c.product_id = 2, &policy), EvidenceRefusal::ProductMismatch);
        assert_eq!(refused(&|c| c.security_version = 2, &policy), EvidenceRefusal::SvnTooLow);
        assert_eq!(refused(&|c| c.unique_id = [9; 32], &policy), EvidenceRefusal::MeasurementMismatch);
        assert_eq!(refused(&|c| c.report_data = [0; 32], &policy), EvidenceRefusal::Invalid);
        for bad in [TcbStatus::OutOfDate, TcbStatus::ConfigurationNeeded, TcbStatus::Revoked, TcbStatus::Invalid] {
            assert_eq!(refused(&|c| c.tcb_status = bad, &policy), EvidenceRefusal::TcbStatus, "{bad:?}");
        }
        // A policy may accept more statuses, never a revoked or unknown platform.
        let lenient = OePolicy { tcb: &[TcbStatus::UpToDate, TcbStatus::SwHardeningNeeded, TcbStatus::Revoked, TcbStatus::Invalid], ..policy };
        let mut c = good.clone();
        c.tcb_status = TcbStatus::SwHardeningNeeded;
        assert_eq!(check_open_enclave(&c, &lenient, &rd), Ok(()));
        assert_eq!(refused(&|c| c.tcb_status = TcbStatus::Revoked, &lenient), EvidenceRefusal::TcbStatus);
        assert_eq!(refused(&|c| c.tcb_status = TcbStatus::Invalid, &lenient), EvidenceRefusal::TcbStatus);
        // A higher version of the pinned product passes; with no measurement pinned, any
        // measurement of the pinned signer, product and version does.
        assert_eq!(check_open_enclave(&OeClaims { security_version: 9, ..good.clone() }, &policy, &rd), Ok(()));
        let by_signer = OePolicy { measurements: &[], ..policy };
        assert_eq!(check_open_enclave(&OeClaims { unique_id: [9; 32], ..good.clone() }, &by_signer, &rd), Ok(()));
        // No signer pinned accepts none.
        assert_eq!(refused(&|_| {}, &OePolicy { signers: &[], ..policy }), EvidenceRefusal::SignerMismatch);
        // Names round-trip; an unknown name is invalid.
        for s in [TcbStatus::UpToDate, TcbStatus::SwHardeningNeeded, TcbStatus::OutOfDateConfigurationNeeded, TcbStatus::Revoked] {
            assert_eq!(TcbStatus::from_name(s.name()), s);
        }
        assert_eq!(TcbStatus::from_name("great"), TcbStatus::Invalid);
    }

    #[test]
    fn open_enclave_evidence_needs_a_policy_a_verifier_and_the_right_claims() {
        let frame = encode_frame(FORMAT_OPEN_ENCLAVE, &PK, &CH, b"quote");
        let oe = OePolicy { signers: &[MRSIGNER], product_id: 1, min_svn: 1, measurements: &[M], tcb: UP_TO_DATE };
        let check = |p: &Policy<'_>| verify(&frame, p, Verifier::Garbler, &CH.garbler);
        assert_eq!(check(&Policy::default()).unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::NoVerifier));
        let good = |_: &[u8]| Ok(oe_claims(&PK));
        let no_policy = Policy { oe_verifier: Some(&good), ..Policy::default() };
        assert_eq!(check(&no_policy).unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::NoPolicy));
        let none = Policy { open_enclave: Some(oe), ..Policy::default() };
        assert_eq!(check(&none).unwrap_err(), TeleportError::EvidenceRefused(EvidenceRefusal::NoVerifier));
        assert_eq!(check(&Policy { oe_verifier: Some(&good), ..none }).unwrap(), (PK, CH));
        let debug = |_: &[u8]| Ok(OeClaims { debug: true, ..oe_claims(&PK) });
        assert_eq!(
            check(&Policy { oe_verifier: Some(&debug), ..none }).unwrap_err(),
            TeleportError::EvidenceRefused(EvidenceRefusal::DebugEnclave)
        );
        // The claims must bind this frame's key.
        let wrong_key = |_: &[u8]| Ok(oe_claims(&[0; 32]));
        assert_eq!(check(&Policy { oe_verifier: Some(&wrong_key), ..none }).unwrap_err().code(), "EVIDENCE_INVALID");
    }
}
