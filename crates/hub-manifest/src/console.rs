//! Hub's own writes to its stdout and stderr.
//!
//! A closed stream (`hub deploy 2>&1 | head -1`) must not end a run half
//! way: `println!` and `eprintln!` panic when a write fails. Here a write
//! that finds the pipe closed (`EPIPE`) is dropped, the stream is
//! remembered as closed and not written again, and the run goes on,
//! writing its logs and its state, to exit with its own code. SIGPIPE
//! stays ignored, as Rust programs have it, so a closed pipe is an error
//! to handle rather than the end of hub.
//!
//! Everything written here is masked first ([`crate::masked`]).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the process's own streams were closed by their reader:
/// process-wide because the streams are.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `bytes` to stdout. A closed pipe is not an error (it is
/// remembered); other errors are returned.
pub fn out(bytes: &[u8]) -> io::Result<()> {
    let bytes = crate::masked::bytes(bytes);
    write_to(&mut io::stdout().lock(), &STDOUT_CLOSED, &bytes)
}

/// Writes `text` to stderr; a failure is dropped (a closed pipe is
/// remembered): a message hub cannot show is no reason to stop.
pub fn err(text: &str) {
    let text = crate::masked::text(text);
    let _ = write_to(&mut io::stderr().lock(), &STDERR_CLOSED, text.as_bytes());
}

/// Writes `line` and a line break to stderr, as [`err`].
pub fn err_line(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    err(&text);
}

fn write_to(stream: &mut dyn Write, closed: &AtomicBool, bytes: &[u8]) -> io::Result<()> {
    if closed.load(Ordering::Relaxed) {
        return Ok(());
    }
    match stream.write_all(bytes).and_then(|()| stream.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
            closed.store(true, Ordering::Relaxed);
            Ok(())
        }
        result => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts `room` bytes, then fails as a closed pipe does.
    struct Pipe {
        written: Vec<u8>,
        room: usize,
    }

    impl Write for Pipe {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.written.len() >= self.room {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            let n = bytes.len().min(self.room - self.written.len());
            self.written.extend_from_slice(&bytes[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_remembered_and_not_written_again() {
        let closed = AtomicBool::new(false);
        let mut pipe = Pipe {
            written: Vec::new(),
            room: 4,
        };
        assert!(write_to(&mut pipe, &closed, b"ab\n").is_ok());
        assert!(!closed.load(Ordering::Relaxed));
        assert!(write_to(&mut pipe, &closed, b"cd\n").is_ok());
        assert!(closed.load(Ordering::Relaxed));
        pipe.room = 100;
        assert!(write_to(&mut pipe, &closed, b"ef\n").is_ok());
        assert_eq!(pipe.written, b"ab\nc");
    }

    #[test]
    fn other_errors_are_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let closed = AtomicBool::new(false);
        let error = write_to(&mut Full, &closed, b"x").expect_err("an error");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert!(!closed.load(Ordering::Relaxed));
    }
}
