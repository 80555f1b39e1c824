//! The `main` of an extension: `--curupira-print-manifest`, or serve stdin/stdout.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::serve::{ServeOptions, serve};
use crate::trigger::Trigger;

/// The argument that asks an extension for its manifest.
pub const PRINT_MANIFEST_FLAG: &str = "--curupira-print-manifest";

/// What an extension process was started to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Print the manifest on stdout and exit 0, running no trigger code.
    PrintManifest,
    /// Speak the protocol on stdin/stdout.
    Serve,
}

impl Mode {
    /// [`Mode::PrintManifest`] when any argument is exactly
    /// `--curupira-print-manifest`, else [`Mode::Serve`]. Pass the arguments without
    /// the program name (`std::env::args_os().skip(1)`); other arguments are left to
    /// the extension.
    pub fn from_args<I>(args: I) -> Mode
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        if args
            .into_iter()
            .any(|arg| arg.as_ref() == OsStr::new(PRINT_MANIFEST_FLAG))
        {
            Mode::PrintManifest
        } else {
            Mode::Serve
        }
    }
}

/// Why [`ServeOptions::from_manifest`] could not read a manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestInfoError {
    /// The text is not TOML.
    #[error("the extension's manifest is not valid TOML: {0}")]
    Syntax(String),
    /// `name` or `version` is missing or not a string.
    #[error("the extension's manifest needs a string `{0}`")]
    Missing(&'static str),
}

impl ServeOptions {
    /// Options whose `name` and `version` come from a `curupira-extension.toml`
    /// text. Only those two keys are read; checking the whole manifest is
    /// `curupira-manifest`'s job (`curupira manifest check`).
    pub fn from_manifest(manifest: &str) -> Result<ServeOptions, ManifestInfoError> {
        let table: toml::Table = manifest
            .parse()
            .map_err(|err: toml::de::Error| ManifestInfoError::Syntax(err.message().to_owned()))?;
        let string = |key: &'static str| {
            table
                .get(key)
                .and_then(toml::Value::as_str)
                .ok_or(ManifestInfoError::Missing(key))
        };
        Ok(ServeOptions::new(string("name")?, string("version")?))
    }
}

/// Writes the manifest exactly as given, with a final newline if it lacks one.
pub fn print_manifest(manifest: &str, mut out: impl Write) -> io::Result<()> {
    out.write_all(manifest.as_bytes())?;
    if !manifest.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// The whole `main` of an extension: decides the [`Mode`] from the process arguments,
/// then calls [`run_as`].
///
/// ```no_run
/// use curupira_extension_sdk::prelude::*;
/// # #[derive(Deserialize, Serialize, JsonSchema)]
/// # #[serde(crate = "curupira_extension_sdk::serde")]
/// # struct Nothing {}
/// # struct Mine;
/// # impl TypedTrigger for Mine {
/// #     type Params = Nothing;
/// #     type Item = Nothing;
/// #     fn poll(&mut self, _: &Nothing, _: PollContext) -> Result<Option<Nothing>, BoxError> {
/// #         Ok(None)
/// #     }
/// # }
///
/// // Usually `include_str!("../curupira-extension.toml")`.
/// const MANIFEST: &str = r#"
/// manifest_version = 1
/// name = "my-trigger"
/// version = "0.1.0"
/// protocol_version = 2
/// runtime = "executable"
/// kind = "trigger"
/// trigger_types = ["mine"]
///
/// [launch]
/// type = "executable"
/// program = "my-trigger"
/// "#;
///
/// fn main() -> std::process::ExitCode {
///     run(MANIFEST, || App::new().trigger("mine", Mine))
/// }
/// ```
pub fn run<T: Trigger>(manifest: &str, make_trigger: impl FnOnce() -> T) -> ExitCode {
    run_as(
        Mode::from_args(std::env::args_os().skip(1)),
        manifest,
        make_trigger,
    )
}

/// Runs an extension in `mode`, for programs that parse their own arguments.
///
/// - [`Mode::PrintManifest`]: prints `manifest` on stdout and exits 0; `make_trigger`
///   is never called, so no trigger code runs.
/// - [`Mode::Serve`]: reads `name` and `version` from `manifest`, builds the trigger
///   and [`serve`]s stdin/stdout. Exits 0 after `shutdown` or when stdin ends, 1 when
///   the stream broke (the reason goes to stderr).
///
/// Exits 2 when the manifest cannot be read or printed.
pub fn run_as<T: Trigger>(
    mode: Mode,
    manifest: &str,
    make_trigger: impl FnOnce() -> T,
) -> ExitCode {
    match mode {
        Mode::PrintManifest => match print_manifest(manifest, io::stdout().lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: cannot print the manifest on stdout: {err}");
                ExitCode::from(2)
            }
        },
        Mode::Serve => {
            let options = match ServeOptions::from_manifest(manifest) {
                Ok(options) => options,
                Err(err) => {
                    eprintln!("error: {err}");
                    return ExitCode::from(2);
                }
            };
            let mut trigger = make_trigger();
            match serve(
                &mut trigger,
                io::stdin().lock(),
                io::stdout().lock(),
                &options,
            ) {
                Ok(_) => ExitCode::SUCCESS,
                Err(err) => {
                    let name = options.name.as_deref().unwrap_or("extension");
                    eprintln!("{name}: error: {err}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn mode_looks_for_the_flag_anywhere() {
        assert_eq!(
            Mode::from_args(["--curupira-print-manifest"]),
            Mode::PrintManifest
        );
        assert_eq!(
            Mode::from_args(["--verbose", "--curupira-print-manifest"]),
            Mode::PrintManifest
        );
        assert_eq!(Mode::from_args(Vec::<String>::new()), Mode::Serve);
        assert_eq!(
            Mode::from_args(["--curupira-print-manifest=1"]),
            Mode::Serve
        );
        assert_eq!(Mode::from_args(["--curupira-print"]), Mode::Serve);
    }

    #[test]
    fn print_manifest_adds_a_missing_newline_only() {
        let mut out = Vec::new();
        print_manifest("name = \"x\"", &mut out).unwrap();
        assert_eq!(out, b"name = \"x\"\n");
        let mut out = Vec::new();
        print_manifest("name = \"x\"\n", &mut out).unwrap();
        assert_eq!(out, b"name = \"x\"\n");
    }

    #[test]
    fn options_come_from_the_manifest() {
        let options =
            ServeOptions::from_manifest("name = \"acme\"\nversion = \"1.2.3\"\n[launch]\n")
                .unwrap();
        assert_eq!(options, ServeOptions::new("acme", "1.2.3"));
        assert_eq!(
            ServeOptions::from_manifest("name = \"acme\"\nversion = 1\n").unwrap_err(),
            ManifestInfoError::Missing("version")
        );
        let err = ServeOptions::from_manifest("name = ").unwrap_err();
        assert!(
            matches!(err, ManifestInfoError::Syntax(_)),
            "{err:?} should be a syntax error"
        );
    }
}
