//! Starting a component's process at a cost that does not depend on hub's
//! size.
//!
//! A child must die with hub, even when hub is killed by SIGKILL, so it
//! asks the kernel for it (`PR_SET_PDEATHSIG`) between its creation and
//! `execve`. The standard library can run such a step only in a `fork`ed
//! child, and `fork` copies the page tables of the whole process: with
//! hub's memory growing with the stack, every spawn cost more than the
//! last (at 3,000 components, 1.6 ms each at the start of a run and 4.3 ms
//! at its end, which made a large deploy quadratic).
//!
//! So on Linux the child is created as `posix_spawn` does it: with
//! `clone(CLONE_VM | CLONE_VFORK)`, sharing hub's memory (nothing is
//! copied) while hub's thread waits for its `execve`. Until then the child
//! runs on a stack of its own and makes only plain system calls on data
//! prepared before the clone: no allocation, no lock, no unwinding. Signals
//! are blocked around the clone, and the child resets every handled signal
//! to its default before unblocking them, so that none of hub's handlers
//! ever runs on hub's memory from the child. What the child gets is what
//! the standard library gives: its own process group, stdin on the null
//! device, stdout and stderr on pipes, an empty signal mask, `SIGPIPE` at
//! its default, and the program looked up in the child's own `PATH` when
//! its name has no slash. Elsewhere the standard library starts the child
//! (without the death signal).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// What to start.
pub struct Spec<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub cwd: &'a Path,
    /// The complete environment of the child.
    pub env: &'a [(String, String)],
}

/// A started child, the leader of its own process group, with the read
/// ends of its stdout and stderr.
pub struct Spawned {
    pid: libc::pid_t,
    pub stdout: Option<File>,
    pub stderr: Option<File>,
    status: Option<ExitStatus>,
}

impl Spawned {
    pub fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// The exit status when the child has ended, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_with(libc::WNOHANG)
    }

    /// Waits for the child's end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            match self.wait_with(0) {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => continue,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        }
    }

    fn wait_with(&mut self, flags: libc::c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let mut raw = 0;
        // SAFETY: waitpid writes the status into a local integer.
        let reaped = unsafe { libc::waitpid(self.pid, &mut raw, flags) };
        match reaped {
            0 => Ok(None),
            pid if pid == self.pid => {
                let status = std::os::unix::process::ExitStatusExt::from_raw(raw);
                self.status = Some(status);
                Ok(Some(status))
            }
            _ => Err(io::Error::last_os_error()),
        }
    }
}

/// Starts `spec`'s program; fails as `execve` would (the program missing,
/// not executable, not a format the system can start) or when `cwd` is
/// not a folder that can be entered.
pub fn spawn(spec: &Spec<'_>) -> io::Result<Spawned> {
    let program = locate(spec)?;
    platform::spawn(spec, &program)
}

/// The program as `execve` takes it: looked up in the child's `PATH`
/// (the system's default path without one) when its name has no slash.
fn locate(spec: &Spec<'_>) -> io::Result<PathBuf> {
    if spec.program.components().count() != 1 || spec.program.is_absolute() {
        return Ok(spec.program.to_path_buf());
    }
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map_or("/bin:/usr/bin", |(_, value)| value.as_str());
    which::which_in(spec.program, Some(path), spec.cwd).map_err(|_| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} not found in PATH", spec.program.display()),
        )
    })
}

fn c_string(text: &OsStr) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(text.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} contains a NUL byte", text),
        )
    })
}

/// `NAME=VALUE` as `execve` takes it, built in one buffer.
fn variable(name: &str, value: &str) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(name.len() + value.len() + 2);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(b'=');
    bytes.extend_from_slice(value.as_bytes());
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the variable {name:?} contains a NUL byte"),
        )
    })
}

/// The null device every child's stdin is on: opened once (closing on
/// `execve`; each child gets its own copy as fd 0), not once per child.
fn null_device() -> io::Result<&'static File> {
    static NULL: std::sync::OnceLock<File> = std::sync::OnceLock::new();
    if let Some(null) = NULL.get() {
        return Ok(null);
    }
    let opened = File::open("/dev/null")?;
    Ok(NULL.get_or_init(|| opened))
}

