//! Write the code object the loader would pick for an ISA to disk, and print
//! the iree-compile flag that substitutes it for the original dispatch.
//!
//! ```text
//! cargo run --example export -- matmul gfx942 /tmp/matmul.hsaco
//! ```
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kernel, isa, out] = args.as_slice() else {
        eprintln!("usage: export KERNEL ISA OUT.hsaco   (e.g. export matmul gfx942 matmul.hsaco)");
        return ExitCode::from(2);
    };
    let Some(k) = gcn_patch_demo::kernel(kernel) else {
        let names: Vec<&str> = gcn_patch_demo::KERNELS.names().collect();
        eprintln!(
            "error: no embedded kernel `{kernel}`; embedded: {}",
            names.join(", ")
        );
        return ExitCode::FAILURE;
    };
    let object = match k.select(isa) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Write to a temp file next to the destination, then rename: never a partial file.
    let tmp = format!("{out}.tmp-{}", std::process::id());
    if let Err(e) = std::fs::write(&tmp, object.bytes).and_then(|()| std::fs::rename(&tmp, out)) {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("error: cannot write {out}: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "wrote {out}: kernel `{}` for {} ({} bytes, sha256 {})",
        k.name,
        object.target,
        object.bytes.len(),
        object.sha256
    );
    match k.iree_executable {
        Some(exe) => {
            println!("iree-compile ... --iree-hal-substitute-executable-object={exe}={out}")
        }
        None => println!(
            "(kernel `{}` has no IREE executable name in kernels.toml)",
            k.name
        ),
    }
    ExitCode::SUCCESS
}
