//! Triton round trip with the real `triton==3.9.0` (no GPU), the real binary
//! and the real LLVM 22: Triton dumps a kernel, `gcn-patch import` brings it
//! (with the launch metadata of its cache entry) under a manifest, a rule
//! changes it, `build` and `triton-override` build it, and Triton, compiling
//! again with `TRITON_KERNEL_OVERRIDE=1`, says it overrides the kernel and
//! returns exactly the object gcn-patch built. An LDS-raising patch fails the
//! Triton limits check; the override refusals are checked too.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{ok, repo, run_cli as gcn_patch, stderr};

/// Run `tests/triton/roundtrip.py` (Triton's side); panics saying how to
/// install Triton when it is missing.
fn roundtrip_py(args: &[&str]) -> Output {
    let o = Command::new("python3")
        .arg(repo().join("tests/triton/roundtrip.py"))
        .args(args)
        .output()
        .expect("python3 not found: install Python 3 and run `bash tests/setup.sh`");
    assert!(
        o.status.success(),
        "tests/triton/roundtrip.py {args:?} failed (Triton 3.9.0 missing? run `bash tests/setup.sh`):\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// One Triton dump of the `add` kernel for gfx942, shared by the tests:
/// `<tmp>/dump/<hash>/add.*` and its cache entry under `<tmp>/cache`.
fn dumped() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("gcn-patch-triton-")
            .tempdir()
            .unwrap()
            .keep();
        roundtrip_py(&[
            "dump",
            "add",
            "gfx942",
            dir.join("dump").to_str().unwrap(),
            dir.join("cache").to_str().unwrap(),
        ]);
        dir
    })
}

/// A fresh project directory (`<tmp>/proj`) with a copy of the shared dump
/// and cache beside it.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    for sub in ["dump", "cache"] {
        common::copy_tree(&dumped().join(sub), &tmp.path().join(sub));
    }
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    (tmp, proj)
}

