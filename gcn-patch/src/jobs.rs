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

use std::any::Any;
use std::sync::mpsc;
use std::time::Duration;

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

/// Run `f` on every item, at most `max_workers` at once and never more than
/// one plus the tokens `tokens` grants; results in input order.
pub fn run<T, R, F>(items: Vec<T>, max_workers: usize, tokens: &dyn Tokens, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let n = items.len();
    let max = max_workers.max(1);
    let mut results: Vec<Option<R>> = (0..n).map(|_| None).collect();
    let f = &f;
    std::thread::scope(|scope| {
        // A job's result, whether it ran on the implicit token, and the
        // token it held (handed to the next job).
        let (done_tx, done_rx) = mpsc::channel::<(usize, R, bool, Option<Token>)>();
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
                    let r = f(item);
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
        let out: Vec<u32> = run(Vec::<u32>::new(), 4, &Unlimited, |i| i);
        assert!(out.is_empty());
    }
}
