//! A child's three pipes driven from the thread that supervises it: the input written
//! as the pipe takes it, both outputs read as they arrive, and (on Linux) the child's
//! exit seen through a pidfd, all in one `poll(2)`. No helper thread per child: a
//! thread per pipe cost a `clone` and a wake-up each, for every agent.
//!
//! Elsewhere than Unix the same interface is served by a thread per pipe.

use std::io;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::ProcessGuard;

/// Which output a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The child's stdout.
    Stdout,
    /// The child's stderr.
    Stderr,
}

/// What happened on the pipes, for the caller's bookkeeping.
pub type Sink<'s> = dyn FnMut(Stream, Chunk<'_>) + 's;

/// A piece of output, or the end of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk<'a> {
    /// Bytes, as one read returned them.
    Bytes(&'a [u8]),
    /// The stream ended (or broke): nothing more comes from it.
    End,
}

/// The largest single read.
const READ_CHUNK: usize = 16 * 1024;

/// Reads per stream and wake-up at most, so a child that writes without pause cannot
/// keep its supervisor from looking at the clock.
#[cfg(unix)]
const READS_PER_WAKE: usize = 8;

#[cfg(unix)]
pub use self::polled::Pipes;
#[cfg(not(unix))]
pub use self::threaded::Pipes;

#[cfg(unix)]
mod polled {
    use std::fs::File;
    use std::io::{self, Read as _, Write as _};
    use std::os::fd::OwnedFd;
    use std::process::ChildStdin;
    use std::time::Duration;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    use super::{Chunk, READ_CHUNK, READS_PER_WAKE, Sink, Stream};
    use crate::ProcessGuard;