/// A pipe whose two ends close on `execve`.
fn pipe() -> io::Result<(File, File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here only.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

#[cfg(target_os = "linux")]
mod platform {
    use super::{c_string, null_device, pipe, variable, Spawned, Spec};
    use std::ffi::CString;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    /// The child's own stack until `execve`: the calls it makes are few
    /// and shallow.
    const CHILD_STACK: usize = 64 * 1024;

    /// Everything the child reads, prepared before the clone; `error` is
    /// written by the child (shared memory) when `execve` fails.
    struct Launch {
        program: CString,
        argv: Vec<*const libc::c_char>,
        envp: Vec<*const libc::c_char>,
        cwd: CString,
        stdin: libc::c_int,
        stdout: libc::c_int,
        stderr: libc::c_int,
        hub: libc::pid_t,
        /// The last signal whose handler the child may reset.
        last_signal: libc::c_int,
        error: libc::c_int,
    }

    pub(super) fn spawn(spec: &Spec<'_>, program: &Path) -> io::Result<Spawned> {
        let args: Vec<CString> = std::iter::once(c_string(spec.program.as_os_str()))
            .chain(spec.args.iter().map(|a| c_string(a.as_ref())))
            .collect::<io::Result<_>>()?;
        let env: Vec<CString> = spec
            .env
            .iter()
            .map(|(name, value)| variable(name, value))
            .collect::<io::Result<_>>()?;
        let null = null_device()?;
        let (stdout_read, stdout_write) = pipe()?;
        let (stderr_read, stderr_write) = pipe()?;
        let mut launch = Launch {
            program: c_string(program.as_os_str())?,
            argv: null_terminated(&args),
            envp: null_terminated(&env),
            cwd: c_string(spec.cwd.as_os_str())?,
            stdin: null.as_raw_fd(),
            stdout: stdout_write.as_raw_fd(),
            stderr: stderr_write.as_raw_fd(),
            // SAFETY: getpid has no preconditions.
            hub: unsafe { libc::getpid() },
            last_signal: libc::SIGRTMAX(),
            error: 0,
        };
        let pid = clone_child(&mut launch)?;
        drop((stdout_write, stderr_write));
        let mut spawned = Spawned {
            pid,
            stdout: Some(stdout_read),
            stderr: Some(stderr_read),
            status: None,
        };
        if launch.error != 0 {
            // The child ended without starting the program: reap it.
            let _ = spawned.wait();
            return Err(io::Error::from_raw_os_error(launch.error));
        }
        Ok(spawned)
    }

    fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    }

    /// Creates the child with every signal blocked in this thread; returns
    /// once the child has called `execve` or ended.
    fn clone_child(launch: &mut Launch) -> io::Result<libc::pid_t> {
        // Left uninitialised: the child writes before it reads, and only
        // the pages it touches are ever mapped.
        let mut stack: Vec<u8> = Vec::with_capacity(CHILD_STACK);
        // The stack grows down from its end, aligned to 16 bytes.
        let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        let mut previous: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: the sets are local; the mask is restored below whatever
        // the clone's outcome.
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous);
        }
        // SAFETY: `child_main` runs on `stack` (alive until clone returns,
        // which with CLONE_VFORK is after the child's execve or exit) and
        // reads `launch` only; it makes no allocation and never returns
        // into Rust code of this thread.
        let pid = unsafe {
            libc::clone(
                child_main,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (launch as *mut Launch).cast(),
            )
        };
        let error = io::Error::last_os_error();
        // SAFETY: restores the mask saved above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
        }
        drop(stack);
        match pid {
            -1 => Err(error),
            pid => Ok(pid),
        }
    }

    /// The child until `execve`. Only system calls on prepared data.
    extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `Launch` of the suspended parent thread.
        let launch = unsafe { &mut *arg.cast::<Launch>() };
        // SAFETY: each call below is async-signal-safe and takes pointers
        // into `launch`, which outlives the child's use of it.
        unsafe {
            default_signal_handlers(launch.last_signal);
            if libc::setpgid(0, 0) != 0 {
                failed(launch);
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                failed(launch);
            }
            // Hub died before the request was made: end now.
            if libc::getppid() != launch.hub {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            for (from, to) in [(launch.stdin, 0), (launch.stdout, 1), (launch.stderr, 2)] {
                let moved = match from == to {
                    true => libc::fcntl(from, libc::F_SETFD, 0),
                    false => libc::dup2(from, to),
                };
                if moved < 0 {
                    failed(launch);
                }
            }
            if libc::chdir(launch.cwd.as_ptr()) != 0 {
                failed(launch);
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::execve(
                launch.program.as_ptr(),
                launch.argv.as_ptr(),
                launch.envp.as_ptr(),
            );
            failed(launch)
        }
    }

    /// Leaves `execve`'s error for the parent and ends the child.
    ///
    /// # Safety
    /// Only for the child before `execve`.
    unsafe fn failed(launch: &mut Launch) -> ! {
        // SAFETY: errno is the child's (its thread's) last error.
        unsafe {
            launch.error = *libc::__errno_location();
            libc::_exit(127)
        }
    }

    /// Every signal hub handles goes back to its default action, and
    /// SIGPIPE (which Rust programs ignore) too; signals ignored otherwise
    /// stay ignored, as across `execve`.
    ///
    /// # Safety
    /// Only for the child before `execve`, with every signal blocked.
    unsafe fn default_signal_handlers(last: libc::c_int) {
        for signal in 1..=last {
            // SAFETY: sigaction reads and writes local structures only.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut action) != 0 {
                    continue;
                }
                let handled =
                    action.sa_sigaction != libc::SIG_DFL && action.sa_sigaction != libc::SIG_IGN;
                if handled || signal == libc::SIGPIPE {
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(signal, &default, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use super::{Spawned, Spec};
    use std::io;
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Command, Stdio};

    pub(super) fn spawn(spec: &Spec<'_>, program: &Path) -> io::Result<Spawned> {
        let mut child = Command::new(program)
            .arg0(spec.program)
            .args(spec.args)
            .current_dir(spec.cwd)
            .env_clear()
            .envs(spec.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let pid = libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX);
        let spawned = Spawned {
            pid,
            stdout: child
                .stdout
                .take()
                .map(|o| std::fs::File::from(std::os::fd::OwnedFd::from(o))),
            stderr: child
                .stderr
                .take()
                .map(|e| std::fs::File::from(std::os::fd::OwnedFd::from(e))),
            status: None,
        };
        Ok(spawned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn env() -> Vec<(String, String)> {
        vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())]
    }

    fn run(program: &str, args: &[&str], cwd: &Path) -> io::Result<(ExitStatus, String)> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let env = env();
        let mut child = spawn(&Spec {
            program: Path::new(program),
            args: &args,
            cwd,
            env: &env,
        })?;
        let mut out = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)?;
        Ok((child.wait()?, out))
    }

    #[test]
    fn the_child_runs_in_its_folder_and_group_with_its_environment() {
        let dir = tempfile::tempdir().expect("tmp");
        let (status, out) = run(
            "sh",
            &[
                "-c",
                "pwd; echo \"$PATH\" | grep -c . ; cut -d' ' -f5 /proc/$$/stat; echo $$; read x; echo \"stdin:$x\"",
            ],
            dir.path(),
        )
        .expect("spawn");
        assert!(status.success());
        let lines: Vec<&str> = out.lines().collect();
        let cwd = dir.path().canonicalize().expect("canonical");
        assert_eq!(Path::new(lines[0]), cwd);
        assert_eq!(lines[1], "1", "PATH is set");
        assert_eq!(lines[2], lines[3], "the child leads its own group");
        assert_eq!(lines[4], "stdin:", "stdin is the null device");
    }

    #[test]
    fn a_missing_program_or_folder_fails_as_execve_would() {
        let dir = tempfile::tempdir().expect("tmp");
        let missing = run("no-such-program-anywhere", &[], dir.path()).err();
        assert_eq!(missing.map(|e| e.kind()), Some(io::ErrorKind::NotFound));
        let script = dir.path().join("plain.txt");
        std::fs::write(&script, "not a program\n").expect("write");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let not_a_program = run(script.to_str().expect("utf-8"), &[], dir.path()).err();
        assert_eq!(
            not_a_program.and_then(|e| e.raw_os_error()),
            Some(libc::ENOEXEC)
        );
        let gone = run("true", &[], &dir.path().join("gone")).err();
        assert_eq!(gone.map(|e| e.kind()), Some(io::ErrorKind::NotFound));
    }

    #[test]
    fn exit_codes_and_signals_are_reported() {
        let dir = tempfile::tempdir().expect("tmp");
        let (status, _) = run("sh", &["-c", "exit 3"], dir.path()).expect("spawn");
        assert_eq!(status.code(), Some(3));
        let (status, _) = run("sh", &["-c", "kill -TERM $$"], dir.path()).expect("spawn");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGTERM)
        );
    }

    #[test]
    fn sigpipe_is_at_its_default_in_the_child() {
        let dir = tempfile::tempdir().expect("tmp");
        let (status, out) = run(
            "sh",
            &["-c", "grep SigIgn /proc/self/status | cut -f2"],
            dir.path(),
        )
        .expect("spawn");
        assert!(status.success());
        let ignored = u64::from_str_radix(out.trim(), 16).expect("a mask");
        assert_eq!(ignored & (1 << (libc::SIGPIPE - 1)), 0, "SIGPIPE ignored");
    }
}
