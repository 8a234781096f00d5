//! How much the command says on standard error (`-q`, `-v`, as cargo has
//! them), and the progress bar of the long commands (build, check, import,
//! triton-override) on a terminal.
//!
//! * Default: what each command always said (notes, warnings, errors) and
//!   one summary line; on a terminal, a progress bar with the count, the
//!   rate and the time left while it runs, cleared before the summary.
//! * `-v`: also a line per file or job (`import`'s "imported …", `check`'s
//!   "ok: …").
//! * `-q`: errors only (standard output, such as `build`'s table, is the
//!   command's result and stays).
//!
//! The bar is drawn only when standard error is a terminal, `CI` is not
//! set and `TERM` is not `dumb`: logs, pipes, CI and build scripts get the
//! summary line alone.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use gcn_patch::ops::progress::{Observer, Progress, Task};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How much to say, from `-q` and `-v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// `-q`: errors only.
    Quiet = 0,
    /// Notes, warnings, errors and one summary line.
    Normal = 1,
    /// `-v`: also a line per file or job.
    Verbose = 2,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

/// Set once, from the command line.
pub(crate) fn set_verbosity(quiet: bool, verbose: u8) {
    let v = if quiet {
        Verbosity::Quiet
    } else if verbose > 0 {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

/// The verbosity the command line asked for.
pub(crate) fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// `eprintln!` unless `-q`: notes, warnings, status and summary lines.
macro_rules! say {
    ($($arg:tt)*) => {
        if $crate::progress::verbosity() > $crate::progress::Verbosity::Quiet {
            eprintln!($($arg)*);
        }
    };
}
pub(crate) use say;

/// `eprintln!` with `-v` only: a line per file or job.
macro_rules! detail {
    ($($arg:tt)*) => {
        if $crate::progress::verbosity() >= $crate::progress::Verbosity::Verbose {
            eprintln!($($arg)*);
        }
    };
}
pub(crate) use detail;

/// Whether a progress bar may be drawn: standard error is a terminal, not
/// in CI, not a dumb terminal, not `-q`.
fn interactive() -> bool {
    verbosity() > Verbosity::Quiet
        && std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// The progress bar of one command: an [`Observer`] that draws one bar
/// per phase on a terminal and does nothing elsewhere.
pub(crate) struct Bar {
    /// `None` off a terminal.
    bar: Option<Mutex<Option<ProgressBar>>>,
}

impl Bar {
    /// A bar (drawn only where [`interactive`] says).
    pub(crate) fn new() -> Bar {
        Bar {
            bar: interactive().then(|| Mutex::new(None)),
        }
    }

    /// The observer to pass to the operation (`None` off a terminal).
    pub(crate) fn observer(&self) -> Option<&dyn Observer> {
        self.bar.as_ref().map(|_| self as &dyn Observer)
    }

    /// Clear the bar (before the summary line).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            if let Some(b) = bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
                b.finish_and_clear();
            }
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Observer for Bar {
    fn start(&self, task: Task, total: usize, _max_jobs: usize) {
        let Some(bar) = &self.bar else { return };
        // `Building [=====>    ] 13/27 jobs, 4.1/s, ETA 3s: matmul gfx942 assembled`,
        // as cargo draws its own (the message is cut to the terminal's width).
        let style = ProgressStyle::with_template(
            "{prefix:>9} [{bar:25}] {pos}/{len} {unit}s, {rate}, ETA {eta}: {wide_msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> ")
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.1}/s", s.per_sec());
        })
        .with_key(
            "unit",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(task.unit());
            },
        );
        let mut verb = task.verb().to_string();
        verb[..1].make_ascii_uppercase();
        let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
            .with_style(style)
            .with_prefix(verb);
        b.enable_steady_tick(Duration::from_millis(200));
        b.tick();
        let mut slot = bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.replace(b) {
            old.finish_and_clear();
        }
    }

    fn progress(&self, p: Progress<'_>) {
        let Some(bar) = &self.bar else { return };
        if let Some(b) = &*bar.lock().unwrap_or_else(|e| e.into_inner()) {
            b.inc(1);
            b.set_message(format!("{} {}", p.item, p.outcome.as_str()));
        }
    }
}
