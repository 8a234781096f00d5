//! Assemble stage: `.s` → `.o` with clang, through the `cc` crate.
//!
//! The clang command is built by `cc` (so compiler/flag handling is cc's), with
//! `no_default_flags`, no warnings flags, no Cargo metadata and every Cargo
//! variable set explicitly, and with an environment snapshot that holds none of
//! the process environment: a host `CC`, `CFLAGS=-march=native`,
//! `CFLAGS_<target>` and the like can not reach the AMDGPU assembler.
//!
//! cc runs clang itself ([`cc::Build::try_compile_intermediates`]). Its error
//! only says "command did not execute successfully"; clang's stderr would go
//! to stdout as `cargo:warning=` lines (or to /dev/null with
//! `cargo_warnings(false)`), so it is collected with a
//! [`cc::BuildMessageLogger`] ([`cc::Build::message_logger`], lines of kind
//! `StderrForwarding`) and parsed. Errors are mapped back through the
//! [`Document`] origins to the file and line the user wrote (a dump line, a
//! patch hunk, a rule).

// `Diagnostic` is the error type of every stage (see `diag`); it is large by design.
#![allow(clippy::result_large_err)]

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use regex::Regex;

use crate::diag::{Diagnostic, Diagnostics};
use crate::document::Document;
use crate::toolchain::Toolchain;
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
    /// Directory for `<name>.s` and `<name>.o` (created if missing).
    pub work_dir: &'a Path,
    /// Kernel/job name, used for the file names.
    pub name: &'a str,
    /// What is being built, for messages, e.g. "kernel `matmul` for gfx950".
    pub label: &'a str,
}

/// Write `asm` to `<work_dir>/<name>.s` and assemble it to `<work_dir>/<name>.o`.
///
/// The object depends only on the text, the target and the toolchain, not on
/// `work_dir` or on the process environment.
pub fn assemble(req: &AssembleRequest) -> Result<PathBuf, Diagnostics> {
    assemble_with_env(req, &[])
}

/// [`assemble`], with `env` as the environment `cc` sees before filtering
/// (for tests: it shows that the filter is what keeps `CFLAGS` out).
pub(crate) fn assemble_with_env(
    req: &AssembleRequest,
    env: &[(String, String)],
) -> Result<PathBuf, Diagnostics> {
    check_name(req)?;
    std::fs::create_dir_all(req.work_dir).map_err(|e| {
        Diagnostic::error(format!(
            "cannot create work directory {}: {e}",
            req.work_dir.display()
        ))
    })?;
    let src_name = format!("{}.s", req.name);
    let src = req.work_dir.join(&src_name);
    let obj = req.work_dir.join(format!("{}.o", req.name));
    write_atomic(&src, req.asm.print().as_bytes())?;
    // A stale object must never be taken for this run's output.
    let _ = std::fs::remove_file(&obj);

    let run = run_cc(req, &filtered_env(env), &src)?;
    let Some(cc_obj) = run.object else {
        return Err(map_errors(req, &src_name, &run.stderr, &run.failure));
    };
    std::fs::rename(&cc_obj, &obj)
        .map_err(|e| Diagnostic::error(format!("cannot write {}: {e}", obj.display())))?;
    Ok(obj)
}

/// What cc reported while assembling.
#[derive(Debug, Default)]
pub(crate) struct CcRun {
    /// The object cc wrote, on success.
    pub object: Option<PathBuf>,
    /// clang's stderr, one line each, as forwarded by cc.
    pub stderr: String,
    /// The compile command lines cc logged.
    pub commands: Vec<String>,
    /// cc's error, on failure.
    pub failure: String,
}

/// Collects cc's messages.
#[derive(Default)]
struct Messages(Mutex<Vec<(cc::BuildMessageKind, String)>>);

impl cc::BuildMessageLogger for Messages {
    fn log(&self, kind: cc::BuildMessageKind, msg: cc::BuildMessage<'_>, _extra: &dyn Any) {
        if let Ok(mut m) = self.0.lock() {
            m.push((kind, msg.to_string()));
        }
    }
}

