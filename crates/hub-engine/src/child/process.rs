//! Running one component implementation: a child process in its own
//! process group, with every output line masked, labelled, shown and saved.
//!
//! * The child starts from an empty environment plus [`Invocation::env`],
//!   in [`Invocation::cwd`], with stdin on the null device.
//! * Each line of its stdout and stderr goes through the
//!   [`SecretMasker`] once; the masked line is handed to the [`LineSink`]
//!   and appended to the log file. A line of an `Outputs:` block naming a
//!   secret output is shown with its value masked, and the value is masked
//!   in every later line (see [`super::secret_lines`]). Only
//!   [`Finished::stdout`] (the `Outputs:` blocks) keeps raw text and
//!   [`Finished::tail`] the last lines as shown, both bounded (see
//!   [`super::kept`]): the rest is streamed, so hub's memory stays flat
//!   whatever the child prints.
//! * The child leads its own process group, so a terminal Ctrl-C reaches
//!   hub only. The first SIGINT/SIGTERM hub receives during the run is
//!   forwarded to the group; when the grace period is over the group is
//!   killed. A second signal kills it at once. The same escalation ends a
//!   run whose [`Invocation::timeout`] is over (SIGTERM, grace, SIGKILL).
//! * When the group leader exits after an interrupt or a timeout, what is
//!   left of its group is killed and reaped, so nothing is left running.
//!   After a normal exit, processes the component left in the background
//!   keep running; hub stops reading their output shortly after the
//!   leader's exit ([`LEAK_WAIT`]), and their further writes to it fail.
//! * When hub itself dies, even by SIGKILL, the kernel kills the child
//!   (`PR_SET_PDEATHSIG`, Linux); see [`super::spawn`].

use super::interrupt::{signal_name, Interrupts};
use super::kept::KeptStdout;
use super::secret_lines::SecretLines;
use super::spawn::{Spawned, Spec};
use hub_manifest::redact::SecretMasker;
use hub_state::{beside, private};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

mod error;
mod lines;

pub use error::ProcessError;
use hub_plan::outcome::lines::{LineSink, Stream};
pub use lines::{LineSplitter, MAX_LINE};

/// How often the runner looks at the child and the interrupt count while
/// no output arrives.
const TICK: Duration = Duration::from_millis(50);

/// The same once the child closed its output pipes: the first look comes
/// after `FIRST_CLOSED_WAIT`, doubling up to `CLOSED_TICK`.
const CLOSED_TICK: Duration = Duration::from_millis(5);
const FIRST_CLOSED_WAIT: Duration = Duration::from_micros(50);

/// How long output is still read after the leader exited normally, for
/// background processes that still hold its pipes.
pub(crate) const LEAK_WAIT: Duration = Duration::from_millis(300);

/// How long the runner waits for a killed group to disappear.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// One execution of a component implementation.
#[derive(Clone)]
pub struct Invocation {
    /// The component name, shown with every line.
    pub label: String,
    /// An executable; a relative path with more than one part (`./deploy`,
    /// `bin/deploy`) is relative to [`Invocation::cwd`], a bare name is
    /// looked up in the `PATH` of [`Invocation::env`].
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The complete environment of the child.
    pub env: Vec<(String, String)>,
    /// Masked stdout and stderr lines are appended here (the file and its
    /// folder are created when missing).
    pub log_file: Option<PathBuf>,
    /// SIGTERM after this long, SIGKILL a grace period later.
    pub timeout: Option<Duration>,
}

/// Shows variable names only: values may be secrets.
impl fmt::Debug for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Invocation")
            .field("label", &self.label)
            .field("program", &self.program)
            .field("args", &self.args.len())
            .field("cwd", &self.cwd)
            .field("env", &names)
            .field("log_file", &self.log_file)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The child exited with this code.
    Code(i32),
    /// The child was killed by this signal (not sent by hub).
    Signal(i32),
    /// Hub received `signal` (SIGINT or SIGTERM) during the run; whatever
    /// the child then did, the run counts as interrupted.
    Interrupted { signal: i32 },
    /// [`Invocation::timeout`] was over.
    TimedOut,
}

