//! The shared cache on remote storage, through Apache OpenDAL (feature
//! `remote-cache`): Redis, WebDAV, S3 and the GitHub Actions cache,
//! configured as sccache users expect ([`RemoteCache::from_url`]).
//!
//! OpenDAL is asynchronous; the cache layer is not. A [`RemoteCache`] owns a
//! small tokio runtime (one worker thread) and every request is a
//! `block_on` from the calling job's thread, bounded by a per-request
//! timeout ([`ENV_CACHE_TIMEOUT`], default [`DEFAULT_TIMEOUT`]) and by
//! [`MAX_REQUESTS`] requests in flight.
//!
//! **Entries.** Objects are stored under `objects/<key>.hsaco`, job records
//! under `records/<name>`, each framed as `gcn-cache-v1 <sha256 of the
//! payload>\n<payload>`. A read whose frame or hash does not match (a
//! truncated or corrupt entry) is a miss: the job builds and writes the
//! entry again. Entries are named by their content's inputs and written in
//! one request (a Redis `SET`, an HTTP `PUT`), and a reader checks the hash,
//! so concurrent writers of one key can never make a reader use a torn
//! entry.
//!
//! **Failure never breaks a build.** A request that fails or times out
//! (anything but "not found") disables the remote cache for the rest of the
//! process: one warning ([`RemoteCache::warning`]), no retry, and the build
//! goes on with the local cache and the tools.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use opendal::{services, ErrorKind, Operator};

/// Environment variable: seconds each remote request may take (default [`DEFAULT_TIMEOUT`]).
pub const ENV_CACHE_TIMEOUT: &str = "GCN_BUILD_CACHE_TIMEOUT";
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Requests in flight at once, per process.
pub const MAX_REQUESTS: usize = 8;
/// WebDAV credentials: user name, password, bearer token.
pub const ENV_WEBDAV_USERNAME: &str = "GCN_BUILD_CACHE_WEBDAV_USERNAME";
/// See [`ENV_WEBDAV_USERNAME`].
pub const ENV_WEBDAV_PASSWORD: &str = "GCN_BUILD_CACHE_WEBDAV_PASSWORD";
/// See [`ENV_WEBDAV_USERNAME`].
pub const ENV_WEBDAV_TOKEN: &str = "GCN_BUILD_CACHE_WEBDAV_TOKEN";
/// The AWS variables an `s3://` cache reads.
pub const AWS_VARIABLES: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
];
/// The GitHub Actions variables a `ghac` cache reads.
pub const GHAC_VARIABLES: &[&str] = &[
    "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_RUNTIME_TOKEN",
];

/// The frame's first word: bump when the layout changes.
const MAGIC: &str = "gcn-cache-v1";

/// What a remote cache did in this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Entries read and verified.
    pub hits: usize,
    /// Entries not there.
    pub misses: usize,
    /// Entries there whose frame or hash did not match (treated as misses).
    pub corrupt: usize,
    /// Entries written.
    pub written: usize,
    /// Requests that failed or timed out (at most a few: the first disables the cache).
    pub failures: usize,
}

/// A shared cache on remote storage (see the module docs).
pub struct RemoteCache {
    /// The configuration as given, credentials left out: shown in messages.
    shown: String,
    op: Operator,
    runtime: tokio::runtime::Runtime,
    slots: tokio::sync::Semaphore,
    timeout: Duration,
    read_only: bool,
    broken: AtomicBool,
    warning: OnceLock<String>,
    counts: [AtomicUsize; 5],
}

