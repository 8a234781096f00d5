//! Run kernel × target jobs in parallel, bounded by a worker count and by an
//! optional token source ([`Tokens`]: Cargo's jobserver in gcn-build, nothing
//! in the CLI).
//!
//! The caller already holds one implicit token (a build script runs on one of
//! Cargo's job slots): one job at a time runs on it. Every further concurrent
//! job needs a token taken with a non-blocking [`Tokens::try_acquire`]. A
//! token whose job ends passes to the next waiting job (taking a token from
//! Cargo's jobserver goes through a helper thread: giving it back and asking
//! again left a slot idle for a retry interval per job); tokens are given
//! back as soon as no job waits. Under `cargo build -j1` no extra token is ever
//! granted, so exactly one job runs at a time; the coordinator never blocks on
//! the token source, so it cannot deadlock waiting for a token while the
//! implicit one is free.
//!
//! **Panics.** Each job runs behind a panic boundary: a panic (a bug in
//! gcn-patch, never an expected outcome of bad input) ends that job with a
//! [`Panicked`] result naming what the job was [`doing`], while the other jobs
//! finish; it never hangs the runner. Callers turn it into an error that
//! names the kernel, target and file ([`Panicked::into_diagnostic`]).

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use crate::base::diag::{Code, Diagnostic, Location};

/// How often to retry the token source while jobs wait and tokens are scarce.
const RETRY: Duration = Duration::from_millis(5);

/// A held concurrency token; dropping it gives it back.
pub struct Token(#[allow(dead_code)] Option<Box<dyn Any + Send>>);

impl Token {
    /// A token that releases `inner` (e.g. a `jobserver::Acquired`) when dropped.
    pub fn new(inner: impl Any + Send) -> Self {
        Token(Some(Box::new(inner)))
    }

    /// A token that stands for nothing (an unlimited source).
    pub fn free() -> Self {
        Token(None)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token")
    }
}

/// A source of concurrency tokens beyond the caller's implicit one.
pub trait Tokens: Sync {
    /// Take one token without blocking; `None` when none is free right now
    /// (the runner retries after a job ends or shortly).
    fn try_acquire(&self) -> Option<Token>;
}

/// No token source: concurrency is bounded by the worker count alone (the CLI).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unlimited;

impl Tokens for Unlimited {
    fn try_acquire(&self) -> Option<Token> {
        Some(Token::free())
    }
}

/// How many workers run at once: `jobs` (`-j`), else one per CPU; at
/// least one.
pub fn workers(jobs: Option<usize>) -> usize {
    jobs.or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .max(1)
}

/// A job that panicked: a bug in gcn-patch, caught at the job's boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panicked {
    /// The panic's message.
    pub message: String,
    /// What the job was doing when it panicked, outermost first (see
    /// [`doing`]), each with the manifest or asm line involved if known.
    pub context: Vec<(String, Option<Location>)>,
}

impl Panicked {
    /// The error shown for this panic: `job` says which job it was, e.g.
    /// ``building kernel `matmul` for gfx942``. The innermost step with a
    /// location (a rule's manifest line, say) is where the error points.
    pub fn into_diagnostic(self, job: &str) -> Diagnostic {
        let mut d = Diagnostic::error(
            Code::Internal,
            format!("internal error while {job}: {}", self.message),
        );
        if let Some(at) = self.context.iter().rev().find_map(|(_, at)| at.clone()) {
            d = d.at(at.with_label("gcn-patch panicked while handling this"));
        }
        for (what, _) in &self.context {
            d = d.with_note(format!("while {what}"));
        }
        d.with_note("gcn-patch panicked: this is a bug in gcn-patch, not an error in your input")
            .with_help(
                "please report it with the kernels.toml, asm and patches that trigger it; \
                 until it is fixed, changing or removing the step named above avoids it",
            )
    }
}

