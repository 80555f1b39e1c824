//! Where a Curupira task's agent works: the config's folder (`shared`), a Git
//! worktree of its own on a branch of its own (`worktree`), or a repository of its own
//! (`[repositories.<alias>]`, the [`repository`] module: cloned on demand, a fresh
//! worktree per task), with the operator's four hooks around it and the cleanup policy
//! after it. Beside it, the rest of a host's Git and folder work: [`state`] (the
//! host's state folder `.curupira/` and the lock that keeps one `curupira run` per
//! state) and [`forge`] (the repository's identity, `owner/name`, from its Git remote).
//!
//! The scheduler holds one [`Workspaces`] per automation and run (the spec with its
//! base resolved once), calls [`Workspaces::prepare`] for each task, runs the hooks
//! through [`Workspace::run_hook`] at the moments named below, gives the agent
//! [`Workspace::path`] as its working directory and [`Workspace::env`] in its
//! environment, and ends with [`Workspace::finish`]. The attempts of one task share
//! its workspace: it is prepared before the first and finished after the last.
//!
//! ```
//! use curupira_workspace::{HookKind, WorkspaceSpec, Workspaces};
//!
//! let folder = std::env::temp_dir();
//! let workspaces = Workspaces::new(WorkspaceSpec::new(&folder))?; // shared mode
//! let workspace = workspaces.prepare("review", "0123456789abcdef")?;
//! assert_eq!(workspace.path(), folder);
//! workspace.run_hook(HookKind::BeforeRun)?; // none configured: nothing runs
//! workspace.finish(true)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modes
//!
//! - **`shared`** (the default, the host's behaviour before workspaces): the workspace
//!   is the config's folder. Nothing is created or removed, git is never run, and
//!   `CURUPIRA_BRANCH` is empty.
//! - **`worktree`**: each task gets `git worktree add` of the repository the config's
//!   folder belongs to, on the branch `curupira/<automation>/<task>` (`<task>` is the
//!   first 12 hex digits of the task id), in the folder `<root>/<automation>/<task>`
//!   (the same two names, so one leads to the other). The workspace is the top of that
//!   checkout, whichever subfolder of the repository the config sits in.
//! - **a repository** ([`Workspaces::in_repository`]): the reference host's
//!   `[repositories.<alias>]`. Its base checkout is cloned (and set up) when missing
//!   and fetched once per run; each task gets a fresh worktree
//!   `<checkout>.worktrees/<automation>/<trigger type>-<hash>` on the branch
//!   `curupira/<automation>/<same name>`, made from the fetched origin default branch
//!   and removed with its branch after the task, whatever its outcome; with
//!   `checkout = "main"` the tasks share the base checkout itself. The [`repository`]
//!   module says what is the reference's and what is ours. The sections below are
//!   about `worktree` mode, except "Hooks", which holds for both.
//!
//! # Names
//!
//! Both components are sanitised: characters outside `[A-Za-z0-9._-]` become `-`; a
//! `.` right after a `.` becomes `-` (no `..`); leading `.` and `-` and trailing `.`
//! are dropped; a final `.lock` becomes `-lock` (Git refuses it); an empty result
//! becomes `unnamed`; the automation's part is at most 64 characters. When sanitising
//! changed anything, `-` and 8 hex digits of a hash of the original text are
//! appended (within the 64), so `a/b` and `a-b` keep distinct branches and folders.
//! The result is a valid folder name and branch component everywhere.
//!
//! # Root and base
//!
//! - `root` defaults to `<config folder>/.curupira/worktrees`; a relative `root` is
//!   relative to the config's folder. When the host creates `<config folder>/.curupira`
//!   itself it writes a `.gitignore` of `*` in it, so Git and code-search tools ignore
//!   the worktrees. A `root` elsewhere gets no `.gitignore` (it is the operator's
//!   folder; one inside the repository belongs in the operator's own `.gitignore`).
//! - The workspace must resolve inside `root`: the root and the automation's folder
//!   are canonicalised (symbolic links followed) and a path that lands elsewhere (a
//!   symbolic link planted under the root) is refused with
//!   [`WorkspaceError::OutsideRoot`]. The path given to the agent is the canonical
//!   one.
//! - `base` (a branch, tag or commit; default `HEAD`) is resolved to a commit **once**,
//!   when the run starts ([`resolve_base`], called by [`Workspaces::new`]), so every
//!   task of a run starts from the same commit even if the branch moves meanwhile. A
//!   base beginning with `-` is refused (it would read as an option).
//!
//! # A task prepared again
//!
//! The host never deletes a branch: the agent's work lives there. So a task prepared
//! again (a retry in a later run, a run that was killed) continues where the last one
//! stopped:
//!
//! - its worktree still exists and is registered on its branch: it is **reused** as it
//!   is, uncommitted changes included ([`Origin::Reused`]);
//! - its folder is gone but Git still lists it (removed by hand): `git worktree prune`,
//!   then as below;
//! - its branch exists without a worktree (an earlier run removed it): a new worktree
//!   of **that branch** is added, and `base` is not used ([`Origin::Recreated`]);
//! - a worktree `git worktree add` left half made (the host killed during the
//!   checkout; Git's lock says `initializing`) is removed and added again;
//! - the folder exists but is not a worktree of the task's branch: an empty folder is
//!   removed; anything else is refused ([`WorkspaceError::PathTaken`]): the host never
//!   deletes what it did not make;
//! - the branch is checked out somewhere else (an operator looking at it, the same
//!   task in another process): refused ([`WorkspaceError::BranchInUse`]).
//!
//! The common case costs one `git worktree add`; the listing and pruning happen only
//! when that fails. Adding, removing and pruning worktrees take turns within the host
//! (hooks and agents do not): Git's own `worktree add` fails now and then when another
//! runs beside it in the same repository.
//!
//! # Hooks
//!
//! Each hook is one shell command, run as `sh -c COMMAND` with the workspace as its
//! working directory, stdin closed, stdout and stderr on the host's stderr (beside the
//! logs), and `CURUPIRA_WORKSPACE`, `CURUPIRA_BRANCH`, `CURUPIRA_AUTOMATION`,
//! `CURUPIRA_TASK_ID` and `CURUPIRA_HOOK` (its own name) added to the host's
//! environment (and, with a watchdog, `CURUPIRA_RUN`: its label). It runs in a
//! [`ProcessGuard`]: in a process group of its own, bounded by `hook_timeout` (on
//! expiry the whole group is killed and the hook fails), killed the same way on the
//! host's second stop signal ([`Workspaces::with_stop`], the rule the agent follows),
//! and whatever it leaves running in its group is killed when it exits; what it
//! detached from its group (`setsid`) is stopped by the run's watchdog shortly after
//! (`curupira_process::watchdog`). Start services through a service manager, not with `&`.
//!
//! | hook | when | on failure |
//! |---|---|---|
//! | `after_create` | after every `prepare` in worktree mode (scheduler) | the task fails |
//! | `before_run` | before each attempt of the agent (scheduler) | the attempt fails |
//! | `after_run` | after each attempt, whatever its outcome (scheduler) | logged only |
//! | `before_remove` | in [`Workspace::finish`], before each removal | logged only |
//!
//! - `after_create` runs on every prepare in worktree mode, also when a worktree is
//!   reused: a run killed during its `after_create` left an unfinished setup, and
//!   setup commands (installing dependencies, copying an env file) are repeatable.
//! - A failed `after_create` is a failed task, and its worktree follows the cleanup
//!   policy like any failed task's (kept by `on-success` for inspection); it is not
//!   removed specially, because the next prepare runs `after_create` again.
//! - In shared mode there is nothing to create or remove, so `after_create` and
//!   `before_remove` never run; `before_run` and `after_run` do, in the config's
//!   folder (an operator's "before every agent" command is wanted in both modes).
//!
//! # Cleanup
//!
//! [`Workspace::finish`] removes a worktree (`git worktree remove --force`, untracked
//! files included) when `cleanup` says so: `on-success` (the default) removes it when
//! the task succeeded and keeps a failed task's for inspection, `always` removes it,
//! `never` keeps it. The branch always stays. A worktree whose folder is already gone
//! is pruned instead. A [`Workspace`] dropped without `finish` (a panic, a killed
//! host) leaves its worktree in place, to be reused by the next prepare.
//!
//! # Git
//!
//! The `git` program is run (what users have), each call in a [`ProcessGuard`], with
//! stdin closed, `GIT_TERMINAL_PROMPT=0`, untranslated messages, and the variables
//! that would point it at another repository (`GIT_DIR`, `GIT_WORK_TREE`, …) removed
//! — also for hooks. Each git call is bounded by `hook_timeout` (default 60 s; raise
//! it for a repository whose checkout takes longer): one that runs longer is killed
//! with its process group and fails the preparation or removal
//! ([`WorkspaceError::GitTimedOut`]). Their output is read on the calling thread.
//! [`check_worktree_mode`] is what `validate` asks: `git` can run and the config's
//! folder is inside a work tree.
//!
//! # What this crate is, and is not
//!
//! It was the `curupira-host` modules `workspace`, `state` and `forge`, moved out
//! (issue 28) so that the host's run loop, and an orchestrator crate after it, use them
//! without the app. The decisions:
//!
//! - **No file format, no command line.** The crate knows no TOML, no serde and no
//!   clap: [`WorkspaceMode`], [`Cleanup`] and [`Hooks`] are plain data, and
//!   [`WorkspaceSpec`] is everything it is told. A host converts its own settings into
//!   them in one place (the `curupira` binary converts `curupira.toml`'s
//!   `[settings.workspace]`, whose spellings `shared`, `on-success`, … and whose
//!   diagnostics stay the config's).
//! - **Processes are `curupira-process`'s**: every git call and hook lives in a
//!   [`ProcessGuard`], its pipes are driven by `curupira_process::pipes`, a hook's
//!   output is forwarded by `curupira_process::lines` to `curupira_process::stderr`,
//!   stop requests are its [`Stop`], the watchdog its [`Watch`].
//! - **[`state`] lives here** because the worktrees live in the state folder
//!   (`.curupira/worktrees`, whose `.gitignore` [`state::host_folder`] writes), and its
//!   [`RunLock`](state::RunLock) came along: it is the state folder's lock, which the
//!   run loop takes without needing the app.
//! - **[`forge`] lives here** because it is the host's other Git work (`git remote
//!   get-url origin`, run under the same guard and pipes, bounded by
//!   [`DEFAULT_HOOK_TIMEOUT`]), and `gix-url` with it.
//! - **Messages are the host's, unchanged**: they still name the config's keys
//!   (`hook_timeout_seconds`) and `curupira run`, which is what an operator reads.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod forge;
mod git;
mod policy;
pub mod repository;
pub mod state;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use curupira_process::{ProcessGuard, describe_status};

