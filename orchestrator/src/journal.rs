//! The run's event stream, printed by a thread of its own behind the ledger's writer
//! thread: an event is printed only once every ledger change made before it was
//! emitted is committed, and events keep their order.
//!
//! The dispatch loop hands its ledger changes to [`curupira_ledger::Writer`] and its
//! events to a [`Journal`] without waiting for either. Each event goes to the printer
//! thread with the ticket of the last change made so far; the printer waits for that
//! ticket (without hurrying the writer's batch) and prints. So the loop spends nothing
//! on SQLite, JSON or stdout, and "printed means committed" holds. Without a ledger
//! (or in a dry run, which writes none) there is nothing to wait for: the loop prints
//! each event itself, as it always did.
//!
//! The events waiting for the printer are bounded ([`MAX_WAITING`]): past that, the
//! loop's next [`emit`](Journal::emit) waits, as it would on a full pipe when it prints
//! itself. So a stdout nobody reads (a stalled consumer of `--format json`), or a
//! ledger held up by another process, holds the run up instead of growing its memory
//! without end.
//!
//! When the ledger fails, events are printed anyway (they say what happened; the run
//! stops and its error names the ledger): a reader of the events can rely on "printed
//! means committed" as long as the run does not end with a ledger error. When stdout
//! fails (a closed pipe), the printer stops and the loop's next
//! [`emit`](Journal::emit) or [`check`](Journal::check) returns that error.

use std::io;
use std::sync::{Arc, OnceLock, mpsc};
use std::thread;

use curupira_ledger::{Ticket, Writer};

use crate::events::{Event, EventSink};

/// At most this many events wait for the printer (stdout, or their ledger changes);
/// the loop then waits for room. The queue's slots are allocated when the run starts
/// (~150 bytes each: 600 KiB); a ledger held up by another process holds the run up
/// here, after ~1,500 tasks, well before its writer's own bound
/// ([`curupira_ledger::MAX_QUEUED`] changes), which keeps what a crash could
/// lose small too.
pub(crate) const MAX_WAITING: usize = 4_096;

/// The run's events: printed on the spot without a ledger, or handed to the printer
/// thread, each behind the ledger changes made before it.
pub(crate) enum Journal<'a> {
    /// No ledger is written: nothing to wait for, so the loop prints itself (a thread
    /// woken per event cost such runs 7 %, measured).
    Direct(&'a mut dyn EventSink),
    /// The printer thread prints, each event once its changes are committed.
    Threaded {
        /// Where events go, with the ticket of the last change before each.
        inbox: mpsc::SyncSender<(Ticket, Event)>,
        /// The ledger's writer.
        writer: Writer,
        /// Set when the printer failed.
        broken: Arc<Broken>,
    },
}

/// How the printer failed, when it did: set once, read without a lock by the loop.
#[derive(Default)]
pub(crate) struct Broken(OnceLock<(io::ErrorKind, String)>);

impl Broken {
    fn set(&self, error: &io::Error) {
        let _ = self.0.set((error.kind(), error.to_string()));
    }

    fn get(&self) -> Option<io::Error> {
        let (kind, message) = self.0.get()?;
        Some(io::Error::new(*kind, message.clone()))
    }
}

