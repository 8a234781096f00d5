//! Kernels: code range, basic blocks, descriptor, `.set` symbols, metadata.

use std::collections::HashMap;
use std::ops::Range;

use super::line::{Line, LineKind};
use super::metadata::{parse_metadata, KernelMetadata};

/// One kernel of the file. All line numbers are 0-based indices into
/// [`super::AsmFile::lines`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// Kernel symbol name.
    pub name: String,
    /// Line of the `name:` label, if present.
    pub symbol_line: Option<usize>,
    /// Line of the end label (`.Lfunc_end<N>:`, found through `.size name, .Lfunc_endN-name`), if present.
    pub end_line: Option<usize>,
    /// Lines from the symbol label (inclusive) to the end label (exclusive).
    /// Empty when the symbol label is missing. In clang HIP output this range
    /// also contains the `.amdhsa_kernel` block (in `.rodata`); see
    /// [`Kernel::blocks`] for the instruction ranges only.
    pub code: Range<usize>,
    /// Basic blocks in order: the entry block (starting at the symbol label)
    /// then one per label, each running to the next label, to the first line
    /// that leaves the text section, or to the end of `code`.
    pub blocks: Vec<Block>,
    /// The `.amdhsa_kernel name … .end_amdhsa_kernel` block.
    pub descriptor: Option<Descriptor>,
    /// `.set name.<field>, v` / `.set .Lname.<field>, v` lines for this kernel.
    pub sets: Vec<SetLine>,
    /// The kernel's entry in `amdhsa.kernels`.
    pub metadata: Option<KernelMetadata>,
}

impl Kernel {
    /// The `.set` line for `field` (e.g. `num_vgpr`), if any.
    pub fn set(&self, field: &str) -> Option<&SetLine> {
        self.sets.iter().find(|s| s.field == field)
    }

    /// The block whose label is `label`.
    pub fn block(&self, label: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.label == label)
    }
}

/// A basic block (by labels; LLVM's label-less `; %bb.N:` fallthrough blocks
/// stay inside the preceding block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Label name (the kernel name for the entry block).
    pub label: String,
    /// Lines of the block: the label line (inclusive) to the end (exclusive).
    pub lines: Range<usize>,
}

/// A `.amdhsa_kernel` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// Line of `.amdhsa_kernel name`.
    pub start: usize,
    /// Line of `.end_amdhsa_kernel` (inclusive; the last line if missing).
    pub end: usize,
    /// Fields in order.
    pub fields: Vec<Field>,
}

impl Descriptor {
    /// The field `name`, with or without the `.amdhsa_` prefix
    /// (`get("next_free_vgpr")` == `get(".amdhsa_next_free_vgpr")`).
    pub fn get(&self, name: &str) -> Option<&Field> {
        let short = |n: &str| {
            n.strip_prefix(".amdhsa_")
                .unwrap_or(n.strip_prefix('.').unwrap_or(n))
                .to_string()
        };
        let want = short(name);
        self.fields.iter().find(|f| short(&f.name) == want)
    }
}

/// One descriptor field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Name including the dot, e.g. `.amdhsa_next_free_vgpr`.
    pub name: String,
    /// Value text.
    pub value: String,
    /// Line index.
    pub line: usize,
}

/// A `.set` line belonging to a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetLine {
    /// Full symbol, e.g. `.Lk.num_vgpr`.
    pub symbol: String,
    /// Field after the kernel name, e.g. `num_vgpr`.
    pub field: String,
    /// Value expression text.
    pub value: String,
    /// Line index.
    pub line: usize,
}

/// Section state: `true` while in an executable text section.
fn text_state(lines: &[Line]) -> Vec<bool> {
    let mut out = Vec::with_capacity(lines.len());
    let mut cur = true;
    let mut prev = true;
    let mut stack: Vec<bool> = vec![];
    for l in lines {
        if let Some((name, args)) = l.directive() {
            let new = match name {
                ".text" => Some(true),
                ".data" | ".bss" | ".rodata" => Some(false),
                ".section" | ".pushsection" => {
                    let sec = args
                        .split(',')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .trim_matches('"');
                    if name == ".pushsection" {
                        stack.push(cur);
                    }
                    Some(sec.starts_with(".text"))
                }
                ".popsection" => stack.pop(),
                ".previous" => Some(prev),
                _ => None,
            };
            if let Some(n) = new {
                prev = cur;
                cur = n;
            }
        }
        out.push(cur);
    }
    out
}

