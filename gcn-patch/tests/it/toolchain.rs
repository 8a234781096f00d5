//! Toolchain, assemble, link and verify stages against real clang-22/ld.lld-22
//! and the corpus under tests/corpus.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gcn_embed::TargetId;
use gcn_patch::base::document::{Document, Edits};
use gcn_patch::base::provenance::Origin;
use gcn_patch::stage::assemble::{assemble, AssembleRequest};
use gcn_patch::stage::link::link;
use gcn_patch::stage::toolchain::{LlvmVersion, Toolchain, ToolchainConfig};
use gcn_patch::stage::verify::{kernel_descriptors, section_bytes, verify, Expect};

use common::{corpus, toolchain};

/// The real clang-22 / ld.lld-22 (for symlinks in fake directories).
fn real_tools() -> (PathBuf, PathBuf) {
    let tc = toolchain();
    let clang = tc.clang.canonicalize().unwrap();
    let lld = tc.lld.canonicalize().unwrap();
    (clang, lld)
}

fn env_of(vars: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    move |k| map.get(k).cloned()
}

fn target(s: &str) -> TargetId {
    TargetId::parse(s).unwrap()
}

/// IREE 3.13 spells the triple `amdgpu9.42-amd-amdhsa-unknown-gfx942`; LLVM 22
/// wants `amdgcn-amd-amdhsa--gfx942`.
/// TODO(lead): use the retarget module's normalization once it lands.
fn normalize_iree(text: &str) -> String {
    let re = regex::Regex::new(r"amdgpu[0-9a-z.]+-amd-amdhsa-unknown-(gfx[0-9a-z-]+)").unwrap();
    re.replace_all(text, "amdgcn-amd-amdhsa--$1").into_owned()
}

/// Corpus file as a Document attributed to its path relative to the repository.
fn corpus_traced(rel: &str, normalize: bool) -> Document {
    let text = std::fs::read_to_string(corpus().join(rel)).unwrap();
    let text = if normalize {
        normalize_iree(&text)
    } else {
        text
    };
    Document::from_source(&text, Path::new("tests/corpus").join(rel))
}

fn build(
    tc: &Toolchain,
    asm: &Document,
    t: &TargetId,
    dir: &Path,
    name: &str,
) -> Result<Vec<u8>, gcn_patch::base::diag::Diagnostics> {
    let label = format!("kernel `{name}` for {}", t.name());
    let obj = assemble(&AssembleRequest {
        toolchain: tc,
        asm,
        target: t,
        work_dir: &dir.join("work"),
        name,
        label: &label,
    })?;
    let out = dir.join("out").join(format!("{name}.hsaco"));
    link(tc, &[obj], &out)?;
    Ok(std::fs::read(&out).unwrap())
}

fn normalize_paths(s: &str, dir: &Path) -> String {
    s.replace(&dir.display().to_string(), "[TMP]")
}

// ---------------------------------------------------------------- find

#[test]
fn find_uses_explicit_config_first() {
    let (clang, lld) = real_tools();
    let config = ToolchainConfig {
        llvm_bin: None,
        clang: Some(clang.clone()),
        lld: Some(lld.clone()),
        timeout: None,
        probe_cache: None,
    };
    // Even with a GCN_PATCH_LLVM_BIN pointing elsewhere, config wins.
    let env = env_of(&[("GCN_PATCH_LLVM_BIN", "/nonexistent".into())]);
    let tc = Toolchain::find(&config, &env).unwrap();
    assert_eq!(tc.clang, clang);
    assert_eq!(tc.lld, lld);
    assert_eq!(tc.found_via, "configured `clang`");
    assert!(tc.version.major >= 19, "{:?}", tc.version);
    assert!(tc.version_text.contains("clang version"));
    assert!(tc.identity().contains(&tc.version_text));
}

#[test]
fn find_uses_gcn_patch_llvm_bin() {
    let (clang, lld) = real_tools();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&clang, dir.path().join("clang")).unwrap();
    std::os::unix::fs::symlink(&lld, dir.path().join("ld.lld")).unwrap();
    let env = env_of(&[
        ("GCN_PATCH_LLVM_BIN", dir.path().display().to_string()),
        ("PATH", "/usr/bin:/bin".into()),
    ]);
    let tc = Toolchain::find(&ToolchainConfig::default(), &env).unwrap();
    assert_eq!(tc.clang, dir.path().join("clang"));
    assert_eq!(tc.lld, dir.path().join("ld.lld"));
    assert_eq!(tc.found_via, "$GCN_PATCH_LLVM_BIN");
    // The identity resolves symlinks: same tools, same cache key.
    let via_path = Toolchain::find(
        &ToolchainConfig::default(),
        &env_of(&[("PATH", "/usr/bin:/bin".into())]),
    )
    .unwrap();
    assert_eq!(tc.identity(), via_path.identity());
}

