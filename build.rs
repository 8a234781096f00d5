//! Builds every kernel × target declared in kernels.toml and generates
//! `$OUT_DIR/gcn_kernels.rs` (see gcn-build).
fn main() {
    gcn_build::Build::new().manifest("kernels.toml").compile();
}
