//! What the fuzz targets check, shared by `cargo fuzz` (fuzz/fuzz_targets/)
//! and the stable test that replays fuzz/corpus and fuzz/regressions
//! (gcn-patch/tests/fuzz_corpus.rs). Every check: no panic on any input,
//! plus the property named on each function. A failed property panics, which
//! is what libFuzzer and the replay test report.

#![allow(dead_code)]

use std::path::Path;

use gcn_embed::elf::{read_header, EFlags};
use gcn_embed::select::compatibility;
use gcn_embed::TargetId;
use gcn_patch::check::RegisterPolicy;
use gcn_patch::document::Document;
use gcn_patch::manifest::{Manifest, PatchFile};
use gcn_patch::pipeline::prepare_traced;
use gcn_patch::retarget::RetargetOptions;

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
    let file = gcn_patch::parse::parse(text);
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
    if let Err(d) = gcn_patch::patch::diff::apply_diff_text(&doc, b, &pf, rel) {
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
    if let Ok(out) = gcn_patch::patch::diff::apply_diff_text(&doc, &made, &pf, rel) {
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
