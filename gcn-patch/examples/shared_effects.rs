//! How many of a kernel's instructions have an effect of their own in the
//! hazard analysis (`Inst::effect` is shared between equal effects; see the
//! measurements page, "Line model"):
//!
//! ```text
//! cargo run --release -p gcn-patch --example shared_effects -- FILE.s...
//! ```
//!
//! Each file is analysed for the target its `.amdgcn_target` names; files
//! without one are skipped.

use std::collections::HashSet;
use std::sync::Arc;

use gcn_embed::TargetId;
use gcn_patch::base::document::Document;
use gcn_patch::stage::check::hazard;

fn main() {
    let (mut insts, mut distinct) = (0usize, 0usize);
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        let doc = Document::from_source(&text, &path);
        let Some(target) = doc
            .asm()
            .target_directive()
            .and_then(|(_, t)| TargetId::parse(&t).ok())
        else {
            continue;
        };
        for k in hazard::kernels(doc.asm(), &target) {
            let mut seen = HashSet::new();
            for inst in k.cfg.nodes.iter().flat_map(|n| &n.insts) {
                insts += 1;
                if seen.insert(Arc::as_ptr(&inst.effect)) {
                    distinct += 1;
                }
            }
        }
    }
    println!(
        "{insts} instructions, {distinct} distinct effects ({:.1} %)",
        100.0 * distinct as f64 / insts.max(1) as f64
    );
}
