//! Workspaces against the real `git` program, in temporary repositories.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::*;

/// A task id as the runner gives it: 64 hex digits.
const TASK_A: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const TASK_B: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

/// A repository with one commit (`README.md`), in a temporary folder that also has
/// room for things outside it (`outside()`).
struct Repo {
    tmp: TempDir,
    dir: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        git(&dir, &["config", "user.name", "Curupira Tests"]);
        git(&dir, &["config", "user.email", "tests@curupira.invalid"]);
        git(&dir, &["config", "commit.gpgsign", "false"]);
        std::fs::write(dir.join("README.md"), "hello\n").unwrap();
        git(&dir, &["add", "README.md"]);
        git(&dir, &["commit", "-q", "-m", "first"]);
        Repo { tmp, dir }
    }

    /// A folder beside the repository.
    fn outside(&self, name: &str) -> PathBuf {
        let path = self.tmp.path().canonicalize().unwrap().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    fn spec(&self) -> WorkspaceSpec {
        WorkspaceSpec {
            mode: WorkspaceMode::Worktree,
            ..WorkspaceSpec::new(&self.dir)
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.join(".curupira/worktrees")
    }

    fn head(&self) -> String {
        git(&self.dir, &["rev-parse", "HEAD"])
    }
}

/// Runs git in `dir`, asserts success, returns stdout trimmed.
#[track_caller]
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn branch_exists_in(dir: &Path, branch: &str) -> bool {
    Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

fn commit_file(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
    git(dir, &["add", name]);
    git(dir, &["commit", "-q", "-m", name]);
}

fn workspaces(spec: WorkspaceSpec) -> Workspaces {
    Workspaces::new(spec).unwrap()
}

// ---- names ----

#[test]
fn plain_names_are_kept() {
    assert_eq!(sanitize_component("review"), "review");
    assert_eq!(sanitize_component("fix_bugs-2.0"), "fix_bugs-2.0");
    let names = TaskNames::new("review", TASK_A);
    assert_eq!(names.task, "0123456789ab");
    assert_eq!(names.branch, "curupira/review/0123456789ab");
}

#[test]
fn odd_names_are_sanitised_and_stay_distinct() {
    let cases = [
        "fix bugs/now",
        "../../etc/passwd",
        "..",
        ".hidden",
        "-option",
        "",
        "ü",
        "x.lock",
        "a..b",
        "trailing.",
        "a/b",
        "a@{b}",
        "tab\there",
        &"long".repeat(50),
    ];
    for raw in cases {
        let name = sanitize_component(raw);
        assert!(!name.is_empty(), "{raw:?}");
        assert!(name.len() <= MAX_COMPONENT, "{raw:?} → {name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')),
            "{raw:?} → {name}"
        );
        assert!(!name.starts_with(['.', '-']), "{raw:?} → {name}");
        assert!(!name.ends_with('.') && !name.ends_with(".lock"), "{name}");
        assert!(!name.contains(".."), "{raw:?} → {name}");
        assert_ne!(name, raw, "{raw:?} was changed, so it carries a hash");
    }
    assert_ne!(sanitize_component("a/b"), sanitize_component("a-b"));
    assert_eq!(sanitize_component("a/b"), sanitize_component("a/b"));
    assert_eq!(sanitize_component(""), "unnamed-811c9dc5");
    assert!(sanitize_component("fix bugs/now").starts_with("fix-bugs-now-"));
}

#[test]
fn sanitised_names_are_branches_git_accepts() {
    let repo = Repo::new();
    for (automation, task) in [
        ("../../escape me", "../../../x/y"),
        ("ü.lock", "@{-1}"),
        ("", ""),
        ("a..b", ".."),
    ] {
        let names = TaskNames::new(automation, task);
        git(&repo.dir, &["check-ref-format", "--branch", &names.branch]);
    }
}

// ---- worktrees ----

#[test]
fn each_task_gets_its_own_worktree_on_its_branch() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let a = workspaces.prepare("review", TASK_A).unwrap();
    let b = workspaces.prepare("review", TASK_B).unwrap();
    let root = repo.root().canonicalize().unwrap();
    assert_eq!(a.path(), root.join("review/0123456789ab"));
    assert_eq!(b.path(), root.join("review/fedcba987654"));
    assert_eq!(a.branch(), Some("curupira/review/0123456789ab"));
    assert_eq!(a.origin(), Origin::Created);
    assert_eq!(
        git(a.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "curupira/review/0123456789ab"
    );
    assert_eq!(
        git(b.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "curupira/review/fedcba987654"
    );
    assert_eq!(
        Path::new(&git(a.path(), &["rev-parse", "--show-toplevel"])),
        a.path()
    );

    std::fs::write(a.path().join("work.txt"), "agent a\n").unwrap();
    assert!(!repo.dir.join("work.txt").exists());
    assert!(!b.path().join("work.txt").exists());
    assert_eq!(
        std::fs::read_to_string(repo.dir.join(".curupira/.gitignore")).unwrap(),
        "*\n"
    );
    assert_eq!(git(&repo.dir, &["status", "--porcelain"]), "");

    let env = a.env();
    assert_eq!(env[0].0, "CURUPIRA_WORKSPACE");
    assert_eq!(env[0].1, a.path().as_os_str());
    assert_eq!(
        env[1],
        ("CURUPIRA_BRANCH", "curupira/review/0123456789ab".into())
    );
}

#[test]
fn the_base_is_head_when_the_run_started() {
    let repo = Repo::new();
    let first = repo.head();
    let workspaces = workspaces(repo.spec());
    assert_eq!(workspaces.base(), Some(first.as_str()));
    commit_file(&repo.dir, "later.txt", "later\n");
    let ws = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(git(ws.path(), &["rev-parse", "HEAD"]), first);
    assert!(!ws.path().join("later.txt").exists());
}

#[test]
fn a_named_base_is_used_and_a_bad_one_is_a_clear_error() {
    let repo = Repo::new();
    git(&repo.dir, &["branch", "stable"]);
    commit_file(&repo.dir, "later.txt", "later\n");
    let spec = WorkspaceSpec {
        base: Some("stable".to_owned()),
        ..repo.spec()
    };
    let stable = git(&repo.dir, &["rev-parse", "stable"]);
    assert_eq!(resolve_base(&spec).unwrap(), stable);

    let spec = WorkspaceSpec {
        base: Some("nope".to_owned()),
        ..repo.spec()
    };
    let err = Workspaces::new(spec).unwrap_err();
    assert!(matches!(err, WorkspaceError::Base { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("the workspace base `nope` does not name a commit in the repository at "),
        "{err}"
    );

    let spec = WorkspaceSpec {
        base: Some("--help".to_owned()),
        ..repo.spec()
    };
    let err = resolve_base(&spec).unwrap_err();
    assert!(
        err.to_string().ends_with("a base cannot begin with `-`"),
        "{err}"
    );
}

#[test]
fn odd_automation_names_and_task_ids_get_a_worktree_inside_root() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let ws = workspaces
        .prepare("../../escape me/ü", "../../../x/y")
        .unwrap();
    let root = repo.root().canonicalize().unwrap();
    assert!(ws.path().starts_with(&root), "{}", ws.path().display());
    assert_eq!(
        ws.path().parent().and_then(Path::parent),
        Some(root.as_path())
    );
    let branch = ws.branch().unwrap();
    assert!(branch.starts_with("curupira/escape-me-"), "{branch}");
    assert_eq!(
        git(ws.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        branch
    );
}

#[test]
fn a_workspace_resolving_outside_root_is_refused() {
    let repo = Repo::new();
    let elsewhere = repo.outside("elsewhere");
    std::fs::create_dir_all(repo.root()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.root().join("review")).unwrap();
    let workspaces = workspaces(repo.spec());
    let err = workspaces.prepare("review", TASK_A).unwrap_err();
    assert!(matches!(err, WorkspaceError::OutsideRoot { .. }), "{err}");
    assert!(
        err.to_string().contains("outside the worktree root"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    // The task's own folder as a link leading out is refused the same way.
    std::fs::create_dir_all(repo.root().join("other")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.root().join("other/0123456789ab")).unwrap();
    let err = workspaces.prepare("other", TASK_A).unwrap_err();
    assert!(matches!(err, WorkspaceError::OutsideRoot { .. }), "{err}");
}

#[test]
fn a_config_in_a_subfolder_works_at_the_top_of_the_checkout() {
    let repo = Repo::new();
    std::fs::create_dir(repo.dir.join("tools")).unwrap();
    commit_file(&repo.dir, "tools/curupira.toml", "\n");
    let spec = WorkspaceSpec {
        mode: WorkspaceMode::Worktree,
        ..WorkspaceSpec::new(repo.dir.join("tools"))
    };
    let ws = workspaces(spec).prepare("review", TASK_A).unwrap();
    assert!(
        ws.path()
            .starts_with(repo.dir.join("tools/.curupira/worktrees"))
    );
    assert!(ws.path().join("README.md").exists());
    assert!(ws.path().join("tools/curupira.toml").exists());
    assert_eq!(git(&repo.dir, &["status", "--porcelain"]), "");
}

#[test]
fn concurrent_tasks_are_prepared_and_removed_at_once() {
    // Git's own `worktree add` fails now and then beside another one in the same
    // repository; the host takes turns.
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let ids: Vec<String> = (0..6)
        .map(|n| format!("{n}{n}{n}{n}{n}{n}{n}{n}{n}{n}{n}{n}"))
        .collect();
    thread::scope(|scope| {
        for id in &ids {
            let workspaces = &workspaces;
            scope.spawn(move || {
                let ws = workspaces.prepare("review", id).unwrap();
                assert_eq!(ws.origin(), Origin::Created);
                assert!(ws.path().join("README.md").exists());
                assert_eq!(ws.finish(true).unwrap(), Finished::Removed);
            });
        }
    });
    assert_eq!(git(&repo.dir, &["worktree", "list"]).lines().count(), 1);
}

// ---- cleanup ----

#[test]
fn on_success_keeps_a_failed_task_and_removes_a_succeeded_one() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let failed = workspaces.prepare("review", TASK_A).unwrap();
    let failed_path = failed.path().to_owned();
    assert_eq!(failed.finish(false).unwrap(), Finished::Kept);
    assert!(failed_path.join("README.md").exists());

    let ok = workspaces.prepare("review", TASK_B).unwrap();
    commit_file(ok.path(), "done.txt", "done\n");
    let (ok_path, branch) = (ok.path().to_owned(), ok.branch().unwrap().to_owned());
    assert_eq!(ok.finish(true).unwrap(), Finished::Removed);
    assert!(!ok_path.exists());
    assert!(!git(&repo.dir, &["worktree", "list"]).contains("fedcba987654"));
    assert!(branch_exists_in(&repo.dir, &branch), "the branch survives");
    assert_eq!(
        git(&repo.dir, &["show", &format!("{branch}:done.txt")]),
        "done"
    );
}

#[test]
fn always_removes_and_never_keeps() {
    let repo = Repo::new();
    let always = workspaces(WorkspaceSpec {
        cleanup: Cleanup::Always,
        ..repo.spec()
    });
    let ws = always.prepare("review", TASK_A).unwrap();
    std::fs::write(ws.path().join("untracked.txt"), "x").unwrap();
    let (path, branch) = (ws.path().to_owned(), ws.branch().unwrap().to_owned());
    assert_eq!(ws.finish(false).unwrap(), Finished::Removed);
    assert!(!path.exists());
    assert!(branch_exists_in(&repo.dir, &branch));

    let never = workspaces(WorkspaceSpec {
        cleanup: Cleanup::Never,
        ..repo.spec()
    });
    let ws = never.prepare("review", TASK_B).unwrap();
    let path = ws.path().to_owned();
    assert_eq!(ws.finish(true).unwrap(), Finished::Kept);
    assert!(path.join("README.md").exists());
}

#[test]
fn a_worktree_deleted_under_the_host_is_pruned_at_finish() {
    let repo = Repo::new();
    let ws = workspaces(repo.spec()).prepare("review", TASK_A).unwrap();
    std::fs::remove_dir_all(ws.path()).unwrap();
    assert_eq!(ws.finish(true).unwrap(), Finished::Removed);
    assert!(!git(&repo.dir, &["worktree", "list"]).contains("0123456789ab"));
}

// ---- a task prepared again ----

#[test]
fn a_task_prepared_again_after_a_crash_reuses_its_worktree() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let first = workspaces.prepare("review", TASK_A).unwrap();
    std::fs::write(first.path().join("half-done.txt"), "wip\n").unwrap();
    let path = first.path().to_owned();
    drop(first); // the host died: no finish

    let again = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(again.origin(), Origin::Reused);
    assert_eq!(again.path(), path);
    assert!(again.path().join("half-done.txt").exists());
}

#[test]
fn a_task_prepared_again_continues_on_its_branch() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let first = workspaces.prepare("review", TASK_A).unwrap();
    commit_file(first.path(), "attempt1.txt", "one\n");
    let tip = git(first.path(), &["rev-parse", "HEAD"]);
    assert_eq!(first.finish(true).unwrap(), Finished::Removed);

    // Even from a later run whose base moved on.
    commit_file(&repo.dir, "later.txt", "later\n");
    let later_run = Workspaces::new(repo.spec()).unwrap();
    let again = later_run.prepare("review", TASK_A).unwrap();
    assert_eq!(again.origin(), Origin::Recreated);
    assert_eq!(git(again.path(), &["rev-parse", "HEAD"]), tip);
    assert!(again.path().join("attempt1.txt").exists());
}

#[test]
fn a_deleted_worktree_folder_is_pruned_and_made_again() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let first = workspaces.prepare("review", TASK_A).unwrap();
    commit_file(first.path(), "attempt1.txt", "one\n");
    std::fs::remove_dir_all(first.path()).unwrap();
    drop(first);

    let again = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(again.origin(), Origin::Recreated);
    assert!(again.path().join("attempt1.txt").exists());
}

#[test]
fn a_half_made_worktree_is_made_again() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let first = workspaces.prepare("review", TASK_A).unwrap();
    // What a `git worktree add` killed during its checkout leaves: the lock it holds
    // while initializing, and files missing.
    let admin = PathBuf::from(git(first.path(), &["rev-parse", "--absolute-git-dir"]));
    std::fs::write(admin.join("locked"), "initializing").unwrap();
    std::fs::remove_file(first.path().join("README.md")).unwrap();
    drop(first);

    let again = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(again.origin(), Origin::Recreated);
    assert!(again.path().join("README.md").exists());
    assert!(!git(&repo.dir, &["worktree", "list", "--porcelain"]).contains("locked"));
}

#[test]
fn a_folder_in_the_way_is_refused_unless_empty() {
    let repo = Repo::new();
    let workspaces = workspaces(repo.spec());
    let path = repo.root().join("review/0123456789ab");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("precious.txt"), "mine").unwrap();
    let err = workspaces.prepare("review", TASK_A).unwrap_err();
    assert!(matches!(err, WorkspaceError::PathTaken { .. }), "{err}");
    assert!(
        err.to_string().contains(
            "already exists and is not a worktree of branch `curupira/review/0123456789ab`"
        ),
        "{err}"
    );
    assert!(path.join("precious.txt").exists());

    std::fs::remove_file(path.join("precious.txt")).unwrap();
    let ws = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(ws.origin(), Origin::Created);
}

#[test]
fn a_branch_checked_out_elsewhere_is_refused() {
    let repo = Repo::new();
    git(&repo.dir, &["branch", "curupira/review/0123456789ab"]);
    let elsewhere = repo.outside("inspecting");
    git(
        &repo.dir,
        &[
            "worktree",
            "add",
            elsewhere.join("wt").to_str().unwrap(),
            "curupira/review/0123456789ab",
        ],
    );
    let err = workspaces(repo.spec())
        .prepare("review", TASK_A)
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::BranchInUse { .. }), "{err}");
    assert!(
        err.to_string().contains("is already checked out at"),
        "{err}"
    );
}

