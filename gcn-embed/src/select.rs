//! Picking the embedded code object that runs on a GPU agent, with the ROCm
//! loader's rules.
//!
//! The rule mirrors two implementations that agree on it:
//!
//! * ROCR-Runtime `runtime/hsa-runtime/core/runtime/isa.cpp`,
//!   `Isa::IsCompatible(code_object_isa, agent_isa, codeGenericVersion)`:
//!   a code object whose `sramecc`/`xnack` is pinned (enabled or disabled)
//!   must equal the agent's setting; a generic code object must be the
//!   agent's generic target (`agent_isa.GetIsaGeneric()`, features stripped)
//!   with a generic version at least the registry's minimum (1); any other
//!   code object must be the agent's processor (`GetVersion()` equality).
//! * ROCm CLR `hipamd/src/hip_comgr_helper.cpp`,
//!   `isCodeObjectCompatibleWithDevice(co_triple_target_id,
//!   agent_triple_target_id, genericVersion)`: same checks, with the generic
//!   version read from `e_flags` only for ELF ABI version V6
//!   (`getGenericVersion`), and `isCompatibleWithGenericTarget(co_processor,
//!   agent_isa_processor)` mapping processors to their generic targets.
//!
//! ROCm reports agents by their full ISA name, with every feature the
//! processor supports pinned (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`).
//! If a caller passes a name that leaves a feature unspecified (`gfx942`),
//! this module treats the agent's setting as unknown and accepts code
//! objects pinned either way.
//!
//! One known difference: ROCR's ISA registry lists `gfx906:sramecc±` agents
//! with sramecc "any", so ROCR ignores a pinned sramecc on gfx906 objects;
//! this module applies the documented rule (pinned must equal the agent's).
//!
//! Among several compatible code objects, [`select`] prefers (in order) the
//! exact processor over the generic target, then the object with more
//! pinned features matching the agent, then the earlier object.
//!
//! The code object's target is taken from its ELF header, as the loader
//! does; the declared [`CodeObject::target`] must agree with it.

use std::fmt;

use crate::elf::{read_header, EFlags};
use crate::target_id::{Feature, TargetId, TargetIdError};

/// One embedded code object (an `.hsaco`): what gcn-build generates into
/// `$OUT_DIR/gcn_kernels.rs`. All fields are `'static` so it can live in a
/// `static`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeObject {
    /// Target ID it was built for, canonical spelling (`gfx942:xnack-`).
    pub target: &'static str,
    /// The ELF bytes (`include_bytes!`).
    pub bytes: &'static [u8],
    /// SHA-256 of `bytes`, lowercase hex (checked by [`CodeObject::verify`]).
    pub sha256: &'static str,
    /// Kernel symbols defined in it.
    pub kernels: &'static [&'static str],
}

/// A kernel and the code objects (one per target) that contain it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Kernel name (the manifest's name for generated code).
    pub name: &'static str,
    /// IREE executable name, for `--iree-hal-substitute-executable-object=<name>=<file>`.
    pub iree_executable: Option<&'static str>,
    /// Code objects containing the kernel.
    pub objects: &'static [CodeObject],
}

impl CodeObject {
    /// The declared target, parsed.
    pub fn target_id(&self) -> Result<TargetId, TargetIdError> {
        TargetId::parse(self.target)
    }

    /// True if the object defines kernel `name`.
    pub fn has_kernel(&self, name: &str) -> bool {
        self.kernels.contains(&name)
    }

    /// Checks that the bytes are an AMDGPU ELF whose `e_flags` match
    /// [`CodeObject::target`] and whose SHA-256 matches
    /// [`CodeObject::sha256`] (skipped when `sha256` is empty).
    pub fn verify(&self) -> Result<(), String> {
        self.effective_target().map_err(|r| r.to_string())?;
        if !self.sha256.is_empty() {
            let actual = crate::sha256::sha256_hex(self.bytes);
            if !actual.eq_ignore_ascii_case(self.sha256) {
                return Err(format!(
                    "code object for {} is corrupt: SHA-256 is {actual}, expected {}",
                    self.target, self.sha256
                ));
            }
        }
        Ok(())
    }

    /// Target and generic version as the loader sees them (from the ELF
    /// header), checked against the declared target.
    fn effective_target(&self) -> Result<(TargetId, u32), Reason> {
        let declared = self
            .target_id()
            .map_err(|e| Reason::BadTarget(e.to_string()))?;
        let header = read_header(self.bytes).map_err(|e| Reason::BadElf(e.to_string()))?;
        let flags = header.flags();
        let from_elf = flags.target_id();
        if from_elf != Some(declared) {
            return Err(Reason::ElfMismatch {
                elf: flags,
                declared: declared.name(),
            });
        }
        Ok((declared, flags.generic_version))
    }
}

/// How a compatible code object matches an agent (higher is better).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// True for the agent's own processor, false for its generic target.
    pub exact_processor: bool,
    /// Number of pinned features of the object (equal to the agent's).
    pub pinned_features: usize,
}

