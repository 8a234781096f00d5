//! Lift stage: one AMDGPU code object → editable assembly that rebuilds
//! byte-identically (`gcn-patch lift`, and `gcn-patch import` of binaries).
//!
//! The output is an ordinary dump: `.amdgcn_target` and
//! `.amdhsa_code_object_version` from the ELF header, every symbol with its
//! type, binding, visibility and size, the `.text` as instructions (each
//! checked to re-encode to its original bytes, else kept as a raw `.long`
//! line with its disassembly beside it), each kernel descriptor as an
//! `.amdhsa_kernel` block (checked to re-assemble to the same 64 bytes, else
//! raw bytes with every field decoded in a comment), other `.rodata`/`.data`
//! with its symbols, and the metadata as `.amdgpu_metadata` (checked to decode
//! to the same MessagePack document).
//!
//! Then, when the caller passes a check ([`Verify`]; `ops::lift` passes the
//! identity check, which builds the asm as builds build an unpatched source
//! and compares it with the original byte for byte), the asm must pass it:
//! `.text`, `.rodata`, the metadata note and `e_flags`. A difference is an
//! error naming the bytes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::parse::{RegFile, RegisterRef};
use crate::stage::assemble::TRIPLE;
use crate::stage::toolchain::Toolchain;

pub(crate) mod container;
pub(crate) mod descriptor;
pub(crate) mod disasm;
pub(crate) mod elf;
pub(crate) mod encode;
pub(crate) mod metadata;
mod msb;

/// The comment that marks an instruction kept as its raw encoding:
/// `.long 0x…, 0x… ; raw: <disassembly>`. The checks read such a line
/// through the disassembly after the marker.
pub const RAW_MARKER: &str = crate::base::parse::RAW_MARKER;

/// The subtarget features lifting disassembles and assembles with: the
/// target ID's (`+xnack`, `-sramecc`, …) and, on gfx11 and gfx12,
/// `+real-true16`, so 16-bit register halves (`v1.l`, `v1.h`) decode and
/// re-encode (without it LLVM 22 cannot decode them).
pub fn features(target: &TargetId) -> Vec<String> {
    let mut f = crate::stage::assemble::target_features(target);
    if crate::stage::assemble::has_true16(target) {
        f.push(crate::stage::assemble::REAL_TRUE16.into());
    }
    f
}

/// `llvm-mc` of the toolchain for `target` with [`features`], reading stdin
/// and writing stdout; `args` say what to make.
pub(crate) fn mc_command(
    tc: &Toolchain,
    target: &TargetId,
    args: &[&str],
) -> std::process::Command {
    let mc = tc.llvm_tool("llvm-mc");
    let mut cmd = crate::stage::toolchain::llvm_mc_command(&mc, TRIPLE, target, &features(target));
    cmd.args(args).args(["-o", "-", "-"]);
    cmd
}

/// The parts of a code object the identity check compares, as the
/// per-file report names them.
pub const COMPARED: &str = ".text, .rodata, .note (metadata), e_flags";

/// What lift established about the rebuild of the asm it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Built as a build does and compared: every part in [`COMPARED`]
    /// (and every other section lift carries) is byte-identical.
    Identical,
    /// Not checked: verification was turned off (`lift --no-verify`).
    NotVerified,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Identity::Identical => write!(f, "rebuilds identical ({COMPARED})"),
            Identity::NotVerified => {
                write!(
                    f,
                    "not verified (--no-verify): the rebuild was not compared"
                )
            }
        }
    }
}

/// What a rebuild check needs to know of a lift.
pub struct Input<'a> {
    /// The original code object, read.
    pub(crate) co: &'a elf::CodeObject,
    /// The lifted asm.
    pub(crate) asm: &'a str,
    /// Names the code object in messages.
    pub(crate) origin: &'a Path,
    /// The lifted instructions (to name the one at a differing byte).
    pub(crate) insns: &'a [disasm::Insn],
    /// Their text as written.
    pub(crate) texts: &'a [String],
}

/// A check that lifted asm rebuilds the original: [`Identity::Identical`],
/// or an error saying which bytes differ. The one gcn-patch uses is
/// `ops::lift`'s identity check (it builds through the pipeline, a layer
/// above this stage, hence the callback).
pub type Verify<'v> = &'v dyn Fn(&Input) -> Result<Identity, Diagnostics>;

/// A lifted code object.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The assembly text (a complete `.s`).
    pub asm: String,
    /// The code object's target ID, from `e_flags`.
    pub target: TargetId,
    /// Code object version, from `EI_ABIVERSION`.
    pub code_object_version: u32,
    /// Kernel symbols (those with a `.kd` descriptor), in address order.
    pub kernels: Vec<String>,
    /// Instructions in `.text`.
    pub instructions: usize,
    /// Instructions kept as raw encodings (`.long … ; raw: <disassembly>`).
    pub raw_instructions: usize,
    /// Kernels whose descriptor is kept as raw bytes.
    pub raw_descriptors: Vec<String>,
    /// What a user should know (raw lines and why, raw descriptors), one per item.
    pub notes: Vec<Diagnostic>,
    /// Whether the rebuild was compared with the original (a difference is
    /// an error, so a lift that returns was identical or not verified).
    pub identity: Identity,
}