/// Compute all kernels of `lines` in one linear pass plus lookups.
pub(crate) fn kernels(lines: &[Line]) -> Vec<Kernel> {
    let in_text = text_state(lines);
    let mut labels: HashMap<&str, usize> = HashMap::new();
    let mut label_lines: Vec<usize> = vec![];
    let mut size_end: HashMap<String, String> = HashMap::new();
    let mut descriptors: Vec<(String, Descriptor)> = vec![];
    let mut sets: Vec<(usize, &str, &str)> = vec![];
    let mut open: Option<(String, Descriptor)> = None;
    for (i, l) in lines.iter().enumerate() {
        if let Some(name) = l.label() {
            labels.entry(name).or_insert(i);
            label_lines.push(i);
        }
        match l.kind() {
            LineKind::Directive { name, args } => match name.as_str() {
                ".amdhsa_kernel" => {
                    if let Some(d) = open.take() {
                        descriptors.push(d);
                    }
                    open = Some((
                        args.trim().trim_matches('"').to_string(),
                        Descriptor {
                            start: i,
                            end: i,
                            fields: vec![],
                        },
                    ));
                }
                ".end_amdhsa_kernel" => {
                    if let Some((n, mut d)) = open.take() {
                        d.end = i;
                        descriptors.push((n, d));
                    }
                }
                ".size" => {
                    if let Some((sym, expr)) = args.split_once(',') {
                        let sym = sym.trim();
                        if let Some(end) = expr.trim().strip_suffix(&format!("-{sym}")) {
                            size_end.insert(sym.to_string(), end.trim().to_string());
                        }
                    }
                }
                _ => {}
            },
            LineKind::DescriptorField { name, value } => {
                if let Some((_, d)) = open.as_mut() {
                    d.fields.push(Field {
                        name: name.clone(),
                        value: value.clone(),
                        line: i,
                    });
                    d.end = i;
                }
            }
            LineKind::Set { name, value } => sets.push((i, name, value)),
            _ => {}
        }
    }
    if let Some(d) = open.take() {
        descriptors.push(d);
    }
    let metadata = parse_metadata(lines);
    let mut meta_by_name: HashMap<String, KernelMetadata> = HashMap::new();
    let mut names: Vec<String> = descriptors.iter().map(|(n, _)| n.clone()).collect();
    if let Some(md) = metadata {
        let mut seen: std::collections::HashSet<String> = names.iter().cloned().collect();
        for k in md.kernels {
            if let Some((_, n)) = &k.name {
                if seen.insert(n.clone()) {
                    names.push(n.clone());
                }
                meta_by_name.entry(n.clone()).or_insert(k);
            }
        }
    }
    let mut desc_by_name: HashMap<String, Descriptor> = HashMap::new();
    for (n, d) in descriptors {
        desc_by_name.entry(n).or_insert(d);
    }
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut kernel_sets: Vec<Vec<SetLine>> = vec![vec![]; names.len()];
    for (line, sym, value) in sets {
        let Some((prefix, field)) = sym.rsplit_once('.') else {
            continue;
        };
        let k = index
            .get(prefix)
            .or_else(|| prefix.strip_prefix(".L").and_then(|p| index.get(p)));
        if let Some(&k) = k {
            kernel_sets[k].push(SetLine {
                symbol: sym.to_string(),
                field: field.to_string(),
                value: value.to_string(),
                line,
            });
        }
    }
    // `.Lfunc_end` labels and kernel symbol labels, in line order: a
    // kernel's code ends at its end label, else at the first `.Lfunc_end`
    // after it, and never past the next kernel's symbol (lifted code and
    // hand-written asm have `.size k, 1234` and no end label), so that
    // every line belongs to at most one kernel and the kernels cost what
    // the file holds, not kernels × file.
    let func_ends: Vec<usize> = label_lines
        .iter()
        .copied()
        .filter(|&l| {
            lines[l]
                .label()
                .is_some_and(|n| n.starts_with(".Lfunc_end"))
        })
        .collect();
    let mut symbol_lines: Vec<usize> = names
        .iter()
        .filter_map(|n| labels.get(n.as_str()).copied())
        .collect();
    symbol_lines.sort_unstable();
    let mut out = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let symbol_line = labels.get(name.as_str()).copied();
        let next_kernel = |s: usize| {
            symbol_lines
                .get(symbol_lines.partition_point(|&l| l <= s))
                .copied()
                .unwrap_or(lines.len())
        };
        let end_line = symbol_line.and_then(|s| {
            size_end
                .get(name)
                .and_then(|e| labels.get(e.as_str()).copied())
                .filter(|&e| e > s)
                .or_else(|| {
                    // First `.Lfunc_end` label after the symbol, before the
                    // next kernel.
                    let from = func_ends.partition_point(|&l| l <= s);
                    func_ends.get(from).copied().filter(|&e| e < next_kernel(s))
                })
        });
        let code = match symbol_line {
            Some(s) => s..end_line.unwrap_or(lines.len()).min(next_kernel(s)),
            None => 0..0,
        };
        let mut blocks = vec![];
        let from = label_lines.partition_point(|&l| l < code.start);
        let to = label_lines.partition_point(|&l| l < code.end);
        let starts: Vec<usize> = label_lines[from..to]
            .iter()
            .copied()
            .filter(|&l| in_text[l])
            .collect();
        for (j, &s) in starts.iter().enumerate() {
            let limit = starts.get(j + 1).copied().unwrap_or(code.end);
            let end = (s + 1..limit).find(|&l| !in_text[l]).unwrap_or(limit);
            blocks.push(Block {
                label: lines[s].label().unwrap_or_default().to_string(),
                lines: s..end,
            });
        }
        out.push(Kernel {
            name: name.clone(),
            symbol_line,
            end_line,
            code,
            blocks,
            descriptor: desc_by_name.remove(name),
            sets: std::mem::take(&mut kernel_sets[k]),
            metadata: meta_by_name.remove(name),
        });
    }
    out
}
