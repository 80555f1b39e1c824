//! The watchdog: agents and hooks never run unsupervised after their host died.
//!
//! A host (`curupira run`) starts one watchdog per run: its own executable with the
//! hidden subcommand `watchdog`, which calls [`serve`], in a process group of its own (a terminal's Ctrl-C or a
//! kill of the host's group does not reach it). The host tells it, on a pipe, each
//! process group it starts (an agent, a hook) and each it reaped:
//!
//! ```text
//! add PGID GRACE_MS [LABEL]
//! remove PGID
//! clear
//! ```
//!
//! When the pipe reaches its end the host has closed it, or has died: the kernel
//! closes a dead process's files, SIGKILL included, on every Unix. The watchdog then
//! sends SIGTERM to every group still registered, waits each group's grace (the
//! automation's `kill_grace_seconds`) while any of its processes lives, sends SIGKILL
//! to what is left, and exits. A host that ends normally has reaped its agents: it
//! says `clear` before it closes the pipe, and the watchdog exits at once.
//!
//! Before it reads its first line the watchdog takes an exclusive lock on
//! `<state folder>/watchdog.lock`, and only then answers `ready`: the host dispatches
//! nothing before that answer. So a host started while an earlier host's watchdog
//! still stops that host's agents waits until they are gone. The ledger's check of a
//! `running` task's agent (through [`group_alive`]) covers what is
//! left: a watchdog killed with its host.
//!
//! **What leaves its group** (`setsid`, a daemon's double fork) is found by its
//! environment instead (Linux): every agent and hook starts with [`RUN_VAR`] set to a
//! [`Label`] of its own, `TAG/N`, where `TAG` is the run's (given to the watchdog as
//! `--run TAG`) and `N` the number its `add` line ends with (`add PGID GRACE N`), and
//! what they start inherits it. Once a group with a label is removed (its agent or
//! hook ended and the host killed its group) or cleared, and when the pipe ends, the
//! watchdog looks through `/proc` (at most every [`SWEEP_PAUSE`], so a burst of ended
//! tasks costs one look) for live processes carrying an ended label, or at the end any
//! label of the run, and stops them: SIGTERM, [`LEFTOVER_GRACE`], SIGKILL, each
//! through a pidfd (a reused process id is never signalled). A group still
//! registered is left alone, so an agent's detached helper lives as long as its agent.
//! Extensions start with a label too, never added: it ends with the run.
//!
//! **The host never waits for its watchdog.** Lines go to the pipe from a thread of
//! their own ([`Watch`]'s outbox): agent, hook and extension threads only queue them,
//! so a watchdog that stops reading (stopped with SIGSTOP, starved) never holds up an
//! agent's supervision or reaping. While it does not read, an `add` and the `remove`
//! of the same group that both still wait cancel out once [`MAX_UNSENT`] lines wait
//! (the group is gone: the watchdog need not know it, and what it left outside its
//! group is stopped at the run's end instead), so what waits stays bounded by the
//! groups alive.
//!
//! What does not hold: a process that left its group *and* cleared its environment
//! (or set [`RUN_VAR`] to something else) is not stopped; an agent started just before
//! its host died, before its `add` line reached the pipe, is stopped by its label
//! alone, so only on Linux and with the leftovers' grace; the environment is looked
//! for on Linux only; elsewhere than Unix there is no watchdog.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::ProcessGuard;

/// The name of the watchdog's lock file in the state folder.
pub const LOCK_FILE: &str = "watchdog.lock";

/// The subcommand of the `curupira` executable that runs the watchdog.
pub const SUBCOMMAND: &str = "watchdog";

/// What the watchdog writes on its stdout once it holds its lock.
const READY: &str = "ready";

/// How often a stopping watchdog looks whether its groups are gone.
const STEP: Duration = Duration::from_millis(20);

/// How long a host says nothing while it waits for its watchdog to be ready.
const QUIET_WAIT: Duration = Duration::from_secs(2);

/// The environment variable that marks an agent or a hook, and what it starts, with
/// its [`Label`].
pub const RUN_VAR: &str = "CURUPIRA_RUN";

/// How long the watchdog gathers ended labels before it looks for what they left: the
/// ended tasks of a busy moment cost one look through `/proc`, and the processes a
/// host has just killed with their group have exited by then.
pub const SWEEP_PAUSE: Duration = Duration::from_millis(250);

/// The SIGTERM-to-SIGKILL grace of a process left behind by an agent or hook that has
/// ended. Short and fixed: the agent's own grace (`kill_grace_seconds`) was for the
/// agent, and a host that ends waits for its watchdog only so long.
pub const LEFTOVER_GRACE: Duration = Duration::from_secs(1);

/// How many lines may wait for a watchdog that does not read before the `add`s and
/// `remove`s that cancel out are dropped (see the module documentation).
pub const MAX_UNSENT: usize = 4_096;

/// The value of [`RUN_VAR`] for one agent or hook ([`Watch::label`]), and the number
/// its `add` line carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    number: u64,
    value: String,
}

