//! The real terminal, through crossterm: raw mode and the alternate screen for as
//! long as a [`Screen`] lives, given back on every way out (its `Drop`, and a panic
//! hook that restores the terminal before the panic's message is printed), the keys
//! read as [`Key`]s, and the signals that ask the dashboard to leave ([`Signals`]).

use std::io::{self, BufWriter, Stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};

use crate::app::Input;
use crate::dashboard::Key;

/// Whether raw mode and the alternate screen are on (what [`restore`] undoes once).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The terminal in raw mode on its alternate screen, drawn by ratatui.
pub(crate) struct Screen {
    terminal: Terminal<CrosstermBackend<BufWriter<Stdout>>>,
}

/// Room for a whole frame, written at once when it is drawn (stdout alone would write
/// it in pieces of a kilobyte, and a terminal may show the screen between two).
const FRAME_BUFFER: usize = 256 * 1024;

impl Screen {
    /// Takes over the terminal (stdout): raw mode, the alternate screen, no cursor.
    pub fn enter() -> io::Result<Screen> {
        install_panic_hook();
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        let entered = execute!(out, terminal::EnterAlternateScreen, cursor::Hide).and_then(|()| {
            Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(
                FRAME_BUFFER,
                out,
            )))
        });
        match entered {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(err) => {
                restore();
                Err(err)
            }
        }
    }

    /// The terminal to draw on.
    pub fn terminal(&mut self) -> &mut Terminal<CrosstermBackend<BufWriter<Stdout>>> {
        &mut self.terminal
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back as it was: the main screen, the cursor, cooked mode. Once,
/// whoever calls it first (the [`Screen`]'s `Drop` or the panic hook).
fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}

/// A panic while the dashboard is up restores the terminal first, so that its message
/// is readable on the main screen (then the previous hook prints it).
fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// The terminal's keys, read from stdin by the dashboard itself rather than by
/// crossterm's event reader, which spins for ever on a terminal that hung up (its
/// read loop takes an end of file for "no data yet"): here an end of file, a hang-up
/// or a read error is an error, and the dashboard leaves. A new size needs no event:
/// every draw asks the terminal for its size, and one that changed is drawn anew.
#[cfg(unix)]
pub(crate) struct Keys {
    pending: Vec<u8>,
}

#[cfg(unix)]
impl Keys {
    /// Reads the keys typed on stdin (a terminal, in raw mode).
    pub fn new() -> Keys {
        Keys {
            pending: Vec::new(),
        }
    }
}

#[cfg(unix)]
impl Input for Keys {
    fn next(&mut self, wait: Duration) -> io::Result<Option<Key>> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        use std::os::fd::AsFd;

        if let Some(key) = take_key(&mut self.pending) {
            return Ok(Some(key));
        }
        let stdin = io::stdin();
        let fd = stdin.as_fd();
        let timeout = Timespec::try_from(wait).ok();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(None),
            Err(err) => return Err(err.into()),
        }
        let mut buffer = [0u8; 1024];
        match rustix::io::read(fd, &mut buffer) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the terminal closed",
            )),
            Ok(n) => {
                self.pending.extend_from_slice(&buffer[..n]);
                Ok(take_key(&mut self.pending))
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }
}

/// The first key the bytes a terminal sent hold, taken off them; `None` when they
/// hold none (a key that means nothing here is dropped). A key's bytes come in one
/// read, so an escape with nothing after it is the Escape key.
pub(crate) fn take_key(bytes: &mut Vec<u8>) -> Option<Key> {
    while !bytes.is_empty() {
        let (key, used) = parse_key(bytes);
        bytes.drain(..used.clamp(1, bytes.len()));
        if key.is_some() {
            return key;
        }
    }
    None
}

