//! Bad input never panics the checks: truncated and mangled corpus files.

use crate::common;

use common::corpus_files;
use gcn_patch::base::document::Document;
use gcn_patch::config::policy::RegisterPolicy;
use gcn_patch::stage::check::budget::check_registers;
use gcn_patch::stage::check::waitcnt::check_waitcnt;

fn run_all(text: &str, target: &gcn_embed::TargetId) {
    let t = Document::from_source(text, "x.s");
    for policy in [RegisterPolicy::Error, RegisterPolicy::Update] {
        let _ = check_registers(Some(&t), &t, target, policy, "fuzz");
    }
    let _ = check_waitcnt(&t, target);
}

#[test]
fn truncated_and_mangled_inputs_do_not_panic() {
    let mangles: [(&str, &str); 10] = [
        (
            "s_endpgm",
            "v_mov_b32 v4294967295, 0\n\ts_mov_b32 s4294967295, 0\n\tv_accvgpr_write_b32 a4294967295, v0\n\ts_endpgm",
        ),
        (".numbered_sgpr, ", ".numbered_sgpr, 4294967295+0*"),
        (".amdhsa_next_free_vgpr ", ".amdhsa_next_free_vgpr x+"),
        (".amdhsa_accum_offset ", ".amdhsa_accum_offset 99999999999 "),
        (".vgpr_count:", ".vgpr_count: -"),
        (".num_vgpr, ", ".num_vgpr, (("),
        ("vmcnt(", "vmcnt(0x"),
        ("s_wait_dscnt 0x", "s_wait_dscnt 0x1ffffffff"),
        ("v[", "v[4294967295:"),
        ("s_waitcnt ", "s_waitcnt_vscnt "),
    ];
    for (file, target) in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let len = text.len();
        for k in 1..8 {
            let mut cut = len * k / 8;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            run_all(&text[..cut], &target);
        }
        for (from, to) in mangles {
            run_all(&text.replace(from, to), &target);
        }
    }
}
