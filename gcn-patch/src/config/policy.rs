//! The policies `kernels.toml` sets per kernel (`registers = …`,
//! `hazards = …`), read by the checks in [`crate::stage::check`].

use serde::Deserialize;

/// What to do when the registers a kernel uses disagree with what it declares
/// (`.amdhsa_next_free_vgpr`, `.set …num_vgpr`, metadata `.vgpr_count`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterPolicy {
    /// Report overuse as an error (default): the assembler accepts it silently.
    #[default]
    Error,
    /// Rewrite descriptor, `.set` values and metadata consistently.
    Update,
}

/// What to do with a wait-counter hazard in `gcn-patch check` / gcn-build
/// (`hazards = "error" | "warn" | "strict"` in kernels.toml). A hazard the
/// unpatched source has too (*inherited*: same producer and reader dump
/// lines, same register, no looser wait) is counted in one note per kernel
/// unless the policy is `Strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HazardPolicy {
    /// A new or worse hazard stops the build (default).
    #[default]
    Error,
    /// A new or worse hazard is reported as a warning.
    Warn,
    /// Every hazard stops the build, inherited ones too.
    Strict,
}