thread_local! {
    /// What the current thread's job is doing (see [`doing`]).
    static DOING: RefCell<Vec<(String, Option<Location>)>> = const { RefCell::new(Vec::new()) };
    /// Steps unwound by a panic on this thread, innermost first.
    static UNWOUND: RefCell<Vec<(String, Option<Location>)>> = const { RefCell::new(Vec::new()) };
}

/// Marks what the current job is doing (e.g. ``applying rule #2 (`move …`)``)
/// until the returned guard is dropped. Costs a push and a pop; if the job
/// panics meanwhile, its [`Panicked`] lists the step.
pub fn doing(what: impl Into<String>, at: Option<Location>) -> Doing {
    DOING.with(|d| d.borrow_mut().push((what.into(), at)));
    Doing(())
}

/// The guard [`doing`] returns.
#[must_use = "the step lasts as long as the guard"]
#[derive(Debug)]
pub struct Doing(());

impl Drop for Doing {
    fn drop(&mut self) {
        let step = DOING.with(|d| d.borrow_mut().pop());
        if let (Some(step), true) = (step, std::thread::panicking()) {
            UNWOUND.with(|u| u.borrow_mut().push(step));
        }
    }
}

/// Run `f` behind a panic boundary: a panic becomes [`Panicked`], with the
/// steps ([`doing`]) it unwound through.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Panicked> {
    UNWOUND.with(|u| u.borrow_mut().clear());
    let depth = DOING.with(|d| d.borrow().len());
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".into());
        // Steps still open outside `f` (the caller's), then those unwound, outermost first.
        let mut context: Vec<_> = DOING.with(|d| d.borrow().iter().take(depth).cloned().collect());
        context.extend(
            UNWOUND
                .with(|u| std::mem::take(&mut *u.borrow_mut()))
                .into_iter()
                .rev(),
        );
        Panicked { message, context }
    })
}

/// The test-only panic hook: `GCN_PATCH_TEST_PANIC=<stage>:<name>` makes the
/// job of that stage (`patch`, `check`, `build`, `import`) for that kernel or
/// input file name (`*`: any) panic, so that tests can show a panic is an error
/// naming the job, never a hang. Unset in normal use; costs one cached
/// environment read.
#[doc(hidden)]
pub fn test_panic_point(stage: &str, name: &str) {
    static HOOK: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let hook = HOOK.get_or_init(|| std::env::var("GCN_PATCH_TEST_PANIC").ok());
    if let Some((s, n)) = hook.as_deref().and_then(|h| h.split_once(':')) {
        if s == stage && (n == "*" || n == name) {
            panic!("injected by GCN_PATCH_TEST_PANIC={stage}:{n}");
        }
    }
}