/// Lift the code object in `path`: a bare code object (`.co`/`.hsaco`), or
/// one member of a container (offload bundle, host object with
/// `.hip_fatbin`, IREE `.vmfb`; see `container`): the one for `target`,
/// or the only one. Reads the file; writes nothing.
pub fn lift_file(
    path: &Path,
    target: Option<&TargetId>,
    tc: &Toolchain,
    verify: Option<Verify>,
) -> Result<Lifted, Diagnostics> {
    let bytes = std::fs::read(path).map_err(|e| {
        Diagnostic::error(
            Code::ReadFailed,
            format!("cannot read {}: {e}", path.display()),
        )
        .with_help("check the path")
    })?;
    let contents = container::code_objects(&bytes, path)?;
    let member = match (target, contents.members.as_slice()) {
        (Some(t), _) => contents.select(t, path)?,
        (None, [only]) => only,
        (None, many) => {
            let have: Vec<String> = many.iter().map(|m| m.target.name()).collect();
            return Err(Diagnostic::error(
                Code::SeveralCodeObjects,
                format!(
                    "{} holds {} code objects: say which one to lift",
                    path.display(),
                    many.len()
                ),
            )
            .with_note(format!("targets: {}", have.join(", ")))
            .with_help(format!("choose one by its target, e.g. {}", have[0]))
            .into());
        }
    };
    let origin = if contents.kind == container::Kind::CodeObject {
        path.to_path_buf()
    } else {
        std::path::PathBuf::from(format!("{} ({})", path.display(), member.label))
    };
    lift(&member.bytes, &origin, tc, verify)
}

/// Lift one code object (`bytes`, read from `origin`, which names it in
/// messages) to assembly with the tools of `tc`, and with `verify` check
/// that the assembly rebuilds it (`ops::lift` passes the identity check:
/// `.text`, `.rodata`, every other carried section, the `.note` bytes and
/// `e_flags` identical, else an error saying which bytes differ; bytes are
/// never changed silently). Without `verify`, [`Lifted::identity`] is
/// [`Identity::NotVerified`].
pub fn lift(
    bytes: &[u8],
    origin: &Path,
    tc: &Toolchain,
    verify: Option<Verify>,
) -> Result<Lifted, Diagnostics> {
    let co = elf::read(bytes, origin)?;
    let job = format!("lifting {}", origin.display());
    let _doing = crate::base::jobs::doing(
        format!(
            "lifting the {} code object {}",
            co.target.name(),
            origin.display()
        ),
        None,
    );
    crate::base::jobs::test_panic_point(
        "lift",
        &origin.file_name().unwrap_or_default().to_string_lossy(),
    );
    let file = temp_object(bytes)?;
    let listing = disasm::disassemble(tc, &co.target, file.path(), &job)?;
    let insns = cover(&co.text, listing.insns);

    // Labels: every symbol of .text, and a `.Llift_<address>` for each branch
    // target without one.
    let mut renamed: HashMap<&str, String> = HashMap::new();
    let mut labels: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (addr, name) in &listing.branch_targets {
        let new = format!(".Llift_{addr:x}");
        renamed.insert(name.as_str(), new.clone());
        labels.entry(addr - co.text.address).or_default().push(new);
    }
    let mut texts: Vec<String> = insns
        .iter()
        .map(|i| rename_labels(&i.text, &renamed))
        .collect();
    // gfx1250: VGPR annotations by the MSBs control flow gives from each
    // kernel's entry (llvm-objdump's assume 0 after each branch).
    let kernels = co.kernels();
    let entries: Vec<u64> = co
        .text
        .symbols
        .iter()
        .filter(|s| kernels.contains(&s.name))
        .map(|s| s.address)
        .collect();
    msb::annotate(&insns, &mut texts, &entries);

    // Instruction by instruction: which ones must stay raw.
    let mut items = Vec::new();
    let syms_at = symbols_by_offset(&co.text);
    for (i, insn) in insns.iter().enumerate() {
        let off = insn.address - co.text.address;
        for s in syms_at.get(&off).into_iter().flatten() {
            items.push(encode::Item::Label(&s.name));
        }
        for l in labels.get(&off).into_iter().flatten() {
            items.push(encode::Item::Label(l));
        }
        items.push(encode::Item::Insn(&texts[i], &insn.bytes));
    }

    // Descriptors and metadata.
    let mut wanted = BTreeMap::new();
    for k in &kernels {
        if let Some(d) = descriptor_bytes(&co, k) {
            wanted.insert(k.clone(), d);
        }
    }
    let code_use = descriptor::CodeUse {
        vcc: texts.iter().any(|t| uses_vcc(t)),
        sgprs: sgprs_used(&texts),
    };
    let tools = Tools {
        tc,
        co: &co,
        origin,
        path: file.path(),
        job: &job,
        wanted: &wanted,
        code_use,
    };
    let check = |asm: &str, verify: Verify| {
        verify(&Input {
            co: &co,
            asm,
            origin,
            insns: &insns,
            texts: &texts,
        })
    };
    let lifted = |asm: String, notes, raw_descriptors, refused: usize, identity| Lifted {
        asm,
        target: co.target,
        code_object_version: co.code_object_version,
        kernels: kernels.clone(),
        instructions: insns.len(),
        raw_instructions: refused,
        raw_descriptors,
        notes,
        identity,
    };

    // First the likely answer: every decoded instruction as text, the
    // descriptors and metadata as decoded and chosen here (what
    // llvm-objdump -D, llvm-readelf and the descriptor's llvm-mc rounds
    // would give). When it rebuilds identical, that is the proof, and none
    // of those tool runs, nor the per-instruction re-encoding run
    // (llvm-mc printing every encoding: the costliest tool run of a lift
    // after the disassembly), is needed.
    let here = verify.map(|_| tools.described_here()).transpose()?;
    let attempt = |refused: &BTreeMap<usize, encode::Refusal>, d: &Described, verify: Verify| {
        let (asm, notes, raw_descriptors) = tools
            .parts(&insns, &texts, &labels, d)
            .finish(refused, &d.descriptors);
        check(&asm, verify)
            .ok()
            .map(|identity| lifted(asm, notes, raw_descriptors, refused.len(), identity))
    };
    if let (Some(verify), Some(here)) = (verify, &here) {
        if let Some(done) = attempt(&encode::predicted(&co.target, &items), here, verify) {
            return Ok(done);
        }
    }

    // Otherwise find the instructions that must stay raw: those llvm-mc
    // rejects or encodes differently; and try again.
    let refused = encode::check(tc, &co.target, &items, &job)?;
    if let (Some(verify), Some(here)) = (verify, &here) {
        if let Some(done) = attempt(&refused, here, verify) {
            return Ok(done);
        }
    }
    // Last (and always without verification, where each descriptor is
    // then checked by assembling it): the descriptors and metadata as the
    // tools describe them.
    let described = tools.described_by_tools()?;
    let (asm, notes, raw_descriptors) = tools
        .parts(&insns, &texts, &labels, &described)
        .finish(&refused, &described.descriptors);
    let identity = match verify {
        Some(verify) => check(&asm, verify)?,
        None => Identity::NotVerified,
    };
    Ok(lifted(asm, notes, raw_descriptors, refused.len(), identity))
}

