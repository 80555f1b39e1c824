//! GitHub for the official `curupira-plugins`, on loopback: `github_stand_in.py` (an
//! HTTPS proxy that answers `api.github.com` itself, with a throw-away CA, and
//! tunnels everything else, PyPI for `uvx` included) and a `gh` stand-in for
//! `gh auth token`. The plugin runs unchanged: only its environment points at them
//! (`HTTPS_PROXY`, `SSL_CERT_FILE`, `PATH`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Ecosystem;

/// The token the `gh` stand-in prints, which every GraphQL request must carry.
pub const TOKEN: &str = "stand-in-token";

/// A running stand-in; stopped when dropped.
pub struct GitHub {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl GitHub {
    /// Starts the stand-in in `dir` (created) serving open issues numbered `1..=count`,
    /// titled `Issue N`, and writes the `gh` stand-in into `dir/bin`.
    pub fn start(installed: &Ecosystem, dir: &Path, count: u32) -> GitHub {
        fs::create_dir_all(dir.join("bin")).unwrap();
        let issues: Vec<Value> = (1..=count)
            .map(|n| json!({"number": n, "title": format!("Issue {n}"), "body": "Steps."}))
            .collect();
        fs::write(dir.join("issues.json"), Value::from(issues).to_string()).unwrap();
        let gh = format!(
            "#!/bin/sh\nif [ \"$1 $2\" = \"auth token\" ]; then echo {TOKEN}; exit 0; fi\n\
             echo \"gh stand-in: unexpected gh $*\" >&2\nexit 1\n"
        );
        fs::write(dir.join("bin/gh"), gh).unwrap();
        fs::set_permissions(dir.join("bin/gh"), fs::Permissions::from_mode(0o755)).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/ecosystem_support/github_stand_in.py");
        let child = Command::new(installed.bin("python"))
            .arg(script)
            .arg(dir.join("issues.json"))
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.join("stand-in.err")).unwrap())
            .spawn()
            .unwrap();
        let mut github = GitHub {
            child,
            dir: dir.to_path_buf(),
            port: 0,
        };
        let started = Instant::now();
        while github.port == 0 {
            if let Ok(text) = fs::read_to_string(dir.join("port")) {
                github.port = text.trim().parse().unwrap();
            } else if started.elapsed() > Duration::from_secs(30) {
                panic!(
                    "the GitHub stand-in did not start: {}",
                    fs::read_to_string(dir.join("stand-in.err")).unwrap_or_default()
                );
            } else if let Some(status) = github.child.try_wait().unwrap() {
                panic!(
                    "the GitHub stand-in exited ({status}): {}",
                    fs::read_to_string(dir.join("stand-in.err")).unwrap_or_default()
                );
            } else {
                thread::sleep(Duration::from_millis(20));
            }
        }
        github
    }

    /// Points `command` at the stand-in: the proxy, the CA bundle, `gh` first on
    /// `PATH` (then `extra_path`, then the test's `PATH`).
    pub fn environment(&self, command: &mut Command, extra_path: &[&Path]) {
        let mut paths = vec![self.dir.join("bin")];
        paths.extend(extra_path.iter().map(|path| path.to_path_buf()));
        paths.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let proxy = format!("http://127.0.0.1:{}", self.port);
        command
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("HTTPS_PROXY", &proxy)
            .env("https_proxy", &proxy)
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .env("SSL_CERT_FILE", self.dir.join("ca-bundle.pem"));
    }

    /// The GraphQL requests answered so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        fs::read_to_string(self.dir.join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for GitHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
