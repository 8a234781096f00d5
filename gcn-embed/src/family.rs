//! Target families: named groups of processors, as used by ROCm TheRock.
//!
//! Mirrors `cmake/therock_amdgpu_targets.cmake` in ROCm/TheRock (commits
//! 02eb4a57 and 7f87b845 carry the same target set): every
//! `therock_add_amdgpu_target(gfxNNNN "Product" FAMILY f1 f2 ...)` call adds
//! the target to each listed family. TheRock families are what
//! `THEROCK_AMDGPU_FAMILIES` accepts and what its release artifacts are named
//! after (`gfx94X-dcgpu`, `gfx110X-all`, ...).
//!
//! Mirrored literally, including one quirk: gfx1035's call is
//! `therock_add_amdgpu_target(gfx1035 "..." igpu-all FAMILY gfx103X-all
//! gfx103X-igpu)`, where `igpu-all` sits before the `FAMILY` keyword, so
//! cmake ignores it and TheRock's `igpu-all` does not contain gfx1035.
//!
//! One addition of ours: `all`, every processor TheRock builds for.
//!
//! Every processor name (`gfx942`) and generic target (`gfx11-generic`) is
//! also accepted by [`expand`], as a family of one.

use crate::target::{processor, processors, Processor};
use crate::target_id::{nearest, TargetId, TargetIdError, TargetIdErrorKind};

// Product names live in `product`, below both this module and `target_id`
// (whose errors suggest a processor for a product name).
#[cfg(test)]
use crate::product::PRODUCTS;
pub use crate::product::{processors_for_product, product_name};

/// `(family, processors)`, in TheRock's declaration order.
static FAMILIES: &[(&str, &[&str])] = &[
    ("gfx90X-all", &["gfx906", "gfx908", "gfx90a"]),
    ("gfx90X-dgpu", &["gfx906"]),
    ("gfx90X-dcgpu", &["gfx906", "gfx908", "gfx90a"]),
    ("gfx94X-all", &["gfx942"]),
    ("gfx94X-dcgpu", &["gfx942"]),
    ("gfx950-all", &["gfx950"]),
    ("gfx950-dcgpu", &["gfx950"]),
    ("gfx101X-all", &["gfx1010", "gfx1011", "gfx1012"]),
    ("gfx101X-dgpu", &["gfx1010", "gfx1011", "gfx1012"]),
    ("gfx103X-all", &["gfx1030", "gfx1032", "gfx1035", "gfx1036"]),
    ("gfx103X-dgpu", &["gfx1030", "gfx1032"]),
    ("gfx103X-igpu", &["gfx1035", "gfx1036"]),
    ("gfx110X-all", &["gfx1100", "gfx1101", "gfx1102", "gfx1103"]),
    ("gfx110X-dgpu", &["gfx1100", "gfx1101", "gfx1102"]),
    ("gfx110X-igpu", &["gfx1103"]),
    ("gfx115X-all", &["gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    (
        "gfx115X-igpu",
        &["gfx1150", "gfx1151", "gfx1152", "gfx1153"],
    ),
    ("gfx120X-all", &["gfx1200", "gfx1201"]),
    (
        "dgpu-all",
        &[
            "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1032", "gfx1100", "gfx1101",
            "gfx1102", "gfx1200", "gfx1201",
        ],
    ),
    ("dcgpu-all", &["gfx908", "gfx90a", "gfx942", "gfx950"]),
    (
        "igpu-all",
        &[
            "gfx1036", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    (
        "all",
        &[
            "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012",
            "gfx1030", "gfx1032", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
            "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201",
        ],
    ),
];

/// Every family and its processor names.
pub fn families() -> &'static [(&'static str, &'static [&'static str])] {
    FAMILIES
}

/// The processors of family `name` (exact, case-sensitive: `gfx94X-dcgpu`),
/// or `None` if there is no such family. Processor names are not families
/// here; [`expand`] accepts both.
pub fn family(name: &str) -> Option<Vec<&'static Processor>> {
    FAMILIES
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, members)| {
            members
                .iter()
                .map(|m| processor(m).expect("family member is in the processor table"))
                .collect()
        })
}

