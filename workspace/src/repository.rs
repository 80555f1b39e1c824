//! The reference host's third place for an agent: a `[repositories.<alias>]` of its
//! own, cloned on demand, with a fresh worktree per task that goes with its branch
//! once the task ended.
//!
//! A host that reads `[repositories.<alias>]` (`remote`, optional `path`, optional
//! `setup_script`) makes one [`BaseCheckout`] of it, wraps it in a [`Repository`] for
//! the run (shared by every automation that names the alias), and gives each such
//! automation [`Workspaces::in_repository`](crate::Workspaces::in_repository) with its
//! [`TaskCheckout`]. From there the flow is the crate's usual one: `prepare` per task,
//! the hooks, `finish`.
//!
//! ```no_run
//! use curupira_workspace::repository::{BaseCheckout, Repository, TaskCheckout};
//! use curupira_workspace::{WorkspaceSpec, Workspaces};
//!
//! let checkout = BaseCheckout::in_workspace_dir(
//!     "https://example.invalid/acme/widgets.git",
//!     "/home/me/.curupira/workspaces".as_ref(),
//!     "demo",
//! )?
//! .with_setup_script("scripts/setup.sh");
//! let repository = Repository::new(checkout); // one per alias and run
//! let spec = WorkspaceSpec::new("/home/me/project"); // hooks and hook_timeout
//! let trigger = TaskCheckout::Worktree { trigger_type: "github/issues".to_owned() };
//! let workspaces = Workspaces::in_repository(spec, repository, trigger);
//! let task_id = "ca4b62f03de05de962fb2609ac7ab2caf7728140a297f5fc2a6edb41568e91d7";
//! // Clones (and sets up) on the first prepare of the run, fetches once, then adds
//! // `/home/me/.curupira/workspaces/demo.worktrees/fix/github-issues-<hash>`.
//! let workspace = workspaces.prepare("fix", task_id)?;
//! // … hooks, the agent in `workspace.path()` …
//! workspace.finish(false)?; // removed with its branch, whatever the outcome
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What the reference host does
//!
//! As recorded from `curupira` 0.4.0 (git 2.47):
//!
//! - **The base checkout** is `path` when set, else `<workspace_dir>/<alias>`
//!   ([`BaseCheckout::new`], [`BaseCheckout::in_workspace_dir`]).
//! - **Missing, it is cloned** (`git clone <remote>`, so `origin` is the remote),
//!   then `setup_script` runs **once** in the fresh clone: its working directory is
//!   the checkout, it gets no arguments and no `CURUPIRA_*` variables, and the whole
//!   string is the program's path relative to the checkout (`"setup.sh --fast"` is a
//!   program of that name). Its output is not shown. When it fails, the fresh clone is
//!   removed, so the next run clones again, and the task fails with
//!   `setup_script exited 4: <its stderr>` or
//!   `setup_script failed to start: spawn <program>: program "<program>" not found`.
//! - **Existing and a Git checkout, it is used as it is**: no clone, no setup, its
//!   local branches untouched. Existing and not a Git checkout, every task fails with
//!   `workspace destination exists but is not a Git checkout: <path>`.
//! - **Before the worktrees**, the host fetches, and each task's worktree starts at the
//!   fetched `origin/<default branch>`, not at the local branch.
//! - **Each task** gets a fresh worktree
//!   `<checkout>.worktrees/<automation>/<trigger_type with / as ->-<hash>` on the
//!   branch `curupira/<automation>/<same name>` ([`worktree_name`], [`task_branch`]);
//!   the `<hash>` is the SHA-256, in hex, of the task id's 64 hex digits (the hash of
//!   the item's values, so the same item has the same name in every automation).
//!   Both go after the task, also when it failed: commits the agent made there are on
//!   no ref afterwards. The empty `<checkout>.worktrees/<automation>/` stays.
//! - **`checkout = "main"`** runs the agent in the base checkout itself (cloned when
//!   missing, set up then), with no fetch, no worktree and no branch
//!   ([`TaskCheckout::Main`]); any other value of `checkout` is a worktree.
//! - A dry run clones nothing: it never prepares a workspace.
//!
//! # What this crate adds
//!
//! - **Once per run, for every automation of the repository**: [`Repository`] clones
//!   and sets up at most once and fetches at most once, on the first `prepare` that
//!   needs it; a failure is that task's error, and the next task tries again (so each
//!   task of a run with a failing setup fails with the setup's sentence, as the
//!   reference's do). Every task of a run starts from the commit fetched for the
//!   first.
//! - **A killed host leaves nothing half made**: the clone is made beside the
//!   checkout (`.<name>.curupira-clone`) and renamed into place once complete, so an
//!   interrupted clone is never taken for a checkout; a checkout whose setup did not
//!   finish (the host killed during it) carries a mark in its `.git` and is cloned
//!   again, as a failed setup's is. A task worktree or branch of the same name that a
//!   killed run left is replaced (removed, the branch reset to the base); a folder
//!   there that is not a worktree is removed when empty and refused otherwise.
//! - **Everything is bounded**: each git call in a
//!   [`ProcessGuard`] with a time limit
//!   ([`BaseCheckout::with_git_timeout`], [`BaseCheckout::with_transfer_timeout`] for
//!   clone and fetch), the setup too ([`BaseCheckout::with_setup_timeout`]), each
//!   killed with its process group when it runs longer, every child reaped.
//! - **Hooks work as in worktree mode**: `after_create` and `before_remove` in a
//!   task's worktree; with `checkout = "main"` only `before_run` and `after_run`, in
//!   the base checkout (as in shared mode). The cleanup policy does not apply: the
//!   reference removes every task's worktree.
//! - An empty `setup_script` runs nothing (the reference accepts it; what it does at
//!   run time was not recorded). The origin's default branch is
//!   `refs/remotes/origin/HEAD`, set by the clone; a checkout that lacks it asks the
//!   remote once (`git remote set-head origin --auto`).
//! - Names are made safe as in worktree mode (the crate's "Names"): an automation or
//!   trigger type of `[A-Za-z0-9._-]` is used as it is, anything else gets a `-` and a
//!   short hash.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use curupira_process::pipes::{self, Chunk, Stream};
use curupira_process::{ProcessGuard, describe_status};
use sha2::{Digest, Sha256};

