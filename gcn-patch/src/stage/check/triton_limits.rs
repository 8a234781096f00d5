//! The Triton limits check: a patched Triton kernel must still fit the
//! launch Triton will do with the metadata it computed before the asm stage.
//!
//! Triton launches `<kernel>` with `num_warps × warp_size` threads per
//! workgroup, `shared` bytes of LDS and a kernel-argument buffer laid out
//! from its signature. None of that is read back from the code object, so a
//! patch that raises the kernel's LDS, changes its wave size or its kernel
//! arguments makes the launch wrong without any error at run time. Checked,
//! against the unpatched dump retargeted the same way:
//!
//! * LDS: `.amdhsa_group_segment_fixed_size` (and the metadata's
//!   `.group_segment_fixed_size`) not above Triton's `shared`, or, when
//!   `shared` is unknown, not above the dump's;
//! * wave size: `.amdhsa_wavefront_size32` agrees with Triton's `warp_size`
//!   (and with the dump);
//! * kernel arguments: `.amdhsa_kernarg_size`, `.kernarg_segment_size` and
//!   the `.args` list are the dump's;
//! * workgroup size: `.max_flat_workgroup_size` is at least the
//!   `num_warps × warp_size` threads Triton launches.

use crate::base::diag::{Code, Diagnostic};
use crate::base::document::Document;
use crate::base::parse::Kernel;
use crate::config::triton::TritonKernel;

/// One launch-relevant value of a kernel and the line it is on.
struct Value {
    value: u32,
    line: usize,
}

fn descriptor(k: &Kernel, field: &str) -> Option<Value> {
    let f = k.descriptor.as_ref()?.get(field)?;
    Some(Value {
        value: crate::base::parse::parse_int(f.value.trim())? as u32,
        line: f.line,
    })
}

fn meta(k: &Kernel, key: &str) -> Option<Value> {
    let f = k.metadata.as_ref()?.get(key)?;
    Some(Value {
        value: f.value.trim().parse().ok()?,
        line: f.line,
    })
}

/// The `.args` list of a kernel's metadata as text, whitespace collapsed, and
/// the line of its `.args:` key.
fn args(doc: &Document, k: &Kernel) -> Option<(String, usize)> {
    let m = k.metadata.as_ref()?;
    let f = m.get(".args")?;
    let next = m
        .fields
        .iter()
        .map(|g| g.line)
        .filter(|&l| l > f.line)
        .min()
        .unwrap_or(m.end);
    let text: Vec<String> = (f.line + 1..next)
        .map(|i| doc.text(i).split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    Some((text.join("\n"), f.line))
}

/// Lanes per wave: 32 when `.amdhsa_wavefront_size32` is set, else 64.
fn wave_size(k: &Kernel) -> u32 {
    match descriptor(k, "wavefront_size32") {
        Some(v) if v.value != 0 => 32,
        _ => 64,
    }
}

/// The kernel `name` of `doc`, or its only kernel.
fn kernel_named<'d>(doc: &'d Document, name: &str) -> Option<&'d Kernel> {
    let ks = doc.kernels();
    ks.iter()
        .find(|k| k.name == name)
        .or_else(|| ks.first().filter(|_| ks.len() == 1))
}