/// Assemble `src` (absolute) with cc, seeing `env_snapshot` as the whole environment.
pub(crate) fn run_cc(
    req: &AssembleRequest,
    env_snapshot: &[(String, String)],
    src: &Path,
) -> Result<CcRun, Diagnostic> {
    let messages = Arc::new(Messages::default());
    let mut b = cc::Build::new();
    b.set_envs_snapshot(env_snapshot.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .compiler(&req.toolchain.clang)
        .no_default_flags(true)
        .warnings(false)
        .extra_warnings(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .emit_rerun_if_env_changed(false)
        .target(TRIPLE)
        .host(HOST)
        .opt_level(0)
        .debug(false)
        .out_dir(req.work_dir)
        .flag(format!("--target={TRIPLE}"))
        .flag(format!("-mcpu={}", req.target.name()))
        .file(src)
        .message_logger(Some(messages.clone()));
    let result = b.try_compile_intermediates();
    let logged = messages.0.lock().map(|m| m.clone()).unwrap_or_default();
    let mut run = CcRun::default();
    for (kind, text) in logged {
        match kind {
            cc::BuildMessageKind::StderrForwarding => {
                run.stderr.push_str(&text);
                run.stderr.push('\n');
            }
            cc::BuildMessageKind::CompileCommand => run.commands.push(text),
            _ => {}
        }
    }
    match result {
        Ok(objects) => match objects.into_iter().next() {
            Some(o) => run.object = Some(o),
            None => run.failure = "cc produced no object".into(),
        },
        Err(e) => {
            if run.stderr.is_empty() && run.commands.is_empty() {
                // cc failed before running clang (e.g. clang cannot be started).
                return Err(Diagnostic::error(format!(
                    "cannot assemble {} with {}: {e}",
                    req.label,
                    req.toolchain.clang.display()
                ))
                .with_help("check the toolchain: GCN_PATCH_LLVM_BIN / GCN_PATCH_CLANG"));
            }
            run.failure = e.to_string();
        }
    }
    Ok(run)
}

fn check_name(req: &AssembleRequest) -> Result<(), Diagnostic> {
    let ok = !req.name.is_empty()
        && req
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !req.name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Diagnostic::error(format!(
            "invalid job name {:?} for {}: it names files in the work directory",
            req.name, req.label
        ))
        .with_help("use letters, digits, `_`, `-` and `.` only"))
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    crate::output::write_atomic(path, bytes)
        .map_err(|e| Diagnostic::error(format!("cannot write {}: {e}", path.display())))
}

/// Keep only what clang may need from `env`: no compiler, flags or wrapper
/// variables (`CC*`, `CFLAGS*`, `CXXFLAGS*`, `CPPFLAGS*`, `ASMFLAGS*`,
/// `*_WRAPPER`, `CCC_*`, `CPATH`, ...); only the locale, forced to `C` so that
/// messages are the English ones parsed here.
pub(crate) fn filtered_env(_env: &[(String, String)]) -> Vec<(String, String)> {
    // Deliberately nothing from `_env`: the assembler needs no variable, and an
    // allow-list of zero entries is the only one that cannot leak.
    vec![("LC_ALL".into(), "C".into()), ("LANG".into(), "C".into())]
}

/// Any host triple: with `no_default_flags` and an explicit compiler, cc only
/// uses it to decide that this is not a cross-compiling MSVC/Apple setup.
const HOST: &str = "x86_64-unknown-linux-gnu";

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
        Some(crate::provenance::Origin::Patch { .. })
    ));
    let mut d = d;
    if let Some(loc) = d.location.take() {
        d.location = Some(loc.with_span(column + shift, span));
    }
    d
}

fn map_errors(req: &AssembleRequest, src_name: &str, stderr: &str, status: &str) -> Diagnostics {
    let messages = parse_messages(stderr);
    let ours = |m: &ClangMessage| Path::new(&m.file).file_name() == Some(src_name.as_ref());
    let errors: Vec<&ClangMessage> = messages
        .iter()
        .filter(|m| m.kind == "error" && ours(m))
        .collect();
    if errors.is_empty() {
        let mut d = Diagnostic::error(format!(
            "clang failed while assembling {} ({status})",
            req.label
        ));
        for l in stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(MAX_ERRORS)
        {
            d = d.with_note(l.to_string());
        }
        return d
            .with_note(format!(
                "command: {} {}",
                req.toolchain.clang.display(),
                src_name
            ))
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
            Diagnostic::error(""),
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
            Diagnostic::error(format!("assembler error in {}: {}", req.label, m.message)),
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
        out.push(Diagnostic::note(format!(
            "{} more assembler errors in {} not shown",
            shown - MAX_ERRORS,
            req.label
        )));
    }
    Diagnostics(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::ToolchainConfig;

    fn toolchain() -> Toolchain {
        let path = "/usr/bin:/bin".to_string();
        Toolchain::find(&ToolchainConfig::default(), &|k| {
            (k == "PATH").then(|| path.clone())
        })
        .unwrap_or_else(|d| panic!("{d}\n(apt-get install -y clang-22 lld-22 llvm-22)"))
    }

    #[test]
    fn cflags_in_the_environment_do_not_reach_clang() {
        let tc = toolchain();
        let target = TargetId::parse("gfx942").unwrap();
        let asm = Document::from_source("s_endpgm\n", "x.s");
        let dir = tempfile::tempdir().unwrap();
        let req = AssembleRequest {
            toolchain: &tc,
            asm: &asm,
            target: &target,
            work_dir: dir.path(),
            name: "x",
            label: "test",
        };
        let host_env: Vec<(String, String)> = [
            ("CFLAGS", "-march=native"),
            ("CFLAGS_amdgcn_amd_amdhsa", "-march=native"),
            ("TARGET_CFLAGS", "-march=native"),
            ("CC", "/bin/false"),
            ("CC_WRAPPER", "/bin/false"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        std::fs::create_dir_all(dir.path()).unwrap();
        let src = dir.path().join("x.s");
        std::fs::write(&src, "s_endpgm\n").unwrap();
        // Unfiltered, cc does pass them to clang (so the check below can fail;
        // clang ignores -march for amdgcn assembly)...
        let run = run_cc(&req, &host_env, &src).unwrap();
        assert!(run.object.is_some(), "{run:?}");
        assert_eq!(run.commands.len(), 1);
        assert!(run.commands[0].contains("-march=native"), "{run:?}");
        // ...filtered, cc does not.
        let run = run_cc(&req, &filtered_env(&host_env), &src).unwrap();
        assert!(run.object.is_some(), "{run:?}");
        let cmd = &run.commands[0];
        assert!(!cmd.contains("march"), "{cmd}");
        assert!(
            cmd.contains(r#" "-w" "--target=amdgcn-amd-amdhsa" "-mcpu=gfx942" "-o" "#),
            "{cmd}"
        );
        let obj = assemble_with_env(&req, &host_env).unwrap();
        assert!(obj.is_file());
    }

    #[test]
    fn clang_stderr_is_collected_through_cc() {
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