/// How far a lift of `bytes` describes its descriptors and metadata in
/// this process, and whether that is what the tools give (for tests and
/// surveys: a lift proves it by the identity check instead).
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct InProcess {
    /// Every descriptor decoded here, not by `llvm-objdump -D`.
    pub decoded: bool,
    /// Every descriptor's block chosen by the model, not by `llvm-mc`.
    pub predicted: bool,
    /// The metadata YAML written here, not by `llvm-readelf`.
    pub yaml: bool,
    /// The tools keep a descriptor as raw bytes (then the model leaves
    /// the choice to `llvm-mc`).
    pub raw_descriptors: bool,
    /// Where the two descriptions differ (empty: the same).
    pub differences: Vec<String>,
}

/// The raw lines a lift of `bytes` predicts ([`encode::predicted`])
/// against those the per-instruction re-encoding run finds (for tests
/// and surveys: a lift proves its guess by the identity check instead).
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct RawPrediction {
    /// Instructions in `.text`.
    pub instructions: usize,
    /// Raw lines predicted.
    pub predicted: usize,
    /// Raw lines the re-encoding run finds.
    pub checked: usize,
    /// Each instruction where the two differ, with both answers.
    pub differences: Vec<String>,
}

/// [`RawPrediction`] for the code object `bytes` (runs `llvm-objdump -d`
/// and the re-encoding run).
#[doc(hidden)]
pub fn raw_prediction(
    bytes: &[u8],
    origin: &Path,
    tc: &Toolchain,
) -> Result<RawPrediction, Diagnostics> {
    let co = elf::read(bytes, origin)?;
    let job = format!("lifting {}", origin.display());
    let file = temp_object(bytes)?;
    let listing = disasm::disassemble(tc, &co.target, file.path(), &job)?;
    let branch_targets = listing.branch_targets.clone();
    let insns = cover(&co.text, listing.insns);
    let labels: Vec<String> = branch_targets.values().cloned().collect();
    let mut items: Vec<encode::Item> = labels.iter().map(|l| encode::Item::Label(l)).collect();
    items.extend(insns.iter().map(|i| encode::Item::Insn(&i.text, &i.bytes)));
    let predicted = encode::predicted(&co.target, &items);
    let checked = encode::check(tc, &co.target, &items, &job)?;
    let mut differences = vec![];
    for (i, insn) in insns.iter().enumerate() {
        let (p, c) = (predicted.get(&i), checked.get(&i));
        if p != c {
            differences.push(format!(
                "{:#x} `{}` {:02x?}: predicted {p:?}, the re-encoding run {c:?}",
                insn.address, insn.text, insn.bytes
            ));
        }
    }
    Ok(RawPrediction {
        instructions: insns.len(),
        predicted: predicted.len(),
        checked: checked.len(),
        differences,
    })
}

