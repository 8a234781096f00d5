//! The one runner every external tool run goes through (clang probes,
//! assembling, linking, disassembling; gcn-patch's toolchain and gcn-emu's
//! decoder): [`run_tool`].
//!
//! Why: clang-22's AMDGPU assembler never returns on some malformed input (an
//! unterminated `"` after an operand), and a killed build used to leave its
//! clang child spinning. So every run here
//!
//! - has a time limit ([`DEFAULT_TOOL_TIMEOUT`], configurable with
//!   [`ENV_TOOL_TIMEOUT`], `ToolchainConfig::timeout`, gcn-build's
//!   `Build::tool_timeout` and the CLI's `--tool-timeout`); past it the tool is
//!   killed and the error names the tool, the job (kernel and target) and the
//!   limit;
//! - starts the tool in its own process group (Unix) and, whatever happens,
//!   kills that whole group before reaping the tool, so no grandchild
//!   survives it;
//! - kills the live tool groups when this process gets `SIGINT`, `SIGTERM`,
//!   `SIGHUP` or `SIGQUIT` (a handler is installed once, only for signals
//!   still at their default action; it kills the groups, restores the default
//!   action and re-raises the signal, so the process still dies of it). These
//!   are **process-wide**: a program embedding the library that wants its own
//!   handling calls [`set_signal_handlers`]`(false)` before the first tool run
//!   and, from its own handler, [`kill_running_tools`];
//! - tracks every running tool group in a fixed table that the signal
//!   handler can read ([`MAX_LIVE_TOOLS`] entries): a run that finds it full
//!   waits for a running tool to end, so no tool ever runs unregistered (and
//!   unkillable on a signal);
//! - on Linux, asks the kernel to `SIGKILL` the tool when the thread that
//!   started it dies (`PR_SET_PDEATHSIG`), which covers `SIGKILL` of this
//!   process, where no handler can run. Tools built with [`tool_command`]
//!   get it from `setpriv`, so they start with `posix_spawn` and never copy
//!   this process's memory;
//! - has stdin closed, or fed from memory ([`run_tool_with_input`]), and
//!   stdout and stderr captured whole (a tool that exits without reading
//!   all its input is no error of the runner, its exit status says what
//!   happened). On Linux the three streams are in-memory files
//!   (`memfd_create`): the tool reads its input and writes its output at
//!   its own pace, with no pipe to fill up, no thread of this process
//!   copying, and no wake-up of this process per pipe buffer (a lift's
//!   listing is megabytes). Elsewhere they are pipes that threads of this
//!   process fill and drain concurrently, so no pipe stalls the tool.
//!
//! Waiting costs no polling on Unix: the calling thread blocks in
//! `waitid(WNOWAIT)` while a watchdog thread sleeps until the deadline. The
//! tool is reaped only after the watchdog is stopped and the group is killed,
//! so a process-group id is never signalled after it could have been reused.

use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How many tools may run at once: the size of the table of live tool
/// groups the signal handler kills. A tool run beyond it waits for one to end.
pub const MAX_LIVE_TOOLS: usize = 256;

/// Whether the first tool run installs the `SIGINT`/`SIGTERM`/`SIGHUP`/
/// `SIGQUIT` handlers that kill running tools before the process dies (the
/// default: yes, for signals still at their default action). Call with
/// `false` before the first tool run to leave the process's signal
/// dispositions alone; the program's own handler can then call
/// [`kill_running_tools`]. Has no effect once installed, nor off Unix.
pub fn set_signal_handlers(install: bool) {
    sys::set_signal_handlers(install);
}

/// `SIGKILL` the process group of every tool running now. Async-signal-safe
/// (only atomics and `kill(2)`): meant for an embedding program's own signal
/// handler after [`set_signal_handlers`]`(false)`. Does nothing off Unix.
pub fn kill_running_tools() {
    sys::kill_running_tools();
}

