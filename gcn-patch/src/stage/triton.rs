//! Triton's file layouts: its dump directory, its cache, and its override
//! directory (checked against `triton==3.9.0`).
//!
//! * **Dump** (`TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=D`):
//!   `D/<hash>/<kernel>.{ttir,ttgir,llir,amdgcn,hsaco}`, where `<hash>` is the
//!   base32 of the *source* hash (`ASTSource.hash()`), the same name the
//!   override directory uses. No launch metadata is dumped, except
//!   `ttg.num-warps` / `ttg.threads-per-warp` in the `.ttgir`.
//! * **Cache** (`TRITON_CACHE_DIR`, default `~/.triton/cache`):
//!   `C/<key>/<kernel>.{source,ttir,ttgir,llir,amdgcn,hsaco,json}` plus
//!   `__grp__<kernel>.json`; `<key>` is the base32 of the *compilation* hash,
//!   which is not the override name. `<kernel>.json` holds the launch
//!   metadata (`shared` LDS bytes, `num_warps`, `warp_size`).
//! * **Override** (`TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=O`): any stage
//!   file at `O/<hash>/<kernel>.<ext>` replaces that stage; an `.hsaco` is used
//!   byte for byte ([`override_path`]).
//!
//! Triton launches a kernel with `shared` bytes of dynamic LDS and
//! `num_warps × warp_size` threads, both computed before the asm stage; the
//! Triton limits check ([`crate::stage::check::triton_limits`]) keeps a patched kernel within them.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Triton's names and launch metadata of one kernel, as kernels.toml
/// records them (defined with the Triton limits check, which reads them).
pub use crate::config::triton::TritonKernel;

/// Launch metadata from a cache entry's `<kernel>.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Metadata {
    /// LDS bytes.
    pub shared: Option<u32>,
    /// Warps per workgroup.
    pub num_warps: Option<u32>,
    /// Threads per warp.
    pub warp_size: Option<u32>,
}

/// Where a `.amdgcn` file sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `<dump>/<hash>/<kernel>.amdgcn` next to Triton's other stages.
    Dump {
        /// The directory name (override hash).
        hash: String,
    },
    /// `<cache>/<key>/<kernel>.amdgcn` with `__grp__<kernel>.json`.
    Cache {
        /// The directory name (compilation hash; not the override name).
        key: String,
    },
}

/// Triton's directory names: base32 (RFC 4648, no padding) of a sha256, 52 characters.
pub fn is_hash_dir(name: &str) -> bool {
    name.len() == 52
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}

/// The Triton layout of `amdgcn` (a `<kernel>.amdgcn` file), from its
/// directory name and siblings; `None` if it is not in one.
pub fn layout(amdgcn: &Path) -> Option<Layout> {
    if amdgcn.extension()? != "amdgcn" {
        return None;
    }
    let kernel = amdgcn.file_stem()?.to_str()?;
    let dir = amdgcn.parent()?;
    let name = dir.file_name()?.to_str()?.to_string();
    if !is_hash_dir(&name) {
        return None;
    }
    if dir.join(format!("__grp__{kernel}.json")).is_file() {
        return Some(Layout::Cache { key: name });
    }
    let stage = ["ttgir", "ttir", "llir", "hsaco"]
        .iter()
        .any(|ext| dir.join(format!("{kernel}.{ext}")).is_file());
    stage.then_some(Layout::Dump { hash: name })
}

/// Read a cache entry's `<kernel>.json` (launch metadata); `None` if absent
/// or not Triton's JSON.
#[cfg(feature = "lift")] // serde_json
pub fn read_metadata(json: &Path) -> Option<Metadata> {
    let text = std::fs::read_to_string(json).ok()?;
    serde_json::from_str(&text).ok()
}

/// `ttg.num-warps` and `ttg.threads-per-warp` of a `.ttgir` module.
pub fn ttgir_launch(ttgir: &Path) -> (Option<u32>, Option<u32>) {
    let Ok(text) = std::fs::read_to_string(ttgir) else {
        return (None, None);
    };
    let attr = |key: &str| {
        let at = text.find(&format!("\"{key}\" = "))? + key.len() + 5;
        let digits: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    };
    (attr("ttg.num-warps"), attr("ttg.threads-per-warp"))
}

/// Find the cache entry holding `kernel.amdgcn` with exactly these bytes
/// (`sha256`) below `cache` and return its metadata.
#[cfg(feature = "lift")] // serde_json
pub fn find_in_cache(cache: &Path, kernel: &str, sha256: &str) -> Option<Metadata> {
    for entry in std::fs::read_dir(cache).ok()?.flatten() {
        let dir = entry.path();
        let amdgcn = dir.join(format!("{kernel}.amdgcn"));
        let Ok(bytes) = std::fs::read(&amdgcn) else {
            continue;
        };
        if crate::base::hash::sha256_hex(&bytes) == sha256 {
            if let Some(m) = read_metadata(&dir.join(format!("{kernel}.json"))) {
                return Some(m);
            }
        }
    }
    None
}

