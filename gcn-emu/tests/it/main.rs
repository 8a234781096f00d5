//! gcn-emu's integration tests: one test binary (one link, one clippy check)
//! instead of one per file. Each former `tests/<name>.rs` is the module
//! `<name>` here, so `cargo test -p gcn-emu --test it <name>::` runs one
//! file's tests. The data they read (`tests/kernels`, `tests/rdna`,
//! `tests/triton`, `tests/mx`) stays where it was.

// Several test files allowed this lint file-wide before they became modules:
// their helpers return the emulator's large error values by value.
#![allow(clippy::result_large_err)]

mod aiter;
mod aiter_gfx1250;
mod approx;
mod cluster;
mod common;
mod corner;
mod coverage;
mod dot;
mod fp8;
mod gfx1250_cvt;
mod gfx1250_wmma;
mod gfx950;
mod hip;
mod hostile;
mod iree;
mod isa;
mod isa_rdna;
mod launch;
mod lds_bounds;
mod no_rocm;
mod observe;
mod profile;
mod rdna;
mod rdna_decode;
mod sanitize;
mod sanitize_rdna;
mod tensor_dma;
mod triton;
mod typed;
mod unified;
mod vgpr_msb;
mod wmma;
