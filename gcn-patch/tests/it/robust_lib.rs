//! Robustness of the library entry points: malformed input must give an
//! error (or a faithful model), never a panic. Every call here runs under
//! `catch_unwind` so a panic is reported with the input that caused it.

use crate::common;

use common::corpus;

use std::panic::{catch_unwind, AssertUnwindSafe};

use gcn_embed::{CodeObject, TargetId};
use gcn_patch::base::document::Document;
use gcn_patch::config::manifest::Manifest;
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::stage::retarget::RetargetOptions;
use gcn_patch::stage::verify::Expect;

fn read(rel: &str) -> String {
    let p = corpus().join(rel);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run tests/corpus/regen.sh)", p.display()))
}

/// Run `f`, failing the test with `what` if it panics.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("panicked on {what}: {msg}");
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift), so failures reproduce.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn weird_texts() -> Vec<(String, String)> {
    let saxpy = read("hip/gfx942/saxpy.s");
    let mut v = vec![
        ("empty".to_string(), String::new()),
        ("newline".into(), "\n".into()),
        ("crlf only".into(), "\r\n\r\n".into()),
        ("nul bytes".into(), "\0\0\0".into()),
        (
            "unicode".into(),
            "; ☃ 日本語\n\u{feff}.text\n\tv_mov_b32 v0, 1 ; ü\n".into(),
        ),
        ("crlf saxpy".into(), saxpy.replace('\n', "\r\n")),
        ("cr only saxpy".into(), saxpy.replace('\n', "\r")),
        (
            "long comment".into(),
            format!("; {}\n{saxpy}", "x".repeat(200_000)),
        ),
        (
            "long operand".into(),
            format!("{saxpy}\tv_mov_b32 v0, {}\n", "1".repeat(50_000)),
        ),
        ("long token".into(), "v".repeat(100_000)),
        (
            "unbalanced".into(),
            "\tv_add_f32 v[0:, s[, ]]\n.amdhsa_kernel\n".into(),
        ),
        (
            "kernel without end".into(),
            ".amdhsa_kernel k\n.amdhsa_next_free_vgpr 999999999999999999999\n".into(),
        ),
        (
            "metadata without end".into(),
            ".amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n    .vgpr_count: -1\n".into(),
        ),
        ("duplicated kernels".into(), format!("{saxpy}{saxpy}")),
        (
            "registers out of range".into(),
            "\tv_mov_b32 v4294967296, s[99999999999:0]\n".into(),
        ),
    ];
    for seed in 1..=8u64 {
        let bytes = noise(seed, 4096);
        v.push((
            format!("garbage seed {seed}"),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    v
}

fn opts(target: &str) -> RetargetOptions {
    RetargetOptions::new(TargetId::parse(target).unwrap())
}

#[test]
fn parse_retarget_and_prepare_never_panic_on_weird_text() {
    for (what, text) in weird_texts() {
        let file = no_panic(&what, || gcn_patch::base::parse::parse(&text));
        no_panic(&what, || {
            // The model is lossless whatever the input.
            assert_eq!(file.print(), text, "{what}: parse/print is not lossless");
            let _ = file.kernels();
            let _ = file.metadata();
            let _ = file.target_directive();
            let _ = file.code_object_version();
        });
        let traced = Document::from_source(&text, "weird.s");
        for target in ["gfx942", "gfx1100", "gfx9-4-generic"] {
            let o = opts(target);
            no_panic(&format!("{what} retarget {target}"), || {
                let _ = gcn_patch::stage::retarget::retarget(&traced, &o);
            });
            no_panic(&format!("{what} prepare {target}"), || {
                let _ = gcn_patch::pipeline::prepare_traced(
                    "weird",
                    Some(&traced),
                    &traced,
                    &o,
                    RegisterPolicy::Error,
                );
            });
        }
    }
}

/// A dump cut at any line is either a complete dump or an error that says
/// where the input ends; it is never silently accepted with fewer kernels.
#[test]
fn truncated_dumps_are_rejected_not_half_built() {
    for (rel, target, step) in [
        ("iree/gfx942/matmul.rocmasm", "gfx942", 7),
        ("hip/gfx942/saxpy.s", "gfx942", 3),
        ("hip/gfx1100/reduce.s", "gfx1100", 5),
    ] {
        let text = read(rel);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let o = opts(target);
        for cut in (0..lines.len()).step_by(step) {
            let part: String = lines[..cut].concat();
            let what = format!("{rel} cut after line {cut}");
            let traced = Document::from_source(&part, rel);
            let r = no_panic(&what, || {
                gcn_patch::pipeline::prepare_traced("t", None, &traced, &o, RegisterPolicy::Error)
            });
            let has_end = part.contains(".end_amdgpu_metadata");
            match r {
                Ok(p) => {
                    assert!(has_end, "{what}: accepted a dump without its metadata");
                    assert!(!p.symbols.is_empty(), "{what}: accepted with no kernel");
                }
                Err(d) => {
                    let first = &d.0[0];
                    // An empty text has no line to point at (the CLI names the file).
                    assert!(
                        first.location.is_some() || cut == 0,
                        "{what}: error does not say where:\n{d}"
                    );
                    assert!(!first.help.is_empty(), "{what}: error has no help:\n{d}");
                }
            }
        }
    }
}

#[test]
fn kernel_without_metadata_and_metadata_without_kernel_are_errors() {
    let text = read("hip/gfx942/saxpy.s");
    let md = text.find(".amdgpu_metadata").expect("metadata in saxpy.s");
    let kd = text.find(".amdhsa_kernel").expect("kernel in saxpy.s");
    let kd_end = text.find(".end_amdhsa_kernel").expect("end of kernel") + 19;
    let no_metadata = &text[..md];
    let no_kernel = format!("{}{}", &text[..kd], &text[kd_end..]);
    let o = opts("gfx942");
    for (what, t, expect) in [
        (
            "kernel without metadata",
            no_metadata.to_string(),
            "no complete `.amdgpu_metadata`",
        ),
        ("metadata without kernel", no_kernel, "no `.amdhsa_kernel`"),
    ] {
        let traced = Document::from_source(&t, "saxpy.s");
        let d =
            gcn_patch::pipeline::prepare_traced("saxpy", None, &traced, &o, RegisterPolicy::Error)
                .expect_err(what);
        let shown = d.to_string();
        assert!(shown.contains(expect), "{what}:\n{shown}");
        assert!(shown.contains("saxpy.s:"), "{what}: no file:line:\n{shown}");
        assert!(shown.contains("help:"), "{what}: no help:\n{shown}");
    }
}

#[test]
fn target_id_triple_spellings_never_panic() {
    let heads = [
        "",
        "amdgcn",
        "amdgcn-",
        "amdgcn-amd",
        "amdgcn-amd-amdhsa",
        "amdgcn-amd-amdhsa-",
        "amdgcn-amd-amdhsa--",
        "amdgcn-amd-amdhsa-unknown-",
        "amdgpu",
        "amdgpu9",
        "amdgpu9.",
        "amdgpu9.42",
        "amdgpu9.42-",
        "amdgpu9.42-amd-amdhsa",
        "amdgpu9.42-amd-amdhsa-unknown",
        "amdgpu9.42-amd-amdhsa-unknown-",
        "amdgpu99999999999999999999.1-amd-amdhsa-unknown-",
        "amdgpu.-amd-amdhsa-",
        "hipv4-amdgcn-amd-amdhsa--",
        "hipv4-",
        "openmp-amdgpu9.42",
    ];
    let tails = [
        "",
        "gfx942",
        "gfx90a",
        ":",
        "gfx942:",
        "gfx942:xnack+",
        "-",
        "--gfx942",
        "☃",
    ];
    for h in heads {
        for t in tails {
            let s = format!("{h}{t}");
            if let Err(e) = no_panic(&format!("TargetId::parse({s:?})"), || TargetId::parse(&s)) {
                assert!(!e.to_string().is_empty(), "{s:?}: empty error");
            }
        }
    }
}

#[test]
fn target_ids_reject_weird_strings_with_a_reason() {
    let long = "gfx".to_string() + &"9".repeat(10_000);
    let colons = ":".repeat(10_000);
    let inputs = [
        "",
        "gfx",
        ":",
        "::",
        "gfx942:",
        ":xnack+",
        "gfx942:xnack",
        "gfx942:xnack+:xnack-",
        "gfx942:sramecc+:sramecc+",
        "gfx942:xnack+:sramecc+:xnack+",
        "gfx942:foo+",
        "gfx942 ",
        " gfx942",
        "GFX942",
        "gfx942\0",
        "gfx☃",
        "amdgcn-amd-amdhsa--",
        "amdgcn-amd-amdhsa--gfx",
        "amdgpu9.42-amd-amdhsa-unknown-",
        "gfx9-4-generic:xnack",
        "gfx9999999999999999999999",
        &long,
        &colons,
        "\u{202e}gfx942",
    ];
    for s in inputs {
        let shown: String = s.chars().take(40).collect();
        let r = no_panic(&format!("TargetId::parse({shown:?})"), || {
            TargetId::parse(s)
        });
        match r {
            Ok(t) => {
                // Only the lenient spellings (whitespace, case, C string NUL, a
                // new-style triple whose arch names the processor) may parse.
                assert!(
                    [
                        "gfx942 ",
                        " gfx942",
                        "GFX942",
                        "gfx942\0",
                        "amdgpu9.42-amd-amdhsa-unknown-"
                    ]
                    .contains(&s),
                    "{shown:?} parsed as {t}"
                );
            }
            Err(e) => assert!(!e.to_string().is_empty(), "{shown:?}: empty error"),
        }
        no_panic(&format!("family::expand({shown:?})"), || {
            let _ = gcn_embed::family::expand(s);
        });
    }
}

fn elf_mutations() -> Vec<(String, Vec<u8>)> {
    let p = corpus().join("iree/gfx942/matmul.hsaco");
    let good = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut v = vec![("empty".to_string(), vec![])];
    // Every prefix of the headers, then every 97th length.
    for n in (1..good.len()).filter(|n| *n <= 512 || n % 97 == 0) {
        v.push((format!("first {n} bytes"), good[..n].to_vec()));
    }
    // Corrupt each header byte, and section/program header tables.
    for i in 0..64 {
        for val in [0x00, 0xff, 0x7f] {
            let mut b = good.clone();
            b[i] = val;
            v.push((format!("byte {i} = {val:#x}"), b));
        }
    }
    for seed in 1..=16u64 {
        let mut b = good.clone();
        let n = noise(seed, 64);
        let at = (seed as usize * 131) % (good.len() - 64);
        b[at..at + 64].copy_from_slice(&n);
        v.push((format!("noise at {at}"), b));
    }
    let mut elf_garbage = b"\x7fELF\x02\x01\x01\x40".to_vec();
    elf_garbage.extend(noise(7, 200));
    v.push(("ELF magic then garbage".into(), elf_garbage));
    v.push(("random".into(), noise(3, 4096)));
    v
}

#[test]
fn elf_readers_verify_and_select_never_panic_on_bad_bytes() {
    let expect = Expect {
        target: TargetId::parse("gfx942").unwrap(),
        code_object_version: 5,
        kernels: vec!["matmul_dispatch_0_matmul_256x256x256_f16xf16xf32".into()],
    };
    for (what, bytes) in elf_mutations() {
        // `CodeObject` wants 'static bytes: leak the (small) test inputs.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        no_panic(&what, || {
            let _ = gcn_embed::elf::read_header(bytes);
            let _ = gcn_patch::stage::verify::section_bytes(bytes, ".text");
            let _ = gcn_patch::stage::verify::kernel_descriptors(bytes);
            if let Err(d) = gcn_patch::stage::verify::verify(bytes, &expect) {
                assert!(
                    d.to_string().contains("gfx942"),
                    "{what}: error does not name the target:\n{d}"
                );
            }
            let objects = [CodeObject {
                target: "gfx942",
                bytes,
                sha256: "",
                kernels: &[],
            }];
            let _ = gcn_embed::select(&objects, "gfx942:sramecc+:xnack-");
            let _ = gcn_embed::select(&objects, "not a target");
            let _ = objects[0].verify();
        });
    }
    let truncated: &'static [u8] = Box::leak(vec![0x7f, b'E', b'L'].into_boxed_slice());
    let objects = [CodeObject {
        target: "gfx942",
        bytes: truncated,
        sha256: "",
        kernels: &[],
    }];
    let e = gcn_embed::select(&objects, "gfx942").expect_err("truncated ELF selected");
    assert!(e.to_string().contains("gfx942"), "{e}");
}

/// Manifests that must be rejected with a located error, never a panic.
#[test]
fn bad_manifests_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus().join("hip/gfx942/saxpy.s"),
        dir.path().join("saxpy.s"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("out.s")).unwrap();
    let src = |extra: &str| {
        format!("[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\ntargets = [\"gfx942\"]\n{extra}")
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "wrong type",
            "[[kernel]]\nname = 5\n".into(),
            "invalid type",
        ),
        ("not a table", "kernel = \"x\"\n".into(), "invalid"),
        ("unknown key", src("colour = \"red\""), "unknown field"),
        (
            "unknown top key",
            format!("[extra]\n{}", src("")),
            "unknown field",
        ),
        (
            "duplicate",
            format!("{}{}", src(""), src("")),
            "declared twice",
        ),
        (
            "same target twice",
            format!(
                "{}{}",
                src(""),
                src("").replace("[[kernel]]\nname = \"saxpy\"\n", "")
            ),
            "gets gfx942 from two sources",
        ),
        ("bad sha", src("sha256 = \"xyz\""), "64 lowercase hex"),
        (
            "upper sha",
            src(&format!("sha256 = \"{}\"", "A".repeat(64))),
            "64 lowercase hex",
        ),
        ("sha type", src("sha256 = 12"), "invalid type"),
        (
            "escaping",
            src("").replace("saxpy.s", "../saxpy.s"),
            "escapes",
        ),
        (
            "absolute",
            src("").replace("saxpy.s", "/etc/passwd"),
            "escapes",
        ),
        ("symlink", src("").replace("saxpy.s", "out.s"), "escapes"),
        ("directory", src("").replace("saxpy.s", "sub"), "not a file"),
        ("missing", src("").replace("saxpy.s", "nope.s"), "nope.s"),
        (
            "missing patch",
            src("patches = [\"nope.diff\"]"),
            "nope.diff",
        ),
        (
            "bad target",
            src("").replace("gfx942", "gfx9420"),
            "gfx9420",
        ),
        (
            "empty targets",
            src("").replace("[\"gfx942\"]", "[]"),
            "no targets",
        ),
        (
            "bad name",
            src("").replace("\"saxpy\"", "\"sa xpy\""),
            "identifier",
        ),
        (
            "bad regex",
            src("[[kernel.source.rule]]\ndelete = '(x'\nregex = true"),
            "invalid regex",
        ),
        (
            "bad expect",
            src("[[kernel.source.rule]]\ndelete = 'x'\nexpect = 'x'"),
            "expect",
        ),
        (
            "huge expect",
            src("[[kernel.source.rule]]\ndelete = 'x'\nexpect = 99999999999999999999"),
            "invalid",
        ),
        (
            "empty rule",
            src("[[kernel.source.rule]]\ndelete = ''"),
            "empty pattern",
        ),
        (
            "no action",
            src("[[kernel.source.rule]]\nregex = true"),
            "rule",
        ),
        (
            "cov",
            format!("[defaults]\ncode-object-version = 99\n{}", src("")),
            "code-object-version",
        ),
        ("syntax", "[[kernel]\nname=".into(), "invalid manifest"),
        ("nul", "\0\0".into(), "invalid manifest"),
        ("unicode key", src("名前 = 1"), "invalid"),
    ];
    let path = dir.path().join("kernels.toml");
    for (what, text, expect) in cases {
        let r = no_panic(what, || Manifest::parse(&text, &path));
        let d = match r {
            Ok(_) => panic!("{what}: accepted:\n{text}"),
            Err(d) => d.to_string(),
        };
        assert!(d.contains(expect), "{what}: expected `{expect}` in:\n{d}");
        assert!(
            d.contains("kernels.toml:"),
            "{what}: error not located in the manifest:\n{d}"
        );
        assert!(d.contains("help:"), "{what}: no help:\n{d}");
    }
}