impl Exit {
    /// The exit status a shell would report: the code, 128 + signal (also
    /// when hub was interrupted by the signal: 130 for SIGINT, 143 for
    /// SIGTERM), 124 (as `timeout(1)`) when timed out.
    pub fn shell_code(&self) -> i32 {
        match *self {
            Exit::Code(code) => code,
            Exit::Signal(signal) => 128 + signal,
            Exit::Interrupted { signal } => 128 + signal,
            Exit::TimedOut => 124,
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Exit::Code(code) => write!(f, "exited with code {code}"),
            Exit::Signal(signal) => write!(f, "was killed by {}", signal_name(signal)),
            Exit::Interrupted { signal } => write!(f, "was interrupted by {}", signal_name(signal)),
            Exit::TimedOut => write!(f, "timed out"),
        }
    }
}

/// The result of a run.
pub struct Finished {
    pub exit: Exit,
    /// The `Outputs:` blocks the child wrote to stdout, unmasked (invalid
    /// UTF-8 replaced), for parsing outputs. Never print it as is.
    pub stdout: String,
    /// The last lines of its stdout and stderr as shown (masked), for the
    /// log of a failure and the patterns of `lifecycle.retry`.
    pub tail: String,
    pub duration: Duration,
}

impl Finished {
    /// Exited with code 0 (and was not interrupted).
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// Leaves the raw stdout out: it may hold secrets.
impl fmt::Debug for Finished {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Finished")
            .field("exit", &self.exit)
            .field("stdout_bytes", &self.stdout.len())
            .field("tail_bytes", &self.tail.len())
            .field("duration", &self.duration)
            .finish()
    }
}

/// The one-time pad in the child's environment, when it has one.
fn pad_of(invocation: &Invocation) -> Option<Vec<u8>> {
    let (_, text) = invocation
        .env
        .iter()
        .find(|(name, _)| name == super::otp::PAD_VARIABLE)?;
    super::otp::pad_from_env(text).ok()
}

/// Runs `invocation` to its end and reports how it ended. Errors are
/// failures to start or watch the child; a child that fails is an
/// [`Exit`].
pub fn run(
    invocation: &Invocation,
    masker: &SecretMasker,
    sink: &dyn LineSink,
    interrupts: &Interrupts,
) -> Result<Finished, ProcessError> {
    if !invocation.cwd.is_dir() {
        return Err(ProcessError::MissingCwd {
            label: invocation.label.clone(),
            cwd: invocation.cwd.clone(),
        });
    }
    // Signals from here on concern this run.
    let seen = interrupts.count();
    let mut output = Output {
        label: &invocation.label,
        masker: std::borrow::Cow::Borrowed(masker),
        secret_lines: SecretLines::with_pad(pad_of(invocation)),
        sink,
        log: open_log(invocation)?,
        kept: KeptStdout::default(),
    };
    let program = resolve_program(invocation);
    output.frame_start(invocation, &program);
    adopt_orphans();
    let started = Instant::now();
    let mut child = match spawn(invocation, &program) {
        Ok(child) => child,
        Err(error) => {
            output.log_line(&format!("--- {error}"));
            return Err(error);
        }
    };
    let exit = Supervisor::new(&mut child, invocation, interrupts, sink, seen)
        .supervise(&mut output)
        .map_err(|source| ProcessError::Supervise {
            label: invocation.label.clone(),
            program,
            source,
        })?;
    let duration = started.elapsed();
    let kept = std::mem::take(&mut output.kept).finish();
    for note in &kept.notes {
        output.log_line(&format!("--- {note}"));
        sink.note(&invocation.label, note);
    }
    output.frame_end(exit, duration);
    Ok(Finished {
        exit,
        stdout: kept.blocks,
        tail: kept.tail,
        duration,
    })
}

