//! Diagnostics: one type every stage reports with, rendered in rustc style.
//!
//! A [`Diagnostic`] says *which* condition it reports (`code`, a [`Code`]
//! with a stable string such as `GP0201`, and its coarse [`Kind`]), *what*
//! failed (`message`), *where* (`location`: file, line, column, plus an
//! optional provenance note such as "from patch patches/x.diff hunk 2"), and
//! *how to fix it* (`help`). Rendering uses `annotate-snippets`, so the output
//! looks like rustc's: `error[GP0201]: …`.
//!
//! Callers decide on the [`Code`] (or its [`Kind`]), never on the message
//! text. Every constructor takes a code, so no diagnostic is built without
//! one. The book's diagnostics catalogue
//! (`docs/src/reference/diagnostics.md`) lists every code; a test fails when
//! they disagree.

use std::fmt;
use std::path::PathBuf;

use annotate_snippets::{Level, Renderer, Snippet};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Blocks the build.
    Error,
    /// Reported, does not block.
    Warning,
    /// Informational (e.g. an occupancy report).
    Note,
}

/// The coarse kind of a [`Code`]: the stage or area that reports it. Each
/// kind owns one hundred of the code numbers (`GP02xx` is [`Kind::Patch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// Files, the environment, arguments common to every command, and bugs (`GP00xx`).
    Input,
    /// `kernels.toml`, `kernels.lock` and accepted findings (`GP01xx`).
    Manifest,
    /// Pins, unified diffs, rules, and the `edit`/`save` patch queue (`GP02xx`).
    Patch,
    /// Retargeting a dump to another target (`GP03xx`).
    Retarget,
    /// The checks: structure, registers, occupancy, wait counters, hazards,
    /// control flow, Triton launches (`GP04xx`).
    Check,
    /// Finding and running the LLVM tools (`GP05xx`).
    Toolchain,
    /// Assembling, undefined symbols, linking and verifying code objects (`GP06xx`).
    Assemble,
    /// Lifting code objects and reading containers (`GP07xx`).
    Lift,
    /// The workflows behind the commands: kernel selection, import, install,
    /// run (`GP08xx`).
    Command,
    /// gcn-build in a build script (`GP09xx`).
    BuildScript,
}

impl Kind {
    /// The hundreds digit pair of this kind's codes (`GP02xx` → 2).
    pub const fn block(self) -> u16 {
        match self {
            Kind::Input => 0,
            Kind::Manifest => 1,
            Kind::Patch => 2,
            Kind::Retarget => 3,
            Kind::Check => 4,
            Kind::Toolchain => 5,
            Kind::Assemble => 6,
            Kind::Lift => 7,
            Kind::Command => 8,
            Kind::BuildScript => 9,
        }
    }
}

macro_rules! codes {
    ($( $(#[$attr:meta])* $variant:ident = $code:literal, $kind:ident, $summary:literal; )*) => {
        /// The condition a [`Diagnostic`] reports, with a stable code.
        ///
        /// A code is never renumbered and never reused for another
        /// condition: a retired code stays listed in
        /// [`Code::RETIRED`]. The variants' documentation is the
        /// one-line meaning the book's catalogue shows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $( #[doc = $summary] $(#[$attr])* $variant, )*
        }

        impl Code {
            /// Every code, in catalogue order.
            pub const ALL: &'static [Code] = &[$( Code::$variant, )*];

            /// The stable string code, e.g. `"GP0201"`.
            pub const fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $code, )* }
            }

            /// The coarse kind: the stage that reports this code.
            pub const fn kind(self) -> Kind {
                match self { $( Code::$variant => Kind::$kind, )* }
            }

            /// The one-line meaning shown in the catalogue.
            pub const fn summary(self) -> &'static str {
                match self { $( Code::$variant => $summary, )* }
            }

            /// The variant's name, e.g. `"PinMismatch"`.
            pub const fn name(self) -> &'static str {
                match self { $( Code::$variant => stringify!($variant), )* }
            }

            /// The code with this string (`"GP0201"`), if there is one.
            pub fn from_code(code: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.as_str() == code)
            }
        }
    };
}

