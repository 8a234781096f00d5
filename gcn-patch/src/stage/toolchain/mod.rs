//! Find clang and ld.lld with AMDGPU support.
//!
//! [`Toolchain::find`] walks a fixed search order and keeps the first
//! candidate that works; [`Toolchain::check_target`] then checks that its LLVM
//! is new enough for a target. Environment variables are read only through the
//! `env` function given to [`Toolchain::find`], never from the process
//! environment directly, so that `gcn-build` can declare them to Cargo.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::base::diag::{Code, Diagnostic};

/// The bounded tool runner: gcn-raw's, the one the emulator's decoder runs
/// `llvm-objdump` with too (re-exported at its old path).
pub use gcn_raw::process;

pub use process::{
    run_tool, run_tool_with_input, ToolError, ToolFailure, ToolRun, DEFAULT_TOOL_TIMEOUT,
    ENV_TOOL_TIMEOUT,
};

use gcn_embed::TargetId;

/// A [`ToolError`] as a rustc-style diagnostic (the runner is gcn-raw's,
/// which knows no diagnostics).
pub trait ToolDiagnostic {
    /// What, where (tool, job, command), how to fix.
    fn to_diagnostic(&self) -> Diagnostic;
}

impl ToolDiagnostic for ToolError {
    fn to_diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::error(Code::ToolFailed, self.to_string())
            .with_note(format!("command: {}", self.command));
        match &self.failure {
            ToolFailure::TimedOut(_) => d
                .with_note("the tool and every process it started were killed; no output was kept")
                .with_help(format!(
                    "clang's AMDGPU assembler never returns on some malformed input (e.g. an \
                     unterminated `\"` after an operand): check the lines the patches changed; \
                     if the input is just very large, raise the limit with \
                     {ENV_TOOL_TIMEOUT}=SECONDS (or `--tool-timeout`, `Build::tool_timeout`)"
                )),
            ToolFailure::Spawn(_) => d.with_help(
                "check that the tool exists and runs, or point GCN_PATCH_LLVM_BIN / \
                 GCN_PATCH_CLANG / GCN_PATCH_LD_LLD at a working LLVM",
            ),
            ToolFailure::Io(_) => d,
        }
    }
}

/// Oldest LLVM release [`Toolchain::find`] accepts (code object v6, generic targets).
pub const MIN_LLVM_MAJOR: u32 = 19;

/// Environment variable: a directory holding `clang` and `ld.lld`.
pub const ENV_LLVM_BIN: &str = "GCN_PATCH_LLVM_BIN";
/// Environment variable: the clang to use.
pub const ENV_CLANG: &str = "GCN_PATCH_CLANG";
/// Environment variable: the ld.lld to use.
pub const ENV_LD_LLD: &str = "GCN_PATCH_LD_LLD";
/// Environment variable (cc-rs style per-target compiler): a clang path.
pub const ENV_CC_TARGET: &str = "CC_amdgcn_amd_amdhsa";
/// Environment variable: the ROCm installation root.
pub const ENV_ROCM_PATH: &str = "ROCM_PATH";
/// Environment variable: the executable search path.
pub const ENV_PATH: &str = "PATH";

/// Every environment variable [`Toolchain::find`] may read, in search order.
pub const ENV_VARS: &[&str] = &[
    ENV_LLVM_BIN,
    ENV_CLANG,
    ENV_LD_LLD,
    ENV_CC_TARGET,
    ENV_ROCM_PATH,
    ENV_PATH,
    ENV_TOOL_TIMEOUT,
];

/// Newest LLVM major version probed by name (`clang-NN`), searched downwards.
const NEWEST_PROBED_MAJOR: u32 = 30;

/// Explicit toolchain settings (from `kernels.toml`, the CLI or a build script).
/// Each one that is set wins over every other way of finding that tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolchainConfig {
    /// A directory holding `clang` and `ld.lld`.
    pub llvm_bin: Option<PathBuf>,
    /// The clang to use.
    pub clang: Option<PathBuf>,
    /// The ld.lld to use.
    pub lld: Option<PathBuf>,
    /// Time limit of every tool run (wins over `GCN_PATCH_TOOL_TIMEOUT`;
    /// default [`DEFAULT_TOOL_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// A file remembering what the probes found (see [`ProbeCache`]), so
    /// that a process run again and again (a build script) starts no probe
    /// while the tools stay the same files. `None`: probe every time.
    pub probe_cache: Option<PathBuf>,
}

