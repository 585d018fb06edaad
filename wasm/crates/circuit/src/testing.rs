//! For tests and benchmarks of this and later crates: where the shared reference circuits are.

use std::path::PathBuf;

/// The directory of the reference Bristol circuits (`../shared/circuits/bristol_fashion/`):
/// `$WEBMPC_CIRCUITS_DIR` if set, else the `shared` folder beside the checkout, else
/// `/work/shared`, where it lives on this machine kind (so a clean clone elsewhere finds it).
/// Panics with the places it tried when none holds the circuits: a test must fail, not skip.
pub fn reference_dir() -> PathBuf {
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/circuits/bristol_fashion");
    let candidates: Vec<PathBuf> = std::env::var_os("WEBMPC_CIRCUITS_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([beside, PathBuf::from("/work/shared/circuits/bristol_fashion")])
        .collect();
    candidates
        .iter()
        .find(|d| d.join("aes_128.txt").is_file())
        .cloned()
        .unwrap_or_else(|| panic!("reference circuits not found (tried {candidates:?}); set WEBMPC_CIRCUITS_DIR"))
}
