//! `gcn-patch profile`'s report files: `--trace` (Chrome trace-event JSON)
//! checked against the report's cycles and stalls, `--html` rendered in a
//! real headless browser (Debian's chromium: screenshot pixels and the DOM
//! after its script ran), for a HIP kernel compiled with clang-22 and for
//! the demo's matmul patch (unpatched against patched).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::repo;
use serde_json::Value;

fn gcn_patch(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .arg("profile")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gcn-patch")
}

fn shown(o: &Output) -> String {
    format!(
        "{}{}exit {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        o.status.code().unwrap_or(-1)
    )
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// barrier.hip's `early_exit` with every wave at the barrier, on a grid
/// of many CU rounds (so the round holds several workgroups): the report
/// and the trace.
fn early_exit(d: &Path, extra: &[&str]) -> Value {
    let src = repo().join("gcn-emu/tests/kernels/barrier.hip");
    common::compile_hip(&src, "gfx942", &d.join("barrier.hsaco"), &[]);
    let mut args = vec![
        "barrier.hsaco",
        "--kernel",
        "early_exit",
        "--grid",
        "9728",
        "--block",
        "256",
        "--arg",
        "out:f32:256",
        "--arg",
        "u32:256",
        "--device",
        "mi300x",
        "--json",
        "r.json",
    ];
    args.extend_from_slice(extra);
    let o = gcn_patch(d, &args);
    assert!(o.status.success(), "{}", shown(&o));
    read_json(&d.join("r.json"))
}

/// The `X` slices of a trace by (pid, tid), and the checks every trace
/// must pass: metadata names every process and thread, each slice's `ts`
/// and `dur` are its cycles at the clock, a wave's slices do not overlap.
fn slices(trace: &Value) -> BTreeMap<(u64, u64), Vec<&Value>> {
    let clock = trace["otherData"]["clock_mhz"].as_f64().unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let mut named_p = BTreeSet::new();
    let mut named_t = BTreeSet::new();
    let mut by: BTreeMap<(u64, u64), Vec<&Value>> = BTreeMap::new();
    for e in events {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        match e["ph"].as_str().unwrap() {
            "M" => match e["name"].as_str().unwrap() {
                "process_name" => {
                    named_p.insert(pid);
                }
                "thread_name" => {
                    named_t.insert((pid, tid));
                }
                _ => {}
            },
            "X" => {
                let (s, t) = (
                    e["args"]["start_cycle"].as_u64().unwrap(),
                    e["args"]["end_cycle"].as_u64().unwrap(),
                );
                assert!(t > s, "{e}");
                // µs at the clock, in whole ns.
                let ts = e["ts"].as_f64().unwrap();
                let dur = e["dur"].as_f64().unwrap();
                assert!((ts - s as f64 / clock).abs() < 0.6e-3, "{e}");
                assert!((ts + dur - t as f64 / clock).abs() < 0.6e-3, "{e}");
                assert!(matches!(e["cat"].as_str(), Some("issue" | "stall")), "{e}");
                by.entry((pid, tid)).or_default().push(e);
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    for ((pid, tid), v) in &mut by {
        assert!(named_p.contains(pid), "pid {pid} has no process_name");
        assert!(
            named_t.contains(&(*pid, *tid)),
            "{pid}/{tid} has no thread_name"
        );
        v.sort_by_key(|e| e["args"]["start_cycle"].as_u64().unwrap());
        // Perfetto reads ts and dur as µs and rounds them to ns
        // (json_utils.h, CoerceToTs: llround(µs × 1000)).
        let ns = |e: &Value, k: &str| (e[k].as_f64().unwrap() * 1000.0).round() as i64;
        for w in v.windows(2) {
            assert!(
                w[0]["args"]["end_cycle"].as_u64() <= w[1]["args"]["start_cycle"].as_u64(),
                "overlapping slices of wave {pid}/{tid}: {} and {}",
                w[0],
                w[1]
            );
            assert!(
                ns(w[0], "ts") + ns(w[0], "dur") <= ns(w[1], "ts"),
                "slices of wave {pid}/{tid} overlap in ns: {} and {}",
                w[0],
                w[1]
            );
        }
    }
    by
}

fn end(v: &[&Value]) -> u64 {
    v.iter()
        .map(|e| e["args"]["end_cycle"].as_u64().unwrap())
        .max()
        .unwrap_or(0)
}

fn cycles(e: &Value) -> u64 {
    e["args"]["end_cycle"].as_u64().unwrap() - e["args"]["start_cycle"].as_u64().unwrap()
}

/// The stall cycles of a set of slices, by reason and by address.
fn stall_sums(v: &[&Value]) -> (BTreeMap<String, u64>, BTreeMap<u64, u64>) {
    let (mut by_reason, mut by_addr) = (BTreeMap::new(), BTreeMap::new());
    for e in v.iter().filter(|e| e["cat"] == "stall") {
        *by_reason
            .entry(e["name"].as_str().unwrap().to_string())
            .or_default() += cycles(e);
        let a = e["args"]["address"].as_str().unwrap();
        *by_addr
            .entry(u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap())
            .or_default() += cycles(e);
    }
    (by_reason, by_addr)
}

/// The report's stalls by reason and by address.
fn report_stalls(r: &Value) -> (BTreeMap<String, u64>, BTreeMap<u64, u64>) {
    let by_reason = r["stalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["reason"].as_str().unwrap().to_string(),
                s["cycles"].as_u64().unwrap(),
            )
        })
        .collect();
    let by_addr = r["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let s: u64 = l["stall_cycles"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            (l["address"].as_u64().unwrap(), s)
        })
        .filter(|(_, s)| *s > 0)
        .collect();
    (by_reason, by_addr)
}

/// The structure of a trace, for a snapshot: the top-level keys, and per
/// event phase and category the keys and their JSON types, and the args'.
fn schema(trace: &Value) -> String {
    let ty = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut kinds: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        let kind = format!(
            "ph {} {}",
            e["ph"].as_str().unwrap(),
            e.get("cat").and_then(|c| c.as_str()).map_or_else(
                || e["name"].as_str().unwrap().to_string(),
                |c| format!("cat {c}")
            )
        );
        let set = kinds.entry(kind).or_default();
        for (k, v) in e.as_object().unwrap() {
            // `dur` and `ts` are numbers that may happen to be whole.
            let t = if matches!(k.as_str(), "ts" | "dur") {
                "number"
            } else {
                ty(v)
            };
            set.insert(format!("{k}: {t}"));
            if let Value::Object(args) = v {
                for (a, x) in args {
                    set.insert(format!("{k}.{a}: {}", ty(x)));
                }
            }
        }
    }
    let mut s = String::new();
    let top: Vec<&String> = trace.as_object().unwrap().keys().collect();
    s += &format!("top: {top:?}\n");
    let other: Vec<&String> = trace["otherData"].as_object().unwrap().keys().collect();
    s += &format!("otherData: {other:?}\n");
    for (k, v) in kinds {
        s += &format!("{k}\n");
        for f in v {
            s += &format!("  {f}\n");
        }
    }
    s
}

