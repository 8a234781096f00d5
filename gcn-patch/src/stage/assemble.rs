//! Assemble stage: `.s` → `.o` with clang (or `llvm-mc` of the same LLVM,
//! see [`assemble_bytes`]), run directly through the toolchain's bounded
//! runner ([`Toolchain::run`]).
//!
//! The command is fixed ([`clang_command`]) and its environment holds nothing
//! of the process environment. Earlier releases went through the `cc` crate;
//! cc spawns and waits for clang itself, with no time limit and no way to kill
//! it, and clang-22 never returns on some malformed input, so the assembler is
//! run here instead (same flags, byte-identical objects). clang's stderr
//! (`file:line:col: error: ...`) is parsed and mapped back through the
//! [`Document`] origins to the file and line the user wrote (a dump line, a
//! patch hunk, a rule).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::base::document::Document;
use crate::stage::toolchain::ToolDiagnostic as _;
use crate::stage::toolchain::Toolchain;
use gcn_embed::TargetId;

/// The LLVM target triple of AMDGPU code objects.
pub const TRIPLE: &str = "amdgcn-amd-amdhsa";

/// Start of the note counting follow-on errors.
const FOLLOW_ON: &str = "follow-on errors";

/// Errors shown per assembly, at most (the rest are counted).
const MAX_ERRORS: usize = 20;

/// What to assemble, and for what.
#[derive(Debug, Clone, Copy)]
pub struct AssembleRequest<'a> {
    /// The toolchain (clang) to use.
    pub toolchain: &'a Toolchain,
    /// The assembly, with the origin of each line.
    pub asm: &'a Document,
    /// The target, passed as `-mcpu=<target.name()>`.
    pub target: &'a TargetId,
    /// Directory of the object [`assemble`] writes, `<name>.o` (created if
    /// missing); [`assemble_bytes`] writes nothing.
    pub work_dir: &'a Path,
    /// Kernel/job name, used for the file names.
    pub name: &'a str,
    /// What is being built, for messages, e.g. "kernel `matmul` for gfx950".
    pub label: &'a str,
}

/// Assemble `asm` to the object file `<work_dir>/<name>.o` (for callers that
/// want a file; builds use [`assemble_bytes`], which this wraps).
///
/// The object depends only on the text, the target and the toolchain, not on
/// `work_dir` or on the process environment. The assembler runs through
/// [`Toolchain::run`]: bounded by the toolchain's time limit, killed with its
/// process group on timeout or interrupt. The object is written to a
/// temporary file renamed to `<name>.o` only on success, so a failed, killed
/// or timed-out run leaves no object behind (and a stale one is removed).
pub fn assemble(req: &AssembleRequest) -> Result<PathBuf, Diagnostics> {
    check_name(req)?;
    let obj = req.work_dir.join(format!("{}.o", req.name));
    // A stale object must never be taken for this run's output.
    let _ = std::fs::remove_file(&obj);
    let bytes = assemble_bytes(req)?;
    std::fs::create_dir_all(req.work_dir).map_err(|e| {
        Diagnostic::error(
            Code::CreateDirFailed,
            format!(
                "cannot create work directory {}: {e}",
                req.work_dir.display()
            ),
        )
    })?;
    crate::base::output::write_atomic_unsynced(&obj, &bytes).map_err(|e| {
        Diagnostic::error(
            Code::WriteFailed,
            format!("cannot write {}: {e}", obj.display()),
        )
    })?;
    Ok(obj)
}

