//! Repositories of their own against the real `git` program: a bare remote made in
//! a temporary folder, cloned, fetched and worktreed as the reference host does.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tempfile::TempDir;

use super::*;
use crate::{Finished, HookKind, Hooks, Workspace, WorkspaceSpec, Workspaces};

/// The task ids of the recorded items `{title: a, n: 1}` and `{title: b, n: 2}`.
const TASK_A: &str = "ca4b62f03de05de962fb2609ac7ab2caf7728140a297f5fc2a6edb41568e91d7";
const TASK_B: &str = "7613a1439c22a2aec46c8fa65cce495c5008244c68b8d8d27dd41fe896b02de6";
/// The names the reference host gave their worktrees for `trigger_type = "rec/items"`.
const NAME_A: &str = "rec-items-046732844e3c38b2ee2eec0d1e0ec873ff84b1822c26bd729917de82845ee329";
const NAME_B: &str = "rec-items-393da0e66d9459b933e68e273c0fec8d00e0b11a857e79ca0f19fed0f75f631e";

const TRIGGER: &str = "rec/items";

/// A bare remote `remotes/acme/widgets.git` (branches `main` and `dev`, one commit
/// "first commit" with `README` and the scripts the recordings used), the source it
/// is pushed from, and room for workspaces, in a temporary folder.
struct Remote {
    _tmp: TempDir,
    root: PathBuf,
    src: PathBuf,
    bare: PathBuf,
}

