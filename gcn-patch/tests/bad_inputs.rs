//! One table of bad inputs, each driven through `gcn-patch check` (the same
//! pipeline gcn-build runs) with its exact diagnostic as an insta snapshot.
//! Real clang-22 / ld.lld-22 where a toolchain is involved; a fake clang only
//! for the "too old" and "crashing" probes. Every case must exit 1 without a
//! panic (or 0 for the inputs that must work, like CRLF).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn saxpy() -> String {
    let p = repo().join("tests/corpus/hip/gfx942/saxpy.s");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn manifest(asm: &str, extra: &str) -> String {
    format!(
        "[[kernel]]\nname = \"saxpy\"\n[[kernel.source]]\nasm = \"{asm}\"\ntargets = [\"gfx942\"]\n{extra}"
    )
}

const DIFF: &str = "--- a/saxpy.s\n+++ b/saxpy.s\n@@ -14,1 +14,1 @@\n-\ts_and_saveexec_b64 s[2:3], vcc\n+\ts_and_saveexec_b64 s[2:3], vcc ; edited\n";

struct Case {
    name: &'static str,
    /// Files to write (relative path, bytes).
    files: Vec<(&'static str, Vec<u8>)>,
    /// Expected exit status.
    status: i32,
}

fn case(name: &'static str, files: Vec<(&'static str, Vec<u8>)>) -> Case {
    Case {
        name,
        files,
        status: 1,
    }
}

fn fake_clang(dir: &Path, script: &str) -> String {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [("clang", script), ("ld.lld", "#!/bin/sh\nexit 0\n")] {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin.display().to_string()
}

#[test]
fn bad_inputs_give_exact_diagnostics() {
    let s = saxpy();
    let m = |extra: &str| manifest("saxpy.s", extra).into_bytes();
    let with_asm = |asm: Vec<u8>| vec![("kernels.toml", m("")), ("saxpy.s", asm)];
    let cases = vec![
        case("malformed_toml", vec![("kernels.toml", b"[[kernel]\nname = \"x\"\n".to_vec())]),
        case("unknown_key", vec![("kernels.toml", m("colour = \"red\"")), ("saxpy.s", s.clone().into_bytes())]),
        case("missing_file", vec![("kernels.toml", m(""))]),
        case("directory_instead_of_file", vec![("kernels.toml", m("")), ("saxpy.s/keep", vec![])]),
        case("non_utf8_asm", with_asm(b"\ts_nop 0\n\xff\xfe\n".to_vec())),
        case("empty_asm", with_asm(vec![])),
        case("diff_for_another_file", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
            ("saxpy.s", s.clone().into_bytes()),
            // A diff made for another file: its lines are not in this dump.
            // (A one-file diff is applied by content whatever its header
            // names, so that `diff -u old.s new.s` works.)
            ("p.diff", b"--- a/other.s\n+++ b/other.s\n@@ -1,2 +1,2 @@\n \tv_mov_b32 v9, 0\n-\ts_nop 3\n+\ts_nop 1\n".to_vec()),
        ]),
        case("binary_patch", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
            ("saxpy.s", s.clone().into_bytes()),
            ("p.diff", b"diff --git a/saxpy.s b/saxpy.s\nGIT binary patch\nliteral 3\nKcmZ>\n\n".to_vec()),
        ]),
        Case {
            status: 0,
            ..case("crlf_dump_and_patch_work", vec![
                ("kernels.toml", m("sha256 = \"SHA\"\npatches = [\"p.diff\"]")),
                ("saxpy.s", s.replace('\n', "\r\n").into_bytes()),
                ("p.diff", DIFF.replace('\n', "\r\n").into_bytes()),
            ])
        },
        case("stale_pin", vec![
            ("kernels.toml", m(&format!("sha256 = \"{}\"", "0".repeat(64)))),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("ambiguous_rule", vec![
            ("kernels.toml", m("sha256 = \"SHA\"\n[[kernel.source.rule]]\ndelete = \"s_waitcnt lgkmcnt(0)\"\n")),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("path_escape_dotdot", vec![("kernels.toml", manifest("../saxpy.s", "").into_bytes())]),
        case("path_escape_absolute", vec![("kernels.toml", manifest("/etc/passwd", "").into_bytes())]),
        case("path_escape_symlink", vec![("kernels.toml", manifest("link.s", "").into_bytes())]),
        case("unknown_target", vec![
            ("kernels.toml", manifest("saxpy.s", "").replace("[\"gfx942\"]", "[\"gfx9999\"]").into_bytes()),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        // A gfx9 dump for gfx1100: the assembler rejects its instructions.
        case("unsupported_target", vec![
            ("kernels.toml", manifest("saxpy.s", "").replace("[\"gfx942\"]", "[\"gfx1100\"]").into_bytes()),
            ("saxpy.s", s.clone().into_bytes()),
        ]),
        case("unterminated_string", with_asm(s.replacen("vcc\n", "vcc\"\n", 1).into_bytes())),
    ];
    let tool_cases = [
        ("toolchain_missing", None),
        (
            "toolchain_too_old",
            Some("#!/bin/sh\necho 'clang version 15.0.7'\n"),
        ),
        ("toolchain_crashing", Some("#!/bin/sh\nkill -SEGV $$\n")),
    ];
    let mut failures = Vec::new();
    let run_case = |c: &Case, tool: Option<Option<&str>>| -> String {
        let dir = tempfile::tempdir().unwrap();
        // `SHA` in the manifest: the pin of the case's own saxpy.s.
        let asm_sha = c
            .files
            .iter()
            .find(|(r, _)| *r == "saxpy.s")
            .map(|(_, b)| gcn_embed::sha256_hex(b))
            .unwrap_or_default();
        for (rel, bytes) in &c.files {
            let bytes = &if *rel == "kernels.toml" {
                String::from_utf8(bytes.clone())
                    .unwrap()
                    .replace("SHA", &asm_sha)
                    .into_bytes()
            } else {
                bytes.clone()
            };
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            if !rel.ends_with("/keep") {
                std::fs::write(&p, bytes).unwrap();
            }
        }
        if c.name == "path_escape_symlink" {
            std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link.s")).unwrap();
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gcn-patch"));
        cmd.args(["check", "--assemble"])
            .current_dir(dir.path())
            .env_remove("RUST_BACKTRACE");
        match tool {
            Some(None) => {
                cmd.env("PATH", dir.path())
                    .env("GCN_PATCH_LLVM_BIN", dir.path().join("nowhere"));
            }
            Some(Some(script)) => {
                cmd.env("GCN_PATCH_LLVM_BIN", fake_clang(dir.path(), script));
            }
            None => {}
        }
        let o = cmd.output().unwrap();
        let err =
            String::from_utf8_lossy(&o.stderr).replace(&dir.path().display().to_string(), "[DIR]");
        assert!(!err.contains("panicked"), "{}: {err}", c.name);
        if o.status.code() != Some(c.status) {
            return format!("{}: exit {:?}\n{err}", c.name, o.status.code());
        }
        err
    };
    for c in &cases {
        let err = run_case(c, None);
        if err.contains(": exit ") && err.starts_with(c.name) {
            failures.push(err.clone());
        }
        insta::assert_snapshot!(c.name, err);
    }
    for (name, tool) in tool_cases {
        let c = Case {
            name,
            ..case(
                name,
                vec![("kernels.toml", m("")), ("saxpy.s", s.clone().into_bytes())],
            )
        };
        let err = run_case(&c, Some(tool));
        insta::assert_snapshot!(name, err);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