#[test]
fn find_uses_cc_per_target_variable() {
    let (clang, _) = real_tools();
    let env = env_of(&[("CC_amdgcn_amd_amdhsa", clang.display().to_string())]);
    let tc = Toolchain::find(&ToolchainConfig::default(), &env).unwrap();
    assert_eq!(tc.clang, clang);
    assert_eq!(tc.found_via, "$CC_amdgcn_amd_amdhsa");
}

#[test]
fn find_prefers_versioned_names_on_a_fake_path() {
    let (clang, lld) = real_tools();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(&clang, bin.join("clang-22")).unwrap();
    std::os::unix::fs::symlink(&lld, bin.join("ld.lld-22")).unwrap();
    // A plain `clang` too: the versioned name must win.
    std::os::unix::fs::symlink(&clang, bin.join("clang")).unwrap();
    let env = env_of(&[("PATH", format!("/nonexistent:{}", bin.display()))]);
    let tc = Toolchain::find(&ToolchainConfig::default(), &env).unwrap();
    assert_eq!(tc.clang, bin.join("clang-22"));
    assert_eq!(tc.lld, bin.join("ld.lld-22"));
    assert_eq!(tc.found_via, "PATH (clang-22)");
}

#[test]
fn find_rejects_an_explicit_dir_without_ld_lld() {
    let (clang, _) = real_tools();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&clang, dir.path().join("clang")).unwrap();
    let env = env_of(&[
        ("GCN_PATCH_LLVM_BIN", dir.path().display().to_string()),
        ("PATH", "/usr/bin:/bin".into()),
    ]);
    let err = Toolchain::find(&ToolchainConfig::default(), &env).unwrap_err();
    insta::assert_snapshot!(normalize_paths(&err.render(), dir.path()));
}

#[test]
fn find_rejects_an_explicit_clang_that_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let config = ToolchainConfig {
        llvm_bin: Some(dir.path().join("llvm/bin")),
        clang: None,
        lld: None,
        timeout: None,
        probe_cache: None,
    };
    let err = Toolchain::find(&config, &env_of(&[])).unwrap_err();
    insta::assert_snapshot!(normalize_paths(&err.render(), dir.path()));
}

#[test]
fn too_old_llvm_is_rejected_per_target() {
    let mut tc = toolchain();
    tc.version = LlvmVersion {
        major: 19,
        minor: 1,
        patch: 7,
    };
    tc.version_text = "Debian clang version 19.1.7 (3)".into();
    tc.clang = "/usr/bin/clang-19".into();
    tc.found_via = "PATH (clang-19)".into();
    tc.check_target(&target("gfx942")).unwrap();
    tc.check_target(&target("gfx11-generic")).unwrap();
    let err = tc
        .check_target(&target("gfx950:sramecc+:xnack-"))
        .unwrap_err();
    insta::assert_snapshot!(err.render());
    assert!(tc.check_target(&target("gfx9-4-generic")).is_err());
    toolchain().check_target(&target("gfx950")).unwrap();
}

// ---------------------------------------------------------------- IREE gfx9: byte identity

const IREE_OPS: &[&str] = &["matmul", "conv", "softmax"];

#[test]
fn iree_gfx9_dumps_reassemble_to_iree_bytes() {
    let tc = toolchain();
    let kernels: HashMap<&str, &str> = [
        ("matmul", "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32"),
        ("conv", "conv_dispatch_0_conv_32x32x64x3x3x64_f16xf16xf32"),
        (
            "softmax",
            "softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store",
        ),
    ]
    .into();
    for t in ["gfx942", "gfx950", "gfx90a"] {
        let tid = target(t);
        tc.check_target(&tid).unwrap();
        for op in IREE_OPS {
            let asm = corpus_traced(&format!("iree/{t}/{op}.rocmasm"), true);
            let dir = tempfile::tempdir().unwrap();
            let ours =
                build(&tc, &asm, &tid, dir.path(), op).unwrap_or_else(|d| panic!("{t} {op}:\n{d}"));
            let iree = std::fs::read(corpus().join(format!("iree/{t}/{op}.hsaco"))).unwrap();
            for section in [".text", ".rodata"] {
                assert!(
                    section_bytes(&ours, section).unwrap()
                        == section_bytes(&iree, section).unwrap(),
                    "{t} {op}: {section} differs from IREE's"
                );
            }
            let report = verify(
                &ours,
                &Expect {
                    target: tid,
                    code_object_version: 5,
                    kernels: vec![kernels[op].to_string()],
                },
            )
            .unwrap_or_else(|d| panic!("{t} {op}:\n{d}"));
            assert_eq!(report.abi_version, 3);
            // IREE's own object has the same flags and passes the same checks.
            let theirs = verify(
                &iree,
                &Expect {
                    target: tid,
                    code_object_version: 5,
                    kernels: vec![kernels[op].to_string()],
                },
            )
            .unwrap();
            assert_eq!(report.e_flags, theirs.e_flags, "{t} {op}");
            assert_eq!(report.kernels, theirs.kernels, "{t} {op}");
        }
    }
}

