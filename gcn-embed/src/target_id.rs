//! Target IDs: a processor plus the `sramecc` / `xnack` feature settings, as
//! in `gfx942:sramecc+:xnack-`.
//!
//! Syntax per LLVM `AMDGPUUsage.rst`, section *Target ID*: a processor name
//! followed by zero or more `:feature+` / `:feature-`. A feature that is not
//! mentioned is *any* ("not specified": code works with either setting).
//! LLVM's canonical order lists `sramecc` before `xnack`.
//!
//! [`TargetId::parse`] accepts every spelling a user or a runtime produces:
//!
//! | spelling | example | produced by |
//! |---|---|---|
//! | bare target ID | `gfx942`, `gfx942:sramecc+:xnack-` | clang `--offload-arch`, `-mcpu` |
//! | features in any order | `gfx942:xnack-:sramecc+` | users |
//! | HSA ISA name | `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-` | `hsa_isa_get_info_alt(HSA_ISA_INFO_NAME)`, rocminfo, `.amdgcn_target` |
//! | HIP `gcnArchName` | `gfx90a:sramecc+:xnack-` | `hipDeviceProp_t::gcnArchName` |
//! | LLVM 23+ triple | `amdgpu9.42-amd-amdhsa-unknown-gfx942` | IREE 3.13 `.amdgcn_target`, `amdhsa.target` |
//! | LLVM 23+ triple alone | `amdgpu9.42-amd-amdhsa` | `-mtriple` (the sub-architecture names the GPU) |
//! | offload bundle entry ID | `hipv4-amdgcn-amd-amdhsa--gfx942:xnack-` | `clang-offload-bundler --list` |

use std::fmt;
use std::str::FromStr;

use crate::target::{processor, processors, Processor};

/// Setting of one target feature (`sramecc` or `xnack`) in a target ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Feature {
    /// Not specified: the code works whatever the setting is.
    #[default]
    Any,
    /// `feature+`: the code requires the feature enabled.
    On,
    /// `feature-`: the code requires the feature disabled.
    Off,
}

impl Feature {
    /// The target-ID suffix: `"+"`, `"-"`, or `""` for [`Feature::Any`].
    pub fn sign(self) -> &'static str {
        match self {
            Feature::Any => "",
            Feature::On => "+",
            Feature::Off => "-",
        }
    }

    /// True unless [`Feature::Any`].
    pub fn is_pinned(self) -> bool {
        self != Feature::Any
    }

    /// True if code compiled with setting `self` may run where the feature is
    /// `agent` (`Any` on either side matches everything).
    pub fn accepts(self, agent: Feature) -> bool {
        self == Feature::Any || agent == Feature::Any || self == agent
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Feature::Any => "any",
            Feature::On => "on",
            Feature::Off => "off",
        })
    }
}

/// A processor plus feature settings: `gfx942:sramecc+:xnack-`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// The processor or generic target.
    pub processor: &'static Processor,
    /// `sramecc` setting ([`Feature::Any`] if the processor does not support it).
    pub sramecc: Feature,
    /// `xnack` setting ([`Feature::Any`] if the processor does not support it).
    pub xnack: Feature,
}

/// What was wrong with a target ID; see [`TargetIdError::kind`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetIdErrorKind {
    /// The input was empty.
    Empty,
    /// No processor by that name; the suggestions are the nearest names.
    UnknownProcessor {
        /// The name as written.
        name: String,
        /// Up to three nearest valid names, nearest first.
        suggestions: Vec<&'static str>,
    },
    /// Not `sramecc±` or `xnack±`.
    BadFeature {
        /// The feature as written.
        feature: String,
    },
    /// The processor does not support that feature (`gfx1100:xnack+`).
    UnsupportedFeature {
        /// The processor.
        processor: &'static str,
        /// `"sramecc"` or `"xnack"`.
        feature: &'static str,
    },
    /// A feature appears twice.
    DuplicateFeature {
        /// `"sramecc"` or `"xnack"`.
        feature: &'static str,
    },
    /// A malformed triple prefix (`amdgcn-amd-amdhsa--`).
    BadTriple {
        /// What is wrong.
        reason: String,
    },
    /// Not a target ID nor a family name (see [`crate::family::expand`]).
    UnknownFamily {
        /// The spec as written.
        name: String,
        /// Nearest family or processor names.
        suggestions: Vec<&'static str>,
    },
}

