//! Finding Node.js: `node` from `PATH`, new enough for the loader.

use std::process::{Command, Stdio};
use std::time::Duration;

use curupira_process::ProcessGuard;

use super::RunError;

/// The program run: `node`, looked up on `PATH`.
pub const NODE: &str = "node";

/// The oldest major version accepted: ES module `import()` of a file URL and the
/// `node:` built-ins are stable from Node.js 18 on.
pub const MIN_MAJOR: u64 = 18;

/// How long `node --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest `node --version` output read.
const MAX_VERSION_BYTES: usize = 256;

/// Checks that `node` runs and is at least [`MIN_MAJOR`]; returns its version
/// (`v20.11.1`).
pub fn check_node() -> Result<String, RunError> {
    let mut command = Command::new(NODE);
    command
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut guard = ProcessGuard::spawn(&mut command).map_err(|_| RunError::NodeMissing)?;
    let stdout = guard.take_stdout();
    // `--version` prints one short line and exits; a stuck `node` is killed below.
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut text = Vec::new();
        if let Some(stdout) = stdout {
            let _ = stdout.take(MAX_VERSION_BYTES as u64).read_to_end(&mut text);
        }
        text
    });
    let status = guard.wait_for(VERSION_TIMEOUT);
    if status.is_none() {
        guard.kill();
    }
    let _ = guard.wait();
    let text = reader.join().unwrap_or_default();
    let version = String::from_utf8_lossy(&text).trim().to_owned();
    match status {
        Some(status) if status.success() => {}
        _ => {
            return Err(RunError::NodeUnusable {
                found: version.escape_debug().to_string(),
            });
        }
    }
    match major(&version) {
        Some(major) if major >= MIN_MAJOR => Ok(version),
        _ => Err(RunError::NodeTooOld {
            found: version.escape_debug().to_string(),
        }),
    }
}

/// The major version of `v20.11.1`.
fn major(version: &str) -> Option<u64> {
    version.strip_prefix('v')?.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_are_read() {
        assert_eq!(major("v20.11.1"), Some(20));
        assert_eq!(major("v8.0.0"), Some(8));
        assert_eq!(major("20.1"), None);
        assert_eq!(major(""), None);
    }
}
