//! The extensions built into `curupira`, in one table: the config accepts
//! `builtin = "NAME"` for exactly these names, `resolve` takes their manifests from
//! here and launches them as this executable with `builtin NAME`, and
//! `curupira builtin NAME` runs their entry points.
//!
//! Each one is an ordinary extension crate written with `curupira-extension-sdk`; it
//! is only linked in, so a fresh clone can run a real automation with nothing else
//! installed.

use std::ffi::OsString;
use std::process::ExitCode;

use curupira_extension_sdk::Mode;
use curupira_manifest::Manifest;

/// One extension built into the host.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Its name: in `builtin = "NAME"`, in `curupira builtin NAME`, and in its manifest.
    pub name: &'static str,
    /// Its `curupira-extension.toml`.
    pub manifest: &'static str,
    /// Runs it in the given mode on this process's stdin/stdout until it ends.
    pub run: fn(Mode) -> ExitCode,
}

/// Every extension built into the host.
pub const ALL: &[Builtin] = &[Builtin {
    name: curupira_local_queue::NAME,
    manifest: curupira_local_queue::MANIFEST,
    run: curupira_local_queue::run,
}];

/// The names of [`ALL`], in the same order: what `builtin = "…"` accepts.
pub const NAMES: &[&str] = &names::<{ ALL.len() }>();

/// [`NAMES`], built from [`ALL`] at compile time so the names have no list of their own.
const fn names<const N: usize>() -> [&'static str; N] {
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = ALL[i].name;
        i += 1;
    }
    names
}

/// The built-in extension called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    ALL.iter().find(|builtin| builtin.name == name)
}

impl Builtin {
    /// Its manifest, parsed; `None` only if the compiled-in text were broken, which
    /// this module's tests rule out.
    pub fn parse_manifest(&self) -> Option<Manifest> {
        self.manifest.parse().ok()
    }

    /// What follows the host's own executable to start it: `builtin NAME`.
    pub fn launch_args(&self) -> Vec<OsString> {
        vec![OsString::from("builtin"), OsString::from(self.name)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_clean_manifest_under_its_own_name() {
        assert_eq!(NAMES.len(), ALL.len());
        for (builtin, name) in ALL.iter().zip(NAMES) {
            assert_eq!(builtin.name, *name);
            let checked = curupira_manifest::check_str(builtin.manifest, "curupira-extension.toml");
            assert_eq!(
                (checked.report.errors(), checked.report.warnings()),
                (0, 0),
                "{}: {}",
                builtin.name,
                checked.report.render_human(false)
            );
            let manifest = builtin.parse_manifest().unwrap();
            assert_eq!(manifest.name.as_str(), builtin.name);
            assert_eq!(
                find(builtin.name).map(|found| found.name),
                Some(builtin.name)
            );
        }
        assert!(find("local-queu").is_none());
    }
}