codes! {
    // GP00xx: input, environment, bugs.
    Internal = "GP0001", Input, "gcn-patch panicked: a bug in gcn-patch, reported with the step it was in, not an error in the input";
    ReadFailed = "GP0002", Input, "a file could not be read (missing, a directory, no permission)";
    WriteFailed = "GP0003", Input, "a file could not be written";
    CreateDirFailed = "GP0004", Input, "a directory could not be created";
    TempFileFailed = "GP0005", Input, "a temporary file or directory could not be created";
    InvalidEnvVar = "GP0006", Input, "an environment variable gcn-patch reads has a value it cannot use";
    OutputIsDirectory = "GP0007", Input, "the output path names a directory, not a file";
    InvalidTarget = "GP0008", Input, "a requested target ID or family is not valid";
    EmptyAsm = "GP0009", Input, "an assembly file is empty";
    NotUtf8 = "GP0010", Input, "a text input (dump or patch) is not UTF-8";
    FeatureDisabled = "GP0011", Input, "the operation needs a cargo feature of gcn-patch that this build leaves out (`lift`)";

    // GP01xx: manifest, lock, accepted findings.
    ManifestUnreadable = "GP0101", Manifest, "the manifest cannot be read";
    ManifestInvalid = "GP0102", Manifest, "the manifest is not valid TOML or does not fit the schema (unknown key, wrong type, bad value)";
    UnsupportedCodeObjectVersion = "GP0103", Manifest, "a code object version other than 4, 5 or 6 was asked for";
    KernelNameNotIdentifier = "GP0104", Manifest, "a kernel name is not a Rust identifier (it names generated code)";
    KernelNameCollision = "GP0105", Manifest, "two kernel names would generate the same Rust item";
    DuplicateKernel = "GP0106", Manifest, "a kernel name is declared twice";
    NoTargets = "GP0107", Manifest, "a source lists no targets";
    InvalidSha256 = "GP0108", Manifest, "a sha256 pin is not 64 lowercase hex digits";
    MissingPin = "GP0109", Manifest, "a source has patches but no sha256 pin";
    TargetFromTwoSources = "GP0110", Manifest, "two sources of one kernel build the same target";
    UnknownTarget = "GP0111", Manifest, "the manifest names a target that is not a valid target ID";
    PathEscapes = "GP0112", Manifest, "a path in the manifest leaves the manifest's directory";
    NotAFile = "GP0113", Manifest, "a path in the manifest is not a regular file";
    LockInvalid = "GP0114", Manifest, "`kernels.lock` cannot be parsed";
    LockMissing = "GP0115", Manifest, "a locked build has no `kernels.lock` to reproduce";
    LockMismatch = "GP0116", Manifest, "a locked build does not reproduce `kernels.lock`";

    // GP02xx: pins, diffs, rules, the patch queue.
    PinMismatch = "GP0201", Patch, "a dump's sha256 no longer matches its pin: it changed since its patches were written";
    NotAUnifiedDiff = "GP0202", Patch, "a patch file is not a unified diff";
    DiffForOtherFile = "GP0203", Patch, "a patch file changes several files and none is the dump";
    MalformedDiff = "GP0204", Patch, "a unified diff cannot be parsed (hunk header or counts wrong)";
    EmptyDiff = "GP0205", Patch, "a unified diff has a header but no hunk";
    NoNewlineInMiddle = "GP0206", Patch, "a patch leaves a line without a newline in the middle of the file";
    HunkDoesNotApply = "GP0207", Patch, "a hunk's context does not match the dump (or it is already applied)";
    RuleInvalid = "GP0208", Patch, "a rule is malformed (no kind or two kinds, an empty pattern, a bad count)";
    InvalidRegex = "GP0209", Patch, "a rule's regex does not compile";
    RuleScopeNotFound = "GP0210", Patch, "a rule's `kernel` or `block` scope is not in the asm";
    RuleMatchCount = "GP0211", Patch, "a rule's pattern matches more or fewer lines than expected";
    RuleAnchor = "GP0212", Patch, "a rule's anchor is missing or is one of the lines it moves";
    RuleFailed = "GP0213", Patch, "a rule cannot make its edit on the line it matched";
    UnsavedEdits = "GP0214", Patch, "the `edit` work file has edits that are not saved";
    NoWorkFile = "GP0215", Patch, "a kernel has no `edit` work file";
    PatchNotLast = "GP0216", Patch, "only the last patch of a source can be refreshed";
    RefreshEmpties = "GP0217", Patch, "saving would leave a patch empty";
    InvalidPatchName = "GP0218", Patch, "a new patch's name has no letter or digit";
    NoSuchPatch = "GP0219", Patch, "a kernel has no patch of that name";
    PatchListNotEditable = "GP0220", Patch, "the manifest's `patches` list has a form that cannot be edited in place";
    NotPatched = "GP0221", Patch, "a job's source has no patched text (a bug in the plan)";

    // GP03xx: retargeting.
    AssemblerTooOld = "GP0301", Retarget, "the assembler's LLVM is too old for the target";
    NoCodeObjectVersion = "GP0302", Retarget, "no code object version could be chosen for the target";
    DumpTargetInvalid = "GP0303", Retarget, "the dump's `.amdgcn_target` is not a valid target ID";
    CodeObjectVersionChange = "GP0304", Retarget, "the code object version cannot change: the kernel reads hidden arguments at the old offsets";
    CodeObjectVersionForGeneric = "GP0305", Retarget, "a generic target needs code object version 6";
    RetargetAbiChange = "GP0306", Retarget, "retargeting would change the kernel's ABI (a descriptor field the target lacks)";
    VopdPairRejected = "GP0307", Retarget, "the assembler's LLVM rejects a VOPD pair the dump has";
    SkewRewrite = "GP0308", Retarget, "a toolchain-skew rewrite was made (same values, other spelling)";
    RetargetedFromGeneric = "GP0309", Retarget, "the source was retargeted from a code object that may be hand-written";

    // GP04xx: checks.
    UnterminatedString = "GP0401", Check, "a line has an unterminated string";
    NoKernel = "GP0402", Check, "the asm defines no kernel";
    KernelDefinedTwice = "GP0403", Check, "a kernel is defined twice in the asm";
    MissingDescriptor = "GP0404", Check, "a kernel has no `.amdhsa_kernel` descriptor block";
    MissingMetadata = "GP0405", Check, "the asm has no complete `.amdgpu_metadata` block";
    RegisterBudgetExceeded = "GP0406", Check, "the code uses a register beyond the kernel's declared budget";
    ExtraSgprsNotDeclared = "GP0407", Check, "the code uses VCC, flat_scratch or XNACK registers the descriptor declares it does not";
    RegisterCountUnknown = "GP0408", Check, "a register count directive cannot be evaluated: registers beyond it are not checked";
    RegisterCountContradiction = "GP0409", Check, "a register count contradicts the kernel's other counts";
    TooManyVgprs = "GP0410", Check, "a kernel needs more VGPRs than the target has";
    TooManySgprs = "GP0411", Check, "a kernel needs more SGPRs than the target can address";
    RegistersUpdated = "GP0412", Check, "the register counts were updated (`registers = \"update\"`)";
    Occupancy = "GP0413", Check, "occupancy report: waves per SIMD and what limits them";
    UnknownWaitCounter = "GP0414", Check, "an `s_waitcnt` names a counter the target does not have";
    WaitInstructionNotOnTarget = "GP0415", Check, "a wait instruction does not exist on the target";
    WaitImmediateTooWide = "GP0416", Check, "an `s_waitcnt` immediate does not fit in 16 bits";
    WaitValueTooLarge = "GP0417", Check, "a wait-counter value does not fit the counter on the target";
    WaitForNothing = "GP0418", Check, "a wait waits for nothing: fewer operations can be outstanding";
    WaitHazard = "GP0419", Check, "a register or LDS is read before the operation writing it has completed";
    InheritedHazards = "GP0420", Check, "hazards the baseline has too (inherited): not errors";
    HazardAnalysisLimit = "GP0421", Check, "the wait-counter analysis cannot follow something (an indirect branch, indexed registers)";
    LdsMayAlias = "GP0422", Check, "an LDS access may alias one still in flight";
    WaitCoversNothing = "GP0423", Check, "suggestion: a wait covers nothing and can go";
    WaitCanBeLooser = "GP0424", Check, "suggestion: a wait can be looser";
    ControlFlowLeak = "GP0425", Check, "a path runs off the kernel's end or into another kernel";
    TritonKernelMissing = "GP0426", Check, "Triton launches a kernel the patched asm does not define";
    TritonLdsExceeded = "GP0427", Check, "the patched kernel needs more LDS than Triton allocates";
    TritonWaveSize = "GP0428", Check, "the patched kernel's wave size differs from Triton's launch";
    TritonWorkgroupSize = "GP0429", Check, "the patched kernel's maximum workgroup size is below Triton's launch";
    TritonLaunchChanged = "GP0430", Check, "a launch field (kernarg size, stack, …) differs from Triton's dump";
    TritonArgsChanged = "GP0431", Check, "the kernel's `.args` differ from Triton's dump";
    AluDependencyHazard = "GP0432", Check, "in SCHED_MODE_2 (GFX12 expert scheduling) a VGPR is accessed before the VALU or memory instruction it depends on is done: an `s_wait_alu` is missing";

    // GP05xx: the toolchain.
    ToolchainNotFound = "GP0501", Toolchain, "no clang + ld.lld with AMDGPU support was found";
    ToolchainTooOld = "GP0502", Toolchain, "the toolchain's LLVM is too old for the target";
    ToolFailed = "GP0503", Toolchain, "an LLVM tool failed, crashed or timed out";

    // GP06xx: assemble, undefined symbols, link, verify.
    AssemblerError = "GP0601", Assemble, "the assembler rejected a line";
    UnsupportedInstruction = "GP0602", Assemble, "the target does not have an instruction the code uses";
    AssemblerCrashed = "GP0603", Assemble, "the assembler failed without a located error";
    NoOutputWritten = "GP0604", Assemble, "a tool ran but wrote no object or code object";
    InvalidJobName = "GP0605", Assemble, "a job name would name files outside its work directory";
    UndefinedSymbol = "GP0606", Assemble, "the code names a symbol nothing defines";
    LinkFailed = "GP0607", Assemble, "ld.lld failed";
    NothingToLink = "GP0608", Assemble, "there are no object files to link";
    InvalidOutputName = "GP0609", Assemble, "the output path has no file name";
    CodeObjectInvalid = "GP0610", Assemble, "the built code object fails verification (ELF, flags, descriptors)";

    // GP07xx: lift and containers.
    LiftToolFailed = "GP0701", Lift, "llvm-objdump, llvm-mc or llvm-readelf failed while lifting";
    LiftDoesNotRebuild = "GP0702", Lift, "the lifted asm does not build again";
    LiftNotIdentical = "GP0703", Lift, "the lifted asm does not rebuild the same code object";
    NoCodeObjectForTarget = "GP0704", Lift, "a container has no code object for the requested target";
    NotACodeObject = "GP0705", Lift, "a file is not a code object or a container gcn-patch reads";
    NoAmdgpuCode = "GP0706", Lift, "a container holds no AMDGPU code object";
    UnknownProcessor = "GP0707", Lift, "a code object's e_flags name no known processor";
    CorruptContainer = "GP0708", Lift, "an offload bundle, fat binary or `.vmfb` is corrupt or truncated";
    SeveralCodeObjects = "GP0709", Lift, "a file holds several code objects: say which one";
    NoMetadata = "GP0710", Lift, "a code object has no readable AMDGPU metadata";
    CorruptElf = "GP0711", Lift, "a code object is damaged or truncated";
    UnsupportedOsAbi = "GP0712", Lift, "a code object is not for the HSA OS ABI";
    UnsupportedAbiVersion = "GP0713", Lift, "a code object's ABI version is not code object v4, v5 or v6";
    RawEncodings = "GP0714", Lift, "some instructions are kept as raw encodings (`.long … ; raw: …`)";
    RawDescriptor = "GP0715", Lift, "a kernel descriptor is kept as raw bytes";
    DynamicRelocations = "GP0716", Lift, "the code object has dynamic relocations: the data they patch is kept as bytes";

    // GP08xx: the workflows behind the commands.
    NoSuchKernel = "GP0801", Command, "the manifest has no kernel of that name";
    KernelNotBuiltForTarget = "GP0802", Command, "a kernel is not built for the requested target";
    KernelHasNoTargets = "GP0803", Command, "a kernel has no targets (or no source)";
    NoKernels = "GP0804", Command, "the manifest lists no kernel";
    NoKernelForTarget = "GP0805", Command, "no kernel of the manifest builds for the requested targets";
    NotAmdgpuAsm = "GP0806", Command, "an input to import holds no AMDGPU assembly";
    LiftNeedsLlvm = "GP0807", Command, "importing a code object needs LLVM tools that were not found";
    ImportConflict = "GP0808", Command, "a file was already imported with other bytes";
    OutputCollision = "GP0809", Command, "two kernels would write the same output file";
    NoIreeExecutables = "GP0810", Command, "the manifest has no IREE executable (or none for the target)";
    NotBuiltYet = "GP0811", Command, "code objects to install are not built yet";
    TritonHashUnknown = "GP0812", Command, "a Triton kernel's dump hash is unknown, so its override directory cannot be named";
    TritonTargetInvalid = "GP0813", Command, "a Triton kernel's `triton.target` is not a target ID";
    TritonObjectMissing = "GP0814", Command, "a Triton kernel has no code object for its dump's target";
    NoTritonKernels = "GP0815", Command, "the manifest lists no Triton kernel";
    RunUsage = "GP0816", Command, "a `run` input (argument, output directory, asm) is not usable";
    ArgumentCount = "GP0817", Command, "a `run` gives a different number of arguments than the kernel takes";
    EmulatorFailed = "GP0818", Command, "the emulator stopped with an error";
    ManifestChanged = "GP0819", Command, "the manifest changed while a command edited it";
    TritonMetadataMissing = "GP0820", Command, "a Triton kernel was imported without its cache entry: some Triton limits checks are off or weaker";
    NoLaunch = "GP0821", Command, "a kernel (or every kernel) declares no `[[kernel.launch]]` to run";
    TargetNotEmulated = "GP0822", Command, "the emulator does not run the requested target (it runs gfx90a, gfx942, gfx950, RDNA3 and RDNA4)";
    LaunchDoesNotFit = "GP0823", Command, "a declared launch does not fit the kernel (argument count, sizes or kinds)";
    LaunchKernelAmbiguous = "GP0824", Command, "a code object holds several kernels and the launch names none";
    BadTolerance = "GP0825", Command, "a float tolerance for `compare` cannot be parsed";
    LaunchNotClean = "GP0826", Command, "a declared launch did not run clean (a fault, an unsupported instruction or a sanitizer finding)";

    // GP09xx: gcn-build.
    OutDirNotSet = "GP0901", BuildScript, "gcn-build runs without `OUT_DIR` (not from a build script)";
}

