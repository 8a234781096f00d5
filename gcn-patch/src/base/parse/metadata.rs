//! The `.amdgpu_metadata` YAML block, read with a small indentation parser.
//!
//! Only the shape LLVM writes is understood: top-level `key: value` lines,
//! `amdhsa.kernels:` as a block list of maps (`  - .key: value`), and block
//! (`  - 1`) or flow (`[ 1, 2 ]`) lists for `amdhsa.version`. Nested values
//! (`.args`, `.reqd_workgroup_size`) are skipped; their parent key is kept
//! with an empty value.

use super::line::{Line, LineKind};

/// One `key: value` line of a kernel's metadata map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaField {
    /// Key, e.g. `.vgpr_count`.
    pub key: String,
    /// Raw value text (may be quoted; empty for nested values).
    pub value: String,
    /// 0-based line index.
    pub line: usize,
}

/// One entry of `amdhsa.kernels`.
///
/// Every typed field is `(line index, value)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelMetadata {
    /// 0-based line of the entry's `- ` line.
    pub start: usize,
    /// 0-based line one past the entry's last line.
    pub end: usize,
    /// Top-level keys of the entry, in order.
    pub fields: Vec<MetaField>,
    /// `.name`
    pub name: Option<(usize, String)>,
    /// `.symbol` (e.g. `saxpy.kd`)
    pub symbol: Option<(usize, String)>,
    /// `.vgpr_count`
    pub vgpr_count: Option<(usize, u32)>,
    /// `.sgpr_count`
    pub sgpr_count: Option<(usize, u32)>,
    /// `.agpr_count`
    pub agpr_count: Option<(usize, u32)>,
    /// `.vgpr_spill_count`
    pub vgpr_spill_count: Option<(usize, u32)>,
    /// `.sgpr_spill_count`
    pub sgpr_spill_count: Option<(usize, u32)>,
    /// `.group_segment_fixed_size`
    pub group_segment_fixed_size: Option<(usize, u32)>,
    /// `.private_segment_fixed_size`
    pub private_segment_fixed_size: Option<(usize, u32)>,
    /// `.kernarg_segment_size`
    pub kernarg_segment_size: Option<(usize, u32)>,
    /// `.max_flat_workgroup_size`
    pub max_flat_workgroup_size: Option<(usize, u32)>,
    /// `.wavefront_size`
    pub wavefront_size: Option<(usize, u32)>,
}

impl KernelMetadata {
    /// The field with this key (with or without the leading dot).
    pub fn get(&self, key: &str) -> Option<&MetaField> {
        let key = key.strip_prefix('.').unwrap_or(key);
        self.fields
            .iter()
            .find(|f| f.key.strip_prefix('.').unwrap_or(&f.key) == key)
    }

    fn set(&mut self, f: &MetaField) {
        let num = || f.value.trim().parse::<u32>().ok().map(|v| (f.line, v));
        let s = || Some((f.line, unquote(&f.value).to_string()));
        match f.key.as_str() {
            ".name" => self.name = s(),
            ".symbol" => self.symbol = s(),
            ".vgpr_count" => self.vgpr_count = num(),
            ".sgpr_count" => self.sgpr_count = num(),
            ".agpr_count" => self.agpr_count = num(),
            ".vgpr_spill_count" => self.vgpr_spill_count = num(),
            ".sgpr_spill_count" => self.sgpr_spill_count = num(),
            ".group_segment_fixed_size" => self.group_segment_fixed_size = num(),
            ".private_segment_fixed_size" => self.private_segment_fixed_size = num(),
            ".kernarg_segment_size" => self.kernarg_segment_size = num(),
            ".max_flat_workgroup_size" => self.max_flat_workgroup_size = num(),
            ".wavefront_size" => self.wavefront_size = num(),
            _ => {}
        }
    }
}

/// The whole metadata block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Metadata {
    /// 0-based line of `.amdgpu_metadata`.
    pub start: usize,
    /// 0-based line of `.end_amdgpu_metadata` (or the last line if missing).
    pub end: usize,
    /// `amdhsa.target` line and unquoted value.
    pub target: Option<(usize, String)>,
    /// `amdhsa.version` key line and its numbers.
    pub version: Option<(usize, Vec<u32>)>,
    /// Entries of `amdhsa.kernels`.
    pub kernels: Vec<KernelMetadata>,
}

/// Remove one level of YAML quotes.
pub fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

fn key_value(s: &str) -> Option<(&str, &str)> {
    let i = s
        .find(": ")
        .or_else(|| s.strip_suffix(':').map(|k| k.len()))?;
    Some((s[..i].trim(), s.get(i + 1..).unwrap_or("").trim()))
}

/// Parse the first metadata block of `lines`.
pub(crate) fn parse_metadata(lines: &[Line]) -> Option<Metadata> {
    let start = lines.iter().position(
        |l| matches!(l.kind(), LineKind::Directive { name, .. } if name == ".amdgpu_metadata"),
    )?;
    let mut md = Metadata {
        start,
        end: lines.len().saturating_sub(1),
        ..Metadata::default()
    };
    let mut top = String::new();
    let mut entry_indent: Option<usize> = None;
    let mut cur: Option<KernelMetadata> = None;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        if *line.kind() != LineKind::Metadata {
            if line.directive().map(|d| d.0) == Some(".end_amdgpu_metadata") {
                md.end = i;
            }
            break;
        }
        let text = line.text().strip_suffix('\r').unwrap_or(line.text());
        let body = text.trim_start();
        if body.is_empty() || body.starts_with('#') || body == "---" || body == "..." {
            continue;
        }
        let indent = text.len() - body.len();
        if indent == 0 {
            if let Some(k) = cur.take() {
                md.kernels.push(KernelMetadata { end: i, ..k });
            }
            let Some((k, v)) = key_value(body) else {
                continue;
            };
            top = k.to_string();
            match k {
                "amdhsa.target" => md.target = Some((i, unquote(v).to_string())),
                "amdhsa.version" => {
                    let nums = v
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .split(',')
                        .filter_map(|n| n.trim().parse().ok())
                        .collect();
                    md.version = Some((i, nums));
                }
                _ => {}
            }
            continue;
        }
        if top == "amdhsa.version" {
            if let (Some(n), Some((_, v))) = (body.strip_prefix("- "), md.version.as_mut()) {
                if let Ok(n) = n.trim().parse() {
                    v.push(n);
                }
            }
            continue;
        }
        if top != "amdhsa.kernels" {
            continue;
        }
        let (field_text, field_indent) = match body.strip_prefix("- ") {
            Some(rest) if entry_indent.is_none_or(|e| e == indent) => {
                entry_indent = Some(indent);
                if let Some(k) = cur.take() {
                    md.kernels.push(KernelMetadata { end: i, ..k });
                }
                cur = Some(KernelMetadata {
                    start: i,
                    ..KernelMetadata::default()
                });
                (rest.trim_start(), indent + 2)
            }
            _ => (body, indent),
        };
        if Some(field_indent) != entry_indent.map(|e| e + 2) {
            continue;
        }
        if let (Some(k), Some((key, value))) = (cur.as_mut(), key_value(field_text)) {
            let f = MetaField {
                key: key.to_string(),
                value: value.to_string(),
                line: i,
            };
            k.set(&f);
            k.fields.push(f);
        }
    }
    if let Some(k) = cur.take() {
        md.kernels.push(KernelMetadata { end: md.end, ..k });
    }
    Some(md)
}