/// Error from [`TargetId::parse`] (and [`crate::family::expand`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetIdError {
    input: String,
    kind: TargetIdErrorKind,
}

impl TargetIdError {
    pub(crate) fn new(input: &str, kind: TargetIdErrorKind) -> Self {
        TargetIdError {
            input: input.to_string(),
            kind,
        }
    }

    /// The string that failed to parse.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// What was wrong.
    pub fn kind(&self) -> &TargetIdErrorKind {
        &self.kind
    }

    /// Nearest valid names, when the processor or family was unknown.
    pub fn suggestions(&self) -> &[&'static str] {
        match &self.kind {
            TargetIdErrorKind::UnknownProcessor { suggestions, .. }
            | TargetIdErrorKind::UnknownFamily { suggestions, .. } => suggestions,
            _ => &[],
        }
    }
}

const LIST_HINT: &str = "run `gcn-patch targets` for the list of processors and families";

impl fmt::Display for TargetIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = &clip(&self.input);
        match &self.kind {
            TargetIdErrorKind::Empty => write!(
                f,
                "empty target ID; expected a processor such as `gfx942` or `gfx942:sramecc+:xnack-`"
            ),
            TargetIdErrorKind::UnknownProcessor { name, suggestions } => {
                if name.is_empty() {
                    return write!(
                        f,
                        "invalid target ID `{input}`: the processor is missing \
                         (expected e.g. `gfx942` or `gfx942:xnack-`; {LIST_HINT})"
                    );
                }
                let shown = clip(name);
                write!(f, "invalid target ID `{input}`: unknown processor `{shown}`")?;
                let products = crate::product::processors_for_product(name);
                if let Some(hint) = removed_processor_hint(name) {
                    write!(f, "; {hint}")?;
                } else if (1..=3).contains(&products.len()) {
                    write!(
                        f,
                        "; `{shown}` looks like a product name, use its processor: {}",
                        products.join(", ")
                    )?;
                } else if !suggestions.is_empty() {
                    write!(f, "; did you mean {}?", suggestions.join(", "))?;
                }
                write!(f, " ({LIST_HINT})")
            }
            TargetIdErrorKind::BadFeature { feature } => write!(
                f,
                "invalid target ID `{input}`: bad feature `{}`; features are \
                 `sramecc+`, `sramecc-`, `xnack+`, `xnack-` (omit a feature to accept either setting)",
                clip(feature)
            ),
            TargetIdErrorKind::UnsupportedFeature { processor, feature } => {
                let supported = crate::target::processor(processor)
                    .map(supported_features)
                    .unwrap_or_default();
                write!(
                    f,
                    "invalid target ID `{input}`: {processor} does not support the {feature} \
                     feature; remove `:{feature}±`"
                )?;
                if supported.is_empty() {
                    write!(f, " ({processor} accepts no target features)")
                } else {
                    write!(f, " ({processor} accepts {})", supported.join(" and "))
                }
            }
            TargetIdErrorKind::DuplicateFeature { feature } => write!(
                f,
                "invalid target ID `{input}`: feature {feature} is given more than once; keep one"
            ),
            TargetIdErrorKind::BadTriple { reason } => {
                write!(f, "invalid target ID `{input}`: {reason}")
            }
            TargetIdErrorKind::UnknownFamily { name, suggestions } => {
                let name = &clip(name);
                write!(f, "`{name}` is neither a target ID nor a target family")?;
                if !suggestions.is_empty() {
                    write!(f, "; did you mean {}?", suggestions.join(", "))?;
                }
                write!(f, " ({LIST_HINT})")
            }
        }
    }
}