impl Label {
    /// What [`RUN_VAR`] is set to: `TAG/N`.
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// The host's side: the watchdog process and the pipe to it.
#[derive(Debug)]
pub struct Watchdog {
    guard: ProcessGuard,
    watch: Watch,
}

/// A watchdog started and not known to be ready yet ([`Watchdog::spawn`]).
#[derive(Debug)]
pub struct StartingWatchdog {
    guard: ProcessGuard,
    input: Option<ChildStdin>,
    answer: mpsc::Receiver<io::Result<bool>>,
    lock: PathBuf,
    tag: String,
}

impl StartingWatchdog {
    /// Waits until the watchdog is ready, which is when no earlier watchdog holds its
    /// lock any more (saying so every 2 s meanwhile). An error when it exits before.
    pub fn ready(self) -> io::Result<Watchdog> {
        let started = Instant::now();
        loop {
            match self.answer.recv_timeout(QUIET_WAIT) {
                Ok(Ok(true)) => break,
                Ok(Ok(false)) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other(
                        "the watchdog exited before it was ready (see its message above)",
                    ));
                }
                Ok(Err(err)) => return Err(err),
                Err(RecvTimeoutError::Timeout) => tracing::warn!(
                    "waiting for an earlier host's watchdog to stop that host's agents ({} s \
                     so far; `{}` is locked)",
                    started.elapsed().as_secs(),
                    self.lock.display()
                ),
            }
        }
        Ok(Watchdog {
            guard: self.guard,
            watch: Watch {
                outbox: Outbox::start(self.input),
                tag: self.tag.into(),
                labels: Arc::new(AtomicU64::new(0)),
            },
        })
    }

    /// The watchdog's process id.
    pub fn id(&self) -> u32 {
        self.guard.id()
    }
}

/// A handle to tell the watchdog about process groups; cheap to clone, usable from
/// any thread, and it never waits for the watchdog: lines are queued and written by a
/// thread of their own (module documentation). Writes that fail (a dead watchdog) are
/// logged once and otherwise ignored: supervision is lost, the run goes on.
#[derive(Debug, Clone)]
pub struct Watch {
    outbox: Arc<Outbox>,
    /// The run's tag, the watchdog's `--run`.
    tag: Arc<str>,
    /// The last label's number.
    labels: Arc<AtomicU64>,
}

/// One line for the watchdog.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Add {
        pgid: u32,
        grace_ms: u128,
        label: u64,
    },
    Remove {
        pgid: u32,
    },
    Clear,
}

impl Line {
    fn write_to(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match self {
            Line::Add {
                pgid,
                grace_ms,
                label,
            } => writeln!(out, "add {pgid} {grace_ms} {label}"),
            Line::Remove { pgid } => writeln!(out, "remove {pgid}"),
            Line::Clear => writeln!(out, "clear"),
        };
    }
}

