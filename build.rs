//! Builds every kernel × target declared in kernels.toml and generates
//! `$OUT_DIR/gcn_kernels.rs` (see gcn-build). The demo keeps its
//! `kernels.lock` current (commit it): it asks gcn-build to write it.
fn main() {
    gcn_build::Build::new()
        .manifest("kernels.toml")
        .write_lock(true)
        .compile();
}