impl Code {
    /// Codes that were used once and are retired: never given to another
    /// condition.
    pub const RETIRED: &'static [&'static str] = &[];
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An input the caller chose, named by a diagnostic about it: the library
/// says what is wrong in its own terms, and the caller (the command line, a
/// build script) names the option, flag or method that set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The requested target(s).
    Target,
    /// The output file.
    Output,
    /// Reproduce `kernels.lock` exactly (a locked build).
    Locked,
    /// Discard unsaved edits.
    Force,
    /// Where to look for Triton's cache entries.
    TritonCache,
    /// The register policy of a kernel built without a manifest: the help
    /// of a register-budget finding gets the caller's way of asking for
    /// the counts to be rewritten.
    UpdateRegisters,
    /// The unpatched original a file without a manifest is judged against.
    Baseline,
    /// The workgroups of an emulated dispatch.
    Grid,
    /// The work-items per workgroup of an emulated dispatch.
    Block,
    /// The workgroup cluster of an emulated gfx1250 dispatch.
    Cluster,
    /// The explicit arguments of an emulated dispatch.
    KernelArguments,
    /// The directory an emulated dispatch writes its buffers to.
    OutputDir,
    /// The asm an emulated code object was assembled from.
    AsmSource,
    /// The processor a generic-target object is emulated as.
    RunAs,
    /// The device a launch is timed on (`profile`).
    Device,
}