/// The lines on their way to the watchdog. A line is written at once by the thread
/// that sends it when the pipe takes it (non-blocking: a line is far below `PIPE_BUF`,
/// so it goes whole or not at all); when the pipe is full, it and every later line
/// wait here, in order, for a writer thread that waits for room.
#[derive(Debug)]
struct Outbox {
    state: Mutex<Unsent>,
    /// Woken when a line waits, the pipe is to close, or the writer finished.
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Unsent {
    /// The pipe; `None` once closed or broken.
    pipe: Option<Arc<ChildStdin>>,
    /// Lines behind a full pipe, in order.
    lines: Vec<Line>,
    /// The writer holds bytes or lines not written yet: a new line waits behind them.
    backlog: bool,
    /// Close the pipe once what waits is written.
    closing: bool,
    /// Nothing more is written: the pipe is closed, or a write failed.
    done: bool,
    /// Said once: lines were dropped because the watchdog does not read.
    warned: bool,
}

impl Outbox {
    /// An outbox writing to `pipe`, with its writer thread; `None` (no pipe, or no
    /// thread) drops every line.
    fn start(pipe: Option<ChildStdin>) -> Arc<Outbox> {
        let outbox = Arc::new(Outbox {
            state: Mutex::new(Unsent::default()),
            changed: Condvar::new(),
        });
        let pipe = pipe.filter(|pipe| rustix::io::ioctl_fionbio(pipe, true).is_ok());
        let started = pipe.and_then(|pipe| {
            let writer = Arc::clone(&outbox);
            outbox.lock().pipe = Some(Arc::new(pipe));
            thread::Builder::new()
                .name("watch-lines".to_owned())
                .spawn(move || writer.write_backlog())
                .ok()
        });
        if started.is_none() {
            let mut unsent = outbox.lock();
            unsent.pipe = None;
            unsent.done = true;
        }
        outbox
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Unsent> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `line`: written now when nothing waits and the pipe takes it, else queued
    /// for the writer thread. Never waits for the watchdog.
    fn send(&self, line: Line) {
        let mut unsent = self.lock();
        if unsent.done || unsent.closing {
            return;
        }
        if !unsent.backlog
            && let Some(pipe) = unsent.pipe.clone()
        {
            let mut text = String::with_capacity(64);
            line.write_to(&mut text);
            loop {
                match (&*pipe).write(text.as_bytes()) {
                    Ok(written) if written == text.len() => return,
                    // A pipe takes a line under `PIPE_BUF` whole or not at all
                    // (POSIX); were it cut, the watchdog would report the mangled line
                    // and ignore it, and the whole line follows.
                    Ok(_) => break,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                    Err(err) => {
                        Self::broken(&mut unsent, &err);
                        return;
                    }
                }
            }
            unsent.backlog = true;
        }
        unsent.lines.push(line);
        if unsent.lines.len() > MAX_UNSENT {
            cancel_out(&mut unsent.lines);
            if unsent.lines.len() > MAX_UNSENT {
                unsent.lines.pop();
                if !std::mem::replace(&mut unsent.warned, true) {
                    tracing::warn!(
                        "the watchdog has not read for {MAX_UNSENT} lines; process groups \
                         are no longer all registered with it"
                    );
                }
            }
        }
        drop(unsent);
        self.changed.notify_all();
    }

    /// A write failed (a dead watchdog): said once, and nothing more is written.
    fn broken(unsent: &mut Unsent, err: &io::Error) {
        tracing::warn!(
            "the watchdog cannot be told about a process ({err}); agents are no longer \
             stopped if this host dies"
        );
        unsent.pipe = None;
        unsent.lines.clear();
        unsent.done = true;
    }

    /// The writer thread: writes what waits behind a full pipe, as room comes, and
    /// closes the pipe when asked once nothing waits.
    fn write_backlog(&self) {
        let mut text: Vec<u8> = Vec::new();
        loop {
            let pipe = {
                let mut unsent = self.lock();
                loop {
                    if unsent.done {
                        return;
                    }
                    if !unsent.lines.is_empty() || !text.is_empty() {
                        break;
                    }
                    // Nothing held: senders may write themselves again.
                    unsent.backlog = false;
                    if unsent.closing {
                        unsent.pipe = None;
                        unsent.done = true;
                        drop(unsent);
                        self.changed.notify_all();
                        return;
                    }
                    unsent = self
                        .changed
                        .wait(unsent)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                let mut formatted = String::new();
                for line in unsent.lines.drain(..) {
                    line.write_to(&mut formatted);
                }
                text.extend_from_slice(formatted.as_bytes());
                match &unsent.pipe {
                    Some(pipe) => Arc::clone(pipe),
                    None => return,
                }
            };
            if let Err(err) = write_when_room(&pipe, &mut text) {
                let mut unsent = self.lock();
                Self::broken(&mut unsent, &err);
                drop(unsent);
                self.changed.notify_all();
                return;
            }
        }
    }

    /// Has the pipe closed once what waits is written; waits at most `limit` for that.
    /// Whether it was closed.
    fn close(&self, limit: Duration) -> bool {
        let mut unsent = self.lock();
        unsent.closing = true;
        self.changed.notify_all();
        let (unsent, _) = self
            .changed
            .wait_timeout_while(unsent, limit, |unsent| !unsent.done)
            .unwrap_or_else(PoisonError::into_inner);
        unsent.done
    }
}

/// Writes some of `text` to the non-blocking `pipe` once it has room (waiting in
/// `poll` for it), and drops what was written from `text`.
fn write_when_room(pipe: &ChildStdin, text: &mut Vec<u8>) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [PollFd::new(pipe, PollFlags::OUT)];
    match poll(&mut fds, None) {
        Ok(_) | Err(rustix::io::Errno::INTR) => {}
        Err(errno) => return Err(errno.into()),
    }
    match { pipe }.write(text) {
        Ok(written) => {
            text.drain(..written);
            Ok(())
        }
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(())
        }
        Err(err) => Err(err),
    }
}

/// Drops each `add` that a later `remove` of the same group follows, and that
/// `remove`: a group that came and went while the watchdog was not reading.
fn cancel_out(lines: &mut Vec<Line>) {
    let mut keep = vec![true; lines.len()];
    // From the end: a `remove` cancels the nearest `add` of its group before it.
    let mut pending_removes: HashMap<u32, Vec<usize>> = HashMap::new();
    for (at, line) in lines.iter().enumerate().rev() {
        match line {
            Line::Remove { pgid } => pending_removes.entry(*pgid).or_default().push(at),
            Line::Add { pgid, .. } => {
                if let Some(remove) = pending_removes.get_mut(pgid).and_then(Vec::pop) {
                    keep[at] = false;
                    keep[remove] = false;
                }
            }
            Line::Clear => pending_removes.clear(),
        }
    }
    let mut at = 0;
    lines.retain(|_| {
        at += 1;
        keep[at - 1]
    });
}

impl Watchdog {
    /// Starts the watchdog (`host_exe watchdog --lock LOCK`) without waiting for it:
    /// [`StartingWatchdog::ready`] waits until no earlier watchdog holds `lock` any
    /// more, so the host can do other work while the watchdog's executable loads.
    /// Dropped before it is ready, the watchdog is killed.
    pub fn spawn(host_exe: &Path, lock: &Path) -> io::Result<StartingWatchdog> {
        let tag = run_tag();
        let mut command = Command::new(host_exe);
        command
            .arg(SUBCOMMAND)
            .arg("--lock")
            .arg(lock)
            .arg("--run")
            .arg(&tag)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut guard = ProcessGuard::spawn(&mut command)?;
        let input = guard.take_stdin();
        let Some(stdout) = guard.take_stdout() else {
            return Err(io::Error::other("the watchdog has no standard output"));
        };
        let (sender, answer) = mpsc::channel();
        thread::Builder::new()
            .name("watchdog-ready".to_owned())
            .spawn(move || {
                let mut line = String::new();
                let read = BufReader::new(stdout).read_line(&mut line);
                let _ = sender.send(read.map(|_| line.trim() == READY));
            })?;
        Ok(StartingWatchdog {
            guard,
            input,
            answer,
            lock: lock.to_owned(),
            tag,
        })
    }