// ---- hooks ----

/// A hook that appends `NAME CWD BRANCH` to `log`.
fn logging_hook(log: &Path) -> String {
    format!(
        "echo \"$CURUPIRA_HOOK $(pwd -P) $CURUPIRA_BRANCH $CURUPIRA_AUTOMATION\" >> '{}'",
        log.display()
    )
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn hooks_run_in_order_in_the_workspace() {
    let repo = Repo::new();
    let log = repo.outside("logs").join("hooks.log");
    let hook = logging_hook(&log);
    let spec = WorkspaceSpec {
        cleanup: Cleanup::Always,
        hooks: Hooks {
            after_create: Some(hook.clone()),
            before_run: Some(hook.clone()),
            after_run: Some(hook.clone()),
            // It runs while the worktree is still there.
            before_remove: Some(format!("test -f README.md && {hook}")),
        },
        ..repo.spec()
    };
    let ws = workspaces(spec).prepare("review", TASK_A).unwrap();
    let path = ws.path().display().to_string();
    for kind in [
        HookKind::AfterCreate,
        HookKind::BeforeRun,
        HookKind::AfterRun,
    ] {
        ws.run_hook(kind).unwrap();
    }
    assert_eq!(ws.finish(true).unwrap(), Finished::Removed);
    let branch = "curupira/review/0123456789ab";
    assert_eq!(
        log_lines(&log),
        ["after_create", "before_run", "after_run", "before_remove"]
            .map(|name| format!("{name} {path} {branch} review"))
    );
}

#[test]
fn a_failing_after_create_or_before_run_is_reported() {
    let repo = Repo::new();
    let spec = WorkspaceSpec {
        hooks: Hooks {
            after_create: Some("exit 3".to_owned()),
            before_run: Some("false".to_owned()),
            ..Hooks::default()
        },
        ..repo.spec()
    };
    let ws = workspaces(spec).prepare("review", TASK_A).unwrap();
    let err = ws.run_hook(HookKind::AfterCreate).unwrap_err();
    assert!(matches!(err, HookError::Failed { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "the after_create hook `exit 3` exited with status 3 in {} (expected status 0; \
             its output is in the host's log)",
            ws.path().display()
        )
    );
    let err = ws.run_hook(HookKind::BeforeRun).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("the before_run hook `false` exited with status 1 in "),
        "{err}"
    );
    // Unconfigured hooks succeed.
    ws.run_hook(HookKind::AfterRun).unwrap();
    // The failed task's worktree stays for inspection (on-success).
    let path = ws.path().to_owned();
    assert_eq!(ws.finish(false).unwrap(), Finished::Kept);
    assert!(path.exists());
}

#[test]
fn a_failing_before_remove_is_logged_and_the_worktree_still_removed() {
    let repo = Repo::new();
    let spec = WorkspaceSpec {
        hooks: Hooks {
            before_remove: Some("exit 9".to_owned()),
            ..Hooks::default()
        },
        ..repo.spec()
    };
    let ws = workspaces(spec).prepare("review", TASK_A).unwrap();
    let path = ws.path().to_owned();
    assert_eq!(ws.finish(true).unwrap(), Finished::Removed);
    assert!(!path.exists());
}

/// Whether a process still runs (a zombie does not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next())
            .is_some_and(|state| state != 'Z')
    })
}