impl std::error::Error for TargetIdError {}

/// User input as shown in a message: at most 64 characters (a pasted blob
/// must not flood the terminal).
fn clip(s: &str) -> String {
    const MAX: usize = 64;
    let n = s.chars().count();
    if n <= MAX {
        s.to_string()
    } else {
        format!(
            "{}… ({n} characters)",
            s.chars().take(MAX).collect::<String>()
        )
    }
}

fn supported_features(p: &Processor) -> Vec<&'static str> {
    let mut v = Vec::new();
    if p.sramecc {
        v.push("sramecc");
    }
    if p.xnack {
        v.push("xnack");
    }
    v
}

fn removed_processor_hint(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "gfx940" | "gfx941" => Some(
            "gfx940 and gfx941 were removed in LLVM 21; all MI300-series GPUs are `gfx942` \
             (or use `gfx9-4-generic`)",
        ),
        _ => None,
    }
}

/// Levenshtein distance (ASCII case-insensitive).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<u8> = a.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<u8> = b.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Up to `n` names from `candidates` nearest to `name` by edit distance
/// (ties go to the longer common prefix, then candidate order), ignoring ones
/// that are too far to help.
pub(crate) fn nearest(
    name: &str,
    candidates: impl Iterator<Item = &'static str>,
    n: usize,
) -> Vec<&'static str> {
    let limit = (name.len() / 2).max(2);
    let prefix = |c: &str| {
        c.bytes()
            .zip(name.bytes())
            .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
            .count()
    };
    let mut scored: Vec<(usize, std::cmp::Reverse<usize>, usize, &'static str)> = candidates
        .enumerate()
        .map(|(i, c)| (edit_distance(name, c), std::cmp::Reverse(prefix(c)), i, c))
        .filter(|&(d, ..)| d <= limit)
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(.., c)| c).collect()
}

/// Parses `amdgcn-amd-amdhsa--PROC` / `amdgpuX.YZ-amd-amdhsa-ENV-PROC` /
/// `amdgpuX.YZ-amd-amdhsa`; returns the processor part (`None` when the
/// triple alone names the GPU) and the processor the triple's
/// sub-architecture names, if any.
fn split_triple(s: &str) -> Result<(Option<&str>, Option<&'static Processor>), String> {
    let parts: Vec<&str> = s.splitn(5, '-').collect();
    let arch = parts[0];
    if parts.len() == 4 && parts[3].starts_with("gfx") {
        return Err(format!(
            "the processor follows the environment field, which is empty: write \
             `{}-{}-{}--{}` (two dashes)",
            parts[0], parts[1], parts[2], parts[3]
        ));
    }
    let vendor = parts.get(1).copied().unwrap_or("");
    let os = parts.get(2).copied().unwrap_or("");
    if vendor != "amd" {
        return Err(format!(
            "triple vendor must be `amd` (as in `amdgcn-amd-amdhsa--gfx942`), found `{vendor}`"
        ));
    }
    if os != "amdhsa" {
        return Err(format!(
            "triple OS must be `amdhsa` (as in `amdgcn-amd-amdhsa--gfx942`), found `{os}`"
        ));
    }
    let from_arch = if arch == "amdgcn" || arch == "amdgpu" {
        None
    } else {
        match processors().iter().find(|p| p.triple_arch() == arch) {
            Some(p) => Some(p),
            None => {
                return Err(format!(
                    "unknown triple architecture `{arch}`; expected `amdgcn` or an LLVM 23 \
                     sub-architecture such as `amdgpu9.42` (gfx942) or `amdgpu11.00` (gfx1100)"
                ))
            }
        }
    };
    let proc_part = parts.get(4).copied().filter(|p| !p.is_empty());
    if proc_part.is_none() && from_arch.is_none() {
        return Err(format!(
            "the triple `{s}` names no processor; append one, as in `amdgcn-amd-amdhsa--gfx942`"
        ));
    }
    Ok((proc_part, from_arch))
}