/// A place in a source file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File as the user knows it (relative to the manifest where possible).
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// Length of the highlighted span in characters (0 = whole line).
    pub len: usize,
    /// The text of that line, shown under the message.
    pub source_line: Option<String>,
    /// Label printed under the highlighted span.
    pub label: Option<String>,
}

impl Location {
    /// A location covering a whole line.
    pub fn line(file: impl Into<PathBuf>, line: usize, source_line: Option<String>) -> Self {
        Location {
            file: file.into(),
            line,
            column: None,
            len: 0,
            source_line,
            label: None,
        }
    }

    /// Attach a label to the highlighted span.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Highlight `len` characters starting at 1-based `column`.
    pub fn with_span(mut self, column: usize, len: usize) -> Self {
        self.column = Some(column);
        self.len = len;
        self
    }
}

/// One diagnostic: which condition, what, where, how to fix.
///
/// Small (the location is boxed), so `Result<_, Diagnostic>` stays cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// The condition reported: match on this, never on `message`.
    pub code: Code,
    /// The caller-chosen input this diagnostic is about, if any (the caller
    /// names its option).
    pub setting: Option<Setting>,
    /// What failed, one line.
    pub message: String,
    /// Where, if it is tied to a source line.
    pub location: Option<Box<Location>>,
    /// Extra facts (`= note: …`), e.g. provenance or context.
    pub notes: Vec<String>,
    /// How to fix it (`= help: …`).
    pub help: Vec<String>,
}