use crate::git::{self, GitOutput};
use crate::{
    BRANCH_PREFIX, DEFAULT_HOOK_TIMEOUT, Origin, WorkspaceError, force_remove, git_ok, git_run,
    list_worktrees, remove_if_empty, sanitize_component,
};

/// What a base checkout's folder of task worktrees adds to its name:
/// `<checkout>.worktrees`.
pub const WORKTREES_SUFFIX: &str = ".worktrees";

/// The limit of a clone or a fetch when none is set: they cross the network.
pub const DEFAULT_TRANSFER_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The limit of `setup_script` when none is set: installing dependencies takes a
/// while.
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The file in a fresh clone's `.git` while its setup has not succeeded yet.
const SETUP_PENDING: &str = "curupira-setup-pending";

/// How much of the setup's stderr a message keeps.
const SETUP_STDERR_LIMIT: usize = 64 * 1024;

/// Why a repository's base checkout could not be made ready. The messages the
/// reference host prints are its own sentences; the rest name what failed and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepositoryError {
    /// The checkout's folder exists and holds no Git checkout.
    #[error("workspace destination exists but is not a Git checkout: {}", path.display())]
    NotACheckout {
        /// The checkout's folder.
        path: PathBuf,
    },
    /// The alias cannot name a folder in `workspace_dir`.
    #[error(
        "the repository alias `{alias}` cannot name a folder in {} (expected one folder name, not empty, `.` or `..`, without `/`)",
        workspace_dir.display()
    )]
    Alias {
        /// The alias.
        alias: String,
        /// The folder it was to be in.
        workspace_dir: PathBuf,
    },
    /// The checkout's path has no last component to put `.worktrees` after.
    #[error(
        "the checkout path {} does not end in a folder name, so its worktrees have no place beside it",
        path.display()
    )]
    CheckoutPath {
        /// The path.
        path: PathBuf,
    },
    /// `git clone` failed.
    #[error("cannot clone {remote} into {}: {detail}", path.display())]
    Clone {
        /// The remote.
        remote: String,
        /// The checkout it was to make.
        path: PathBuf,
        /// Git's words, or how it ended.
        detail: String,
    },
    /// The setup could not be started.
    #[error("setup_script failed to start: spawn {}: {}", program.display(), spawn_reason(program, source))]
    SetupFailedToStart {
        /// The program, the checkout joined with the whole `setup_script`.
        program: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The setup exited with a status other than 0.
    #[error("setup_script exited {code}{}", with_colon(stderr))]
    SetupExited {
        /// Its exit status.
        code: i32,
        /// Its stderr, trimmed.
        stderr: String,
    },
    /// The setup was killed by a signal (not by the host).
    #[error("setup_script {status}{}", with_colon(stderr))]
    SetupKilled {
        /// How it ended (`was killed by signal 9`).
        status: String,
        /// Its stderr, trimmed.
        stderr: String,
    },
    /// The setup ran past its limit and was killed with its process group.
    #[error(
        "setup_script {} was still running after {seconds} s and was killed with its process group",
        program.display()
    )]
    SetupTimedOut {
        /// The program.
        program: PathBuf,
        /// The limit, in seconds.
        seconds: f64,
    },
    /// The setup's end could not be waited for.
    #[error("setup_script {} could not be waited for: {source}", program.display())]
    SetupWait {
        /// The program.
        program: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The origin's default branch is not known.
    #[error(
        "cannot tell the default branch of `origin` in {} (`refs/remotes/origin/HEAD`): {detail}",
        path.display()
    )]
    DefaultBranch {
        /// The checkout.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The `git` program could not be started.
    #[error(
        "cannot run `git` in {}: {source}; a repository's checkout needs the `git` program on PATH",
        dir.display()
    )]
    GitUnavailable {
        /// Where it was to run.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A git command failed.
    #[error("`{command}` failed in {}: {detail}", dir.display())]
    Git {
        /// The command line.
        command: String,
        /// Where it ran.
        dir: PathBuf,
        /// Git's stderr on one line (bounded), or its exit status.
        detail: String,
    },
    /// A git command ran past its limit and was killed with its process group.
    #[error(
        "`{command}` was still running in {} after {seconds} s and was killed with its process group",
        dir.display()
    )]
    GitTimedOut {
        /// The command line.
        command: String,
        /// Where it ran.
        dir: PathBuf,
        /// The limit, in seconds.
        seconds: f64,
    },
    /// A folder could not be created, read, renamed or removed.
    #[error("cannot prepare the checkout folder {}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// What follows `spawn <program>: ` in the reference's sentence.