/// The dump directory's name (Triton's source hash in base32).
fn hash_dir(tmp: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(tmp.join("dump"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "one kernel dumped: {names:?}");
    names.pop().unwrap()
}

fn append(manifest: &Path, text: &str) {
    let mut m = std::fs::read_to_string(manifest).unwrap();
    m.push_str(text);
    std::fs::write(manifest, m).unwrap();
}

const SETPRIO_RULE: &str = r#"
[[kernel.source.rule]]
insert = ["s_setprio 1"]
before = "v_add_f32_e32 v2, v5, v10"
"#;

#[test]
fn a_patched_triton_kernel_goes_back_through_the_override_directory() {
    let (tmp, proj) = project();
    let hash = hash_dir(tmp.path());
    ok(gcn_patch(
        &proj,
        &["import", "../dump", "--triton-cache", "../cache"],
    ));
    let manifest = std::fs::read_to_string(proj.join("kernels.toml")).unwrap();
    // The dump's hash, its target and the cache entry's launch metadata.
    assert!(
        manifest.contains(&format!(
            r#"triton = {{ kernel = "add", hash = "{hash}", target = "gfx942", shared = 0, num-warps = 4, warp-size = 64 }}"#
        )),
        "{manifest}"
    );
    assert!(proj.join(format!("asm/gfx942/{hash}/add.amdgcn")).is_file());
    // The dump and its cache entry together: still one kernel.
    ok(gcn_patch(&proj, &["import", "../dump", "../cache"]));
    let again = std::fs::read_to_string(proj.join("kernels.toml")).unwrap();
    assert_eq!(again.matches("[[kernel]]").count(), 1, "{again}");

    append(&proj.join("kernels.toml"), SETPRIO_RULE);
    let build = ok(gcn_patch(&proj, &["build", "--out", "../out"]));
    let over = ok(gcn_patch(&proj, &["triton-override", "--out", "../ov"]));
    // Each command names itself in its closing line.
    let last = |o: &std::process::Output| stderr(o).lines().last().unwrap_or("").to_string();
    assert!(
        last(&build).starts_with("gcn-patch build: 1 code object(s)"),
        "{}",
        last(&build)
    );
    assert!(
        last(&over).starts_with("gcn-patch triton-override: 1 code object(s)"),
        "{}",
        last(&over)
    );
    let ov = tmp.path().join("ov").join(&hash).join("add.hsaco");
    let built = std::fs::read(&ov).expect("triton-override wrote <hash>/add.hsaco");
    assert_eq!(
        built,
        std::fs::read(tmp.path().join("out/gfx942/add.hsaco")).unwrap(),
        "build and triton-override share one engine: same object"
    );
    let original = std::fs::read(tmp.path().join("dump").join(&hash).join("add.hsaco")).unwrap();
    assert_ne!(built, original, "the rule changed the kernel");

    // Triton, compiling again, uses the override byte for byte.
    let got = tmp.path().join("got.hsaco");
    let o = roundtrip_py(&[
        "override",
        "add",
        "gfx942",
        tmp.path().join("ov").to_str().unwrap(),
        tmp.path().join("cache2").to_str().unwrap(),
        got.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("Overriding kernel with file {}", ov.display())),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(&got).unwrap(),
        built,
        "Triton returns the built object"
    );
}

#[test]
fn an_lds_raising_patch_fails_the_launch_check() {
    let (tmp, proj) = project();
    ok(gcn_patch(
        &proj,
        &["import", "../dump", "--triton-cache", "../cache"],
    ));
    append(
        &proj.join("kernels.toml"),
        r#"
[[kernel.source.rule]]
set = ".amdhsa_group_segment_fixed_size"
value = 1024
"#,
    );
    for cmd in [
        vec!["check", "--no-assemble"],
        vec!["triton-override", "--out", "../ov"],
        vec!["build", "--out", "../out"],
    ] {
        let o = gcn_patch(&proj, &cmd);
        assert!(!o.status.success(), "{cmd:?} must fail");
        let err = stderr(&o);
        assert!(
            err.contains("declares 1024 bytes of LDS, more than the 0 Triton allocates"),
            "{cmd:?}:\n{err}"
        );
        if cmd[0] == "triton-override" {
            insta::assert_snapshot!("lds_raising_patch", err);
        }
    }
    assert!(
        !tmp.path().join("ov").exists(),
        "no partial override output"
    );
}

#[test]
fn triton_override_refuses_unknown_hashes_and_missing_targets() {
    // Imported from the cache only: the override directory's name is unknown.
    let (_tmp, proj) = project();
    ok(gcn_patch(&proj, &["import", "../cache"]));
    let err = override_fails(&proj, "../ov");
    assert!(err.contains("Triton's dump hash is unknown"), "{err}");
    let mut shown = vec![redact(&err, &proj)];
    assert!(err.contains("TRITON_KERNEL_DUMP=1"), "{err}");
    // Importing the dump too completes the kernel instead of adding one.
    let (tmp, proj) = project();
    ok(gcn_patch(&proj, &["import", "../dump", "../cache"]));
    let m = std::fs::read_to_string(proj.join("kernels.toml")).unwrap();
    assert_eq!(m.matches("[[kernel]]").count(), 1, "{m}");
    assert!(
        m.contains(&format!("hash = \"{}\"", hash_dir(tmp.path()))),
        "{m}"
    );
    assert!(m.contains("shared = 0"), "{m}");

    // The dump's target is not built.
    let text = m.replace(r#"targets = ["gfx942"]"#, r#"targets = ["gfx950"]"#);
    std::fs::write(proj.join("kernels.toml"), text).unwrap();
    let err = override_fails(&proj, "../ov");
    assert!(
        err.contains("has no code object for its Triton dump's target gfx942"),
        "{err}"
    );
    shown.push(redact(&err, tmp.path()));
    // Two kernels of one Triton dump: one override file, claimed twice.
    let text = std::fs::read_to_string(proj.join("kernels.toml")).unwrap();
    let twin = text[text.find("[[kernel]]").unwrap()..]
        .replace(r#"name = "add""#, r#"name = "add_again""#)
        .replace(r#"targets = ["gfx950"]"#, r#"targets = ["gfx942"]"#);
    let text = text.replace(r#"targets = ["gfx950"]"#, r#"targets = ["gfx942"]"#);
    std::fs::write(proj.join("kernels.toml"), format!("{text}\n{twin}")).unwrap();
    let err = override_fails(&proj, "../ov");
    assert!(
        err.contains("kernels `add` and `add_again` both write"),
        "{err}"
    );
    assert!(err.contains("one manifest per GPU"), "{err}");
    shown.push(redact(&err, tmp.path()));
    // A `triton.target` that is not a target ID.
    let bad = text.replace(r#"target = "gfx942""#, r#"target = "gfx9999""#);
    std::fs::write(proj.join("kernels.toml"), bad).unwrap();
    let err = override_fails(&proj, "../ov");
    assert!(
        err.contains(r#"`triton.target = "gfx9999"` is not a target ID"#)
            && err.contains("re-import the dump"),
        "{err}"
    );
    shown.push(redact(&err, tmp.path()));
    insta::assert_snapshot!("override_refusals", shown.join("\n"));
    // A manifest without Triton kernels.
    let plain = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tests/corpus/hip/gfx942/saxpy.s"),
        plain.path().join("saxpy.s"),
    )
    .unwrap();
    ok(gcn_patch(plain.path(), &["import", "saxpy.s"]));
    let err = override_fails(plain.path(), "ov");
    assert!(err.contains("lists no Triton kernel"), "{err}");
}

/// `text` with the directory `dir` shown as `<dir>` and Triton's hashes
/// (52 base32 characters) as `<hash>`.
fn redact(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "<dir>");
    regex::Regex::new("[A-Z2-7]{52}")
        .unwrap()
        .replace_all(&text, "<hash>")
        .into_owned()
}

/// `gcn-patch triton-override --out OUT` in `dir`, which must fail: its stderr.
fn override_fails(dir: &Path, out: &str) -> String {
    let o = gcn_patch(dir, &["triton-override", "--out", out]);
    assert!(!o.status.success(), "triton-override succeeded");
    stderr(&o)
}

/// The corpus kernel `tests/triton/<name>/<kernel>.amdgcn` as a document and
/// the Triton metadata its `.json` records.
fn corpus_kernel(
    name: &str,
) -> (
    gcn_patch::base::document::Document,
    gcn_patch::stage::triton::TritonKernel,
) {
    let kernel = name.split('-').next().unwrap();
    let dir = repo().join("tests/triton").join(name);
    let text = std::fs::read_to_string(dir.join(format!("{kernel}.amdgcn"))).unwrap();
    let meta = gcn_patch::stage::triton::read_metadata(&dir.join(format!("{kernel}.json")))
        .expect("corpus metadata");
    let t = gcn_patch::stage::triton::TritonKernel {
        kernel: kernel.to_string(),
        hash: None,
        target: name.split_once('-').unwrap().1.to_string(),
        shared: meta.shared,
        num_warps: meta.num_warps,
        warp_size: meta.warp_size,
    };
    let doc = gcn_patch::base::document::Document::from_source(
        &text,
        format!("tests/triton/{name}/{kernel}.amdgcn"),
    );
    (doc, t)
}

#[test]
fn every_triton_corpus_kernel_fits_its_own_launch() {
    let mut n = 0;
    for (file, _) in common::triton_files() {
        let name = file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (doc, t) = corpus_kernel(&name);
        let d = gcn_patch::stage::check::triton_limits::check_triton_limits(&doc, &doc, &t, &name);
        assert!(d.is_empty(), "{name}: {d:?}");
        n += 1;
    }
    assert_eq!(n, 15);
}

#[test]
fn launch_check_names_wave_size_workgroup_and_kernel_argument_changes() {
    use gcn_patch::base::document::Document;
    let (doc, t) = corpus_kernel("matmul-gfx942");
    let edit = |from: &str, to: &str| {
        let text = doc.print();
        assert!(text.contains(from), "{from}");
        Document::from_source(&text.replacen(from, to, 1), "patched.s")
    };
    let cases = [
        (
            edit(
                ".amdhsa_next_free_vgpr",
                ".amdhsa_wavefront_size32 1\n\t\t.amdhsa_next_free_vgpr",
            ),
            "runs in wave32, but Triton launches `matmul` with warp_size = 64",
        ),
        (
            edit(
                ".max_flat_workgroup_size: 256",
                ".max_flat_workgroup_size: 128",
            ),
            "Triton launches 256 threads per workgroup (4 warps × 64)",
        ),
        (
            edit(".kernarg_segment_size: 56", ".kernarg_segment_size: 64"),
            "`.kernarg_segment_size` is 64 but was 56",
        ),
        (
            edit(".size:           4", ".size:           8"),
            "the kernel's `.args` differ from Triton's dump",
        ),
        (
            edit(
                ".amdhsa_group_segment_fixed_size 0",
                ".amdhsa_group_segment_fixed_size 8192",
            ),
            "declares 8192 bytes of LDS, more than the 4096 Triton allocates",
        ),
    ];
    let mut shown = Vec::new();
    for (patched, want) in cases {
        let d = gcn_patch::stage::check::triton_limits::check_triton_limits(
            &doc, &patched, &t, "matmul",
        );
        let text: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        shown.extend(text.iter().cloned());
        assert!(
            text.iter().any(|m| m.contains(want)),
            "want `{want}`, got:\n{}",
            text.join("\n")
        );
    }
    // The kernel Triton launches is gone.
    let none = Document::from_source("\ts_endpgm\n", "patched.s");
    let d = gcn_patch::stage::check::triton_limits::check_triton_limits(&doc, &none, &t, "matmul");
    shown.extend(d.iter().map(|d| d.to_string()));
    // Every finding as rendered (the book's index of codes shows them).
    insta::assert_snapshot!("launch_check_findings", shown.join("\n\n"));
    assert!(
        d[0].message
            .contains("Triton launches kernel `matmul`, which the patched asm does not define"),
        "{d:?}"
    );
    // Within Triton's `shared`: allowed.
    let fits = edit(
        ".amdhsa_group_segment_fixed_size 0",
        ".amdhsa_group_segment_fixed_size 4096",
    );
    assert!(
        gcn_patch::stage::check::triton_limits::check_triton_limits(&doc, &fits, &t, "matmul")
            .is_empty()
    );
}

/// `layernorm.py DUMP CACHE gfx942 BLOCK…` (the Triton flow of
/// docs/src/guide/trial-flows.md): a Triton layernorm compiled without a
/// GPU, one specialization per BLOCK.
fn layernorm(dir: &Path, blocks: &[&str]) {
    let o = Command::new("python3")
        .arg(repo().join("docs/src/guide/trial-flows.in/triton/layernorm.py"))
        .arg(dir.join("dump"))
        .arg(dir.join("cache"))
        .arg("gfx942")
        .args(blocks)
        .output()
        .expect("python3 not found: install Python 3 and run `bash tests/setup.sh`");
    assert!(
        o.status.success(),
        "layernorm.py failed (Triton 3.9.0 missing? run `bash tests/setup.sh`):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn specializations_are_annotated_and_a_missing_cache_entry_warns() {
    let tmp = tempfile::tempdir().unwrap();
    layernorm(tmp.path(), &["1024", "256"]);
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    // Without the cache entries: a warning per kernel naming the launch
    // checks that are off and how to get the metadata.
    let o = ok(gcn_patch(
        &proj,
        &["import", "../dump", "--triton-cache", "../empty"],
    ));
    let err = stderr(&o);
    assert_eq!(err.matches("warning[GP0820]: ").count(), 2, "{err}");
    insta::assert_snapshot!("import_without_cache_entries", redact(&err, tmp.path()));
    assert!(
        err.contains("imported without its cache entry")
            && err.contains("LDS: Triton's `shared`")
            && err.contains("--triton-cache DIR"),
        "{err}"
    );
    // Two specializations of one kernel: each says which it is, the second
    // what differs from the first.
    let m = std::fs::read_to_string(proj.join("kernels.toml")).unwrap();
    let comments: Vec<&str> = m.lines().filter(|l| l.starts_with('#')).skip(1).collect();
    insta::assert_snapshot!("layernorm_specializations", comments.join("\n"));

    // With the cache: the launch metadata, no warning.
    let proj2 = tmp.path().join("proj2");
    std::fs::create_dir_all(&proj2).unwrap();
    let o = ok(gcn_patch(
        &proj2,
        &["import", "../dump", "--triton-cache", "../cache"],
    ));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let m = std::fs::read_to_string(proj2.join("kernels.toml")).unwrap();
    assert_eq!(m.matches("shared = 16").count(), 2, "{m}");
}