impl Diagnostic {
    /// A new diagnostic of `severity`.
    pub fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            setting: None,
            message: message.into(),
            location: None,
            notes: vec![],
            help: vec![],
        }
    }
    /// A new error diagnostic.
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Error, code, message)
    }
    /// A new warning diagnostic.
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Warning, code, message)
    }
    /// A new note diagnostic.
    pub fn note(code: Code, message: impl Into<String>) -> Self {
        Diagnostic::new(Severity::Note, code, message)
    }
    /// The coarse kind of its code.
    pub fn kind(&self) -> Kind {
        self.code.kind()
    }
    /// Set the location.
    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(Box::new(location));
        self
    }
    /// Name the caller-chosen input this diagnostic is about.
    pub fn about(mut self, setting: Setting) -> Self {
        self.setting = Some(setting);
        self
    }
    /// Add a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// Add a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Render without colors, rustc style.
    pub fn render(&self) -> String {
        let level = match self.severity {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
            Severity::Note => Level::Note,
        };
        let origin;
        let expanded;
        let mut msg = level.title(&self.message).id(self.code.as_str());
        if let Some(loc) = &self.location {
            // annotate-snippets appends `:line:col` itself.
            origin = loc.file.display().to_string();
            if let Some(src) = &loc.source_line {
                let (start, end) = span_of(src, loc.column, loc.len);
                // One display column per character (see `displayable`), so carets and the
                // reported column both match the file's columns.
                let (src, start, end) = displayable(src, start, end);
                expanded = src;
                let src = expanded.as_str();
                let mut annotation = level.span(start..end);
                if let Some(label) = &loc.label {
                    annotation = annotation.label(label);
                }
                msg = msg.snippet(
                    Snippet::source(src)
                        .line_start(loc.line)
                        .origin(&origin)
                        .fold(false)
                        .annotation(annotation),
                );
            }
        }
        for n in &self.notes {
            msg = msg.footer(Level::Note.title(n));
        }
        for h in &self.help {
            msg = msg.footer(Level::Help.title(h));
        }
        let rendered = Renderer::plain().render(msg).to_string();
        match (
            &self.location,
            self.location.as_ref().and_then(|l| l.source_line.as_ref()),
        ) {
            // No source text to show: still say where, on its own line.
            (Some(loc), None) => {
                let at = match loc.column {
                    Some(c) => format!("{}:{}:{}", loc.file.display(), loc.line, c),
                    None => format!("{}:{}", loc.file.display(), loc.line),
                };
                let mut lines = rendered.lines();
                let first = lines.next().unwrap_or_default().to_string();
                let rest: Vec<&str> = lines.collect();
                let mut out = format!("{first}\n  --> {at}");
                for l in rest {
                    out.push('\n');
                    out.push_str(l);
                }
                out
            }
            _ => rendered,
        }
    }
}

