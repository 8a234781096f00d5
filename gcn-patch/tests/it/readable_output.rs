//! Output people read (issue 34): `check` shows a warning repeated at many
//! lines once, the register updates of `registers = "update"` in one note
//! naming `gcn-patch accept`, and the `build` table keeps its columns with
//! long kernel names. Real aiter code objects (`tests/corpus/aiter`), the
//! real binary and the real LLVM 22.

use crate::common;

use std::path::Path;

use common::{ok, repo, run_cli as gcn_patch, stderr};

/// Copy aiter's `tests/corpus/aiter/<rel>` into `dir` as `name`.
fn aiter(dir: &Path, rel: &str, name: &str) {
    std::fs::copy(repo().join("tests/corpus/aiter").join(rel), dir.join(name))
        .unwrap_or_else(|e| panic!("tests/corpus/aiter/{rel}: {e} (run tests/corpus/aiter.sh)"));
}

/// The rendered diagnostic starting at `head`: up to the next line that
/// starts at column 0 (another diagnostic or the summary).
fn block(text: &str, head: &str) -> String {
    let at = text
        .find(head)
        .unwrap_or_else(|| panic!("no `{head}` in:\n{text}"));
    let mut out = String::new();
    for (i, l) in text[at..].split_inclusive('\n').enumerate() {
        if i > 0 && l.starts_with(|c: char| c.is_ascii_alphabetic()) {
            break;
        }
        out.push_str(l);
    }
    out
}

#[test]
fn check_shows_a_warning_repeated_at_many_lines_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // topksoftmax_4x256x8 has 16 `s_set_gpr_idx_on` the wait-counter model
    // cannot follow: one warning, with the other 15 lines.
    aiter(dir, "gfx942/topksoftmax/topksoftmax_4x256x8.co", "topk.co");
    ok(gcn_patch(dir, &["import", "topk.co"]));
    let o = ok(gcn_patch(dir, &["check", "--no-assemble"]));
    let err = stderr(&o);
    assert_eq!(err.matches("warning[GP0421]").count(), 1, "{err}");
    let w = block(&err, "warning[GP0421]");
    assert!(w.contains("and 15 more like it at lines "), "{w}");
    insta::assert_snapshot!("check_gp0421_collapsed", w);
    // -v shows each in full.
    let o = ok(gcn_patch(dir, &["check", "--no-assemble", "-v"]));
    assert_eq!(stderr(&o).matches("warning[GP0421]").count(), 16);
}

#[test]
fn register_updates_are_one_note_that_names_accept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // all_reduce's `.sgpr_count` contradicts its descriptor: `registers =
    // "update"` rewrites it, on every check and build.
    aiter(dir, "gfx942/all_reduce.co", "all_reduce.co");
    ok(gcn_patch(dir, &["import", "all_reduce.co"]));
    let m = std::fs::read_to_string(dir.join("kernels.toml")).unwrap();
    std::fs::write(
        dir.join("kernels.toml"),
        m.replacen(
            "name = \"all_reduce\"\n",
            "name = \"all_reduce\"\nregisters = \"update\"\n",
            1,
        ),
    )
    .unwrap();
    let err = stderr(&ok(gcn_patch(dir, &["check"])));
    assert_eq!(err.matches("[GP0412]").count(), 1, "{err}");
    let note = block(&err, "note[GP0412]");
    assert!(
        note.contains("`gcn-patch accept all_reduce` acknowledges them"),
        "{note}"
    );
    insta::assert_snapshot!("check_register_updates_once", note);
    // Each change with -v.
    let err = stderr(&ok(gcn_patch(dir, &["check", "-v"])));
    assert!(
        err.contains("= note: metadata `.sgpr_count` 96 → 101"),
        "{err}"
    );
    // `build` shows the same one note.
    let b = ok(gcn_patch(dir, &["build", "--out", "out"]));
    assert_eq!(stderr(&b).matches("[GP0412]").count(), 1, "{}", stderr(&b));
    // The accept command it names silences it.
    ok(gcn_patch(dir, &["accept", "all_reduce"]));
    let err = stderr(&ok(gcn_patch(dir, &["check"])));
    assert!(!err.contains("GP0412"), "{err}");
    assert!(err.contains("1 acknowledged finding(s) not shown"), "{err}");
}

#[test]
fn the_build_table_keeps_its_columns_with_long_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    aiter(dir, "gfx942/all_reduce.co", "all_reduce.co");
    // A kernel name longer than the table's default column.
    aiter(
        dir,
        "gfx942/pa/pa_bf16_noquant_gqa16_1tg_4w.co",
        "pa_bf16_noquant_gqa16_1tg_4w_paged_attention.co",
    );
    ok(gcn_patch(
        dir,
        &[
            "import",
            "all_reduce.co",
            "pa_bf16_noquant_gqa16_1tg_4w_paged_attention.co",
        ],
    ));
    let o = ok(gcn_patch(dir, &["build", "--out", "out"]));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    // Every column starts where its header does.
    let header = lines[0];
    for col in ["target", "state", "sha256", "files"] {
        let at = header.find(col).unwrap();
        for row in &lines[1..] {
            assert!(
                row[..at].ends_with(' ') && !row[at..].starts_with(' '),
                "column `{col}` at {at} in:\n{table}"
            );
        }
    }
    assert!(
        lines[2].starts_with("pa_bf16_noquant_gqa16_1tg_4w_paged_attention gfx942 "),
        "{table}"
    );
}
