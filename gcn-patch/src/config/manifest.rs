//! `kernels.toml`: which dumps to ship, for which targets, with which patches.
//!
//! Every key is kebab-case and unknown keys are errors (with `file:line:col`).
//! Paths are relative to the directory holding the manifest and must stay
//! inside it (no `..` escaping it, no absolute paths, no symlink pointing
//! outside).
//!
//! ```toml
//! [defaults]
//! targets = ["gfx942"]                # targets of sources that list none; family names allowed (gfx94X-all)
//! code-object-version = 5             # optional (4, 5 or 6); generic targets always get 6
//! llvm = "/opt/rocm/llvm/bin"         # optional LLVM bin dir, relative to the manifest or absolute
//! registers = "error"                 # "error" (default) | "update"
//! hazards = "error"                   # wait-counter hazards: "error" (new or worse ones fail; default) | "warn" | "strict" (inherited ones fail too)
//!
//! [[kernel]]
//! name = "matmul"                     # a Rust identifier (used in generated code), unique
//! iree-executable = "matmul_dispatch_0"   # optional
//! iree-executables = ["mm_dispatch_0", "mm_dispatch_1"]  # optional: every IREE executable a linked dump serves
//! registers = "update"                # optional, overrides defaults.registers
//! hazards = "warn"                    # optional, overrides defaults.hazards
//!
//! [[kernel.source]]
//! asm = "asm/gfx942/matmul.rocmasm"   # the dump, relative to the manifest directory
//! sha256 = "0f3a…"                    # pin of the dump's bytes (64 lowercase hex digits)
//! targets = ["gfx942", "gfx950", "gfx9-4-generic"]
//! patches = ["patches/matmul-waitcnt.diff"]   # unified diffs, applied in order, then the rules
//! symbols = ["matmul_dispatch_0_matmul"]      # optional, informational: kernel symbols (written by `gcn-patch import`)
//! imported-from = "/tmp/dump/module_matmul_linked_rocm_hsaco_fb.rocmasm"  # optional, informational
//! imported-sha256 = "9c1e…"           # optional: sha256 of the binary a lifted source came from (`gcn-patch import X.co`)
//! # Triton dumps only (written by `gcn-patch import`): Triton's kernel name, dump hash
//! # (= override directory name), dump target and launch metadata; see `crate::stage::triton`
//! triton = { kernel = "matmul", hash = "NKFV…", target = "gfx942", shared = 4096, num-warps = 4, warp-size = 64 }
//!
//! [[kernel.source.rule]]              # structured rules, applied in order after the patches
//! move = 'v_add_u32_e32 v1(0[5-9]|1[01]), 0x[0-9a-f]+, v104'   # regex: all 7 lines, in order
//! regex = true
//! expect = 7
//! block = ".LBB0_1"
//! before = "buffer_load_dwordx4 v[34:37], v50, s[12:15], 0 offen"   # anchors are literal
//!
//! [[kernel.source.rule]]
//! set-waitcnt = "s_waitcnt vmcnt(11)"
//! counter = "vmcnt"
//! value = 8
//! ```
//!
//! The rule keys are documented in [`crate::config::rules`].
//!
//! **Pins.** `sha256` pins the dump a patch or rule was written against: a
//! source that has `patches` or rules must have a `sha256` (a patch made
//! against one compilation must not be applied to another). A source without
//! patches and rules (hand-written asm, edited in place) may omit it.
//! `gcn-patch pin <kernel>` rewrites the pins ([`crate::ops::pin::pin()`]).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Location};
use crate::base::hash::sha256_hex;
use crate::config::policy::{HazardPolicy, RegisterPolicy};
use crate::config::rules::{RawRule, Rule};

pub use gcn_embed::TargetId;

/// The names gcn-build's generated Rust defines besides one `pub static`
/// per kernel (the kernel name upper-cased): a kernel whose static would be
/// one of these is refused at manifest load.
pub const GENERATED_FIXED_NAMES: &[&str] = &["KERNELS"];