// ---------------------------------------------------------------- HIP, incl. generic targets

const HIP_TARGETS: &[&str] = &[
    "gfx908",
    "gfx90a",
    "gfx942",
    "gfx1030",
    "gfx1100",
    "gfx1201",
    "gfx9-generic",
    "gfx9-4-generic",
    "gfx10-3-generic",
    "gfx11-generic",
    "gfx12-generic",
];

#[test]
fn hip_corpus_assembles_links_and_verifies_for_every_target() {
    let tc = toolchain();
    for t in HIP_TARGETS {
        let tid = target(t);
        tc.check_target(&tid).unwrap();
        for kernel in ["saxpy", "reduce"] {
            let asm = corpus_traced(&format!("hip/{t}/{kernel}.s"), false);
            let dir = tempfile::tempdir().unwrap();
            let bytes = build(&tc, &asm, &tid, dir.path(), kernel)
                .unwrap_or_else(|d| panic!("{t} {kernel}:\n{d}"));
            let report = verify(
                &bytes,
                &Expect {
                    target: tid,
                    code_object_version: 6,
                    kernels: vec![kernel.to_string()],
                },
            )
            .unwrap_or_else(|d| panic!("{t} {kernel}:\n{d}"));
            assert_eq!(report.abi_version, 4, "{t} {kernel}");
            assert_eq!(report.e_flags & 0xff, tid.processor.mach, "{t}");
            let generic_version = report.e_flags >> 24;
            if tid.processor.is_generic {
                assert!(generic_version >= 1, "{t}: {:#x}", report.e_flags);
            } else {
                assert_eq!(generic_version, 0, "{t}");
            }
            let kd = &report.kernels[0];
            assert_eq!(kd.name, kernel);
            if kernel == "reduce" {
                // 256 floats in LDS.
                assert_eq!(kd.fields.group_segment_fixed_size, 1024, "{t}");
            }
            assert!(
                kd.fields.kernarg_size >= 20,
                "{t}: saxpy/reduce take 20+ bytes of arguments"
            );
        }
    }
}

#[test]
fn verify_reports_wrong_target_version_and_kernel() {
    let tc = toolchain();
    let tid = target("gfx942");
    let asm = corpus_traced("hip/gfx942/saxpy.s", false);
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(&tc, &asm, &tid, dir.path(), "saxpy").unwrap();
    let err = verify(
        &bytes,
        &Expect {
            target: target("gfx950:xnack-"),
            code_object_version: 5,
            kernels: vec!["saxpy".into(), "daxpy".into()],
        },
    )
    .unwrap_err();
    insta::assert_snapshot!(err.to_string());
    assert!(verify(
        b"not an elf",
        &Expect {
            target: tid,
            code_object_version: 6,
            kernels: vec![],
        }
    )
    .is_err());
}

#[test]
fn kernel_descriptor_fields_decode() {
    let iree = std::fs::read(corpus().join("iree/gfx1100/matmul.hsaco")).unwrap();
    let kds = kernel_descriptors(&iree).unwrap();
    assert_eq!(kds.len(), 1);
    let f = kds[0].fields;
    // The corpus README: IREE's gfx1100 matmul has inst_pref_size 63 in RSRC3 bits 4+.
    assert_eq!((f.compute_pgm_rsrc3 >> 4) & 0x3f, 63);
    assert!(f.kernel_code_entry_byte_offset > 0);
    assert_eq!(&kds[0].bytes[48..52], &f.compute_pgm_rsrc1.to_le_bytes());
}

// ---------------------------------------------------------------- errors mapped to origins

