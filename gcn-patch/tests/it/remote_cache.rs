//! The shared cache on real remote servers (feature `remote-cache`, on with
//! the CLI): a Redis and an nginx WebDAV server that the tests start and
//! stop themselves (tests/support/servers.rs), a few real kernels built by
//! the real toolchain through the build engine gcn-build and `gcn-patch
//! build` share ([`Engine`]).
//!
//! Each "clone" is its own state directory (local cache, records); they
//! share only the server. Assembler runs are counted as the jobs the engine
//! assembled (`cached == None`: `build_bytes` ran clang and ld.lld).
#![cfg(feature = "remote-cache")]

use crate::common;
#[path = "../../../tests/support/servers.rs"]
mod servers;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gcn_patch::base::jobs;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::pipeline::build::{self, BuiltJob};
use gcn_patch::pipeline::cache::Shared;
use gcn_patch::pipeline::engine::{Engine, EngineConfig};
use gcn_patch::pipeline::{self, remote::RemoteStats};

/// A project of two HIP kernels (gfx942 dumps) for two targets: four jobs.
fn project(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("asm")).unwrap();
    let mut toml = String::new();
    for k in ["saxpy", "reduce"] {
        let asm = std::fs::read(common::corpus().join(format!("hip/gfx942/{k}.s"))).unwrap();
        std::fs::write(dir.join(format!("asm/{k}.s")), &asm).unwrap();
        toml.push_str(&format!(
            "[[kernel]]\nname = \"{k}\"\n\n[[kernel.source]]\nasm = \"asm/{k}.s\"\nsha256 = \"{}\"\n\
             targets = [\"gfx942\", \"gfx950\"]\n\n",
            gcn_patch::base::hash::sha256_hex(&asm)
        ));
    }
    std::fs::write(dir.join("kernels.toml"), toml).unwrap();
    dir.join("kernels.toml")
}

/// The jobs of [`project`].
const JOBS: usize = 4;

/// What one build did.
struct Outcome {
    result: Result<Vec<BuiltJob>, String>,
    assembled: usize,
    warning: Option<String>,
    stats: RemoteStats,
}

/// Build `manifest` with its state in `state` and the shared cache `url`
/// (`timeout` seconds per request), like gcn-build and `gcn-patch build`
/// do; `after_first_job` runs once, when the first job finishes.
fn build_with(
    manifest: &Path,
    state: &Path,
    url: Option<&str>,
    timeout: &str,
    after_first_job: Option<&(dyn Fn() + Sync)>,
) -> Outcome {
    let m = Manifest::load(manifest).unwrap_or_else(|e| panic!("{e}"));
    let config = EngineConfig {
        jobs: Some(2),
        shared_cache: url.map(PathBuf::from),
        state_dir: state.to_path_buf(),
        ..EngineConfig::default()
    };
    let env = |n: &str| match n {
        "GCN_BUILD_CACHE_TIMEOUT" => Some(timeout.to_string()),
        "GCN_BUILD_CACHE" | "GCN_BUILD_CACHE_DIR" | "GCN_BUILD_CACHE_READONLY" => None,
        _ => std::env::var(n).ok(),
    };
    let engine = Engine::new(&config, Some(&m), &env).unwrap_or_else(|e| panic!("{e}"));
    let first = std::sync::Once::new();
    let observer = |_: build::Progress<'_>| {
        if let Some(f) = after_first_job {
            first.call_once(f);
        }
    };
    let tokens = jobs::Unlimited;
    let plan = pipeline::plan_cached(&m, &[], 2, &tokens, Some(&engine.fingerprints))
        .unwrap_or_else(|e| panic!("{e}"));
    let result = build::build_all(&m, &plan, &engine.options(&tokens, Some(&observer)))
        .map_err(|e| e.to_string());
    engine.fingerprints.save();
    let assembled = result
        .as_ref()
        .map(|b| b.iter().filter(|j| j.cached.is_none()).count())
        .unwrap_or(0);
    let stats = match &engine.cache.shared {
        Some(Shared::Remote(r)) => r.stats(),
        _ => RemoteStats::default(),
    };
    Outcome {
        result,
        assembled,
        warning: engine.cache.warning(),
        stats,
    }
}