fn resolve_program(invocation: &Invocation) -> PathBuf {
    let program = &invocation.program;
    if program.is_relative() && program.components().count() > 1 {
        invocation.cwd.join(program)
    } else {
        program.clone()
    }
}

fn open_log(invocation: &Invocation) -> Result<Option<File>, ProcessError> {
    let Some(path) = &invocation.log_file else {
        return Ok(None);
    };
    // An existing file first: creating one takes its folder's lock, which
    // the thread making the next files ahead may hold (see
    // `lifecycle::run::logs_ahead`). Never through a link, never another
    // user's file (see `state::beside`).
    let open = || match beside::open_append(path, private::FILE_MODE) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                private::create_folder(parent)?;
            }
            beside::open_append(path, private::FILE_MODE)
        }
        opened => opened,
    };
    open().map(Some).map_err(|source| ProcessError::LogFile {
        label: invocation.label.clone(),
        path: path.clone(),
        source,
    })
}

fn spawn(invocation: &Invocation, program: &Path) -> Result<Spawned, ProcessError> {
    super::spawn::spawn(&Spec {
        program,
        args: &invocation.args,
        cwd: &invocation.cwd,
        env: &invocation.env,
    })
    .map_err(|source| ProcessError::Spawn {
        label: invocation.label.clone(),
        program: program.to_path_buf(),
        cwd: invocation.cwd.clone(),
        source,
    })
}

/// Makes hub the reaper of processes its components orphan (Linux), so a
/// killed group can be waited for even where process 1 does not reap.
fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: PR_SET_CHILD_SUBREAPER only changes who inherits this
            // process's orphaned descendants; no memory is involved.
            unsafe {
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            }
        });
    }
}

/// Sends `signal` to every process of the group; a group already gone is
/// not an error.
fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; the group is the child's own.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Reaps members of the group that hub adopted. With `wait`, until none is
/// left (bounded by [`REAP_WAIT`]); otherwise only those already gone.
fn reap_group(pgid: i32, wait: bool) {
    let deadline = Instant::now() + REAP_WAIT;
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a local integer.
        let reaped = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
        match reaped {
            r if r > 0 => continue,
            0 if wait && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => return,
        }
    }
}

/// Masks each line once and passes it to the sink and the log file.
struct Output<'a> {
    label: &'a str,
    /// Learns the values of secret outputs as they are printed.
    masker: std::borrow::Cow<'a, SecretMasker>,
    secret_lines: SecretLines,
    sink: &'a dyn LineSink,
    log: Option<File>,
    kept: KeptStdout,
}

impl Output<'_> {
    /// One line, or with `whole` false a piece of a longer one.
    fn line(&mut self, stream: Stream, bytes: &[u8], whole: bool) {
        let text = String::from_utf8_lossy(bytes);
        let secret = match stream {
            Stream::Stdout => self.secret_lines.line(&text, whole, &mut self.masker),
            Stream::Stderr => None,
        };
        let masked = match secret {
            Some(shown) => std::borrow::Cow::Owned(shown),
            None => self.masker.mask(&text),
        };
        match stream {
            Stream::Stdout => self.kept.line_shown(&text, &masked, whole),
            Stream::Stderr => self.kept.stderr_shown(&masked, whole),
        }
        self.sink.line(self.label, stream, &masked);
        self.log_line(&masked);
    }

    fn log_line(&mut self, line: &str) {
        let Some(file) = self.log.as_mut() else {
            return;
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if let Err(error) = file.write_all(&bytes) {
            self.log = None;
            let message =
                format!("cannot write to the log file: {error}; further lines are not saved");
            self.sink.note(self.label, &message);
        }
    }

    /// `--- PROGRAM ARGS (CWD)` in the log file.
    fn frame_start(&mut self, invocation: &Invocation, program: &Path) {
        let mut line = format!("--- {}", program.display());
        for arg in &invocation.args {
            line.push(' ');
            line.push_str(arg);
        }
        line.push_str(&format!(" ({})", invocation.cwd.display()));
        let masked = self.masker.mask(&line).into_owned();
        self.log_line(&masked);
    }

    /// `--- exited with code 0 after 1.2s` in the log file.
    fn frame_end(&mut self, exit: Exit, duration: Duration) {
        self.log_line(&format!("--- {exit} after {:.1}s", duration.as_secs_f64()));
    }
}