/// Expands a target spec into target IDs: a target ID in any spelling
/// [`TargetId::parse`] accepts (`gfx942:xnack-`, `gfx11-generic`) gives
/// itself; a family name (`gfx110X-all`) gives its processors with features
/// unspecified. Unknown names get the nearest processor and family names as
/// suggestions.
pub fn expand(spec: &str) -> Result<Vec<TargetId>, TargetIdError> {
    let trimmed = spec.trim();
    if let Some(members) = family(trimmed) {
        return Ok(members.into_iter().map(TargetId::new).collect());
    }
    match TargetId::parse(trimmed) {
        Ok(t) => Ok(vec![t]),
        Err(e) => match e.kind() {
            TargetIdErrorKind::UnknownProcessor { .. } if !trimmed.contains(':') => {
                let candidates = FAMILIES
                    .iter()
                    .map(|(f, _)| *f)
                    .chain(processors().iter().map(|p| p.name));
                Err(TargetIdError::new(
                    spec,
                    TargetIdErrorKind::UnknownFamily {
                        name: trimmed.to_string(),
                        suggestions: nearest(trimmed, candidates, 3),
                    },
                ))
            }
            _ => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn names(v: &[TargetId]) -> Vec<String> {
        v.iter().map(|t| t.name()).collect()
    }

    #[test]
    fn every_member_is_a_real_processor() {
        let mut seen = HashSet::new();
        for (f, members) in families() {
            assert!(seen.insert(*f), "duplicate family {f}");
            assert!(processor(f).is_none(), "{f} shadows a processor");
            assert!(!members.is_empty());
            for m in *members {
                let p = processor(m).unwrap_or_else(|| panic!("{f}: {m}"));
                assert!(!p.is_generic);
            }
        }
        // `all` is the union of TheRock's targets, which all have products.
        let all: HashSet<&str> = family("all").unwrap().iter().map(|p| p.name).collect();
        let products: HashSet<&str> = PRODUCTS.iter().map(|(p, _)| *p).collect();
        assert_eq!(all, products);
        for (f, members) in families() {
            for m in *members {
                assert!(all.contains(m), "{f}: {m} not in all");
            }
        }
    }

    #[test]
    fn therock_families() {
        let f = |n: &str| -> Vec<&str> { family(n).unwrap().iter().map(|p| p.name).collect() };
        assert_eq!(f("gfx94X-dcgpu"), ["gfx942"]);
        assert_eq!(f("gfx950-dcgpu"), ["gfx950"]);
        assert_eq!(f("gfx90X-all"), ["gfx906", "gfx908", "gfx90a"]);
        assert_eq!(
            f("gfx110X-all"),
            ["gfx1100", "gfx1101", "gfx1102", "gfx1103"]
        );
        assert_eq!(
            f("gfx115X-all"),
            ["gfx1150", "gfx1151", "gfx1152", "gfx1153"]
        );
        assert_eq!(f("gfx120X-all"), ["gfx1200", "gfx1201"]);
        assert_eq!(f("dcgpu-all"), ["gfx908", "gfx90a", "gfx942", "gfx950"]);
        // TheRock quirk: gfx1035 is not in igpu-all (see module docs).
        assert!(!f("igpu-all").contains(&"gfx1035"));
        assert!(f("gfx103X-igpu").contains(&"gfx1035"));
        assert_eq!(family("gfx942"), None);
        assert_eq!(family("GFX94X-DCGPU"), None);
        assert_eq!(product_name("gfx942"), Some("MI300A/MI300X CDNA"));
        assert_eq!(product_name("gfx600"), None);
        assert_eq!(processors_for_product("MI300X"), ["gfx942"]);
        assert_eq!(processors_for_product("mi355x"), ["gfx950"]);
        assert_eq!(processors_for_product("rx7900xtx"), ["gfx1100"]);
        assert_eq!(processors_for_product("RX 9070 XT"), ["gfx1201"]);
        assert_eq!(processors_for_product("cdna").len(), 5);
        assert!(processors_for_product("mi3").is_empty());
    }

    #[test]
    fn expand_specs() {
        assert_eq!(names(&expand("gfx942").unwrap()), ["gfx942"]);
        assert_eq!(
            names(&expand("amdgcn-amd-amdhsa--gfx90a:xnack+").unwrap()),
            ["gfx90a:xnack+"]
        );
        assert_eq!(names(&expand("gfx11-generic").unwrap()), ["gfx11-generic"]);
        assert_eq!(
            names(&expand(" gfx120X-all ").unwrap()),
            ["gfx1200", "gfx1201"]
        );
        assert_eq!(expand("all").unwrap().len(), 22);
    }

    #[test]
    fn expand_errors() {
        let e = expand("gfx94X-dcgp").unwrap_err();
        assert_eq!(e.suggestions()[0], "gfx94X-dcgpu");
        assert_eq!(
            e.to_string(),
            "`gfx94X-dcgp` is neither a target ID nor a target family; did you mean \
             gfx94X-dcgpu, gfx90X-dcgpu, gfx90X-dgpu? (run `gcn-patch targets` for the list \
             of processors and families)"
        );
        assert_eq!(expand("gfx1101x").unwrap_err().suggestions()[0], "gfx1101");
        // Feature errors stay target-ID errors.
        let e = expand("gfx1100:xnack+").unwrap_err();
        assert!(e.to_string().contains("does not support the xnack"), "{e}");
        assert_eq!(e.input(), "gfx1100:xnack+");
    }
}