pub use self::git::{ExpectedAdd, expect_add};
use self::git::{GitOutput, Listed};
use crate::repository::{Repository, RepositoryError, TaskCheckout};
use crate::state::HOST_FOLDER;
use curupira_process::stop::Stop;
use curupira_process::watchdog::{RUN_VAR, Watch};

/// The hook timeout when the config sets none.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// Where `root` is under the config's folder when the config sets none.
pub const DEFAULT_ROOT: &str = ".curupira/worktrees";

/// The prefix of every branch the host creates.
const BRANCH_PREFIX: &str = "curupira";

/// How many characters of the task id name a task's branch and folder.
const TASK_ID_DIGITS: usize = 12;

/// The longest automation part of a branch or folder name.
const MAX_COMPONENT: usize = 64;

/// How often a running hook is looked at (its end, the timeout, a stop request).
const HOOK_POLL: Duration = Duration::from_millis(5);

/// The lock reason `git worktree add` leaves while it checks out.
const INITIALIZING_LOCK: &str = "initializing";

pub use self::policy::{Cleanup, Hooks, WorkspaceMode};

/// One of the four hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookKind {
    /// `after_create`.
    AfterCreate,
    /// `before_run`.
    BeforeRun,
    /// `after_run`.
    AfterRun,
    /// `before_remove`.
    BeforeRemove,
}

impl HookKind {
    /// The hook's name as the config spells it (`after_create`).
    pub fn name(self) -> &'static str {
        match self {
            HookKind::AfterCreate => "after_create",
            HookKind::BeforeRun => "before_run",
            HookKind::AfterRun => "after_run",
            HookKind::BeforeRemove => "before_remove",
        }
    }

    /// Whether the hook runs in shared mode (nothing is created or removed there).
    fn runs_in_shared_mode(self) -> bool {
        matches!(self, HookKind::BeforeRun | HookKind::AfterRun)
    }
}

