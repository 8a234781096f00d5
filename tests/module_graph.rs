//! The library crates' module graph, read from the sources, holds three rules:
//!
//! * **No circles between files**: if `a.rs` uses `crate::b` (or `super::b`),
//!   `b.rs` must not reach `a.rs` back. Circles make layers meaningless
//!   (family.rs ↔ target_id.rs and manifest.rs ↔ triton.rs were two); a
//!   circle is reported as the chain of files.
//! * **No circles between folders**: an import from a file under one child of
//!   a folder to a file under another child of the same folder is an edge
//!   between the two children (`stage/check/…` → `stage/patch/…` is
//!   `stage/check → stage/patch`); those edges must not make a circle either,
//!   at any depth (`base → config → base`, `stage/check ↔ stage/patch`).
//! * **gcn-patch's layers** (`base < config < stage < pipeline < ops`, the
//!   folders of `gcn-patch/src`): every module is in one, and a module uses
//!   only its own layer and the layers before it, never one after it.
//!
//! The graph is read from the sources: every `crate::…`, `super::…` and
//! `self::…` path outside comments (doc links included: they are not
//! imports) and the `#[cfg(test)] mod tests` block, with `{a, b::{c, d}}`
//! groups expanded, resolved to the longest existing module file (`x/y.rs`
//! or `x/y/mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Source files of `src` (relative paths), without `lib.rs` and `bin/`.
fn sources(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                if rel != "bin" {
                    stack.push(path);
                }
            } else if rel.ends_with(".rs") && rel != "lib.rs" {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// The module path of a file: `patch/mod.rs` → `[patch]`, `patch/pin.rs` → `[patch, pin]`.
fn module_of(file: &str) -> Vec<String> {
    let mut segs: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

fn resolve(src: &Path, segs: &[String]) -> Option<String> {
    (1..=segs.len()).rev().find_map(|n| {
        let base = segs[..n].join("/");
        [format!("{base}.rs"), format!("{base}/mod.rs")]
            .into_iter()
            .find(|c| src.join(c).is_file())
    })
}

/// Code without comments and without the unit-test module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `crate::…`/`super::…`/`self::…` path in `code`, `{…}` groups
/// expanded (nested ones too).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|p| code_at(&chars, i, p) && (i == 0 || !is_ident(chars[i - 1])));
        let Some(start) = starts else {
            i += 1;
            continue;
        };
        let head = vec![start.trim_end_matches("::").to_string()];
        let j = tail(&chars, i + start.len(), head, &mut found);
        i = j.max(i + 1);
    }
    found
}

/// Reads the rest of a path after `prefix::` from `chars[j..]`, pushing every
/// full path into `found`; returns where it stopped.
fn tail(
    chars: &[char],
    mut j: usize,
    mut segs: Vec<String>,
    found: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        while chars.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        let word: String = chars[j..].iter().take_while(|c| is_ident(**c)).collect();
        if !word.is_empty() {
            j += word.chars().count();
            if word != "self" {
                segs.push(word);
            }
            if code_at(chars, j, "::") {
                j += 2;
                continue;
            }
            found.push(segs);
            return j;
        }
        if chars.get(j) == Some(&'{') {
            j += 1;
            loop {
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                if chars.get(j) == Some(&'}') {
                    return j + 1;
                }
                j = tail(chars, j, segs.clone(), found);
                // An `as` rename (or anything else) up to the next item.
                while chars.get(j).is_some_and(|c| *c != ',' && *c != '}') {
                    j += 1;
                }
                match chars.get(j) {
                    Some(',') => j += 1,
                    Some(_) => return j + 1,
                    None => return j,
                }
            }
        }
        // `*` or the end of the path.
        found.push(segs);
        return j;
    }
}

fn code_at(chars: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for file in sources(src) {
        let here = module_of(&file);
        let text = code(&std::fs::read_to_string(src.join(&file)).unwrap());
        let mut deps = BTreeSet::new();
        for p in paths(&text) {
            let segs: Vec<String> = match p[0].as_str() {
                "crate" => p[1..].to_vec(),
                "super" => {
                    let up = p.iter().take_while(|s| *s == "super").count();
                    here[..here.len().saturating_sub(up)]
                        .iter()
                        .chain(&p[up..])
                        .cloned()
                        .collect()
                }
                _ => here.iter().chain(&p[1..]).cloned().collect(),
            };
            if let Some(dep) = resolve(src, &segs) {
                if dep != file {
                    deps.insert(dep);
                }
            }
        }
        g.insert(file, deps);
    }
    g
}