/// Environment variable: the time limit of every tool run, in seconds
/// (a positive number, fractions allowed: `600`, `2.5`).
pub const ENV_TOOL_TIMEOUT: &str = "GCN_PATCH_TOOL_TIMEOUT";

/// Default time limit of one tool run. Generous: assembling the largest
/// corpus dump takes well under a second, and a 1M-line file a few seconds.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// Parse a time limit in seconds (`300`, `2.5`); it must be positive and finite.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let t = t.strip_suffix('s').unwrap_or(t);
    match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs < 1e9 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "invalid tool time limit {text:?}: expected a positive number of seconds, e.g. `300` or `2.5`"
        )),
    }
}

/// What is run, for messages and limits.
#[derive(Debug, Clone, Copy)]
pub struct ToolRun<'a> {
    /// The tool's short name (`clang`, `ld.lld`, `llvm-objdump`).
    pub tool: &'a str,
    /// What it works on, e.g. "assembling kernel `matmul` for gfx950".
    pub job: &'a str,
    /// The time limit.
    pub timeout: Duration,
}

/// Why a tool run did not produce an exit status.
#[derive(Debug)]
pub enum ToolFailure {
    /// The tool could not be started.
    Spawn(io::Error),
    /// It ran past its time limit and was killed (with its process group).
    TimedOut(Duration),
    /// Waiting for it or reading its output failed.
    Io(io::Error),
}

/// A tool run that did not complete.
#[derive(Debug)]
pub struct ToolError {
    /// The tool's short name.
    pub tool: String,
    /// What it was working on.
    pub job: String,
    /// The command line, for the user to rerun.
    pub command: String,
    /// What went wrong.
    pub failure: ToolFailure,
}

impl ToolError {
    /// Whether the tool was killed for running past its time limit.
    pub fn timed_out(&self) -> bool {
        matches!(self.failure, ToolFailure::TimedOut(_))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            ToolFailure::Spawn(e) => write!(f, "cannot run {} {}: {e}", self.tool, self.job),
            ToolFailure::TimedOut(t) => write!(
                f,
                "{} did not finish within {} {} and was killed",
                self.tool,
                show_secs(*t),
                self.job
            ),
            ToolFailure::Io(e) => write!(f, "lost track of {} {}: {e}", self.tool, self.job),
        }
    }
}

impl std::error::Error for ToolError {}

/// `300 s`, `2.5 s`.
pub fn show_secs(t: Duration) -> String {
    let s = t.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", t.as_secs())
    } else {
        format!("{s} s")
    }
}

/// A [`Command`] for the external tool `program`, to be run with
/// [`run_tool`]. Build every tool command with this.
///
/// On Linux, when util-linux's `setpriv` is installed and `program` exists,
/// the tool is started as `setpriv --pdeathsig KILL -- PROGRAM ARGS…`:
/// `setpriv` sets the parent-death signal and execs the tool (the signal
/// survives the exec), so no `pre_exec` hook is needed and the standard
/// library starts the tool with `posix_spawn` instead of `fork`. A fork
/// copies this process's page tables: with gigabytes of lifted files in
/// memory, thousands of forks were most of a large import's time.
/// Arguments, environment (`env_clear` included) and working directory set
/// on the returned command reach the tool unchanged, and messages show the
/// tool's own command line ([`command_line`]). Elsewhere, or without a
/// usable `setpriv`, a plain `Command::new(program)`, started with `fork`
/// and a hook that sets the signal itself.
pub fn tool_command(program: impl AsRef<OsStr>) -> Command {
    let program = program.as_ref();
    match sys::spawn_wrapper() {
        Some(wrapper) if exists(program) => {
            let mut cmd = Command::new(wrapper);
            cmd.args(WRAPPER_ARGS).arg(program);
            cmd
        }
        _ => Command::new(program),
    }
}

/// The arguments `tool_command` puts between `setpriv` and the tool.
const WRAPPER_ARGS: [&str; 3] = ["--pdeathsig", "KILL", "--"];

