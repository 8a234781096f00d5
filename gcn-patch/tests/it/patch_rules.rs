//! Structured rules on the real corpus dump: every kind, scopes, counts,
//! provenance, and the demo rules + diff assembling with clang-22.

use crate::patch_common;

use gcn_patch::base::document::Document;
use gcn_patch::base::provenance::Origin;
use patch_common::{repo, udiff, Project};

const HEAD: &str = r#"[defaults]
targets = ["gfx942"]

[[kernel]]
name = "matmul"

[[kernel.source]]
asm = "asm/gfx942/matmul.rocmasm"
sha256 = "{sha}"
"#;

fn run(
    rules: &str,
) -> (
    Project,
    Result<Document, gcn_patch::base::diag::Diagnostics>,
) {
    let p = Project::new();
    let r = p.apply(&format!("{HEAD}{rules}"));
    (p, r)
}

/// Unified diff between the dump and the rules' output.
fn changed(rules: &str) -> String {
    let (p, r) = run(rules);
    let t = r.unwrap_or_else(|e| panic!("{e}"));
    udiff(&p.read("asm/gfx942/matmul.rocmasm"), &t.print())
}

fn error(rules: &str) -> String {
    let (p, r) = run(rules);
    p.norm(&r.unwrap_err().to_string())
}

#[test]
fn move_loads_addresses_above_the_first_load() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
move = 'v_add_u32_e32 v1(0[5-9]|1[01]), 0x[0-9a-f]+, v104'
regex = true
expect = 7
block = ".LBB0_1"
before = "buffer_load_dwordx4 v[34:37], v50, s[12:15], 0 offen"
"#
    ));
}

#[test]
fn move_wait_after_the_last_load_of_the_block() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
move = "s_waitcnt vmcnt(0)"
block = ".LBB0_1"
after = "buffer_load_dwordx4"
anchor-occurrence = "last"
"#
    ));
}

/// An insert's anchor is its pattern: `anchor-occurrence` is refused with a
/// help saying that `occurrence` picks the anchor match; and it does.
#[test]
fn insert_refuses_anchor_occurrence_and_says_occurrence_picks_the_anchor() {
    let e = error(
        r#"
[[kernel.source.rule]]
insert = "s_nop 0"
after = "buffer_load_dwordx4"
anchor-occurrence = "last"
"#,
    );
    assert!(
        e.contains(
            "to pick which match of its anchor to insert at, use `occurrence = N` / \"last\""
        ),
        "{e}"
    );
    let last = changed(
        r#"
[[kernel.source.rule]]
insert = "s_nop 0"
after = "buffer_load_dwordx4"
occurrence = "last"
expect = "any"
"#,
    );
    // `occurrence = "last"`: after the last `buffer_load_dwordx4`, once.
    assert_eq!(last.matches("+\ts_nop 0\n").count(), 1, "{last}");
    assert!(
        last.contains("\tbuffer_load_dwordx4 v[100:103], v111, s[4:7], 0 offen\n+\ts_nop 0\n"),
        "{last}"
    );
}

#[test]
fn replace_literal_and_regex_with_captures() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
replace = "s_barrier"
occurrence = 1
expect = 3
with = "s_barrier ; first barrier"

[[kernel.source.rule]]
replace = 'ds_write2_b64 (v7[5-8]), (v\[\d+:\d+\]), (v\[\d+:\d+\]) offset1:1'
regex = true
expect = 4
with = "ds_write2_b64 $1, $3, $2 offset1:1"
"#
    ));
}

#[test]
fn insert_before_and_after_anchors() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
insert = ["s_setprio 1"]
before = "v_mfma_f32_16x16x16_f16"
occurrence = 1
expect = "any"

[[kernel.source.rule]]
insert = ["s_setprio 0", "s_nop 0"]
after = "s_cbranch_vccnz .LBB0_1"
"#
    ));
}

#[test]
fn delete_with_expected_count() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
delete = 's_waitcnt vmcnt\((8|9|10)\)'
regex = true
expect = 3
"#
    ));
}

#[test]
fn set_waitcnt_keeps_other_counters_and_checks_width() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
set-waitcnt = "s_waitcnt vmcnt(11)"
counter = "vmcnt"
value = 4