/// One circle as a chain `a.rs → b.rs → a.rs`, if any.
fn circle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for dep in g.get(node).into_iter().flatten() {
            match state.get(dep.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == dep).unwrap();
                    let mut chain = stack[from..].to_vec();
                    chain.push(dep.clone());
                    return Some(chain);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(g, dep, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in g.keys() {
        if !state.contains_key(node) {
            if let Some(c) = visit(g, node, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// gcn-patch's layers, lowest first. A module uses its own layer and the
/// layers before it, never one after it.
const LAYERS: [&str; 5] = ["base", "config", "stage", "pipeline", "ops"];

/// The layer of a source file (its first folder), if it is in one.
fn layer(file: &str) -> Option<usize> {
    let top = file.split('/').next()?;
    LAYERS.iter().position(|l| *l == top)
}

/// Every import that points up the layers, as `from.rs → to.rs (low → high)`.
fn upward(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (from, deps) in g {
        for to in deps {
            if let (Some(a), Some(b)) = (layer(from), layer(to)) {
                if b > a {
                    out.push(format!("{from} → {to} ({} → {})", LAYERS[a], LAYERS[b]));
                }
            }
        }
    }
    out
}

/// The graph between folders: an import from a file under one child of a
/// folder to a file under another child of the same folder is an edge between
/// those children (`stage/check/hazard/model.rs → stage/patch/rules.rs` is
/// `stage/check → stage/patch`; `base/diag.rs → config/lock.rs` is
/// `base → config`). A child is a subfolder or a file (without `.rs`). A
/// folder's own `mod.rs` and its children are left to the file graph.
fn folders(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, deps) in g {
        let a = module_of(from);
        for to in deps {
            let b = module_of(to);
            let k = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            if k == a.len() || k == b.len() {
                continue;
            }
            out.entry(a[..=k].join("/"))
                .or_default()
                .insert(b[..=k].join("/"));
        }
    }
    out
}

#[test]
fn gcn_patch_is_layered_and_imports_point_down() {
    let src = repo().join("gcn-patch").join("src");
    let g = graph(&src);
    // Every module sits in a layer folder.
    let outside: Vec<&String> = g.keys().filter(|f| layer(f).is_none()).collect();
    assert!(
        outside.is_empty(),
        "gcn-patch: modules outside the layer folders {LAYERS:?}: {outside:?}"
    );
    // The parser sees imports across layers (a broken one finds none).
    let across = g
        .iter()
        .flat_map(|(f, ds)| ds.iter().map(move |d| (f, d)))
        .filter(|(f, d)| layer(f) != layer(d))
        .count();
    assert!(
        across > 50,
        "gcn-patch: only {across} imports across layers"
    );
    let up = upward(&g);
    assert!(
        up.is_empty(),
        "gcn-patch: {} imports point up the layers ({}):\n{}",
        up.len(),
        LAYERS.join(" < "),
        up.join("\n")
    );
}

#[test]
fn no_import_circles_between_folders() {
    for krate in ["gcn-embed", "gcn-patch", "gcn-build"] {
        let src = repo().join(krate).join("src");
        let f = folders(&graph(&src));
        if let Some(chain) = circle(&f) {
            panic!(
                "{krate}: import circle between folders: {}",
                chain.join(" → ")
            );
        }
    }
}

/// The library paths the `gcn-patch` binary's `code` names that are not
/// `ops` (the commands) or `base::diag` (the diagnostics it renders).
fn below_ops(code: &str) -> Vec<String> {
    // The binary's own `crate::` paths are not the library's.
    paths(
        &code
            .replace("crate::", "bin::")
            .replace("gcn_patch::", "crate::"),
    )
    .into_iter()
    .filter(|p| p[0] == "crate")
    .filter(|p| {
        !(p.get(1).is_some_and(|s| s == "ops")
            || p[1..].starts_with(&["base".into(), "diag".into()]))
    })
    .map(|p| p[1..].join("::"))
    .collect()
}

#[test]
fn the_binary_calls_only_ops() {
    let bin = repo().join("gcn-patch/src/bin/gcn-patch");
    let mut seen = 0;
    for entry in std::fs::read_dir(&bin).unwrap() {
        let path = entry.unwrap().path();
        let text = code(&std::fs::read_to_string(&path).unwrap());
        seen += text.matches("ops::").count();
        let below = below_ops(&text);
        assert!(
            below.is_empty(),
            "{}: the binary parses, calls `gcn_patch::ops` and renders; it uses {below:?}",
            path.display()
        );
    }
    assert!(seen > 10, "only {seen} calls into ops found");
}

#[test]
fn an_upward_import_and_a_folder_circle_are_found() {
    // The checkers themselves, on a made-up crate.
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut edge = |a: &str, b: &str| {
        g.entry(a.into()).or_default().insert(b.into());
    };
    edge("stage/check/hazard/model.rs", "stage/patch/rules.rs");
    edge("stage/patch/mod.rs", "stage/check/budget.rs");
    edge("stage/check/mod.rs", "stage/check/hazard/model.rs");
    edge("stage/check/hazard/model.rs", "stage/check/mod.rs");
    edge("config/manifest.rs", "stage/check/mod.rs");
    edge("ops/pin.rs", "base/diag.rs");
    // No file circle between stage/check and stage/patch, but a folder circle.
    let f = folders(&g);
    assert_eq!(
        f["stage/check"],
        BTreeSet::from(["stage/patch".to_string()]),
        "{f:?}"
    );
    assert_eq!(
        circle(&f).unwrap(),
        ["stage/check", "stage/patch", "stage/check"]
    );
    // mod.rs ↔ its own child is the file graph's business, not a folder edge.
    assert!(!f.contains_key("stage/check/hazard"), "{f:?}");
    assert_eq!(
        upward(&g),
        ["config/manifest.rs → stage/check/mod.rs (config → stage)"]
    );
    assert_eq!(layer("ops/import/mod.rs"), Some(4));
    assert_eq!(
        below_ops("use gcn_patch::{base::diag::Diagnostics, ops};\nuse crate::args::Cli;\nlet l = gcn_patch::pipeline::label(k, t);"),
        ["pipeline::label"]
    );
    assert_eq!(layer("lib.rs"), None);
    // Nested groups, `self` and renames.
    let p = paths(
        "use crate::{base::diag::{Diagnostic, Level as L}, config::{self, lock::Lock}};\nuse super::super::x::y;",
    );
    for want in [
        &["crate", "base", "diag", "Diagnostic"][..],
        &["crate", "base", "diag", "Level"],
        &["crate", "config"],
        &["crate", "config", "lock", "Lock"],
        &["super", "super", "x", "y"],
    ] {
        assert!(p.iter().any(|q| q == want), "{want:?} not in {p:?}");
    }
}

#[test]
fn no_import_circles_in_the_library_crates() {
    for krate in ["gcn-embed", "gcn-patch", "gcn-build"] {
        let src = repo().join(krate).join("src");
        let g = graph(&src);
        let edges: usize = g.values().map(BTreeSet::len).sum();
        // The parser sees the crates' real structure (a broken one finds nothing).
        if krate != "gcn-build" {
            assert!(edges > 5, "{krate}: only {edges} imports found");
        }
        if let Some(chain) = circle(&g) {
            panic!("{krate}: import circle: {}", chain.join(" → "));
        }
    }
}

#[test]
fn a_circle_is_found() {
    // The checker itself: a two-file circle through a group import.
    let mut g = BTreeMap::new();
    g.insert("a.rs".to_string(), BTreeSet::from(["b.rs".to_string()]));
    g.insert("b.rs".to_string(), BTreeSet::from(["a.rs".to_string()]));
    assert_eq!(circle(&g).unwrap(), ["a.rs", "b.rs", "a.rs"]);
    let p = paths("use crate::target_id::{nearest, TargetId};\nlet x = crate::family::expand(s);");
    assert!(
        p.contains(&vec!["crate".into(), "target_id".into(), "nearest".into()]),
        "{p:?}"
    );
    assert!(
        p.contains(&vec!["crate".into(), "family".into(), "expand".into()]),
        "{p:?}"
    );
}