/// Whether `program` names an existing file, directly or on `PATH`: only
/// then is it wrapped (a missing tool stays a spawn error naming the tool).
fn exists(program: &OsStr) -> bool {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|dirs| std::env::split_paths(&dirs).any(|d| d.join(path).is_file()))
}

/// The tool `cmd` runs and its arguments, without the `setpriv` wrapper of
/// [`tool_command`].
pub fn tool_and_args(cmd: &Command) -> (&OsStr, Vec<&OsStr>) {
    let args: Vec<&OsStr> = cmd.get_args().collect();
    if is_wrapped(cmd) {
        (
            args[WRAPPER_ARGS.len()],
            args[WRAPPER_ARGS.len() + 1..].to_vec(),
        )
    } else {
        (cmd.get_program(), args)
    }
}

/// Whether `cmd` was wrapped by [`tool_command`].
fn is_wrapped(cmd: &Command) -> bool {
    sys::spawn_wrapper().is_some_and(|w| cmd.get_program() == w.as_os_str())
        && cmd.get_args().count() > WRAPPER_ARGS.len()
        && cmd.get_args().zip(WRAPPER_ARGS).all(|(a, w)| a == w)
}

/// The command line of `cmd` (the tool's, without a [`tool_command`]
/// wrapper), shell-quoted where needed.
pub fn command_line(cmd: &Command) -> String {
    let quote = |s: &std::ffi::OsStr| {
        let s = s.to_string_lossy();
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,@%".contains(c))
        {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    let (program, args) = tool_and_args(cmd);
    std::iter::once(quote(program))
        .chain(args.into_iter().map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run `cmd` to completion within `run.timeout`, capturing stdout and stderr
/// (stdin is closed). See the module docs for what is guaranteed.
pub fn run_tool(cmd: &mut Command, run: &ToolRun) -> Result<Output, ToolError> {
    run_tool_with_input(cmd, run, None)
}

/// [`run_tool`], with `input` (if any) written to the tool's stdin from a
/// thread of its own, then closed.
pub fn run_tool_with_input(
    cmd: &mut Command,
    run: &ToolRun,
    input: Option<&[u8]>,
) -> Result<Output, ToolError> {
    let command = command_line(cmd);
    let error = |failure| ToolError {
        tool: run.tool.to_string(),
        job: run.job.to_string(),
        command: command.clone(),
        failure,
    };
    sys::prepare(cmd, is_wrapped(cmd));
    // On Linux the streams are in-memory files: the tool writes and reads
    // without waiting for this process, and no thread copies them.
    if let Some(files) = memory_streams(input) {
        return run_with_files(cmd, run, files).map_err(error);
    }
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let (mut child, slot) = spawn_registered(cmd).map_err(error)?;
    let out = child.stdout.take();
    let err = child.stderr.take();
    let inp = child.stdin.take();
    let proc_ = &mut child;
    let result = std::thread::scope(|s| {
        let writer = input.map(|bytes| s.spawn(move || write_all(inp, bytes)));
        let out_reader = s.spawn(move || read_all(out));
        let err_reader = s.spawn(move || read_all(err));
        let waited = sys::wait_bounded(proc_, run.timeout, slot);
        // The tool is gone (its group killed): a blocked write has failed.
        let written = writer.map_or(Ok(()), |w| w.join().unwrap_or(Ok(())));
        let stdout = out_reader.join().unwrap_or_else(|_| Ok(Vec::new()));
        let stderr = err_reader.join().unwrap_or_else(|_| Ok(Vec::new()));
        let waited = match (waited, written) {
            (Ok(Waited::Exited(_)), Err(e)) => Err(e),
            (w, _) => w,
        };
        (waited, stdout, stderr)
    });
    match result {
        (Err(e), _, _) | (Ok(_), Err(e), _) | (Ok(_), _, Err(e)) => Err(error(ToolFailure::Io(e))),
        (Ok(Waited::TimedOut), _, _) => Err(error(ToolFailure::TimedOut(run.timeout))),
        (Ok(Waited::Exited(status)), Ok(stdout), Ok(stderr)) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
    }
}

/// Start `cmd` registered in the live table: a slot first (waiting for
/// one if all are taken), so the tool is registered from its start. A
/// signal landing before the registration is covered by the parent-death
/// signal on Linux.
fn spawn_registered(cmd: &mut Command) -> Result<(std::process::Child, usize), ToolFailure> {
    let slot = sys::reserve();
    match cmd.spawn() {
        Ok(child) => {
            sys::register(slot, child.id());
            Ok((child, slot))
        }
        Err(e) => {
            sys::release(slot);
            Err(ToolFailure::Spawn(e))
        }
    }
}

/// A tool's streams as in-memory files (`memfd_create`), stdin holding
/// `input`; None where that is not to be had (not Linux, a kernel or
/// sandbox without memfd, a failed write): then pipes are used.
#[cfg(target_os = "linux")]
fn memory_streams(input: Option<&[u8]>) -> Option<StreamFiles> {
    use std::io::Seek;
    use std::os::fd::FromRawFd;
    fn memfd() -> Option<std::fs::File> {
        // SAFETY: a NUL-terminated name; the returned descriptor is owned
        // by the File from here on.
        let fd = unsafe { libc::memfd_create(c"gcn-patch-tool".as_ptr(), libc::MFD_CLOEXEC) };
        (fd >= 0).then(|| unsafe { std::fs::File::from_raw_fd(fd) })
    }
    let stdin = match input {
        Some(bytes) => {
            let mut f = memfd()?;
            f.write_all(bytes).ok()?;
            f.seek(io::SeekFrom::Start(0)).ok()?;
            Some(f)
        }
        None => None,
    };
    Some(StreamFiles {
        stdin,
        stdout: memfd()?,
        stderr: memfd()?,
    })
}

/// Pipes everywhere but Linux.
#[cfg(not(target_os = "linux"))]
fn memory_streams(_input: Option<&[u8]>) -> Option<StreamFiles> {
    None
}

/// A tool's streams as files: stdin holding the input (none: closed),
/// stdout and stderr empty, each read back from its start once the tool
/// has exited.
struct StreamFiles {
    stdin: Option<std::fs::File>,
    stdout: std::fs::File,
    stderr: std::fs::File,
}

/// [`run_tool_with_input`] with the streams in `files`: the tool's output
/// waits in them, so nothing reads while it runs.
fn run_with_files(
    cmd: &mut Command,
    run: &ToolRun,
    files: StreamFiles,
) -> Result<Output, ToolFailure> {
    let StreamFiles {
        stdin,
        mut stdout,
        mut stderr,
    } = files;
    let io = ToolFailure::Io;
    cmd.stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::from(stdout.try_clone().map_err(io)?))
        .stderr(Stdio::from(stderr.try_clone().map_err(io)?));
    let spawned = spawn_registered(cmd);
    // The command keeps its copies of the files otherwise.
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let (mut child, slot) = spawned?;
    let status = match sys::wait_bounded(&mut child, run.timeout, slot).map_err(io)? {
        Waited::TimedOut => return Err(ToolFailure::TimedOut(run.timeout)),
        Waited::Exited(status) => status,
    };
    let read_back = |f: &mut std::fs::File| -> io::Result<Vec<u8>> {
        use std::io::Seek;
        f.seek(io::SeekFrom::Start(0))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        Ok(buf)
    };
    Ok(Output {
        status,
        stdout: read_back(&mut stdout).map_err(io)?,
        stderr: read_back(&mut stderr).map_err(io)?,
    })
}

/// Write `bytes` to the tool's stdin and close it. A tool that exits (or is
/// killed) before reading everything closes the pipe: not an error here.
fn write_all(pipe: Option<impl Write>, bytes: &[u8]) -> io::Result<()> {
    if let Some(mut p) = pipe {
        match p.write_all(bytes) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

fn read_all(pipe: Option<impl Read>) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    if let Some(mut p) = pipe {
        p.read_to_end(&mut buf)?;
    }
    Ok(buf)
}

/// How a bounded wait ended.
enum Waited {
    Exited(ExitStatus),
    TimedOut,
}

/// Sleep until `deadline` unless `stop` says otherwise; true if the deadline passed.
fn watchdog(stop: &mpsc::Receiver<()>, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match stop.recv_timeout(left) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => return true,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
        }
    }
}

#[cfg(unix)]
mod sys {
    //! Process groups, the interrupt handler, `waitid(WNOWAIT)`.

    use std::io;
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    use std::sync::{mpsc, Condvar, Mutex, Once, OnceLock};
    use std::time::Duration;

    use super::{watchdog, Waited};

    /// Process groups of the tools running now (0: free slot, -1: reserved
    /// for a tool being started). Read by the signal handler, so only atomics.
    static LIVE: [AtomicI32; super::MAX_LIVE_TOOLS] =
        [const { AtomicI32::new(0) }; super::MAX_LIVE_TOOLS];

    /// Wakes runs waiting for a free slot of [`LIVE`].
    static FREED: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());

    /// Whether the first tool run installs the signal handlers.
    static HANDLERS: AtomicBool = AtomicBool::new(true);

    pub(super) fn set_signal_handlers(install: bool) {
        HANDLERS.store(install, Ordering::SeqCst);
    }

    pub(super) fn kill_running_tools() {
        kill_live_groups();
    }

    /// Signals whose default action ends the process.
    const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

    static INSTALL: Once = Once::new();

    extern "C" fn on_signal(sig: libc::c_int) {
        kill_live_groups();
        // SAFETY: `signal` and `raise` are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// SIGKILL every registered tool group (async-signal-safe).
    fn kill_live_groups() {
        for slot in &LIVE {
            let pgid = slot.load(Ordering::SeqCst);
            if pgid > 0 {
                // SAFETY: kill(2) with a negative pid signals a process group.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
    }

    fn install_handlers() {
        if !HANDLERS.load(Ordering::SeqCst) {
            return;
        }
        INSTALL.call_once(|| {
            for sig in SIGNALS {
                // SAFETY: plain sigaction calls; the handler only uses
                // async-signal-safe functions and atomics.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                        continue;
                    }
                    // Leave signals the program handles or ignores alone.
                    if old.sa_sigaction != libc::SIG_DFL {
                        continue;
                    }
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    libc::sigemptyset(&mut new.sa_mask);
                    new.sa_flags = libc::SA_RESTART;
                    libc::sigaction(sig, &new, std::ptr::null_mut());
                }
            }
        });
    }

    /// `setpriv`, where it can set the parent-death signal (probed once).
    pub(super) fn spawn_wrapper() -> Option<&'static Path> {
        static WRAPPER: OnceLock<Option<PathBuf>> = OnceLock::new();
        WRAPPER
            .get_or_init(|| {
                if !cfg!(target_os = "linux") {
                    return None;
                }
                let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())?;
                // It must accept `--pdeathsig` and exec a program.
                let ok = Command::new(&setpriv)
                    .args(super::WRAPPER_ARGS)
                    .arg(&setpriv)
                    .arg("--version")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                ok.then_some(setpriv)
            })
            .as_deref()
    }

    /// Own process group; on Linux, SIGKILL when the starting thread dies:
    /// set by the `setpriv` wrapper of a [`super::tool_command`] (`wrapped`),
    /// else by a `pre_exec` hook (which makes the standard library fork).
    pub(super) fn prepare(cmd: &mut Command, wrapped: bool) {
        install_handlers();
        cmd.process_group(0);
        #[cfg(not(target_os = "linux"))]
        let _ = wrapped;
        #[cfg(target_os = "linux")]
        if !wrapped {
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: only async-signal-safe calls (prctl, getppid, _exit)
            // between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // The parent may have died before prctl took effect.
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    Ok(())
                });
            }
        }
    }

    /// Reserve a slot of the live table for a tool about to start; with
    /// every slot taken, wait until a running tool ends.
    pub(super) fn reserve() -> usize {
        let take = || {
            LIVE.iter().position(|s| {
                s.compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            })
        };
        if let Some(i) = take() {
            return i;
        }
        let (lock, freed) = &FREED;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(i) = take() {
                return i;
            }
            // Woken when a slot is released; the timeout only bounds a
            // missed wake-up (a release between `take` and the wait).
            guard = freed
                .wait_timeout(guard, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Record a started tool's group (its pid: it leads its own group).
    pub(super) fn register(slot: usize, pid: u32) {
        LIVE[slot].store(pid as i32, Ordering::SeqCst);
    }

    /// Give a slot back and wake a run waiting for one.
    pub(super) fn release(slot: usize) {
        LIVE[slot].store(0, Ordering::SeqCst);
        let (lock, freed) = &FREED;
        drop(lock.lock().unwrap_or_else(|e| e.into_inner()));
        freed.notify_one();
    }

    /// Wait for exit without reaping (`WNOWAIT`), retrying on EINTR.
    fn wait_exit_no_reap(pid: libc::pid_t) -> io::Result<()> {
        loop {
            // SAFETY: `info` is a valid out-pointer for waitid.
            let r = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Wait for `child` at most `timeout`; kill its group in every case
    /// before reaping it.
    pub(super) fn wait_bounded(
        child: &mut Child,
        timeout: Duration,
        slot: usize,
    ) -> io::Result<Waited> {
        let pid = child.id() as libc::pid_t;
        let (stop, stopped) = mpsc::channel::<()>();
        let timed_out = std::thread::scope(|s| {
            let dog = s.spawn(move || {
                let late = watchdog(&stopped, timeout);
                if late {
                    // SAFETY: the leader is not reaped yet (the waiting
                    // thread reaps only after joining this one), so the
                    // group id is still ours.
                    unsafe {
                        libc::kill(-pid, libc::SIGKILL);
                    }
                }
                late
            });
            let waited = wait_exit_no_reap(pid);
            let _ = stop.send(());
            let late = dog.join().unwrap_or(false);
            waited.map(|()| late)
        });
        // Whatever the tool left behind in its group goes with it.
        // SAFETY: as above, the leader is still unreaped.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        release(slot);
        let status = child.wait()?;
        Ok(if timed_out? {
            Waited::TimedOut
        } else {
            Waited::Exited(status)
        })
    }
}

#[cfg(not(unix))]
mod sys {
    //! Portable fallback: poll `try_wait`, kill the child past the deadline.

    use std::io;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use super::Waited;

    pub(super) fn prepare(_cmd: &mut Command, _wrapped: bool) {}

    pub(super) fn spawn_wrapper() -> Option<&'static std::path::Path> {
        None
    }

    pub(super) fn set_signal_handlers(_install: bool) {}

    pub(super) fn kill_running_tools() {}

    pub(super) fn reserve() -> usize {
        0
    }

    pub(super) fn register(_slot: usize, _pid: u32) {}

    pub(super) fn release(_slot: usize) {}

    pub(super) fn wait_bounded(
        child: &mut Child,
        timeout: Duration,
        _slot: usize,
    ) -> io::Result<Waited> {
        let deadline = Instant::now() + timeout;
        let mut nap = Duration::from_millis(1);
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(Waited::Exited(status));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                child.wait()?;
                return Ok(Waited::TimedOut);
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    fn run(cmd: &mut Command, secs: f64) -> Result<Output, ToolError> {
        run_tool(
            cmd,
            &ToolRun {
                tool: "sh",
                job: "for a test",
                timeout: Duration::from_secs_f64(secs),
            },
        )
    }

    #[test]
    fn captures_both_streams_and_the_status() {
        let out = run(&mut sh("echo out; echo err >&2; exit 3"), 60.0).unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn large_output_does_not_stall() {
        // 4 MiB on each stream: more than any pipe buffer.
        let out = run(
            &mut sh("head -c 4194304 /dev/zero; head -c 4194304 /dev/zero >&2"),
            60.0,
        )
        .unwrap();
        assert_eq!((out.stdout.len(), out.stderr.len()), (4 << 20, 4 << 20));
    }

    #[test]
    fn large_input_reaches_the_tool_whole_and_an_unread_input_is_no_error() {
        let input: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let ran = |script: &str| {
            run_tool_with_input(
                &mut sh(script),
                &ToolRun {
                    tool: "sh",
                    job: "for a test",
                    timeout: Duration::from_secs(60),
                },
                Some(&input),
            )
            .unwrap()
        };
        let out = ran("cat; cat >&2");
        assert_eq!(out.stdout, input, "stdout is not the input");
        assert!(out.stderr.is_empty(), "stdin was read twice");
        let out = ran("exit 4");
        assert_eq!(out.status.code(), Some(4));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_the_streams_are_in_memory_files() {
        let out = run(
            &mut sh("readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2"),
            60.0,
        )
        .unwrap();
        let links = String::from_utf8(out.stdout).unwrap();
        let links: Vec<&str> = links.lines().collect();
        assert_eq!(links[0], "/dev/null", "stdin without input: {links:?}");
        for l in &links[1..] {
            assert!(
                l.starts_with("/memfd:gcn-patch-tool"),
                "not a memfd: {links:?}"
            );
        }
    }

    #[test]
    fn a_hanging_tool_and_its_children_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        // The grandchild keeps the pipes open: without the group kill, reading
        // the output would block forever.
        let script = format!("sleep 1000 & echo $! > '{}'; wait", pidfile.display());
        let err = run(&mut sh(&script), 0.5).unwrap_err();
        assert!(err.timed_out(), "{err}");
        assert_eq!(
            err.to_string(),
            "sh did not finish within 0.5 s for a test and was killed"
        );
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(dead(pid), "grandchild {pid} survived");
    }

    /// Whether `pid` is gone or a zombie (killed, not yet reaped by init).
    /// SIGKILL is delivered asynchronously: allow it a few seconds.
    pub(crate) fn dead(pid: i32) -> bool {
        for _ in 0..500 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                // `pid (comm) S ...`: the state follows the last `)`.
                Ok(stat) => {
                    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                    if state.starts_with('Z') || state.starts_with('X') {
                        return true;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_missing_tool_is_a_spawn_error() {
        let err = run(&mut Command::new("/nonexistent/clang"), 60.0).unwrap_err();
        assert!(matches!(err.failure, ToolFailure::Spawn(_)), "{err}");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn tool_commands_start_through_setpriv_with_the_tools_own_environment() {
        // Debian's util-linux ships setpriv; the wrapper must be found here.
        assert!(
            sys::spawn_wrapper().is_some(),
            "setpriv --pdeathsig is unusable: install util-linux"
        );
        let mut cmd = tool_command("/usr/bin/env");
        cmd.env_clear().env("ONLY", "this");
        assert!(is_wrapped(&cmd));
        assert_eq!(command_line(&cmd), "/usr/bin/env");
        let out = run(&mut cmd, 60.0).unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ONLY=this\n");
        // A missing tool is not wrapped: still a spawn error naming it.
        let mut missing = tool_command("/nonexistent/clang");
        assert!(!is_wrapped(&missing));
        let err = run(&mut missing, 60.0).unwrap_err();
        assert!(matches!(err.failure, ToolFailure::Spawn(_)), "{err}");
    }

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_timeout("2.5s"), Ok(Duration::from_millis(2500)));
        for bad in ["0", "-1", "x", "", "inf", "NaN"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn command_lines_are_quoted() {
        let mut c = Command::new("clang");
        c.args(["-mcpu=gfx942", "a b.s", "it's"]);
        assert_eq!(command_line(&c), r"clang -mcpu=gfx942 'a b.s' 'it'\''s'");
    }
}