/// The identifier of the `pub static` gcn-build generates for kernel `name`.
pub fn generated_ident(name: &str) -> String {
    name.to_uppercase()
}

/// A loaded `kernels.toml`.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Path of the manifest file, as given.
    pub path: PathBuf,
    /// Directory holding it; every relative path is resolved against it.
    pub dir: PathBuf,
    /// `[defaults]`.
    pub defaults: Defaults,
    /// `[[kernel]]` entries, in file order.
    pub kernels: Vec<KernelSpec>,
    /// The manifest text (to show source lines in diagnostics).
    pub text: String,
}

/// `[defaults]`.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Targets of sources that do not list any (families expanded).
    pub targets: Vec<TargetId>,
    /// `.amdhsa_code_object_version` for non-generic targets, if forced.
    pub code_object_version: Option<u32>,
    /// LLVM bin directory (absolute), if given.
    pub llvm: Option<PathBuf>,
    /// Register policy of kernels that do not set one.
    pub registers: RegisterPolicy,
    /// Wait-counter hazard policy of kernels that do not set one.
    pub hazards: HazardPolicy,
}

/// One `[[kernel]]`.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    /// Rust identifier naming the kernel in generated code.
    pub name: String,
    /// IREE executable name, if the dump comes from IREE.
    pub iree_executable: Option<String>,
    /// Every IREE executable this kernel's code object serves: `iree-executable`
    /// followed by `iree-executables` (a linked dump serves several), deduplicated.
    pub iree_executables: Vec<String>,
    /// Register policy (kernel value or the default).
    pub registers: RegisterPolicy,
    /// Wait-counter hazards are errors or warnings (kernel value or the default).
    pub hazards: HazardPolicy,
    /// `[[kernel.source]]` entries.
    pub sources: Vec<SourceSpec>,
    /// 1-based manifest line of `name = …`.
    pub line: usize,
    /// `accepted = "…"`: the file of acknowledged findings
    /// ([`crate::config::accept`]), absolute.
    pub accepted: Option<PathBuf>,
    /// The same, as written in the manifest.
    pub accepted_rel: Option<PathBuf>,
    /// `[[kernel.launch]]` entries: dispatches `gcn-patch compare` and
    /// `gcn-patch test` run in the emulator.
    pub launches: Vec<LaunchDecl>,
}

/// One `[[kernel.launch]]` as the manifest holds it: the table as written.
/// The emulator's commands (`gcn-patch compare`, `test`; feature `cli`) read
/// it as a [`gcn_emu`] launch description with [`Manifest::read_view`], so a
/// bad launch is an error at its key's line there; a build, which runs no
/// launch, does not judge it.
#[derive(Debug, Clone)]
pub struct LaunchDecl {
    /// 1-based manifest line of its `[[kernel.launch]]` header.
    pub line: usize,
    /// Its keys as written (grid, block, arguments, tolerance, …).
    pub table: toml::Table,
}

/// One `[[kernel.source]]`.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    /// The dump, absolute.
    pub asm: PathBuf,
    /// The dump, as written in the manifest (relative to [`Manifest::dir`]).
    pub rel: PathBuf,
    /// Pinned sha256 of the dump's bytes (lowercase hex).
    pub sha256: Option<String>,
    /// 1-based manifest line of `sha256 = …` (or of `asm = …` when absent).
    pub sha256_line: usize,
    /// Targets (families expanded); the defaults when the source lists none.
    pub targets: Vec<TargetId>,
    /// Unified diffs, in order.
    pub patches: Vec<PatchFile>,
    /// Structured rules, in order.
    pub rules: Vec<Rule>,
    /// Kernel symbols recorded by `gcn-patch import` (informational).
    pub symbols: Vec<String>,
    /// Where `gcn-patch import` copied the dump from (informational).
    pub imported_from: Option<String>,
    /// `imported-sha256`: the sha256 of the code object (or container) a
    /// lifted source was imported from; informational.
    pub imported_sha256: Option<String>,
    /// Triton's names and launch metadata (`triton = { … }`, written by
    /// `gcn-patch import` for Triton dumps): the Triton limits check and
    /// `gcn-patch triton-override` use it.
    pub triton: Option<crate::config::triton::TritonKernel>,
}