/// Run `f` on every item, at most `max_workers` at once and never more than
/// one plus the tokens `tokens` grants; results in input order. A job that
/// panics gives `Err(Panicked)`; the others run to their end.
pub fn run<T, R, F>(
    items: Vec<T>,
    max_workers: usize,
    tokens: &dyn Tokens,
    f: F,
) -> Vec<Result<R, Panicked>>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let n = items.len();
    let max = max_workers.max(1);
    let mut results: Vec<Option<Result<R, Panicked>>> = (0..n).map(|_| None).collect();
    let f = &f;
    std::thread::scope(|scope| {
        // A job's result, whether it ran on the implicit token, and the
        // token it held (handed to the next job).
        let (done_tx, done_rx) =
            mpsc::channel::<(usize, Result<R, Panicked>, bool, Option<Token>)>();
        let mut queue = items.into_iter().enumerate();
        let mut next = queue.next();
        let (mut running, mut implicit_free) = (0usize, true);
        let mut spare: Vec<Token> = Vec::new();
        loop {
            // Start as many jobs as tokens allow.
            while let Some((i, item)) = next.take() {
                if running >= max {
                    next = Some((i, item));
                    break;
                }
                let (token, holds_implicit) = if implicit_free {
                    implicit_free = false;
                    (None, true)
                } else if let Some(token) = spare.pop() {
                    (Some(token), false)
                } else {
                    match tokens.try_acquire() {
                        Some(token) => (Some(token), false),
                        // No token free: wait for a job to end (or retry shortly).
                        None => {
                            next = Some((i, item));
                            break;
                        }
                    }
                };
                let tx = done_tx.clone();
                running += 1;
                scope.spawn(move || {
                    // The boundary: a panic is this job's result, so the
                    // coordinator below always hears back from every job.
                    let r = catch(|| f(item));
                    let _ = tx.send((i, r, holds_implicit, token));
                });
                next = queue.next();
            }
            // No job waits: give back every token not in use.
            if next.is_none() {
                spare.clear();
            }
            if running == 0 && next.is_none() {
                break;
            }
            // Wait for a job to end (or retry the token source shortly if jobs are waiting).
            let msg = if next.is_some() && running > 0 && running < max {
                done_rx.recv_timeout(RETRY).ok()
            } else {
                done_rx.recv().ok()
            };
            if let Some((i, r, held_implicit, token)) = msg {
                running -= 1;
                if held_implicit {
                    implicit_free = true;
                }
                spare.extend(token);
                results[i] = Some(r);
            }
        }
    });
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A source with `n` tokens.
    struct Counted(AtomicUsize);

    struct Back<'a>(&'a AtomicUsize);
    impl Drop for Back<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Tokens for &'static Counted {
        fn try_acquire(&self) -> Option<Token> {
            let c = &self.0;
            c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1))
                .ok()
                .map(|_| Token::new(Back(c)))
        }
    }

    fn peak_of(items: u32, max: usize, tokens: &dyn Tokens) -> (Vec<u32>, usize) {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = run((0..items).collect(), max, tokens, |i: u32| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(5));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        let out = out.into_iter().map(|r| r.expect("no job panics")).collect();
        (out, peak.load(Ordering::SeqCst))
    }

    #[test]
    fn keeps_order_and_bounds_concurrency_without_a_token_source() {
        let (out, peak) = peak_of(20, 3, &Unlimited);
        assert_eq!(out, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        assert!((1..=3).contains(&peak), "peak {peak}");
    }

    /// Each job waits (up to 5 s) until `n` jobs have started; returns how many saw all `n`.
    fn overlapping(n: usize, max: usize, tokens: &dyn Tokens) -> usize {
        let arrived = AtomicUsize::new(0);
        let met = AtomicUsize::new(0);
        run((0..n).collect(), max, tokens, |_| {
            arrived.fetch_add(1, Ordering::SeqCst);
            let end = std::time::Instant::now() + Duration::from_secs(5);
            while std::time::Instant::now() < end {
                if arrived.load(Ordering::SeqCst) >= n {
                    met.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        met.load(Ordering::SeqCst)
    }

    #[test]
    fn runs_jobs_concurrently_up_to_the_bound() {
        // Three jobs that each wait for the other two: a serial runner fails this.
        assert_eq!(
            overlapping(3, 3, &Unlimited),
            3,
            "the jobs never overlapped"
        );
    }

    #[test]
    fn granted_tokens_really_run_jobs_in_parallel() {
        // The implicit token plus two granted ones: three jobs at once.
        let tokens: &'static Counted = Box::leak(Box::new(Counted(AtomicUsize::new(2))));
        assert_eq!(
            overlapping(3, 8, &tokens),
            3,
            "tokens were granted but unused"
        );
    }

    #[test]
    fn no_spare_tokens_runs_one_at_a_time() {
        let tokens: &'static Counted = Box::leak(Box::new(Counted(AtomicUsize::new(0))));
        let (out, peak) = peak_of(6, 4, &tokens);
        assert_eq!(out, vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(peak, 1);
    }

    #[test]
    fn tokens_bound_concurrency_and_are_given_back() {
        let tokens: &'static Counted = Box::leak(Box::new(Counted(AtomicUsize::new(2))));
        let (out, peak) = peak_of(12, 8, &tokens);
        assert_eq!(out.len(), 12);
        assert!((1..=3).contains(&peak), "peak {peak}");
        assert_eq!(tokens.0.load(Ordering::SeqCst), 2);
    }

    /// A token whose job ends runs the next job: taken from the source
    /// once, not once per job (Cargo's jobserver grants through a helper
    /// thread, so giving it back and asking again idles a slot), and given
    /// back at the end.
    #[test]
    fn a_token_passes_to_the_next_job() {
        struct Granting {
            free: AtomicUsize,
            grants: AtomicUsize,
        }
        impl Tokens for &'static Granting {
            fn try_acquire(&self) -> Option<Token> {
                let c = &self.free;
                c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1))
                    .ok()
                    .map(|_| {
                        self.grants.fetch_add(1, Ordering::SeqCst);
                        Token::new(Back(c))
                    })
            }
        }
        let tokens: &'static Granting = Box::leak(Box::new(Granting {
            free: AtomicUsize::new(1),
            grants: AtomicUsize::new(0),
        }));
        let (out, peak) = peak_of(12, 8, &tokens);
        assert_eq!(out, (0..12).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(peak, 2, "the implicit token and the granted one");
        assert_eq!(tokens.grants.load(Ordering::SeqCst), 1, "taken once");
        assert_eq!(tokens.free.load(Ordering::SeqCst), 1, "given back");
    }

    #[test]
    fn empty_input_returns_immediately() {
        let out = run(Vec::<u32>::new(), 4, &Unlimited, |i| i);
        assert!(out.is_empty());
    }

    /// A panicking job is an error naming its steps; the others finish, and
    /// the runner returns (it used to wait forever for the dead worker).
    #[test]
    fn a_panicking_job_is_an_error_not_a_hang() {
        for workers in [1, 3] {
            let out = run((0..6u32).collect(), workers, &Unlimited, |i| {
                let _job = doing(format!("job {i}"), None);
                let _step = doing("the inner step", None);
                if i == 2 {
                    panic!("boom at {i}");
                }
                i
            });
            assert_eq!(out.len(), 6);
            for (i, r) in out.iter().enumerate() {
                if i == 2 {
                    let p = r.as_ref().unwrap_err();
                    assert_eq!(p.message, "boom at 2");
                    let steps: Vec<&str> = p.context.iter().map(|(w, _)| w.as_str()).collect();
                    assert_eq!(steps, ["job 2", "the inner step"]);
                } else {
                    assert_eq!(r.as_ref().ok(), Some(&(i as u32)));
                }
            }
        }
        // The steps of a panic do not leak into the next job on the same thread.
        let out = run(vec![0u32, 1], 1, &Unlimited, |i| {
            let _job = doing(format!("job {i}"), None);
            if i == 1 {
                panic!("second");
            }
        });
        let p = out[1].as_ref().unwrap_err();
        assert_eq!(p.context.len(), 1, "{p:?}");
    }

    #[test]
    fn the_diagnostic_points_at_the_innermost_located_step() {
        let p = catch(|| {
            let _a = doing(
                "applying rule #1",
                Some(Location::line("kernels.toml", 7, None)),
            );
            let _b = doing("matching its anchor", None);
            panic!("index out of bounds");
        })
        .unwrap_err();
        let d = p.into_diagnostic("patching kernel `k`");
        assert_eq!(
            d.message,
            "internal error while patching kernel `k`: index out of bounds"
        );
        assert_eq!(d.location.as_ref().map(|l| l.line), Some(7));
        assert!(
            d.notes.iter().any(|n| n == "while applying rule #1"),
            "{d:?}"
        );
        assert!(
            d.notes.iter().any(|n| n == "while matching its anchor"),
            "{d:?}"
        );
    }
}