/// `bytes` in a temporary `.co` file, for the tools to read.
fn temp_object(bytes: &[u8]) -> Result<tempfile::NamedTempFile, Diagnostic> {
    tempfile::Builder::new()
        .suffix(".co")
        .tempfile()
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, bytes)?;
            Ok(f)
        })
        .map_err(|e| {
            Diagnostic::error(
                Code::TempFileFailed,
                format!("cannot write a temporary file: {e}"),
            )
        })
}

/// [`InProcess`] for the code object `bytes` (runs `llvm-objdump -d` for
/// the code's registers, then the tools a lift no longer runs).
#[doc(hidden)]
pub fn in_process(bytes: &[u8], origin: &Path, tc: &Toolchain) -> Result<InProcess, Diagnostics> {
    let co = elf::read(bytes, origin)?;
    let job = format!("lifting {}", origin.display());
    let file = temp_object(bytes)?;
    let listing = disasm::disassemble(tc, &co.target, file.path(), &job)?;
    let texts: Vec<String> = listing.insns.into_iter().map(|i| i.text).collect();
    let mut wanted = BTreeMap::new();
    for k in &co.kernels() {
        if let Some(d) = descriptor_bytes(&co, k) {
            wanted.insert(k.clone(), d);
        }
    }
    let tools = Tools {
        tc,
        co: &co,
        origin,
        path: file.path(),
        job: &job,
        wanted: &wanted,
        code_use: descriptor::CodeUse {
            vcc: texts.iter().any(|t| uses_vcc(t)),
            sgprs: sgprs_used(&texts),
        },
    };
    let mut out = InProcess {
        decoded: wanted
            .values()
            .all(|d| descriptor::decode(d, &co.target, co.code_object_version).is_some()),
        yaml: co
            .metadata
            .as_deref()
            .is_none_or(|m| metadata::yaml_of(m).is_some()),
        ..InProcess::default()
    };
    let blocks = tools.objdump_blocks()?;
    if out.decoded {
        for (k, d) in &wanted {
            let here = descriptor::decode(d, &co.target, co.code_object_version);
            if blocks.get(k) != here.as_ref() {
                let (a, b) = (
                    here.unwrap_or_default(),
                    blocks.get(k).cloned().unwrap_or_default(),
                );
                let only = |x: &[String], y: &[String]| {
                    x.iter()
                        .filter(|l| !y.contains(l))
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.differences.push(format!(
                    "{k} ({}): decoded here only [{}], llvm-objdump -D only [{}]{}",
                    co.target.name(),
                    only(&a, &b),
                    only(&b, &a),
                    if a.len() == b.len() {
                        ""
                    } else {
                        " (line counts differ)"
                    }
                ));
            }
        }
    }
    out.predicted = descriptor::predict(
        &co.target,
        co.code_object_version,
        &wanted,
        &blocks,
        tools.code_use,
    )
    .is_some();
    let here = tools.described_here()?;
    let by_tools = tools.described_by_tools()?;
    out.raw_descriptors = by_tools
        .descriptors
        .values()
        .any(|d| matches!(d, descriptor::Lifted::Raw(_)));
    for (k, d) in &by_tools.descriptors {
        if here.descriptors.get(k) != Some(d) {
            out.differences.push(format!(
                "{k}: chosen here {:?}, by llvm-mc {d:?}",
                here.descriptors.get(k)
            ));
        }
    }
    if here.yaml != by_tools.yaml {
        out.differences.push(format!(
            "metadata: written here\n{}\nby llvm-readelf\n{}",
            here.yaml.unwrap_or_default(),
            by_tools.yaml.unwrap_or_default()
        ));
    }
    Ok(out)
}

/// How a lift writes the descriptors and the metadata.
#[derive(Debug, PartialEq, Eq)]
struct Described {
    /// Each kernel's descriptor, as a block or raw bytes.
    descriptors: BTreeMap<String, descriptor::Lifted>,
    /// The metadata note as `.amdgpu_metadata` YAML.
    yaml: Option<String>,
}

/// What describing the descriptors and metadata needs.
struct Tools<'a> {
    tc: &'a Toolchain,
    co: &'a elf::CodeObject,
    origin: &'a Path,
    path: &'a Path,
    job: &'a str,
    wanted: &'a BTreeMap<String, [u8; 64]>,
    code_use: descriptor::CodeUse,
}

impl<'a> Tools<'a> {
    /// Decoded and chosen here where this crate knows how
    /// ([`descriptor::decode`], [`descriptor::predict`],
    /// [`metadata::yaml_of`]), else by the tools: unproved until the
    /// identity check has built it.
    fn described_here(&self) -> Result<Described, Diagnostic> {
        let co = self.co;
        let mut blocks = BTreeMap::new();
        for (k, d) in self.wanted {
            match descriptor::decode(d, &co.target, co.code_object_version) {
                Some(b) => {
                    blocks.insert(k.clone(), b);
                }
                None => {
                    blocks = self.objdump_blocks()?;
                    break;
                }
            }
        }
        let descriptors = match descriptor::predict(
            &co.target,
            co.code_object_version,
            self.wanted,
            &blocks,
            self.code_use,
        ) {
            Some(d) => d,
            None => self.assembled(&blocks)?,
        };
        let yaml = match co.metadata.as_deref().map(metadata::yaml_of) {
            None => None,
            Some(Some(y)) => Some(y),
            Some(None) => Some(self.readelf_yaml()?),
        };
        Ok(Described { descriptors, yaml })
    }