impl fmt::Display for HookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything the host needs to know about an automation's workspaces; the host
/// converts its configuration (`curupira.toml`'s `[settings.workspace]` and an
/// automation's override) into this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSpec {
    /// Shared or worktree.
    pub mode: WorkspaceMode,
    /// The config's folder: the shared workspace, and the repository worktrees are
    /// made of.
    pub repo_dir: PathBuf,
    /// The folder worktrees are made in; relative to `repo_dir` when relative.
    pub root: PathBuf,
    /// What new branches start from (a branch, tag or commit); `None` is `HEAD`.
    /// Resolved once per run.
    pub base: Option<String>,
    /// When worktrees are removed.
    pub cleanup: Cleanup,
    /// How long each hook may run.
    pub hook_timeout: Duration,
    /// The shell commands run around a task.
    pub hooks: Hooks,
}

impl WorkspaceSpec {
    /// The defaults for a config in `repo_dir`: shared mode, root
    /// `.curupira/worktrees`, base `HEAD`, cleanup on success, 60 s hooks, no hooks.
    pub fn new(repo_dir: impl Into<PathBuf>) -> Self {
        WorkspaceSpec {
            mode: WorkspaceMode::Shared,
            repo_dir: repo_dir.into(),
            root: PathBuf::from(DEFAULT_ROOT),
            base: None,
            cleanup: Cleanup::OnSuccess,
            hook_timeout: DEFAULT_HOOK_TIMEOUT,
            hooks: Hooks::default(),
        }
    }

    /// The root as a path: `root` itself when absolute, else under `repo_dir`.
    pub fn root_dir(&self) -> PathBuf {
        self.repo_dir.join(&self.root)
    }
}

/// Why a workspace could not be prepared or removed. Each message is one sentence
/// naming what failed, where, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The `git` program could not be started.
    #[error("cannot run `git` in {dir}: {source}; worktree mode needs the `git` program on PATH")]
    GitUnavailable {
        /// The folder git was to run in.
        dir: PathBuf,
        /// Why it could not start.
        source: io::Error,
    },
    /// A git command failed.
    #[error("`{command}` failed in {dir}: {detail}")]
    Git {
        /// The command line.
        command: String,
        /// The folder it ran in.
        dir: PathBuf,
        /// Git's stderr on one line (bounded), or its exit status.
        detail: String,
    },
    /// A git command ran past its time limit (the hook timeout) and was killed.
    #[error(
        "`{command}` was still running in {dir} after {seconds} s (the workspace's `hook_timeout_seconds`) and was killed with its process group"
    )]
    GitTimedOut {
        /// The command line.
        command: String,
        /// The folder it ran in.
        dir: PathBuf,
        /// The limit, in seconds.
        seconds: f64,
    },
    /// The base does not name a commit.
    #[error(
        "the workspace base `{base}` does not name a commit in the repository at {dir} (expected a branch, tag or commit): {detail}"
    )]
    Base {
        /// The base as configured (`HEAD` by default).
        base: String,
        /// The config's folder.
        dir: PathBuf,
        /// Why, from git.
        detail: String,
    },
    /// A folder could not be created, read or canonicalised.
    #[error("cannot prepare the folder {path} for worktrees: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The workspace would resolve outside the root.
    #[error(
        "the workspace {path} resolves to {resolved}, outside the worktree root {root}; refusing to use it (remove the symbolic link that leads there)"
    )]
    OutsideRoot {
        /// The path the host meant.
        path: PathBuf,
        /// Where it leads.
        resolved: PathBuf,
        /// The canonical root.
        root: PathBuf,
    },
    /// The workspace's folder holds something the host did not make.
    #[error(
        "{path} already exists and is not a worktree of branch `{branch}` ({found}); move it away or delete it, then run the task again"
    )]
    PathTaken {
        /// The folder.
        path: PathBuf,
        /// The task's branch.
        branch: String,
        /// What is there instead.
        found: String,
    },
    /// The task's branch is checked out in another worktree.
    #[error(
        "branch `{branch}` is already checked out at {elsewhere}, so the task cannot get a worktree of it; finish with or remove that checkout first"
    )]
    BranchInUse {
        /// The task's branch.
        branch: String,
        /// Where it is checked out.
        elsewhere: PathBuf,
    },
    /// A repository's base checkout could not be made ready (its clone, setup or
    /// fetch): the message is the repository's, the reference host's sentence where it
    /// has one.
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// Why a hook failed. Each message is one sentence naming the hook, its command and
/// its folder.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// `sh` could not be started.
    #[error("the {hook} hook `{command}` could not be started in {dir}: {source}")]
    Spawn {
        /// Which hook.
        hook: HookKind,
        /// Its command.
        command: String,
        /// The workspace.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The hook ended unsuccessfully.
    #[error(
        "the {hook} hook `{command}` {status} in {dir} (expected status 0; its output is in the host's log)"
    )]
    Failed {
        /// Which hook.
        hook: HookKind,
        /// Its command.
        command: String,
        /// The workspace.
        dir: PathBuf,
        /// How it ended (`exited with status 3`).
        status: String,
    },
    /// The host's second stop request (SIGINT/SIGTERM) killed the hook.
    #[error(
        "the {hook} hook `{command}` was killed in {dir} with its process group because the host was told to stop a second time"
    )]
    Stopped {
        /// Which hook.
        hook: HookKind,
        /// Its command.
        command: String,
        /// The workspace.
        dir: PathBuf,
    },
    /// The hook ran past the timeout and was killed with its process group.
    #[error(
        "the {hook} hook `{command}` was still running in {dir} after {seconds} s and was killed with its process group"
    )]
    TimedOut {
        /// Which hook.
        hook: HookKind,
        /// Its command.
        command: String,
        /// The workspace.
        dir: PathBuf,
        /// The timeout, in seconds.
        seconds: f64,
    },
}

/// Why the host killed a hook.
#[derive(Debug, Clone, Copy)]
enum CutShort {
    TimedOut,
    Stopped,
}

/// How a prepared workspace came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A folder the tasks share: the config's folder (shared mode), or a repository's
    /// base checkout ([`TaskCheckout::Main`]).
    Shared,
    /// A new worktree on a new branch from the base (in a repository, also one that
    /// replaced what an earlier run left under the task's name).
    Created,
    /// A new worktree of the task's branch, left by an earlier run.
    Recreated,
    /// The worktree an earlier run left, as it was.
    Reused,
}