fn spawn_reason(program: &Path, source: &io::Error) -> String {
    if source.kind() == io::ErrorKind::NotFound {
        format!("program \"{}\" not found", program.display())
    } else {
        source.to_string()
    }
}

/// `: <text>`, or nothing when there is no text.
fn with_colon(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// What [`BaseCheckout::ensure`] found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ensured {
    /// It was cloned now (and set up, when a setup is configured).
    Cloned,
    /// It was there: used as it is, no setup.
    Existing,
}

/// The base of a run's task worktrees: origin's default branch, as fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    branch: String,
    commit: String,
}

impl Fetched {
    /// Origin's default branch (`main`).
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// The commit `origin/<branch>` was at after the fetch, as a full object id.
    pub fn commit(&self) -> &str {
        &self.commit
    }
}

/// One repository's base checkout: where it is, what it is cloned from, the setup run
/// after a fresh clone. Each method does its work each time it is called; a run
/// calls them through a [`Repository`], which does each once.
#[derive(Debug, Clone)]
pub struct BaseCheckout {
    path: PathBuf,
    worktrees: PathBuf,
    remote: String,
    setup_script: Option<String>,
    git_timeout: Duration,
    transfer_timeout: Duration,
    setup_timeout: Duration,
}

impl BaseCheckout {
    /// The checkout at `path` (the repository's `path`), cloned from `remote` when
    /// missing. The host passes an absolute path: a relative one is relative to the
    /// host's working directory.
    pub fn new(
        remote: impl Into<String>,
        path: impl Into<PathBuf>,
    ) -> Result<Self, RepositoryError> {
        let path = path.into();
        let Some(name) = path.file_name() else {
            return Err(RepositoryError::CheckoutPath { path });
        };
        let mut worktrees = OsString::from(name);
        worktrees.push(WORKTREES_SUFFIX);
        let worktrees = path.with_file_name(worktrees);
        Ok(BaseCheckout {
            path,
            worktrees,
            remote: remote.into(),
            setup_script: None,
            git_timeout: DEFAULT_HOOK_TIMEOUT,
            transfer_timeout: DEFAULT_TRANSFER_TIMEOUT,
            setup_timeout: DEFAULT_SETUP_TIMEOUT,
        })
    }