    /// The watchdog's process id.
    pub fn id(&self) -> u32 {
        self.guard.id()
    }

    /// A handle to register process groups.
    pub fn watch(&self) -> Watch {
        self.watch.clone()
    }

    /// Closes the pipe (the watchdog stops what is still registered, normally nothing)
    /// and waits at most `limit` for it to exit; the guard kills it after that.
    pub fn close(mut self, limit: Duration) {
        self.watch.outbox.send(Line::Clear);
        if !self.watch.outbox.close(limit) {
            tracing::warn!(
                "the watchdog did not read its last lines within {} s",
                limit.as_secs()
            );
        }
        if self.guard.wait_for(limit).is_none() {
            tracing::warn!(
                "the watchdog did not exit within {} s; killing it",
                limit.as_secs()
            );
        }
    }
}

impl Watch {
    /// A new label, for the environment of an agent or hook about to start
    /// ([`RUN_VAR`]), then for its [`add`](Self::add).
    pub fn label(&self) -> Label {
        let number = self.labels.fetch_add(1, Ordering::Relaxed) + 1;
        Label {
            number,
            value: format!("{}/{number}", self.tag),
        }
    }

    /// Registers the process group `pgid`, started with `label` in its environment, to
    /// be stopped with `grace` if the host dies; what carries `label` once the group is
    /// removed is stopped too (see the module documentation).
    pub fn add(&self, pgid: u32, grace: Duration, label: &Label) {
        self.outbox.send(Line::Add {
            pgid,
            grace_ms: grace.as_millis(),
            label: label.number,
        });
    }

    /// The group `pgid` was reaped: forget it.
    pub fn remove(&self, pgid: u32) {
        self.outbox.send(Line::Remove { pgid });
    }
}

/// The watchdog's own work (the hidden subcommand): takes the lock on `lock` (waiting
/// for an earlier watchdog), says `ready` on `ready`, then follows `input` until its
/// end and stops every group still registered. With the run's `tag`, it also stops what
/// the ended agents and hooks left outside their groups (module documentation).
/// Malformed lines are reported on stderr and ignored.
pub fn serve(
    lock: &Path,
    tag: Option<&str>,
    input: impl BufRead,
    mut ready: impl Write,
) -> io::Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock)?;
    crate::lock::lock_blocking(&file)?;
    writeln!(ready, "{READY}")?;
    ready.flush()?;
    drop(ready);
    let sweeps = Arc::new(Sweeps::default());
    let sweeper = match tag {
        Some(tag) => {
            let (sweeps, tag) = (Arc::clone(&sweeps), tag.to_owned());
            Some(
                thread::Builder::new()
                    .name("sweeper".to_owned())
                    .spawn(move || sweeps.serve(&tag))?,
            )
        }
        None => None,
    };
    // Each group's grace and label.
    let mut groups: HashMap<u32, (Duration, Option<u64>)> = HashMap::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        let malformed = || say(&format!("ignored a malformed line `{line}`"));
        match words.as_slice() {
            ["add", pgid, grace, label @ ..] if label.len() <= 1 => {
                let label = label.first().map(|label| label.parse::<u64>());
                match (pgid.parse(), grace.parse(), label.transpose()) {
                    (Ok(pgid), Ok(grace), Ok(label)) => {
                        groups.insert(pgid, (Duration::from_millis(grace), label));
                        sweeps.added(pgid);
                    }
                    _ => malformed(),
                }
            }
            ["clear"] => {
                let labels = groups.drain().filter_map(|(_, (_, label))| label);
                sweeps.ended(None, labels);
            }
            ["remove", pgid] => match pgid.parse::<u32>() {
                Ok(pgid) => {
                    if let Some((_, label)) = groups.remove(&pgid) {
                        sweeps.ended(Some(pgid), label);
                    }
                }
                Err(_) => malformed(),
            },
            _ => malformed(),
        }
    }
    // The last look for what was left runs beside the stopping of the groups (and
    // leaves their processes to it: they have their grace).
    sweeps.close();
    if !groups.is_empty() {
        say(&format!(
            "the host is gone; stopping {} process group(s) it left",
            groups.len()
        ));
        stop_groups(groups.into_iter().map(|(pgid, (grace, _))| (pgid, grace)));
    }
    if let Some(sweeper) = sweeper {
        let _ = sweeper.join();
    }
    drop(file);
    Ok(())
}

/// A tag no other run on this machine has at the same time: this process's id and the
/// time.
fn run_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!("{}-{nanos:x}", std::process::id())
}