/// A patch file named in `patches`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// Absolute path.
    pub path: PathBuf,
    /// As written in the manifest.
    pub rel: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawManifest {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    kernel: Vec<RawKernel>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDefaults {
    targets: Option<Vec<Spanned<String>>>,
    code_object_version: Option<Spanned<u32>>,
    llvm: Option<String>,
    registers: Option<RegisterPolicy>,
    hazards: Option<HazardPolicy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawKernel {
    name: Spanned<String>,
    iree_executable: Option<String>,
    iree_executables: Option<Vec<String>>,
    registers: Option<RegisterPolicy>,
    hazards: Option<HazardPolicy>,
    accepted: Option<Spanned<String>>,
    #[serde(default)]
    source: Vec<Spanned<RawSource>>,
    #[serde(default)]
    launch: Vec<Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSource {
    asm: Spanned<String>,
    sha256: Option<Spanned<String>>,
    targets: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    patches: Vec<Spanned<String>>,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
    symbols: Option<Vec<String>>,
    imported_from: Option<String>,
    imported_sha256: Option<String>,
    triton: Option<crate::config::triton::TritonKernel>,
}

/// Manifest text plus the name to show: turns byte spans into [`Location`]s.
pub(crate) struct Src<'a> {
    /// The manifest text.
    pub text: &'a str,
    /// Name shown in diagnostics.
    pub shown: PathBuf,
    /// Byte offset of every line's start, built on first use: a location is
    /// then a binary search, not a scan of the text before it (a manifest of
    /// thousands of imported kernels asks for one per kernel).
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Src<'a> {
    /// `text`, shown in diagnostics as `shown`.
    pub(crate) fn new(text: &'a str, shown: PathBuf) -> Src<'a> {
        Src {
            text,
            shown,
            line_starts: std::cell::OnceCell::new(),
        }
    }

    /// 0-based line of byte `offset` (at most the text's length) and the
    /// offset that line starts at.
    fn line_start(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        // The last line starting at or before `offset`.
        let line = starts.partition_point(|&s| s <= offset) - 1;
        (line, starts[line])
    }

    /// Location of a byte span: 1-based line and column, the line's text.
    pub(crate) fn loc(&self, span: std::ops::Range<usize>) -> Location {
        let start = span.start.min(self.text.len());
        let (line, line_start) = self.line_start(start);
        let line = line + 1;
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let col = self.text[line_start..start].chars().count() + 1;
        let end = span.end.clamp(start, line_end);
        let len = self.text[start..end].chars().count().max(1);
        let src = self.text[line_start..line_end].trim_end_matches('\r');
        Location::line(self.shown.clone(), line, Some(src.to_string())).with_span(col, len)
    }

    /// 1-based line of a byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.line_start(offset.min(self.text.len())).0 + 1
    }
}

/// How to get a manifest that is not there.
const MISSING_MANIFEST_HELP: &str = "create one with `gcn-patch import DUMP...` (it writes kernels.toml next to where it runs; schema: docs/src/reference/kernels-toml.md), or pass the right path with `--manifest`";

impl Manifest {
    /// Read and validate `path`.
    pub fn load(path: &Path) -> Result<Manifest, Diagnostics> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let help = if e.kind() == std::io::ErrorKind::InvalidData {
                "a manifest is UTF-8 TOML text: check that the path names kernels.toml"
            } else {
                MISSING_MANIFEST_HELP
            };
            Diagnostic::error(
                Code::ManifestUnreadable,
                format!("cannot read manifest {}: {e}", path.display()),
            )
            .with_help(help)
        })?;
        Manifest::parse(&text, path)
    }

    /// [`Manifest::load`] for `gcn-patch pin`: a malformed or missing
    /// `sha256` is no error (pin is what writes it); such a pin is `None`.
    #[cfg(feature = "edit")]
    pub(crate) fn load_for_pin(path: &Path) -> Result<Manifest, Diagnostics> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::error(
                Code::ManifestUnreadable,
                format!("cannot read manifest {}: {e}", path.display()),
            )
            .with_help(MISSING_MANIFEST_HELP)
        })?;
        Manifest::parse_with(&text, path, true)
    }

    /// Validate `text` as the manifest at `path` (relative paths resolve
    /// against `path`'s directory; the files it names must exist).
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, Diagnostics> {
        Manifest::parse_with(text, path, false)
    }

    /// [`Manifest::parse`]; `repin`: malformed and missing pins are not errors.
    fn parse_with(text: &str, path: &Path, repin: bool) -> Result<Manifest, Diagnostics> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let shown = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
        let src = Src::new(text, shown);
        let raw: RawManifest = read_toml(text, &src)?;
        let mut r = Reading {
            src,
            canon_dir: dir.canonicalize().unwrap_or_else(|_| dir.clone()),
            dir,
            repin,
            errors: Vec::new(),
        };
        let defaults = r.defaults(&raw.defaults);
        // Upper-cased name (the generated static) → (name, where declared).
        let mut names: HashMap<String, (String, Location)> = HashMap::new();
        let kernels = raw
            .kernel
            .into_iter()
            .map(|rk| r.kernel(rk, &defaults, &mut names))
            .collect();
        if !r.errors.is_empty() {
            return Err(Diagnostics(r.errors));
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            dir: r.dir,
            defaults,
            kernels,
            text: text.to_string(),
        })
    }

    /// The kernel named `name`, or the one "unknown kernel" error: the
    /// manifest's kernels and the nearest names ("did you mean").
    pub fn kernel(&self, name: &str) -> Result<&KernelSpec, Diagnostic> {
        self.kernel_index(name).map(|i| &self.kernels[i])
    }

    /// The position in [`Manifest::kernels`] of the kernel named `name` (the
    /// job's `kernel`), or the error of [`Manifest::kernel`].
    pub fn kernel_index(&self, name: &str) -> Result<usize, Diagnostic> {
        if let Some(i) = self.kernels.iter().position(|k| k.name == name) {
            return Ok(i);
        }
        let names: Vec<&str> = self.kernels.iter().map(|k| k.name.as_str()).collect();
        // Close in edit distance (a swap of two neighbours counts once), relative
        // to the name's length, as rustc and cargo judge it.
        let limit = (name.chars().count() / 3).max(1);
        let mut near: Vec<(usize, &str)> = names
            .iter()
            .map(|n| (strsim::osa_distance(name, n), *n))
            .filter(|&(d, _)| d <= limit)
            .collect();
        near.sort();
        let mut d = Diagnostic::error(
            Code::NoSuchKernel,
            format!("no kernel `{name}` in {}", self.shown().display()),
        )
        .with_note(format!("kernels: {}", names.join(", ")));
        if let Some((_, best)) = near.first() {
            d = d.with_help(format!("did you mean `{best}`?"));
        }
        Err(d.with_help(
            "pass the `name` of a [[kernel]] in the manifest (`gcn-patch import` adds them)",
        ))
    }

    /// The manifest, every source, patch and accepted-findings file (for
    /// `cargo:rerun-if-changed`), without duplicates, in manifest order.
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut out = vec![self.path.clone()];
        for s in self.kernels.iter().flat_map(|k| &k.sources) {
            out.push(s.asm.clone());
            out.extend(s.patches.iter().map(|p| p.path.clone()));
        }
        // Accepted-findings files decide what a build prints.
        out.extend(self.kernels.iter().filter_map(|k| k.accepted.clone()));
        let mut seen = HashSet::new();
        out.retain(|p| seen.insert(p.clone()));
        out
    }

    /// The manifest's text read into another schema `T` (a view that
    /// ignores the keys it does not name, such as the emulator's reading of
    /// `[[kernel.launch]]`); a schema error is one diagnostic at its
    /// position, as [`Manifest::load`]'s are.
    pub fn read_view<T: serde::de::DeserializeOwned>(&self) -> Result<T, Diagnostics> {
        read_toml(&self.text, &Src::new(&self.text, self.shown()))
    }

    /// The 1-based line of a byte offset of the manifest's text (a span of
    /// a [`Manifest::read_view`] view).
    pub fn line_of(&self, offset: usize) -> usize {
        Src::new(&self.text, self.shown()).line_of(offset)
    }

    /// Name of the manifest as shown in diagnostics and origins (its file name).
    pub fn shown(&self) -> PathBuf {
        PathBuf::from(self.path.file_name().unwrap_or(self.path.as_os_str()))
    }
}