/// What [`Workspace::finish`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// Nothing: a shared workspace, or a worktree kept by the cleanup policy.
    Kept,
    /// The worktree was removed; its branch stays in worktree mode, and goes with it
    /// in a repository ([`Workspaces::in_repository`]).
    Removed,
}

/// An automation's workspaces for one run: the spec, with the base resolved once.
#[derive(Debug, Clone)]
pub struct Workspaces {
    spec: Arc<WorkspaceSpec>,
    /// Where the tasks go.
    place: Place,
    /// Kills hooks on the second request.
    stop: Option<Stop>,
    /// Told about each hook's process group (see [`with_watch`](Self::with_watch)).
    watch: Option<Watch>,
}

/// Where an automation's tasks go.
#[derive(Debug, Clone)]
enum Place {
    /// The config's folder.
    Shared,
    /// A worktree of the config's repository each, from this commit.
    Worktree { base: String },
    /// A repository of its own ([`repository`]).
    Repository {
        repository: Repository,
        checkout: TaskCheckout,
    },
}

impl Workspaces {
    /// Fixes the spec for this run: in worktree mode the base is resolved to a commit
    /// now ([`resolve_base`]), so every task of the run starts from the same one.
    pub fn new(spec: WorkspaceSpec) -> Result<Self, WorkspaceError> {
        let place = match spec.mode {
            WorkspaceMode::Shared => Place::Shared,
            WorkspaceMode::Worktree => Place::Worktree {
                base: resolve_base(&spec)?,
            },
        };
        Ok(Workspaces {
            spec: Arc::new(spec),
            place,
            stop: None,
            watch: None,
        })
    }

    /// An automation's workspaces in a repository of its own (`[repositories.<alias>]`,
    /// the [`repository`] module): a fresh worktree per task, or the base checkout
    /// itself ([`TaskCheckout::Main`]). Nothing is done yet: the first
    /// [`prepare`](Self::prepare) of the run clones, sets up and fetches, once for all
    /// the automations sharing `repository`. Of `spec`, the hooks and `hook_timeout`
    /// (each hook, and each git call on a task's worktree) count; its mode, root, base
    /// and cleanup do not (a task's worktree is always removed with its branch).
    pub fn in_repository(
        spec: WorkspaceSpec,
        repository: Repository,
        checkout: TaskCheckout,
    ) -> Self {
        Workspaces {
            spec: Arc::new(spec),
            place: Place::Repository {
                repository,
                checkout,
            },
            stop: None,
            watch: None,
        }
    }