/// Patches that are garbage, empty or not diffs: the patch stage errors
/// name the patch file, the plan collects them, nothing panics.
#[test]
fn garbage_patches_are_errors_naming_the_patch() {
    let dir = tempfile::tempdir().unwrap();
    let asm = dir.path().join("saxpy.s");
    std::fs::copy(corpus().join("hip/gfx942/saxpy.s"), &asm).unwrap();
    let sha = gcn_embed::sha256_hex(&std::fs::read(&asm).unwrap());
    let hunk_only = "@@ -1,1 +1,1 @@\n-x\n+y\n";
    let bad_counts = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -99999999999999999999,1 +1 @@\n-x\n+y\n";
    let past_end = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -9999,2 +9999,2 @@\n-x\n-y\n+z\n";
    let truncated = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -1,5 +1,5 @@\n \t.text\n";
    let binary = String::from_utf8_lossy(&noise(5, 300)).into_owned();
    for (what, body) in [
        ("empty", ""),
        ("text", "hello\n"),
        ("hunk without header", hunk_only),
        ("huge line number", bad_counts),
        ("past the end", past_end),
        ("truncated hunk", truncated),
        ("binary", binary.as_str()),
    ] {
        std::fs::write(dir.path().join("p.diff"), body).unwrap();
        let text = format!(
            "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"saxpy.s\"\nsha256 = \"{sha}\"\ntargets = [\"gfx942\"]\npatches = [\"p.diff\"]\n"
        );
        let m = Manifest::parse(&text, &dir.path().join("kernels.toml")).expect(what);
        let r = no_panic(what, || gcn_patch::pipeline::plan(&m, &[]));
        let d = r.expect_err(what).to_string();
        assert!(d.contains("p.diff"), "{what}: patch not named:\n{d}");
        assert!(d.contains("help:"), "{what}: no help:\n{d}");
    }
}