fn build(manifest: &Path, state: &Path, url: &str) -> Outcome {
    build_with(manifest, state, Some(url), "5", None)
}

/// The objects of a build, by kernel and target, each verified by the engine.
fn objects(o: &Outcome) -> Vec<(String, String, String)> {
    let built = o.result.as_ref().unwrap_or_else(|e| panic!("{e}"));
    built
        .iter()
        .map(|b| {
            let bytes = b.read().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(gcn_patch::base::hash::sha256_hex(&bytes), b.sha256);
            (b.kernel.clone(), b.target.name(), b.sha256.clone())
        })
        .collect()
}

#[test]
fn a_second_clone_builds_from_redis_with_no_assembler_run() {
    let redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let a = build(&manifest, &tmp.path().join("a"), &url);
    assert_eq!(a.assembled, JOBS, "{:?}", a.result.as_ref().err());
    assert_eq!(a.warning, None);
    assert!(a.stats.written >= JOBS, "{:?}", a.stats);
    let b = build(&manifest, &tmp.path().join("b"), &url);
    assert_eq!(b.assembled, 0, "the second clone ran the assembler");
    assert_eq!(b.warning, None);
    assert_eq!(objects(&a), objects(&b));
    // Objects and records live in their own namespaces.
    let keys = servers::resp_strings(&servers::redis_command(redis.port, &["KEYS", "*"]).unwrap());
    let objects_n = keys
        .iter()
        .filter(|k| k.contains("objects/") && k.ends_with(".hsaco"))
        .count();
    let records_n = keys
        .iter()
        .filter(|k| k.contains("records/") && k.ends_with(".job"))
        .count();
    assert_eq!((objects_n, records_n), (JOBS, JOBS), "{keys:?}");
    // A clone at another path (other record keys): the objects are found all the same.
    let c = build_with(
        &project(&tmp.path().join("q")),
        &tmp.path().join("c"),
        Some(&url),
        "5",
        None,
    );
    assert_eq!(c.assembled, 0);
}

#[test]
fn a_read_only_cache_is_read_and_never_written() {
    let redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let m = Manifest::load(&manifest).unwrap();
    let config = EngineConfig {
        jobs: Some(2),
        shared_cache: Some(PathBuf::from(&url)),
        state_dir: tmp.path().join("a"),
        ..EngineConfig::default()
    };
    let env = |n: &str| match n {
        "GCN_BUILD_CACHE_READONLY" => Some("1".to_string()),
        _ => std::env::var(n).ok(),
    };
    let engine = Engine::new(&config, Some(&m), &env).unwrap();
    let plan = pipeline::plan(&m, &[]).unwrap();
    let built = build::build_all(&m, &plan, &engine.options(&jobs::Unlimited, None)).unwrap();
    engine.fingerprints.save();
    assert_eq!(built.len(), JOBS);
    let keys = servers::redis_command(redis.port, &["DBSIZE"]).unwrap();
    assert_eq!(keys, b":0\r\n", "a read-only build wrote to the cache");
}