/// What probing a clang found (its `--version` line; that it lists
/// `amdgcn`; whether its `llvm-mc` has the same version), remembered in a
/// file under the identity of the tools: clang's, `llvm-mc`'s and ld.lld's
/// resolved paths with each file's size, modification time and inode, as
/// Cargo remembers `rustc -vV` under rustc's path and modification time.
/// Replacing or upgrading any of the tools changes the identity, and the
/// next run probes again. A missing, unreadable or damaged file only costs
/// the probes; it is written to a temp file and renamed.
pub struct ProbeCache;

impl ProbeCache {
    /// Format tag: a change of what is stored invalidates older files.
    const FORMAT: &'static str = "gcn-patch probe cache 1";

    /// The identity of a candidate's tools, or `None` when a file cannot
    /// be examined (then nothing is cached).
    fn identity(c: &Candidate, lld: &Path, llvm_mc: Option<&Path>) -> Option<String> {
        fn file(p: &Path) -> Option<String> {
            let real = p.canonicalize().ok()?;
            let m = real.metadata().ok()?;
            let mtime = m
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_nanos();
            #[cfg(unix)]
            let inode = {
                use std::os::unix::fs::MetadataExt;
                format!("{}:{}", m.dev(), m.ino())
            };
            #[cfg(not(unix))]
            let inode = String::new();
            Some(format!("{} {} {mtime} {inode}", real.display(), m.len()))
        }
        let mc = match llvm_mc {
            Some(p) => file(p)?,
            None => "-".into(),
        };
        Some(format!(
            "{}\n{}\nclang {}\nld.lld {}\nllvm-mc {mc}",
            Self::FORMAT,
            c.clang.display(),
            file(&c.clang)?,
            file(lld)?,
        ))
    }

    /// The remembered `(version line, llvm-mc agrees)` for `identity`.
    fn read(path: &Path, identity: &str) -> Option<(String, bool)> {
        let text = std::fs::read_to_string(path).ok()?;
        let rest = text.strip_prefix(identity)?.strip_prefix('\n')?;
        let mut lines = rest.lines();
        let version_text = lines.next()?.strip_prefix("version ")?.to_string();
        let mc_ok = match lines.next()? {
            "llvm-mc-agrees 1" => true,
            "llvm-mc-agrees 0" => false,
            _ => return None,
        };
        (lines.next() == Some("end")).then_some((version_text, mc_ok))
    }

    fn write(path: &Path, identity: &str, version_text: &str, mc_ok: bool) {
        let text = format!(
            "{identity}\nversion {version_text}\nllvm-mc-agrees {}\nend\n",
            u8::from(mc_ok)
        );
        // A probe cache that cannot be written only costs the next run its probes.
        let _ = crate::base::output::write_if_changed(
            path,
            text.as_bytes(),
            crate::base::output::Durability::Unsynced,
        );
    }
}

/// An LLVM release number, from `clang --version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LlvmVersion {
    /// Major version (the one that gates features).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
}

impl LlvmVersion {
    /// Parse the first `clang version X.Y.Z` (or `X.Y`, `X`) of `clang --version`.
    pub fn parse(version_text: &str) -> Option<LlvmVersion> {
        let at = version_text.find("clang version ")? + "clang version ".len();
        let rest = &version_text[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let mut nums = rest[..end].split('.').map(|n| n.parse::<u32>().ok());
        let major = nums.next().flatten()?;
        let minor = nums.next().flatten().unwrap_or(0);
        let patch = nums.next().flatten().unwrap_or(0);
        Some(LlvmVersion {
            major,
            minor,
            patch,
        })
    }
}

impl fmt::Display for LlvmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A working clang + ld.lld pair with AMDGPU support.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// The clang driver (used as the assembler).
    pub clang: PathBuf,
    /// The linker.
    pub lld: PathBuf,
    /// LLVM version of clang.
    pub version: LlvmVersion,
    /// First line of `clang --version`.
    pub version_text: String,
    /// How it was found, e.g. `PATH (clang-22)` or `$GCN_PATCH_LLVM_BIN`.
    pub found_via: String,
    /// Time limit of every tool run with this toolchain (see [`process`]).
    pub timeout: Duration,
    /// `llvm-mc` in the directory clang resolves to (the same LLVM
    /// installation), if there is one: the faster assembler, see
    /// [`Toolchain::llvm_mc`].
    pub llvm_mc: Option<PathBuf>,
}