impl Remote {
    fn new() -> Remote {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let src = root.join("remotes/src");
        let bare = root.join("remotes/acme/widgets.git");
        std::fs::create_dir_all(src.join("scripts")).unwrap();
        git(&src, &["init", "-q", "-b", "main"]);
        git(&src, &["config", "user.name", "Curupira Tests"]);
        git(&src, &["config", "user.email", "tests@curupira.invalid"]);
        git(&src, &["config", "commit.gpgsign", "false"]);
        std::fs::write(src.join("README"), "widgets\n").unwrap();
        let log = root.join("setup.log");
        let scripts = [
            (
                "setup.sh",
                format!(
                    "#!/bin/sh\nprintf '%s|%s|%s\\n' \"$PWD\" \"$*\" \"$(env | grep -c '^CURUPIRA')\" >> '{}'\n\
                     echo setup-out; echo setup-err >&2\ntouch setup-was-here\n",
                    log.display()
                ),
            ),
            (
                "fail.sh",
                format!(
                    "#!/bin/sh\necho failed >> '{}'\necho failing-setup-out; echo failing-setup-err >&2\nexit 4\n",
                    log.display()
                ),
            ),
            ("slow.sh", "#!/bin/sh\nsleep 30\n".to_owned()),
        ];
        for (name, text) in scripts {
            let path = src.join("scripts").join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        git(&src, &["add", "-A"]);
        git(&src, &["commit", "-q", "-m", "first commit"]);
        git(&src, &["branch", "dev"]);
        std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
        git(
            &root,
            &[
                "clone",
                "-q",
                "--bare",
                src.to_str().unwrap(),
                bare.to_str().unwrap(),
            ],
        );
        Remote {
            _tmp: tmp,
            root,
            src,
            bare,
        }
    }

    fn url(&self) -> String {
        format!("file://{}", self.bare.display())
    }

    fn ws(&self) -> PathBuf {
        self.root.join("ws")
    }

    /// `<ws>/demo`, cloned from the remote when missing.
    fn checkout(&self) -> BaseCheckout {
        BaseCheckout::in_workspace_dir(self.url(), &self.ws(), "demo").unwrap()
    }

    /// A commit pushed to the remote's `main`; its id.
    fn push(&self, subject: &str) -> String {
        std::fs::write(self.src.join("NEW"), format!("{subject}\n")).unwrap();
        git(&self.src, &["add", "NEW"]);
        git(&self.src, &["commit", "-q", "-m", subject]);
        git(
            &self.src,
            &["push", "-q", self.bare.to_str().unwrap(), "main"],
        );
        git(&self.bare, &["rev-parse", "main"])
    }

    /// The lines the setup scripts logged.
    fn setup_runs(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.join("setup.log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
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

/// A commit made in `dir` as an agent would.
fn commit_in(dir: &Path, file: &str, subject: &str) {
    std::fs::write(dir.join(file), format!("{subject}\n")).unwrap();
    git(dir, &["add", file]);
    git(
        dir,
        &[
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@curupira.invalid",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            subject,
        ],
    );
}

fn head_subject(dir: &Path) -> String {
    git(dir, &["log", "-1", "--format=%s"])
}

fn branch_exists(dir: &Path, branch: &str) -> bool {
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

fn worktree_count(dir: &Path) -> usize {
    git(dir, &["worktree", "list", "--porcelain"])
        .lines()
        .filter(|line| line.starts_with("worktree "))
        .count()
}

/// The workspaces of an automation whose tasks get worktrees of `repository`.
fn worktrees(repository: &Repository) -> Workspaces {
    in_repository(
        repository,
        Hooks::default(),
        TaskCheckout::Worktree {
            trigger_type: TRIGGER.to_owned(),
        },
    )
}

fn in_repository(repository: &Repository, hooks: Hooks, checkout: TaskCheckout) -> Workspaces {
    let config = std::env::temp_dir();
    let spec = WorkspaceSpec {
        hooks,
        hook_timeout: Duration::from_secs(30),
        ..WorkspaceSpec::new(config)
    };
    Workspaces::in_repository(spec, repository.clone(), checkout)
}

fn prepare(workspaces: &Workspaces, automation: &str, task: &str) -> Workspace {
    workspaces.prepare(automation, task).unwrap()
}

// ---- names ----

#[test]
fn worktree_names_are_the_sha256_of_the_task_id_as_the_reference_names_them() {
    assert_eq!(worktree_name(TRIGGER, TASK_A), NAME_A);
    assert_eq!(worktree_name(TRIGGER, TASK_B), NAME_B);
    assert_eq!(
        task_branch("e1", TRIGGER, TASK_A),
        format!("curupira/e1/{NAME_A}")
    );
    assert!(worktree_name("items", TASK_A).starts_with("items-0467"));
    // Not made safe: a trigger type outside `[A-Za-z0-9._-]` gets a hash of its own.
    let odd = worktree_name("a b/c", TASK_A);
    assert!(odd.starts_with("a-b-c-"), "{odd}");
    assert!(odd.ends_with(&NAME_A["rec-items-".len()..]), "{odd}");
    let remote = Remote::new();
    git(
        &remote.src,
        &[
            "check-ref-format",
            "--branch",
            &task_branch("../x y", "a b/c", TASK_A),
        ],
    );
}

#[test]
fn every_recorded_worktree_is_named_after_a_recorded_task_id() {
    let recordings = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../recordings/reference-host/repositories.json");
    let Ok(text) = std::fs::read_to_string(&recordings) else {
        println!("skipped: no {}", recordings.display());
        return;
    };
    let hashes = |after: &str| -> Vec<String> {
        text.match_indices(after)
            .filter_map(|(at, _)| text.get(at + after.len()..at + after.len() + 64))
            .filter(|hash| hash.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_owned)
            .collect()
    };
    let task_ids = hashes(":rec/items:");
    let names = hashes("/rec-items-");
    assert!(
        task_ids.len() >= 2 && names.len() >= 2,
        "{task_ids:?} {names:?}"
    );
    for name in &names {
        assert!(
            task_ids
                .iter()
                .any(|id| worktree_name(TRIGGER, id) == format!("rec-items-{name}")),
            "the recorded worktree rec-items-{name} is the hash of no recorded task id"
        );
    }
}

#[test]
fn aliases_and_paths_that_name_no_folder_are_refused() {
    for alias in ["", ".", "..", "a/b", "../x", "/abs"] {
        let err = BaseCheckout::in_workspace_dir("x", Path::new("/ws"), alias).unwrap_err();
        assert!(
            matches!(err, RepositoryError::Alias { .. }),
            "{alias:?}: {err}"
        );
    }
    let err = BaseCheckout::new("x", "/").unwrap_err();
    assert!(matches!(err, RepositoryError::CheckoutPath { .. }), "{err}");
    let checkout = BaseCheckout::new("x", "/srv/checkouts/clone-here").unwrap();
    assert_eq!(
        checkout.worktrees_dir(),
        Path::new("/srv/checkouts/clone-here.worktrees")
    );
}

// ---- the base checkout ----

#[test]
fn a_missing_checkout_is_cloned_into_workspace_dir_alias() {
    let remote = Remote::new();
    let checkout = remote.checkout();
    assert_eq!(checkout.path(), remote.ws().join("demo"));
    assert_eq!(checkout.worktrees_dir(), remote.ws().join("demo.worktrees"));
    assert_eq!(checkout.ensure().unwrap(), Ensured::Cloned);
    let path = checkout.path();
    assert!(path.join("README").is_file());
    assert_eq!(git(path, &["remote", "get-url", "origin"]), remote.url());
    assert_eq!(git(path, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(head_subject(path), "first commit");
    // Nothing else is left beside it (no staging folder).
    let entries: Vec<_> = std::fs::read_dir(remote.ws())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["demo"]);
    assert_eq!(checkout.ensure().unwrap(), Ensured::Existing);
    assert_eq!(checkout.default_branch().unwrap(), "main");
}

#[test]
fn a_missing_path_is_cloned_into_and_its_worktrees_go_beside_it() {
    let remote = Remote::new();
    let path = remote.root.join("checkouts/clone-here");
    let repository = Repository::new(BaseCheckout::new(remote.url(), &path).unwrap());
    let workspaces = worktrees(&repository);
    let workspace = prepare(&workspaces, "e1", TASK_A);
    assert!(path.join(".git").is_dir());
    assert_eq!(
        workspace.path(),
        remote
            .root
            .join("checkouts/clone-here.worktrees/e1")
            .join(NAME_A)
    );
    workspace.finish(true).unwrap();
}

#[test]
fn an_existing_checkout_is_used_as_is_without_setup_and_tasks_start_at_origin() {
    let remote = Remote::new();
    let path = remote.root.join("checkouts/existing");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    git(
        &remote.root,
        &[
            "clone",
            "-q",
            remote.bare.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
    );
    commit_in(&path, "LOCAL", "local-only commit");
    let checkout = BaseCheckout::new(remote.url(), &path)
        .unwrap()
        .with_setup_script("scripts/setup.sh");
    assert_eq!(checkout.ensure().unwrap(), Ensured::Existing);
    assert!(remote.setup_runs().is_empty());
    assert!(!path.join("setup-was-here").exists());

    let repository = Repository::new(checkout);
    let workspace = prepare(&worktrees(&repository), "e1", TASK_A);
    assert_eq!(head_subject(workspace.path()), "first commit");
    assert!(!workspace.path().join("LOCAL").exists());
    // The base checkout keeps its own commit and branch.
    assert_eq!(head_subject(&path), "local-only commit");
    assert_eq!(git(&path, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    workspace.finish(true).unwrap();
    assert!(remote.setup_runs().is_empty());
}

#[test]
fn an_existing_folder_that_is_not_git_is_refused_with_the_reference_sentence() {
    let remote = Remote::new();
    let path = remote.root.join("checkouts/existing");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("plain-file"), "z\n").unwrap();
    let checkout = BaseCheckout::new(remote.url(), &path)
        .unwrap()
        .with_setup_script("scripts/setup.sh");
    let sentence = format!(
        "workspace destination exists but is not a Git checkout: {}",
        path.display()
    );
    assert_eq!(checkout.ensure().unwrap_err().to_string(), sentence);
    // Through a task, the same sentence; for `checkout = "main"` too.
    let repository = Repository::new(checkout);
    let err = worktrees(&repository).prepare("e1", TASK_A).unwrap_err();
    assert_eq!(err.to_string(), sentence);
    let main = in_repository(&repository, Hooks::default(), TaskCheckout::Main);
    assert_eq!(
        main.prepare("e1", TASK_A).unwrap_err().to_string(),
        sentence
    );
    let left: Vec<_> = std::fs::read_dir(&path)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left, ["plain-file"]);
    assert!(!remote.root.join("checkouts/existing.worktrees").exists());
    assert!(remote.setup_runs().is_empty());
}

// ---- setup ----

#[test]
fn setup_runs_once_right_after_a_fresh_clone_and_never_again() {
    let remote = Remote::new();
    let setup = || remote.checkout().with_setup_script("scripts/setup.sh");
    let repository = Repository::new(setup());
    let workspaces = worktrees(&repository);
    let a = prepare(&workspaces, "e1", TASK_A);
    let b = prepare(&workspaces, "e1", TASK_B);
    let checkout = remote.ws().join("demo");
    // In the checkout, without arguments, without `CURUPIRA*` variables of the host's
    // (those of the environment it was started in pass through, as to any child).
    let inherited = std::env::vars()
        .filter(|(key, _)| key.starts_with("CURUPIRA"))
        .count();
    assert_eq!(
        remote.setup_runs(),
        [format!("{}||{inherited}", checkout.display())]
    );
    assert!(checkout.join("setup-was-here").exists());
    assert!(!checkout.join(".git").join(SETUP_PENDING).exists());
    a.finish(true).unwrap();
    b.finish(true).unwrap();
    // The next run finds the checkout: no setup.
    let next = Repository::new(setup());
    assert_eq!(next.ensure_once().unwrap(), Ensured::Existing);
    prepare(&worktrees(&next), "e1", TASK_A)
        .finish(true)
        .unwrap();
    assert_eq!(remote.setup_runs().len(), 1);
}

#[test]
fn concurrent_first_tasks_clone_and_set_up_once() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout().with_setup_script("scripts/setup.sh"));
    let ids: Vec<String> = (0..4).map(|n| format!("{n:064x}")).collect();
    std::thread::scope(|scope| {
        let running: Vec<_> = ids
            .iter()
            .map(|id| {
                let workspaces = worktrees(&repository);
                scope.spawn(move || prepare(&workspaces, "e1", id).finish(true).unwrap())
            })
            .collect();
        for thread in running {
            thread.join().unwrap();
        }
    });
    assert_eq!(remote.setup_runs().len(), 1);
    assert_eq!(worktree_count(repository.checkout().path()), 1);
}

#[test]
fn a_failing_setup_removes_the_fresh_clone_and_the_next_ensure_clones_again() {
    let remote = Remote::new();
    let checkout = remote.checkout().with_setup_script("scripts/fail.sh");
    let err = checkout.ensure().unwrap_err();
    assert_eq!(err.to_string(), "setup_script exited 4: failing-setup-err");
    assert!(!checkout.path().exists());
    assert_eq!(std::fs::read_dir(remote.ws()).unwrap().count(), 0);
    // Cloned again, and fails again.
    let err = checkout.ensure().unwrap_err();
    assert_eq!(err.to_string(), "setup_script exited 4: failing-setup-err");
    assert_eq!(remote.setup_runs(), ["failed", "failed"]);
    // Each task of a run fails with the sentence.
    let repository = Repository::new(checkout);
    let workspaces = worktrees(&repository);
    for task in [TASK_A, TASK_B] {
        let err = workspaces.prepare("e1", task).unwrap_err();
        assert_eq!(err.to_string(), "setup_script exited 4: failing-setup-err");
    }
    assert!(!remote.ws().join("demo").exists());
    assert!(!remote.ws().join("demo.worktrees").exists());
}

#[test]
fn a_setup_that_cannot_start_says_so_as_the_reference_does() {
    let remote = Remote::new();
    for script in ["scripts/setup.sh --fast", "scripts/none.sh"] {
        let checkout = remote.checkout().with_setup_script(script);
        let program = checkout.path().join(script);
        let err = checkout.ensure().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "setup_script failed to start: spawn {0}: program \"{0}\" not found",
                program.display()
            )
        );
        assert!(!checkout.path().exists());
    }
    assert!(remote.setup_runs().is_empty());
}

#[test]
fn a_setup_running_past_its_limit_is_killed_and_the_clone_removed() {
    let remote = Remote::new();
    let checkout = remote
        .checkout()
        .with_setup_script("scripts/slow.sh")
        .with_setup_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = checkout.ensure().unwrap_err();
    assert!(
        matches!(err, RepositoryError::SetupTimedOut { .. }),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!checkout.path().exists());
}

#[test]
fn a_setup_a_killed_host_did_not_finish_is_cloned_and_run_again() {
    let remote = Remote::new();
    let checkout = remote.checkout().with_setup_script("scripts/setup.sh");
    assert_eq!(checkout.ensure().unwrap(), Ensured::Cloned);
    // As a host killed during the setup leaves it: the mark still in `.git`.
    std::fs::write(checkout.path().join(".git").join(SETUP_PENDING), b"").unwrap();
    std::fs::write(checkout.path().join("half-done"), b"").unwrap();
    assert_eq!(checkout.ensure().unwrap(), Ensured::Cloned);
    assert!(!checkout.path().join("half-done").exists());
    assert_eq!(remote.setup_runs().len(), 2);
    // A clone a killed host left half made beside it is removed first.
    std::fs::remove_dir_all(checkout.path()).unwrap();
    let staging = remote.ws().join(".demo.curupira-clone");
    std::fs::create_dir_all(staging.join(".git")).unwrap();
    assert_eq!(checkout.ensure().unwrap(), Ensured::Cloned);
    assert!(!staging.exists());
}

#[test]
fn an_empty_setup_script_runs_nothing() {
    let remote = Remote::new();
    let checkout = remote.checkout().with_setup_script("");
    assert_eq!(checkout.setup_script(), None);
    assert_eq!(checkout.ensure().unwrap(), Ensured::Cloned);
}

// ---- fetch ----

#[test]
fn fetch_picks_up_a_commit_pushed_after_the_clone() {
    let remote = Remote::new();
    let checkout = remote.checkout();
    checkout.ensure().unwrap();
    let first = checkout.fetch().unwrap();
    assert_eq!(first.branch(), "main");
    assert_eq!(first.commit(), git(&remote.bare, &["rev-parse", "main"]));
    let second = remote.push("second commit");
    assert_eq!(checkout.fetch().unwrap().commit(), second);
    // The next run's worktree is at the pushed commit; the local `main` did not move.
    let repository = Repository::new(remote.checkout());
    let workspace = prepare(&worktrees(&repository), "e1", TASK_A);
    assert_eq!(head_subject(workspace.path()), "second commit");
    assert_eq!(
        repository.fetched().map(Fetched::commit),
        Some(second.as_str())
    );
    assert_eq!(head_subject(checkout.path()), "first commit");
    workspace.finish(true).unwrap();
}

#[test]
fn a_run_fetches_once_and_its_tasks_share_the_base() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout());
    let workspaces = worktrees(&repository);
    assert_eq!(workspaces.base(), None);
    let a = prepare(&workspaces, "e1", TASK_A);
    let base = workspaces.base().unwrap().to_owned();
    remote.push("second commit");
    let b = prepare(&workspaces, "e1", TASK_B);
    assert_eq!(git(b.path(), &["rev-parse", "HEAD"]), base);
    a.finish(true).unwrap();
    b.finish(true).unwrap();
}

#[test]
fn the_default_branch_is_origins_head_and_is_asked_for_when_unknown() {
    let remote = Remote::new();
    git(&remote.bare, &["symbolic-ref", "HEAD", "refs/heads/dev"]);
    let checkout = remote.checkout();
    checkout.ensure().unwrap();
    assert_eq!(checkout.default_branch().unwrap(), "dev");
    git(
        checkout.path(),
        &["remote", "set-head", "origin", "--delete"],
    );
    git(&remote.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    assert_eq!(checkout.fetch().unwrap().branch(), "main");
}

// ---- task worktrees ----

#[test]
fn each_task_gets_a_worktree_and_branch_named_as_the_reference_names_them() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout());
    let workspaces = worktrees(&repository);
    assert!(workspaces.adds_worktrees());
    let a = prepare(&workspaces, "e1", TASK_A);
    let b = prepare(&workspaces, "e1", TASK_B);
    let folder = remote.ws().join("demo.worktrees/e1");
    assert_eq!(a.path(), folder.join(NAME_A));
    assert_eq!(b.path(), folder.join(NAME_B));
    assert_eq!(a.path(), workspaces.planned_path("e1", TASK_A));
    let branch = format!("curupira/e1/{NAME_A}");
    assert_eq!(a.branch(), Some(branch.as_str()));
    assert_eq!(
        workspaces.planned_branch("e1", TASK_A).as_deref(),
        Some(branch.as_str())
    );
    assert_eq!(a.origin(), Origin::Created);
    assert_eq!(
        git(a.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        branch
    );
    assert_eq!(
        git(a.path(), &["rev-parse", "--show-toplevel"]),
        a.path().to_str().unwrap()
    );
    assert_eq!(head_subject(a.path()), "first commit");
    assert_eq!(a.env()[1], ("CURUPIRA_BRANCH", branch.clone().into()));
    a.finish(true).unwrap();
    b.finish(true).unwrap();
}

#[test]
fn the_same_item_has_the_same_name_in_two_automations() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout());
    let alpha = prepare(&worktrees(&repository), "alpha", TASK_A);
    let beta = prepare(&worktrees(&repository), "beta", TASK_A);
    assert_eq!(
        alpha.path(),
        remote.ws().join("demo.worktrees/alpha").join(NAME_A)
    );
    assert_eq!(
        beta.path(),
        remote.ws().join("demo.worktrees/beta").join(NAME_A)
    );
    assert_eq!(beta.branch().unwrap(), format!("curupira/beta/{NAME_A}"));
    alpha.finish(true).unwrap();
    beta.finish(false).unwrap();
}