impl TargetId {
    /// A target ID for `processor` with both features [`Feature::Any`].
    pub fn new(processor: &'static Processor) -> TargetId {
        TargetId {
            processor,
            sramecc: Feature::Any,
            xnack: Feature::Any,
        }
    }

    /// Parses any spelling listed in the [module docs](self). Rejects unknown
    /// processors (suggesting the nearest names), unknown, duplicate or
    /// unsupported features, and malformed triples.
    pub fn parse(s: &str) -> Result<TargetId, TargetIdError> {
        let input = s;
        let err = |kind| TargetIdError::new(input, kind);
        let s = s.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        // Offload bundle entry IDs (`hipv4-amdgcn-amd-amdhsa--gfx942`).
        let s = ["hipv4-", "hip-", "hcc-", "openmp-"]
            .iter()
            .find_map(|k| s.strip_prefix(k).filter(|r| r.starts_with("amdgcn-")))
            .unwrap_or(s);
        if s.is_empty() {
            return Err(err(TargetIdErrorKind::Empty));
        }
        let (body, triple_proc) = if s.starts_with("amdgcn-") || s.starts_with("amdgpu") {
            let (tail, from_arch) =
                split_triple(s).map_err(|reason| err(TargetIdErrorKind::BadTriple { reason }))?;
            match tail {
                Some(t) => (t, from_arch),
                None => {
                    // Triple alone: `amdgpu9.42-amd-amdhsa`.
                    let p = from_arch.expect("split_triple checked");
                    return Ok(TargetId::new(p));
                }
            }
        } else {
            (s, None)
        };

        let mut fields = body.split(':');
        let name = fields.next().unwrap_or("");
        let Some(processor) = processor(name) else {
            let suggestions = nearest(name, processors().iter().map(|p| p.name), 3);
            return Err(err(TargetIdErrorKind::UnknownProcessor {
                name: name.to_string(),
                suggestions,
            }));
        };
        if let Some(tp) = triple_proc {
            if tp.name != processor.name {
                return Err(err(TargetIdErrorKind::BadTriple {
                    reason: format!(
                        "the triple architecture `{}` names {} but the processor is {}; \
                         use `{}-amd-amdhsa-unknown-{}` or `amdgcn-amd-amdhsa--{}`",
                        tp.triple_arch(),
                        tp.name,
                        processor.name,
                        processor.triple_arch(),
                        processor.name,
                        processor.name
                    ),
                }));
            }
        }

        let mut id = TargetId::new(processor);
        let mut seen_sramecc = false;
        let mut seen_xnack = false;
        for feat in fields {
            let (fname, setting) = match feat.as_bytes().last() {
                Some(b'+') => (&feat[..feat.len() - 1], Feature::On),
                Some(b'-') => (&feat[..feat.len() - 1], Feature::Off),
                _ => {
                    return Err(err(TargetIdErrorKind::BadFeature {
                        feature: feat.to_string(),
                    }))
                }
            };
            let (fname, seen, supported, slot): (&'static str, _, _, _) = match fname {
                "sramecc" => (
                    "sramecc",
                    &mut seen_sramecc,
                    processor.sramecc,
                    &mut id.sramecc,
                ),
                "xnack" => ("xnack", &mut seen_xnack, processor.xnack, &mut id.xnack),
                _ => {
                    return Err(err(TargetIdErrorKind::BadFeature {
                        feature: feat.to_string(),
                    }))
                }
            };
            if *seen {
                return Err(err(TargetIdErrorKind::DuplicateFeature { feature: fname }));
            }
            if !supported {
                return Err(err(TargetIdErrorKind::UnsupportedFeature {
                    processor: processor.name,
                    feature: fname,
                }));
            }
            *seen = true;
            *slot = setting;
        }
        Ok(id)
    }