#[test]
fn a_hanging_hook_is_killed_at_the_timeout_with_its_children() {
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("child.pid");
    let spec = WorkspaceSpec {
        hook_timeout: Duration::from_millis(300),
        hooks: Hooks {
            before_run: Some(format!(
                "sleep 30 & echo $! > '{}'; sleep 30",
                pid_file.display()
            )),
            ..Hooks::default()
        },
        ..WorkspaceSpec::new(tmp.path())
    };
    let ws = workspaces(spec).prepare("review", TASK_A).unwrap();
    let started = Instant::now();
    let err = ws.run_hook(HookKind::BeforeRun).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err, HookError::TimedOut { .. }), "{err}");
    assert!(
        err.to_string()
            .ends_with("after 0.3 s and was killed with its process group"),
        "{err}"
    );
    let child: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(child) {
        assert!(Instant::now() < deadline, "the hook's child survived");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_second_stop_request_kills_a_running_hook() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = WorkspaceSpec {
        hooks: Hooks {
            after_run: Some("sleep 30".to_owned()),
            ..Hooks::default()
        },
        ..WorkspaceSpec::new(tmp.path())
    };
    let stop = Stop::new();
    let ws = workspaces(spec)
        .with_stop(stop.clone())
        .prepare("review", TASK_A)
        .unwrap();
    // The first request lets work in flight finish; the second one kills it.
    stop.request();
    let started = Instant::now();
    let second = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        stop.request();
    });
    let err = ws.run_hook(HookKind::AfterRun).unwrap_err();
    second.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err, HookError::Stopped { .. }), "{err}");
    assert!(
        err.to_string()
            .ends_with("because the host was told to stop a second time"),
        "{err}"
    );
}