#[test]
fn a_task_worktree_goes_with_its_branch_after_success_and_after_failure() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout());
    let workspaces = worktrees(&repository);
    let checkout = repository.checkout().path().to_owned();
    for (task, succeeded) in [(TASK_A, true), (TASK_B, false)] {
        let workspace = prepare(&workspaces, "e1", task);
        let path = workspace.path().to_owned();
        let branch = workspace.branch().unwrap().to_owned();
        commit_in(&path, "agent.txt", "agent's commit");
        std::fs::write(path.join("dirty.txt"), "uncommitted\n").unwrap();
        assert!(workspace.removes(succeeded));
        assert_eq!(workspace.finish(succeeded).unwrap(), Finished::Removed);
        assert!(!path.exists());
        assert!(!branch_exists(&checkout, &branch), "{branch}");
    }
    assert_eq!(worktree_count(&checkout), 1);
    // The automation's folder stays, empty.
    let folder = remote.ws().join("demo.worktrees/e1");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    // The agent's commits are on no ref any more.
    assert!(!git(&checkout, &["log", "--all", "--format=%s"]).contains("agent's commit"));
}

#[test]
fn a_worktree_deleted_under_the_host_is_pruned_with_its_branch() {
    let remote = Remote::new();
    let repository = Repository::new(remote.checkout());
    let workspace = prepare(&worktrees(&repository), "e1", TASK_A);
    let branch = workspace.branch().unwrap().to_owned();
    std::fs::remove_dir_all(workspace.path()).unwrap();
    assert_eq!(workspace.finish(true).unwrap(), Finished::Removed);
    let checkout = repository.checkout().path();
    assert_eq!(worktree_count(checkout), 1);
    assert!(!branch_exists(checkout, &branch));
}