    /// The same workspaces, whose hooks are killed (with their process groups) when
    /// `stop` counts a second request during them, as the agent is.
    pub fn with_stop(mut self, stop: Stop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The same workspaces, whose hooks the run's watchdog knows about while they
    /// run, as it knows the agents: a host that dies (SIGKILL included) leaves no
    /// hook running ([`curupira_process::watchdog`]; SIGTERM, [`HOOK_KILL_GRACE`], SIGKILL).
    pub fn with_watch(mut self, watch: Option<Watch>) -> Self {
        self.watch = watch;
        self
    }

    /// Whether [`prepare`](Self::prepare) adds a worktree (worktree mode, or a
    /// repository's task worktrees).
    pub fn adds_worktrees(&self) -> bool {
        match &self.place {
            Place::Shared => false,
            Place::Worktree { .. } => true,
            Place::Repository { checkout, .. } => matches!(checkout, TaskCheckout::Worktree { .. }),
        }
    }

    /// The spec.
    pub fn spec(&self) -> &WorkspaceSpec {
        &self.spec
    }

    /// The commit new branches start from: worktree mode's, or a repository's once
    /// this run fetched it.
    pub fn base(&self) -> Option<&str> {
        match &self.place {
            Place::Shared => None,
            Place::Worktree { base } => Some(base),
            Place::Repository {
                repository,
                checkout: TaskCheckout::Worktree { .. },
            } => repository.fetched().map(repository::Fetched::commit),
            Place::Repository { .. } => None,
        }
    }

    /// Where [`prepare`](Self::prepare) puts the task's workspace, without touching the
    /// disk: the config's folder (shared mode), `root/<automation>/<task>` (worktree
    /// mode; not canonicalised, so it differs from [`Workspace::path`] when `root`
    /// goes through a symbolic link), or in a repository the base checkout or
    /// `<checkout>.worktrees/<automation>/<worktree name>`.
    pub fn planned_path(&self, automation: &str, task_id: &str) -> PathBuf {
        match &self.place {
            Place::Shared => self.spec.repo_dir.clone(),
            Place::Worktree { .. } => {
                let names = TaskNames::new(automation, task_id);
                self.spec
                    .root_dir()
                    .join(&names.automation)
                    .join(&names.task)
            }
            Place::Repository {
                repository,
                checkout: TaskCheckout::Worktree { trigger_type },
            } => repository::TaskNames::new(automation, trigger_type, task_id)
                .path(repository.checkout()),
            Place::Repository { repository, .. } => repository.checkout().path().to_owned(),
        }
    }

    /// The branch [`prepare`](Self::prepare) puts the task on, without touching the
    /// disk: none in a shared folder, else [`task_branch`] or
    /// [`repository::task_branch`].
    pub fn planned_branch(&self, automation: &str, task_id: &str) -> Option<String> {
        match &self.place {
            Place::Worktree { .. } => Some(task_branch(automation, task_id)),
            Place::Repository {
                checkout: TaskCheckout::Worktree { trigger_type },
                ..
            } => Some(repository::task_branch(automation, trigger_type, task_id)),
            Place::Shared | Place::Repository { .. } => None,
        }
    }

    /// The workspace of one task: the config's folder (shared mode), a worktree on
    /// the task's branch, made or found as the module documentation describes, or in
    /// a repository its base checkout or a fresh worktree (the [`repository`]
    /// module). `task_id` is the item's 64 hex digits. Runs no hook.
    pub fn prepare(&self, automation: &str, task_id: &str) -> Result<Workspace, WorkspaceError> {
        let workspace = |path, branch, origin, removal| Workspace {
            spec: Arc::clone(&self.spec),
            path,
            branch,
            origin,
            removal,
            automation: automation.to_owned(),
            task_id: task_id.to_owned(),
            stop: self.stop.clone(),
            watch: self.watch.clone(),
            output: None,
        };
        let base = match &self.place {
            Place::Shared => {
                return Ok(workspace(
                    self.spec.repo_dir.clone(),
                    None,
                    Origin::Shared,
                    Removal::None,
                ));
            }
            Place::Worktree { base } => base,
            Place::Repository {
                repository,
                checkout: TaskCheckout::Main,
            } => {
                repository.ensure_once()?;
                let path = repository.checkout().path().to_owned();
                return Ok(workspace(path, None, Origin::Shared, Removal::None));
            }
            Place::Repository {
                repository,
                checkout: TaskCheckout::Worktree { trigger_type },
            } => {
                let base = repository.fetch_once()?.commit();
                let names = repository::TaskNames::new(automation, trigger_type, task_id);
                let checkout = repository.checkout();
                let (path, origin) =
                    repository::add_task_worktree(checkout, &names, base, self.spec.hook_timeout)?;
                tracing::debug!(
                    "workspace of task {task_id} in {}: {} on {}",
                    checkout.path().display(),
                    path.display(),
                    names.branch
                );
                let removal = Removal::WithBranch {
                    repo: checkout.path().to_owned(),
                };
                return Ok(workspace(path, Some(names.branch), origin, removal));
            }
        };
        let names = TaskNames::new(automation, task_id);
        let path = task_folder(&self.spec, &names)?;
        let origin = add_worktree(
            &self.spec.repo_dir,
            &path,
            &names.branch,
            base,
            self.spec.hook_timeout,
        )?;
        tracing::debug!(
            "workspace of task {task_id} ({origin:?}): {} on {}",
            path.display(),
            names.branch
        );
        Ok(workspace(
            path,
            Some(names.branch),
            origin,
            Removal::ByPolicy,
        ))
    }
}

/// The branch a task's worktree is on, `curupira/<automation>/<task>`, named as
/// [`Workspaces::prepare`] names it (the module's "Names"), without touching the disk.
///
/// ```
/// let branch = curupira_workspace::task_branch("fix", &"ab".repeat(32));
/// assert_eq!(branch, "curupira/fix/abababababab");
/// ```
pub fn task_branch(automation: &str, task_id: &str) -> String {
    TaskNames::new(automation, task_id).branch
}

/// The last two components of a task's worktree folder, `<automation>/<task>` (its
/// folder is this under the workspace `root`), named as [`Workspaces::prepare`] names
/// it: what tells a task's worktree from the shared folder.
pub fn task_folder_tail(automation: &str, task_id: &str) -> PathBuf {
    let names = TaskNames::new(automation, task_id);
    Path::new(&names.automation).join(&names.task)
}

/// The grace a dead host's watchdog gives a hook between SIGTERM and SIGKILL.
pub const HOOK_KILL_GRACE: Duration = Duration::from_secs(2);

/// What [`HookOutput`] calls.
type HookSink = dyn Fn(HookKind, curupira_process::pipes::Stream, curupira_process::pipes::Chunk<'_>)
    + Send
    + Sync;

/// Where a hook's output also goes, beside the host's stderr: called with the hook,
/// the stream and each piece as it is read (e.g. into the attempt's log).
#[derive(Clone)]
pub struct HookOutput(Arc<HookSink>);

impl HookOutput {
    /// Output going to `sink` too.
    pub fn new(
        sink: impl Fn(HookKind, curupira_process::pipes::Stream, curupira_process::pipes::Chunk<'_>)
        + Send
        + Sync
        + 'static,
    ) -> Self {
        HookOutput(Arc::new(sink))
    }
}

impl std::fmt::Debug for HookOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HookOutput(..)")
    }
}

/// What [`Workspace::finish`] may remove.
#[derive(Debug, Clone)]
enum Removal {
    /// Nothing: a shared folder.
    None,
    /// The worktree when the cleanup policy says so; the branch stays.
    ByPolicy,
    /// The worktree and its branch, of the repository at `repo`, always.
    WithBranch { repo: PathBuf },
}

/// One task's workspace.
#[derive(Debug)]
pub struct Workspace {
    spec: Arc<WorkspaceSpec>,
    path: PathBuf,
    /// The branch (worktree mode).
    branch: Option<String>,
    origin: Origin,
    removal: Removal,
    automation: String,
    task_id: String,
    stop: Option<Stop>,
    watch: Option<Watch>,
    /// Where its hooks' output also goes.
    output: Option<HookOutput>,
}

impl Workspace {
    /// From now on its hooks' output also goes to `output` (`None`: to the host's
    /// stderr only); a host sets the attempt's log before each attempt.
    pub fn set_output(&mut self, output: Option<HookOutput>) {
        self.output = output;
    }