#[test]
fn a_second_clone_builds_from_webdav_with_no_assembler_run_and_a_damaged_entry_is_rebuilt() {
    let dav = servers::webdav();
    let url = format!("webdav+http://127.0.0.1:{}/team/cache", dav.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let a = build(&manifest, &tmp.path().join("a"), &url);
    assert_eq!(
        a.assembled,
        JOBS,
        "{:?} {:?}",
        a.result.as_ref().err(),
        a.warning
    );
    assert_eq!(a.warning, None);
    let root = dav.dir.path().join("dav/team/cache");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join("objects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), JOBS);
    assert_eq!(
        std::fs::read_dir(root.join("records")).unwrap().count(),
        JOBS + 2
    );
    let b = build(&manifest, &tmp.path().join("b"), &url);
    assert_eq!((b.assembled, b.warning.as_deref()), (0, None));
    assert_eq!(objects(&a), objects(&b));
    // One entry truncated, one with a flipped byte: misses, rebuilt, overwritten.
    let whole = std::fs::read(&entries[0]).unwrap();
    std::fs::write(&entries[0], &whole[..whole.len() / 2]).unwrap();
    let mut flipped = std::fs::read(&entries[1]).unwrap();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x55;
    std::fs::write(&entries[1], &flipped).unwrap();
    let c = build(&manifest, &tmp.path().join("c"), &url);
    assert_eq!(c.assembled, 2, "the two damaged entries are rebuilt");
    assert!(c.stats.corrupt >= 2, "{:?}", c.stats);
    assert_eq!(objects(&a), objects(&c));
    assert_eq!(
        std::fs::read(&entries[0]).unwrap(),
        whole,
        "not overwritten"
    );
    let d = build(&manifest, &tmp.path().join("d"), &url);
    assert_eq!((d.assembled, d.stats.corrupt), (0, 0));
}

#[test]
fn a_corrupt_redis_entry_is_detected_rebuilt_and_overwritten() {
    let redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    assert_eq!(
        build(&manifest, &tmp.path().join("a"), &url).assembled,
        JOBS
    );
    let keys = servers::resp_strings(&servers::redis_command(redis.port, &["KEYS", "*"]).unwrap());
    let mut objects_k: Vec<&String> = keys.iter().filter(|k| k.ends_with(".hsaco")).collect();
    objects_k.sort();
    // A byte changed in the middle of one object, another one truncated.
    let r = servers::redis_command(redis.port, &["SETRANGE", objects_k[0], "200", "X"]).unwrap();
    assert!(r.starts_with(b":"), "{}", String::from_utf8_lossy(&r));
    let r = servers::redis_command(
        redis.port,
        &[
            "EVAL",
            "return redis.call('SET', KEYS[1], string.sub(redis.call('GET', KEYS[1]), 1, 100))",
            "1",
            objects_k[1],
        ],
    )
    .unwrap();
    assert!(r.starts_with(b"+OK"), "{}", String::from_utf8_lossy(&r));
    let b = build(&manifest, &tmp.path().join("b"), &url);
    assert_eq!(b.assembled, 2, "{:?}", b.stats);
    assert!(b.stats.corrupt >= 2, "{:?}", b.stats);
    assert_eq!(b.warning, None, "a damaged entry is a miss, not a failure");
    let c = build(&manifest, &tmp.path().join("c"), &url);
    assert_eq!((c.assembled, c.stats.corrupt), (0, 0), "overwritten");
}

#[test]
fn a_server_killed_mid_build_costs_a_warning_and_the_build_completes() {
    let mut redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let redis_cell = std::sync::Mutex::new(&mut redis);
    let kill = || redis_cell.lock().unwrap().kill();
    let a = build_with(
        &manifest,
        &tmp.path().join("a"),
        Some(&url),
        "5",
        Some(&kill),
    );
    assert_eq!(objects(&a).len(), JOBS, "the build completes");
    assert_eq!(a.assembled, JOBS);
    let w = a.warning.expect("one warning");
    assert!(w.contains("not used for the rest of this build"), "{w}");
    assert!(a.stats.failures >= 1, "{:?}", a.stats);
    // No retry storm: after the first failure, at most the requests then in flight fail.
    assert!(a.stats.failures <= 2, "{:?}", a.stats);
}

#[test]
fn a_server_that_never_answers_costs_at_most_the_timeout() {
    use gcn_patch::pipeline::cache::Space;
    let port = servers::silent_listener();
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    for url in [
        format!("redis://127.0.0.1:{port}"),
        format!("webdav+http://127.0.0.1:{port}/c"),
    ] {
        // One request: the timeout (1 s), then the cache is off: every later
        // request returns at once (no retry).
        let env = |n: &str| (n == "GCN_BUILD_CACHE_TIMEOUT").then(|| "1".to_string());
        let shared = Shared::configure(Some(&url), &env).unwrap().unwrap();
        let start = Instant::now();
        assert_eq!(shared.read(Space::Objects, "k.hsaco"), None);
        let first = start.elapsed();
        assert!(
            first >= Duration::from_millis(900) && first < Duration::from_millis(2500),
            "{url}: the first request took {first:?}"
        );
        let start = Instant::now();
        for i in 0..100 {
            assert_eq!(shared.read(Space::Records, &format!("{i}.job")), None);
            shared.write(Space::Objects, &format!("{i}.hsaco"), b"x");
        }
        assert!(
            start.elapsed() < Duration::from_millis(500),
            "{url}: retried"
        );
        let w = shared.warning().expect("one warning");
        assert!(w.contains("no answer within 1s"), "{w}");
        // A whole build against it completes, with that warning.
        let state = tmp.path().join(format!("s{}", url.len()));
        let o = build_with(&manifest, &state, Some(&url), "1", None);
        assert_eq!(objects(&o).len(), JOBS, "{url}");
        assert_eq!(o.assembled, JOBS);
        assert!(o
            .warning
            .expect("one warning")
            .contains("no answer within 1s"));
        assert!(o.stats.failures <= 2, "{:?}", o.stats);
    }
}

#[test]
fn two_clones_building_at_once_into_one_cache_leave_no_torn_entry() {
    let redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| build(&manifest, &tmp.path().join("a"), &url));
        let b = s.spawn(|| build(&manifest, &tmp.path().join("b"), &url));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(objects(&a), objects(&b));
    assert_eq!((&a.warning, &b.warning), (&None, &None));
    // Every entry there reads back whole: a third clone takes all from the
    // cache, with no damaged entry.
    let c = build(&manifest, &tmp.path().join("c"), &url);
    assert_eq!((c.assembled, c.stats.corrupt), (0, 0), "{:?}", c.stats);
    assert_eq!(objects(&a), objects(&c));
    let keys = servers::resp_strings(&servers::redis_command(redis.port, &["KEYS", "*"]).unwrap());
    for k in keys {
        let r = servers::redis_command(redis.port, &["GET", &k]).unwrap();
        // `$<len>\r\n<frame>\r\n`
        let start = r.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
        let frame = &r[start..r.len() - 2];
        assert!(
            gcn_patch::pipeline::remote::unframe(frame).is_some(),
            "torn entry {k}"
        );
    }
}

/// `gcn-patch build` and `check` use the same backend as gcn-build: a fresh
/// output directory builds every object from the Redis another build
/// filled; with the server gone, both still succeed and say so once.
#[test]
fn gcn_patch_build_and_check_share_the_backend_and_warn_once_when_it_is_gone() {
    let mut redis = servers::redis();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let tmp = tempfile::tempdir().unwrap();
    let manifest = project(&tmp.path().join("p"));
    let dir = manifest.parent().unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
            .args(args)
            .current_dir(dir)
            .env("GCN_BUILD_CACHE", &url)
            .env("GCN_BUILD_CACHE_TIMEOUT", "2")
            .env_remove("GCN_BUILD_CACHE_DIR")
            .env_remove("GCN_BUILD_CACHE_READONLY")
            .output()
            .unwrap();
        let (out, err) = (common::stdout(&o), common::stderr(&o));
        assert!(o.status.success(), "{args:?}: {out}\n{err}");
        (out, err)
    };
    let (out, _) = run(&["build", "--out", "one"]);
    assert_eq!(out.matches(" assembled ").count(), JOBS, "{out}");
    let (out, err) = run(&["build", "--out", "two"]);
    assert_eq!(out.matches(" shared-cache ").count(), JOBS, "{out}");
    assert!(!err.contains("warning: the shared cache"), "{err}");
    redis.kill();
    for args in [&["build", "--out", "three"][..], &["check"][..]] {
        let (_, err) = run(args);
        assert_eq!(
            err.matches("warning: the shared cache").count(),
            1,
            "{args:?}: {err}"
        );
    }
}