#[test]
fn assembler_error_is_reported_at_the_patch_hunk() {
    let tc = toolchain();
    let tid = target("gfx942");
    let mut asm = corpus_traced("hip/gfx942/saxpy.s", false);
    // Pretend hunk 2 of a patch inserted a bad instruction after the kernel label.
    let at = asm.texts().position(|l| l.starts_with("saxpy:")).unwrap();
    let mut edits = Edits::new();
    edits.insert_after(
        at,
        "\tv_mov_b32 v0, s0, s1 ; patched".to_string(),
        Origin::Patch {
            file: std::path::Path::new("patches/saxpy.diff").into(),
            hunk: 2,
            line: 17,
        },
    );
    asm.apply(edits);
    let dir = tempfile::tempdir().unwrap();
    let err = build(&tc, &asm, &tid, dir.path(), "saxpy").unwrap_err();
    insta::assert_snapshot!(normalize_paths(&err.to_string(), dir.path()));
}

#[test]
fn unsupported_instruction_names_the_first_one() {
    let tc = toolchain();
    // The gfx942 matmul (MFMA) for gfx1100, with the target directive rewritten.
    let tid = target("gfx1100");
    let mut asm = corpus_traced("iree/gfx942/matmul.rocmasm", true);
    let mut edits = Edits::new();
    for i in 0..asm.len() {
        let line = asm.text(i);
        if line.contains("amdgcn-amd-amdhsa--gfx942") {
            edits.replace(
                i,
                line.replace("amdgcn-amd-amdhsa--gfx942", "amdgcn-amd-amdhsa--gfx1100"),
                Origin::Retarget {
                    replaces: Some(Box::new(asm.origin(i).unwrap().clone())),
                    what: "target id for gfx1100".into(),
                },
            );
        }
    }
    asm.apply(edits);
    let dir = tempfile::tempdir().unwrap();
    let err = build(&tc, &asm, &tid, dir.path(), "matmul").unwrap_err();
    let first = err.0[0].render();
    assert!(
        first.contains("kernel `matmul` for gfx1100 does not assemble: first unsupported instruction at tests/corpus/iree/gfx942/matmul.rocmasm:"),
        "{first}"
    );
    insta::assert_snapshot!(first);
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_input_gives_identical_hsaco_in_any_directory() {
    let tc = toolchain();
    let tid = target("gfx942");
    let asm = corpus_traced("iree/gfx942/softmax.rocmasm", true);
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let b_nested = b.path().join("some/deeper/dir");
    let one = build(&tc, &asm, &tid, a.path(), "softmax").unwrap();
    let two = build(&tc, &asm, &tid, &b_nested, "softmax").unwrap();
    assert!(one == two, "hsaco differs between output directories");
    // No absolute path of the work directory leaks into the object or hsaco.
    for (bytes, dir) in [(&one, a.path()), (&two, b_nested.as_path())] {
        let needle = dir.display().to_string();
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "{needle} found in the code object"
        );
    }
    let obj_a = std::fs::read(a.path().join("work/softmax.o")).unwrap();
    let obj_b = std::fs::read(b_nested.join("work/softmax.o")).unwrap();
    assert!(obj_a == obj_b, "objects differ between work directories");
    // The link is atomic: no temporary file is left next to the output.
    let left: Vec<_> = std::fs::read_dir(a.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("softmax.hsaco")]);
}

#[test]
fn newer_llvm_syntax_is_one_error_not_a_cascade() {
    let tc = toolchain();
    let tid = target("gfx1100");
    let asm = corpus_traced("iree/gfx1100/matmul.rocmasm", true);
    let dir = tempfile::tempdir().unwrap();
    let err = build(&tc, &asm, &tid, dir.path(), "matmul").unwrap_err();
    assert_eq!(err.0.len(), 1, "{err}");
    insta::assert_snapshot!(err.to_string().replace(&tc.version.to_string(), "[LLVM]"));
}

