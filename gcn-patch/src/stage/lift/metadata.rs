//! The metadata note: as `.amdgpu_metadata` YAML (what `llvm-readelf
//! --notes` prints), checked by decoding both MessagePack documents.

use std::fmt::Write as _;
use std::path::Path;

use crate::base::diag::{Code, Diagnostic};
use crate::stage::toolchain::ToolDiagnostic as _;
use crate::stage::toolchain::Toolchain;

/// The YAML of the `NT_AMDGPU_METADATA` note of `path`, `---` to `...`.
pub fn yaml(tc: &Toolchain, path: &Path, job: &str) -> Result<Option<String>, Diagnostic> {
    let readelf = tc.llvm_tool("llvm-readelf");
    let mut cmd = crate::stage::toolchain::process::tool_command(&readelf);
    cmd.env_clear().env("LC_ALL", "C").arg("--notes").arg(path);
    let out = tc
        .run(&mut cmd, "llvm-readelf", job)
        .map_err(|e| e.to_diagnostic())?;
    if !out.status.success() {
        return Err(Diagnostic::error(
            Code::LiftToolFailed,
            format!(
                "llvm-readelf failed {job}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(extract_yaml(&String::from_utf8_lossy(&out.stdout)))
}

/// The YAML `llvm-readelf --notes` prints for the metadata note's
/// MessagePack `bytes`, `---` to `...`, written here instead of run:
/// LLVM's YAML output of a MessagePack document (map keys in byte order,
/// each `key:` padded to 16 columns, block sequences, plain scalars).
/// `None` for what this writer does not reproduce exactly (floats, nil,
/// binary, empty or nested-sequence containers, strings that need quoting
/// or a tag): the caller then asks llvm-readelf. Whatever it writes, the
/// identity check proves by rebuilding the note byte for byte.
pub fn yaml_of(bytes: &[u8]) -> Option<String> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd).ok()?;
    if !rd.is_empty() || !matches!(v, rmpv::Value::Map(_)) {
        return None;
    }
    let mut out = String::from("---\n");
    write_map(&v, 0, false, &mut out)?;
    out.push_str("...\n");
    Some(out)
}

/// The entries of `map`, keys at column `col`; the first key continues the
/// current line (after `- `) when `inline`.
fn write_map(map: &rmpv::Value, col: usize, inline: bool, out: &mut String) -> Option<()> {
    let rmpv::Value::Map(entries) = map else {
        return None;
    };
    if entries.is_empty() {
        return None;
    }
    let mut items: Vec<(&str, &rmpv::Value)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        items.push((k.as_str().filter(|k| key_text(k))?, v));
    }
    items.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    if items.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    for (i, (k, v)) in items.into_iter().enumerate() {
        if !(inline && i == 0) {
            out.extend(std::iter::repeat_n(' ', col));
        }
        out.push_str(k);
        out.push(':');
        match v {
            rmpv::Value::Map(_) => {
                out.push('\n');
                write_map(v, col + 2, false, out)?;
            }
            rmpv::Value::Array(a) => {
                if a.is_empty() {
                    return None;
                }
                out.push('\n');
                for item in a {
                    out.extend(std::iter::repeat_n(' ', col + 2));
                    out.push_str("- ");
                    match item {
                        rmpv::Value::Map(_) => write_map(item, col + 4, true, out)?,
                        rmpv::Value::Array(_) => return None,
                        s => {
                            out.push_str(&scalar(s)?);
                            out.push('\n');
                        }
                    }
                }
            }
            s => {
                out.extend(std::iter::repeat_n(
                    ' ',
                    16usize.saturating_sub(k.len()).max(1),
                ));
                out.push_str(&scalar(s)?);
                out.push('\n');
            }
        }
    }
    Some(())
}

/// A scalar as LLVM prints it, when it needs no tag.
fn scalar(v: &rmpv::Value) -> Option<String> {
    match v {
        rmpv::Value::Boolean(b) => Some(b.to_string()),
        rmpv::Value::Integer(i) => Some(i.to_string()),
        rmpv::Value::String(s) => string(s.as_str()?),
        _ => None,
    }
}

/// Characters LLVM's YAML output leaves unquoted.
fn safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'^' | b'.' | b',' | b' ')
}

/// A map key as LLVM prints it (as it is).
fn key_text(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| safe(c) && c != b' ' && c != b',')
}

/// A string as LLVM's YAML output writes it: plain, or in single quotes
/// (`'` doubled) when a character or the first one asks for quotes. `None`
/// where LLVM would add a tag or double quotes (text that reads as a
/// number, boolean or null; control or non-ASCII characters).
fn string(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let first = *b.first()?;
    // LLVM's YAML output quotes YAML 1.2's null and boolean words only
    // (`N`, `yes`, `off` stay plain); these are left to llvm-readelf.
    let words = [
        "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
    ];
    if first.is_ascii_digit()
        || matches!(first, b'+' | b'-' | b'.')
        || words.contains(&s)
        || !b.iter().all(|c| (0x20..0x7f).contains(c))
    {
        return None;
    }
    let quote = b.iter().any(|c| !safe(*c))
        || b"?:\\,[]{}#&*!|>'\"%@`".contains(&first)
        || first == b' '
        || b[b.len() - 1] == b' ';
    Some(if quote {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        s.to_string()
    })
}