/// The labels whose groups ended, for the sweeper thread.
#[derive(Default)]
struct Sweeps {
    state: Mutex<SweepState>,
    wake: Condvar,
}

#[derive(Default)]
struct SweepState {
    ended: HashSet<u64>,
    /// The groups registered: what is in one is not left behind.
    registered: HashSet<u32>,
    /// The pipe ended: one last look, for every label of the run.
    closing: bool,
}

impl Sweeps {
    fn lock(&self) -> std::sync::MutexGuard<'_, SweepState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn added(&self, pgid: u32) {
        self.lock().registered.insert(pgid);
    }

    /// The group `pgid` (`None`: every group) ended, with `labels`.
    fn ended(&self, pgid: Option<u32>, labels: impl IntoIterator<Item = u64>) {
        let mut state = self.lock();
        match pgid {
            Some(pgid) => {
                state.registered.remove(&pgid);
            }
            None => state.registered.clear(),
        }
        let before = state.ended.len();
        state.ended.extend(labels);
        if state.ended.len() > before {
            self.wake.notify_one();
        }
    }

    fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }

    /// The sweeper thread: waits for ended labels, gathers for [`SWEEP_PAUSE`], stops
    /// what carries them; at the close, what carries any label of `tag`.
    fn serve(&self, tag: &str) {
        loop {
            let mut state = self.lock();
            while state.ended.is_empty() && !state.closing {
                state = self
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            let deadline = Instant::now() + SWEEP_PAUSE;
            while !state.closing {
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    break;
                };
                state = self
                    .wake
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            let ended = std::mem::take(&mut state.ended);
            let closing = state.closing;
            let registered = state.registered.clone();
            drop(state);
            stop_leftovers(tag, &registered, |label| closing || ended.contains(&label));
            if closing {
                return;
            }
        }
    }
}

/// Stops every live process whose [`RUN_VAR`] is `tag/N` with `pick(N)` and that is
/// in none of the `registered` groups: SIGTERM, [`LEFTOVER_GRACE`] for them to exit,
/// then SIGKILL to what carries such a label still (their children started meanwhile
/// included). Linux only.
fn stop_leftovers(tag: &str, registered: &HashSet<u32>, pick: impl Fn(u64) -> bool) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::Signal as Sig;
        let found = leftovers(tag, registered, &pick);
        if found.is_empty() {
            return;
        }
        say(&format!(
            "stopping {} process(es) that agents, hooks or extensions of this run left \
             outside their process groups",
            found.len()
        ));
        for (_, pidfd) in &found {
            let _ = rustix::process::pidfd_send_signal(pidfd, Sig::TERM);
        }
        wait_exits(found, LEFTOVER_GRACE);
        let left = leftovers(tag, registered, &pick);
        for (pid, pidfd) in &left {
            say(&format!("killing process {pid}, still alive after SIGTERM"));
            let _ = rustix::process::pidfd_send_signal(pidfd, Sig::KILL);
        }
        wait_exits(left, KILL_WAIT);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (tag, registered, pick);
}

/// The live processes whose [`RUN_VAR`] is `tag/N` with `pick(N)` and that are in none
/// of the `registered` groups, each with a pidfd opened before its environment was
/// read again (so the pidfd is the process that was looked at, or one already gone: a
/// reused process id is never signalled).
#[cfg(target_os = "linux")]
fn leftovers(
    tag: &str,
    registered: &HashSet<u32>,
    pick: &dyn Fn(u64) -> bool,
) -> Vec<(u32, rustix::fd::OwnedFd)> {
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    let prefix = format!("{RUN_VAR}={tag}/");
    let label = |pid: u32| {
        // Another user's, or a zombie's (no memory left): unreadable or empty.
        let environment = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let number = environment
            .split(|byte| *byte == 0)
            .find_map(|variable| variable.strip_prefix(prefix.as_bytes()))?;
        std::str::from_utf8(number).ok()?.parse::<u64>().ok()
    };
    let picked = |pid: u32| {
        label(pid).is_some_and(pick)
            && !read_stat(pid).is_some_and(|stat| registered.contains(&stat.pgrp))
    };
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !picked(pid) {
            continue;
        }
        let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            continue;
        };
        if let Ok(pidfd) = pidfd_open(raw, PidfdFlags::empty())
            && picked(pid)
        {
            found.push((pid, pidfd));
        }
    }
    found
}

/// Waits until every process of `pidfds` exited (a pidfd becomes readable), at most
/// `limit`.
#[cfg(target_os = "linux")]
fn wait_exits(mut pidfds: Vec<(u32, rustix::fd::OwnedFd)>, limit: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let deadline = Instant::now() + limit;
    while !pidfds.is_empty() && Instant::now() < deadline {
        let exited: Vec<bool> = {
            let mut fds: Vec<PollFd<'_>> = pidfds
                .iter()
                .map(|(_, pidfd)| PollFd::new(pidfd, PollFlags::IN))
                .collect();
            let zero = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            if poll(&mut fds, Some(&zero)).is_err() {
                return;
            }
            fds.iter().map(|fd| !fd.revents().is_empty()).collect()
        };
        let mut exited = exited.into_iter();
        pidfds.retain(|_| !exited.next().unwrap_or(true));
        if !pidfds.is_empty() {
            thread::sleep(STEP);
        }
    }
}