/// `30s`, `0.5s`.
fn seconds(duration: Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

thread_local! {
    /// What a read from a pipe lands in: as large as a pipe's default
    /// capacity, made once per thread rather than cleared at every read.
    static READ_BUFFER: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0u8; 64 * 1024].into_boxed_slice());
}

/// One of the child's output pipes.
struct Pipe {
    file: File,
    stream: Stream,
    lines: LineSplitter,
    open: bool,
}

impl Pipe {
    fn new(fd: OwnedFd, stream: Stream) -> Self {
        Pipe {
            file: File::from(fd),
            stream,
            lines: LineSplitter::new(MAX_LINE),
            open: true,
        }
    }

    /// Reads what is there (the pipe was reported ready).
    fn read(&mut self, output: &mut Output) -> io::Result<()> {
        READ_BUFFER.with_borrow_mut(|buffer| self.read_into(buffer, output))
    }

    fn read_into(&mut self, buffer: &mut [u8], output: &mut Output) -> io::Result<()> {
        match self.file.read(buffer) {
            Ok(0) => {
                self.close(output);
                Ok(())
            }
            Ok(n) => {
                let stream = self.stream;
                self.lines
                    .feed(&buffer[..n], |line, whole| output.line(stream, line, whole));
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn close(&mut self, output: &mut Output) {
        let stream = self.stream;
        self.lines
            .finish(|line, whole| output.line(stream, line, whole));
        self.open = false;
    }
}

/// Waits up to `timeout` for output on the open pipes and reads it.
fn pump(pipes: &mut [Pipe], timeout: Duration, output: &mut Output) -> io::Result<()> {
    let open: Vec<usize> = (0..pipes.len()).filter(|i| pipes[*i].open).collect();
    let mut fds: Vec<libc::pollfd> = open
        .iter()
        .map(|i| libc::pollfd {
            fd: pipes[*i].file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures that
    // outlives the call.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        return if error.kind() == io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(error)
        };
    }
    for (fd, index) in fds.iter().zip(open) {
        if fd.revents & libc::POLLNVAL != 0 {
            pipes[index].close(output);
        } else if fd.revents != 0 {
            pipes[index].read(output)?;
        }
    }
    Ok(())
}

/// Watches the child: output, exit, interrupts, timeout.
struct Supervisor<'a> {
    child: &'a mut Spawned,
    pgid: i32,
    pipes: Vec<Pipe>,
    interrupts: &'a Interrupts,
    sink: &'a dyn LineSink,
    label: &'a str,
    /// Signals counted when the run started or when last looked.
    seen: usize,
    interrupted: Option<i32>,
    timeout_at: Option<Instant>,
    timed_out: bool,
    kill_at: Option<Instant>,
    killed: bool,
}

impl<'a> Supervisor<'a> {
    fn new(
        child: &'a mut Spawned,
        invocation: &'a Invocation,
        interrupts: &'a Interrupts,
        sink: &'a dyn LineSink,
        seen: usize,
    ) -> Self {
        let mut pipes = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            pipes.push(Pipe::new(OwnedFd::from(stdout), Stream::Stdout));
        }
        if let Some(stderr) = child.stderr.take() {
            pipes.push(Pipe::new(OwnedFd::from(stderr), Stream::Stderr));
        }
        let pgid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        Supervisor {
            child,
            pgid,
            pipes,
            interrupts,
            sink,
            label: &invocation.label,
            seen,
            interrupted: None,
            timeout_at: invocation.timeout.map(|timeout| Instant::now() + timeout),
            timed_out: false,
            kill_at: None,
            killed: false,
        }
    }

    /// Watches until the child exits; after a failure to watch, kills and
    /// reaps its group.
    fn supervise(&mut self, output: &mut Output) -> io::Result<Exit> {
        let result = self.watch_until_exit(output);
        if result.is_err() {
            kill_group(self.pgid, libc::SIGKILL);
            let _ = self.child.wait();
            reap_group(self.pgid, true);
        }
        result
    }

    fn watch_until_exit(&mut self, output: &mut Output) -> io::Result<Exit> {
        let mut closed_wait = FIRST_CLOSED_WAIT;
        let status = loop {
            if self.pipes.iter().any(|p| p.open) {
                pump(&mut self.pipes, TICK, output)?;
            } else {
                // Both pipes closed usually means the child is exiting:
                // look again soon, backing off up to CLOSED_TICK.
                std::thread::sleep(closed_wait);
                closed_wait = (closed_wait * 2).min(CLOSED_TICK);
            }
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            self.watch(Instant::now());
        };
        let stopped = self.interrupted.is_some() || self.timed_out;
        if stopped {
            kill_group(self.pgid, libc::SIGKILL);
        }
        self.drain(output)?;
        reap_group(self.pgid, stopped);
        Ok(self.exit(status))
    }

    /// Reads what is left after the leader's exit, for at most
    /// [`LEAK_WAIT`], then passes on unfinished lines.
    fn drain(&mut self, output: &mut Output) -> io::Result<()> {
        let until = Instant::now() + LEAK_WAIT;
        while self.pipes.iter().any(|p| p.open) {
            let now = Instant::now();
            if now >= until {
                break;
            }
            pump(&mut self.pipes, (until - now).min(TICK), output)?;
        }
        for pipe in self.pipes.iter_mut().filter(|p| p.open) {
            pipe.close(output);
        }
        Ok(())
    }

    fn exit(&self, status: ExitStatus) -> Exit {
        if let Some(signal) = self.interrupted {
            Exit::Interrupted { signal }
        } else if self.timed_out {
            Exit::TimedOut
        } else if let Some(code) = status.code() {
            Exit::Code(code)
        } else {
            Exit::Signal(status.signal().unwrap_or(0))
        }
    }

    /// Forwards new signals, starts the timeout, kills when due.
    fn watch(&mut self, now: Instant) {
        let count = self.interrupts.count();
        if count > self.seen {
            self.seen = count;
            self.on_interrupt(count, now);
        }
        if self
            .timeout_at
            .is_some_and(|deadline| !self.timed_out && now >= deadline)
        {
            self.timed_out = true;
            self.sink.note(self.label, "timed out: sending SIGTERM");
            kill_group(self.pgid, libc::SIGTERM);
            self.schedule_kill(now);
        }
        if self.kill_at.is_some_and(|at| !self.killed && now >= at) {
            self.kill(&format!(
                "still running {} after the signal: killed",
                seconds(self.interrupts.grace())
            ));
        }
    }

    fn on_interrupt(&mut self, count: usize, now: Instant) {
        let signal = self.interrupts.last_signal().unwrap_or(libc::SIGINT);
        if self.interrupted.is_some() || count >= 2 {
            self.interrupted.get_or_insert(signal);
            self.kill(&format!("{} again: killed", signal_name(signal)));
            return;
        }
        self.interrupted = Some(signal);
        let message = format!(
            "{}: passed on; it has {} to stop before it is killed (interrupt again to kill it now)",
            signal_name(signal),
            seconds(self.interrupts.grace())
        );
        self.sink.note(self.label, &message);
        kill_group(self.pgid, signal);
        self.schedule_kill(now);
    }

    fn schedule_kill(&mut self, now: Instant) {
        let at = now + self.interrupts.grace();
        self.kill_at = Some(self.kill_at.map_or(at, |earlier| earlier.min(at)));
    }

    fn kill(&mut self, message: &str) {
        if !self.killed {
            self.killed = true;
            self.sink.note(self.label, message);
            kill_group(self.pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests;
