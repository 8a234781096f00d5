//! What the fuzz targets check, shared by `cargo fuzz` (fuzz/fuzz_targets/)
//! and the stable test that replays fuzz/corpus and fuzz/regressions
//! (gcn-patch/tests/it/fuzz_corpus.rs). Every check: no panic on any input,
//! plus the property named on each function. A failed property panics, which
//! is what libFuzzer and the replay test report.

#![allow(dead_code)]

use std::path::Path;

use gcn_embed::elf::{read_header, EFlags};
use gcn_embed::select::compatibility;
use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::config::manifest::{Manifest, PatchFile};
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::pipeline::prepare_traced;
use gcn_patch::stage::retarget::RetargetOptions;

/// Targets the asm checks retarget to: one per generation with its own syntax.
const TARGETS: [&str; 3] = ["gfx942", "gfx1100", "gfx1201"];

/// Split at the first NUL byte: two inputs from one.
fn halves(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// The asm parser: `print(parse(x)) == x` for the parser and the document
/// model; then the whole per-job pipeline (string check, structure,
/// retarget, register budget, wait counters) runs without panicking, and
/// its diagnostics and notes render.
pub fn asm(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = gcn_patch::base::parse::parse(text);
    assert_eq!(file.print(), text, "parse/print is not lossless");
    let _ = file.kernels();
    let _ = file.metadata();
    let doc = Document::from_source(text, "fuzz.s");
    assert_eq!(doc.print(), text, "Document is not lossless");
    for t in TARGETS {
        let opts = RetargetOptions::new(TargetId::parse(t).expect("known target"));
        for policy in [RegisterPolicy::Error, RegisterPolicy::Update] {
            match prepare_traced("fuzz", Some(&doc), &doc, &opts, policy) {
                Ok(p) => p.notes.iter().for_each(|n| drop(n.render())),
                Err(d) => drop(d.to_string()),
            }
        }
    }
}

/// The manifest: any text parses or is refused with diagnostics, which render.
pub fn manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Manifest::parse(text, Path::new("fuzz/kernels.toml")) {
        Ok(m) => {
            let _ = m.input_files();
        }
        Err(d) => {
            let _ = d.to_string();
        }
    }
}

/// Unified diffs. Input: `dump NUL other`.
/// 1. `other` as a patch file applied to `dump`: applies or is refused.
/// 2. The diff from `dump` to `other` (made by diffy) applied to `dump`
///    gives exactly `other`, or is refused (an ambiguous context): never a
///    different text.
pub fn diff(data: &[u8]) {
    let (a, b) = halves(data);
    let (Ok(a), Ok(b)) = (std::str::from_utf8(a), std::str::from_utf8(b)) else {
        return;
    };
    let doc = Document::from_source(a, "k.s");
    let pf = PatchFile {
        path: "p.diff".into(),
        rel: "p.diff".into(),
    };
    let rel = Path::new("k.s");
    if let Err(d) = gcn_patch::support::apply_diff_text(&doc, b, &pf, rel) {
        let _ = d.render();
    }
    let made = diffy::create_patch(a, b).to_string();
    if !made.contains("\n@@") {
        return; // no change: diffy writes no hunk
    }
    let made = made.replacen("--- original\n", "--- a/k.s\n", 1).replacen(
        "+++ modified\n",
        "+++ b/k.s\n",
        1,
    );
    if let Ok(out) = gcn_patch::support::apply_diff_text(&doc, &made, &pf, rel) {
        assert_eq!(
            out.print(),
            b,
            "a diff made by diffy applied to something else\n{made}"
        );
    }
}

/// Target IDs (`gfx942:sramecc+:xnack-`, HSA ISA names, families): parsing
/// never panics; a parsed ID prints canonically and parses back to itself.
pub fn target_id(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = TargetId::parse(text) {
        let shown = t.to_string();
        assert_eq!(TargetId::parse(&shown), Ok(t), "{text:?} -> {shown:?}");
        assert_eq!(TargetId::parse(&t.name()), Ok(t), "{text:?} -> name");
    }
    let _ = gcn_embed::family::expand(text);
    let _ = gcn_embed::family::processors_for_product(text);
}