/// The key at the start of `bytes` (a terminal's input, not empty) and how many bytes
/// it took.
fn parse_key(bytes: &[u8]) -> (Option<Key>, usize) {
    match bytes {
        [0x1b, b'[' | b'O', rest @ ..] => {
            // A control sequence: parameters and intermediates, then its final byte.
            let Some(end) = rest.iter().position(|b| (0x40..=0x7e).contains(b)) else {
                return (None, bytes.len());
            };
            // The key's number, before any `;modifiers`.
            let number = rest[..end].split(|&b| b == b';').next().unwrap_or_default();
            let key = match (rest[end], number) {
                (b'A', _) => Some(Key::Up),
                (b'B', _) => Some(Key::Down),
                (b'H', _) => Some(Key::Home),
                (b'F', _) => Some(Key::End),
                (b'~', b"1" | b"7") => Some(Key::Home),
                (b'~', b"4" | b"8") => Some(Key::End),
                (b'~', b"5") => Some(Key::PageUp),
                (b'~', b"6") => Some(Key::PageDown),
                _ => None,
            };
            (key, end + 3)
        }
        [0x1b, ..] => (Some(Key::Esc), 1),
        [b'\r' | b'\n', ..] => (Some(Key::Enter), 1),
        [0x03, ..] => (Some(Key::Interrupt), 1),
        [byte, ..] if byte.is_ascii_control() => (None, 1),
        [byte, ..] if byte.is_ascii() => (Some(Key::Char(char::from(*byte))), 1),
        _ => {
            // One UTF-8 character (or a byte that starts none).
            let len = bytes.len().min(4);
            let text = String::from_utf8_lossy(&bytes[..len]);
            let c = text.chars().next().unwrap_or('\u{fffd}');
            let used = if c == '\u{fffd}' { 1 } else { c.len_utf8() };
            (Some(Key::Char(c)).filter(|_| c != '\u{fffd}'), used)
        }
    }
}

/// Elsewhere than Unix, crossterm's own event reader.
#[cfg(not(unix))]
pub(crate) struct Keys;

#[cfg(not(unix))]
impl Keys {
    /// Reads the terminal's keys.
    pub fn new() -> Keys {
        Keys
    }
}

#[cfg(not(unix))]
impl Input for Keys {
    fn next(&mut self, wait: Duration) -> io::Result<Option<Key>> {
        if !event::poll(wait)? {
            return Ok(None);
        }
        Ok(match event::read()? {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => {
                let control = key.modifiers.contains(KeyModifiers::CONTROL);
                let key = match key.code {
                    KeyCode::Char('c') if control => Some(Key::Interrupt),
                    KeyCode::Up => Some(Key::Up),
                    KeyCode::Down => Some(Key::Down),
                    KeyCode::PageUp => Some(Key::PageUp),
                    KeyCode::PageDown => Some(Key::PageDown),
                    KeyCode::Home => Some(Key::Home),
                    KeyCode::End => Some(Key::End),
                    KeyCode::Enter => Some(Key::Enter),
                    KeyCode::Esc => Some(Key::Esc),
                    KeyCode::Char(c) if !control => Some(Key::Char(c)),
                    _ => None,
                };
                key
            }
            _ => None,
        })
    }
}

/// SIGHUP (the terminal closed), SIGINT and SIGTERM, counted instead of ending the
/// process, so that the dashboard leaves through its own way out: its host stopped,
/// the terminal restored.
pub(crate) struct Signals {
    seen: Arc<AtomicBool>,
}

impl Signals {
    /// Starts counting them.
    pub fn install() -> io::Result<Signals> {
        let seen = Arc::new(AtomicBool::new(false));
        #[cfg(unix)]
        for signal in [
            signal_hook::consts::SIGHUP,
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ] {
            signal_hook::flag::register(signal, Arc::clone(&seen))?;
        }
        Ok(Signals { seen })
    }

    /// Whether one came.
    pub fn seen(&self) -> bool {
        self.seen.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<Key> {
        let mut bytes = bytes.to_vec();
        std::iter::from_fn(|| take_key(&mut bytes)).collect()
    }

    #[test]
    fn a_terminal_s_bytes_are_read_as_keys() {
        assert_eq!(
            keys(b"\x1b[A\x1b[B\x1bOA\x1b[5~\x1b[6~\x1b[H\x1b[4~\rq\x03"),
            [
                Key::Up,
                Key::Down,
                Key::Up,
                Key::PageUp,
                Key::PageDown,
                Key::Home,
                Key::End,
                Key::Enter,
                Key::Char('q'),
                Key::Interrupt,
            ]
        );
        // A lone escape is the Escape key; an arrow with modifiers is the arrow; what
        // means nothing here (right arrow, a function key, a control byte) is dropped.
        assert_eq!(keys(b"\x1b"), [Key::Esc]);
        assert_eq!(
            keys(b"\x1b[1;5B\x1b[C\x1b[15~\x7fr"),
            [Key::Down, Key::Char('r')]
        );
        assert_eq!(keys("é\n".as_bytes()), [Key::Char('é'), Key::Enter]);
        assert_eq!(keys(b"\xff\x1b["), []);
    }
}