/// The YAML document after `AMDGPU Metadata:` in a `--notes` listing.
pub fn extract_yaml(listing: &str) -> Option<String> {
    let at = listing.find("AMDGPU Metadata:")?;
    let mut out = String::new();
    let mut started = false;
    for line in listing[at..].lines().skip(1) {
        if !started {
            if line.trim() == "---" {
                started = true;
                out.push_str("---\n");
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line == "..." {
            return Some(out);
        }
    }
    None
}

/// A canonical text of a MessagePack document: maps with their entries
/// sorted, every value with its type. Two documents are equal when their
/// canonical texts are.
pub fn canonical(bytes: &[u8]) -> Result<String, String> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd).map_err(|e| e.to_string())?;
    if !rd.is_empty() {
        return Err(format!("{} bytes after the document", rd.len()));
    }
    let mut s = String::new();
    canon(&v, &mut s);
    Ok(s)
}

/// Where two MessagePack documents first differ, as a key path with both
/// values (`amdhsa.target: "a" in the original, "b" rebuilt`); `None`
/// when they are the same document (maps compared by key, whatever the
/// order). A document that does not decode is a difference at the top.
pub fn first_difference(original: &[u8], rebuilt: &[u8]) -> Option<String> {
    let read = |b: &[u8]| {
        let mut rd = b;
        rmpv::decode::read_value(&mut rd).map_err(|e| e.to_string())
    };
    match (read(original), read(rebuilt)) {
        (Ok(a), Ok(b)) => diff_values(&a, &b, "the top"),
        (Err(e), _) => Some(format!("the top: the original does not decode ({e})")),
        (_, Err(e)) => Some(format!("the top: the rebuild does not decode ({e})")),
    }
}

fn diff_values(a: &rmpv::Value, b: &rmpv::Value, path: &str) -> Option<String> {
    use rmpv::Value;
    let key = |k: &Value| match k {
        Value::String(s) => s.as_str().map_or_else(|| format!("{k}"), str::to_string),
        other => format!("{other}"),
    };
    let join = |p: &str, k: &str| {
        if p == "the top" {
            k.to_string()
        } else {
            format!("{p}.{k}")
        }
    };
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            let mut xs: Vec<(String, &Value)> = x.iter().map(|(k, v)| (key(k), v)).collect();
            let mut ys: Vec<(String, &Value)> = y.iter().map(|(k, v)| (key(k), v)).collect();
            xs.sort_by(|p, q| p.0.cmp(&q.0));
            ys.sort_by(|p, q| p.0.cmp(&q.0));
            for (k, v) in &xs {
                match ys.iter().find(|(k2, _)| k2 == k) {
                    Some((_, w)) => {
                        if let Some(d) = diff_values(v, w, &join(path, k)) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{}: missing from the rebuild", join(path, k))),
                }
            }
            ys.iter()
                .find(|(k, _)| !xs.iter().any(|(k2, _)| k2 == k))
                .map(|(k, _)| format!("{}: only in the rebuild", join(path, k)))
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if let Some(d) = diff_values(v, w, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| {
                format!(
                    "{path}: {} items in the original, {} rebuilt",
                    x.len(),
                    y.len()
                )
            })
        }
        _ => (a != b).then(|| format!("{path}: {a} in the original, {b} rebuilt")),
    }
}

fn canon(v: &rmpv::Value, out: &mut String) {
    use rmpv::Value;
    match v {
        Value::Map(entries) => {
            let mut items: Vec<(String, String)> = entries
                .iter()
                .map(|(k, v)| {
                    let (mut a, mut b) = (String::new(), String::new());
                    canon(k, &mut a);
                    canon(v, &mut b);
                    (a, b)
                })
                .collect();
            items.sort();
            out.push('{');
            for (k, v) in items {
                let _ = write!(out, "{k}:{v},");
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for i in items {
                canon(i, out);
                out.push(',');
            }
            out.push(']');
        }
        other => {
            let _ = write!(out, "{other:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_yaml_and_compares_maps_unordered() {
        let y = extract_yaml(
            "  AMDGPU   0x10\tNT_AMDGPU_METADATA\n    AMDGPU Metadata:\n        ---\namdhsa.version:\n  - 1\n...\n\n",
        )
        .unwrap();
        assert_eq!(y, "---\namdhsa.version:\n  - 1\n...\n");
        // {"a": 1, "b": "x"} written in two key orders, and with another value.
        let ab = [0x82, 0xa1, b'a', 0x01, 0xa1, b'b', 0xa1, b'x'];
        let ba = [0x82, 0xa1, b'b', 0xa1, b'x', 0xa1, b'a', 0x01];
        let other = [0x82, 0xa1, b'b', 0xa1, b'y', 0xa1, b'a', 0x01];
        assert_eq!(canonical(&ab), canonical(&ba));
        assert_ne!(canonical(&ab), canonical(&other));
        assert!(canonical(&ab[..5]).is_err());
        assert_eq!(first_difference(&ab, &ba), None);
        assert_eq!(
            first_difference(&ab, &other).as_deref(),
            Some(r#"b: "x" in the original, "y" rebuilt"#)
        );
    }
}
