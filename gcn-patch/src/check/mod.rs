//! Checks run on patched, retargeted asm: register budget, occupancy, wait counters.

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

pub mod budget;
mod expr;
pub mod occupancy;
pub mod waitcnt;
