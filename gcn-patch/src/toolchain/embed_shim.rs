//! Temporary stand-in for `gcn_embed`'s target API until branch `embed` lands.
//!
//! TODO(lead): delete this file and `use gcn_embed::{TargetId, Feature, Processor}`
//! once gcn-embed exports them; only the fields used here are mirrored.
#![allow(missing_docs)]

/// A target feature setting in a target ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Not given: either setting.
    Any,
    /// `+`.
    On,
    /// `-`.
    Off,
}

/// One processor (or generic target) from the table.
#[derive(Debug, PartialEq, Eq)]
pub struct Processor {
    pub name: &'static str,
    pub mach: u32,
    pub is_generic: bool,
    pub generic_version: u32,
    pub min_llvm: u32,
    pub sramecc: bool,
    pub xnack: bool,
}

const fn p(
    name: &'static str,
    mach: u32,
    generic_version: u32,
    min_llvm: u32,
    sramecc: bool,
    xnack: bool,
) -> Processor {
    Processor {
        name,
        mach,
        is_generic: generic_version > 0,
        generic_version,
        min_llvm,
        sramecc,
        xnack,
    }
}

pub static PROCESSORS: &[Processor] = &[
    p("gfx908", 0x30, 0, 9, true, true),
    p("gfx90a", 0x3f, 0, 13, true, true),
    p("gfx942", 0x4c, 0, 18, true, true),
    p("gfx950", 0x4f, 0, 20, true, true),
    p("gfx1030", 0x36, 0, 12, false, false),
    p("gfx1100", 0x41, 0, 16, false, false),
    p("gfx1201", 0x4e, 0, 19, false, false),
    p("gfx9-generic", 0x51, 1, 19, false, true),
    p("gfx9-4-generic", 0x5f, 1, 20, true, true),
    p("gfx10-3-generic", 0x53, 1, 19, false, false),
    p("gfx11-generic", 0x54, 1, 19, false, false),
    p("gfx12-generic", 0x59, 1, 19, false, false),
];

/// `gfx942:sramecc+:xnack-` parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetId {
    pub processor: &'static Processor,
    pub sramecc: Feature,
    pub xnack: Feature,
}

impl TargetId {
    /// Parse `proc[:feature(+|-)]*`.
    pub fn parse(s: &str) -> Result<TargetId, String> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default();
        let processor = PROCESSORS
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("unknown processor `{name}`"))?;
        let mut t = TargetId {
            processor,
            sramecc: Feature::Any,
            xnack: Feature::Any,
        };
        for f in parts {
            let (feat, on) = match f.strip_suffix('+') {
                Some(x) => (x, Feature::On),
                None => (
                    f.strip_suffix('-')
                        .ok_or_else(|| format!("bad feature `{f}`"))?,
                    Feature::Off,
                ),
            };
            match feat {
                "sramecc" if processor.sramecc => t.sramecc = on,
                "xnack" if processor.xnack => t.xnack = on,
                _ => return Err(format!("feature `{feat}` not supported by {name}")),
            }
        }
        Ok(t)
    }

    /// `gfx942:sramecc+:xnack-`.
    pub fn name(&self) -> String {
        let mut s = self.processor.name.to_string();
        for (n, f) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match f {
                Feature::On => s.push_str(&format!(":{n}+")),
                Feature::Off => s.push_str(&format!(":{n}-")),
                Feature::Any => {}
            }
        }
        s
    }
}