/// Assemble `asm` in memory: clang reads it from stdin and writes the object
/// to stdout, so no file is written (`work_dir` is not used). The command is
/// [`clang_command`]'s with `-` for the input and the output, and the main
/// file name `<name>.s`: the object is byte-identical to the one the clang
/// driver writes for that file (compared on every corpus dump and on
/// `.file`/`.loc` debug lines). clang's or llvm-mc's errors are mapped back to
/// the user's lines.
///
/// Files cost: a build used to write the `.s`, clang its `.o` through a
/// temporary file and a rename, per job; creating and deleting those inodes
/// was several percent of a cold build's CPU time.
pub fn assemble_bytes(req: &AssembleRequest) -> Result<Vec<u8>, Diagnostics> {
    check_name(req)?;
    let src_name = format!("{}.s", req.name);
    let stdio = OsStr::new("-");
    let (mut cmd, tool) = match req.toolchain.assembler_mc() {
        Some(mc) => (
            mc_command(
                mc,
                req.target,
                &asm_features(req.target, req.asm),
                &src_name,
            ),
            "llvm-mc",
        ),
        None => (
            cc1as_command(
                req.toolchain,
                req.target,
                &asm_features(req.target, req.asm),
                OsStr::new(&src_name),
                stdio,
                stdio,
            ),
            "clang",
        ),
    };
    let job = format!("assembling {}", req.label);
    let output = req
        .toolchain
        .run_with_input(&mut cmd, tool, &job, Some(req.asm.print().as_bytes()))
        .map_err(|e| e.to_diagnostic())?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(map_errors(
            req,
            &src_name,
            &stderr,
            &format!("{}", output.status),
            (tool, &crate::stage::toolchain::process::command_line(&cmd)),
        ));
    }
    if output.stdout.is_empty() {
        return Err(Diagnostic::error(
            Code::NoOutputWritten,
            format!("{tool} wrote no object assembling {}", req.label),
        )
        .with_note(format!(
            "command: {}",
            crate::stage::toolchain::process::command_line(&cmd)
        ))
        .into());
    }
    Ok(output.stdout)
}

/// `llvm-mc` with the flags equivalent to [`clang_command`]'s `-cc1as` job
/// (`-target-cpu` → `-mcpu`, `-mrelocation-model pic` →
/// `--position-independent`, the same main file name, compilation
/// directory and DWARF version), reading stdin and writing stdout.
fn mc_command(mc: &Path, target: &TargetId, features: &[String], main_file: &str) -> Command {
    let mut cmd = crate::stage::toolchain::llvm_mc_command(mc, TRIPLE, target, features);
    cmd.args(["--filetype=obj", "--position-independent"])
        .arg(format!("--main-file-name={main_file}"))
        .args([
            "--fdebug-compilation-dir=.",
            "--dwarf-version=5",
            "-o",
            "-",
            "-",
        ]);
    cmd
}

/// The assembler command: clang's integrated assembler called directly,
/// `clang -cc1as -triple amdgcn-amd-amdhsa -filetype obj -main-file-name <src
/// name> -target-cpu <target> -mrelocation-model pic -dwarf-version=5
/// -fdebug-compilation-dir=. -o <obj> <src>` — the job the driver
/// (`clang -x assembler --target=amdgcn-amd-amdhsa -mcpu=<target> -c`, the
/// command `cc` used to build) hands to `-cc1as`, as `clang -###` shows, so
/// objects are byte-identical to the driver's (the identity tests compare
/// them with the original compilers' objects). Skipping the driver halves the
/// assembler's time per job (measured: 142 → 82 ms on the HIP reduce dump;
/// the driver probes for ROCm installations on every AMDGPU run). `llvm-mc`
/// of the same LLVM is faster still and byte-identical, and
/// [`assemble_bytes`] (what builds use) prefers it when it sits next to clang
/// (see [`Toolchain::assembler_mc`]); clang stays the assembler the toolchain
/// is found and pinned by, and the fallback. The compilation directory
/// is `.` rather than the driver's current directory, so that a dump with
/// `.file`/`.loc` debug lines assembles to the same bytes in any checkout.
///
/// The environment holds only `LC_ALL=C`/`LANG=C`: a host `CC`,
/// `CFLAGS=-march=native`, `CCC_*`, `CPATH` and the like can not reach the
/// AMDGPU assembler, and messages are the English ones parsed here.
pub fn clang_command(toolchain: &Toolchain, target: &TargetId, src: &Path, obj: &Path) -> Command {
    let main_file = src.file_name().unwrap_or(src.as_os_str());
    cc1as_command(
        toolchain,
        target,
        &target_features(target),
        main_file,
        obj.as_os_str(),
        src.as_os_str(),
    )
}