// ---- shared mode and validation ----

#[test]
fn shared_mode_is_the_config_folder_and_runs_only_the_run_hooks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let log = dir.join("hooks.log");
    let hook = logging_hook(&log);
    let spec = WorkspaceSpec {
        cleanup: Cleanup::Always,
        hooks: Hooks {
            after_create: Some(hook.clone()),
            before_run: Some(hook.clone()),
            after_run: Some(hook.clone()),
            before_remove: Some(hook),
        },
        ..WorkspaceSpec::new(&dir)
    };
    // Not a repository: shared mode never runs git.
    let workspaces = workspaces(spec);
    assert_eq!(workspaces.base(), None);
    let ws = workspaces.prepare("review", TASK_A).unwrap();
    assert_eq!(ws.path(), dir);
    assert_eq!(ws.branch(), None);
    assert_eq!(ws.origin(), Origin::Shared);
    assert_eq!(ws.env()[1], ("CURUPIRA_BRANCH", OsString::new()));
    for kind in [
        HookKind::AfterCreate,
        HookKind::BeforeRun,
        HookKind::AfterRun,
    ] {
        ws.run_hook(kind).unwrap();
    }
    assert_eq!(ws.finish(true).unwrap(), Finished::Kept);
    let shown = dir.display();
    assert_eq!(
        log_lines(&log),
        [
            format!("before_run {shown}  review"),
            format!("after_run {shown}  review")
        ]
    );
    assert!(!dir.join(".curupira").exists());
}