/// The TOML read into a schema (the raw manifest, or another view of it); a
/// syntax or schema error is one diagnostic at its position.
fn read_toml<T: serde::de::DeserializeOwned>(text: &str, src: &Src) -> Result<T, Diagnostics> {
    toml::from_str(text).map_err(|e| {
        let mut msg = e.message().trim().to_string();
        if msg.contains("untagged enum Expect") {
            msg = "`expect` must be a number of matches or \"any\"".into();
        }
        let mut d = Diagnostic::error(Code::ManifestInvalid, format!("invalid manifest: {msg}"));
        if let Some(span) = e.span() {
            d = d.at(src.loc(span));
        }
        if msg.starts_with("unknown field") {
            d = d.with_help("check the spelling; keys are kebab-case (schema: docs/src/reference/kernels-toml.md)");
        } else {
            d = d.with_help("fix the TOML at this position (schema: docs/src/reference/kernels-toml.md)");
        }
        Diagnostics::from(d)
    })
}

/// What reading one manifest needs beside the raw TOML: where its paths
/// resolve, whether pins may be missing, and the errors found so far (every
/// error is collected, not only the first).
struct Reading<'t> {
    src: Src<'t>,
    dir: PathBuf,
    canon_dir: PathBuf,
    repin: bool,
    errors: Vec<Diagnostic>,
}

