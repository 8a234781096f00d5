//! Real servers for the shared cache's tests, started and stopped by the
//! tests themselves on random free loopback ports with temp directories:
//! `redis-server`, nginx with its WebDAV module, and a TCP listener that
//! accepts connections and never answers. Standard library only.
//!
//! A missing server binary fails the test with how to install it
//! (`bash tests/setup.sh` installs both).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How to install the servers.
pub const SERVERS_INSTALL: &str = "install the test servers: `apt-get install -y redis-server nginx-light` (nginx with its dav module; or run `bash tests/setup.sh`)";

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind a free loopback port")
}

/// `name` on `PATH` or in the sbin directories (nginx lives in /usr/sbin).
fn find(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found. {SERVERS_INSTALL}"))
}

/// Wait until `ready` holds (at most 10 s), else panic with the server's log.
fn wait_until(what: &str, log: &Path, ready: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "{what} did not start within 10 s; its log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// A server process, killed when dropped.
pub struct Server {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its temp directory (data, configuration, log).
    pub dir: tempfile_dir::Dir,
}

impl Server {
    /// Kill the server now (as a crash would: SIGKILL) and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `redis-server` on a free port, no persistence, data in a temp directory.
pub fn redis() -> Server {
    let bin = find("redis-server");
    let port = free_port();
    let dir = tempfile_dir::Dir::new("redis");
    let log = dir.path().join("redis.log");
    let child = Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir.path())
        .arg("--logfile")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start redis-server");
    let server = Server {
        child: Some(child),
        port,
        dir,
    };
    wait_until("redis-server", &log, || {
        redis_command(port, &["PING"]).is_some_and(|r| r.starts_with(b"+PONG"))
    });
    server
}

/// Send one command to the Redis at `port` and read its reply (raw RESP,
/// at most 1 MiB, until the reply is complete or 2 s pass).
pub fn redis_command(port: u16, args: &[&str]) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut req = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        req.extend_from_slice(a.as_bytes());
        req.extend_from_slice(b"\r\n");
    }
    s.write_all(&req).ok()?;
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
        if resp_complete(&out) || out.len() > (1 << 20) {
            break;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Whether `r` holds one whole RESP reply (simple, error, integer, bulk or
/// an array of bulk strings).
fn resp_complete(r: &[u8]) -> bool {
    resp_end(r, 0).is_some()
}

fn resp_end(r: &[u8], at: usize) -> Option<usize> {
    let line_end = at + r.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
    let head = std::str::from_utf8(&r[at + 1..line_end]).ok()?;
    match r.get(at)? {
        b'+' | b'-' | b':' => Some(line_end + 2),
        b'$' => {
            let n: i64 = head.parse().ok()?;
            if n < 0 {
                return Some(line_end + 2);
            }
            let end = line_end + 2 + n as usize + 2;
            (r.len() >= end).then_some(end)
        }
        b'*' => {
            let n: i64 = head.parse().ok()?;
            let mut pos = line_end + 2;
            for _ in 0..n.max(0) {
                pos = resp_end(r, pos)?;
            }
            Some(pos)
        }
        _ => None,
    }
}

/// The bulk strings of a RESP array reply (`KEYS`).
pub fn resp_strings(r: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(r);
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut out = Vec::new();
    let mut i = 1;
    while i + 1 < lines.len() {
        if lines[i].starts_with('$') {
            out.push(lines[i + 1].to_string());
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

/// nginx with its WebDAV module (PUT, DELETE, MKCOL; parent directories
/// created on PUT) serving a temp directory on a free port. Entries live
/// under `dir/dav/`.
pub fn webdav() -> Server {
    let bin = find("nginx");
    let port = free_port();
    let dir = tempfile_dir::Dir::new("nginx");
    let p = &dir.path().to_path_buf();
    for sub in ["dav", "tmp", "proxy", "fastcgi", "uwsgi", "scgi"] {
        std::fs::create_dir_all(p.join(sub)).unwrap();
    }
    let log = p.join("error.log");
    // One process (`master_process off`), so that killing it leaves no
    // worker behind. `user root` keeps a root nginx able to write the
    // (root-owned) temp directory; other users ignore it.
    let user = if is_root() { "user root;\n" } else { "" };
    let conf = format!(
        "daemon off;\nmaster_process off;\n{user}pid {p}/nginx.pid;\nerror_log {p}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {p}/tmp;\n  proxy_temp_path {p}/proxy;\n\
           fastcgi_temp_path {p}/fastcgi;\n  uwsgi_temp_path {p}/uwsgi;\n  scgi_temp_path {p}/scgi;\n\
           server {{\n    listen 127.0.0.1:{port};\n    root {p}/dav;\n    client_max_body_size 0;\n\
             location / {{\n      dav_methods PUT DELETE MKCOL COPY MOVE;\n      create_full_put_path on;\n\
               dav_access user:rw;\n    }}\n  }}\n}}\n",
        p = p.display()
    );
    std::fs::write(p.join("nginx.conf"), conf).unwrap();
    let child = Command::new(bin)
        .arg("-p")
        .arg(p)
        .arg("-c")
        .arg(p.join("nginx.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(p.join("stderr.log")).unwrap())
        .spawn()
        .expect("start nginx");
    let server = Server {
        child: Some(child),
        port,
        dir,
    };
    let stderr = p.join("stderr.log");
    let both = || {
        let mut t = std::fs::read_to_string(&log).unwrap_or_default();
        t.push_str(&std::fs::read_to_string(&stderr).unwrap_or_default());
        t
    };
    let check = p.join("check.log");
    wait_until("nginx", &check, || {
        let _ = std::fs::write(&check, both());
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    server
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// A TCP listener that accepts every connection and never answers (nor
/// closes): a server that hangs. Its thread holds the connections until
/// the process ends.
pub fn silent_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
            if held.len() > 256 {
                break;
            }
        }
        // Keep them open (never answered) until the test process exits.
        std::thread::sleep(Duration::from_secs(3600));
        drop(held);
    });
    port
}

/// A temp directory removed on drop (no dependency on the tempfile crate).
pub mod tempfile_dir {
    use std::path::{Path, PathBuf};

    /// The directory.
    pub struct Dir(PathBuf);

    impl Dir {
        /// A fresh directory under the system temp directory.
        pub fn new(tag: &str) -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "gcn-test-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).expect("create a temp directory");
            Dir(p)
        }

        /// Its path.
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
