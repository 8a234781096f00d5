//! Link stage: `.o` → `.hsaco` with `ld.lld -shared`.
//!
//! The command is what clang's AMDGPU driver runs for a device link, minus the
//! `-plugin-opt=...` flags (they only configure LTO of bitcode inputs, and
//! assembled objects hold none): `ld.lld --no-undefined -shared -o out in.o`.
//! ld.lld writes no build-id unless asked, and nothing in its output depends
//! on the output path or the working directory, so the same objects give the
//! same bytes anywhere. The output is written to a temporary file next to
//! `out` and renamed over it, so `out` is never left half-written.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use crate::stage::toolchain::ToolDiagnostic as _;
use crate::stage::toolchain::Toolchain;

/// The ld.lld arguments before `-o`.
pub const LINK_FLAGS: &[&str] = &["--no-undefined", "-shared"];

/// One linker thread: jobs already run in parallel, and ld.lld's default pool
/// (a thread per core) only costs thread start-up and synchronization on a
/// one-object link. The output does not depend on it (so it is not part of
/// a cache key).
const LINK_THREADS: &str = "--threads=1";

/// Link `objects` into the code object `out` (atomically).
pub fn link(toolchain: &Toolchain, objects: &[PathBuf], out: &Path) -> Result<(), Diagnostics> {
    if objects.is_empty() {
        return Err(Diagnostic::error(
            Code::NothingToLink,
            format!("nothing to link into {}: no object files", out.display()),
        )
        .into());
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        Diagnostic::error(
            Code::CreateDirFailed,
            format!("cannot create directory {}: {e}", dir.display()),
        )
        .with_help("the output's directory cannot be created: check the output path")
    })?;
    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Diagnostic::error(
                Code::InvalidOutputName,
                format!("{} is not a file name", out.display()),
            )
        })?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| {
            Diagnostic::error(
                Code::TempFileFailed,
                format!("cannot create a file in {}: {e}", dir.display()),
            )
        })?;
    let mut cmd = lld_command(toolchain, tmp.path(), objects);
    let job = format!("linking {}", out.display());
    let output = toolchain
        .run(&mut cmd, "ld.lld", &job)
        .map_err(|e| e.to_diagnostic())?;
    if !output.status.success() {
        let inputs: Vec<String> = objects.iter().map(|o| o.display().to_string()).collect();
        return Err(lld_errors(
            &String::from_utf8_lossy(&output.stderr),
            &output.status,
            &out.display().to_string(),
            &inputs,
        ));
    }
    // Through the output module: a symlink, device or FIFO named by `out`
    // is written through, never replaced.
    std::fs::read(tmp.path())
        .and_then(|bytes| crate::base::output::write_atomic(out, &bytes))
        .map_err(|e| {
            Diagnostic::error(
                Code::WriteFailed,
                format!("cannot write {}: {e}", out.display()),
            )
            .with_help("name a file (not a directory) in a writable directory for the output")
        })?;
    Ok(())
}

/// Link one object held in memory; the code object's bytes. ld.lld reads the
/// object from its stdin (`/dev/stdin`) and writes the code object to its
/// stdout (`-o -`): no file is written, and the bytes are the same as
/// [`link`]'s (compared on every corpus dump). `name` is the object as
/// messages call it (`saxpy-gfx942.o`); the code object is named after it.
///
/// Where there is no `/dev/stdin` (not Unix) the object goes through a
/// temporary file in `work_dir` ([`link_through_file`], the same bytes).
pub fn link_bytes(
    toolchain: &Toolchain,
    object: &[u8],
    name: &str,
    work_dir: &Path,
) -> Result<Vec<u8>, Diagnostics> {
    #[cfg(unix)]
    {
        let _ = work_dir;
        run_lld(toolchain, Path::new("/dev/stdin"), Some(object), name)
    }
    #[cfg(not(unix))]
    {
        link_through_file(toolchain, object, name, work_dir)
    }
}

/// [`link_bytes`] for systems without `/dev/stdin`: the object is written to
/// a temporary file in `work_dir` (created if missing), linked from there
/// and removed whatever happens; the code object still comes from ld.lld's
/// stdout. Built and tested on every system.
pub fn link_through_file(
    toolchain: &Toolchain,
    object: &[u8],
    name: &str,
    work_dir: &Path,
) -> Result<Vec<u8>, Diagnostics> {
    std::fs::create_dir_all(work_dir).map_err(|e| {
        Diagnostic::error(
            Code::CreateDirFailed,
            format!("cannot create directory {}: {e}", work_dir.display()),
        )
    })?;
    let file = tempfile::Builder::new()
        .suffix(".o")
        .tempfile_in(work_dir)
        .and_then(|mut f| {
            std::io::Write::write_all(&mut f, object)?;
            Ok(f)
        })
        .map_err(|e| {
            Diagnostic::error(
                Code::WriteFailed,
                format!("cannot write an object in {}: {e}", work_dir.display()),
            )
        })?;
    run_lld(toolchain, file.path(), None, name)
}