    /// The pipes of one child (see the module documentation).
    pub struct Pipes<'a> {
        stdin: Option<ChildStdin>,
        /// What is still to be written to stdin.
        input: &'a [u8],
        /// stdout and stderr, `None` once ended.
        outputs: [Option<File>; 2],
        /// Readable once the child has exited (Linux); `None` elsewhere or when the
        /// kernel has no pidfds.
        exit: Option<OwnedFd>,
        chunk: Box<[u8]>,
    }

    impl<'a> Pipes<'a> {
        /// Takes the child's pipes (those that were piped), makes our ends
        /// non-blocking, and writes what of `input` the pipe takes at once; stdin is
        /// closed when all of it is written (at once when it is empty).
        pub fn new(child: &mut ProcessGuard, input: &'a [u8]) -> io::Result<Self> {
            let output = |fd: Option<OwnedFd>| -> io::Result<Option<File>> {
                fd.map(|fd| {
                    rustix::io::ioctl_fionbio(&fd, true)?;
                    Ok(File::from(fd))
                })
                .transpose()
            };
            let stdout = output(child.take_stdout().map(OwnedFd::from))?;
            let stderr = output(child.take_stderr().map(OwnedFd::from))?;
            let stdin = child.take_stdin();
            if let Some(stdin) = &stdin {
                rustix::io::ioctl_fionbio(stdin, true)?;
            }
            let mut pipes = Pipes {
                stdin,
                input,
                outputs: [stdout, stderr],
                exit: exit_fd(child.id()),
                chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            };
            pipes.write_input();
            Ok(pipes)
        }

        /// Whether the child's exit wakes [`wait`](Self::wait) (a pidfd); without it
        /// the caller must not wait long before it looks again.
        pub fn sees_exit(&self) -> bool {
            self.exit.is_some()
        }

        /// Whether stdout or stderr is still open.
        pub fn outputs_open(&self) -> bool {
            self.outputs.iter().any(Option::is_some)
        }

        /// Waits at most `timeout` (`None`: until something happens) for output, room
        /// in stdin, or (with `watch_exit`) the child's exit; then hands what the
        /// outputs have to `sink` and writes what stdin takes.
        pub fn wait(
            &mut self,
            timeout: Option<Duration>,
            watch_exit: bool,
            sink: &mut Sink<'_>,
        ) -> io::Result<()> {
            // A timeout too long to express is no timeout.
            let timeout = timeout.and_then(|timeout| Timespec::try_from(timeout).ok());
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            // Which output each of the first entries of `fds` is.
            let mut polled = [0; 2];
            for (index, output) in self.outputs.iter().enumerate() {
                if let Some(output) = output {
                    polled[fds.len()] = index;
                    fds.push(PollFd::new(output, PollFlags::IN));
                }
            }
            let outputs = fds.len();
            if let Some(stdin) = &self.stdin {
                fds.push(PollFd::new(stdin, PollFlags::OUT));
            }
            if let Some(exit) = self.exit.as_ref().filter(|_| watch_exit) {
                fds.push(PollFd::new(exit, PollFlags::IN));
            }
            match poll(&mut fds, timeout.as_ref()) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(errno) => return Err(errno.into()),
            }
            // Only outputs with something to say (data, an end, an error) are read: a
            // wake-up for the child's exit alone costs no `read`.
            let mut ready = [false; 2];
            for (fd, &index) in fds.iter().take(outputs).zip(&polled) {
                ready[index] = !fd.revents().is_empty();
            }
            drop(fds);
            self.read_outputs(ready, sink);
            self.write_input();
            Ok(())
        }

        /// Reads what each `ready` output has, without blocking.
        fn read_outputs(&mut self, ready: [bool; 2], sink: &mut Sink<'_>) {
            for ((slot, stream), ready) in self
                .outputs
                .iter_mut()
                .zip([Stream::Stdout, Stream::Stderr])
                .zip(ready)
            {
                let Some(file) = slot.as_mut().filter(|_| ready) else {
                    continue;
                };
                for _ in 0..READS_PER_WAKE {
                    match file.read(&mut self.chunk) {
                        Ok(0) => {
                            *slot = None;
                            sink(stream, Chunk::End);
                            break;
                        }
                        Ok(read) => sink(stream, Chunk::Bytes(&self.chunk[..read])),
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                        Err(_) => {
                            *slot = None;
                            sink(stream, Chunk::End);
                            break;
                        }
                    }
                }
            }
        }

        /// Writes what stdin takes now; closes it when all is written or it broke (a
        /// child that does not read its input is not an error).
        fn write_input(&mut self) {
            let Some(stdin) = self.stdin.as_mut() else {
                return;
            };
            while !self.input.is_empty() {
                match stdin.write(self.input) {
                    Ok(0) => break,
                    Ok(written) => self.input = &self.input[written..],
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                    Err(_) => break,
                }
            }
            self.stdin = None;
            self.input = &[];
        }

        /// Stops writing stdin (closing it) and keeps only the outputs.
        pub fn close_input(&mut self) {
            self.stdin = None;
            self.input = &[];
        }

        /// The outputs alone, owned, for [`super::forward_in_background`].
        pub fn into_outputs(mut self) -> Pipes<'static> {
            self.close_input();
            Pipes {
                stdin: None,
                input: &[],
                outputs: self.outputs,
                exit: None,
                chunk: self.chunk,
            }
        }
    }

    /// A pidfd of the child `pid` (Linux), readable once it has exited. The child is
    /// ours and not reaped yet, so the id cannot name another process.
    #[cfg(target_os = "linux")]
    fn exit_fd(pid: u32) -> Option<OwnedFd> {
        let pid = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)?;
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    }

    /// No pidfd elsewhere than Linux.
    #[cfg(not(target_os = "linux"))]
    fn exit_fd(_pid: u32) -> Option<OwnedFd> {
        None
    }
}

#[cfg(not(unix))]
mod threaded {
    use std::io::{self, Read, Write as _};
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::thread;
    use std::time::Duration;

    use super::{Chunk, READ_CHUNK, Sink, Stream};
    use crate::ProcessGuard;