    /// The checkout at `<workspace_dir>/<alias>` (a repository without `path`). The
    /// alias must be one folder name.
    pub fn in_workspace_dir(
        remote: impl Into<String>,
        workspace_dir: &Path,
        alias: &str,
    ) -> Result<Self, RepositoryError> {
        let mut components = Path::new(alias).components();
        let single = matches!(
            (components.next(), components.next()),
            (Some(Component::Normal(name)), None) if name == OsStr::new(alias)
        );
        if !single {
            return Err(RepositoryError::Alias {
                alias: alias.to_owned(),
                workspace_dir: workspace_dir.to_owned(),
            });
        }
        Self::new(remote, workspace_dir.join(alias))
    }

    /// The same checkout, running `script` (relative to the checkout; the whole
    /// string is the program) once after a fresh clone. An empty script is none.
    pub fn with_setup_script(mut self, script: impl Into<String>) -> Self {
        let script = script.into();
        self.setup_script = (!script.is_empty()).then_some(script);
        self
    }

    /// The same checkout, each local git call bounded by `limit` (default
    /// [`DEFAULT_HOOK_TIMEOUT`]).
    pub fn with_git_timeout(mut self, limit: Duration) -> Self {
        self.git_timeout = limit;
        self
    }

    /// The same checkout, its clone and each fetch bounded by `limit` (default
    /// [`DEFAULT_TRANSFER_TIMEOUT`]).
    pub fn with_transfer_timeout(mut self, limit: Duration) -> Self {
        self.transfer_timeout = limit;
        self
    }

    /// The same checkout, its setup bounded by `limit` (default
    /// [`DEFAULT_SETUP_TIMEOUT`]).
    pub fn with_setup_timeout(mut self, limit: Duration) -> Self {
        self.setup_timeout = limit;
        self
    }

    /// The checkout's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where its task worktrees go: `<checkout>.worktrees`, beside it.
    pub fn worktrees_dir(&self) -> &Path {
        &self.worktrees
    }

    /// What it is cloned from.
    pub fn remote(&self) -> &str {
        &self.remote
    }

    /// The setup script, if any.
    pub fn setup_script(&self) -> Option<&str> {
        self.setup_script.as_deref()
    }

    /// Makes sure the checkout is there: an existing Git checkout is used as it is;
    /// a missing one is cloned and set up (and removed again when the setup fails);
    /// an existing folder that is not a Git checkout is refused.
    pub fn ensure(&self) -> Result<Ensured, RepositoryError> {
        if std::fs::symlink_metadata(&self.path).is_ok() {
            let git_dir = self.path.join(".git");
            if std::fs::symlink_metadata(&git_dir).is_err() {
                return Err(RepositoryError::NotACheckout {
                    path: self.path.clone(),
                });
            }
            if !git_dir.join(SETUP_PENDING).exists() {
                return Ok(Ensured::Existing);
            }
            tracing::warn!(
                "the setup of {} did not finish (the host was stopped during it); cloning it again",
                self.path.display()
            );
            remove_tree(&self.path)?;
        }
        self.clone_into_place()?;
        let Some(script) = self.setup_script.as_deref() else {
            return Ok(Ensured::Cloned);
        };
        if let Err(error) = self.run_setup(script) {
            tracing::debug!("{error}; removing the fresh clone {}", self.path.display());
            if let Err(removal) = remove_tree(&self.path) {
                tracing::warn!("{removal}");
            }
            return Err(error);
        }
        let pending = self.path.join(".git").join(SETUP_PENDING);
        std::fs::remove_file(&pending).map_err(|source| RepositoryError::Folder {
            path: pending,
            source,
        })?;
        Ok(Ensured::Cloned)
    }