/// Why a code object does not run on an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// Built for another processor, which is not the agent's generic target.
    OtherProcessor {
        /// The object's processor.
        object: &'static str,
    },
    /// The agent's generic target, but `e_flags` carry generic version 0
    /// (or the object is not code object v6), so the loader does not treat
    /// it as generic.
    GenericVersion {
        /// The generic version found.
        found: u32,
    },
    /// A pinned feature differs from the agent's.
    Feature {
        /// `"sramecc"` or `"xnack"`.
        name: &'static str,
        /// The object's setting.
        object: Feature,
        /// The agent's setting.
        agent: Feature,
    },
    /// The declared target does not parse.
    BadTarget(String),
    /// The bytes are not an AMDGPU ELF.
    BadElf(String),
    /// `e_flags` disagree with the declared target.
    ElfMismatch {
        /// Decoded flags.
        elf: EFlags,
        /// Declared target.
        declared: String,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::OtherProcessor { object } => {
                write!(f, "built for another processor ({object})")
            }
            Reason::GenericVersion { found } => write!(
                f,
                "generic version {found} in e_flags; the ROCm loader needs code object v6 \
                 with generic version >= 1 (rebuild with clang/ld.lld 19 or later)"
            ),
            Reason::Feature {
                name,
                object,
                agent,
            } => write!(
                f,
                "needs {name}{} but the agent runs with {name}{}",
                object.sign(),
                agent.sign()
            ),
            Reason::BadTarget(e) => write!(f, "declared target does not parse: {e}"),
            Reason::BadElf(e) => write!(f, "bytes are not an AMDGPU code object: {e}"),
            Reason::ElfMismatch { elf, declared } => write!(
                f,
                "ELF header says {elf} but the object is declared as {declared}; rebuild it"
            ),
        }
    }
}

/// Checks one object target against an agent, per the module rule.
/// `generic_version` is the object's `EF_AMDGPU_GENERIC_VERSION` (0 if not
/// code object v6).
pub fn compatibility(
    object: &TargetId,
    generic_version: u32,
    agent: &TargetId,
) -> Result<Rank, Reason> {
    let op = object.processor;
    let exact = op.name == agent.processor.name;
    if !exact {
        if !(op.is_generic && agent.processor.generic == Some(op.name)) {
            return Err(Reason::OtherProcessor { object: op.name });
        }
        if generic_version < crate::elf::EF_AMDGPU_GENERIC_VERSION_MIN {
            return Err(Reason::GenericVersion {
                found: generic_version,
            });
        }
    }
    let mut pinned = 0;
    for (name, o, a) in [
        ("sramecc", object.sramecc, agent.sramecc),
        ("xnack", object.xnack, agent.xnack),
    ] {
        if !o.accepts(a) {
            return Err(Reason::Feature {
                name,
                object: o,
                agent: a,
            });
        }
        if o.is_pinned() && a.is_pinned() {
            pinned += 1;
        }
    }
    Ok(Rank {
        exact_processor: exact,
        pinned_features: pinned,
    })
}

/// No code object runs on the agent (or the agent ISA name is invalid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectError(Box<SelectErrorInner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct SelectErrorInner {
    kernel: Option<String>,
    agent_isa: String,
    agent: Result<TargetId, TargetIdError>,
    rejected: Vec<(String, Reason)>,
}

impl SelectError {
    /// The agent ISA name as given.
    pub fn agent_isa(&self) -> &str {
        &self.0.agent_isa
    }

    /// The parsed agent, or why it did not parse.
    pub fn agent(&self) -> Result<&TargetId, &TargetIdError> {
        self.0.agent.as_ref()
    }

    /// Every embedded object's target with the reason it was rejected (empty
    /// when the agent did not parse).
    pub fn rejected(&self) -> &[(String, Reason)] {
        &self.0.rejected
    }

    /// The kernel, when selecting through [`Kernel::select`].
    pub fn kernel(&self) -> Option<&str> {
        self.0.kernel.as_deref()
    }
}

fn feature_clause(name: &str, f: Feature) -> String {
    match f {
        Feature::Any => String::new(),
        _ => format!(", {name}{} or {name} unspecified", f.sign()),
    }
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, for_what) = match &self.0.kernel {
            Some(k) => (format!("kernel `{k}`"), format!(" for kernel `{k}`")),
            None => ("the embedded kernels".to_string(), String::new()),
        };
        let agent = match &self.0.agent {
            Err(e) => {
                writeln!(
                    f,
                    "cannot pick a code object for {what}: the agent ISA name `{}` is invalid",
                    self.0.agent_isa
                )?;
                return write!(f, "  cause: {e}");
            }
            Ok(a) => a,
        };
        writeln!(
            f,
            "no embedded code object{for_what} runs on agent `{}`",
            self.0.agent_isa
        )?;
        let p = agent.processor;
        writeln!(f, "  agent target ID: {agent}")?;
        let mut accepts = format!("`{}`", p.name);
        if let Some(g) = p.generic {
            accepts.push_str(&format!(" or `{g}` (generic version >= 1)"));
        }
        accepts.push_str(&feature_clause("sramecc", agent.sramecc));
        accepts.push_str(&feature_clause("xnack", agent.xnack));
        writeln!(f, "  the agent accepts: {accepts}")?;
        if self.0.rejected.is_empty() {
            writeln!(f, "  embedded: nothing")?;
        } else {
            writeln!(f, "  embedded:")?;
            for (t, r) in &self.0.rejected {
                writeln!(f, "    {t}: {r}")?;
            }
        }
        let add = match p.generic {
            Some(g) => format!("`{}` or `{g}`", p.name),
            None => format!("`{}`", p.name),
        };
        write!(
            f,
            "  help: if the kernel should run on this agent, add {add} to its targets (kernels.toml) and rebuild; \
             compiler output retargets safely, but hand-written code may rely on its own processor's \
             timing and features, which no check sees: test it on `{}` first",
            p.name
        )
    }
}