/// SIGTERM to every group, then SIGKILL to each still alive when its grace is over;
/// returns once every group is gone (or [`KILL_WAIT`] after its SIGKILL), so a host
/// that waits for this watchdog's lock finds them gone.
fn stop_groups(groups: impl IntoIterator<Item = (u32, Duration)>) {
    let started = Instant::now();
    // (group, when to act next, whether SIGKILL was sent)
    let mut left: Vec<(u32, Instant, bool)> = groups
        .into_iter()
        .filter(|(pgid, _)| *pgid > 1)
        .map(|(pgid, grace)| (pgid, started + grace, false))
        .collect();
    for (pgid, _, _) in &left {
        signal_group(*pgid, Signal::Term);
    }
    while !left.is_empty() {
        let now = Instant::now();
        left.retain_mut(|(pgid, deadline, killed)| {
            if !group_alive(*pgid, None) || (*killed && now >= *deadline) {
                return false;
            }
            if !*killed && now >= *deadline {
                signal_group(*pgid, Signal::Kill);
                *killed = true;
                *deadline = now + KILL_WAIT;
            }
            true
        });
        if !left.is_empty() {
            thread::sleep(STEP);
        }
    }
}

/// How long the watchdog waits for a group to be gone after its SIGKILL (a killed
/// process must still be scheduled to exit; on a busy machine that takes a moment).
const KILL_WAIT: Duration = Duration::from_secs(2);

/// The two signals the watchdog sends.
#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

fn signal_group(pgid: u32, signal: Signal) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal as Sig, kill_process_group};
        let signal = match signal {
            Signal::Term => Sig::TERM,
            Signal::Kill => Sig::KILL,
        };
        if let Some(pid) = i32::try_from(pgid)
            .ok()
            .filter(|pid| *pid > 1)
            .and_then(Pid::from_raw)
        {
            let _ = kill_process_group(pid, signal);
        }
    }
    #[cfg(not(unix))]
    let _ = (pgid, signal);
}