    /// Clones into a folder beside the checkout, marks a setup as pending, and renames
    /// the clone into place: an interrupted clone never looks like a checkout.
    fn clone_into_place(&self) -> Result<(), RepositoryError> {
        let folder = |path: &Path| {
            let path = path.to_owned();
            move |source| RepositoryError::Folder { path, source }
        };
        let parent = self
            .path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(folder(parent))?;
        let mut name = OsString::from(".");
        name.push(self.path.file_name().unwrap_or_default());
        name.push(".curupira-clone");
        let staging = parent.join(name);
        if std::fs::symlink_metadata(&staging).is_ok() {
            tracing::debug!(
                "removing {}, left by an interrupted clone",
                staging.display()
            );
            remove_tree(&staging)?;
        }
        let here = std::env::current_dir().unwrap_or_else(|_| parent.to_owned());
        let args = [
            OsStr::new("clone"),
            OsStr::new("--quiet"),
            OsStr::new("--"),
            OsStr::new(&self.remote),
            staging.as_os_str(),
        ];
        let cloned = run_git(&here, &args, self.transfer_timeout).and_then(|output| {
            if output.success() {
                Ok(())
            } else {
                Err(RepositoryError::Clone {
                    remote: self.remote.clone(),
                    path: self.path.clone(),
                    detail: output.detail(),
                })
            }
        });
        let placed = cloned.and_then(|()| {
            if self.setup_script.is_some() {
                let pending = staging.join(".git").join(SETUP_PENDING);
                std::fs::write(&pending, b"").map_err(folder(&pending))?;
            }
            std::fs::rename(&staging, &self.path).map_err(folder(&self.path))
        });
        if placed.is_err() && std::fs::symlink_metadata(&staging).is_ok() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        placed
    }

    /// Runs the setup in the checkout, its stdout dropped and its stderr kept for the
    /// message.
    fn run_setup(&self, script: &str) -> Result<(), RepositoryError> {
        let program = self.path.join(script);
        let mut command = Command::new(&program);
        command
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in git::REPOSITORY_OVERRIDES {
            command.env_remove(name);
        }
        tracing::debug!("running setup_script {}", program.display());
        let mut setup = match ProcessGuard::spawn(&mut command) {
            Ok(setup) => setup,
            Err(source) => return Err(RepositoryError::SetupFailedToStart { program, source }),
        };
        let mut stderr = Vec::new();
        let ended = pipes::run_to_end(&mut setup, self.setup_timeout, &mut |stream, chunk| {
            if let (Stream::Stderr, Chunk::Bytes(bytes)) = (stream, chunk) {
                let take = SETUP_STDERR_LIMIT
                    .saturating_sub(stderr.len())
                    .min(bytes.len());
                stderr.extend_from_slice(&bytes[..take]);
            }
        });
        let status: ExitStatus = match ended {
            Ok(Ok(status)) => status,
            Ok(Err(_)) => {
                return Err(RepositoryError::SetupTimedOut {
                    program,
                    seconds: self.setup_timeout.as_secs_f64(),
                });
            }
            Err(source) => return Err(RepositoryError::SetupWait { program, source }),
        };
        if status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
        Err(match status.code() {
            Some(code) => RepositoryError::SetupExited { code, stderr },
            None => RepositoryError::SetupKilled {
                status: describe_status(status),
                stderr,
            },
        })
    }

    /// `git fetch origin`, then origin's default branch and the commit it is at now.
    pub fn fetch(&self) -> Result<Fetched, RepositoryError> {
        run_git_ok(
            &self.path,
            &[
                OsStr::new("fetch"),
                OsStr::new("--quiet"),
                OsStr::new("origin"),
            ],
            self.transfer_timeout,
        )?;
        let branch = self.default_branch()?;
        let spelled = format!("refs/remotes/origin/{branch}^{{commit}}");
        let output = run_git_ok(
            &self.path,
            &[
                OsStr::new("rev-parse"),
                OsStr::new("--verify"),
                OsStr::new(&spelled),
            ],
            self.git_timeout,
        )?;
        Ok(Fetched {
            branch,
            commit: output.stdout.trim().to_owned(),
        })
    }