#[test]
fn trace_is_chrome_json_consistent_with_the_reported_cycles() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let r = early_exit(d, &["--trace", "t.json"]);
    let trace = read_json(&d.join("t.json"));
    insta::assert_snapshot!("trace_schema", schema(&trace));
    let by = slices(&trace);
    // A process per workgroup of the round, a thread per wave (4 per
    // workgroup of 256).
    let pids: BTreeSet<u64> = by.keys().map(|k| k.0).collect();
    let round = r["round_workgroups"].as_u64().unwrap();
    assert!(
        round > 1,
        "the grid fills rounds of several workgroups: {round}"
    );
    assert_eq!(pids.len() as u64, round);
    assert_eq!(by.len() as u64, 4 * round);
    // The round's workgroups are the sampled ones: every executed
    // wave-instruction is one issue slice.
    assert_eq!(r["sampled"].as_u64(), Some(round));
    let all: Vec<&Value> = by.values().flatten().copied().collect();
    let issues = all.iter().filter(|e| e["cat"] == "issue").count() as u64;
    assert_eq!(issues, r["totals"]["executed"].as_u64().unwrap());
    // The last slice ends when the round does.
    assert_eq!(end(&all), r["cycles_per_round"].as_u64().unwrap());
    // Stall slices are the report's stall cycles, by reason and by line.
    let (reasons, lines) = stall_sums(&all);
    let (want_reasons, want_lines) = report_stalls(&r);
    assert_eq!(reasons, want_reasons);
    assert_eq!(lines, want_lines);
    assert!(reasons.contains_key("barrier"), "{reasons:?}");
}

