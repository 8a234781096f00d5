//! Pins: a changed dump is refused; `pin` rewrites only the hashes.

use crate::patch_common;

use gcn_patch::ops::pin::{PinOptions, Repinned};
use patch_common::Project;

const TOML: &str = "# pins\n[defaults]\ntargets = [\"gfx942\"]   # comment kept\n\n[[kernel]]\nname = \"matmul\"\n\n[[kernel.source]]\nasm = \"asm/gfx942/matmul.rocmasm\"\nsha256 = \"{sha}\"\npatches = [\"p.diff\"]\n\n[[kernel]]\nname = \"other\"\n\n[[kernel.source]]\nasm  =  \"asm/other.s\"   # hand-written\n";

fn project() -> Project {
    let p = Project::new();
    p.write(
        "p.diff",
        &std::fs::read_to_string(patch_common::repo().join("patches/matmul-waitcnt.diff")).unwrap(),
    );
    p.write("asm/other.s", "\ts_endpgm\n");
    p
}

#[test]
fn stale_pin_is_refused_with_both_hashes() {
    let p = project();
    let m = p.manifest(TOML).unwrap();
    // The dump is re-generated (here: one more line) after the patch was written.
    let mut text = p.read("asm/gfx942/matmul.rocmasm");
    text.push_str("; regenerated\n");
    p.write("asm/gfx942/matmul.rocmasm", &text);
    let k = m.kernel("matmul").unwrap();
    let err = gcn_patch::stage::patch::apply(&m, k, &k.sources[0]).unwrap_err();
    let shown = p
        .norm(&err.to_string())
        .replace(&p.sha("asm/gfx942/matmul.rocmasm"), "<new sha>");
    insta::assert_snapshot!(shown);
}

#[test]
fn pin_rewrites_only_the_hashes() {
    let p = project();
    let old_sha = p.sha("asm/gfx942/matmul.rocmasm");
    p.manifest(TOML).unwrap();
    let before = p.read("kernels.toml");
    let mut text = p.read("asm/gfx942/matmul.rocmasm");
    text.push_str("; regenerated\n");
    p.write("asm/gfx942/matmul.rocmasm", &text);
    let new_sha = p.sha("asm/gfx942/matmul.rocmasm");
    let changes = pin(&p, "matmul").unwrap();
    assert_eq!(
        changes,
        vec![Repinned {
            dump: p.path("asm/gfx942/matmul.rocmasm"),
            old: old_sha.clone(),
            new: new_sha.clone()
        }]
    );
    assert_eq!(p.read("kernels.toml"), before.replace(&old_sha, &new_sha));
    // Pinning again changes nothing.
    let again = pin(&p, "matmul").unwrap();
    assert_eq!(again[0].old, again[0].new);
    assert_eq!(p.read("kernels.toml"), before.replace(&old_sha, &new_sha));
    // The re-pinned manifest applies (the patch still fits the new dump).
    let m = gcn_patch::config::manifest::Manifest::load(&p.path("kernels.toml")).unwrap();
    let k = m.kernel("matmul").unwrap();
    gcn_patch::stage::patch::apply(&m, k, &k.sources[0]).unwrap();
}

/// `gcn-patch pin KERNEL` on the project's manifest, through the library.
fn pin(p: &Project, kernel: &str) -> Result<Vec<Repinned>, gcn_patch::base::diag::Diagnostics> {
    gcn_patch::ops::pin::pin(&PinOptions {
        manifest: p.path("kernels.toml"),
        kernel: kernel.into(),
    })
}

#[test]
fn pin_adds_a_missing_hash_after_asm() {
    let p = project();
    p.manifest(TOML).unwrap();
    let before = p.read("kernels.toml");
    let changes = pin(&p, "other").unwrap();
    let sha = p.sha("asm/other.s");
    assert_eq!(
        changes,
        vec![Repinned {
            dump: p.path("asm/other.s"),
            old: String::new(),
            new: sha.clone()
        }]
    );
    let after = p.read("kernels.toml");
    assert_eq!(
        after,
        before.replace(
            "# hand-written\n",
            &format!("# hand-written\nsha256 = \"{sha}\"\n")
        )
    );
    assert_eq!(
        gcn_patch::config::manifest::Manifest::load(&p.path("kernels.toml"))
            .unwrap()
            .kernel("other")
            .unwrap()
            .sources[0]
            .sha256,
        Some(sha)
    );
}

#[test]
fn pin_of_unknown_kernel_lists_kernels() {
    let p = project();
    p.manifest(TOML).unwrap();
    let before = p.read("kernels.toml");
    let err = pin(&p, "matmull").unwrap_err();
    insta::assert_snapshot!(p.norm(&err.to_string()));
    assert_eq!(p.read("kernels.toml"), before);
}
