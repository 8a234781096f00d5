//! Progress of the long operations (build, check, import): the library
//! never prints; it tells an [`Observer`] what it is about to do and each
//! item it finished, and the caller renders that (the `gcn-patch` binary
//! draws a progress bar on a terminal and prints one summary line
//! elsewhere; gcn-build passes none).
//!
//! One mechanism for every operation: the build engine
//! ([`crate::pipeline::build::BuildOptions::progress`]), `check` and
//! `import` report through the same trait. Any `Fn(Progress)` closure is an
//! observer.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use gcn_embed::TargetId;

/// Watches an operation: told what it is about to do ([`Observer::start`]),
/// then each finished item ([`Observer::progress`], from the thread that
/// did it, so possibly from several at once). An operation may have more
/// than one phase (an import lifts binaries, then reads the text files):
/// each phase starts again.
pub trait Observer: Sync {
    /// `task` is about to work on `total` items, `max_jobs` at a time.
    fn start(&self, _task: Task, _total: usize, _max_jobs: usize) {}
    /// An item finished.
    fn progress(&self, _p: Progress<'_>) {}
}

impl<F: for<'a> Fn(Progress<'a>) + Sync> Observer for F {
    fn progress(&self, p: Progress<'_>) {
        self(p)
    }
}

/// What is in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Kernel × target jobs prepared, assembled, linked and verified (a build).
    Build,
    /// Kernel × target jobs checked (and, unless `--no-assemble`, built).
    Check,
    /// Binaries lifted by an import (code objects, containers member by member).
    Lift,
    /// Text files of an import read and recognized.
    Import,
}

impl Task {
    /// `building`, `checking`, `lifting` or `importing`.
    pub fn verb(self) -> &'static str {
        match self {
            Task::Build => "building",
            Task::Check => "checking",
            Task::Lift => "lifting",
            Task::Import => "importing",
        }
    }

    /// What one item is: `job` or `file`.
    pub fn unit(self) -> &'static str {
        match self {
            Task::Build | Task::Check => "job",
            Task::Lift | Task::Import => "file",
        }
    }
}

/// Where a built object came from, in the words of the build report
/// (`report.txt` of gcn-build, the table of `gcn-patch build`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Assembled and linked by this build.
    Assembled,
    /// From the build's own cache.
    Cached,
    /// From the shared cache (`GCN_BUILD_CACHE_DIR`).
    SharedCache,
}

impl State {
    /// `assembled`, `cached` or `shared-cache`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Assembled => "assembled",
            State::Cached => "cached",
            State::SharedCache => "shared-cache",
        }
    }
}

/// The item that finished.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// A kernel × target job.
    Job {
        /// Kernel name from the manifest.
        kernel: &'a str,
        /// Its target.
        target: &'a TargetId,
    },
    /// A file (an import's input).
    File(&'a Path),
}

impl std::fmt::Display for Item<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Item::Job { kernel, target } => write!(f, "{kernel} {}", target.name()),
            Item::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// How an item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A job built, its object from where [`State`] says.
    Built(State),
    /// Done (a job checked without assembling, a file read or lifted).
    Done,
    /// Failed: the operation's errors say why.
    Failed,
}

impl Outcome {
    /// `assembled`, `cached`, `shared-cache`, `done` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Built(s) => s.as_str(),
            Outcome::Done => "done",
            Outcome::Failed => "failed",
        }
    }
}

/// One finished item, as reported to [`Observer::progress`].
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// What is in progress.
    pub task: Task,
    /// Items finished so far, this one included.
    pub done: usize,
    /// Items in this phase.
    pub total: usize,
    /// The item that just finished.
    pub item: Item<'a>,
    /// How it ended.
    pub outcome: Outcome,
}

/// Counts one phase's finished items for an optional observer (the
/// operations' side of the mechanism).
pub(crate) struct Tally<'a> {
    observer: Option<&'a dyn Observer>,
    task: Task,
    total: usize,
    done: AtomicUsize,
}

impl<'a> Tally<'a> {
    /// Tell `observer` that `task` starts on `total` items, `max_jobs` at a time.
    pub(crate) fn start(
        observer: Option<&'a dyn Observer>,
        task: Task,
        total: usize,
        max_jobs: usize,
    ) -> Self {
        if let Some(o) = observer {
            o.start(task, total, max_jobs);
        }
        Tally {
            observer,
            task,
            total,
            done: AtomicUsize::new(0),
        }
    }

    /// One more item finished.
    pub(crate) fn finished(&self, item: Item<'_>, outcome: Outcome) {
        if let Some(o) = self.observer {
            o.progress(Progress {
                task: self.task,
                done: self.done.fetch_add(1, Ordering::SeqCst) + 1,
                total: self.total,
                item,
                outcome,
            });
        }
    }
}

impl std::fmt::Debug for Tally<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tally")
            .field("task", &self.task)
            .field("total", &self.total)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
