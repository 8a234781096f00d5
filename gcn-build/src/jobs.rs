//! Run kernel × target jobs in parallel, cooperating with Cargo's jobserver.
//!
//! A build script already holds one implicit jobserver token: one job at a
//! time runs on it. Every further concurrent job needs a token taken from the
//! jobserver with a non-blocking `try_acquire`, released when the job ends.
//! Under `cargo build -j1` no extra token is ever granted, so exactly one job
//! runs at a time; the coordinator never blocks on the jobserver, so it cannot
//! deadlock waiting for a token while the implicit one is free.

use std::sync::mpsc;
use std::time::Duration;

/// How often to retry the jobserver while jobs wait and tokens are scarce.
const RETRY: Duration = Duration::from_millis(20);

/// Run `f` on every item, at most `max_workers` at once, returning results in input order.
pub(crate) fn run<T, R, F>(
    items: Vec<T>,
    max_workers: usize,
    client: Option<&jobserver::Client>,
    f: F,
) -> Vec<R>
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
        let (done_tx, done_rx) = mpsc::channel::<(usize, R, bool)>();
        let mut queue = items.into_iter().enumerate();
        let mut next = queue.next();
        let (mut running, mut implicit_free) = (0usize, true);
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
                } else {
                    match client.map(|c| c.try_acquire()) {
                        Some(Ok(Some(token))) => (Some(token), false),
                        // No jobserver (not under Cargo): bounded by `max` only.
                        None => (None, false),
                        // No token free (or an unusable jobserver): wait for a job to end.
                        Some(_) => {
                            next = Some((i, item));
                            break;
                        }
                    }
                };
                let tx = done_tx.clone();
                running += 1;
                scope.spawn(move || {
                    let r = f(item);
                    drop(token);
                    let _ = tx.send((i, r, holds_implicit));
                });
                next = queue.next();
            }
            if running == 0 && next.is_none() {
                break;
            }
            // Wait for a job to end (or retry the jobserver shortly if jobs are waiting).
            let msg = if next.is_some() && client.is_some() && running > 0 {
                done_rx.recv_timeout(RETRY).ok()
            } else {
                done_rx.recv().ok()
            };
            if let Some((i, r, held_implicit)) = msg {
                running -= 1;
                if held_implicit {
                    implicit_free = true;
                }
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

    fn peak_of(items: u32, max: usize, client: Option<&jobserver::Client>) -> (Vec<u32>, usize) {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = run((0..items).collect(), max, client, |i: u32| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(5));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        (out, peak.load(Ordering::SeqCst))
    }

    #[test]
    fn keeps_order_and_bounds_concurrency_without_a_jobserver() {
        let (out, peak) = peak_of(20, 3, None);
        assert_eq!(out, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        assert!((1..=3).contains(&peak), "peak {peak}");
    }

    #[test]
    fn jobserver_with_no_spare_tokens_runs_one_at_a_time() {
        // What `cargo build -j1` hands a build script: only the implicit token.
        let client = jobserver::Client::new(0).expect("create jobserver");
        let (out, peak) = peak_of(6, 4, Some(&client));
        assert_eq!(out, vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(peak, 1);
    }

    #[test]
    fn jobserver_tokens_bound_concurrency() {
        // Two spare tokens + the implicit one: at most three at once, even with more workers allowed.
        let client = jobserver::Client::new(2).expect("create jobserver");
        let (out, peak) = peak_of(12, 8, Some(&client));
        assert_eq!(out.len(), 12);
        assert!((1..=3).contains(&peak), "peak {peak}");
    }

    #[test]
    fn empty_input_returns_immediately() {
        let out: Vec<u32> = run(Vec::<u32>::new(), 4, None, |i| i);
        assert!(out.is_empty());
    }
}