/// [`clang_command`] with the main file name given apart from the input
/// (`-` reads stdin; `-o -` writes stdout).
fn cc1as_command(
    toolchain: &Toolchain,
    target: &TargetId,
    features: &[String],
    main_file: &OsStr,
    obj: &OsStr,
    src: &OsStr,
) -> Command {
    let mut cmd = crate::stage::toolchain::process::tool_command(&toolchain.clang);
    cmd.env_clear()
        .env("LC_ALL", "C")
        .env("LANG", "C")
        .args([
            "-cc1as",
            "-triple",
            TRIPLE,
            "-filetype",
            "obj",
            "-main-file-name",
        ])
        .arg(main_file)
        .arg("-target-cpu")
        .arg(target.processor.name);
    // `-mcpu=gfx90a:xnack+` reaches -cc1as as `-target-cpu gfx90a
    // -target-feature +xnack`: the processor alone is not a CPU name.
    for f in features {
        cmd.arg("-target-feature").arg(f);
    }
    cmd.args([
        "-mrelocation-model",
        "pic",
        "-dwarf-version=5",
        "-fdebug-compilation-dir=.",
        "-o",
    ])
    .arg(obj)
    .arg(src);
    cmd
}

/// The target ID's pinned features as LLVM subtarget features, in target ID
/// order: `gfx90a:sramecc-:xnack+` → `["-sramecc", "+xnack"]`.
pub fn target_features(target: &TargetId) -> Vec<String> {
    [("sramecc", target.sramecc), ("xnack", target.xnack)]
        .into_iter()
        .filter(|(_, f)| f.is_pinned())
        .map(|(name, f)| format!("{}{name}", f.sign()))
        .collect()
}

/// The subtarget features `asm` is assembled with for `target`: the
/// target ID's ([`target_features`]) and, on gfx11 and gfx12, `+real-true16`
/// when an instruction names a 16-bit register half (`v1.l`, `v1.h`), the
/// True16 syntax Triton's LLVM emits for gfx1201. LLVM 22 accepts that
/// syntax only with the feature ("instruction not supported on this GPU"
/// without it); dumps in the 32-bit register syntax keep the default.
pub fn asm_features(target: &TargetId, asm: &Document) -> Vec<String> {
    let mut f = target_features(target);
    if has_true16(target) && uses_true16(asm) {
        f.push(REAL_TRUE16.into());
    }
    f
}

/// The LLVM feature of gfx11/gfx12 True16 instructions.
pub const REAL_TRUE16: &str = "+real-true16";

/// Whether `target` has True16 instructions (gfx11, gfx12).
pub fn has_true16(target: &TargetId) -> bool {
    let name = target.processor.name;
    name.starts_with("gfx11") || name.starts_with("gfx12")
}

/// Whether an instruction of `asm` names a 16-bit register half.
fn uses_true16(asm: &Document) -> bool {
    asm.lines().iter().any(|l| {
        l.instruction()
            .is_some_and(|i| i.registers().any(|r| r.half.is_some()))
    })
}

fn check_name(req: &AssembleRequest) -> Result<(), Diagnostic> {
    let ok = !req.name.is_empty()
        && req
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
        && !req.name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Diagnostic::error(
            Code::InvalidJobName,
            format!(
                "invalid job name {:?} for {}: it names files in the work directory",
                req.name, req.label
            ),
        )
        .with_help("use letters, digits, `_`, `-`, `+` and `.` only"))
    }
}

/// One `file:line:col: error: msg` of clang.
#[derive(Debug)]
struct ClangMessage {
    file: String,
    line: usize,
    column: usize,
    kind: String,
    message: String,
    /// Length of clang's `^~~~` marker, when it printed one.
    span: usize,
}

fn parse_messages(stderr: &str) -> Vec<ClangMessage> {
    let re = Regex::new(r"^(.+?):(\d+):(\d+): (error|warning|note): (.*)$").expect("valid regex");
    let lines: Vec<&str> = stderr.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(c) = re.captures(l) else { continue };
        let (Ok(line), Ok(column)) = (c[2].parse(), c[3].parse()) else {
            continue;
        };
        // Clang follows a message with the source line and a caret line.
        let span = lines
            .get(i + 2)
            .map(|caret| caret.trim())
            .filter(|caret| {
                caret.starts_with('^') && caret.chars().all(|ch| ch == '^' || ch == '~')
            })
            .map_or(0, |caret| caret.chars().count());
        out.push(ClangMessage {
            file: c[1].to_string(),
            line,
            column,
            kind: c[4].to_string(),
            message: c[5].to_string(),
            span,
        });
    }
    out
}

fn is_unsupported(msg: &str) -> bool {
    msg.contains("not supported on this GPU")
        || msg.contains("instruction not supported")
        || msg.contains("requires a different GPU")
        || msg.contains("not available on this GPU")
        || msg.contains("not valid for this GPU")
        || msg.contains("directive requires gfx")
}