[[kernel.source.rule]]
set-waitcnt = "s_waitcnt vmcnt(0)"
counter = "lgkmcnt"
value = 0
"#
    ));
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
set-waitcnt = "s_waitcnt lgkmcnt(11)"
counter = "lgkmcnt"
value = 16
"#
    ));
}

#[test]
fn set_descriptor_metadata_and_set_symbol() {
    insta::assert_snapshot!(changed(
        r#"
[[kernel.source.rule]]
set = ".amdhsa_next_free_vgpr"
value = 128

[[kernel.source.rule]]
set = ".vgpr_count"
value = 120
kernel = "matmul_dispatch_0_matmul_256x256x256_f16xf16xf32"

[[kernel.source.rule]]
set = ".num_vgpr"
value = 120
"#
    ));
}

#[test]
fn zero_matches_lists_similar_lines() {
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
delete = "s_waitcnt vmcnt(12)"
block = ".LBB0_1"
"#
    ));
}

#[test]
fn ambiguous_match_lists_candidates() {
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
move = "s_waitcnt lgkmcnt(0)"
after = "s_barrier"
occurrence = 1
"#
    ));
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
delete = "s_barrier"
"#
    ));
}

#[test]
fn unknown_block_and_kernel_are_reported() {
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
delete = "s_barrier"
block = ".LBB0_7"
"#
    ));
    insta::assert_snapshot!(error(
        r#"
[[kernel.source.rule]]
delete = "s_barrier"
kernel = "matmul"
"#
    ));
}