    /// The folder the agent and the hooks work in (canonical in worktree mode).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The task's branch, `curupira/<automation>/<task>` (worktree mode).
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// How the workspace came to be.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// What the agent's environment gains: `CURUPIRA_WORKSPACE` (the path) and
    /// `CURUPIRA_BRANCH` (empty in shared mode).
    pub fn env(&self) -> [(&'static str, OsString); 2] {
        [
            ("CURUPIRA_WORKSPACE", self.path.clone().into_os_string()),
            (
                "CURUPIRA_BRANCH",
                OsString::from(self.branch.as_deref().unwrap_or_default()),
            ),
        ]
    }

    /// Runs the hook `kind`, if configured and if it applies to this mode (in shared
    /// mode only `before_run` and `after_run` run). What a failure means is the
    /// caller's: see the table in the module documentation.
    pub fn run_hook(&self, kind: HookKind) -> Result<(), HookError> {
        let Some(command) = self.spec.hooks.get(kind) else {
            return Ok(());
        };
        if self.origin == Origin::Shared && !kind.runs_in_shared_mode() {
            return Ok(());
        }
        let hook_env: [(&str, &OsStr); 3] = [
            ("CURUPIRA_AUTOMATION", OsStr::new(&self.automation)),
            ("CURUPIRA_TASK_ID", OsStr::new(&self.task_id)),
            ("CURUPIRA_HOOK", OsStr::new(kind.name())),
        ];
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(command)
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .envs(self.env())
            .envs(hook_env);
        for name in git::REPOSITORY_OVERRIDES {
            shell.env_remove(name);
        }
        // The watchdog, and the label by which it finds what the hook leaves outside
        // its group.
        let watched = self.watch.as_ref().map(|watch| (watch, watch.label()));
        if let Some((_, label)) = &watched {
            shell.env(RUN_VAR, label.value());
        }
        let failed = |status: String| HookError::Failed {
            hook: kind,
            command: command.to_owned(),
            dir: self.path.clone(),
            status,
        };
        tracing::debug!("running the {kind} hook in {}", self.path.display());
        let mut hook = ProcessGuard::spawn(&mut shell).map_err(|source| HookError::Spawn {
            hook: kind,
            command: command.to_owned(),
            dir: self.path.clone(),
            source,
        })?;
        // The watchdog stops it if the host dies meanwhile.
        if let Some((watch, label)) = &watched {
            watch.add(hook.id(), HOOK_KILL_GRACE, label);
        }
        let (status, cut_short) = self.wait_hook(&mut hook, kind);
        if let Some((watch, _)) = &watched {
            // Reaped (or, when it could not be waited for, killed as the guard drops).
            watch.remove(hook.id());
        }
        let cut_short_error = |cut_short| match cut_short {
            CutShort::TimedOut => HookError::TimedOut {
                hook: kind,
                command: command.to_owned(),
                dir: self.path.clone(),
                seconds: self.spec.hook_timeout.as_secs_f64(),
            },
            CutShort::Stopped => HookError::Stopped {
                hook: kind,
                command: command.to_owned(),
                dir: self.path.clone(),
            },
        };
        match (status, cut_short) {
            (Ok(status), _) if status.success() => Ok(()),
            // Ended by our kill: say why we killed it.
            (Ok(status), Some(cut_short)) if status.code().is_none() => {
                Err(cut_short_error(cut_short))
            }
            (Ok(status), _) => Err(failed(describe_status(status))),
            (Err(err), Some(cut_short)) => {
                tracing::debug!("cannot wait for the {kind} hook: {err}");
                Err(cut_short_error(cut_short))
            }
            (Err(err), None) => Err(failed(format!("could not be waited for ({err})"))),
        }
    }

    /// Waits for a hook to end, killing its group at the timeout or on the second stop
    /// request (the same rule as the agent's); says which cut it short, if either did.
    /// Its stdout and stderr are read meanwhile and go to the host's stderr as they
    /// come, line by line behind `[<automation> <short task id> <hook>] `, through
    /// [`curupira_process::stderr`]: a host stderr nobody reads never holds the hook up until its
    /// timeout.
    fn wait_hook(
        &self,
        hook: &mut ProcessGuard,
        kind: HookKind,
    ) -> (io::Result<ExitStatus>, Option<CutShort>) {
        use curupira_process::lines::{Forward, hook_prefix};
        use curupira_process::pipes::{self, Chunk, Pipes, Stream};
        let deadline = Instant::now().checked_add(self.spec.hook_timeout);
        let signals_at_start = self.stop.as_ref().map(Stop::count);
        let mut lines = Forward::new(&hook_prefix(&self.automation, &self.task_id, kind.name()));
        let output = self.output.clone();
        let mut forward = |stream: Stream, chunk: Chunk<'_>| {
            if let Some(output) = &output {
                (output.0)(kind, stream, chunk);
            }
            lines.take(stream, chunk);
        };
        let mut output = match Pipes::new(hook, &[]) {
            Ok(output) => output,
            Err(err) => return (Err(err), None),
        };
        loop {
            match hook.try_wait() {
                Ok(Some(status)) => {
                    // Its group is dead: what is left of its output comes now (for a
                    // bounded time, should something detached hold the pipes).
                    let _ = pipes::drain(&mut output, &mut forward);
                    return (Ok(status), None);
                }
                Ok(None) => {}
                Err(err) => return (Err(err), None),
            }
            let stopped = self
                .stop
                .as_ref()
                .zip(signals_at_start)
                .is_some_and(|(stop, at_start)| stop.count() > at_start.max(1));
            let timed_out = deadline.is_some_and(|deadline| Instant::now() >= deadline);
            if stopped || timed_out {
                hook.kill();
                let why = if stopped {
                    CutShort::Stopped
                } else {
                    CutShort::TimedOut
                };
                let status = hook.wait();
                // Its last words too (often why it hung), as above.
                let _ = pipes::drain(&mut output, &mut forward);
                return (status, Some(why));
            }
            let left = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
            let wait = left.map_or(HOOK_POLL, |left| left.min(HOOK_POLL));
            if output.wait(Some(wait), true, &mut forward).is_err() {
                thread::sleep(wait);
            }
        }
    }

    /// Whether [`finish`](Self::finish) removes this workspace after a task that
    /// `succeeded` (or not): a worktree, when the cleanup policy says so; a
    /// repository's task worktree, always.
    pub fn removes(&self, succeeded: bool) -> bool {
        match self.removal {
            Removal::None => false,
            Removal::ByPolicy => self.spec.cleanup.removes(succeeded),
            Removal::WithBranch { .. } => true,
        }
    }

