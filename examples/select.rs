//! Print every embedded code object, then which one the ROCm loader's rules
//! pick for a GPU ISA name.
//!
//! ```text
//! cargo run --example select                          # table + a few sample ISAs
//! cargo run --example select -- --isa gfx950          # exact match
//! cargo run --example select -- --isa gfx1101         # → gfx11-generic
//! cargo run --example select -- --isa amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-
//! ```
use std::process::ExitCode;

use gcn_patch_demo::KERNELS;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let isas: Vec<String> = match args.as_slice() {
        [] => [
            "gfx942:sramecc+:xnack-",
            "gfx950",
            "gfx90a:xnack-",
            "gfx1101",
            "gfx1201",
            "gfx1036",
        ]
        .map(String::from)
        .to_vec(),
        [flag, isa] if flag == "--isa" => vec![isa.clone()],
        _ => {
            eprintln!("usage: select [--isa ISA]   (ISA: gfx942, gfx1101, amdgcn-amd-amdhsa--gfx90a:xnack-, ...)");
            return ExitCode::from(2);
        }
    };

    println!("embedded code objects:");
    println!(
        "  {:<8} {:<24} {:>8}  {:<16} kernel symbols",
        "kernel", "target", "bytes", "sha256"
    );
    for k in KERNELS {
        for o in k.objects() {
            println!(
                "  {:<8} {:<24} {:>8}  {:<16} {}",
                k.name,
                o.target,
                o.bytes.len(),
                &o.sha256[..16],
                o.kernels.join(" ")
            );
        }
    }
    println!();
    let mut failed = false;
    for isa in &isas {
        println!("agent ISA {isa}:");
        for k in KERNELS {
            match k.select(isa) {
                Ok(o) => println!("  {:<8} -> {}", k.name, o.target),
                Err(e) => {
                    failed = true;
                    println!("  {:<8} -> error: {e}", k.name);
                }
            }
        }
    }
    if failed && args.len() == 2 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