/// Debian's chromium, or a failure that says how to install it.
fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(p) = which(name) {
            return p;
        }
    }
    panic!(
        "chromium is not installed: the --html tests render the page in it. Install it with \
         `apt-get install -y chromium` (Debian; tests/setup.sh does)"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

/// Run headless chromium on `page` with `args`, at most a minute; its
/// stdout.
fn headless(page: &Path, dir: &Path, args: &[String]) -> String {
    let profile = tempfile::tempdir_in(dir).unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// `page` rendered in one chromium run: the DOM after its script ran, and
/// an RGB screenshot (width, height, pixels).
fn render(page: &Path, dir: &Path, width: u32, height: u32) -> (String, u32, u32, Vec<[u8; 3]>) {
    let png_path = dir.join(format!(
        "{}.png",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let dom = headless(
        page,
        dir,
        &[
            "--dump-dom".to_string(),
            format!("--screenshot={}", png_path.display()),
            format!("--window-size={width},{height}"),
        ],
    );
    let file = std::io::BufReader::new(std::fs::File::open(&png_path).expect("a screenshot"));
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    assert!(step >= 3, "{:?}", info.color_type);
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (dom, info.width, info.height, px)
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Pixels of each colour of `colours`.
fn count(px: &[[u8; 3]], colours: &[&str]) -> Vec<usize> {
    colours
        .iter()
        .map(|c| {
            let want = rgb(c);
            px.iter().filter(|p| **p == want).count()
        })
        .collect()
}

/// The page's own checks: no network access (nothing loaded from
/// elsewhere), the DOM after the script ran.
fn check_page(html: &str, dom: &str, rows: usize) {
    for bad in ["<link", "src=", "http://", "https://", "@import", "url("] {
        assert!(
            !html.contains(bad),
            "the page is not self-contained: `{bad}`"
        );
    }
    assert!(dom.contains("data-js=\"ran\""), "the script did not run");
    assert_eq!(dom.matches("data-stall=").count(), rows, "listing rows");
    assert!(
        dom.contains(&format!("{rows} asm lines executed")),
        "the script's summary"
    );
}

#[test]
fn html_page_renders_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let r = early_exit(d, &["--html", "p.html", "--annotate", "p.txt"]);
    // A file that cannot be written: none is (not even the JSON before
    // it), exit 1, the file and the fix named.
    let o = gcn_patch(
        d,
        &[
            "barrier.hsaco",
            "--kernel",
            "early_exit",
            "--grid",
            "1",
            "--block",
            "256",
            "--arg",
            "out:f32:256",
            "--arg",
            "u32:256",
            "--device",
            "mi300x",
            "--json",
            "never.json",
            "--html",
            "missing/p.html",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", shown(&o));
    assert!(
        shown(&o).contains("cannot write missing/p.html: the directory missing does not exist"),
        "{}",
        shown(&o)
    );
    assert!(!d.join("never.json").exists());
    // The annotated listing: every executed line after its stall cycles,
    // executions and address; the other lines of the program unmarked.
    let listing = std::fs::read_to_string(d.join("p.txt")).unwrap();
    let rows: Vec<&str> = listing
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .collect();
    let executed = r["instructions"].as_array().unwrap();
    assert!(rows.len() >= executed.len(), "{listing}");
    for l in executed {
        let stall: u64 = l["stall_cycles"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        let addr = format!("{:x}", l["address"].as_u64().unwrap());
        let row = rows
            .iter()
            .find(|r| r.split_whitespace().any(|w| w == addr))
            .unwrap_or_else(|| panic!("no row of {addr} in\n{listing}"));
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words[0], stall.to_string(), "{row}");
        assert!(words.contains(&l["executed"].to_string().as_str()), "{row}");
        let asm = l["source"].as_str().or(l["text"].as_str()).unwrap();
        assert!(row.ends_with(asm), "{row}");
    }
    let page = d.join("p.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let (dom, w, h, px) = render(&page, d, 1200, 1400);
    let rows = r["instructions"].as_array().unwrap().len();
    check_page(&html, &dom, rows);
    // Every instruction's text is on the page (escaped).
    for l in r["instructions"].as_array().unwrap() {
        let t = l["text"]
            .as_str()
            .unwrap()
            .replace('&', "&amp;")
            .replace('<', "&lt;");
        assert!(html.contains(&t), "{t}");
    }
    assert_eq!((w as usize) * (h as usize), px.len());
    let white = px.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(
        white < px.len() * 97 / 100,
        "the screenshot is blank: {white} of {} pixels white",
        px.len()
    );
    // The hottest line is coloured with the top heat class, a full row
    // of it (at least 300 pixels wide and 10 high); lines with fewer stall
    // cycles with others.
    let heat = count(&px, &gcn_patch::ops::profile::html::HEAT);
    assert!(heat[4] > 3000, "no row of the hottest colour: {heat:?}");
    assert!(
        heat[..4].iter().filter(|n| **n > 0).count() >= 1,
        "one colour only: {heat:?}"
    );
}

/// The demo's matmul patch (coarser waits in the main loop), its declared
/// launch: the lines that account for the difference, the trace of both
/// sides and the comparison page in chromium.
#[test]
fn demo_patch_profile_names_the_lines_and_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (json, trace, html) = (d.join("m.json"), d.join("m.trace"), d.join("m.html"));
    let o = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .args(["profile", "matmul", "--device", "mi300x", "-t", "gfx942"])
        .arg("--json")
        .arg(&json)
        .arg("--trace")
        .arg(&trace)
        .arg("--html")
        .arg(&html)
        .current_dir(repo())
        .output()
        .unwrap();
    let s = shown(&o);
    assert!(o.status.success(), "{s}");
    assert!(s.contains("lines that account for the difference"), "{s}");
    let rows = read_json(&json);
    let row = &rows.as_array().unwrap()[0];
    let (a, b) = (&row["unpatched"], &row["patched"]);
    // The lines' deltas are the whole difference of the stall cycles.
    let total = |r: &Value| -> i64 {
        r["stalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["cycles"].as_i64().unwrap())
            .sum()
    };
    let moved = row["lines_moved"].as_array().unwrap();
    assert!(!moved.is_empty());
    let sum: i64 = moved.iter().map(|l| l["delta"].as_i64().unwrap()).sum();
    assert_eq!(sum, total(b) - total(a));
    // The patch removes waits only (it moves loads and changes waits):
    // every line without a patched side is an s_waitcnt.
    let removed: Vec<&str> = moved
        .iter()
        .filter(|l| l["patched"].is_null())
        .map(|l| l["unpatched"].as_str().unwrap())
        .collect();
    assert!(!removed.is_empty());
    for l in &removed {
        assert!(l.contains("s_waitcnt vmcnt("), "{l}");
    }
    // The trace: both sides, each consistent with its report.
    let t = read_json(&trace);
    let by = slices(&t);
    let names: Vec<&str> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    for (side, r) in [("unpatched", a), ("patched", b)] {
        let pid = t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["name"] == "process_name"
                    && e["args"]["name"]
                        .as_str()
                        .unwrap()
                        .contains(&format!(" {side}:"))
            })
            .unwrap_or_else(|| panic!("no {side} process in {names:?}"))["pid"]
            .as_u64()
            .unwrap();
        let mine: Vec<&Value> = by
            .iter()
            .filter(|(k, _)| k.0 == pid)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        assert_eq!(
            end(&mine),
            r["cycles_per_round"].as_u64().unwrap(),
            "{side}"
        );
        assert_eq!(stall_sums(&mine), report_stalls(r), "{side}");
    }
    // The page: both listings, the script ran; the lines that account for
    // the difference, coloured red (slower) and green (faster), at the top.
    let text = std::fs::read_to_string(&html).unwrap();
    let (dom, _, _, px) = render(&html, d, 1400, 1000);
    let n =
        a["instructions"].as_array().unwrap().len() + b["instructions"].as_array().unwrap().len();
    check_page(&text, &dom, n);
    assert_eq!(dom.matches("data-delta=").count(), moved.len().min(10));
    let heat = count(&px, &gcn_patch::ops::profile::html::HEAT);
    let gain = count(&px, &gcn_patch::ops::profile::html::GAIN);
    let largest = moved[0]["delta"].as_i64().unwrap();
    let top = if largest > 0 { heat[4] } else { gain[4] };
    assert!(top > 3000, "the largest delta's row: {heat:?} {gain:?}");
    assert!(
        heat.iter().sum::<usize>() > 0 && gain.iter().sum::<usize>() > 0,
        "rows slower and faster: {heat:?} {gain:?}"
    );
}