impl Reading<'_> {
    /// `[defaults]`, checked.
    fn defaults(&mut self, raw: &RawDefaults) -> Defaults {
        Defaults {
            targets: raw
                .targets
                .as_deref()
                .map(|t| targets(&self.src, t, &mut self.errors))
                .unwrap_or_default(),
            code_object_version: raw.code_object_version.as_ref().and_then(|v| {
                if (4..=6).contains(v.get_ref()) {
                    Some(*v.get_ref())
                } else {
                    self.errors.push(
                        Diagnostic::error(
                            Code::UnsupportedCodeObjectVersion,
                            format!("unsupported code-object-version {}", v.get_ref()),
                        )
                        .at(self.src.loc(v.span()).with_label("expected 4, 5 or 6"))
                        .with_help("set 4, 5 or 6, or remove the key to keep each dump's version"),
                    );
                    None
                }
            }),
            llvm: raw.llvm.as_ref().map(|l| {
                let p = PathBuf::from(l);
                if p.is_absolute() {
                    p
                } else {
                    self.dir.join(p)
                }
            }),
            registers: raw.registers.unwrap_or_default(),
            hazards: raw.hazards.unwrap_or_default(),
        }
    }

    /// A kernel name: a Rust identifier, not a generated static, unique
    /// (also in upper case: `names` maps the generated static to the name
    /// and where it was declared).
    fn check_name(
        &mut self,
        name: &str,
        span: std::ops::Range<usize>,
        names: &mut HashMap<String, (String, Location)>,
    ) {
        if !is_rust_ident(name) {
            self.errors.push(
        Diagnostic::error(Code::KernelNameNotIdentifier, format!("kernel name `{name}` is not a Rust identifier"))
            .at(self.src.loc(span.clone()).with_label("used as an identifier in generated code"))
            .with_help("use letters, digits and `_`, not starting with a digit, not a keyword (e.g. `matmul_f16`)"),
    );
        }
        let here = self.src.loc(span.clone());
        let ident = generated_ident(name);
        if GENERATED_FIXED_NAMES.contains(&ident.as_str()) {
            self.errors.push(
                Diagnostic::error(
                    Code::KernelNameCollision,
                    format!(
                        "kernel name `{name}` collides with the generated `pub static {ident}`"
                    ),
                )
                .at(here
                    .clone()
                    .with_label(format!("would generate a second `{ident}`")))
                .with_note(format!(
            "gcn-build generates `pub static <NAME>` per kernel (the name upper-cased) and {}",
            GENERATED_FIXED_NAMES
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
                .with_help(format!("rename the kernel, e.g. `{name}_0`")),
            );
        }
        match names.get(&ident) {
    Some((first, _)) if *first == name => self.errors.push(
        Diagnostic::error(Code::DuplicateKernel, format!("kernel `{name}` is declared twice"))
            .at(here.with_label("second declaration"))
            .with_help("kernel names must be unique; rename one of them"),
    ),
    Some((first, at)) => self.errors.push(
        Diagnostic::error(Code::KernelNameCollision, format!(
            "kernels `{first}` and `{name}` differ only in case: both would generate `pub static {}`",
            ident
        ))
        .at(here.with_label(format!("same static as `{first}`")))
        .with_note(format!(
            "`{first}` is declared at {}:{}",
            at.file.display(),
            at.line
        ))
        .with_help("kernel names must differ in more than case; rename one of them"),
    ),
    None => {
        names.insert(ident, (name.to_string(), here));
    }
}
    }

    /// One `[[kernel.source]]` of kernel `name`; `sources`: the kernel's
    /// sources before it (a target built by two sources is an error).
    fn source(
        &mut self,
        name: &str,
        rs: Spanned<RawSource>,
        defaults: &Defaults,
        sources: &[SourceSpec],
    ) -> Option<SourceSpec> {
        let span = rs.span();
        let rs = rs.into_inner();
        let (asm, rel) = resolve_in(
            &self.src,
            &self.dir,
            &self.canon_dir,
            &rs.asm,
            "dump",
            &mut self.errors,
        )?;
        let tlist = match &rs.targets {
            Some(t) => targets(&self.src, t, &mut self.errors),
            None => defaults.targets.clone(),
        };
        if tlist.is_empty() && rs.targets.as_ref().is_none_or(|t| t.is_empty()) {
            self.errors.push(
                Diagnostic::error(
                    Code::NoTargets,
                    format!("no targets for `{}`", rel.display()),
                )
                .at(self.src.loc(rs.asm.span()))
                .with_help("add `targets = [\"gfx942\"]` to this source or to [defaults]"),
            );
        }
        let sha256 = rs.sha256.as_ref().and_then(|s| {
            let v = s.get_ref();
            if v.len() == 64
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                Some(v.clone())
            } else {
                if self.repin {
                    return None;
                }
                self.errors.push(
                    Diagnostic::error(
                        Code::InvalidSha256,
                        "sha256 must be 64 lowercase hex digits",
                    )
                    .at(self.src.loc(s.span()))
                    .with_help(format!(
                        "run `gcn-patch pin {name} --manifest <path>` to write it"
                    )),
                );
                None
            }
        });
        let sha256_line = self.src.line_of(
            rs.sha256
                .as_ref()
                .map_or(rs.asm.span().start, |s| s.span().start),
        );
        let mut patches = Vec::new();
        for p in &rs.patches {
            if let Some((path, rel)) = resolve_in(
                &self.src,
                &self.dir,
                &self.canon_dir,
                p,
                "patch",
                &mut self.errors,
            ) {
                patches.push(PatchFile { path, rel });
            }
        }
        let mut rules = Vec::new();
        for (i, r) in rs.rule.iter().enumerate() {
            match Rule::from_raw(i + 1, r.get_ref(), self.src.loc(r.span())) {
                Ok(rule) => rules.push(rule),
                Err(d) => self.errors.push(d),
            }
        }
        if !self.repin && rs.sha256.is_none() && (!rs.patches.is_empty() || !rs.rule.is_empty()) {
            let actual = std::fs::read(&asm)
                .map(|b| sha256_hex(&b))
                .unwrap_or_default();
            self.errors.push(
        Diagnostic::error(Code::MissingPin, format!(
            "`{}` has patches but no sha256 pin",
            rel.display()
        ))
        .at({
            let l = self.src.loc(span.start..span.start);
            let n = l.source_line.as_deref().map_or(1, |t| t.chars().count().max(1));
            l.with_span(1, n)
        })
        .with_note("patches and rules are written against one compilation; the pin makes sure they are never applied to another")
        .with_help(format!("after checking the patches against this dump, add `sha256 = \"{actual}\"` (or run `gcn-patch pin {name} --manifest <path>`)")),
    );
        }
        // One code object per kernel and target: a second source for the
        // same target would make the embedded object ambiguous.
        for t in &tlist {
            if let Some(other) = sources.iter().find(|o| o.targets.contains(t)) {
                self.errors.push(
                    Diagnostic::error(
                        Code::TargetFromTwoSources,
                        format!("kernel `{name}` gets {} from two sources", t.name()),
                    )
                    .at(self.src.loc(rs.asm.span()).with_label("second source"))
                    .with_note(format!(
                        "`{}` is already built for {}",
                        other.rel.display(),
                        t.name()
                    ))
                    .with_help("list each target in the `targets` of one source only"),
                );
                break;
            }
        }
        Some(SourceSpec {
            asm,
            rel,
            sha256,
            sha256_line,
            targets: tlist,
            patches,
            rules,
            symbols: rs.symbols.clone().unwrap_or_default(),
            imported_from: rs.imported_from.clone(),
            imported_sha256: rs.imported_sha256.clone(),
            triton: rs.triton.clone(),
        })
    }

    /// One `[[kernel]]`.
    fn kernel(
        &mut self,
        rk: RawKernel,
        defaults: &Defaults,
        names: &mut HashMap<String, (String, Location)>,
    ) -> KernelSpec {
        let name = rk.name.get_ref().clone();
        self.check_name(&name, rk.name.span(), names);
        let mut sources: Vec<SourceSpec> = Vec::new();
        for rs in rk.source {
            if let Some(s) = self.source(&name, rs, defaults, &sources) {
                sources.push(s);
            }
        }
        let mut iree_executables: Vec<String> = Vec::new();
        for e in rk
            .iree_executable
            .iter()
            .chain(rk.iree_executables.iter().flatten())
        {
            if !iree_executables.contains(e) {
                iree_executables.push(e.clone());
            }
        }
        let accepted = rk.accepted.as_ref().and_then(|a| {
            resolve_in(
                &self.src,
                &self.dir,
                &self.canon_dir,
                a,
                "accepted findings",
                &mut self.errors,
            )
        });
        KernelSpec {
            name,
            iree_executable: rk.iree_executable,
            iree_executables,
            registers: rk.registers.unwrap_or(defaults.registers),
            hazards: rk.hazards.unwrap_or(defaults.hazards),
            sources,
            line: self.src.line_of(rk.name.span().start),
            accepted_rel: accepted.as_ref().map(|(_, rel)| rel.clone()),
            accepted: accepted.map(|(abs, _)| abs),
            launches: rk
                .launch
                .into_iter()
                .map(|l| LaunchDecl {
                    line: self.src.line_of(l.span().start),
                    table: l.into_inner(),
                })
                .collect(),
        }
    }
}