/// Check `patched` against Triton's launch of `t`; `original` is the dump
/// retargeted the same way. Every finding is an error at the patched line
/// (with the patch hunk or rule that wrote it); `label` names kernel and target.
pub fn check_triton_limits(
    original: &Document,
    patched: &Document,
    t: &TritonKernel,
    label: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(k) = kernel_named(patched, &t.kernel) else {
        out.push(
            Diagnostic::error(
                Code::TritonKernelMissing,
                format!(
                    "{label}: Triton launches kernel `{}`, which the patched asm does not define",
                    t.kernel
                ),
            )
            .with_help("a patch must not rename or remove the kernel Triton launches"),
        );
        return out;
    };
    let orig = kernel_named(original, &t.kernel);
    let at =
        |d: Diagnostic, line: usize, what: &str| patched.locate(d, line, None, what.to_string());

    // LDS.
    let lds = |k: &Kernel| {
        [
            ("descriptor", descriptor(k, "group_segment_fixed_size")),
            ("metadata", meta(k, ".group_segment_fixed_size")),
        ]
    };
    let before = orig.map(lds);
    for (i, (what, v)) in lds(k).into_iter().enumerate() {
        let Some(v) = v else { continue };
        let before = before.as_ref().and_then(|b| b[i].1.as_ref());
        let (limit, why) = match (t.shared, before) {
            (Some(s), _) => (s, format!("Triton launches `{}` with `shared` = {s} bytes of LDS (computed from the TTGIR before the asm stage, recorded in its `{}.json`)", t.kernel, t.kernel)),
            (None, Some(b)) => (b.value, format!("Triton's `shared` for `{}` is unknown (the dump was imported without its cache entry), so the dump's own {} LDS bytes are the limit", t.kernel, b.value)),
            (None, None) => continue,
        };
        if v.value > limit {
            out.push(at(
                Diagnostic::error(Code::TritonLdsExceeded, format!(
                    "{label}: the patched kernel declares {} bytes of LDS, more than the {limit} Triton allocates at launch",
                    v.value
                ))
                .with_note(why)
                .with_note("LDS the launch does not allocate is not this workgroup's: reads and writes beyond it reach other workgroups' data, or the launch fails")
                .with_help(format!(
                    "keep the {what} LDS size at most {limit}, or change the Triton kernel so that Triton itself allocates more (e.g. larger tiles or num_stages) and re-import its dump"
                )),
                v.line,
                "LDS",
            ));
        }
    }

    // Wave size.
    let wave32 = descriptor(k, "wavefront_size32");
    let patched_wave = wave_size(k);
    let want_wave = t.warp_size.or(orig.map(wave_size));
    if let Some(w) = want_wave {
        if w != patched_wave {
            let line = wave32
                .as_ref()
                .map(|v| v.line)
                .or_else(|| k.descriptor.as_ref().map(|d| d.start))
                .unwrap_or(0);
            out.push(at(
                Diagnostic::error(Code::TritonWaveSize, format!(
                    "{label}: the patched kernel runs in wave{patched_wave}, but Triton launches `{}` with warp_size = {w}",
                    t.kernel
                ))
                .with_note("Triton's layouts, reductions and launch grid assume its warp size: every cross-lane step would read the wrong lanes")
                .with_help(format!(
                    "keep `.amdhsa_wavefront_size32 {}`",
                    u32::from(w == 32)
                )),
                line,
                "wave size",
            ));
        }
    }

    // Workgroup size.
    if let (Some(nw), Some(ws), Some(v)) = (
        t.num_warps,
        t.warp_size,
        meta(k, ".max_flat_workgroup_size"),
    ) {
        // u64: the manifest's numbers are the user's, and may be huge.
        let threads = u64::from(nw) * u64::from(ws);
        if u64::from(v.value) < threads {
            out.push(at(
                Diagnostic::error(Code::TritonWorkgroupSize, format!(
                    "{label}: `.max_flat_workgroup_size` is {}, but Triton launches {} threads per workgroup ({nw} warps × {ws})",
                    v.value,
                    threads
                ))
                .with_note("the launch is rejected when the workgroup is larger than the kernel's maximum")
                .with_help(format!("keep `.max_flat_workgroup_size` at least {threads}")),
                v.line,
                "workgroup size",
            ));
        }
    }

    // Kernel arguments.
    if let Some(o) = orig {
        for (what, a, b) in [
            (
                "`.amdhsa_kernarg_size`",
                descriptor(o, "kernarg_size"),
                descriptor(k, "kernarg_size"),
            ),
            (
                "`.kernarg_segment_size`",
                meta(o, ".kernarg_segment_size"),
                meta(k, ".kernarg_segment_size"),
            ),
        ] {
            if let (Some(a), Some(b)) = (a, b) {
                if a.value != b.value {
                    out.push(at(
                        Diagnostic::error(Code::TritonLaunchChanged, format!(
                            "{label}: {what} is {} but was {} in Triton's dump",
                            b.value, a.value
                        ))
                        .with_note("Triton fills the kernel-argument buffer from the Python signature; the patched kernel must read it with the dump's layout")
                        .with_help(format!("restore {what} {}", a.value)),
                        b.line,
                        "kernel arguments",
                    ));
                }
            }
        }
        if let (Some((a, _)), Some((b, line))) = (args(original, o), args(patched, k)) {
            if a != b {
                out.push(at(
                    Diagnostic::error(Code::TritonArgsChanged, format!(
                        "{label}: the kernel's `.args` differ from Triton's dump"
                    ))
                    .with_note("Triton fills the kernel-argument buffer from the Python signature; offsets, sizes and kinds must stay the dump's")
                    .with_help("restore the dump's `.args` entries (change the Triton kernel's signature instead, and re-import its dump)"),
                    line,
                    "kernel arguments",
                ));
            }
        }
    }
    out
}