    /// As llvm-objdump -D and llvm-readelf print them, each descriptor
    /// variant assembled by llvm-mc.
    fn described_by_tools(&self) -> Result<Described, Diagnostic> {
        let blocks = self.objdump_blocks()?;
        let descriptors = self.assembled(&blocks)?;
        let yaml = match &self.co.metadata {
            Some(_) => Some(self.readelf_yaml()?),
            None => None,
        };
        Ok(Described { descriptors, yaml })
    }

    fn objdump_blocks(&self) -> Result<BTreeMap<String, Vec<String>>, Diagnostic> {
        descriptor::objdump_blocks(self.tc, self.path, self.job)
    }

    /// The descriptors: the first of each block's variants that llvm-mc
    /// assembles to the original bytes (small inputs, cheap runs).
    fn assembled(
        &self,
        blocks: &BTreeMap<String, Vec<String>>,
    ) -> Result<BTreeMap<String, descriptor::Lifted>, Diagnostic> {
        descriptor::lift(
            self.tc,
            &self.co.target,
            self.co.code_object_version,
            self.wanted,
            blocks,
            self.code_use,
            self.job,
        )
    }

    fn readelf_yaml(&self) -> Result<String, Diagnostic> {
        metadata::yaml(self.tc, self.path, self.job)?.ok_or_else(|| {
            Diagnostic::error(
                Code::NoMetadata,
                format!(
                    "cannot lift {}: llvm-readelf printed no AMDGPU metadata for its note",
                    self.origin.display()
                ),
            )
        })
    }

    fn parts<'p>(
        &'p self,
        insns: &'p [disasm::Insn],
        texts: &'p [String],
        labels: &'p BTreeMap<u64, Vec<String>>,
        described: &'p Described,
    ) -> Parts<'p> {
        Parts {
            co: self.co,
            origin: self.origin,
            insns,
            texts,
            labels,
            wanted: self.wanted,
            yaml: described.yaml.as_deref(),
        }
    }
}

/// What a lift emits from, apart from the two decisions [`Parts::finish`]
/// takes: which instructions stay raw, and how each descriptor is written.
struct Parts<'a> {
    co: &'a elf::CodeObject,
    origin: &'a Path,
    insns: &'a [disasm::Insn],
    texts: &'a [String],
    labels: &'a BTreeMap<u64, Vec<String>>,
    wanted: &'a BTreeMap<String, [u8; 64]>,
    yaml: Option<&'a str>,
}

impl Parts<'_> {
    /// The asm, the notes for the user, and the kernels whose descriptor
    /// stays raw bytes.
    fn finish(
        &self,
        refused: &BTreeMap<usize, encode::Refusal>,
        descriptors: &BTreeMap<String, descriptor::Lifted>,
    ) -> (String, Vec<Diagnostic>, Vec<String>) {
        let asm = emit(&Emit {
            co: self.co,
            origin: self.origin,
            insns: self.insns,
            texts: self.texts,
            labels: self.labels,
            refused,
            descriptors,
            wanted: self.wanted,
            yaml: self.yaml,
        });
        let raw_descriptors: Vec<String> = descriptors
            .iter()
            .filter(|(_, d)| matches!(d, descriptor::Lifted::Raw(_)))
            .map(|(k, _)| k.clone())
            .collect();
        let mut notes = Vec::new();
        if !refused.is_empty() {
            let mut why: BTreeMap<String, usize> = BTreeMap::new();
            for r in refused.values() {
                let key = match r {
                    encode::Refusal::Undecoded => "llvm-objdump cannot decode them".to_string(),
                    encode::Refusal::Rejected(m) => format!("the assembler rejects them ({m})"),
                    encode::Refusal::Reencoded(_) => {
                        "the assembler encodes them differently".to_string()
                    }
                };
                *why.entry(key).or_default() += 1;
            }
            let parts: Vec<String> = why.iter().map(|(k, n)| format!("{n}: {k}")).collect();
            notes.push(Diagnostic::note(
                Code::RawEncodings,
                format!(
                    "{} of {} instructions are kept as raw encodings (`.long … ; raw: …`): {}",
                    refused.len(),
                    self.insns.len(),
                    parts.join("; ")
                ),
            ));
        }
        for k in &raw_descriptors {
            if let Some(descriptor::Lifted::Raw(why)) = descriptors.get(k) {
                notes.push(Diagnostic::note(
                    Code::RawDescriptor,
                    format!("the descriptor of `{k}` is kept as raw bytes: {why}"),
                ));
            }
        }
        if self.co.dynamic_relocations > 0 {
            notes.push(Diagnostic::note(
                Code::DynamicRelocations,
                format!(
                    "{} dynamic relocations: the data they patch is kept as bytes",
                    self.co.dynamic_relocations
                ),
            ));
        }
        (asm, notes, raw_descriptors)
    }
}