/// `pipeline::build` replaces `out` only with an object that passed
/// verification: when verification fails, the previous file is untouched
/// and no temp file is left next to it.
#[test]
fn failed_verification_leaves_an_existing_output_untouched() {
    use gcn_patch::stage::toolchain::{Toolchain, ToolchainConfig};
    let tc = Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
        .unwrap_or_else(|d| panic!("{d}\n(apt-get install -y clang-22 lld-22 llvm-22)"));
    let text = read("hip/gfx942/saxpy.s");
    let traced = Document::from_source(&text, "saxpy.s");
    let mut prepared = gcn_patch::pipeline::prepare_traced(
        "saxpy",
        None,
        &traced,
        &opts("gfx942"),
        RegisterPolicy::Error,
    )
    .expect("saxpy prepares");
    // Expect a kernel the code object does not define: verification fails after linking.
    prepared.symbols.push("ghost".into());
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = dir.path().join("saxpy.hsaco");
    std::fs::write(&out, "previous build").unwrap();
    let d = gcn_patch::pipeline::build(&tc, &prepared, work.path(), &out)
        .expect_err("verification must fail")
        .to_string();
    assert!(d.contains("ghost.kd"), "{d}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous build");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temp files left"
    );
    // Without the ghost, the same call replaces the file.
    prepared.symbols.pop();
    gcn_patch::pipeline::build(&tc, &prepared, work.path(), &out).expect("builds");
    assert!(gcn_embed::elf::read_header(&std::fs::read(&out).unwrap()).is_ok());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temp files left"
    );
}