    /// Origin's default branch, from `refs/remotes/origin/HEAD` (which a clone sets);
    /// when a checkout lacks it, the remote is asked once to set it.
    pub fn default_branch(&self) -> Result<String, RepositoryError> {
        if let Some(branch) = self.origin_head()? {
            return Ok(branch);
        }
        let asked = run_git(
            &self.path,
            &[
                OsStr::new("remote"),
                OsStr::new("set-head"),
                OsStr::new("origin"),
                OsStr::new("--auto"),
            ],
            self.transfer_timeout,
        )?;
        if let Some(branch) = self.origin_head()? {
            return Ok(branch);
        }
        Err(RepositoryError::DefaultBranch {
            path: self.path.clone(),
            detail: if asked.success() {
                "`git remote set-head origin --auto` did not set it".to_owned()
            } else {
                asked.detail()
            },
        })
    }

    /// The branch `refs/remotes/origin/HEAD` points at, if it is set.
    fn origin_head(&self) -> Result<Option<String>, RepositoryError> {
        let output = run_git(
            &self.path,
            &[
                OsStr::new("symbolic-ref"),
                OsStr::new("--quiet"),
                OsStr::new("refs/remotes/origin/HEAD"),
            ],
            self.git_timeout,
        )?;
        let target = output.stdout.trim();
        Ok(output
            .success()
            .then(|| target.strip_prefix("refs/remotes/origin/"))
            .flatten()
            .filter(|branch| !branch.is_empty())
            .map(str::to_owned))
    }
}

/// One repository for one run, shared by its automations (clone it freely): the base
/// checkout made ready **once**, and fetched **once**, by the first task that needs
/// it. A failed attempt is remembered by nobody: the next task tries again.
#[derive(Debug, Clone)]
pub struct Repository(Arc<Once>);

#[derive(Debug)]
struct Once {
    checkout: BaseCheckout,
    /// One preparation at a time; the others wait for it.
    gate: Mutex<()>,
    ensured: OnceLock<Ensured>,
    fetched: OnceLock<Fetched>,
}

impl Repository {
    /// The run's handle on `checkout`; nothing is done yet.
    pub fn new(checkout: BaseCheckout) -> Self {
        Repository(Arc::new(Once {
            checkout,
            gate: Mutex::new(()),
            ensured: OnceLock::new(),
            fetched: OnceLock::new(),
        }))
    }

    /// The base checkout.
    pub fn checkout(&self) -> &BaseCheckout {
        &self.0.checkout
    }

    /// [`BaseCheckout::ensure`], the first time it succeeds in this run; afterwards
    /// what it did then.
    pub fn ensure_once(&self) -> Result<Ensured, RepositoryError> {
        if let Some(ensured) = self.0.ensured.get() {
            return Ok(*ensured);
        }
        let _gate = self.0.gate.lock().unwrap_or_else(PoisonError::into_inner);
        self.ensure_locked()
    }

    fn ensure_locked(&self) -> Result<Ensured, RepositoryError> {
        if let Some(ensured) = self.0.ensured.get() {
            return Ok(*ensured);
        }
        let ensured = self.0.checkout.ensure()?;
        Ok(*self.0.ensured.get_or_init(|| ensured))
    }

    /// The checkout ensured ([`ensure_once`](Self::ensure_once)), then
    /// [`BaseCheckout::fetch`] the first time it succeeds in this run; afterwards what
    /// it fetched then, so every task of the run starts from the same commit.
    pub fn fetch_once(&self) -> Result<&Fetched, RepositoryError> {
        if let Some(fetched) = self.0.fetched.get() {
            return Ok(fetched);
        }
        let _gate = self.0.gate.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(fetched) = self.0.fetched.get() {
            return Ok(fetched);
        }
        self.ensure_locked()?;
        let fetched = self.0.checkout.fetch()?;
        Ok(self.0.fetched.get_or_init(|| fetched))
    }

    /// What this run fetched, once it did.
    pub fn fetched(&self) -> Option<&Fetched> {
        self.0.fetched.get()
    }
}

/// Where an automation's tasks run in its repository (the automation's `checkout`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskCheckout {
    /// A fresh worktree per task (the default, and any `checkout` but `"main"`),
    /// named after the automation's trigger type.
    Worktree {
        /// The automation's `trigger_type` (`github/issues`).
        trigger_type: String,
    },
    /// The base checkout itself, shared by the tasks (`checkout = "main"`).
    Main,
}