/// `e_flags` decoding and selection. Input: 4 bytes of `e_flags`, then an
/// ELF image or agent name. Decoding is stable under re-encoding; flags
/// that name a target ID encode back from it; reading any bytes as an ELF
/// header never panics; the selection rule accepts an object for an agent
/// of its own target, and never panics.
pub fn eflags(data: &[u8]) {
    if data.len() >= 4 {
        let raw = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        let d = EFlags::decode(raw);
        assert_eq!(
            EFlags::decode(d.encode()),
            d,
            "decode(encode(decode({raw:#x})))"
        );
        if let Some(t) = d.target_id() {
            assert_eq!(
                EFlags::for_target(&t).target_id(),
                Some(t),
                "{raw:#x} names {t}"
            );
            let g = d.generic_version;
            if !t.processor.is_generic || d.is_generic() {
                assert!(compatibility(&t, g, &t).is_ok(), "{t} rejects itself");
            }
            if let Ok(Ok(agent)) = std::str::from_utf8(&data[4..]).map(TargetId::parse) {
                let _ = compatibility(&t, g, &agent);
            }
        }
    }
    if let Ok(h) = read_header(data) {
        let f = h.flags();
        let _ = f.target_id();
        let _ = h.code_object_version();
    }
}

// ---------------------------------------------------------------------------
// Structure-aware: manifests' rules, applied to real corpus asm.
// ---------------------------------------------------------------------------

/// The real dumps the `rules` target patches (paths from the repository
/// root; both fuzz/ and gcn-patch/ sit one level below it) with the target
/// each was compiled for and another of its generation to retarget to.
const RULE_SOURCES: [(&str, &str, &str); 4] = [
    ("tests/corpus/hip/gfx942/saxpy.s", "gfx942", "gfx950"),
    ("tests/corpus/hip/gfx942/reduce.s", "gfx942", "gfx90a"),
    (
        "tests/corpus/hip/gfx1100/reduce.s",
        "gfx1100",
        "gfx11-generic",
    ),
    (
        "tests/corpus/hip/gfx1201/saxpy.s",
        "gfx1201",
        "gfx12-generic",
    ),
];

/// A line pattern as the fuzzer picks it: mostly from the dump itself, so
/// rules match and the edits run.
#[derive(Debug, arbitrary::Arbitrary)]
pub enum Pat {
    /// Line N (mod the line count) of the dump, its code as written.
    Line(u16),
    /// The mnemonic of line N's instruction.
    Mnemonic(u16),
    /// Label N of the dump (with its `:`).
    Label(u8),
    /// A regex built from line N: its code with digits as `\d+`.
    Regex(u16),
    /// Any text.
    Text(String),
}

/// A count as written: a number, `"last"`, `"any"`, or any word.
#[derive(Debug, arbitrary::Arbitrary)]
pub enum Num {
    /// An integer (0, negative and huge ones included).
    Int(i64),
    /// A small positive integer (most counts that match).
    Small(u8),
    /// `"last"`.
    Last,
    /// `"any"`.
    Any,
    /// Any string.
    Word(String),
}

/// The kind key of a rule.
#[derive(Debug, arbitrary::Arbitrary)]
pub enum RuleKind {
    /// `move = …` with an anchor.
    Move,
    /// `replace = …`, `with = …`.
    Replace,
    /// `insert = [...]` before/after an anchor.
    Insert,
    /// `delete = …`.
    Delete,
    /// `set-waitcnt = …`, `counter`, `value`.
    SetWaitcnt,
    /// `set = ".amdhsa_…"`, `value`.
    Set,
}

/// One `[[kernel.source.rule]]`, any combination of keys.
#[derive(Debug, arbitrary::Arbitrary)]
pub struct RuleSpec {
    kind: RuleKind,
    pattern: Pat,
    regex: bool,
    kernel: Option<Pat>,
    block: Option<Pat>,
    occurrence: Option<Num>,
    expect: Option<Num>,
    before: Option<Pat>,
    after: Option<Pat>,
    anchor_occurrence: Option<Num>,
    with: Option<Pat>,
    lines: Vec<Pat>,
    counter: Option<u8>,
    value: Option<Num>,
}