    /// The pipes of one child, each served by a thread of its own.
    pub struct Pipes<'a> {
        events: mpsc::Receiver<(Stream, Option<Vec<u8>>)>,
        open: usize,
        _input: std::marker::PhantomData<&'a [u8]>,
    }

    impl<'a> Pipes<'a> {
        pub fn new(child: &mut ProcessGuard, input: &'a [u8]) -> io::Result<Self> {
            let (sender, events) = mpsc::channel();
            let mut open = 0;
            let mut read = |stream, mut pipe: Box<dyn Read + Send>| -> io::Result<()> {
                let sender = sender.clone();
                thread::Builder::new().spawn(move || {
                    let mut chunk = vec![0; READ_CHUNK];
                    loop {
                        match pipe.read(&mut chunk) {
                            Ok(0) => break,
                            Ok(n) => {
                                if sender.send((stream, Some(chunk[..n].to_vec()))).is_err() {
                                    break;
                                }
                            }
                            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                    let _ = sender.send((stream, None));
                })?;
                open += 1;
                Ok(())
            };
            if let Some(stdout) = child.take_stdout() {
                read(Stream::Stdout, Box::new(stdout))?;
            }
            if let Some(stderr) = child.take_stderr() {
                read(Stream::Stderr, Box::new(stderr))?;
            }
            if let Some(mut stdin) = child.take_stdin() {
                let input = input.to_vec();
                thread::Builder::new().spawn(move || {
                    let _ = stdin.write_all(&input);
                })?;
            }
            Ok(Pipes {
                events,
                open,
                _input: std::marker::PhantomData,
            })
        }

        pub fn sees_exit(&self) -> bool {
            false
        }

        pub fn outputs_open(&self) -> bool {
            self.open > 0
        }

        pub fn wait(
            &mut self,
            timeout: Option<Duration>,
            _watch_exit: bool,
            sink: &mut Sink<'_>,
        ) -> io::Result<()> {
            let first = match timeout {
                Some(timeout) => self.events.recv_timeout(timeout),
                None => self
                    .events
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
            };
            let mut next = first.ok();
            while let Some((stream, bytes)) = next {
                match bytes {
                    Some(bytes) => sink(stream, Chunk::Bytes(&bytes)),
                    None => {
                        self.open = self.open.saturating_sub(1);
                        sink(stream, Chunk::End);
                    }
                }
                next = self.events.try_recv().ok();
            }
            Ok(())
        }

        pub fn close_input(&mut self) {}

        pub fn into_outputs(self) -> Pipes<'static> {
            Pipes {
                events: self.events,
                open: self.open,
                _input: std::marker::PhantomData,
            }
        }
    }
}

/// Keeps forwarding what is left of `pipes`' outputs to `sink` on a thread of its
/// own, until both end: for a child reaped while something it started outside its
/// process group still holds a pipe.
pub fn forward_in_background(
    pipes: Pipes<'_>,
    mut sink: Box<dyn FnMut(Stream, Chunk<'_>) + Send>,
) -> io::Result<()> {
    let mut pipes = pipes.into_outputs();
    std::thread::Builder::new()
        .name("agent-output".to_owned())
        .spawn(move || {
            while pipes.outputs_open() {
                if pipes.wait(None, false, &mut *sink).is_err() {
                    break;
                }
            }
        })?;
    Ok(())
}

/// Runs `child` to its end, its pipes drained into `sink`, for at most `limit`: on
/// expiry its process group is killed and `Err(TimedOut)` returned (it is reaped
/// either way). For short-lived helpers such as `git`. Output still open after the
/// child was reaped (held by something that left its process group) is read for at
/// most [`DRAIN_LIMIT`] more, then dropped.
pub fn run_to_end(
    child: &mut ProcessGuard,
    limit: Duration,
    sink: &mut Sink<'_>,
) -> io::Result<Result<ExitStatus, TimedOut>> {
    let deadline = Instant::now().checked_add(limit);
    let mut pipes = Pipes::new(child, &[])?;
    let mut step = FIRST_STEP;
    loop {
        if let Some(status) = child.try_wait()? {
            // Its group was killed with its exit: the pipes end now.
            drain(&mut pipes, sink)?;
            return Ok(Ok(status));
        }
        let left = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            child.kill();
            child.wait()?;
            return Ok(Err(TimedOut));
        }
        let wait = if pipes.sees_exit() { STEP } else { step };
        pipes.wait(Some(left.map_or(wait, |left| left.min(wait))), true, sink)?;
        step = (step * 2).min(STEP);
    }
}

/// Reads the outputs of a reaped child until both end or [`DRAIN_LIMIT`] passed;
/// whether they ended.
pub fn drain(pipes: &mut Pipes<'_>, sink: &mut Sink<'_>) -> io::Result<bool> {
    pipes.close_input();
    let deadline = Instant::now() + DRAIN_LIMIT;
    while pipes.outputs_open() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        pipes.wait(Some(left), false, sink)?;
    }
    Ok(true)
}

/// How long the outputs of a reaped child are read before they are given up (or
/// handed to a thread): its process group is dead then, so only a process that left
/// the group can still hold them.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// [`run_to_end`]'s child ran past its limit and was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut;

/// The longest a wait sleeps before the caller looks at the clock (and at a child
/// whose exit it cannot see coming).
pub const STEP: Duration = Duration::from_millis(10);

/// The first wait for a child whose exit does not wake the wait: each next one
/// doubles, up to [`STEP`], so a quick child is seen to end within a fraction of a
/// millisecond.
pub const FIRST_STEP: Duration = Duration::from_micros(250);