/// Checking sources in parallel (`plan_with`, used by gcn-build and `gcn-patch
/// build`) gives the plan `plan` gives one source at a time: the same jobs,
/// every source checked, and the same errors in the same order.
#[test]
fn parallel_plan_equals_sequential_plan() {
    use gcn_patch::base::jobs::Unlimited;
    use gcn_patch::pipeline::{plan, plan_with};
    let demo = Manifest::load(&common::repo().join("kernels.toml")).expect("demo manifest");
    let one = plan(&demo, &[]).expect("demo plan");
    for workers in [2, 4, 64] {
        let many = plan_with(&demo, &[], workers, &Unlimited).expect("demo plan");
        assert_eq!(many.jobs, one.jobs, "{workers} workers");
        for j in &one.jobs {
            assert!(
                one.checked(j.kernel, j.source) && many.checked(j.kernel, j.source),
                "{workers} workers"
            );
        }
    }
    assert!(one.jobs.len() > 4, "the demo has several sources");

    // Three sources with a stale pin each: every error, in manifest order.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for k in ["a", "b", "c"] {
        std::fs::write(
            dir.path().join(format!("{k}.s")),
            read("hip/gfx942/saxpy.s"),
        )
        .unwrap();
        text.push_str(&format!(
            "[[kernel]]\nname = \"{k}\"\n[[kernel.source]]\nasm = \"{k}.s\"\nsha256 = \"{}\"\ntargets = [\"gfx942\"]\n",
            "0".repeat(64)
        ));
    }
    let m = Manifest::parse(&text, &dir.path().join("kernels.toml")).expect("manifest");
    let errors = |workers| {
        plan_with(&m, &[], workers, &Unlimited)
            .expect_err("stale pins")
            .0
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    };
    let sequential = errors(1);
    assert_eq!(sequential.len(), 3, "{sequential:#?}");
    for (d, k) in sequential.iter().zip(["a.s", "b.s", "c.s"]) {
        assert!(d.contains(k), "errors out of order: {sequential:#?}");
    }
    assert_eq!(errors(3), sequential);
}
