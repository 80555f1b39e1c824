//! The settings a [`WorkspaceSpec`](crate::WorkspaceSpec) is made of, as plain data.
//!
//! A host reads them from its own configuration (the `curupira` binary from
//! `curupira.toml`'s `[settings.workspace]`, with its spellings, defaults and
//! diagnostics) and converts them into these; this crate knows no file format.

use crate::HookKind;

/// Where an automation's agents run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum WorkspaceMode {
    /// In the config's folder, all agents together (the default).
    #[default]
    Shared,
    /// Each task in its own `git worktree` under the workspace `root`.
    Worktree,
}

/// When a task's worktree is removed (its branch never is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Cleanup {
    /// When the task succeeded; a failed task's worktree stays for inspection (the
    /// default).
    #[default]
    OnSuccess,
    /// After every task.
    Always,
    /// Never: worktrees stay until removed by hand.
    Never,
}

impl Cleanup {
    /// Whether this policy removes a task's worktree once the task ended, as it ended
    /// (`succeeded` or failed).
    pub fn removes(self, succeeded: bool) -> bool {
        match self {
            Cleanup::Always => true,
            Cleanup::OnSuccess => succeeded,
            Cleanup::Never => false,
        }
    }
}

/// The shell commands run in the workspace at points of its life; `None` where not
/// set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hooks {
    /// After the worktree is created; its failure fails the task.
    pub after_create: Option<String>,
    /// Before each agent attempt; its failure fails the attempt.
    pub before_run: Option<String>,
    /// After each agent attempt; its failure is logged.
    pub after_run: Option<String>,
    /// Before the worktree is removed; its failure is logged.
    pub before_remove: Option<String>,
}

impl Hooks {
    /// The command configured for `kind`, if any.
    pub fn get(&self, kind: HookKind) -> Option<&str> {
        match kind {
            HookKind::AfterCreate => self.after_create.as_deref(),
            HookKind::BeforeRun => self.before_run.as_deref(),
            HookKind::AfterRun => self.after_run.as_deref(),
            HookKind::BeforeRemove => self.before_remove.as_deref(),
        }
    }
}