impl std::fmt::Debug for RemoteCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCache")
            .field("url", &self.shown)
            .field("timeout", &self.timeout)
            .field("read_only", &self.read_only)
            .field("broken", &self.broken.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Whether `spec` names a remote cache (a scheme [`RemoteCache::from_url`] knows).
pub fn is_remote(spec: &str) -> bool {
    let s = spec.trim();
    s == "ghac"
        || [
            "redis://",
            "rediss://",
            "webdav+http://",
            "webdav+https://",
            "s3://",
            "ghac://",
        ]
        .iter()
        .any(|p| s.starts_with(p))
}

impl RemoteCache {
    /// The remote cache `url` names, reading credentials and settings
    /// through `env` (gcn-build's one reader): `redis://[user:pass@]host:port[/db]`
    /// (`rediss://` for TLS), `webdav+http://host:port/path` or
    /// `webdav+https://…` (credentials [`ENV_WEBDAV_USERNAME`] and the
    /// like), `s3://bucket/prefix` ([`AWS_VARIABLES`]), `ghac`
    /// ([`GHAC_VARIABLES`]). An error says what is wrong with the
    /// configuration; nothing is contacted here.
    pub fn from_url(
        url: &str,
        read_only: bool,
        timeout: Duration,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<RemoteCache, String> {
        let url = url.trim();
        // TLS (rediss, https) needs a crypto provider before any client is
        // made; ring is the one built in (a provider installed already stays).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let var = |n: &str| env(n).filter(|v| !v.is_empty());
        let (scheme, rest) = url.split_once("://").unwrap_or((url, ""));
        let (op, shown) = match scheme {
            "redis" | "rediss" => {
                let (auth, hostpath) = split_auth(rest);
                let (host, path) = hostpath.split_once('/').unwrap_or((hostpath, ""));
                if host.is_empty() {
                    return Err(format!(
                        "`{url}` names no host: write `{scheme}://HOST:PORT[/DB]`"
                    ));
                }
                let mut b = services::Redis::default()
                    .endpoint(&format!("{scheme}://{host}"))
                    .root("/gcn-build/");
                let db = path.trim_matches('/');
                if !db.is_empty() {
                    let n: i64 = db.parse().map_err(|_| {
                        format!("`{url}`: the path `/{db}` is not a database number: write `{scheme}://HOST:PORT/0`")
                    })?;
                    b = b.db(n);
                }
                if let Some((user, pass)) = auth {
                    if !user.is_empty() {
                        b = b.username(user);
                    }
                    if let Some(p) = pass {
                        b = b.password(p);
                    }
                }
                (build(b)?, format!("{scheme}://{host}/{db}"))
            }
            "webdav+http" | "webdav+https" => {
                let http = &scheme["webdav+".len()..];
                let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
                if host.is_empty() {
                    return Err(format!(
                        "`{url}` names no host: write `{scheme}://HOST:PORT/PATH`"
                    ));
                }
                // Parent collections are not created (MKCOL needs PROPFIND to
                // check them): the server creates them on PUT (nginx:
                // `create_full_put_path on`, as bazel-remote does).
                let mut b = services::Webdav::default()
                    .endpoint(&format!("{http}://{host}"))
                    .root(&format!("/{}/", path.trim_matches('/')))
                    .disable_create_dir(true);
                if let Some(u) = var(ENV_WEBDAV_USERNAME) {
                    b = b.username(&u);
                }
                if let Some(p) = var(ENV_WEBDAV_PASSWORD) {
                    b = b.password(&p);
                }
                if let Some(t) = var(ENV_WEBDAV_TOKEN) {
                    b = b.token(&t);
                }
                (
                    build(b)?,
                    format!("{http}://{host}/{}", path.trim_matches('/')),
                )
            }
            "s3" => {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err(format!(
                        "`{url}` names no bucket: write `s3://BUCKET/PREFIX`"
                    ));
                }
                let region = var("AWS_REGION")
                    .or_else(|| var("AWS_DEFAULT_REGION"))
                    .unwrap_or_else(|| "us-east-1".into());
                let mut b = services::S3::default()
                    .bucket(bucket)
                    .root(&format!("/{}/", prefix.trim_matches('/')))
                    .region(&region);
                if let Some(e) = var("AWS_ENDPOINT_URL") {
                    b = b.endpoint(&e);
                }
                if let (Some(id), Some(secret)) =
                    (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY"))
                {
                    b = b
                        .access_key_id(&id)
                        .secret_access_key(&secret)
                        .disable_config_load();
                    if let Some(t) = var("AWS_SESSION_TOKEN") {
                        b = b.session_token(&t);
                    }
                }
                (
                    build(b)?,
                    format!("s3://{bucket}/{}", prefix.trim_matches('/')),
                )
            }
            "ghac" => {
                let mut b = services::Ghac::default()
                    .root("/gcn-build/")
                    .version("gcn-build-v1");
                if let Some(e) = var("ACTIONS_CACHE_URL").or_else(|| var("ACTIONS_RESULTS_URL")) {
                    b = b.endpoint(&e);
                }
                if let Some(t) = var("ACTIONS_RUNTIME_TOKEN") {
                    b = b.runtime_token(&t);
                }
                (build(b)?, "ghac".to_string())
            }
            _ => {
                return Err(format!(
                    "`{url}` is not a shared cache: write a directory, `redis://HOST:PORT`, \
                     `webdav+https://HOST/PATH`, `s3://BUCKET/PREFIX` or `ghac`"
                ))
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gcn-cache")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the remote cache's runtime: {e}"))?;
        Ok(RemoteCache {
            shown,
            op,
            runtime,
            slots: tokio::sync::Semaphore::new(MAX_REQUESTS),
            timeout,
            read_only,
            broken: AtomicBool::new(false),
            warning: OnceLock::new(),
            counts: Default::default(),
        })
    }

    /// The cache as shown in messages (no credentials).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether nothing is written ([`ENV_CACHE_READONLY`](super::cache::ENV_CACHE_READONLY)).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The one warning of a failed request, if any failed.
    pub fn warning(&self) -> Option<&str> {
        self.warning.get().map(String::as_str)
    }

    /// What this cache did so far.
    pub fn stats(&self) -> RemoteStats {
        let c = |i: usize| self.counts[i].load(Ordering::Relaxed);
        RemoteStats {
            hits: c(0),
            misses: c(1),
            corrupt: c(2),
            written: c(3),
            failures: c(4),
        }
    }

    fn count(&self, i: usize) {
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The entry at `path` (under the cache's root), verified: `None` when
    /// missing, corrupt, or the cache failed (now or earlier).
    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        if self.broken.load(Ordering::Relaxed) {
            return None;
        }
        match self.request(self.op.read(path)) {
            Ok(buf) => match unframe(&buf.to_vec()) {
                Some(payload) => {
                    self.count(0);
                    Some(payload)
                }
                None => {
                    self.count(2);
                    None
                }
            },
            Err(Failure::Error(e)) if e.kind() == ErrorKind::NotFound => {
                self.count(1);
                None
            }
            Err(f) => {
                self.fail("read", path, f);
                None
            }
        }
    }

    /// Store `bytes` as the entry at `path` (replacing a corrupt one),
    /// unless read-only or failed. Errors only disable the cache.
    pub fn write(&self, path: &str, bytes: &[u8]) {
        if self.read_only || self.broken.load(Ordering::Relaxed) {
            return;
        }
        let framed = frame(bytes);
        match self.request(self.op.write(path, framed)) {
            Ok(_) => self.count(3),
            // Immutable stores (the GitHub Actions cache) refuse a second
            // writer of a key: the entry is there.
            Err(Failure::Error(e))
                if matches!(
                    e.kind(),
                    ErrorKind::AlreadyExists | ErrorKind::ConditionNotMatch
                ) => {}
            Err(f) => self.fail("write", path, f),
        }
    }

    /// Run one request: a slot, then the request under the timeout.
    fn request<T>(
        &self,
        fut: impl std::future::Future<Output = opendal::Result<T>>,
    ) -> Result<T, Failure> {
        self.runtime.block_on(async {
            let _slot = self.slots.acquire().await;
            match tokio::time::timeout(self.timeout, fut).await {
                Ok(r) => r.map_err(Failure::Error),
                Err(_) => Err(Failure::Timeout),
            }
        })
    }

    fn fail(&self, what: &str, path: &str, f: Failure) {
        self.count(4);
        if !self.broken.swap(true, Ordering::SeqCst) {
            let why = match f {
                Failure::Timeout => format!("no answer within {:?}", self.timeout),
                Failure::Error(e) => e.to_string(),
            };
            let _ = self.warning.set(format!(
                "the shared cache `{}` failed to {what} `{path}` ({why}): not used for the rest of \
                 this build, which goes on with the local cache (set {} to change the timeout)",
                self.shown, ENV_CACHE_TIMEOUT
            ));
        }
    }
}

enum Failure {
    Timeout,
    Error(opendal::Error),
}

/// `user[:pass]@` of a URL's authority, and the rest.
fn split_auth(rest: &str) -> (Option<(&str, Option<&str>)>, &str) {
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let auth = &rest[..at];
            let (user, pass) = match auth.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (auth, None),
            };
            (Some((user, pass)), &rest[at + 1..])
        }
        None => (None, rest),
    }
}