/// The words of an instruction's text that may name a register of
/// `file` (`s7`, `s[8:11]` for SGPRs; `vcc`, `vcc_lo` for VCC), read by
/// the one register parser, [`RegisterRef::parse`]. Mnemonics, modifiers
/// and numbers are skipped before parsing (a lift reads every word of
/// every instruction).
fn registers(text: &str, file: RegFile) -> impl Iterator<Item = RegisterRef> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '[' | ']' | ':' | '.')))
        .filter(move |w| match file {
            RegFile::Sgpr => {
                w.len() > 1
                    && w.as_bytes()[0] == b's'
                    && matches!(w.as_bytes()[1], b'0'..=b'9' | b'[')
            }
            _ => w.starts_with("vcc"),
        })
        .filter_map(RegisterRef::parse)
}

/// Whether an instruction names `vcc` (`vcc`, `vcc_lo`, `vcc_hi`).
fn uses_vcc(text: &str) -> bool {
    registers(text, RegFile::Vcc)
        .any(|r| matches!(r.file, RegFile::Vcc | RegFile::VccLo | RegFile::VccHi))
}

/// One past the highest SGPR the instructions name (`s7`, `s[8:11]`).
fn sgprs_used(texts: &[String]) -> u32 {
    texts
        .iter()
        .flat_map(|t| registers(t, RegFile::Sgpr))
        .filter(|r| r.file == RegFile::Sgpr)
        .map(|r| r.last + 1)
        .max()
        .unwrap_or(0)
}

/// Every byte of `.text` as instructions: the listing's, with any gap (bytes
/// objdump did not list) as undecoded 4-byte words.
fn cover(text: &elf::Section, listed: Vec<disasm::Insn>) -> Vec<disasm::Insn> {
    let mut out = Vec::with_capacity(listed.len());
    let mut at = 0usize;
    let end = text.bytes.len();
    let gap = |from: usize, to: usize, out: &mut Vec<disasm::Insn>| {
        let mut o = from;
        while o < to {
            let n = (to - o).min(4);
            out.push(disasm::Insn {
                address: text.address + o as u64,
                bytes: text.bytes[o..o + n].to_vec(),
                text: String::new(),
            });
            o += n;
        }
    };
    for insn in listed {
        let Some(off) = insn.address.checked_sub(text.address) else {
            continue;
        };
        let off = off as usize;
        if off < at || off + insn.bytes.len() > end {
            continue;
        }
        if text.bytes[off..off + insn.bytes.len()] != insn.bytes[..] {
            continue;
        }
        gap(at, off, &mut out);
        at = off + insn.bytes.len();
        out.push(insn);
    }
    gap(at, end, &mut out);
    out
}