#[test]
fn rule_origins_name_the_rule() {
    let (_, r) = run(r#"
[[kernel.source.rule]]
move = "s_waitcnt vmcnt(0)"
block = ".LBB0_1"
after = "buffer_load_dwordx4"
anchor-occurrence = "last"

[[kernel.source.rule]]
set-waitcnt = "s_waitcnt vmcnt(11)"
counter = "vmcnt"
value = 4
"#);
    let t = r.unwrap();
    let lines: Vec<String> = (130..=137)
        .map(|l| {
            format!(
                "{l:>3} {:<42} <- {}",
                t.text(l - 1),
                t.origin(l - 1).unwrap()
            )
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    assert!(matches!(t.origin(131), Some(Origin::Rule(r)) if r.index == 1));
}

/// The demo: the diff then the rules of patches/matmul-rules.toml.example; the
/// result must still assemble with clang-22 (after the same target-spelling
/// fix retargeting does for gfx942).
#[test]
fn demo_diff_and_rules_together_assemble() {
    let p = Project::new();
    p.write_bytes(
        "patches/matmul-waitcnt.diff",
        &std::fs::read(repo().join("patches/matmul-waitcnt.diff")).unwrap(),
    );
    let rules = std::fs::read_to_string(repo().join("patches/matmul-rules.toml.example")).unwrap();
    let t = p
        .apply(&format!(
            "{HEAD}patches = [\"patches/matmul-waitcnt.diff\"]\n{rules}"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let original = p.read("asm/gfx942/matmul.rocmasm");
    insta::assert_snapshot!(udiff(&original, &t.print()));
    let fixed = t
        .print()
        .replace(
            "\"amdgpu9.42-amd-amdhsa-unknown-gfx942\"",
            "\"amdgcn-amd-amdhsa--gfx942\"",
        )
        .replace(
            "amdhsa.target:   amdgpu9.42-amd-amdhsa-unknown-gfx942",
            "amdhsa.target:   amdgcn-amd-amdhsa--gfx942",
        );
    p.write("out/matmul.s", &fixed);
    let out = std::process::Command::new("clang-22")
        .args([
            "-x",
            "assembler",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx942",
            "-c",
            "-o",
        ])
        .arg(p.path("out/matmul.o"))
        .arg(p.path("out/matmul.s"))
        .output()
        .expect("clang-22 not found: apt-get install -y clang-22 lld-22 llvm-22");
    assert!(
        out.status.success(),
        "clang-22 rejected the patched asm:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// gfx12 splits the wait counters: `vmcnt` is accepted for `s_wait_loadcnt`
/// (the origin says so) and kmcnt's 5-bit field is enforced.
#[test]
fn set_waitcnt_on_gfx12_maps_counter_names() {
    let p = Project::new();
    p.write_bytes(
        "asm/gfx1201/matmul.rocmasm",
        &std::fs::read(repo().join("tests/corpus/iree/gfx1201/matmul.rocmasm")).unwrap(),
    );
    let toml = format!(
        "[[kernel]]\nname = \"mm\"\n[[kernel.source]]\nasm = \"asm/gfx1201/matmul.rocmasm\"\nsha256 = \"{}\"\ntargets = [\"gfx1201\"]\n",
        p.sha("asm/gfx1201/matmul.rocmasm")
    );
    let rule = "[[kernel.source.rule]]\nset-waitcnt = \"s_wait_loadcnt 0x7\"\noccurrence = 1\nexpect = 2\ncounter = \"vmcnt\"\nvalue = 4\n";
    let t = p
        .apply(&format!("{toml}{rule}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let i = t
        .texts()
        .position(|l| l.trim() == "s_wait_loadcnt 0x4")
        .unwrap();
    insta::assert_snapshot!(format!("{}  <- {}", t.text(i), t.origin(i).unwrap()));
    let rule = "[[kernel.source.rule]]\nset-waitcnt = \"s_wait_kmcnt 0x0\"\noccurrence = 1\nexpect = 2\ncounter = \"lgkmcnt\"\nvalue = 32\n";
    let err = p.apply(&format!("{toml}{rule}")).unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
}

/// Commented-out code is not code: rules see lines as `parse` does, so
/// `s_nop 0` inside `/* */` (or after `#`, `;`, `//`) is never matched.
#[test]
fn rules_never_match_commented_out_code() {
    let dump = "\t.text\nk:\n/*\n\ts_nop 0\n*/\n# s_nop 0\n\t; s_nop 0\n\t// s_nop 0\n\ts_nop 0\n\ts_endpgm\n";
    let p = Project::new();
    p.write("asm/gfx942/matmul.rocmasm", dump);
    let t = p
        .apply(&format!(
            "{HEAD}[[kernel.source.rule]]\ndelete = \"s_nop 0\"\n"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t.print(),
        "\t.text\nk:\n/*\n\ts_nop 0\n*/\n# s_nop 0\n\t; s_nop 0\n\t// s_nop 0\n\ts_endpgm\n"
    );
    // `expect = 2` no longer counts the comment: an error, nothing deleted.
    let e = p
        .apply(&format!(
            "{HEAD}[[kernel.source.rule]]\ndelete = \"s_nop 0\"\nexpect = 2\n"
        ))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("matches 1 line in the file, expected exactly 2"),
        "{e}"
    );
    // A mnemonic pattern on a labelled line and a line with a `/* */`
    // comment; the label stays where it is.
    p.write(
        "asm/gfx942/matmul.rocmasm",
        "k:\n/* s_nop 1\n s_nop 1 */\n.L1: s_nop 1\n\ts_nop 1 /* c */\n\ts_endpgm\n",
    );
    let apply = |rule: &str| {
        p.apply(&format!("{HEAD}[[kernel.source.rule]]\n{rule}"))
            .unwrap_or_else(|e| panic!("{e}"))
            .print()
    };
    assert_eq!(
        apply("replace = \"s_nop\"\nexpect = 2\nwith = \"s_nop 2\"\n"),
        "k:\n/* s_nop 1\n s_nop 1 */\n.L1: s_nop 2\n\ts_nop 2\n\ts_endpgm\n"
    );
    assert_eq!(
        apply("delete = \"s_nop 1\"\nexpect = 2\n"),
        "k:\n/* s_nop 1\n s_nop 1 */\n.L1:\n\ts_endpgm\n"
    );
    assert_eq!(
        apply("move = \"s_nop 1\"\nexpect = 2\nafter = \"s_endpgm\"\n"),
        "k:\n/* s_nop 1\n s_nop 1 */\n.L1:\n\ts_endpgm\n\ts_nop 1\n\ts_nop 1 /* c */\n"
    );
    // A label pattern matches the labelled line as a label.
    assert_eq!(
        apply("insert = \"s_nop 3\"\nbefore = \".L1:\"\n"),
        "k:\n/* s_nop 1\n s_nop 1 */\ns_nop 3\n.L1: s_nop 1\n\ts_nop 1 /* c */\n\ts_endpgm\n"
    );
}