/// Everything import learns about a Triton `.amdgcn`: the layout and the
/// launch metadata from the entry itself, or else from `caches` (searched for
/// an entry with the same bytes). `None` when the file is not in a Triton layout.
#[cfg(feature = "lift")] // serde_json
pub fn recognize(
    amdgcn: &Path,
    sha256: &str,
    target: &str,
    caches: &[PathBuf],
) -> Option<TritonKernel> {
    let layout = layout(amdgcn)?;
    let kernel = amdgcn.file_stem()?.to_str()?.to_string();
    let dir = amdgcn.parent()?;
    let own = read_metadata(&dir.join(format!("{kernel}.json")));
    let meta = own.or_else(|| {
        caches
            .iter()
            .find_map(|c| find_in_cache(c, &kernel, sha256))
    });
    let meta = meta.unwrap_or_default();
    // The .ttgir only when the cache entry did not say (a dump without one).
    let (ttgir_warps, ttgir_wave) = if meta.num_warps.is_some() && meta.warp_size.is_some() {
        (None, None)
    } else {
        ttgir_launch(&dir.join(format!("{kernel}.ttgir")))
    };
    Some(TritonKernel {
        hash: match layout {
            Layout::Dump { hash } => Some(hash),
            Layout::Cache { .. } => None,
        },
        target: target.to_string(),
        shared: meta.shared,
        num_warps: meta.num_warps.or(ttgir_warps),
        warp_size: meta.warp_size.or(ttgir_wave),
        kernel,
    })
}

/// What tells one specialization of a Triton kernel from another, read from
/// the `<kernel>.ttir` beside its `.amdgcn` (dump and cache entries both have
/// one): the signature Triton specialized (argument types and attributes such
/// as `tt.divisibility`, `loc(…)` dropped) and the block sizes its constexprs
/// became (`tt.make_range` ends). `None` without a readable `.ttir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Specialization {
    /// `(x: !tt.ptr<f32>, …, n: i32 {tt.divisibility = 16 : i32})`.
    pub signature: String,
    /// `tt.make_range` ends, in order, deduplicated (e.g. `[1024]`).
    pub ranges: Vec<u64>,
}

impl Specialization {
    /// One line: `signature (…); block sizes 1024`.
    pub fn describe(&self) -> String {
        let ranges: Vec<String> = self.ranges.iter().map(u64::to_string).collect();
        format!(
            "signature {}; block sizes (tt.make_range) {}",
            self.signature,
            if ranges.is_empty() {
                "none".to_string()
            } else {
                ranges.join(", ")
            }
        )
    }
}

/// The [`Specialization`] of the Triton kernel whose `.amdgcn` is `amdgcn`.
pub fn specialization(amdgcn: &Path) -> Option<Specialization> {
    let kernel = amdgcn.file_stem()?.to_str()?;
    let text = std::fs::read_to_string(amdgcn.with_file_name(format!("{kernel}.ttir"))).ok()?;
    let head = format!("tt.func public @{kernel}(");
    let at = text.find(&head)? + head.len() - 1;
    // The argument list: up to its matching `)`.
    let mut depth = 0usize;
    let mut end = None;
    for (i, c) in text[at..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(at + i + 1);
                    break;
                }
            }
            '\n' => break,
            _ => {}
        }
    }
    let raw = &text[at..end?];
    // Drop ` loc(…)` annotations.
    let mut signature = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(" loc(") {
        signature.push_str(&rest[..i]);
        let after = &rest[i + 5..];
        let mut d = 1usize;
        let mut close = after.len();
        for (j, c) in after.char_indices() {
            match c {
                '(' => d += 1,
                ')' => {
                    d -= 1;
                    if d == 0 {
                        close = j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[close..];
    }
    signature.push_str(rest);
    let mut ranges = Vec::new();
    for part in text.split("tt.make_range").skip(1) {
        let Some(e) = part.find("end = ") else {
            continue;
        };
        let digits: String = part[e + 6..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(v) = digits.parse::<u64>() {
            if !ranges.contains(&v) {
                ranges.push(v);
            }
        }
    }
    Some(Specialization { signature, ranges })
}

/// `DIR/<hash>/<kernel>.hsaco`: where `TRITON_OVERRIDE_DIR=DIR` looks for the
/// code object of the kernel whose dump directory is `<hash>`.
pub fn override_path(out: &Path, hash: &str, kernel: &str) -> PathBuf {
    out.join(hash).join(format!("{kernel}.hsaco"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_dirs_and_inline_table() {
        assert!(is_hash_dir(
            "NKFVRLDML6MC7H6CG6YUUHZ5ZL2SGKZIKTNJFAJ3K2H5DB6WV57Q"
        ));
        assert!(!is_hash_dir("add-gfx942"));
        assert!(!is_hash_dir(
            "nkfvrldml6mc7h6cg6yuuhz5zl2sgkziktnjfaj3k2h5db6wv57q"
        ));
        let k = TritonKernel {
            kernel: "add".into(),
            hash: Some("H".into()),
            target: "gfx942".into(),
            shared: Some(0),
            num_warps: Some(4),
            warp_size: None,
        };
        assert_eq!(
            k.to_toml(),
            r#"{ kernel = "add", hash = "H", target = "gfx942", shared = 0, num-warps = 4 }"#
        );
        let back: TritonKernel = toml::from_str::<toml::Table>(&format!("t = {}", k.to_toml()))
            .unwrap()["t"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(back, k);
    }
}