/// Replace whole-word generated label names (`L12`) by their new names.
fn rename_labels(text: &str, renamed: &HashMap<&str, String>) -> String {
    if renamed.is_empty() || !text.contains('L') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match renamed.get(word.as_str()) {
            Some(n) => out.push_str(n),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn symbols_by_offset(s: &elf::Section) -> BTreeMap<u64, Vec<&elf::Symbol>> {
    let mut m: BTreeMap<u64, Vec<&elf::Symbol>> = BTreeMap::new();
    for sym in &s.symbols {
        m.entry(sym.offset).or_default().push(sym);
    }
    m
}

/// The 64 bytes of `kernel.kd`.
fn descriptor_bytes(co: &elf::CodeObject, kernel: &str) -> Option<[u8; 64]> {
    let kd = format!("{kernel}.kd");
    for s in &co.data {
        if let Some(sym) = s.symbols.iter().find(|y| y.name == kd) {
            let o = sym.offset as usize;
            let b = s.bytes.get(o..o + 64)?;
            let mut d = [0u8; 64];
            d.copy_from_slice(b);
            return Some(d);
        }
    }
    None
}

struct Emit<'a> {
    co: &'a elf::CodeObject,
    origin: &'a Path,
    insns: &'a [disasm::Insn],
    texts: &'a [String],
    labels: &'a BTreeMap<u64, Vec<String>>,
    refused: &'a BTreeMap<usize, encode::Refusal>,
    descriptors: &'a BTreeMap<String, descriptor::Lifted>,
    wanted: &'a BTreeMap<String, [u8; 64]>,
    yaml: Option<&'a str>,
}

/// The directive that gives `name` the `STV_*` visibility `v` (none for default).
fn visibility_line(out: &mut String, name: &str, v: u8) {
    let d = match v {
        1 => ".internal",
        2 => ".hidden",
        3 => ".protected",
        _ => return,
    };
    let _ = writeln!(out, "\t{d}\t{name}");
}

/// The directives that give a symbol its binding, visibility and type,
/// then its label.
fn symbol_lines(out: &mut String, s: &elf::Symbol) {
    symbol_lines_with(out, s, true);
}

/// [`symbol_lines`], the visibility left out unless `visibility`.
fn symbol_lines_with(out: &mut String, s: &elf::Symbol, visibility: bool) {
    match s.binding {
        elf::Binding::Global => {
            let _ = writeln!(out, "\t.globl\t{}", s.name);
        }
        elf::Binding::Weak => {
            let _ = writeln!(out, "\t.weak\t{}", s.name);
        }
        elf::Binding::Local => {}
    }
    if visibility {
        visibility_line(out, &s.name, s.visibility);
    }
    match s.kind {
        elf::SymType::Func => {
            let _ = writeln!(out, "\t.type\t{},@function", s.name);
        }
        elf::SymType::Object => {
            let _ = writeln!(out, "\t.type\t{},@object", s.name);
        }
        elf::SymType::NoType => {}
    }
    let _ = writeln!(out, "{}:", s.name);
}

fn sizes(out: &mut String, s: &elf::Section, skip: &dyn Fn(&str) -> bool) {
    for sym in &s.symbols {
        if sym.size != 0 && !skip(&sym.name) {
            let _ = writeln!(out, "\t.size\t{}, {}", sym.name, sym.size);
        }
    }
}

fn emit(e: &Emit) -> String {
    let co = e.co;
    let mut out = String::with_capacity(e.insns.len() * 64 + 4096);
    let _ = writeln!(
        out,
        "; Lifted by gcn-patch from {} ({} instructions, {} kept as raw encodings).",
        e.origin.display(),
        e.insns.len(),
        e.refused.len()
    );
    let _ = writeln!(
        out,
        "\t.amdgcn_target \"{TRIPLE}--{}\"\n\t.amdhsa_code_object_version {}",
        co.target.name(),
        co.code_object_version
    );
    // .text
    let _ = writeln!(
        out,
        "\t.text\n\t.p2align\t{}",
        co.text.align.trailing_zeros()
    );
    let syms = symbols_by_offset(&co.text);
    // `.amdhsa_kernel K` gives `K.kd` the binding and visibility `K` has at
    // that point (LLVM 22; LLVM 24's and older aiter objects have a default
    // `K.kd` beside a protected `K`). A kernel whose descriptor has another
    // visibility gets its own after the descriptors, and the descriptor its
    // own right after its block, so that `.dynsym` keeps the original's.
    let kd_visibility: HashMap<&str, u8> = co
        .data
        .iter()
        .flat_map(|s| s.symbols.iter())
        .filter_map(|y| y.name.strip_suffix(".kd").map(|k| (k, y.visibility)))
        .collect();
    let deferred: Vec<&elf::Symbol> = co
        .text
        .symbols
        .iter()
        .filter(|s| {
            matches!(
                e.descriptors.get(&s.name),
                Some(descriptor::Lifted::Block(_))
            ) && kd_visibility
                .get(s.name.as_str())
                .is_some_and(|v| *v != s.visibility)
        })
        .collect();
    let is_deferred = |name: &str| deferred.iter().any(|d| d.name == name);
    let labels_at = |off: u64, out: &mut String| {
        for s in syms.get(&off).into_iter().flatten() {
            symbol_lines_with(out, s, !is_deferred(&s.name));
        }
        for l in e.labels.get(&off).into_iter().flatten() {
            let _ = writeln!(out, "{l}:");
        }
    };
    for (i, insn) in e.insns.iter().enumerate() {
        labels_at(insn.address - co.text.address, &mut out);
        if e.refused.contains_key(&i) {
            raw_line(&mut out, &insn.bytes, &e.texts[i]);
        } else {
            let _ = writeln!(out, "\t{}", e.texts[i]);
        }
    }
    labels_at(co.text.bytes.len() as u64, &mut out);
    sizes(&mut out, &co.text, &|_| false);

    // Data sections; descriptors as blocks.
    let kd_of: HashMap<String, &String> = e.wanted.keys().map(|k| (format!("{k}.kd"), k)).collect();
    for s in &co.data {
        let kind = if s.nobits { "@nobits" } else { "@progbits" };
        let _ = writeln!(
            out,
            "\t.section\t{},\"{}\",{kind}\n\t.p2align\t{}",
            s.name,
            s.flags,
            s.align.trailing_zeros()
        );
        if s.nobits {
            // Each symbol at its offset, with its size (`__hip_cuid_…`, 1
            // byte): `.dynsym` keeps both.
            let mut at = 0u64;
            for sym in &s.symbols {
                if sym.offset > at {
                    let _ = writeln!(out, "\t.zero\t{}", sym.offset - at);
                    at = sym.offset;
                }
                symbol_lines(&mut out, sym);
            }
            if s.size > at {
                let _ = writeln!(out, "\t.zero\t{}", s.size - at);
            }
            sizes(&mut out, s, &|_| false);
            continue;
        }
        let mut at = 0usize;
        let bounds: Vec<&elf::Symbol> = s.symbols.iter().collect();
        let mut k = 0;
        while at < s.bytes.len() || k < bounds.len() {
            // Symbols at this offset.
            let mut skip = 0usize;
            while k < bounds.len() && bounds[k].offset as usize <= at {
                let sym = bounds[k];
                k += 1;
                if let Some(kernel) = kd_of.get(&sym.name) {
                    match e.descriptors.get(*kernel) {
                        Some(descriptor::Lifted::Block(lines)) => {
                            let _ = writeln!(out, "\t.p2align\t6\n\t.amdhsa_kernel {kernel}");
                            for l in lines {
                                let _ = writeln!(out, "\t\t{l}");
                            }
                            let _ = writeln!(out, "\t.end_amdhsa_kernel");
                            if is_deferred(kernel) {
                                visibility_line(&mut out, &sym.name, sym.visibility);
                            }
                            skip = 64;
                        }
                        _ => {
                            raw_descriptor(&mut out, sym, kernel, &e.wanted[*kernel], co);
                            skip = 64;
                        }
                    }
                } else {
                    symbol_lines(&mut out, sym);
                }
            }
            if skip > 0 {
                at += skip;
                continue;
            }
            if at >= s.bytes.len() {
                break;
            }
            let next = bounds
                .get(k)
                .map_or(s.bytes.len(), |b| (b.offset as usize).min(s.bytes.len()));
            let end = next.max(at + 1).min(s.bytes.len());
            for chunk in s.bytes[at..end].chunks(16) {
                let hex: Vec<String> = chunk.iter().map(|b| format!("{b:#04x}")).collect();
                let _ = writeln!(out, "\t.byte\t{}", hex.join(", "));
            }
            at = end;
        }
        sizes(&mut out, s, &|n| kd_of.contains_key(n));
    }
    if !deferred.is_empty() {
        let _ = writeln!(
            out,
            "; Kernel visibility, set after the descriptors: `.amdhsa_kernel` gives `K.kd` the \
             visibility `K` has there, and these descriptors have their own."
        );
    }
    for k in &deferred {
        visibility_line(&mut out, &k.name, k.visibility);
    }
    if let Some(y) = e.yaml {
        let _ = write!(out, "\t.amdgpu_metadata\n{y}\t.end_amdgpu_metadata\n");
    }
    out
}

/// `.long 0x…, 0x… ; raw: <disassembly>` (and `.byte` for a partial word).
fn raw_line(out: &mut String, bytes: &[u8], text: &str) {
    let words: Vec<String> = bytes
        .chunks(4)
        .filter(|c| c.len() == 4)
        .map(|c| format!("{:#010x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let tail: Vec<String> = bytes
        .chunks(4)
        .filter(|c| c.len() < 4)
        .flat_map(|c| c.iter().map(|b| format!("{b:#04x}")))
        .collect();
    let shown = if text.is_empty() {
        "(not decoded)"
    } else {
        text
    };
    if !words.is_empty() {
        let _ = write!(out, "\t.long\t{}", words.join(", "));
        if !tail.is_empty() {
            let _ = write!(out, "\n\t.byte\t{}", tail.join(", "));
        }
    } else {
        let _ = write!(out, "\t.byte\t{}", tail.join(", "));
    }
    let _ = writeln!(out, " {RAW_MARKER}{shown}");
}

/// A descriptor as raw bytes; the entry offset as the expression the
/// linker resolves; every field decoded in a comment.
fn raw_descriptor(
    out: &mut String,
    sym: &elf::Symbol,
    kernel: &str,
    d: &[u8; 64],
    co: &elf::CodeObject,
) {
    let _ = writeln!(
        out,
        "; The descriptor of {kernel} as raw bytes: no .amdhsa_kernel block re-assembles to them."
    );
    for l in descriptor::decode_comment(d, &co.target) {
        let _ = writeln!(out, ";   {l}");
    }
    let _ = writeln!(out, "\t.p2align\t6");
    symbol_lines(out, sym);
    let hex = |r: std::ops::Range<usize>| {
        d[r].iter()
            .map(|b| format!("{b:#04x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "\t.byte\t{}", hex(0..16));
    let _ = writeln!(out, "\t.quad\t{kernel} - {}", sym.name);
    let _ = writeln!(out, "\t.byte\t{}", hex(24..40));
    let _ = writeln!(out, "\t.byte\t{}", hex(40..56));
    let _ = writeln!(out, "\t.byte\t{}", hex(56..64));
    let _ = writeln!(out, "\t.size\t{}, 64", sym.name);
}

/// `text` made a Rust identifier: non-alphanumerics become `_`, a leading digit gets `k_`.
pub fn identifier(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "k_");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sgprs_and_vcc() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            sgprs_used(&t(&[
                "s_mov_b32 s7, 0",
                "s_load_dwordx4 s[8:11], s[0:1], 0x0"
            ])),
            12
        );
        assert_eq!(sgprs_used(&t(&["s_nop 0", "v_mov_b32 v1, s3"])), 4);
        assert_eq!(sgprs_used(&t(&["s_endpgm"])), 0);
        assert!(uses_vcc("v_cmp_le_u32_e32 vcc, s48, v7"));
        assert!(uses_vcc("v_cndmask_b32_e32 v1, v2, v3, vcc_lo"));
        assert!(!uses_vcc("s_mov_b64 exec, s[0:1]"));
        let renamed = HashMap::from([("L0", ".Llift_1800".to_string())]);
        assert_eq!(
            rename_labels("s_branch L0", &renamed),
            "s_branch .Llift_1800"
        );
        assert_eq!(rename_labels("s_branch L01", &renamed), "s_branch L01");
    }
}