#[test]
fn worktree_mode_is_checked_for_validate() {
    let repo = Repo::new();
    check_worktree_mode(&repo.dir).unwrap();
    std::fs::create_dir(repo.dir.join("sub")).unwrap();
    check_worktree_mode(&repo.dir.join("sub")).unwrap();

    let plain = repo.outside("not-a-repo");
    let err = check_worktree_mode(&plain).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "the config folder {} is not inside a Git work tree, which worktree mode needs",
            plain.display()
        )),
        "{err}"
    );
    let err = check_worktree_mode(&repo.dir.join("missing")).unwrap_err();
    assert!(
        err.ends_with("is not a folder, so worktree mode has no repository"),
        "{err}"
    );
    let err = check_worktree_mode(&repo.dir.join(".git")).unwrap_err();
    assert!(err.contains("not a work tree"), "{err}");
}

#[test]
fn a_repository_without_commits_has_no_base() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    let spec = WorkspaceSpec {
        mode: WorkspaceMode::Worktree,
        ..WorkspaceSpec::new(tmp.path())
    };
    let err = Workspaces::new(spec).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("the workspace base `HEAD` does not name a commit"),
        "{err}"
    );
}

#[test]
fn a_git_command_running_past_the_hook_timeout_is_killed_with_its_group() {
    let repo = Repo::new();
    // Git runs the repository's `post-checkout` hook inside `git worktree add`: this
    // one hangs (and leaves a child), so the add outlives its limit.
    let pid_file = repo.outside("pids").join("hook.pid");
    let hook = repo.dir.join(".git/hooks/post-checkout");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nsleep 30 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let limit = Duration::from_millis(700);
    let ws = workspaces(WorkspaceSpec {
        hook_timeout: limit,
        ..repo.spec()
    });
    let started = Instant::now();
    let err = ws.prepare("review", TASK_A).unwrap_err();
    let took = started.elapsed();
    assert!(took >= limit && took < Duration::from_secs(10), "{took:?}");
    assert!(matches!(err, WorkspaceError::GitTimedOut { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("`git worktree add -b curupira/review/0123456789ab ")
            && message.ends_with(
                "after 0.7 s (the workspace's `hook_timeout_seconds`) and was killed with its \
                 process group"
            ),
        "{message}"
    );
    let child: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(child) {
        assert!(Instant::now() < deadline, "git's hook survived");
        thread::sleep(Duration::from_millis(10));
    }
}