#[test]
fn a_worktree_and_branch_left_by_a_killed_run_are_replaced() {
    let remote = Remote::new();
    let first_run = Repository::new(remote.checkout());
    let left = prepare(&worktrees(&first_run), "e1", TASK_A);
    let path = left.path().to_owned();
    let branch = left.branch().unwrap().to_owned();
    commit_in(&path, "agent.txt", "agent's commit");
    std::fs::write(path.join("dirty.txt"), "uncommitted\n").unwrap();
    drop(left); // the host was killed: no finish
    let pushed = remote.push("second commit");

    let next_run = Repository::new(remote.checkout());
    let workspaces = worktrees(&next_run);
    let fresh = prepare(&workspaces, "e1", TASK_A);
    assert_eq!(fresh.path(), path);
    assert_eq!(fresh.origin(), Origin::Created);
    assert_eq!(git(&path, &["rev-parse", "HEAD"]), pushed);
    assert!(!path.join("dirty.txt").exists() && !path.join("agent.txt").exists());
    assert_eq!(git(&path, &["rev-parse", "--abbrev-ref", "HEAD"]), branch);
    fresh.finish(true).unwrap();

    // Only the branch left (killed between the two removals): reset to the base.
    let checkout = next_run.checkout().path().to_owned();
    git(&checkout, &["branch", &branch, "HEAD~0"]);
    let again = prepare(&workspaces, "e1", TASK_A);
    assert_eq!(git(again.path(), &["rev-parse", "HEAD"]), pushed);
    again.finish(true).unwrap();

    // An empty folder in its place is taken; anything else is refused.
    std::fs::create_dir_all(&path).unwrap();
    prepare(&workspaces, "e1", TASK_A).finish(true).unwrap();
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("someone's"), "x\n").unwrap();
    let err = workspaces.prepare("e1", TASK_A).unwrap_err();
    assert!(matches!(err, WorkspaceError::PathTaken { .. }), "{err}");
}