impl Journal<'_> {
    /// Runs `body` with a journal printing to `out` behind `writer`'s changes (`None`:
    /// no ledger, or one that is only read: printed on the spot). Returns what `body`
    /// returned, and the printer's outcome once every event is printed.
    pub(crate) fn scope<S, R>(
        out: &mut S,
        writer: Option<Writer>,
        body: impl FnOnce(&mut Journal<'_>) -> R,
    ) -> io::Result<(R, io::Result<()>)>
    where
        S: EventSink + Send,
    {
        let Some(writer) = writer else {
            let mut journal = Journal::Direct(out);
            return Ok((body(&mut journal), Ok(())));
        };
        thread::scope(|scope| {
            let (inbox, events) = mpsc::sync_channel::<(Ticket, Event)>(MAX_WAITING);
            let broken = Arc::new(Broken::default());
            let printer = {
                let writer = writer.clone();
                let broken = Arc::clone(&broken);
                thread::Builder::new()
                    .name("events".to_owned())
                    .spawn_scoped(scope, move || {
                        // As the ledger's writer: nothing waits for the printer, so it
                        // gives way to the loop and the agents on a busy machine.
                        curupira_ledger::lower_priority();
                        for (ticket, event) in events {
                            // A failure is the writer's to report; the event is
                            // printed anyway.
                            let _ = writer.wait_in_turn(ticket);
                            if let Err(error) = out.emit(&event) {
                                broken.set(&error);
                                return Err(error);
                            }
                        }
                        Ok(())
                    })?
            };
            let mut journal = Journal::Threaded {
                inbox,
                writer,
                broken,
            };
            let returned = body(&mut journal);
            drop(journal);
            let printed = printer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the event printer panicked")));
            Ok((returned, printed))
        })
    }

    /// Prints `event`, or hands it to the printer behind every ledger change made so
    /// far (waiting for room when [`MAX_WAITING`] events wait already).
    pub(crate) fn emit(&mut self, event: Event) -> io::Result<()> {
        match self {
            Journal::Direct(out) => out.emit(&event),
            Journal::Threaded {
                inbox,
                writer,
                broken,
            } => {
                if let Some(error) = broken.get() {
                    return Err(error);
                }
                inbox.send((writer.last_issued(), event)).map_err(|_| {
                    broken
                        .get()
                        .unwrap_or_else(|| io::Error::other("the event printer stopped"))
                })
            }
        }
    }

    /// The printer's failure, if it failed (stdout closed): the run stops on it.
    pub(crate) fn check(&self) -> io::Result<()> {
        match self {
            Journal::Threaded { broken, .. } => broken.get().map_or(Ok(()), Err),
            Journal::Direct(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};

    use std::sync::{Condvar, Mutex};

    use curupira_ledger::{
        Change, Decision, Ledger, LedgerError, Requested, RunBackend, Status, TicketState,
        WriterThread,
    };

    use crate::events::JsonLines;

    /// A ledger whose writes wait until [`Blocker::commit`]: nothing the writer thread
    /// gets commits before, as when another process holds an SQLite ledger's write
    /// lock (and, as SQLite's busy timeout does, for at most 10 s, so a test that
    /// fails meanwhile ends).
    #[derive(Debug)]
    struct Stuck(Arc<(Mutex<bool>, Condvar)>);

    impl RunBackend for Stuck {
        fn decide(&mut self, _: &str, _: &str) -> Result<Decision, LedgerError> {
            Ok(Decision::Dispatch)
        }

        fn apply(&mut self, _: &[Change]) -> Result<(), LedgerError> {
            let (released, wake) = &*self.0;
            let released = released.lock().unwrap();
            let (released, _) = wake
                .wait_timeout_while(released, std::time::Duration::from_secs(10), |released| {
                    !*released
                })
                .unwrap();
            if *released {
                Ok(())
            } else {
                Err(LedgerError::disk_full("write", "stuck.sqlite"))
            }
        }

        fn requested(&mut self, _: &str) -> Result<Vec<Requested>, LedgerError> {
            Ok(Vec::new())
        }

        fn unfinished(&mut self, _: &str) -> Result<Vec<Requested>, LedgerError> {
            Ok(Vec::new())
        }

        fn attempts_started(&mut self, _: &str, _: &str) -> Result<u32, LedgerError> {
            Ok(0)
        }

        fn has_row(&mut self, _: &str, _: &str) -> Result<bool, LedgerError> {
            Ok(false)
        }

        fn mark_unrecorded(&mut self) -> Result<Vec<(String, String)>, LedgerError> {
            Ok(Vec::new())
        }
    }

    /// What lets a [`Stuck`] ledger's writes through.
    struct Blocker(Arc<(Mutex<bool>, Condvar)>);

    impl Blocker {
        fn commit(&self) {
            *self.0.0.lock().unwrap() = true;
            self.0.1.notify_all();
        }
    }

    /// A writer thread held up: nothing handed to `thread` commits until `blocker`
    /// commits.
    struct HeldUp {
        thread: WriterThread,
        blocker: Blocker,
    }

    impl HeldUp {
        fn new() -> HeldUp {
            let gate = Arc::new((Mutex::new(false), Condvar::new()));
            HeldUp {
                thread: WriterThread::start(Stuck(Arc::clone(&gate))).unwrap(),
                blocker: Blocker(gate),
            }
        }
    }

    fn skipped(n: u32) -> Event {
        Event::TaskSkipped {
            automation: "fix".into(),
            task_id: format!("{n:064x}"),
            values: Vec::new(),
        }
    }

    fn ids(out: JsonLines<Vec<u8>>) -> Vec<String> {
        String::from_utf8(out.into_inner())
            .unwrap()
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["task_id"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    #[test]
    fn without_a_ledger_every_event_is_printed_in_order() {
        let mut out = JsonLines::new(Vec::new());
        let (sent, printed) = Journal::scope(&mut out, None, |journal| {
            (1..=100).all(|n| journal.emit(skipped(n)).is_ok())
        })
        .unwrap();
        assert!(sent);
        printed.unwrap();
        let expected: Vec<String> = (1..=100u32).map(|n| format!("{n:064x}")).collect();
        assert_eq!(ids(out), expected);
    }

    #[test]
    fn an_event_waits_for_the_changes_before_it_and_the_order_holds() {
        // Nothing the writer gets commits until the blocker lets go.
        let HeldUp { thread, blocker } = HeldUp::new();
        let writer = thread.writer();
        let printed_early = Arc::new(AtomicBool::new(false));
        let mut out = JsonLines::new(Vec::new());
        let (ticket, printed) = Journal::scope(&mut out, Some(writer.clone()), |journal| {
            journal.emit(skipped(1)).unwrap();
            let ticket = writer.write(Change::Finished {
                automation: "fix".into(),
                task_id: "ab".repeat(32),
                status: Status::Failed,
                exit_code: Some(1),
                reason: "exit".into(),
            });
            journal.emit(skipped(2)).unwrap();
            journal.emit(skipped(3)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
            printed_early.store(
                writer.state(ticket) != TicketState::Pending,
                Ordering::SeqCst,
            );
            blocker.commit();
            ticket
        })
        .unwrap();
        printed.unwrap();
        assert!(
            !printed_early.load(Ordering::SeqCst),
            "the change stayed pending while the lock was held"
        );
        assert_eq!(writer.state(ticket), TicketState::Committed);
        let expected: Vec<String> = (1..=3u32).map(|n| format!("{n:064x}")).collect();
        assert_eq!(ids(out), expected);
        thread.close();
    }

    #[test]
    fn events_behind_a_held_lock_are_not_printed_before_it_is_released() {
        let HeldUp { thread, blocker } = HeldUp::new();
        let writer = thread.writer();
        let (tx, rx) = mpsc::channel::<usize>();
        // The printer writes into a pipe-like sink that reports each line.
        struct Lines(mpsc::Sender<usize>, usize);
        impl Write for Lines {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let lines = buf.iter().filter(|b| **b == b'\n').count();
                if lines > 0 {
                    self.1 += lines;
                    let _ = self.0.send(self.1);
                }
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = JsonLines::new(Lines(tx, 0));
        let ((), printed) = Journal::scope(&mut out, Some(writer.clone()), |journal| {
            journal.emit(skipped(1)).unwrap();
            assert_eq!(
                rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap(),
                1,
                "nothing waits before the first change"
            );
            writer.write(Change::AttemptStarted {
                automation: "fix".into(),
                task_id: "cd".repeat(32),
                pairs: "[]".into(),
                workspace: "/w".into(),
                branch: None,
                log_path: None,
                host_pid: 1,
            });
            journal.emit(skipped(2)).unwrap();
            assert!(
                rx.recv_timeout(std::time::Duration::from_millis(300))
                    .is_err(),
                "the second event waits for its change"
            );
            blocker.commit();
            assert_eq!(
                rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap(),
                2
            );
        })
        .unwrap();
        printed.unwrap();
        thread.close();
    }

    #[test]
    fn a_stdout_nobody_reads_holds_the_loop_up_at_the_bound() {
        use std::sync::atomic::AtomicUsize;
        use std::time::{Duration, Instant};
        // A stdout that takes nothing until told to.
        struct Stalled(mpsc::Receiver<()>, bool);
        impl Write for Stalled {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if !self.1 {
                    let _ = self.0.recv();
                    self.1 = true;
                }
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let thread =
            WriterThread::start(Ledger::open(&dir.path().join("l.sqlite")).unwrap()).unwrap();
        let (release, stalled) = mpsc::channel();
        let mut out = JsonLines::new(Stalled(stalled, false));
        let emitted = AtomicUsize::new(0);
        let total = MAX_WAITING + 10;
        let ((), printed) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                // Held up: one event in the printer's hands, MAX_WAITING waiting, the
                // next `emit` waiting; the count stays there (checked for 300 ms), and
                // never passes it while stdout takes nothing.
                let held = MAX_WAITING + 1;
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut since: Option<Instant> = None;
                loop {
                    std::thread::sleep(Duration::from_millis(50));
                    let now = emitted.load(Ordering::SeqCst);
                    let settled = now == held
                        && since.get_or_insert_with(Instant::now).elapsed()
                            >= Duration::from_millis(300);
                    if now > held || settled || Instant::now() > deadline {
                        release.send(()).unwrap();
                        return now;
                    }
                }
            });
            let result = Journal::scope(&mut out, Some(thread.writer()), |journal| {
                for n in 1..=total {
                    journal.emit(skipped(u32::try_from(n).unwrap())).unwrap();
                    emitted.fetch_add(1, Ordering::SeqCst);
                }
            })
            .unwrap();
            assert_eq!(watcher.join().unwrap(), MAX_WAITING + 1);
            result
        });
        printed.unwrap();
        assert_eq!(
            emitted.load(Ordering::SeqCst),
            total,
            "all went once there was room"
        );
        thread.close();
    }

    #[test]
    fn a_closed_stdout_stops_the_loop_with_its_error() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = JsonLines::new(Closed);
        let (error, printed) = Journal::scope(&mut out, None, |journal| {
            journal.emit(skipped(1)).map_err(|error| error.kind())
        })
        .unwrap();
        assert_eq!(error, Err(io::ErrorKind::BrokenPipe), "printed on the spot");
        printed.unwrap();

        let dir = tempfile::tempdir().unwrap();
        let thread =
            WriterThread::start(Ledger::open(&dir.path().join("l.sqlite")).unwrap()).unwrap();
        let mut out = JsonLines::new(Closed);
        let (error, printed) = Journal::scope(&mut out, Some(thread.writer()), |journal| {
            journal.emit(skipped(1)).unwrap();
            for _ in 0..500 {
                if let Err(error) = journal.emit(skipped(2)) {
                    return Some(error.kind());
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            None
        })
        .unwrap();
        assert_eq!(error, Some(io::ErrorKind::BrokenPipe));
        assert_eq!(printed.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        thread.close();
    }
}