    /// Ends the task's use of the workspace: in worktree mode, removes the worktree
    /// when the cleanup policy says so (after the `before_remove` hook, whose failure
    /// is logged), never the branch; in a repository, removes the task's worktree and
    /// its branch (after the same hook), whatever the outcome.
    pub fn finish(self, succeeded: bool) -> Result<Finished, WorkspaceError> {
        if !self.removes(succeeded) {
            return Ok(Finished::Kept);
        }
        if let (Removal::WithBranch { repo }, Some(branch)) = (&self.removal, &self.branch) {
            if self.path.exists()
                && let Err(err) = self.run_hook(HookKind::BeforeRemove)
            {
                tracing::warn!("{err}; removing the worktree anyway");
            }
            repository::remove_task_worktree(repo, &self.path, branch, self.spec.hook_timeout)?;
            return Ok(Finished::Removed);
        }
        let repo = &self.spec.repo_dir;
        if !self.path.exists() {
            let _turn = git::worktree_removal();
            tracing::debug!("{} is already gone; pruning", self.path.display());
            git_ok(
                repo,
                &[OsStr::new("worktree"), OsStr::new("prune")],
                self.spec.hook_timeout,
            )?;
            return Ok(Finished::Removed);
        }
        if let Err(err) = self.run_hook(HookKind::BeforeRemove) {
            tracing::warn!("{err}; removing the worktree anyway");
        }
        let _turn = git::worktree_removal();
        git_ok(
            repo,
            &[
                OsStr::new("worktree"),
                OsStr::new("remove"),
                OsStr::new("--force"),
                self.path.as_os_str(),
            ],
            self.spec.hook_timeout,
        )?;
        Ok(Finished::Removed)
    }
}

/// The commit `spec.base` (default `HEAD`) names now, as a full object id. Call it
/// once per run ([`Workspaces::new`] does).
pub fn resolve_base(spec: &WorkspaceSpec) -> Result<String, WorkspaceError> {
    let base = spec.base.as_deref().unwrap_or("HEAD");
    let refuse = |detail: String| WorkspaceError::Base {
        base: base.to_owned(),
        dir: spec.repo_dir.clone(),
        detail,
    };
    if base.starts_with('-') {
        return Err(refuse("a base cannot begin with `-`".to_owned()));
    }
    let spelled = format!("{base}^{{commit}}");
    let output = git_run(
        &spec.repo_dir,
        &[
            OsStr::new("rev-parse"),
            OsStr::new("--verify"),
            OsStr::new(&spelled),
        ],
        spec.hook_timeout,
    )?;
    let commit = output.stdout.trim();
    if !output.success() || commit.is_empty() {
        if base == "HEAD"
            && let Some(branch) = unborn_branch(spec)
        {
            return Err(refuse(format!("the branch `{branch}` has no commit yet")));
        }
        return Err(refuse(output.detail()));
    }
    Ok(commit.to_owned())
}

/// The branch `HEAD` is on when it has no commit yet (a new repository), asked of git
/// only once `HEAD` did not resolve: git's own words for it are "Needed a single
/// revision".
fn unborn_branch(spec: &WorkspaceSpec) -> Option<String> {
    let output = git_run(
        &spec.repo_dir,
        &[
            OsStr::new("symbolic-ref"),
            OsStr::new("--quiet"),
            OsStr::new("--short"),
            OsStr::new("HEAD"),
        ],
        spec.hook_timeout,
    )
    .ok()?;
    let branch = output.stdout.trim();
    (output.success() && !branch.is_empty()).then(|| branch.to_owned())
}

/// What `validate` asks of a worktree-mode automation: `git` runs, and `repo_dir` (the
/// config's folder) is inside a Git work tree. The error is one sentence.
pub fn check_worktree_mode(repo_dir: &Path) -> Result<(), String> {
    if !repo_dir.is_dir() {
        return Err(format!(
            "the config folder {} is not a folder, so worktree mode has no repository",
            repo_dir.display()
        ));
    }
    let output = git_run(
        repo_dir,
        &[OsStr::new("rev-parse"), OsStr::new("--is-inside-work-tree")],
        DEFAULT_HOOK_TIMEOUT,
    )
    .map_err(|err| err.to_string())?;
    if output.success() && output.stdout.trim() == "true" {
        return Ok(());
    }
    let why = if output.success() {
        "it is inside a Git directory but not a work tree".to_owned()
    } else {
        output.detail()
    };
    Err(format!(
        "the config folder {} is not inside a Git work tree, which worktree mode needs \
         (it makes a `git worktree` of that repository for each task): {why}",
        repo_dir.display()
    ))
}

/// A task's branch and the two components of its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TaskNames {
    automation: String,
    task: String,
    branch: String,
}

impl TaskNames {
    fn new(automation: &str, task_id: &str) -> Self {
        let automation = sanitize_component(automation);
        let digits: String = task_id.chars().take(TASK_ID_DIGITS).collect();
        let task = sanitize_component(&digits);
        let branch = format!("{BRANCH_PREFIX}/{automation}/{task}");
        TaskNames {
            automation,
            task,
            branch,
        }
    }
}

/// One component of a branch or folder name, from any text (the rules are in the
/// module documentation).
fn sanitize_component(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(MAX_COMPONENT));
    for c in raw.chars() {
        let allowed = c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        out.push(if !allowed || (c == '.' && out.ends_with('.')) {
            '-'
        } else {
            c
        });
    }
    let mut stem = tidy(&out, MAX_COMPONENT);
    if !stem.is_empty() && stem == raw {
        return stem;
    }
    let suffix = format!("-{:08x}", fnv1a(raw));
    stem = tidy(&stem, MAX_COMPONENT - suffix.len());
    if stem.is_empty() {
        stem.push_str("unnamed");
    }
    stem + &suffix
}

/// Drops leading `.`/`-` and trailing `.`, turns a final `.lock` into `-lock`, and
/// keeps at most `limit` bytes (the text is ASCII).
fn tidy(text: &str, limit: usize) -> String {
    let text = text.trim_start_matches(['.', '-']);
    let text = text.get(..limit).unwrap_or(text).trim_end_matches('.');
    match text.strip_suffix(".lock") {
        Some(stem) => format!("{stem}-lock"),
        None => text.to_owned(),
    }
}

/// 32-bit FNV-1a: a stable, dependency-free hash to keep sanitised names distinct.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// Creates the root (and `.curupira/` with its `.gitignore` when it is the host's to
/// create) and the automation's folder in it, and returns the task's folder: canonical,
/// inside the canonical root, not necessarily existing.
fn task_folder(spec: &WorkspaceSpec, names: &TaskNames) -> Result<PathBuf, WorkspaceError> {
    let root = spec.root_dir();
    let host_folder = spec.repo_dir.join(HOST_FOLDER);
    if root.starts_with(&host_folder) {
        crate::state::host_folder(&spec.repo_dir).map_err(|source| WorkspaceError::Folder {
            path: host_folder.clone(),
            source,
        })?;
    }
    let folder_error = |path: &Path| {
        let path = path.to_owned();
        move |source| WorkspaceError::Folder { path, source }
    };
    std::fs::create_dir_all(&root).map_err(folder_error(&root))?;
    let root = root.canonicalize().map_err(folder_error(&root))?;
    let inside = |meant: PathBuf| -> Result<PathBuf, WorkspaceError> {
        let resolved = meant.canonicalize().map_err(folder_error(&meant))?;
        if resolved.starts_with(&root) && resolved != root {
            Ok(resolved)
        } else {
            Err(WorkspaceError::OutsideRoot {
                path: meant,
                resolved,
                root: root.clone(),
            })
        }
    };
    let parent = root.join(&names.automation);
    std::fs::create_dir_all(&parent).map_err(folder_error(&parent))?;
    let parent = inside(parent)?;
    let path = parent.join(&names.task);
    if std::fs::symlink_metadata(&path).is_ok() {
        return inside(path);
    }
    Ok(path)
}