fn build(b: impl opendal::Builder) -> Result<Operator, String> {
    Operator::new(b)
        .map(|o| o.finish())
        .map_err(|e| format!("the shared cache's configuration is invalid: {e}"))
}

/// `bytes` framed with their hash (see the module docs).
pub fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 80);
    out.extend_from_slice(MAGIC.as_bytes());
    out.push(b' ');
    out.extend_from_slice(crate::base::hash::sha256_hex(bytes).as_bytes());
    out.push(b'\n');
    out.extend_from_slice(bytes);
    out
}

/// The payload of a framed entry whose hash matches, else `None`.
pub fn unframe(framed: &[u8]) -> Option<Vec<u8>> {
    let head = MAGIC.len() + 1 + 64 + 1;
    if framed.len() < head
        || !framed.starts_with(MAGIC.as_bytes())
        || framed[MAGIC.len()] != b' '
        || framed[head - 1] != b'\n'
    {
        return None;
    }
    let want = std::str::from_utf8(&framed[MAGIC.len() + 1..head - 1]).ok()?;
    let payload = &framed[head..];
    (crate::base::hash::sha256_hex(payload) == want).then(|| payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_detected() {
        let f = frame(b"payload");
        assert_eq!(unframe(&f).as_deref(), Some(&b"payload"[..]));
        assert_eq!(unframe(&f[..f.len() - 1]), None, "truncated");
        let mut bad = f.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(unframe(&bad), None, "flipped bit");
        assert_eq!(unframe(b"junk"), None);
        assert_eq!(unframe(&frame(b"")).as_deref(), Some(&b""[..]));
    }

    #[test]
    fn urls_are_recognized_and_bad_ones_say_how_to_fix_them() {
        assert!(is_remote("redis://127.0.0.1:6379"));
        assert!(is_remote("webdav+https://h/p"));
        assert!(is_remote("s3://b/p"));
        assert!(is_remote("ghac"));
        assert!(!is_remote("/some/dir"));
        let none = |_: &str| None;
        let t = Duration::from_secs(1);
        let r = RemoteCache::from_url("redis://u:secret@127.0.0.1:1/3", false, t, &none).unwrap();
        assert_eq!(r.shown(), "redis://127.0.0.1:1/3");
        let e = RemoteCache::from_url("redis://127.0.0.1:1/x", false, t, &none).unwrap_err();
        assert!(e.contains("not a database number"), "{e}");
        let e = RemoteCache::from_url("s3:///p", false, t, &none).unwrap_err();
        assert!(e.contains("names no bucket"), "{e}");
        let w = RemoteCache::from_url("webdav+http://h:8/a/b/", true, t, &none).unwrap();
        assert_eq!(w.shown(), "http://h:8/a/b");
        assert!(w.read_only());
        assert_eq!(split_auth("a:b@h:1/x"), (Some(("a", Some("b"))), "h:1/x"));
        assert_eq!(split_auth("h:1/x@y"), (None, "h:1/x@y"));
    }
}