/// ld.lld on `input` (fed `stdin` when given), the code object from stdout;
/// errors name the object `name`, not `input`.
fn run_lld(
    toolchain: &Toolchain,
    input: &Path,
    stdin: Option<&[u8]>,
    name: &str,
) -> Result<Vec<u8>, Diagnostics> {
    let out_name = format!("{}.hsaco", name.strip_suffix(".o").unwrap_or(name));
    let mut cmd = lld_command(toolchain, Path::new("-"), [input]);
    let job = format!("linking {out_name}");
    let output = toolchain
        .run_with_input(&mut cmd, "ld.lld", &job, stdin)
        .map_err(|e| e.to_diagnostic())?;
    if !output.status.success() {
        let stderr =
            String::from_utf8_lossy(&output.stderr).replace(&*input.to_string_lossy(), name);
        return Err(lld_errors(
            &stderr,
            &output.status,
            &out_name,
            &[name.to_string()],
        ));
    }
    if output.stdout.is_empty() {
        return Err(Diagnostic::error(
            Code::NoOutputWritten,
            format!("ld.lld wrote no code object linking {out_name}"),
        )
        .into());
    }
    Ok(output.stdout)
}

/// The one ld.lld command line: [`LINK_THREADS`], [`LINK_FLAGS`], `-o out`
/// (`-` for stdout), the inputs; an environment with nothing of the host's.
fn lld_command(
    toolchain: &Toolchain,
    out: &Path,
    inputs: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
) -> Command {
    let mut cmd = crate::stage::toolchain::process::tool_command(&toolchain.lld);
    cmd.arg(LINK_THREADS)
        .args(LINK_FLAGS)
        .arg("-o")
        .arg(out)
        .args(inputs)
        .env_clear()
        .env("LC_ALL", "C");
    cmd
}

/// ld.lld's stderr as diagnostics, one per error line (`>>>` lines are notes).
fn lld_errors(
    stderr: &str,
    status: &std::process::ExitStatus,
    out: &str,
    inputs: &[String],
) -> Diagnostics {
    let mut diags: Vec<Diagnostic> = Vec::new();
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        // `>>> referenced by x.o:(.text+0x8)` continues the previous error.
        if let Some(more) = line.trim_start().strip_prefix(">>>") {
            if let Some(last) = diags.last_mut() {
                last.notes.push(more.trim().to_string());
                continue;
            }
        }
        let msg = line
            .split_once("error: ")
            .map(|(_, m)| m)
            .unwrap_or(line)
            .to_string();
        let mut d = Diagnostic::error(
            Code::LinkFailed,
            format!("ld.lld failed linking {}: {msg}", out),
        );
        if msg.contains("undefined symbol") {
            d = d.with_help(
                "a kernel references a symbol no object defines: check that the patch did \
                 not rename or drop a label, and that every object of the code object is linked",
            );
        }
        diags.push(d);
    }
    if diags.is_empty() {
        diags.push(Diagnostic::error(
            Code::LinkFailed,
            format!("ld.lld failed linking {} ({})", out, status),
        ));
    }
    if let Some(first) = diags.first_mut() {
        first.notes.push(format!("inputs: {}", inputs.join(", ")));
    }
    Diagnostics(diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::document::Document;
    use crate::stage::assemble::{assemble_bytes, AssembleRequest};
    use crate::stage::toolchain::ToolchainConfig;
    use gcn_embed::TargetId;

    fn toolchain() -> Toolchain {
        Toolchain::find(&ToolchainConfig::default(), &|k| std::env::var(k).ok())
            .unwrap_or_else(|d| panic!("{d}\n(apt-get install -y clang-22 lld-22 llvm-22)"))
    }

    /// The file fallback (the only path on systems without `/dev/stdin`)
    /// gives the same code object as the in-memory link, leaves no file,
    /// and names the object, not its temporary file, in errors.
    #[test]
    fn the_file_fallback_links_the_same_bytes() {
        let tc = toolchain();
        let dump = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/hip/gfx942/saxpy.s");
        let text = std::fs::read_to_string(&dump).expect("corpus dump (tests/corpus)");
        let asm = Document::from_source(&text, "saxpy.s");
        let target = TargetId::parse("gfx942").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let object = assemble_bytes(&AssembleRequest {
            toolchain: &tc,
            asm: &asm,
            target: &target,
            work_dir: dir.path(),
            name: "saxpy",
            label: "kernel `saxpy` for gfx942",
        })
        .unwrap_or_else(|d| panic!("{d}"));
        let work = dir.path().join("work");
        let in_memory =
            link_bytes(&tc, &object, "saxpy.o", &work).unwrap_or_else(|d| panic!("{d}"));
        let through_file =
            link_through_file(&tc, &object, "saxpy.o", &work).unwrap_or_else(|d| panic!("{d}"));
        assert!(in_memory == through_file, "the two links differ");
        assert_eq!(&through_file[..4], b"\x7fELF");
        assert_eq!(
            std::fs::read_dir(&work).unwrap().count(),
            0,
            "temp file left"
        );

        let err = link_through_file(&tc, b"not an object", "bad.o", &work).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("bad.o"), "{shown}");
        assert!(
            !shown.contains(&*work.to_string_lossy()),
            "temp path shown: {shown}"
        );
        assert_eq!(
            std::fs::read_dir(&work).unwrap().count(),
            0,
            "temp file left"
        );
    }
}