#[test]
fn link_errors_name_the_symbol_and_leave_no_output() {
    let tc = toolchain();
    let tid = target("gfx942");
    let asm = Document::from_source(
        "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n\t.text\n\t.globl f\n\t.p2align 8\n\
         \t.type f,@function\nf:\n\ts_getpc_b64 s[0:1]\n\
         \ts_add_u32 s0, s0, missing_table@rel32@lo+4\n\
         \ts_addc_u32 s1, s1, missing_table@rel32@hi+12\n\ts_endpgm\n",
        "f.s",
    );
    let dir = tempfile::tempdir().unwrap();
    let err = build(&tc, &asm, &tid, dir.path(), "f").unwrap_err();
    insta::assert_snapshot!(normalize_paths(&err.to_string(), dir.path()));
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn patch_lines_are_shown_as_written_in_the_patch_file() {
    let tc = toolchain();
    let tid = target("gfx942");
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("fix.diff");
    std::fs::write(
        &patch,
        "--- a/k.s\n+++ b/k.s\n@@ -1,2 +1,3 @@\n \ts_nop 0\n+\ts_mov_b32 s0, v300\n \ts_endpgm\n",
    )
    .unwrap();
    let mut asm = Document::from_source("\ts_nop 0\n\ts_endpgm\n", dir.path().join("k.s"));
    let mut edits = Edits::new();
    edits.insert_before(
        1,
        "\ts_mov_b32 s0, v300".into(),
        Origin::Patch {
            file: patch.as_path().into(),
            hunk: 1,
            line: 5,
        },
    );
    asm.apply(edits);
    let err = build(&tc, &asm, &tid, dir.path(), "k").unwrap_err();
    insta::assert_snapshot!(normalize_paths(&err.to_string(), dir.path()));
}

/// The probe cache: a second search with the same tools starts no process
/// and gives the same toolchain; a changed clang file, or a damaged cache
/// file, is probed again. The clang here is a script that logs each run and
/// runs the real clang.
#[test]
fn probe_cache_skips_probes_while_the_tools_are_the_same_files() {
    let (clang, lld) = real_tools();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("runs.log");
    let wrapper = bin.join("clang");
    let script = |extra: &str| {
        format!(
            "#!/bin/sh\n# {extra}\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            clang.display()
        )
    };
    std::fs::write(&wrapper, script("v1")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&lld, bin.join("ld.lld")).unwrap();
    let cache = dir.path().join("out/toolchain.txt");
    let config = ToolchainConfig {
        llvm_bin: Some(bin.clone()),
        probe_cache: Some(cache.clone()),
        ..ToolchainConfig::default()
    };
    let no_env = env_of(&[]);
    let runs = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let first = Toolchain::find(&config, &no_env).unwrap_or_else(|d| panic!("{d}"));
    let probes = runs();
    assert!(probes >= 2, "--version and -print-targets ran: {probes}");
    assert!(cache.is_file(), "the probes' answers are remembered");
    let second = Toolchain::find(&config, &no_env).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(
        runs(),
        probes,
        "no probe while the tools are the same files"
    );
    assert_eq!(
        (
            &second.clang,
            &second.lld,
            second.version,
            &second.version_text
        ),
        (&first.clang, &first.lld, first.version, &first.version_text)
    );
    // A damaged cache file: probed again, remembered again.
    std::fs::write(&cache, "garbage").unwrap();
    Toolchain::find(&config, &no_env).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(runs(), 2 * probes);
    Toolchain::find(&config, &no_env).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(runs(), 2 * probes);
    // Another clang file (an upgrade in place): probed again.
    std::fs::write(&wrapper, script("v2, a different file")).unwrap();
    Toolchain::find(&config, &no_env).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(runs(), 3 * probes);
    // Without a cache every search probes.
    let uncached = ToolchainConfig {
        probe_cache: None,
        ..config.clone()
    };
    Toolchain::find(&uncached, &no_env).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(runs(), 4 * probes);
}

/// `Toolchain::objdump`, the one llvm-objdump runner (lift, `run`,
/// `objdiff`): a listing of a real object; a file llvm-objdump refuses is an
/// error with the caller's code, its stderr and the command (`objdiff`'s
/// runner used to take whatever it printed and diff that).
#[test]
fn objdump_lists_an_object_and_refuses_what_llvm_objdump_refuses() {
    use gcn_patch::base::diag::Code;
    let tc = toolchain();
    let dir = tempfile::tempdir().unwrap();
    let asm = corpus_traced("hip/gfx942/saxpy.s", false);
    let bytes = build(&tc, &asm, &target("gfx942"), dir.path(), "saxpy").unwrap();
    let hsaco = dir.path().join("saxpy.hsaco");
    std::fs::write(&hsaco, bytes).unwrap();
    let listing = tc
        .objdump(
            [
                "-d".as_ref(),
                "--symbolize-operands".as_ref(),
                hsaco.as_os_str(),
            ],
            "listing saxpy",
            Code::ToolFailed,
        )
        .unwrap();
    assert!(listing.contains("<saxpy>:"), "{listing}");
    assert!(listing.contains("s_endpgm"), "{listing}");
    let junk = dir.path().join("junk.co");
    std::fs::write(&junk, b"not an object").unwrap();
    let e = tc
        .objdump(
            ["-d".as_ref(), junk.as_os_str()],
            "listing junk",
            Code::LiftToolFailed,
        )
        .unwrap_err();
    assert_eq!(e.code, Code::LiftToolFailed);
    assert!(
        e.message.contains("llvm-objdump failed listing junk"),
        "{}",
        e.message
    );
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("command:") && n.contains("junk.co")),
        "{:?}",
        e.notes
    );
}