/// Byte span of a 1-based column/length within `src`; whole trimmed line when unknown.
fn span_of(src: &str, column: Option<usize>, len: usize) -> (usize, usize) {
    let char_to_byte = |c: usize| {
        src.char_indices()
            .nth(c)
            .map(|(i, _)| i)
            .unwrap_or(src.len())
    };
    match column {
        Some(col) if col >= 1 => {
            let start = char_to_byte(col - 1);
            let end = if len == 0 {
                src.len()
            } else {
                char_to_byte(col - 1 + len)
            };
            (start, end.max(start))
        }
        _ => {
            let start = src.len() - src.trim_start().len();
            let end = src.trim_end().len().max(start);
            (start, end)
        }
    }
}

/// The source line as shown under a diagnostic, moving the byte span along:
/// every character stays one character, of display width one, so the caret
/// and the reported column match the file's columns.
///
/// * Tabs and Unicode spaces are shown as one space (annotate-snippets 0.11
///   misplaces carets after tabs).
/// * A line's last `\r` (CRLF files) is not shown; other control
///   characters, `\r` included, are shown as their Unicode control
///   pictures (`\r` as `␍`, `\0` as `␀`, DEL as `␡`; C1 controls as `�`): a
///   stray `\r` is often the error itself, and a diagnostic never sends
///   terminal control sequences from a file to the user's terminal.
/// * annotate-snippets 0.11 panics (an integer underflow in its margin
///   computation) on a line too long for the terminal whose highlighted span
///   lies inside its indentation (found by fuzzing the diff and manifest
///   targets: patch and TOML lines of `\r`s, control characters and spaces).
///   Then the highlighted whitespace character is shown as `·`, which ends
///   the indentation there.
fn displayable(src: &str, start: usize, end: usize) -> (String, usize, usize) {
    // A CRLF file's lines keep their `\r`: a line ending, not content.
    let src = src.strip_suffix('\r').unwrap_or(src);
    let (start, end) = (start.min(src.len()), end.min(src.len()));
    let mut out = String::with_capacity(src.len() + 8);
    let (mut s, mut e) = (start, end);
    for (i, ch) in src.char_indices() {
        if i == start {
            s = out.len();
        }
        if i == end {
            e = out.len();
        }
        out.push(match ch {
            '\t' => ' ',
            c @ '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\x7f' => '\u{2421}',
            c if c.is_control() => '\u{fffd}',
            c if c.is_whitespace() => ' ',
            c => c,
        });
    }
    if start >= src.len() {
        s = out.len();
    }
    if end >= src.len() {
        e = out.len();
    }
    // annotate-snippets trims lines longer (in bytes) than its terminal width
    // (140 columns, less the line number gutter): the bug needs such a line.
    const LONG_LINE: usize = 100;
    let indent = out.len() - out.trim_start_matches(' ').len();
    if s < indent && out.len() > LONG_LINE {
        // Every character before `s` is a one-byte space: `s` is a char index too.
        out.replace_range(s..s + 1, "\u{b7}");
        if e == s {
            e = s + '\u{b7}'.len_utf8();
        } else {
            e += '\u{b7}'.len_utf8() - 1;
        }
    }
    (out, s, e)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostic {}

/// A list of diagnostics that failed an operation; `Display` renders all of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// The codes of its diagnostics, in order.
    pub fn codes(&self) -> Vec<Code> {
        self.0.iter().map(|d| d.code).collect()
    }
    /// True if any diagnostic has `code`.
    pub fn has(&self, code: Code) -> bool {
        self.0.iter().any(|d| d.code == code)
    }
    /// True if any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            f.write_str(&d.render())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_label_note_and_help() {
        let d = Diagnostic::error(Code::RegisterBudgetExceeded, "register budget exceeded")
            .at(
                Location::line("asm/mm.s", 42, Some("\tv_mov_b32 v120, 0".into()))
                    .with_span(12, 4)
                    .with_label("v120 is above .amdhsa_next_free_vgpr 112"),
            )
            .with_note("line from patch patches/mm.diff hunk 1")
            .with_help("raise the budget or set `registers = \"update\"`");
        insta::assert_snapshot!(d.render());
    }

    #[test]
    fn control_characters_render_one_column_each_without_panicking() {
        // Long lines whose span lies in the indentation: annotate-snippets
        // 0.11 underflowed on them (fuzz/regressions/diff, manifest).
        let lines = [
            (format!("{}{}", "\r".repeat(17), "\0".repeat(120)), None, 0),
            (
                format!("{}{}", "\r".repeat(19), "x".repeat(200)),
                Some(2),
                1,
            ),
            (format!("{}{}", " ".repeat(30), "x".repeat(200)), Some(2), 1),
            (
                format!("{}{}", "\t".repeat(30), "x".repeat(200)),
                Some(30),
                0,
            ),
            (
                format!("{}{}", "\u{3000}".repeat(40), "x".repeat(200)),
                Some(1),
                3,
            ),
            (format!("{}x", " ".repeat(300)), Some(1), 1),
            // Short in characters, long in bytes (3 per control picture).
            (
                format!("{}{}", "\r".repeat(15), "\x11".repeat(40)),
                Some(2),
                1,
            ),
        ];
        for (src, column, len) in lines {
            let mut loc = Location::line("p.diff", 1, Some(src.clone()));
            loc.column = column;
            loc.len = len;
            let r = Diagnostic::error(Code::Internal, "x").at(loc).render();
            assert!(
                !r.contains('\r') && !r.contains('\0') && !r.contains('\t'),
                "{r}"
            );
            if let Some(c) = column {
                assert!(r.contains(&format!("p.diff:1:{c}")), "{r}");
            }
        }
        let (text, s, e) = displayable("\ta\x1b[31m\u{85}b\r\r", 2, 9);
        assert_eq!(text, " a\u{241b}[31m\u{fffd}b\u{240d}");
        assert_eq!(&text[s..e], "\u{241b}[31m\u{fffd}");
        assert_eq!(displayable("\tx\r", 0, 3), (" x".to_string(), 0, 2));
        // Short lines are shown as they are, also with the span in the indentation.
        assert_eq!(displayable("  x", 0, 1), ("  x".to_string(), 0, 1));
    }

    #[test]
    fn codes_are_unique_well_formed_and_in_their_kinds_block() {
        let mut seen = std::collections::HashMap::new();
        for &c in Code::ALL {
            let s = c.as_str();
            assert!(
                s.len() == 6 && s.starts_with("GP") && s[2..].bytes().all(|b| b.is_ascii_digit()),
                "{c:?}: `{s}` is not GPnnnn"
            );
            if let Some(other) = seen.insert(s, c) {
                panic!("{s} is given to both {other:?} and {c:?}: codes are never shared");
            }
            let n: u16 = s[2..].parse().unwrap();
            assert_eq!(
                n / 100,
                c.kind().block(),
                "{c:?} ({s}) is outside {:?}'s block",
                c.kind()
            );
            assert_ne!(n % 100, 0, "{s}: the first code of a block is xx01");
            assert!(
                !Code::RETIRED.contains(&s),
                "{s} ({c:?}) is retired: never reuse a code"
            );
            assert_eq!(Code::from_code(s), Some(c));
            assert!(!c.summary().is_empty() && !c.summary().contains('\n'));
        }
        let names: std::collections::HashSet<_> = Code::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Code::ALL.len());
        assert_eq!(Code::from_code("GP9999"), None);
    }

    #[test]
    fn the_code_is_in_the_headline_and_the_error_is_small() {
        let d = Diagnostic::warning(Code::WaitForNothing, "w");
        assert_eq!(d.render().lines().next(), Some("warning[GP0418]: w"));
        assert_eq!(d.kind(), Kind::Check);
        // clippy's result_large_err limit is 128 bytes.
        assert!(
            std::mem::size_of::<Diagnostic>() < 128,
            "{}",
            std::mem::size_of::<Diagnostic>()
        );
    }

    #[test]
    fn whole_line_span_skips_indentation() {
        assert_eq!(span_of("\ts_nop 0  ", None, 0), (1, 8));
        assert_eq!(span_of("abc", Some(2), 1), (1, 2));
        assert_eq!(span_of("abc", Some(9), 1), (3, 3));
    }
}