    /// Canonical LLVM spelling: `gfx942:sramecc+:xnack-` (sramecc before
    /// xnack, unspecified features omitted).
    pub fn name(&self) -> String {
        let mut s = self.processor.name.to_string();
        if self.sramecc.is_pinned() {
            s.push_str(":sramecc");
            s.push_str(self.sramecc.sign());
        }
        if self.xnack.is_pinned() {
            s.push_str(":xnack");
            s.push_str(self.xnack.sign());
        }
        s
    }

    /// HSA ISA name: `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` (what the
    /// ROCm runtime reports for an agent and what `.amdgcn_target` holds).
    pub fn hsa_isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{}", self.name())
    }

    /// The LLVM 23+ / IREE 3.13 spelling:
    /// `amdgpu9.42-amd-amdhsa-unknown-gfx942:sramecc+`.
    pub fn llvm23_name(&self) -> String {
        format!(
            "{}-amd-amdhsa-unknown-{}",
            self.processor.triple_arch(),
            self.name()
        )
    }

    /// True if every feature the processor supports is pinned (on or off),
    /// as in the ISA name the ROCm runtime reports for a real agent.
    pub fn is_fully_specified(&self) -> bool {
        (!self.processor.sramecc || self.sramecc.is_pinned())
            && (!self.processor.xnack || self.xnack.is_pinned())
    }

    /// Number of pinned features (used to prefer specific code objects).
    pub fn pinned_features(&self) -> usize {
        usize::from(self.sramecc.is_pinned()) + usize::from(self.xnack.is_pinned())
    }

    /// Sets `sramecc`, failing if the processor does not support it.
    pub fn with_sramecc(mut self, f: Feature) -> Result<TargetId, TargetIdError> {
        if f.is_pinned() && !self.processor.sramecc {
            return Err(TargetIdError::new(
                &self.name(),
                TargetIdErrorKind::UnsupportedFeature {
                    processor: self.processor.name,
                    feature: "sramecc",
                },
            ));
        }
        self.sramecc = f;
        Ok(self)
    }

    /// Sets `xnack`, failing if the processor does not support it.
    pub fn with_xnack(mut self, f: Feature) -> Result<TargetId, TargetIdError> {
        if f.is_pinned() && !self.processor.xnack {
            return Err(TargetIdError::new(
                &self.name(),
                TargetIdErrorKind::UnsupportedFeature {
                    processor: self.processor.name,
                    feature: "xnack",
                },
            ));
        }
        self.xnack = f;
        Ok(self)
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for TargetId {
    type Err = TargetIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TargetId::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> TargetId {
        TargetId::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        match TargetId::parse(s) {
            Ok(t) => panic!("{s} parsed as {t}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_spelling_of_gfx942() {
        let want = TargetId {
            processor: processor("gfx942").unwrap(),
            sramecc: Feature::On,
            xnack: Feature::Off,
        };
        for s in [
            "gfx942:sramecc+:xnack-",
            "gfx942:xnack-:sramecc+",
            "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
            "amdgcn-amd-amdhsa--gfx942:xnack-:sramecc+",
            "amdgpu9.42-amd-amdhsa-unknown-gfx942:sramecc+:xnack-",
            "amdgpu9.42-amd-amdhsa--gfx942:sramecc+:xnack-",
            "  gfx942:sramecc+:xnack-\n",
            "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\0",
        ] {
            assert_eq!(parse(s), want, "{s:?}");
        }
        assert_eq!(want.name(), "gfx942:sramecc+:xnack-");
        assert_eq!(want.to_string(), "gfx942:sramecc+:xnack-");
        assert_eq!(
            want.hsa_isa_name(),
            "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"
        );
        assert_eq!(
            want.llvm23_name(),
            "amdgpu9.42-amd-amdhsa-unknown-gfx942:sramecc+:xnack-"
        );
        assert!(want.is_fully_specified());
        let bare = parse("gfx942");
        assert_eq!(bare, TargetId::new(processor("gfx942").unwrap()));
        assert_eq!(bare.name(), "gfx942");
        assert!(!bare.is_fully_specified());
        assert_eq!("gfx942".parse::<TargetId>().unwrap(), bare);
    }

    #[test]
    fn agent_and_compiler_spellings() {
        // rocminfo / hsa_isa_get_info_alt names and HIP gcnArchName.
        assert_eq!(
            parse("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").name(),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(parse("gfx90a:sramecc+:xnack-").processor.name, "gfx90a");
        assert_eq!(parse("amdgcn-amd-amdhsa--gfx1100").name(), "gfx1100");
        assert_eq!(parse("amdgcn-amd-amdhsa--gfx1250").name(), "gfx1250");
        // IREE 3.13 `.amdgcn_target` and triples alone.
        assert_eq!(
            parse("amdgpu9.42-amd-amdhsa-unknown-gfx942").name(),
            "gfx942"
        );
        assert_eq!(
            parse("amdgpu11.00-amd-amdhsa-unknown-gfx1100").name(),
            "gfx1100"
        );
        assert_eq!(
            parse("amdgpu12.01-amd-amdhsa-unknown-gfx1201").name(),
            "gfx1201"
        );
        assert_eq!(
            parse("amdgpu9.0a-amd-amdhsa-unknown-gfx90a").name(),
            "gfx90a"
        );
        assert_eq!(parse("amdgpu9.42-amd-amdhsa").name(), "gfx942");
        assert_eq!(parse("amdgpu9.50-amd-amdhsa-unknown").name(), "gfx950");
        assert_eq!(parse("amdgpu9.4-amd-amdhsa").name(), "gfx9-4-generic");
        assert_eq!(
            parse("amdgcn-amd-amdhsa--gfx9-4-generic:xnack+").name(),
            "gfx9-4-generic:xnack+"
        );
        assert_eq!(
            parse("amdgpu9.4-amd-amdhsa-unknown-gfx9-4-generic").name(),
            "gfx9-4-generic"
        );
        assert_eq!(parse("gfx11-generic").name(), "gfx11-generic");
        // clang-offload-bundler entry IDs.
        assert_eq!(
            parse("hipv4-amdgcn-amd-amdhsa--gfx942:xnack-").name(),
            "gfx942:xnack-"
        );
        assert!(TargetId::parse("hipv4-gfx942").is_err());
    }

    #[test]
    fn round_trip_every_processor_and_feature_combination() {
        for p in processors() {
            let srameccs: &[Feature] = if p.sramecc {
                &[Feature::Any, Feature::On, Feature::Off]
            } else {
                &[Feature::Any]
            };
            let xnacks: &[Feature] = if p.xnack {
                &[Feature::Any, Feature::On, Feature::Off]
            } else {
                &[Feature::Any]
            };
            for &sramecc in srameccs {
                for &xnack in xnacks {
                    let t = TargetId {
                        processor: p,
                        sramecc,
                        xnack,
                    };
                    for s in [t.name(), t.hsa_isa_name(), t.llvm23_name()] {
                        assert_eq!(parse(&s), t, "{s}");
                    }
                }
            }
        }
    }

    #[test]
    fn rejects_unsupported_features() {
        // clang-22 -mcpu=gfx1100:xnack+ also fails ("invalid target ID").
        assert_eq!(
            err("gfx1100:xnack+"),
            "invalid target ID `gfx1100:xnack+`: gfx1100 does not support the xnack feature; \
             remove `:xnack±` (gfx1100 accepts no target features)"
        );
        assert_eq!(
            err("gfx900:sramecc+"),
            "invalid target ID `gfx900:sramecc+`: gfx900 does not support the sramecc feature; \
             remove `:sramecc±` (gfx900 accepts xnack)"
        );
        assert!(err("gfx1250:xnack-").contains("gfx1250 does not support the xnack"));
        assert!(err("amdgcn-amd-amdhsa--gfx1201:sramecc-").contains("does not support"));
        let e = TargetId::new(processor("gfx1100").unwrap()).with_xnack(Feature::On);
        assert!(e.is_err());
        let ok = TargetId::new(processor("gfx90a").unwrap())
            .with_xnack(Feature::On)
            .unwrap();
        assert_eq!(ok.name(), "gfx90a:xnack+");
    }

    #[test]
    fn rejects_bad_syntax() {
        assert_eq!(
            err("gfx942:xnack+:xnack-"),
            "invalid target ID `gfx942:xnack+:xnack-`: feature xnack is given more than once; keep one"
        );
        assert!(err("gfx942:foo+").contains("bad feature `foo+`"));
        assert!(err("gfx942:xnack").contains("bad feature `xnack`"));
        assert!(err("gfx942:").contains("bad feature ``"));
        assert!(err("gfx942:XNACK+").contains("bad feature"));
        assert!(err("").starts_with("empty target ID"));
        assert!(err("   ").starts_with("empty target ID"));
        assert!(err("amdgcn-amd-amdpal--gfx942").contains("triple OS must be `amdhsa`"));
        assert!(err("amdgcn-nvidia-amdhsa--gfx942").contains("triple vendor must be `amd`"));
        assert!(err("amdgcn-amd-amdhsa").contains("names no processor"));
        assert!(err("amdgcn-amd-amdhsa-gfx942")
            .contains("write `amdgcn-amd-amdhsa--gfx942` (two dashes)"));
        assert!(err("amdgcn-amd-amdhsa--").contains("names no processor"));
        assert!(err("amdgpu9.99-amd-amdhsa").contains("unknown triple architecture `amdgpu9.99`"));
        assert_eq!(
            err("amdgpu9.42-amd-amdhsa-unknown-gfx1100"),
            "invalid target ID `amdgpu9.42-amd-amdhsa-unknown-gfx1100`: the triple architecture \
             `amdgpu9.42` names gfx942 but the processor is gfx1100; use \
             `amdgpu11.00-amd-amdhsa-unknown-gfx1100` or `amdgcn-amd-amdhsa--gfx1100`"
        );
    }

    #[test]
    fn unknown_processor_suggests_nearest() {
        let e = TargetId::parse("gfx9422").unwrap_err();
        assert_eq!(e.suggestions()[0], "gfx942");
        assert_eq!(
            e.to_string(),
            "invalid target ID `gfx9422`: unknown processor `gfx9422`; did you mean gfx942, \
             gfx902, gfx900? (run `gcn-patch targets` for the list of processors and families)"
        );
        assert_eq!(
            TargetId::parse("GFX942").unwrap_err().suggestions()[0],
            "gfx942"
        );
        assert_eq!(
            TargetId::parse("gfx1101x").unwrap_err().suggestions()[0],
            "gfx1101"
        );
        assert_eq!(
            TargetId::parse("gfx11-generc").unwrap_err().suggestions()[0],
            "gfx11-generic"
        );
        assert_eq!(
            TargetId::parse("gfx94-generic").unwrap_err().suggestions()[0],
            "gfx9-generic"
        );
        let removed = err("gfx940:xnack-");
        assert!(removed.contains("removed in LLVM 21"), "{removed}");
        assert!(removed.contains("`gfx942`"), "{removed}");
        assert_eq!(
            err("mi300x"),
            "invalid target ID `mi300x`: unknown processor `mi300x`; `mi300x` looks like a \
             product name, use its processor: gfx942 (run `gcn-patch targets` for the list of \
             processors and families)"
        );
        // Nothing close: no suggestion, but still the hint.
        let far = err("nvidia-h100");
        assert!(!far.contains("did you mean"), "{far}");
        assert!(far.contains("gcn-patch targets"), "{far}");
    }

    #[test]
    fn feature_matching() {
        use Feature::*;
        assert!(Any.accepts(On) && Any.accepts(Off) && On.accepts(On) && Off.accepts(Off));
        assert!(!On.accepts(Off) && !Off.accepts(On));
        assert!(On.accepts(Any));
        assert_eq!(On.to_string(), "on");
        assert_eq!(Feature::default(), Any);
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("gfx942", "gfx942"), 0);
        assert_eq!(edit_distance("gfx942", "gfx90a"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("GFX", "gfx"), 0);
    }
}