/// The last component of a task's worktree and branch:
/// `<trigger_type with / as ->-<hash>`, the hash being the SHA-256, in lowercase hex,
/// of `task_id` (the item's 64 hex digits, as a task id is written).
///
/// ```
/// use curupira_workspace::repository::worktree_name;
///
/// // As the reference host named the worktree of the item `title = "a", n = "1"`.
/// let task_id = "ca4b62f03de05de962fb2609ac7ab2caf7728140a297f5fc2a6edb41568e91d7";
/// assert_eq!(
///     worktree_name("rec/items", task_id),
///     "rec-items-046732844e3c38b2ee2eec0d1e0ec873ff84b1822c26bd729917de82845ee329",
/// );
/// ```
pub fn worktree_name(trigger_type: &str, task_id: &str) -> String {
    let trigger = sanitize_component(&trigger_type.replace('/', "-"));
    let digest = Sha256::digest(task_id.as_bytes());
    let mut name = String::with_capacity(trigger.len() + 1 + 64);
    name.push_str(&trigger);
    name.push('-');
    for byte in digest {
        name.push_str(&format!("{byte:02x}"));
    }
    name
}

/// A task's branch in its repository: `curupira/<automation>/<worktree name>`.
///
/// ```
/// let task_id = "ca4b62f03de05de962fb2609ac7ab2caf7728140a297f5fc2a6edb41568e91d7";
/// assert_eq!(
///     curupira_workspace::repository::task_branch("e1", "rec/items", task_id),
///     "curupira/e1/rec-items-046732844e3c38b2ee2eec0d1e0ec873ff84b1822c26bd729917de82845ee329",
/// );
/// ```
pub fn task_branch(automation: &str, trigger_type: &str, task_id: &str) -> String {
    TaskNames::new(automation, trigger_type, task_id).branch
}

/// A task's worktree folder: `<checkout>.worktrees/<automation>/<worktree name>`.
pub fn task_worktree_path(
    checkout: &BaseCheckout,
    automation: &str,
    trigger_type: &str,
    task_id: &str,
) -> PathBuf {
    TaskNames::new(automation, trigger_type, task_id).path(checkout)
}

/// A task's names in its repository.
pub(crate) struct TaskNames {
    automation: String,
    name: String,
    pub(crate) branch: String,
}

impl TaskNames {
    pub(crate) fn new(automation: &str, trigger_type: &str, task_id: &str) -> Self {
        let automation = sanitize_component(automation);
        let name = worktree_name(trigger_type, task_id);
        let branch = format!("{BRANCH_PREFIX}/{automation}/{name}");
        TaskNames {
            automation,
            name,
            branch,
        }
    }

    pub(crate) fn path(&self, checkout: &BaseCheckout) -> PathBuf {
        checkout
            .worktrees_dir()
            .join(&self.automation)
            .join(&self.name)
    }
}

/// Makes a fresh worktree for a task, replacing whatever an earlier run left under its
/// name; returns its folder (as named, checked to resolve inside the worktrees
/// folder).
pub(crate) fn add_task_worktree(
    checkout: &BaseCheckout,
    names: &TaskNames,
    base: &str,
    limit: Duration,
) -> Result<(PathBuf, Origin), WorkspaceError> {
    let path = task_folder(checkout, names)?;
    let repo = checkout.path();
    let branch = names.branch.as_str();
    let _turn = git::worktree_changes();
    let add = |flag: &'static str| {
        [
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--quiet"),
            OsStr::new(flag),
            OsStr::new(branch),
            path.as_os_str(),
            OsStr::new(base),
        ]
    };
    if std::fs::symlink_metadata(&path).is_err() {
        let fresh = git_run(repo, &add("-b"), limit)?;
        if fresh.success() {
            return Ok((path, Origin::Created));
        }
        tracing::debug!("fast worktree add failed ({}); looking why", fresh.detail());
    }
    git_ok(repo, &[OsStr::new("worktree"), OsStr::new("prune")], limit)?;
    let listed = list_worktrees(repo, limit)?;
    if listed.iter().any(|entry| same_place(&entry.path, &path)) {
        tracing::warn!(
            "{} was left by an earlier run; replacing it with a fresh worktree",
            path.display()
        );
        git_ok(repo, &force_remove(&path), limit)?;
    } else if std::fs::symlink_metadata(&path).is_ok() {
        remove_if_empty(&path, branch)?;
    }
    let branch_ref = format!("refs/heads/{branch}");
    if let Some(elsewhere) = listed.iter().find(|entry| {
        entry.branch.as_deref() == Some(branch_ref.as_str())
            && !entry.prunable
            && !same_place(&entry.path, &path)
    }) {
        return Err(WorkspaceError::BranchInUse {
            branch: branch.to_owned(),
            elsewhere: elsewhere.path.clone(),
        });
    }
    // `-B`: a branch of this name an earlier run left starts again from the base.
    git_ok(repo, &add("-B"), limit)?;
    Ok((path, Origin::Created))
}

