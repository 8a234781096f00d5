//! No import circles between the source files of the library crates: if
//! `a.rs` uses `crate::b` (or `super::b`), `b.rs` must not reach `a.rs` back.
//! Circles make layers meaningless (family.rs ↔ target_id.rs and manifest.rs
//! ↔ triton.rs were two); a circle is reported as the chain of files.
//!
//! The graph is read from the sources: every `crate::…`, `super::…` and
//! `self::…` path outside comments and the `#[cfg(test)] mod tests` block,
//! with `{a, b::c}` groups expanded, resolved to the longest existing module
//! file (`x/y.rs` or `x/y/mod.rs`).

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

/// Every `crate::…`/`super::…`/`self::…` path in `code`, groups expanded one level.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|p| code_at(&bytes, i, p) && (i == 0 || !is_ident(bytes[i - 1])));
        let Some(start) = starts else {
            i += 1;
            continue;
        };
        let mut segs = vec![start.trim_end_matches("::").to_string()];
        let mut j = i + start.len();
        loop {
            let word: String = bytes[j..].iter().take_while(|c| is_ident(**c)).collect();
            if !word.is_empty() {
                j += word.chars().count();
                segs.push(word);
                if code_at(&bytes, j, "::") {
                    j += 2;
                    continue;
                }
                found.push(segs.clone());
            } else if bytes.get(j) == Some(&'{') {
                let end = bytes[j..]
                    .iter()
                    .position(|c| *c == '}')
                    .map_or(bytes.len(), |e| j + e);
                let group: String = bytes[j + 1..end].iter().collect();
                for item in group.split(',') {
                    let item: Vec<String> = item
                        .trim()
                        .split("::")
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty() && s != "self")
                        .collect();
                    let mut full = segs.clone();
                    full.extend(item);
                    found.push(full);
                }
                j = end;
            }
            break;
        }
        i = j.max(i + 1);
    }
    found
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
                "super" => here[..here.len().saturating_sub(1)]
                    .iter()
                    .chain(&p[1..])
                    .cloned()
                    .collect(),
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
