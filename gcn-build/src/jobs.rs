//! Run kernel × target jobs in parallel, cooperating with Cargo's jobserver.
//!
//! A build script already holds one implicit jobserver token: the first worker
//! runs on it; every other worker acquires a token before each job and gives it
//! back after. Under `cargo build -j1` no extra token is ever granted, so exactly
//! one job runs at a time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Run `f` on every item, at most `max_workers` at once, returning results in input order.
pub(crate) fn run<T, R, F>(items: Vec<T>, max_workers: usize, client: Option<&jobserver::Client>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let n = items.len();
    let workers = max_workers.clamp(1, n.max(1));
    let queue: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let results: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let (queue, results, next, f) = (&queue, &results, &next, &f);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                // Worker 0 runs on the token Cargo gave this build script.
                let _token = match (worker, client) {
                    (0, _) | (_, None) => None,
                    (_, Some(c)) => c.acquire().ok(),
                };
                let item = queue[i].lock().ok().and_then(|mut q| q.take());
                if let Some(item) = item {
                    let r = f(item);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    results.into_iter().filter_map(|m| m.into_inner().ok().flatten()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn keeps_order_and_bounds_concurrency() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = run((0..20).collect(), 3, None, |i: u32| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(2));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        assert_eq!(out, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        assert!(peak.load(Ordering::SeqCst) <= 3);
    }

    #[test]
    fn jobserver_with_no_spare_tokens_runs_one_at_a_time() {
        // A jobserver with zero extra tokens is what `cargo build -j1` hands a build script.
        let client = jobserver::Client::new(0).expect("create jobserver");
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = run((0..6).collect(), 4, Some(&client), |i: u32| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(5));
            running.fetch_sub(1, Ordering::SeqCst);
            i
        });
        assert_eq!(out, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(peak.load(Ordering::SeqCst), 1);
    }
}