#[test]
fn hooks_run_in_a_repository_worktree() {
    let remote = Remote::new();
    let log = remote.root.join("hooks.log");
    let hook = |name: &str| {
        Some(format!(
            "echo \"{name} $PWD $CURUPIRA_BRANCH\" >> '{}'",
            log.display()
        ))
    };
    let hooks = Hooks {
        after_create: hook("after_create"),
        before_run: hook("before_run"),
        after_run: hook("after_run"),
        before_remove: hook("before_remove"),
    };
    let repository = Repository::new(remote.checkout());
    let workspaces = in_repository(
        &repository,
        hooks,
        TaskCheckout::Worktree {
            trigger_type: TRIGGER.to_owned(),
        },
    );
    let workspace = prepare(&workspaces, "e1", TASK_A);
    let path = workspace.path().display().to_string();
    let branch = workspace.branch().unwrap().to_owned();
    for kind in [
        HookKind::AfterCreate,
        HookKind::BeforeRun,
        HookKind::AfterRun,
    ] {
        workspace.run_hook(kind).unwrap();
    }
    workspace.finish(false).unwrap();
    let lines = std::fs::read_to_string(&log).unwrap();
    let expected: Vec<String> = ["after_create", "before_run", "after_run", "before_remove"]
        .iter()
        .map(|name| format!("{name} {path} {branch}"))
        .collect();
    assert_eq!(lines.lines().collect::<Vec<_>>(), expected);
}