fn is_rust_ident(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
        "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super",
        "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box",
        "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
        "_",
    ];
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// Expand a list of target names / family names; errors at the entry's span.
fn targets(src: &Src, list: &[Spanned<String>], errors: &mut Vec<Diagnostic>) -> Vec<TargetId> {
    let mut out: Vec<TargetId> = Vec::new();
    for t in list {
        match resolve_target(t.get_ref()) {
            Ok(ids) => {
                for id in ids {
                    if !out.contains(&id) {
                        out.push(id);
                    }
                }
            }
            Err(msg) => errors.push(
                Diagnostic::error(Code::UnknownTarget, format!("unknown target `{}`", t.get_ref()))
                    .at(src.loc(t.span()))
                    .with_note(msg)
                    .with_help("use a processor (gfx942), a target ID with features (gfx90a:xnack+), a generic target (gfx9-4-generic) or a family (gfx94X-all)"),
            ),
        }
    }
    out
}

/// One manifest target spec: a target ID, or a family name expanded.
fn resolve_target(spec: &str) -> Result<Vec<TargetId>, String> {
    gcn_embed::family::expand(spec).map_err(|e| e.to_string())
}

/// Resolve a manifest-relative path; errors if it escapes the manifest
/// directory or does not exist.
fn resolve_in(
    src: &Src,
    dir: &Path,
    canon_dir: &Path,
    p: &Spanned<String>,
    what: &str,
    errors: &mut Vec<Diagnostic>,
) -> Option<(PathBuf, PathBuf)> {
    let rel = PathBuf::from(p.get_ref());
    let escape = |why: &str| {
        Diagnostic::error(
            Code::PathEscapes,
            format!(
                "{what} path `{}` escapes the manifest directory",
                p.get_ref()
            ),
        )
        .at(src.loc(p.span()).with_label(why.to_string()))
        .with_help(format!(
            "copy the file under {} and name it relative to the manifest",
            dir.display()
        ))
    };
    if rel.is_absolute() || rel.has_root() {
        errors.push(escape("absolute path"));
        return None;
    }
    let mut depth: i64 = 0;
    let mut clean = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::ParentDir => {
                depth -= 1;
                clean.pop();
            }
            Component::Normal(n) => {
                depth += 1;
                clean.push(n);
            }
            Component::CurDir => {}
            _ => {
                errors.push(escape("absolute path"));
                return None;
            }
        }
        if depth < 0 {
            errors.push(escape("`..` leaves the manifest directory"));
            return None;
        }
    }
    let abs = dir.join(&clean);
    match abs.canonicalize() {
        Ok(c) if !c.starts_with(canon_dir) => {
            errors.push(escape("a symlink pointing outside the manifest directory"));
            None
        }
        Ok(_) if !abs.is_file() => {
            errors.push(
                Diagnostic::error(
                    Code::NotAFile,
                    format!("{what} `{}` is not a file", p.get_ref()),
                )
                .at(src.loc(p.span()))
                .with_help("name a regular file, relative to the manifest directory"),
            );
            None
        }
        Ok(_) => Some((abs, rel)),
        Err(e) => {
            errors.push(
                Diagnostic::error(
                    Code::ReadFailed,
                    format!("cannot read {what} `{}`: {e}", p.get_ref()),
                )
                .at(src.loc(p.span()))
                .with_help(format!("paths are relative to {}", dir.display())),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line index gives what counting newlines before an offset gives,
    /// at every offset (line starts, CRLF, the end, past the end).
    #[test]
    fn locations_agree_with_counting_lines() {
        let text = "a = 1\r\n\n[[kernel]]\nname = \"k\"\nx";
        let src = Src::new(text, PathBuf::from("kernels.toml"));
        for offset in 0..=text.len() + 2 {
            let before = &text[..offset.min(text.len())];
            let line = before.matches('\n').count() + 1;
            assert_eq!(src.line_of(offset), line, "offset {offset}");
            let loc = src.loc(offset..offset + 1);
            assert_eq!(loc.line, line, "offset {offset}");
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            assert_eq!(loc.column, Some(before[start..].chars().count() + 1));
        }
    }
}