/// One place searched.
#[derive(Debug, Clone)]
struct Candidate {
    clang: PathBuf,
    /// `None`: look next to clang.
    lld: Option<PathBuf>,
    via: String,
    /// An explicit setting: if it fails, the search stops with an error.
    explicit: bool,
}

impl Toolchain {
    /// Find clang and ld.lld with AMDGPU support.
    ///
    /// `env` is the ONLY way environment variables are read (gcn-build passes a
    /// function that also prints `cargo:rerun-if-env-changed`). Search order,
    /// first match wins:
    ///
    /// 1. explicit [`ToolchainConfig`]: `clang`, `lld`, `llvm_bin` (a directory
    ///    with `clang` and `ld.lld`);
    /// 2. `GCN_PATCH_LLVM_BIN` (a directory), `GCN_PATCH_CLANG`,
    ///    `GCN_PATCH_LD_LLD` (tool paths);
    /// 3. `CC_amdgcn_amd_amdhsa` (cc-rs style per-target compiler: a clang path;
    ///    ld.lld is looked for next to it);
    /// 4. `$ROCM_PATH/llvm/bin`, `$ROCM_PATH/lib/llvm/bin`;
    /// 5. `/opt/rocm/llvm/bin`, `/opt/rocm/lib/llvm/bin`;
    /// 6. versioned Debian names, newest first: `clang-NN` on `PATH` (with
    ///    `ld.lld-NN` of the same version, next to it or on `PATH`) and
    ///    `/usr/lib/llvm-NN/bin`;
    /// 7. plain `clang` and `ld.lld` on `PATH`.
    ///
    /// An explicitly set tool (1–3) that is unusable is an error, not skipped;
    /// an explicit `lld` (or `GCN_PATCH_LD_LLD`) is used with whichever clang
    /// is found. A candidate counts only if `clang --version` runs, reports
    /// LLVM [`MIN_LLVM_MAJOR`] or newer, `clang -print-targets` lists
    /// `amdgcn`, and the ld.lld file exists.
    ///
    /// The time limit of every tool run (the probes here included) is
    /// `config.timeout`, else `GCN_PATCH_TOOL_TIMEOUT` (seconds), else
    /// [`DEFAULT_TOOL_TIMEOUT`]; an invalid `GCN_PATCH_TOOL_TIMEOUT` is an error.
    ///
    /// Variables read: `GCN_PATCH_LLVM_BIN`, `GCN_PATCH_CLANG`,
    /// `GCN_PATCH_LD_LLD`, `CC_amdgcn_amd_amdhsa`, `ROCM_PATH`, `PATH`,
    /// `GCN_PATCH_TOOL_TIMEOUT` (see [`ENV_VARS`]).
    pub fn find(
        config: &ToolchainConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Toolchain, Diagnostic> {
        find_in(config, env, &SystemRoots::default())
    }

    /// Error unless this LLVM is new enough for `target` (the target table's
    /// `min_llvm`: generic targets need 19, gfx9-4-generic and gfx950 need 20).
    pub fn check_target(&self, target: &TargetId) -> Result<(), Diagnostic> {
        let need = target.processor.min_llvm;
        if self.version.major >= need {
            return Ok(());
        }
        Err(Diagnostic::error(
            Code::ToolchainTooOld,
            format!(
                "{} needs LLVM {need} or newer, but the toolchain is LLVM {}",
                target.name(),
                self.version
            ),
        )
        .with_note(format!(
            "clang: {} ({}), found via {}",
            self.clang.display(),
            self.version_text,
            self.found_via
        ))
        .with_help(format!(
            "install a newer LLVM (`apt-get install -y clang-22 lld-22 llvm-22`) and \
             point {ENV_LLVM_BIN} at its bin directory, or drop {} from the targets",
            target.name()
        )))
    }

    /// Run one of this toolchain's tools through [`process::run_tool`], bounded by
    /// [`Toolchain::timeout`]. `tool` is its short name (`clang`), `job` what it
    /// works on ("assembling kernel `k` for gfx942"); both appear in errors.
    pub fn run(&self, cmd: &mut Command, tool: &str, job: &str) -> Result<Output, ToolError> {
        self.run_with_input(cmd, tool, job, None)
    }

    /// [`Toolchain::run`] with `input` written to the tool's stdin (see
    /// [`process::run_tool_with_input`]).
    pub fn run_with_input(
        &self,
        cmd: &mut Command,
        tool: &str,
        job: &str,
        input: Option<&[u8]>,
    ) -> Result<Output, ToolError> {
        run_tool_with_input(
            cmd,
            &ToolRun {
                tool,
                job,
                timeout: self.timeout,
            },
            input,
        )
    }

    /// The `llvm-mc` to assemble with: [`Toolchain::llvm_mc`] if its
    /// `--version` is clang's exact LLVM version (checked once per process
    /// and path, on first use, so a build with every object cached runs no
    /// probe); else `None`, and clang assembles.
    ///
    /// Why: `llvm-mc` is the same assembler as `clang -cc1as` (LLVM's MC
    /// layer and AMDGPU asm parser) without clang's front-end libraries,
    /// so it starts faster — 12.3 ms against 17 ms per run on the HIP
    /// reduce dump, measured with `perf stat`, which is about a tenth of a
    /// cold build — and with the equivalent flags (see
    /// `assemble::assemble_bytes`) its objects are byte-identical (a test
    /// compares both on every corpus dump).
    pub fn assembler_mc(&self) -> Option<&Path> {
        let mc = self.llvm_mc.as_deref()?;
        let key = (mc.to_path_buf(), self.version);
        if let Some(&ok) = MC_CHECKED.lock().ok()?.get(&key) {
            return ok.then_some(mc);
        }
        let ok = mc_version(mc, self.timeout) == Some(self.version);
        if let Ok(mut c) = MC_CHECKED.lock() {
            c.insert(key, ok);
        }
        ok.then_some(mc)
    }

    /// Record the `llvm-mc` check's answer (from the [`ProbeCache`]).
    fn remember_assembler_mc(&self, ok: bool) {
        if let (Some(mc), Ok(mut c)) = (self.llvm_mc.as_deref(), MC_CHECKED.lock()) {
            c.insert((mc.to_path_buf(), self.version), ok);
        }
    }

    /// An LLVM tool of this toolchain's installation (`llvm-objdump`,
    /// `llvm-mc`, `llvm-readelf`, …): the one next to clang (symlinks
    /// resolved), else `<name>-<major>` on `PATH`, else `<name>` (left to
    /// `PATH`; running it then fails with the tool's name).
    pub fn llvm_tool(&self, name: &str) -> PathBuf {
        let clang = self
            .clang
            .canonicalize()
            .unwrap_or_else(|_| self.clang.clone());
        if let Some(dir) = clang.parent() {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
        let versioned = format!("{name}-{}", self.version.major);
        let path = std::env::var_os("PATH").unwrap_or_default();
        for dir in std::env::split_paths(&path) {
            if dir.join(&versioned).is_file() {
                return dir.join(versioned);
            }
        }
        PathBuf::from(name)
    }

    /// Run this toolchain's `llvm-objdump` ([`Toolchain::llvm_tool`]) with
    /// `args` (the file last) through the bounded runner ([`Toolchain::run`]),
    /// with an empty environment but `LC_ALL=C`, so its listing does not
    /// depend on the caller's locale: its standard output. The one
    /// `llvm-objdump` runner of gcn-patch (lift, `run`, `objdiff`). A tool
    /// that cannot start or runs past the time limit is the runner's
    /// diagnostic with how to install `llvm-objdump`; one that exits with an
    /// error is a `code` diagnostic with its stderr and command.
    pub fn objdump<I, S>(&self, args: I, job: &str, code: Code) -> Result<String, Diagnostic>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let objdump = self.llvm_tool("llvm-objdump");
        let mut cmd = process::tool_command(&objdump);
        cmd.env_clear().env("LC_ALL", "C").args(args);
        let command = process::command_line(&cmd);
        let out = self.run(&mut cmd, "llvm-objdump", job).map_err(|e| {
            let mut d = e.to_diagnostic();
            if matches!(e.failure, ToolFailure::Spawn(_)) {
                d.help.push(format!(
                    "install llvm-objdump of LLVM {} (`apt-get install -y llvm-{}`) next to clang",
                    self.version.major, self.version.major
                ));
            }
            d
        })?;
        if !out.status.success() {
            return Err(Diagnostic::error(
                code,
                format!(
                    "llvm-objdump failed {job}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )
            .with_note(format!("command: {command}")));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A string identifying this toolchain for cache keys: version text and
    /// resolved (symlink-free) tool paths.
    pub fn identity(&self) -> String {
        let resolve = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        format!(
            "{}\nclang={}\nld.lld={}",
            self.version_text,
            resolve(&self.clang).display(),
            resolve(&self.lld).display()
        )
    }
}

/// Fixed system locations searched; overridable in unit tests.
#[derive(Debug, Clone)]
struct SystemRoots {
    /// `/opt/rocm`.
    rocm: PathBuf,
    /// `/usr/lib` (for `llvm-NN/bin`).
    usr_lib: PathBuf,
}

impl Default for SystemRoots {
    fn default() -> Self {
        SystemRoots {
            rocm: PathBuf::from("/opt/rocm"),
            usr_lib: PathBuf::from("/usr/lib"),
        }
    }
}

fn nonempty(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.trim().is_empty())
}

/// Every candidate in search order.
fn candidates(
    config: &ToolchainConfig,
    env: &dyn Fn(&str) -> Option<String>,
    roots: &SystemRoots,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let env_lld = nonempty(env, ENV_LD_LLD).map(PathBuf::from);
    // An explicit linker applies to whatever clang is found.
    let pinned_lld = config.lld.clone().or(env_lld.clone());

    // 1. explicit configuration.
    if let Some(clang) = &config.clang {
        out.push(Candidate {
            clang: clang.clone(),
            lld: pinned_lld
                .clone()
                .or_else(|| config.llvm_bin.as_ref().map(|b| b.join("ld.lld"))),
            via: "configured `clang`".into(),
            explicit: true,
        });
    } else if let Some(bin) = &config.llvm_bin {
        out.push(Candidate {
            clang: bin.join("clang"),
            lld: pinned_lld.clone().or_else(|| Some(bin.join("ld.lld"))),
            via: "configured `llvm_bin`".into(),
            explicit: true,
        });
    }

    // 2. GCN_PATCH_* variables.
    let env_bin = nonempty(env, ENV_LLVM_BIN).map(PathBuf::from);
    if let Some(clang) = nonempty(env, ENV_CLANG) {
        out.push(Candidate {
            clang: PathBuf::from(clang),
            lld: pinned_lld
                .clone()
                .or_else(|| env_bin.as_ref().map(|b| b.join("ld.lld"))),
            via: format!("${ENV_CLANG}"),
            explicit: true,
        });
    } else if let Some(bin) = &env_bin {
        out.push(Candidate {
            clang: bin.join("clang"),
            lld: pinned_lld.clone().or_else(|| Some(bin.join("ld.lld"))),
            via: format!("${ENV_LLVM_BIN}"),
            explicit: true,
        });
    }

    // 3. cc-rs style per-target compiler.
    if let Some(cc) = nonempty(env, ENV_CC_TARGET) {
        out.push(Candidate {
            clang: PathBuf::from(cc),
            lld: pinned_lld.clone(),
            via: format!("${ENV_CC_TARGET}"),
            explicit: true,
        });
    }

    let in_dir = |dir: PathBuf, via: String| Candidate {
        clang: dir.join("clang"),
        lld: pinned_lld.clone().or_else(|| Some(dir.join("ld.lld"))),
        via,
        explicit: false,
    };

    // 4. ROCM_PATH.
    if let Some(rocm) = nonempty(env, ENV_ROCM_PATH) {
        let rocm = PathBuf::from(rocm);
        out.push(in_dir(rocm.join("llvm/bin"), format!("${ENV_ROCM_PATH}")));
        out.push(in_dir(
            rocm.join("lib/llvm/bin"),
            format!("${ENV_ROCM_PATH}"),
        ));
    }

    // 5. /opt/rocm.
    out.push(in_dir(roots.rocm.join("llvm/bin"), "ROCm default".into()));
    out.push(in_dir(
        roots.rocm.join("lib/llvm/bin"),
        "ROCm default".into(),
    ));

    // 6. versioned names, newest first.
    let path_dirs: Vec<PathBuf> = env(ENV_PATH)
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let on_path = |name: &str| -> Option<PathBuf> {
        path_dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
    };
    for major in (MIN_LLVM_MAJOR..=NEWEST_PROBED_MAJOR).rev() {
        let clang_name = format!("clang-{major}");
        let lld_name = format!("ld.lld-{major}");
        if let Some(clang) = on_path(&clang_name) {
            let lld = pinned_lld.clone().or_else(|| {
                let sibling = clang.with_file_name(&lld_name);
                Some(if sibling.is_file() {
                    sibling
                } else {
                    on_path(&lld_name).unwrap_or(sibling)
                })
            });
            out.push(Candidate {
                clang,
                lld,
                via: format!("PATH ({clang_name})"),
                explicit: false,
            });
        }
        let dir = roots.usr_lib.join(format!("llvm-{major}/bin"));
        if dir.join("clang").is_file() {
            out.push(in_dir(dir, format!("llvm-{major} install")));
        }
    }

    // 7. plain names on PATH.
    if let Some(clang) = on_path("clang") {
        let lld = pinned_lld.clone().or_else(|| {
            let sibling = clang.with_file_name("ld.lld");
            Some(if sibling.is_file() {
                sibling
            } else {
                on_path("ld.lld").unwrap_or(sibling)
            })
        });
        out.push(Candidate {
            clang,
            lld,
            via: "PATH (clang)".into(),
            explicit: false,
        });
    }
    out
}

/// [`probe`], answered from the [`ProbeCache`] at `cache` when the tools
/// are the files it remembers; a successful probe is remembered there
/// (with the `llvm-mc` check, done now instead of at the first assembly).
/// Rejections are not remembered.
fn probe_cached(
    c: &Candidate,
    timeout: Duration,
    cache: Option<&Path>,
) -> Result<Toolchain, String> {
    let Some(cache) = cache else {
        return probe(c, timeout);
    };
    if !c.clang.is_file() {
        return Err("clang does not exist".into());
    }
    let lld = lld_of(c);
    let llvm_mc = llvm_mc_of(c);
    let identity = ProbeCache::identity(c, &lld, llvm_mc.as_deref());
    if let Some(id) = &identity {
        if let Some((version_text, mc_ok)) = ProbeCache::read(cache, id) {
            if let Some(version) = LlvmVersion::parse(&version_text) {
                let t = Toolchain {
                    clang: c.clang.clone(),
                    lld,
                    version,
                    version_text,
                    found_via: c.via.clone(),
                    timeout,
                    llvm_mc,
                };
                t.remember_assembler_mc(mc_ok);
                return Ok(t);
            }
        }
    }
    // Everything the cache remembers is probed at once (three processes
    // in parallel, not one after the other).
    let (t, mc) = std::thread::scope(|s| {
        let mc = s.spawn(|| llvm_mc.as_deref().and_then(|p| mc_version(p, timeout)));
        (probe(c, timeout), mc.join().ok().flatten())
    });
    let t = t?;
    let mc_ok = t.llvm_mc.is_some() && mc == Some(t.version);
    t.remember_assembler_mc(mc_ok);
    if let Some(id) = identity {
        ProbeCache::write(cache, &id, &t.version_text, mc_ok);
    }
    Ok(t)
}

/// The ld.lld of a candidate: the explicit one, else next to clang.
fn lld_of(c: &Candidate) -> PathBuf {
    c.lld
        .clone()
        .unwrap_or_else(|| c.clang.with_file_name("ld.lld"))
}

/// `llvm-mc` of the same installation as a candidate's clang: next to the
/// file clang resolves to.
fn llvm_mc_of(c: &Candidate) -> Option<PathBuf> {
    c.clang
        .canonicalize()
        .ok()
        .map(|real| real.with_file_name(format!("llvm-mc{}", std::env::consts::EXE_SUFFIX)))
        .filter(|p| p.is_file())
}

/// The LLVM version `llvm-mc --version` at `mc` reports, if it runs.
fn mc_version(mc: &Path, timeout: Duration) -> Option<LlvmVersion> {
    let job = format!("probing {}", mc.display());
    run_tool(
        process::tool_command(mc).arg("--version").env_clear(),
        &ToolRun {
            tool: "llvm-mc",
            job: &job,
            timeout,
        },
    )
    .ok()
    .filter(|o| o.status.success())
    .and_then(|o| {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let at = text.find("LLVM version ")?;
        LlvmVersion::parse(&format!("clang version {}", &text[at + 13..]))
    })
}

/// [`Toolchain::assembler_mc`]'s answers, per process, by path and
/// expected version (a `Toolchain` is a plain value that tests build by
/// hand, so the answer is kept here).
#[allow(clippy::type_complexity)]
static MC_CHECKED: std::sync::Mutex<BTreeMap<(PathBuf, LlvmVersion), bool>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Why a candidate was rejected, or the toolchain it gives.
fn probe(c: &Candidate, timeout: Duration) -> Result<Toolchain, String> {
    if !c.clang.is_file() {
        return Err("clang does not exist".into());
    }
    let probe_run = |flag: &str| {
        let job = format!("probing {}", c.clang.display());
        run_tool(
            process::tool_command(&c.clang).arg(flag).env_clear(),
            &ToolRun {
                tool: "clang",
                job: &job,
                timeout,
            },
        )
    };
    // `--version` and `-print-targets` run in parallel.
    let (out, amdgcn) = std::thread::scope(|s| {
        let amdgcn = s.spawn(|| lists_amdgcn(&probe_run));
        (probe_run("--version"), amdgcn.join().unwrap_or(false))
    });
    let out = out.map_err(|e| match e.failure {
        ToolFailure::TimedOut(t) => format!(
            "`clang --version` did not finish within {} (killed)",
            process::show_secs(t)
        ),
        f => format!("`clang --version` could not run: {}", failure_text(&f)),
    })?;
    if !out.status.success() {
        return Err(format!("`clang --version` failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version_text = text.lines().next().unwrap_or_default().trim().to_string();
    let version = LlvmVersion::parse(&text).ok_or_else(|| {
        format!("`clang --version` does not name a clang version: {version_text:?}")
    })?;
    if version.major < MIN_LLVM_MAJOR {
        return Err(format!(
            "LLVM {version} is too old (gcn-patch needs {MIN_LLVM_MAJOR} or newer)"
        ));
    }
    if !amdgcn {
        return Err("`clang -print-targets` does not list amdgcn (built without AMDGPU)".into());
    }
    let lld = lld_of(c);
    if !lld.is_file() {
        return Err(format!("no ld.lld at {}", lld.display()));
    }
    let llvm_mc = llvm_mc_of(c);
    Ok(Toolchain {
        clang: c.clang.clone(),
        lld,
        version,
        version_text,
        found_via: c.via.clone(),
        timeout,
        llvm_mc,
    })
}

fn failure_text(f: &ToolFailure) -> String {
    match f {
        ToolFailure::Spawn(e) | ToolFailure::Io(e) => e.to_string(),
        ToolFailure::TimedOut(t) => format!("timed out after {}", process::show_secs(*t)),
    }
}

fn lists_amdgcn(probe_run: &(dyn Fn(&str) -> Result<Output, ToolError> + Sync)) -> bool {
    ["-print-targets", "--print-targets"].iter().any(|flag| {
        probe_run(flag)
            .map(|o| {
                o.status.success()
                    && String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .any(|l| l.trim_start().starts_with("amdgcn"))
            })
            .unwrap_or(false)
    })
}

fn find_in(
    config: &ToolchainConfig,
    env: &dyn Fn(&str) -> Option<String>,
    roots: &SystemRoots,
) -> Result<Toolchain, Diagnostic> {
    let timeout = match config.timeout {
        Some(t) => t,
        None => match nonempty(env, ENV_TOOL_TIMEOUT) {
            Some(text) => process::parse_timeout(&text).map_err(|e| {
                Diagnostic::error(Code::InvalidEnvVar, format!("${ENV_TOOL_TIMEOUT}: {e}"))
                    .with_help(format!("set {ENV_TOOL_TIMEOUT} to a number of seconds, or unset it for the default ({})", process::show_secs(DEFAULT_TOOL_TIMEOUT)))
            })?,
            None => DEFAULT_TOOL_TIMEOUT,
        },
    };
    let mut rejected: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut stopped_at_explicit = None;
    for c in candidates(config, env, roots) {
        let key = (c.clang.clone(), c.lld.clone());
        if !seen.insert(key) {
            continue;
        }
        match probe_cached(&c, timeout, config.probe_cache.as_deref()) {
            Ok(t) => return Ok(t),
            Err(why) => {
                rejected.push(format!("{} ({}): {why}", c.clang.display(), c.via));
                if c.explicit {
                    stopped_at_explicit = Some(c.via.clone());
                    break;
                }
            }
        }
    }
    let mut d = match &stopped_at_explicit {
        Some(via) => Diagnostic::error(
            Code::ToolchainNotFound,
            format!("the clang set by {via} is not usable for AMDGPU"),
        ),
        None => Diagnostic::error(
            Code::ToolchainNotFound,
            "no clang + ld.lld with AMDGPU support found",
        ),
    };
    for r in rejected {
        d = d.with_note(format!("rejected {r}"));
    }
    if stopped_at_explicit.is_none() {
        let path = env(ENV_PATH).unwrap_or_default();
        d = d.with_note(format!(
            "searched in order: explicit settings, ${ENV_LLVM_BIN}, ${ENV_CLANG}, ${ENV_LD_LLD}, \
             ${ENV_CC_TARGET}, ${ENV_ROCM_PATH}/{{llvm,lib/llvm}}/bin, {rocm}/{{llvm,lib/llvm}}/bin, \
             clang-NN on PATH and {usr}/llvm-NN/bin (NN = {NEWEST_PROBED_MAJOR} down to {MIN_LLVM_MAJOR}), \
             clang on PATH; PATH was {path:?}",
            rocm = roots.rocm.display(),
            usr = roots.usr_lib.display(),
        ));
    }
    if stopped_at_explicit.is_some() {
        d = d.with_help("fix or unset that setting; explicit settings are never skipped");
    }
    Err(d
        .with_help(format!(
            "on Debian/Ubuntu: `apt-get install -y clang-22 lld-22 llvm-22` (Debian's packages or apt.llvm.org); \
             or install ROCm (its LLVM is /opt/rocm/llvm); LLVM {MIN_LLVM_MAJOR} or newer is needed"
        ))
        .with_help(format!(
            "or set {ENV_LLVM_BIN} to a directory holding `clang` and `ld.lld`"
        )))
}

/// The one `llvm-mc` command line: `mc` in the C locale (nothing else of the
/// environment reaches it), for `triple` and `target`'s processor, with
/// `features` as `--mattr`. Callers add what to make and where (the
/// assembler: an object from stdin to stdout; lift: encodings, descriptors).
pub fn llvm_mc_command(mc: &Path, triple: &str, target: &TargetId, features: &[String]) -> Command {
    let mut cmd = process::tool_command(mc);
    cmd.env_clear()
        .env("LC_ALL", "C")
        .env("LANG", "C")
        .arg(format!("--triple={triple}"))
        .arg(format!("--mcpu={}", target.processor.name));
    if !features.is_empty() {
        cmd.arg(format!("--mattr={}", features.join(",")));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_missing_tool_is_a_diagnostic_that_says_where_to_point() {
        let err = run_tool(
            &mut Command::new("/nonexistent/clang"),
            &ToolRun {
                tool: "clang",
                job: "for a test",
                timeout: Duration::from_secs(60),
            },
        )
        .unwrap_err();
        assert!(matches!(err.failure, ToolFailure::Spawn(_)), "{err}");
        let d = err.to_diagnostic();
        assert_eq!(d.code, Code::ToolFailed);
        assert!(d.render().contains("GCN_PATCH_LLVM_BIN"), "{}", d.render());
    }

    #[test]
    fn parses_versions() {
        let v = LlvmVersion::parse("Debian clang version 22.1.8 (1~deb12u1)\nTarget: x").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (22, 1, 8));
        let v = LlvmVersion::parse("AMD clang version 19.0.0git (https://x roc-6.4.0)").unwrap();
        assert_eq!(v.to_string(), "19.0.0");
        let v = LlvmVersion::parse("clang version 20").unwrap();
        assert_eq!(v.to_string(), "20.0.0");
        assert!(LlvmVersion::parse("gcc (Debian 12.2.0-14) 12.2.0").is_none());
    }

    #[test]
    fn nothing_found_lists_every_place_and_the_install_hint() {
        let empty = tempfile::tempdir().unwrap();
        let roots = SystemRoots {
            rocm: empty.path().join("rocm"),
            usr_lib: empty.path().join("usr/lib"),
        };
        let vars: HashMap<&str, String> = [
            ("PATH", empty.path().display().to_string()),
            (
                "ROCM_PATH",
                empty.path().join("myrocm").display().to_string(),
            ),
        ]
        .into();
        let err = find_in(
            &ToolchainConfig::default(),
            &|k| vars.get(k).cloned(),
            &roots,
        )
        .unwrap_err()
        .render()
        .replace(&empty.path().display().to_string(), "[TMP]");
        insta::assert_snapshot!(err);
    }

    #[test]
    fn version_rejection_is_explained() {
        let c = Candidate {
            clang: PathBuf::from("/nonexistent/clang"),
            lld: None,
            via: "test".into(),
            explicit: false,
        };
        assert_eq!(
            probe(&c, DEFAULT_TOOL_TIMEOUT).unwrap_err(),
            "clang does not exist"
        );
    }
}