// ---- checkout = "main" ----

#[test]
fn main_runs_in_the_base_checkout_cloned_when_missing_and_never_fetched() {
    let remote = Remote::new();
    let log = remote.root.join("hooks.log");
    let hook = |name: &str| Some(format!("echo \"{name} $PWD\" >> '{}'", log.display()));
    let hooks = Hooks {
        after_create: hook("after_create"),
        before_run: hook("before_run"),
        after_run: None,
        before_remove: hook("before_remove"),
    };
    let checkout = || remote.checkout().with_setup_script("scripts/setup.sh");
    let repository = Repository::new(checkout());
    let workspaces = in_repository(&repository, hooks.clone(), TaskCheckout::Main);
    assert!(!workspaces.adds_worktrees());
    let base = remote.ws().join("demo");
    assert_eq!(workspaces.planned_path("e1", TASK_A), base);
    assert_eq!(workspaces.planned_branch("e1", TASK_A), None);
    for task in [TASK_A, TASK_B] {
        let workspace = prepare(&workspaces, "e1", task);
        assert_eq!(workspace.path(), base);
        assert_eq!(workspace.branch(), None);
        assert_eq!(workspace.origin(), Origin::Shared);
        workspace.run_hook(HookKind::AfterCreate).unwrap();
        workspace.run_hook(HookKind::BeforeRun).unwrap();
        assert_eq!(workspace.finish(false).unwrap(), Finished::Kept);
    }
    assert_eq!(remote.setup_runs().len(), 1);
    assert_eq!(git(&base, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert!(!remote.ws().join("demo.worktrees").exists());
    let lines = std::fs::read_to_string(&log).unwrap();
    let expected = format!("before_run {0}\nbefore_run {0}\n", base.display());
    assert_eq!(lines, expected);
    assert_eq!(workspaces.base(), None);

    // After a push, the next run still sees the first commit: no fetch.
    remote.push("second commit");
    let next = Repository::new(checkout());
    let workspace = prepare(
        &in_repository(&next, hooks, TaskCheckout::Main),
        "e1",
        TASK_A,
    );
    assert_eq!(head_subject(workspace.path()), "first commit");
    assert!(!git(&base, &["log", "--all", "--format=%s"]).contains("second commit"));
    assert_eq!(remote.setup_runs().len(), 1);
}