impl std::error::Error for SelectError {}

/// Picks the best object in `objects` for the agent named `agent_isa` (any
/// spelling [`TargetId::parse`] accepts, typically the HSA ISA name
/// `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` or HIP's `gcnArchName`).
pub fn select<'a>(
    objects: &'a [CodeObject],
    agent_isa: &str,
) -> Result<&'a CodeObject, SelectError> {
    select_inner(objects, agent_isa, None)
}

fn select_inner<'a>(
    objects: &'a [CodeObject],
    agent_isa: &str,
    kernel: Option<&str>,
) -> Result<&'a CodeObject, SelectError> {
    let error = |agent, rejected| {
        SelectError(Box::new(SelectErrorInner {
            kernel: kernel.map(str::to_string),
            agent_isa: agent_isa.to_string(),
            agent,
            rejected,
        }))
    };
    let agent = match TargetId::parse(agent_isa) {
        Ok(a) => a,
        Err(e) => return Err(error(Err(e), Vec::new())),
    };
    let mut best: Option<(Rank, &'a CodeObject)> = None;
    let mut rejected = Vec::new();
    for o in objects {
        let verdict = o
            .effective_target()
            .and_then(|(t, gv)| compatibility(&t, gv, &agent));
        match verdict {
            Ok(rank) => {
                if best.is_none_or(|(b, _)| rank > b) {
                    best = Some((rank, o));
                }
            }
            Err(r) => rejected.push((o.target.to_string(), r)),
        }
    }
    match best {
        Some((_, o)) => Ok(o),
        None => Err(error(Ok(agent), rejected)),
    }
}

impl Kernel {
    /// Picks the code object to load on the agent named `agent_isa`; see
    /// [`select`].
    pub fn select(&self, agent_isa: &str) -> Result<&'static CodeObject, SelectError> {
        select_inner(self.objects, agent_isa, Some(self.name))
    }

    /// The object built for exactly `target` (any spelling; features must
    /// match exactly, no generic fallback).
    pub fn get(&self, target: &str) -> Option<&'static CodeObject> {
        let want = TargetId::parse(target).ok();
        self.objects.iter().find(|o| match (&want, o.target_id()) {
            (Some(w), Ok(t)) => *w == t,
            _ => o.target == target,
        })
    }

    /// All code objects of the kernel.
    pub fn objects(&self) -> impl Iterator<Item = &'static CodeObject> {
        self.objects.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> TargetId {
        TargetId::parse(s).unwrap()
    }

    #[test]
    fn rule_without_elf() {
        let exact = Rank {
            exact_processor: true,
            pinned_features: 0,
        };
        assert_eq!(compatibility(&t("gfx1100"), 0, &t("gfx1100")), Ok(exact));
        assert_eq!(
            compatibility(&t("gfx11-generic"), 1, &t("gfx1103")),
            Ok(Rank {
                exact_processor: false,
                pinned_features: 0
            })
        );
        assert_eq!(
            compatibility(&t("gfx11-generic"), 0, &t("gfx1103")),
            Err(Reason::GenericVersion { found: 0 })
        );
        // Future generic versions are accepted (">= 1").
        assert!(compatibility(&t("gfx11-generic"), 2, &t("gfx1103")).is_ok());
        assert_eq!(
            compatibility(&t("gfx12-generic"), 1, &t("gfx1103")),
            Err(Reason::OtherProcessor {
                object: "gfx12-generic"
            })
        );
        // An agent is never covered by a real processor of its family.
        assert!(compatibility(&t("gfx1100"), 0, &t("gfx1101")).is_err());
        let r = compatibility(
            &t("gfx9-4-generic:sramecc+:xnack-"),
            1,
            &t("gfx950:sramecc+:xnack-"),
        );
        assert_eq!(
            r,
            Ok(Rank {
                exact_processor: false,
                pinned_features: 2
            })
        );
        assert_eq!(
            compatibility(&t("gfx90a:sramecc-"), 0, &t("gfx90a:sramecc+:xnack-")),
            Err(Reason::Feature {
                name: "sramecc",
                object: Feature::Off,
                agent: Feature::On
            })
        );
        // Exact processor outranks any number of pinned features.
        assert!(
            exact
                > Rank {
                    exact_processor: false,
                    pinned_features: 2
                }
        );
    }
}