/// Removes a task's worktree and its branch; a worktree whose folder is gone is
/// pruned instead.
pub(crate) fn remove_task_worktree(
    repo: &Path,
    path: &Path,
    branch: &str,
    limit: Duration,
) -> Result<(), WorkspaceError> {
    let _turn = git::worktree_removal();
    if std::fs::symlink_metadata(path).is_ok() {
        git_ok(repo, &force_remove(path), limit)?;
    } else {
        tracing::debug!("{} is already gone; pruning", path.display());
        git_ok(repo, &[OsStr::new("worktree"), OsStr::new("prune")], limit)?;
    }
    let branch_ref = format!("refs/heads/{branch}");
    if crate::branch_exists(repo, &branch_ref, limit)? {
        git_ok(
            repo,
            &[OsStr::new("branch"), OsStr::new("-D"), OsStr::new(branch)],
            limit,
        )?;
    }
    Ok(())
}

/// Creates `<checkout>.worktrees/<automation>` and returns the task's folder in it,
/// refusing one that resolves elsewhere (a symbolic link planted there).
fn task_folder(checkout: &BaseCheckout, names: &TaskNames) -> Result<PathBuf, WorkspaceError> {
    let folder_error = |path: &Path| {
        let path = path.to_owned();
        move |source| WorkspaceError::Folder { path, source }
    };
    let parent = checkout.worktrees_dir().join(&names.automation);
    std::fs::create_dir_all(&parent).map_err(folder_error(&parent))?;
    let root = checkout
        .worktrees_dir()
        .canonicalize()
        .map_err(folder_error(checkout.worktrees_dir()))?;
    let path = parent.join(&names.name);
    let inside = |meant: &Path| -> Result<(), WorkspaceError> {
        let resolved = meant.canonicalize().map_err(folder_error(meant))?;
        if resolved.starts_with(&root) && resolved != root {
            Ok(())
        } else {
            Err(WorkspaceError::OutsideRoot {
                path: meant.to_owned(),
                resolved,
                root: root.clone(),
            })
        }
    };
    inside(&parent)?;
    if std::fs::symlink_metadata(&path).is_ok() {
        inside(&path)?;
    }
    Ok(path)
}

/// Whether two paths name the same place (either may go through a symbolic link).
fn same_place(recorded: &Path, ours: &Path) -> bool {
    recorded == ours
        || matches!(
            (recorded.canonicalize(), ours.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Removes a folder the host made, with everything in it.
fn remove_tree(path: &Path) -> Result<(), RepositoryError> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RepositoryError::Folder {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Runs git; only one that cannot start, or runs too long, is an error.
fn run_git(dir: &Path, args: &[&OsStr], limit: Duration) -> Result<GitOutput, RepositoryError> {
    let ended = git::run(dir, args, limit).map_err(|source| RepositoryError::GitUnavailable {
        dir: dir.to_owned(),
        source,
    })?;
    ended.map_err(|_| RepositoryError::GitTimedOut {
        command: git::command_line(args),
        dir: dir.to_owned(),
        seconds: limit.as_secs_f64(),
    })
}

/// Runs git; a non-zero exit is an error quoting its stderr.
fn run_git_ok(dir: &Path, args: &[&OsStr], limit: Duration) -> Result<GitOutput, RepositoryError> {
    let output = run_git(dir, args, limit)?;
    if output.success() {
        return Ok(output);
    }
    Err(RepositoryError::Git {
        command: git::command_line(args),
        dir: dir.to_owned(),
        detail: output.detail(),
    })
}

#[cfg(test)]
mod tests;
