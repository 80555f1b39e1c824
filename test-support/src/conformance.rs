//! The conformance vectors: `../shared/conformance/` beside the repository (CI has it
//! there; a clone elsewhere lacks it, and the tests that need it say they skipped).

use std::path::PathBuf;

/// `../shared/conformance/<sub>` relative to the repository's root (which may not
/// exist: check `is_dir()` and skip, saying so).
///
/// ```
/// let wire = curupira_test_support::conformance::folder("curupira-wire");
/// assert!(wire.ends_with("shared/conformance/curupira-wire"));
/// ```
pub fn folder(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance")
        .join(sub)
}