/// Whether the process group `pgid` has a process that is not a zombie (an exited
/// process its parent has not reaped: where nobody reaps orphans, a killed agent stays
/// one). With `leader_start`, a leader (pid `pgid`) that exists with another start
/// time means the id was reused by another process: not the group meant.
///
/// On Linux this reads `/proc`; on other Unixes it asks `kill(-pgid, 0)`, which also
/// counts zombies (so a host may wait longer there, never shorter). Elsewhere: `false`.
pub fn group_alive(pgid: u32, leader_start: Option<u64>) -> bool {
    if pgid <= 1 {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        if let Ok(entries) = std::fs::read_dir("/proc") {
            let mut alive = false;
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|name| name.parse::<u32>().ok()) else {
                    continue;
                };
                let Some(stat) = read_stat(pid) else { continue };
                if stat.pgrp != pgid {
                    continue;
                }
                if pid == pgid
                    && let Some(start) = leader_start
                    && start != stat.start
                {
                    return false;
                }
                alive |= stat.state != 'Z' && stat.state != 'X';
            }
            return alive;
        }
    }
    #[cfg(unix)]
    {
        let _ = leader_start;
        let Some(pid) = i32::try_from(pgid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        match rustix::process::test_kill_process_group(pid) {
            Ok(()) | Err(rustix::io::Errno::PERM) => true,
            Err(_) => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = leader_start;
        false
    }
}

/// One line of the watchdog's on stderr (the host's), without ever waiting for its
/// reader: a watchdog must stop its groups whoever reads ([`crate::stderr`]).
fn say(message: &str) {
    crate::stderr::write(format!("curupira watchdog: {message}\n").as_bytes());
}

/// The fields of `/proc/PID/stat` the watchdog needs.
#[cfg(target_os = "linux")]
struct Stat {
    state: char,
    pgrp: u32,
    start: u64,
}

/// Reads `/proc/PID/stat`; `None` when the process is gone or the line is odd.
#[cfg(target_os = "linux")]
fn read_stat(pid: u32) -> Option<Stat> {
    use std::io::Read;
    // One line of at most ~1 KiB (52 numbers and a 16-byte name): read into a buffer
    // of that size, which procfs fills in one call (`read_to_string` would `fstat`
    // and probe in small reads: ten system calls per agent instead of three, and the
    // line's end saves the read that would see the end of the file).
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut buffer = [0u8; 2048];
    let mut len = 0;
    while len < buffer.len() {
        match file.read(&mut buffer[len..]) {
            Ok(0) => break,
            Ok(n) => {
                len += n;
                // The line is whole (procfs gives it in one read): no read to see
                // the end of the file.
                if buffer[..len].ends_with(b"\n") {
                    break;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let text = std::str::from_utf8(&buffer[..len]).ok()?;
    // `comm` (field 2) is in parentheses and may hold anything: count after it.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Linux: the start time of process `pid` in clock ticks since boot (field 22 of
/// `/proc/PID/stat`); `None` elsewhere or when the process is gone.
pub fn process_start(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        read_stat(pid).map(|stat| stat.start)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The boot clock around one spawn: the start time of the process it made, without
/// reading `/proc` when the clock stayed within one tick.
///
/// Linux stamps a process with the boot clock (`CLOCK_BOOTTIME`) when it forks and
/// shows that stamp in whole clock ticks (field 22 of `/proc/PID/stat`), so a process
/// forked between two readings of that clock that fall in the same tick started in
/// that tick. A spawn takes a fraction of a millisecond and a tick is 10 ms: most
/// spawns are told their start for the price of two clock readings (the vDSO, no
/// system call) instead of opening and reading `/proc/PID/stat` (~25 µs per agent on
/// the machine of [`docs/BENCHMARKS.md`](https://example.invalid/curupira/blob/main/docs/BENCHMARKS.md));
/// the others read it as before.
#[derive(Debug, Clone, Copy)]
pub struct SpawnWindow {
    /// The boot clock's tick before the spawn; `None` off Linux.
    before: Option<u64>,
}

impl SpawnWindow {
    /// Opens the window: call it right before the spawn.
    pub fn open() -> Self {
        SpawnWindow {
            before: boot_ticks(),
        }
    }

    /// The start time of `pid`, spawned since [`SpawnWindow::open`], in clock ticks
    /// since boot ([`process_start`]'s terms); `None` off Linux or when the process is
    /// gone and the window does not tell.
    pub fn start_of(&self, pid: u32) -> Option<u64> {
        match self.before {
            Some(before) if boot_ticks() == Some(before) => Some(before),
            _ => process_start(pid),
        }
    }
}

/// Linux: the boot clock in clock ticks, as `/proc/PID/stat` counts a start time
/// (`nsec_to_clock_t` of `CLOCK_BOOTTIME`: whole ticks, rounded down; time namespaces
/// shift both alike). `None` elsewhere.
fn boot_ticks() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use rustix::time::{ClockId, clock_gettime};
        let now = clock_gettime(ClockId::Boottime);
        let per_second = rustix::param::clock_ticks_per_second();
        let seconds = u64::try_from(now.tv_sec).ok()?;
        let nanos = u64::try_from(now.tv_nsec).ok()?;
        // `NSEC_PER_SEC / USER_HZ` nanoseconds per tick (USER_HZ divides 10^9).
        let per_tick = 1_000_000_000u64.checked_div(per_second)?;
        seconds
            .checked_mul(per_second)?
            .checked_add(nanos / per_tick)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn an_add_and_a_later_remove_of_one_group_cancel_out() {
        let add = |pgid, label| Line::Add {
            pgid,
            grace_ms: 10,
            label,
        };
        let remove = |pgid| Line::Remove { pgid };
        let mut lines = vec![
            add(1, 1),
            add(2, 2),
            remove(1),
            // Nothing before a `clear` is cancelled by what follows it.
            add(3, 3),
            Line::Clear,
            remove(3),
            // The same pgid again (a reused id): each remove takes its nearest add.
            add(2, 4),
            remove(2),
            remove(2),
            add(5, 5),
        ];
        cancel_out(&mut lines);
        assert_eq!(
            lines,
            [
                add(2, 2),
                add(3, 3),
                Line::Clear,
                remove(3),
                remove(2),
                add(5, 5)
            ],
            "{lines:?}"
        );
    }

    #[test]
    fn lines_never_wait_for_a_watchdog_that_does_not_read() {
        // A "watchdog" that never reads its stdin.
        let mut child = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let outbox = Outbox::start(child.stdin.take());
        let label = |number| Label {
            number,
            value: String::new(),
        };
        let watch = Watch {
            outbox: Arc::clone(&outbox),
            tag: "t".into(),
            labels: Arc::new(AtomicU64::new(0)),
        };
        let started = Instant::now();
        // Far more than a pipe holds (~2,700 pairs fill 64 KiB): every call returns.
        for n in 1..=50_000u32 {
            watch.add(n, Duration::from_secs(1), &label(u64::from(n)));
            watch.remove(n);
        }
        // Two groups stay alive: their adds are kept whatever the pressure.
        watch.add(7_000_001, Duration::from_secs(1), &label(1));
        watch.add(7_000_002, Duration::from_secs(1), &label(2));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        {
            let unsent = outbox.lock();
            assert!(unsent.lines.len() <= MAX_UNSENT, "{}", unsent.lines.len());
            let alive = |pgid| {
                unsent
                    .lines
                    .iter()
                    .any(|line| matches!(line, Line::Add { pgid: p, .. } if *p == pgid))
            };
            assert!(alive(7_000_001) && alive(7_000_002));
        }
        // Closing waits for the pipe only as long as it is told to.
        let closing = Instant::now();
        assert!(!outbox.close(Duration::from_millis(200)));
        assert!(closing.elapsed() < Duration::from_secs(5));
        let _ = child.kill();
        let _ = child.wait();
        // The writer's blocked write fails once the reader is gone; it ends.
        assert!(outbox.close(Duration::from_secs(10)), "the writer ended");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spawn_window_tells_the_start_time_proc_shows() {
        // Agree with `/proc` on processes spawned within one tick (almost every spawn;
        // a tick boundary inside the window falls back to `/proc`, which must agree too).
        let mut exact = 0;
        for _ in 0..20 {
            let window = SpawnWindow::open();
            let mut child = Command::new("sleep").arg("5").spawn().unwrap();
            let told = window.start_of(child.id());
            let shown = process_start(child.id());
            let _ = child.kill();
            let _ = child.wait();
            assert!(shown.is_some());
            assert_eq!(told, shown, "the window's start differs from /proc's");
            if window.before == told {
                exact += 1;
            }
        }
        assert!(exact > 0, "no spawn fell within one tick");
        // Once gone, a process is told its start only by a window that stayed in its tick.
        let before = boot_ticks().unwrap();
        let window = SpawnWindow {
            before: Some(before - 1),
        };
        assert_eq!(window.start_of(u32::MAX), None);
    }

    fn sleeper() -> std::process::Child {
        // A shell that ignores SIGTERM, with a child in its group.
        Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn the_end_of_the_pipe_stops_the_registered_groups_after_their_grace() {
        let dir = tempfile::tempdir().unwrap();
        let mut stubborn = sleeper();
        let mut polite = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut forgotten = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_millis(100));
        let input = format!(
            "add {} 300\nadd {} 10000\nadd {} 300\nremove {}\nnonsense\n",
            stubborn.id(),
            polite.id(),
            forgotten.id(),
            forgotten.id()
        );
        let mut ready = Vec::new();
        let started = Instant::now();
        serve(
            &dir.path().join(LOCK_FILE),
            None,
            input.as_bytes(),
            &mut ready,
        )
        .unwrap();
        let took = started.elapsed();
        assert_eq!(ready, b"ready\n");
        assert!(
            took >= Duration::from_millis(300),
            "the stubborn one had its grace: {took:?}"
        );
        assert!(
            took < Duration::from_secs(5),
            "the polite one needed no more: {took:?}"
        );
        assert!(!group_alive(stubborn.id(), None) && !group_alive(polite.id(), None));
        assert!(group_alive(forgotten.id(), process_start(forgotten.id())));
        for child in [&mut stubborn, &mut polite, &mut forgotten] {
            let _ = child.kill();
            child.wait().unwrap();
        }
        assert!(!group_alive(forgotten.id(), None));
    }

    /// Waits at most `limit` for `child` to exit; its status, or `None`.
    fn exited(
        child: &mut std::process::Child,
        limit: Duration,
    ) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn what_an_ended_label_left_is_stopped_and_what_a_live_one_left_only_at_the_end() {
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::tempdir().unwrap();
        // Processes outside the registered groups, as `setsid` would leave them.
        let labelled = |value: &str| {
            Command::new("sleep")
                .arg("30")
                .env(RUN_VAR, value)
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let mut ended = labelled("tag-1/1");
        let mut live = labelled("tag-1/2");
        let mut other_run = labelled("tag-2/1");
        let mut unlabelled = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let (mut group_1, mut group_2) = (sleeper(), sleeper());
        // A group with a label and a long grace, still registered at the end: its grace
        // holds, not the leftovers' short one.
        let mut registered = Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30 & wait"])
            .env(RUN_VAR, "tag-1/3")
            .process_group(0)
            .spawn()
            .unwrap();
        let (reader, mut writer) = std::io::pipe().unwrap();
        let lock = dir.path().join(LOCK_FILE);
        let watchdog = thread::spawn(move || {
            serve(&lock, Some("tag-1"), BufReader::new(reader), Vec::new()).unwrap();
        });
        write!(
            writer,
            "add {} 300 1\nadd {} 300 2\nadd {} 2500 3\nremove {}\n",
            group_1.id(),
            group_2.id(),
            registered.id(),
            group_1.id()
        )
        .unwrap();
        let status = exited(&mut ended, Duration::from_secs(10));
        assert_eq!(
            status.and_then(|status| status.signal()),
            Some(15),
            "what label 1 left is stopped once its group is removed"
        );
        thread::sleep(SWEEP_PAUSE * 2);
        for (child, what) in [
            (&mut live, "a label whose group is registered"),
            (&mut other_run, "another run's label"),
            (&mut unlabelled, "no label"),
        ] {
            assert!(child.try_wait().unwrap().is_none(), "{what} is left alone");
        }

        drop(writer);
        thread::sleep(LEFTOVER_GRACE + Duration::from_millis(500));
        assert!(
            registered.try_wait().unwrap().is_none(),
            "a registered group keeps its own grace (2.5 s) at the end"
        );
        watchdog.join().unwrap();
        assert!(
            exited(&mut registered, Duration::ZERO).is_some(),
            "and is stopped after it"
        );
        assert!(
            live.try_wait().unwrap().is_some(),
            "at the end every label of the run is stopped"
        );
        assert!(
            exited(&mut group_2, Duration::ZERO).is_some(),
            "the group too"
        );
        for child in [&mut other_run, &mut unlabelled] {
            assert!(
                child.try_wait().unwrap().is_none(),
                "not the run's: left alone"
            );
        }
        for child in [&mut other_run, &mut unlabelled, &mut group_1, &mut group_2] {
            let _ = child.kill();
            child.wait().unwrap();
        }
    }
}
