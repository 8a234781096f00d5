//! `gcn-patch targets`: what gcn-patch knows of AMDGPU targets.

use gcn_embed::Processor;

/// Every known processor, generic target and family.
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    /// Processors (exact and generic), in gcn-embed's order.
    pub processors: &'static [Processor],
    /// Family names and the target IDs each expands to.
    pub families: &'static [(&'static str, &'static [&'static str])],
}

/// `gcn-patch targets`.
pub fn targets() -> Targets {
    Targets {
        processors: gcn_embed::processors(),
        families: gcn_embed::family::families(),
    }
}