/// Diagnostic `d` at 1-based line `line`, column `column` (`span`
/// characters) of the assembled text, located at the line's origin
/// ([`Document::locate`]).
fn locate(
    req: &AssembleRequest,
    d: Diagnostic,
    line: usize,
    column: usize,
    span: usize,
    label: String,
) -> Diagnostic {
    let n = req.asm.len();
    // clang reports a missing closing directive one line past the end: show
    // the last line of the input instead of the temp file.
    let (line, column, span) = if line > n && n > 0 {
        (n, 1, 0)
    } else {
        (line, column, span)
    };
    let i = line.saturating_sub(1);
    let d = req.asm.locate(d, i, None, label);
    // A `+` line of a patch is shown with its `+`, one column to the right.
    let shift = usize::from(matches!(
        req.asm.origin(i),
        Some(crate::base::provenance::Origin::Patch { .. })
    ));
    let mut d = d;
    if let Some(loc) = d.location.take() {
        d.location = Some(Box::new(loc.with_span(column + shift, span)));
    }
    d
}

/// `ran`: the tool's short name and its command line.
fn map_errors(
    req: &AssembleRequest,
    src_name: &str,
    stderr: &str,
    status: &str,
    ran: (&str, &str),
) -> Diagnostics {
    let (tool, command) = ran;
    let messages = parse_messages(stderr);
    // `<stdin>` when the asm was piped in (`assemble_bytes`).
    let ours = |m: &ClangMessage| {
        m.file == "<stdin>" || Path::new(&m.file).file_name() == Some(src_name.as_ref())
    };
    let errors: Vec<&ClangMessage> = messages
        .iter()
        .filter(|m| m.kind == "error" && ours(m))
        .collect();
    if errors.is_empty() {
        let mut d = Diagnostic::error(
            Code::AssemblerCrashed,
            format!("{tool} failed while assembling {} ({status})", req.label),
        );
        for l in stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(MAX_ERRORS)
        {
            d = d.with_note(l.to_string());
        }
        let target = req.target.name();
        let reproduce = format!(
            "write the job's asm with `gcn-patch apply KERNEL --target {target} > k.s` and run \
             `{} -x assembler --target=amdgcn-amd-amdhsa -mcpu={target} -c k.s` to reproduce",
            req.toolchain.clang.display(),
        );
        let help = if status.contains("signal") {
            format!(
                "{tool} crashed: a bug or a resource limit of this LLVM, not an error in \
                 the asm it could report; {reproduce} (and report it to LLVM), or try \
                 another LLVM with GCN_PATCH_LLVM_BIN"
            )
        } else {
            format!("{tool} failed without an error for the asm: {reproduce}")
        };
        return d
            .with_note(format!("command: {command}"))
            .with_help(help)
            .into();
    }
    let mut out = Vec::new();
    let unsupported: Vec<&&ClangMessage> = errors
        .iter()
        .filter(|m| is_unsupported(&m.message))
        .collect();
    if let Some(first) = unsupported.first() {
        let located = locate(
            req,
            Diagnostic::error(Code::UnsupportedInstruction, ""),
            first.line,
            first.column,
            first.span,
            first.message.clone(),
        );
        // The label usually names the target already ("kernel `k` for gfx1100").
        let target_name = req.target.name();
        let for_target = if req.label.contains(&target_name) {
            String::new()
        } else {
            format!(" for {target_name}")
        };
        let at = located
            .location
            .as_ref()
            .map(|l| format!("{}:{}", l.file.display(), l.line))
            .unwrap_or_default();
        let mut d = Diagnostic {
            message: format!(
                "{}{for_target} does not assemble: first unsupported instruction at {at}",
                req.label,
            ),
            ..located
        };
        if unsupported.len() > 1 {
            d = d.with_note(format!(
                "{} more lines use instructions or directives {} does not support",
                unsupported.len() - 1,
                req.target.name()
            ));
        }
        out.push(d.with_help(format!(
            "this code uses instructions {} does not have: use a source dumped for that \
             architecture family (or a family-specific patch), or drop {} from this kernel's targets",
            req.target.processor.name,
            req.target.name()
        )));
    }
    let others: Vec<&&ClangMessage> = errors
        .iter()
        .filter(|m| !is_unsupported(&m.message))
        .collect();
    let text_of =
        |line: usize| -> &str { line.checked_sub(1).map_or("", |i| req.asm.text(i).trim()) };
    let mut shown = 0usize;
    let mut hidden = 0usize;
    for m in &others {
        // After one bad `.amdhsa_*` line clang stops parsing the block and
        // reports every later line of it as an "unknown directive".
        let t = text_of(m.line);
        let follow_on = m.message == "unknown directive"
            && (t.starts_with(".amdhsa_") || t.starts_with(".end_amdhsa_kernel"))
            && !out.is_empty();
        if follow_on {
            if let Some(last) = out.last_mut() {
                last.notes.retain(|n| !n.starts_with(FOLLOW_ON));
                hidden += 1;
                last.notes.push(format!(
                    "{FOLLOW_ON}: clang then reported {hidden} later line(s) of the \
                     `.amdhsa_kernel` block as `unknown directive`"
                ));
            }
            continue;
        }
        if shown == MAX_ERRORS {
            shown += 1;
            continue;
        }
        shown += 1;
        let mut d = locate(
            req,
            Diagnostic::error(
                Code::AssemblerError,
                format!("assembler error in {}: {}", req.label, m.message),
            ),
            m.line,
            m.column,
            m.span,
            m.message.clone(),
        );
        d = d.with_note(format!("assembled for {}", req.target.name()));
        if m.message.contains("does not match the specified target id") {
            d = d.with_help(format!(
                "the source's `.amdgcn_target` names another target: retarget it to {} \
                 (or assemble it for the target it names)",
                req.target.name()
            ));
        }
        if t.contains("instprefsize(") {
            d = d.with_help(format!(
                "`instprefsize(...)` is newer LLVM syntax (IREE 3.13 dumps come from LLVM 24) that \
                 this clang ({}) cannot parse: normalize the source for this toolchain \
                 (retarget) or use a newer clang",
                req.toolchain.version
            ));
        }
        if m.message.contains("not found") && m.message.contains(".end_") {
            d = d.with_help(
                "a block is not closed before the end of the input: the file is probably \
                 truncated; pass the complete dump",
            );
        }
        out.push(d);
    }
    if shown > MAX_ERRORS {
        out.push(Diagnostic::note(
            Code::AssemblerError,
            format!(
                "{} more assembler errors in {} not shown",
                shown - MAX_ERRORS,
                req.label
            ),
        ));
    }
    Diagnostics(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::toolchain::ToolchainConfig;

    fn toolchain() -> Toolchain {
        let path = "/usr/bin:/bin".to_string();
        Toolchain::find(&ToolchainConfig::default(), &|k| {
            (k == "PATH").then(|| path.clone())
        })
        .unwrap_or_else(|d| panic!("{d}\n(apt-get install -y clang-22 lld-22 llvm-22)"))
    }

    /// True16 code (`v1.l`) assembles for gfx1201 with both assemblers, and
    /// only code naming a 16-bit half gets `+real-true16`.
    #[test]
    fn true16_operands_assemble_with_real_true16() {
        let tc = toolchain();
        let t16 = Document::from_source(
            "\t.text\nk:\n\tv_mov_b16_e32 v1.l, 0\n\tv_add_f16_e32 v2.h, v1.l, v3.l\n\ts_endpgm\n",
            "t16.s",
        );
        let plain = Document::from_source(
            "\t.text\nk:\n\tv_mov_b32_e32 v1, 0 ; v1.l\n\ts_endpgm\n",
            "p.s",
        );
        for (target, doc, want) in [
            ("gfx1201", &t16, true),
            ("gfx1100", &t16, true),
            ("gfx1201", &plain, false),
            ("gfx942", &t16, false),
        ] {
            let target = TargetId::parse(target).unwrap();
            let f = asm_features(&target, doc);
            assert_eq!(f.iter().any(|f| f == REAL_TRUE16), want, "{target:?}");
        }
        let target = TargetId::parse("gfx1201").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let req = AssembleRequest {
            toolchain: &tc,
            asm: &t16,
            target: &target,
            work_dir: dir.path(),
            name: "t16",
            label: "t16",
        };
        assemble_bytes(&req).unwrap_or_else(|d| panic!("llvm-mc: {d}"));
        let mut cmd = cc1as_command(
            &tc,
            &target,
            &asm_features(&target, &t16),
            OsStr::new("t16.s"),
            OsStr::new("-"),
            OsStr::new("-"),
        );
        let out = tc
            .run_with_input(&mut cmd, "clang", "t16", Some(t16.print().as_bytes()))
            .unwrap();
        assert!(
            out.status.success(),
            "clang: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn the_assembler_sees_no_host_environment() {
        let tc = toolchain();
        let target = TargetId::parse("gfx942").unwrap();
        let cmd = clang_command(&tc, &target, Path::new("x.s"), Path::new("x.o"));
        // The tool's own arguments (without the `setpriv` wrapper).
        let args: Vec<String> = crate::stage::toolchain::process::tool_and_args(&cmd)
            .1
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-cc1as",
                "-triple",
                "amdgcn-amd-amdhsa",
                "-filetype",
                "obj",
                "-main-file-name",
                "x.s",
                "-target-cpu",
                "gfx942",
                "-mrelocation-model",
                "pic",
                "-dwarf-version=5",
                "-fdebug-compilation-dir=.",
                "-o",
                "x.o",
                "x.s"
            ]
        );
        // `env_clear` plus exactly these: nothing of the host (CC, CFLAGS,
        // CCC_*, CPATH...) reaches clang.
        let envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        assert_eq!(
            envs,
            [
                ("LANG".to_string(), Some("C".to_string())),
                ("LC_ALL".to_string(), Some("C".to_string()))
            ]
        );
        // The command really clears the environment: a child sees only those.
        let mut probe = Command::new("env");
        probe.env_clear().env("LC_ALL", "C").env("LANG", "C");
        let out = tc.run(&mut probe, "env", "test").unwrap();
        let mut seen: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        seen.sort();
        assert_eq!(seen, ["LANG=C", "LC_ALL=C"]);
    }

    #[test]
    fn an_unterminated_string_cannot_hang_the_build() {
        // clang-22 never returns on this input; the time limit ends it, the
        // error names the tool and the job, and no object is left.
        let mut tc = toolchain();
        tc.timeout = std::time::Duration::from_secs(2);
        let target = TargetId::parse("gfx942").unwrap();
        let asm = Document::from_source(
            "\ts_and_saveexec_b64 s[2:3], vcc\"\n\t.ident\t\"Debian clang version 22.1.8 (1~deb12u1)\"\n",
            "x.s",
        );
        let dir = tempfile::tempdir().unwrap();
        let req = AssembleRequest {
            toolchain: &tc,
            asm: &asm,
            target: &target,
            work_dir: dir.path(),
            name: "x",
            label: "kernel `k` for gfx942",
        };
        let err = assemble(&req).unwrap_err();
        // llvm-mc of the same LLVM assembles when it sits next to clang; it
        // hangs on this input too.
        let tool = if tc.assembler_mc().is_some() {
            "llvm-mc"
        } else {
            "clang"
        };
        assert_eq!(
            err.0[0].message,
            format!(
                "{tool} did not finish within 2 s assembling kernel `k` for gfx942 and was killed"
            )
        );
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "nothing is left: {left:?}");
    }

    #[test]
    fn clang_errors_are_mapped_to_lines() {
        let tc = toolchain();
        let target = TargetId::parse("gfx942").unwrap();
        let asm = Document::from_source("s_endpgm\nv_bogus v0\n", "x.s");
        let dir = tempfile::tempdir().unwrap();
        let req = AssembleRequest {
            toolchain: &tc,
            asm: &asm,
            target: &target,
            work_dir: dir.path(),
            name: "x",
            label: "test",
        };
        let err = assemble(&req).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        let loc = err.0[0].location.as_ref().unwrap();
        assert_eq!((loc.file.to_str(), loc.line), (Some("x.s"), 2));
        assert!(err.0[0].message.contains("invalid instruction"), "{err}");
        assert!(!dir.path().join("x.o").exists());
    }

    #[test]
    fn parses_clang_messages() {
        let m = parse_messages(
            "k.s:12:2: error: instruction not supported on this GPU (gfx1100): v_mfma\n\tv_mfma\n\t^\n",
        );
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].line, m[0].column, m[0].span), (12, 2, 1));
        assert!(is_unsupported(&m[0].message));
    }
}