/// A manifest of one source with up to 6 rules.
#[derive(Debug, arbitrary::Arbitrary)]
pub struct RulesInput {
    source: u8,
    retarget: bool,
    rules: Vec<RuleSpec>,
}

fn repo_root() -> &'static Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the crate sits in the repository")
            .to_path_buf()
    })
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn pat(p: &Pat, lines: &[&str], labels: &[&str]) -> String {
    let at = |n: u16| lines[n as usize % lines.len()];
    let code = |n: u16| {
        gcn_patch::base::parse::strip_comment(at(n))
            .trim()
            .to_string()
    };
    match p {
        Pat::Line(n) => code(*n),
        Pat::Mnemonic(n) => code(*n).split_whitespace().next().unwrap_or("").to_string(),
        Pat::Label(n) if !labels.is_empty() => labels[*n as usize % labels.len()].to_string(),
        Pat::Label(_) => ".LBB0_1:".into(),
        Pat::Regex(n) => {
            let mut out = String::new();
            let mut digits = false;
            for c in code(*n).chars() {
                if c.is_ascii_digit() {
                    if !digits {
                        out.push_str("\\d+");
                    }
                    digits = true;
                    continue;
                }
                digits = false;
                if "()[]{}.+*?^$|\\".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
        Pat::Text(s) => s.clone(),
    }
}

fn num(n: &Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Small(i) => i.to_string(),
        Num::Last => "\"last\"".into(),
        Num::Any => "\"any\"".into(),
        Num::Word(w) => q(w),
    }
}

/// The manifest text of `input` against the dump `text` at `asm`.
pub fn rules_manifest(input: &RulesInput, asm: &str, text: &str, targets: &[&str]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let labels: Vec<&str> = lines
        .iter()
        .filter(|l| l.trim_end().ends_with(':') && !l.starts_with(char::is_whitespace))
        .map(|l| l.trim_end())
        .collect();
    let p = |x: &Pat| q(&pat(x, &lines, &labels));
    let mut m = format!(
        "[[kernel]]\nname = \"k\"\n\n[[kernel.source]]\nasm = {}\nsha256 = \"{}\"\ntargets = [{}]\n",
        q(asm),
        gcn_embed::sha256_hex(text.as_bytes()),
        targets.iter().map(|t| q(t)).collect::<Vec<_>>().join(", ")
    );
    const COUNTERS: [&str; 11] = [
        "vmcnt",
        "lgkmcnt",
        "expcnt",
        "vscnt",
        "loadcnt",
        "storecnt",
        "dscnt",
        "kmcnt",
        "samplecnt",
        "bvhcnt",
        "nocnt",
    ];
    for r in input.rules.iter().take(6) {
        m.push_str("\n[[kernel.source.rule]]\n");
        let key = match r.kind {
            RuleKind::Move => "move",
            RuleKind::Replace => "replace",
            RuleKind::Insert => "insert",
            RuleKind::Delete => "delete",
            RuleKind::SetWaitcnt => "set-waitcnt",
            RuleKind::Set => "set",
        };
        if matches!(r.kind, RuleKind::Insert) {
            let ls: Vec<String> = r.lines.iter().take(4).map(&p).collect();
            m.push_str(&format!("insert = [{}]\n", ls.join(", ")));
        } else {
            m.push_str(&format!("{key} = {}\n", p(&r.pattern)));
        }
        if r.regex {
            m.push_str("regex = true\n");
        }
        for (k, v) in [
            ("kernel", &r.kernel),
            ("block", &r.block),
            ("before", &r.before),
            ("after", &r.after),
            ("with", &r.with),
        ] {
            if let Some(v) = v {
                m.push_str(&format!("{k} = {}\n", p(v)));
            }
        }
        for (k, v) in [
            ("occurrence", &r.occurrence),
            ("expect", &r.expect),
            ("anchor-occurrence", &r.anchor_occurrence),
            ("value", &r.value),
        ] {
            if let Some(v) = v {
                m.push_str(&format!("{k} = {}\n", num(v)));
            }
        }
        if let Some(c) = r.counter {
            m.push_str(&format!(
                "counter = {}\n",
                q(COUNTERS[c as usize % COUNTERS.len()])
            ));
        }
    }
    m
}

/// Rules: an arbitrary rule table (built with `arbitrary` over the rule
/// schema, patterns mostly taken from the dump) in a manifest over a real
/// corpus dump; the manifest is read, the rules applied, and every job
/// retargeted and checked (structure, control flow, registers, waits,
/// hazards; no assembler). Nothing panics, every diagnostic renders, and a
/// job that patches cleanly keeps a parseable, lossless document.
pub fn rules(data: &[u8]) {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(input) = <RulesInput as arbitrary::Arbitrary>::arbitrary(&mut u) else {
        return;
    };
    let (rel, own, other) = RULE_SOURCES[input.source as usize % RULE_SOURCES.len()];
    let asm = repo_root().join(rel);
    let text = std::fs::read_to_string(&asm).expect("the corpus dump (run from a checkout)");
    let targets: Vec<&str> = if input.retarget {
        vec![own, other]
    } else {
        vec![own]
    };
    // The manifest "lives" at the repository root: its asm path is relative
    // (an absolute one is refused, and nothing would reach the rules).
    let manifest = rules_manifest(&input, rel, &text, &targets);
    let m = match Manifest::parse(&manifest, &repo_root().join("fuzz-rules.toml")) {
        Ok(m) => m,
        Err(d) => {
            let _ = d.to_string();
            return;
        }
    };
    let plan = match gcn_patch::pipeline::plan(&m, &[]) {
        Ok(p) => p,
        Err(d) => {
            let _ = d.to_string();
            return;
        }
    };
    for job in &plan.jobs {
        if let Ok(p) = gcn_patch::pipeline::load(&m, job.kernel, job.source) {
            let printed = p.patched.print();
            assert_eq!(
                gcn_patch::base::parse::parse(&printed).print(),
                printed,
                "patched text does not reparse losslessly"
            );
        }
        match gcn_patch::pipeline::prepare(&m, &plan, job, 22) {
            Ok(p) => p.notes.iter().for_each(|n| drop(n.render())),
            Err(d) => drop(d.to_string()),
        }
    }
}

// ---------------------------------------------------------------------------
// Binary readers: untrusted files `lift` and `import` take.
// ---------------------------------------------------------------------------

/// Every member a container yields is read as a code object too.
fn members(bytes: &[u8], name: &str) {
    use gcn_patch::support::lift::code_objects;
    match code_objects(bytes, Path::new(name)) {
        Ok(c) => {
            for m in &c.members {
                let _ = m.target.name();
                elf(&m.bytes);
            }
        }
        Err(d) => drop(d.render()),
    }
}

/// ELF code objects: `lift::elf::read` (headers, sections, symbols,
/// descriptors, the metadata note) never panics; what it reads is
/// consistent (kernels have descriptors), and a metadata note decodes or
/// is refused.
pub fn elf(data: &[u8]) {
    match gcn_patch::support::lift::read(data, Path::new("fuzz.co")) {
        Ok(co) => {
            let _ = co.target.name();
            let _ = co.kernels();
            if let Some(m) = &co.metadata {
                let _ = gcn_patch::support::lift::canonical(m);
            }
        }
        Err(d) => drop(d.render()),
    }
}

/// The metadata note's MessagePack: decodes to a canonical text or is
/// refused; a decoded document's text is stable (decoding the same bytes
/// twice gives the same text).
pub fn note(data: &[u8]) {
    if let Ok(a) = gcn_patch::support::lift::canonical(data) {
        assert_eq!(gcn_patch::support::lift::canonical(data), Ok(a));
    }
}

/// Clang offload bundles, plain (`__CLANG_OFFLOAD_BUNDLE__`) or compressed
/// (`CCOB`, zstd or zlib): the input is given the magic its first byte asks
/// for, so that the fuzzer spends its time past it.
pub fn bundle(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = match first % 3 {
        0 => b"__CLANG_OFFLOAD_BUNDLE__".to_vec(),
        1 => b"CCOB".to_vec(),
        _ => Vec::new(),
    };
    bytes.extend_from_slice(rest);
    members(&bytes, "fuzz.hipfb");
}

/// HIP host objects and executables (an x86-64 ELF whose `.hip_fatbin`
/// holds a bundle).
pub fn host(data: &[u8]) {
    members(data, "fuzz-host.o");
}

/// IREE `.vmfb` flatbuffers and the code objects inside.
pub fn vmfb(data: &[u8]) {
    members(data, "fuzz.vmfb");
}

/// The emulator (gcn-emu) on hostile objects, listings and launches.
///
/// The input: byte 0 chooses the mode (odd: the rest is a `.npy` file);
/// bytes 1..17 are the launch (grid X/Y/Z as u32, block X/Y/Z as u16,
/// dynamic LDS as u16 × 16, the schedule seed and the sanitizer bit);
/// then a code object, and after the marker `\0\0LISTING\0\0` the
/// `llvm-objdump -d` listing its kernels are decoded from. Each kernel with
/// a listing runs under small limits (2,000 instructions per wave, 20,000
/// over the dispatch, 64 MiB), one thread. Properties: no panic; errors
/// render; a clean run executed no more than the total work budget; the
/// dispatch leaves no allocation of its own behind in the `Memory`.
pub fn emu(data: &[u8]) {
    use gcn_emu::decode::Program;
    use gcn_emu::dispatch::{ArgValue, Launch};
    use gcn_emu::load::CodeObject;
    use gcn_emu::memory::Memory;
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 1 {
        if let Ok(a) = gcn_emu::npy::Array::parse(rest) {
            let n: usize = a.shape.iter().product();
            assert_eq!(
                a.data.len(),
                n * gcn_emu::npy::descr_size(&a.descr).unwrap()
            );
        }
        return;
    }
    if rest.len() < 17 {
        return;
    }
    let (head, rest) = rest.split_at(17);
    let u32_at = |o: usize| u32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
    let u16_at = |o: usize| u16::from_le_bytes([head[o], head[o + 1]]) as u32;
    let marker = b"\0\0LISTING\0\0";
    let (object, listing) = match rest.windows(marker.len()).position(|w| w == marker) {
        Some(i) => (&rest[..i], &rest[i + marker.len()..]),
        None => (rest, &[][..]),
    };
    let co = match CodeObject::parse(object.to_vec(), "fuzz.co") {
        Ok(co) => co,
        Err(e) => return drop(e.to_string()),
    };
    let listing = String::from_utf8_lossy(listing);
    for kernel in co.kernels.iter().take(2) {
        if listing.is_empty() {
            continue;
        }
        let program = match Program::parse_listing(&listing, kernel) {
            Ok(p) => p,
            Err(e) => {
                drop(e.to_string());
                continue;
            }
        };
        let mem = Memory::new();
        let args: Vec<ArgValue> = kernel
            .args
            .iter()
            .filter(|a| !a.is_hidden())
            .enumerate()
            .map(|(i, a)| {
                if a.is_pointer() {
                    ArgValue::Pointer(mem.alloc_bytes(&format!("arg{i}"), &[0x3c; 256]))
                } else {
                    ArgValue::Bytes(vec![1; (a.size as usize).min(64)])
                }
            })
            .collect();
        let held = mem.allocations();
        let mut launch = Launch::new(
            [u32_at(0), u32_at(4), u32_at(8)],
            [u16_at(12), u16_at(14), head[16] as u32 % 4 + 1],
        );
        launch.dynamic_lds = (head[16] as u32 >> 2) * 1024;
        launch.max_instructions = 2_000;
        launch.max_work = 20_000;
        launch.max_memory = 64 << 20;
        launch.threads = 1;
        launch.sanitize = if head[16] & 0x80 != 0 {
            gcn_emu::sanitize::Checks::ALL
        } else {
            gcn_emu::sanitize::Checks::NONE
        };
        launch.seed = (head[16] & 0x40) as u64;
        match gcn_emu::dispatch::run(&co, kernel, &program, &mem, &args, &launch) {
            Ok(stats) => {
                assert!(
                    stats.instructions <= launch.max_work,
                    "{} instructions over a work budget of {}",
                    stats.instructions,
                    launch.max_work
                );
                stats.findings.iter().for_each(|f| drop(f.to_string()));
            }
            Err(e) => drop(e.to_string()),
        }
        assert_eq!(
            mem.allocations(),
            held,
            "the dispatch left allocations behind"
        );
    }
}