/// Gives `path` a worktree on `branch`: the fast path is one `git worktree add -b`;
/// when it fails, the slow path finds out why and recovers what it can. One task at a
/// time ([`git::worktree_changes`]).
fn add_worktree(
    repo: &Path,
    path: &Path,
    branch: &str,
    base: &str,
    limit: Duration,
) -> Result<Origin, WorkspaceError> {
    let _turn = git::worktree_changes();
    if std::fs::symlink_metadata(path).is_err() {
        let fresh = git_run(repo, &add_new_branch(path, branch, base), limit)?;
        if fresh.success() {
            return Ok(Origin::Created);
        }
        tracing::debug!("fast worktree add failed ({}); looking why", fresh.detail());
    }
    git_ok(repo, &[OsStr::new("worktree"), OsStr::new("prune")], limit)?;
    let listed = list_worktrees(repo, limit)?;
    let ours = listed.iter().find(|entry| same_path(&entry.path, path));
    let branch_ref = format!("refs/heads/{branch}");
    if std::fs::symlink_metadata(path).is_ok() {
        match ours {
            Some(entry) if entry.branch.as_deref() == Some(branch_ref.as_str()) => {
                if entry.locked.as_deref() != Some(INITIALIZING_LOCK) {
                    return Ok(Origin::Reused);
                }
                tracing::warn!(
                    "{} was left half made by an interrupted `git worktree add`; making it again",
                    path.display()
                );
                git_ok(repo, &force_remove(path), limit)?;
            }
            Some(entry) => {
                return Err(WorkspaceError::PathTaken {
                    path: path.to_owned(),
                    branch: branch.to_owned(),
                    found: match entry.branch.as_deref() {
                        Some(other) => format!(
                            "it is a worktree of `{}`",
                            other.strip_prefix("refs/heads/").unwrap_or(other)
                        ),
                        None => "it is a worktree without a branch".to_owned(),
                    },
                });
            }
            None => remove_if_empty(path, branch)?,
        }
    }
    if let Some(elsewhere) = listed
        .iter()
        .find(|entry| entry.branch.as_deref() == Some(branch_ref.as_str()) && !entry.prunable)
        .filter(|entry| !same_path(&entry.path, path))
    {
        return Err(WorkspaceError::BranchInUse {
            branch: branch.to_owned(),
            elsewhere: elsewhere.path.clone(),
        });
    }
    if branch_exists(repo, &branch_ref, limit)? {
        git_ok(
            repo,
            &[
                OsStr::new("worktree"),
                OsStr::new("add"),
                path.as_os_str(),
                OsStr::new(branch),
            ],
            limit,
        )?;
        return Ok(Origin::Recreated);
    }
    git_ok(repo, &add_new_branch(path, branch, base), limit)?;
    Ok(Origin::Created)
}

/// `git worktree remove --force --force PATH`: the worktree goes even when it is
/// dirty or locked.
fn force_remove(path: &Path) -> [&OsStr; 5] {
    [
        OsStr::new("worktree"),
        OsStr::new("remove"),
        OsStr::new("--force"),
        OsStr::new("--force"),
        path.as_os_str(),
    ]
}

/// `git worktree add -b BRANCH PATH BASE`.
fn add_new_branch<'a>(path: &'a Path, branch: &'a str, base: &'a str) -> [&'a OsStr; 6] {
    [
        OsStr::new("worktree"),
        OsStr::new("add"),
        OsStr::new("-b"),
        OsStr::new(branch),
        path.as_os_str(),
        OsStr::new(base),
    ]
}

/// Removes a folder that is not a worktree when it is empty (a run killed before git
/// wrote anything); refuses anything else.
fn remove_if_empty(path: &Path, branch: &str) -> Result<(), WorkspaceError> {
    let taken = |found: &str| WorkspaceError::PathTaken {
        path: path.to_owned(),
        branch: branch.to_owned(),
        found: found.to_owned(),
    };
    let empty = std::fs::read_dir(path)
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false);
    if !empty {
        return Err(taken("it is not a Git worktree and not empty"));
    }
    std::fs::remove_dir(path).map_err(|source| WorkspaceError::Folder {
        path: path.to_owned(),
        source,
    })
}

/// Whether `refs/heads/…` exists.
fn branch_exists(repo: &Path, branch_ref: &str, limit: Duration) -> Result<bool, WorkspaceError> {
    let output = git_run(
        repo,
        &[
            OsStr::new("rev-parse"),
            OsStr::new("--verify"),
            OsStr::new("--quiet"),
            OsStr::new(branch_ref),
        ],
        limit,
    )?;
    Ok(output.success())
}

/// The worktrees git knows of.
fn list_worktrees(repo: &Path, limit: Duration) -> Result<Vec<Listed>, WorkspaceError> {
    let output = git_ok(
        repo,
        &[
            OsStr::new("worktree"),
            OsStr::new("list"),
            OsStr::new("--porcelain"),
        ],
        limit,
    )?;
    Ok(git::parse_worktree_list(&output.stdout))
}

/// Whether a path git recorded is `ours` (canonical), following links when it exists.
fn same_path(recorded: &Path, ours: &Path) -> bool {
    recorded == ours
        || recorded
            .canonicalize()
            .is_ok_and(|canonical| canonical == ours)
}

/// Runs git for at most `limit`; only a git that cannot start, or runs too long, is
/// an error.
fn git_run(dir: &Path, args: &[&OsStr], limit: Duration) -> Result<GitOutput, WorkspaceError> {
    let ended = git::run(dir, args, limit).map_err(|source| {
        if dir.is_dir() {
            WorkspaceError::GitUnavailable {
                dir: dir.to_owned(),
                source,
            }
        } else {
            WorkspaceError::Folder {
                path: dir.to_owned(),
                source,
            }
        }
    })?;
    ended.map_err(|_| WorkspaceError::GitTimedOut {
        command: git::command_line(args),
        dir: dir.to_owned(),
        seconds: limit.as_secs_f64(),
    })
}

/// Runs git for at most `limit`; a non-zero exit is an error quoting git's stderr.
fn git_ok(dir: &Path, args: &[&OsStr], limit: Duration) -> Result<GitOutput, WorkspaceError> {
    let output = git_run(dir, args, limit)?;
    if output.success() {
        return Ok(output);
    }
    Err(WorkspaceError::Git {
        command: git::command_line(args),
        dir: dir.to_owned(),
        detail: output.detail(),
    })
}

#[cfg(test)]
mod tests;

/// The README's example, run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
