//! The sanitizer on mutants of real kernels: HIP `reduce` (LDS, barriers)
//! and `saxpy` compiled with clang-22 to asm, one `s_waitcnt` deleted or
//! loosened or one `s_barrier` deleted, assembled with clang-22 and linked
//! with ld.lld-22, run with the sanitizer. Every needed wait removed or
//! loosened must be reported as a premature read at the lines around the
//! mutation; every removed barrier that lets waves race on LDS must be
//! reported as a race; the unmutated kernels must give no finding over
//! several seeds and sizes.

// gcn_emu::Error is large by design (see the crate root).
use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::dispatch::{run, ArgValue, Launch};
use gcn_emu::load::CodeObject;
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::{Checks, Finding, Kind};

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-san-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile NAME.hip for `target` to asm text: `reduce` is
/// tests/kernels/reduce_sync.hip (the corpus' reduce with __syncthreads(),
/// whose waits drain LDS before each barrier), `saxpy` the corpus' own.
fn asm_of(name: &str, target: &str, d: &Path) -> String {
    let src = if name == "reduce" {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/reduce_sync.hip")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/src")
            .join(format!("{name}.hip"))
    };
    compile(&src, &format!("{name}-{target}.s"), target, d)
}

/// Compile the HIP file `src` for `target` to asm text (in `d`, as `file`).
fn compile(src: &Path, file: &str, target: &str, d: &Path) -> String {
    crate::common::hip_asm(src, target, &d.join(file))
}

/// Assemble and link `text`; load kernel `name` with its lines mapped.
fn assemble(text: &str, name: &str, target: &str, file: &str, d: &Path) -> (CodeObject, Program) {
    let s = d.join(file);
    std::fs::write(&s, text).unwrap();
    let obj = d.join(format!("{file}.o"));
    let so = d.join(format!("{file}.hsaco"));
    let o = Command::new(clang())
        .args(["-target", "amdgcn-amd-amdhsa", "-x", "assembler", "-c"])
        .arg(format!("-mcpu={target}"))
        .arg(&s)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("ld.lld-22")
        .arg("-shared")
        .arg(&obj)
        .arg("-o")
        .arg(&so)
        .output()
        .unwrap_or_else(|e| panic!("ld.lld-22 not runnable ({e}): install it with `apt-get install -y lld-22` (or run tests/setup.sh)"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let co = CodeObject::read_file(&so).unwrap();
    let k = co.kernel(name).unwrap().clone();
    let mut program = Program::disassemble(&co, &k, &find_objdump(None).unwrap()).unwrap();
    let mapped = program.attach_source(file, text);
    // Blocks laid out after the last s_endpgm (a loop's exit) map too.
    let last = program
        .instructions
        .iter()
        .rposition(|i| i.mnemonic == "s_endpgm")
        .unwrap();
    assert!(
        mapped > last,
        "every instruction up to the last s_endpgm maps to its line: {mapped} of {}",
        last + 1
    );
    (co, program)
}

/// Run with the sanitizer on inputs of `seed`; the findings.
fn sanitize(co: &CodeObject, program: &Program, name: &str, seed: u64, n: u32) -> Vec<Finding> {
    sanitize_scheduled(co, program, name, seed, n, 0).0
}

/// Run with the sanitizer on inputs of `seed`, waves scheduled by `schedule`
/// ([`Launch::seed`]); the findings and the second buffer's bytes.
fn sanitize_scheduled(
    co: &CodeObject,
    program: &Program,
    name: &str,
    seed: u64,
    n: u32,
    schedule: u64,
) -> (Vec<Finding>, Vec<u8>) {
    let k = co.kernel(name).unwrap();
    let mem = Memory::new();
    let mut r = Rng(seed);
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let y: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let xa = mem.alloc_bytes("x", &f32s(&x));
    let ya = mem.alloc_bytes("y", &f32s(&y));
    let (grid, args) = match name {
        "reduce" => (
            n.div_ceil(256),
            vec![
                ArgValue::Pointer(xa),
                ArgValue::Pointer(ya),
                ArgValue::Bytes(n.to_le_bytes().to_vec()),
            ],
        ),
        _ => (
            n.div_ceil(256),
            vec![
                ArgValue::Bytes(0.5f32.to_le_bytes().to_vec()),
                ArgValue::Pointer(xa),
                ArgValue::Pointer(ya),
                ArgValue::Bytes(n.to_le_bytes().to_vec()),
            ],
        ),
    };
    let mut launch = Launch::new([grid, 1, 1], [256, 1, 1]);
    launch.sanitize = Checks::DEFAULT;
    launch.max_instructions = 1_000_000;
    launch.seed = schedule;
    let f = run(co, k, program, &mem, &args, &launch).unwrap().findings;
    (f, mem.contents(ya).unwrap())
}

fn line_of(program: &Program, addr: u64) -> usize {
    let l = &program.lines[&addr];
    l.split(':').nth(1).unwrap().parse().unwrap()
}

/// Each `s_waitcnt` line deleted, and each of its counts loosened by one.
fn wait_mutants(text: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        if !t.starts_with("s_waitcnt ") {
            continue;
        }
        let mut del = lines.clone();
        del.remove(i);
        out.push((i + 1, format!("delete `{t}`"), del.join("\n") + "\n"));
        for c in ["vmcnt", "lgkmcnt"] {
            let Some(p) = t.find(&format!("{c}(")) else {
                continue;
            };
            let rest = &t[p + c.len() + 1..];
            let v: u32 = rest[..rest.find(')').unwrap()].parse().unwrap();
            let loose = t.replace(&format!("{c}({v})"), &format!("{c}({})", v + 1));
            let mut m = lines.clone();
            let new = l.replace(t, &loose);
            m[i] = &new;
            out.push((i + 1, format!("`{t}` -> `{loose}`"), m.join("\n") + "\n"));
        }
    }
    out
}

#[test]
fn unmutated_kernels_are_clean_over_seeds_and_sizes() {
    let d = dir("clean");
    for target in TARGETS {
        for name in ["reduce", "saxpy"] {
            let text = asm_of(name, target, &d);
            let (co, p) = assemble(&text, name, target, &format!("{name}-{target}.s"), &d);
            for ((seed, n), schedule) in [(1, 256), (2, 1000), (3, 256 * 3 - 5), (4, 64)]
                .into_iter()
                .flat_map(|c| [0, 1, 2, 3].map(|s| (c, s)))
            {
                let (f, _) = sanitize_scheduled(&co, &p, name, seed, n, schedule);
                assert!(
                    f.is_empty(),
                    "{target} {name} seed {seed} n {n} schedule seed {schedule}: false alarms:\n{}",
                    f.iter()
                        .map(|f| f.to_string())
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
        }
    }
}

#[test]
fn every_removed_or_loosened_wait_is_a_premature_read_at_its_line() {
    let d = dir("waits");
    let (mut tried, mut caught, mut at_barrier, mut benign) = (0, 0, 0, 0);
    let mut false_alarms = Vec::new();
    let mut snapped_barrier_wait = false;
    let mut missed = Vec::new();
    for target in TARGETS {
        for name in ["reduce", "saxpy"] {
            let text = asm_of(name, target, &d);
            let lines: Vec<&str> = text.lines().collect();
            for (k, (line, what, m)) in wait_mutants(&text).into_iter().enumerate() {
                tried += 1;
                // The wait just before barrier `b` (counting from 0), if any.
                let before_barrier = lines[line..]
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty() && !l.starts_with(';'))
                    .filter(|l| *l == "s_barrier")
                    .map(|_| {
                        lines[..line]
                            .iter()
                            .filter(|l| l.trim() == "s_barrier")
                            .count()
                    });
                let file = format!("{name}-{target}-w{k}.s");
                let (co, p) = assemble(&m, name, target, &file, &d);
                let f = sanitize(&co, &p, name, 1, 1000);
                // The deleted line shifts the ones after it by one. A wait
                // before a barrier that drained LDS writes is missed by
                // another wave's read after it.
                let hit = f.iter().any(|f| {
                    matches!(f.kind, Kind::PrematureRead | Kind::StoreInFlightAtBarrier)
                        && line_of(&p, f.other.unwrap()) < line
                        && line_of(&p, f.addr) >= line
                });
                if target == &"gfx942"
                    && name == "reduce"
                    && what == "delete `s_waitcnt lgkmcnt(0)`"
                    && f.iter().any(|f| f.kind == Kind::StoreInFlightAtBarrier)
                    && !snapped_barrier_wait
                {
                    let report: String = f.iter().map(|f| format!("{f}\n")).collect();
                    insta::assert_snapshot!("reduce_gfx942_barrier_wait_deleted", report);
                    snapped_barrier_wait = true;
                }
                if f.iter().any(|f| f.kind == Kind::StoreInFlightAtBarrier) {
                    at_barrier += 1;
                }
                if target == &"gfx942" && name == "saxpy" && what.contains("vmcnt(1)") {
                    let report: String = f.iter().map(|f| format!("{f}\n")).collect();
                    insta::assert_snapshot!("saxpy_gfx942_vmcnt_loosened", report);
                }
                // Before barriers 2 and later of reduce, only wave 0 wrote
                // (from stride 64 down) and only wave 0 reads after them:
                // the wait orders nothing between waves, the mutant is
                // benign and must give no finding.
                let benign_wait = name == "reduce" && before_barrier.is_some_and(|b| b >= 2);
                if benign_wait {
                    benign += 1;
                    if !f.is_empty() {
                        false_alarms.push(format!("{target} {name} line {line}: {what}: {f:?}"));
                    }
                } else if hit {
                    caught += 1;
                } else {
                    missed.push(format!(
                        "{target} {name} line {line}: {what}: {:?}",
                        f.iter().map(|f| f.to_string()).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    eprintln!(
        "wait mutants: tried {tried}, caught {caught} ({at_barrier} as an LDS store in flight at a barrier), benign {benign}, false alarms {}",
        false_alarms.len()
    );
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    assert!(
        false_alarms.is_empty(),
        "false alarms:\n{}",
        false_alarms.join("\n")
    );
    assert!(
        snapped_barrier_wait,
        "a deleted wait before a barrier was reported"
    );
    // The figures measured: 144 mutants; the waits before reduce's first
    // two barriers (deleted or loosened: 4 per target) are caught as LDS
    // stores in flight at a barrier, those before barriers 2–8 (14 per
    // target) are benign.
    assert_eq!((tried, caught + benign), (144, 144));
    assert_eq!((at_barrier, benign), (12, 42));
}

#[test]
fn an_access_outside_every_buffer_is_a_finding_with_buffer_lane_wave_workgroup() {
    let d = dir("oob");
    let text = asm_of("saxpy", "gfx942", &d);
    let (co, p) = assemble(&text, "saxpy", "gfx942", "saxpy-oob.s", &d);
    let k = co.kernel("saxpy").unwrap();
    let mem = Memory::new();
    // Buffers of 256 floats, n = 300: workgroup 1 reads past them.
    let xa = mem.alloc_bytes("x", &f32s(&[1.0; 256]));
    let ya = mem.alloc_bytes("y", &f32s(&[2.0; 256]));
    let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
    launch.sanitize = Checks::DEFAULT;
    let args = [
        ArgValue::Bytes(0.5f32.to_le_bytes().to_vec()),
        ArgValue::Pointer(xa),
        ArgValue::Pointer(ya),
        ArgValue::Bytes(300u32.to_le_bytes().to_vec()),
    ];
    let f = run(&co, k, &p, &mem, &args, &launch).unwrap().findings;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, Kind::OutOfBounds);
    assert_eq!((f[0].workgroup, f[0].wave), ([1, 0, 0], 0));
    let s = f[0].to_string();
    for want in [
        "lane 0",
        "`x`",
        "byte offset 1024",
        "global_load_dword",
        "saxpy-oob.s:",
    ] {
        assert!(s.contains(want), "{want} in {s}");
    }
    // Without the sanitizer it is a fault (an error), as before.
    launch.sanitize = Checks::NONE;
    let e = run(&co, k, &p, &mem, &args, &launch).unwrap_err();
    assert!(e.to_string().contains("outside every allocation"), "{e}");
}

/// The barriers of `reduce` (256 work-items: 4 waves) whose removal lets
/// two waves touch the same LDS bytes between barriers: the one after the
/// first store (waves 0 and 1 then read what waves 2 and 3 wrote) and the
/// one after the stride-128 step (wave 0 then reads what wave 1 wrote).
/// From stride 32 down only wave 0 works, so removing the later barriers
/// lets no two waves race.
const RACY_BARRIERS: [usize; 2] = [0, 1];

#[test]
fn every_removed_barrier_that_lets_waves_race_is_an_lds_race() {
    let d = dir("barriers");
    let (mut tried, mut racy, mut caught, mut false_alarms) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    for target in TARGETS {
        let text = asm_of("reduce", target, &d);
        let lines: Vec<&str> = text.lines().collect();
        let barriers: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim() == "s_barrier")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(barriers.len(), 9, "{target}: 9 barriers in reduce");
        for (b, &i) in barriers.iter().enumerate() {
            tried += 1;
            let mut m = lines.clone();
            m.remove(i);
            let file = format!("reduce-{target}-b{b}.s");
            let (co, p) = assemble(&(m.join("\n") + "\n"), "reduce", target, &file, &d);
            let f = sanitize(&co, &p, "reduce", 1, 512);
            let race = f.iter().any(|f| f.kind == Kind::LdsRace);
            // A race is found under every schedule, not only waves in turn.
            for schedule in [5, 6] {
                let (g, _) = sanitize_scheduled(&co, &p, "reduce", 1, 512, schedule);
                assert_eq!(
                    race,
                    g.iter().any(|f| f.kind == Kind::LdsRace),
                    "{target}: barrier {b} removed, schedule seed {schedule}: {g:?}"
                );
            }
            if RACY_BARRIERS.contains(&b) {
                racy += 1;
                if race {
                    caught += 1;
                } else {
                    missed.push(format!(
                        "{target}: barrier {b} (line {}) removed: {f:?}",
                        i + 1
                    ));
                }
                if b == 0 && target == &"gfx942" {
                    let report: String = f.iter().map(|f| format!("{f}\n")).collect();
                    insta::assert_snapshot!("reduce_gfx942_first_barrier_removed", report);
                }
            } else if !f.is_empty() {
                false_alarms += 1;
                eprintln!("{target}: barrier {b} removed lets no waves race, yet: {f:?}");
            }
        }
    }
    eprintln!(
        "barrier mutants: tried {tried}, racy {racy}, caught {caught}, false alarms {false_alarms}"
    );
    assert_eq!(false_alarms, 0);
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    assert_eq!((tried, racy, caught), (27, 6, 6));
}

/// Compile `tests/kernels/barrier.hip` for `target`, assembled with its
/// lines attached.
fn barrier_kernel(name: &str, target: &str, d: &Path) -> (CodeObject, Program) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/barrier.hip");
    let text = compile(&src, &format!("barrier-{target}.s"), target, d);
    assemble(
        &text,
        name,
        target,
        &format!("barrier-{name}-{target}.s"),
        d,
    )
}

fn run_barrier(
    co: &CodeObject,
    p: &Program,
    name: &str,
    value: u32,
    schedule: u64,
    checks: Checks,
) -> Vec<Finding> {
    let k = co.kernel(name).unwrap();
    let mem = Memory::new();
    let out = mem.alloc_bytes("out", &[0u8; 1024]);
    let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
    launch.sanitize = checks;
    launch.seed = schedule;
    let args = [
        ArgValue::Pointer(out),
        ArgValue::Bytes(value.to_le_bytes().to_vec()),
    ];
    run(co, k, p, &mem, &args, &launch).unwrap().findings
}

/// Hardware counts arrivals at `s_barrier` and no longer counts ended
/// waves: waves at different barriers, or ended while others wait, are
/// legal and clean under the `barriers` check (these kernels use a bare
/// `s_barrier` after LDS writes, which the `races` check reports on its own);
/// the opt-in `barrier-pairs` check reports them.
#[test]
fn waves_at_different_barriers_or_ended_are_clean_by_default_and_reported_by_barrier_pairs() {
    let pairs = Checks::BARRIER_PAIRS;
    let d = dir("divergence");
    for target in TARGETS {
        // n = 100: waves 2 and 3 (work-items 128–255) return; waves 0 and 1
        // wait at the barrier.
        let (co, p) = barrier_kernel("early_exit", target, &d);
        for schedule in [0, 1, 2] {
            assert!(
                run_barrier(&co, &p, "early_exit", 100, schedule, Checks::BARRIERS).is_empty(),
                "{target}: legal on hardware"
            );
            let f = run_barrier(&co, &p, "early_exit", 100, schedule, pairs);
            assert_eq!(f.len(), 1, "{target}: {f:?}");
            assert_eq!(f[0].kind, Kind::BarrierDivergence);
            assert_eq!(f[0].occurrences, 2, "both workgroups");
            assert!(
                f[0].message.starts_with("wave(s) 2, 3 ended at "),
                "{target}: {}",
                f[0]
            );
            assert!(
                f[0].message.contains("while wave(s) 0, 1 wait at "),
                "{}",
                f[0]
            );
            assert!(p.lines[&f[0].addr].ends_with("s_barrier"));
            assert!(p.lines[&f[0].other.unwrap()].ends_with("s_endpgm"));
            if *target == "gfx942" && schedule == 0 {
                insta::assert_snapshot!("early_exit_gfx942", f[0].to_string());
            }
            assert!(
                run_barrier(&co, &p, "early_exit", 256, schedule, pairs).is_empty(),
                "{target}: every wave meets"
            );
        }
        // k = 64: wave 0 waits at the first barrier, waves 1–3 at the second.
        let (co, p) = barrier_kernel("divergent", target, &d);
        for schedule in [0, 3] {
            assert!(
                run_barrier(&co, &p, "divergent", 64, schedule, Checks::BARRIERS).is_empty(),
                "{target}: legal on hardware"
            );
            let f = run_barrier(&co, &p, "divergent", 64, schedule, pairs);
            assert_eq!(f.len(), 1, "{target}: {f:?}");
            assert_eq!(f[0].kind, Kind::BarrierDivergence);
            assert!(f[0].message.contains("wait at"), "{}", f[0]);
            let (a, b) = (f[0].addr, f[0].other.unwrap());
            assert_ne!(a, b);
            assert!(p.lines[&a].ends_with("s_barrier") && p.lines[&b].ends_with("s_barrier"));
            if *target == "gfx942" && schedule == 0 {
                insta::assert_snapshot!("divergent_gfx942", f[0].to_string());
            }
            assert!(
                run_barrier(&co, &p, "divergent", 256, schedule, pairs).is_empty(),
                "{target}: all take one side"
            );
        }
    }
}

#[test]
fn the_schedule_seed_interleaves_waves_and_the_same_seed_gives_the_same_report() {
    // reduce without its first barrier: waves 0 and 1 read what waves 2 and
    // 3 write. Waves in turn (seed 0) let every wave finish its first step
    // before the next runs; other seeds interleave them, so the racy sums
    // depend on the seed, and the same seed repeats them exactly.
    let d = dir("schedule");
    let target = "gfx942";
    let text = asm_of("reduce", target, &d);
    let first = text.lines().position(|l| l.trim() == "s_barrier").unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(first);
    let (co, p) = assemble(
        &(lines.join("\n") + "\n"),
        "reduce",
        target,
        "reduce-sched.s",
        &d,
    );
    let mut results = std::collections::BTreeSet::new();
    for schedule in 0..8 {
        let (f, out) = sanitize_scheduled(&co, &p, "reduce", 1, 1024, schedule);
        let (g, again) = sanitize_scheduled(&co, &p, "reduce", 1, 1024, schedule);
        assert_eq!(f, g, "schedule seed {schedule}: the same report");
        assert_eq!(out, again, "schedule seed {schedule}: the same results");
        assert!(
            f.iter().any(|f| f.kind == Kind::LdsRace),
            "schedule seed {schedule}"
        );
        results.insert(out);
    }
    eprintln!(
        "8 schedule seeds gave {} distinct results of the racy reduce",
        results.len()
    );
    assert!(results.len() > 1, "the seed changes the interleaving");
}

/// Registers of an operand text: `v5`, `s[0:1]`, `v[2:3]` (s0–s101 and VGPRs).
fn regs_of(op: &str) -> Vec<(char, u32)> {
    let op = op.trim().trim_start_matches('-');
    let Some(file) = op.chars().next().filter(|c| *c == 's' || *c == 'v') else {
        return vec![];
    };
    let rest = &op[1..];
    let (a, b) = if let Some(r) = rest.strip_prefix('[') {
        let Some((a, b)) = r.trim_end_matches(']').split_once(':') else {
            return vec![];
        };
        (a.parse().ok(), b.parse().ok())
    } else {
        let n = rest.parse().ok();
        (n, n)
    };
    match (a, b) {
        (Some(a), Some(b)) if a <= b && !(file == 's' && b > 101) => {
            (a..=b).map(|r| (file, r)).collect()
        }
        _ => vec![],
    }
}

/// `(mnemonic, operands)` of an asm line, `None` for labels, directives and blanks.
fn parse_line(l: &str) -> Option<(String, Vec<String>)> {
    let t = l.split(';').next().unwrap().trim();
    if t.is_empty() || t.starts_with('.') || t.ends_with(':') {
        return None;
    }
    let (m, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    let ops = rest
        .split(',')
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    Some((m.to_string(), ops))
}

#[test]
fn every_deleted_first_write_of_a_register_read_next_is_an_uninitialized_read() {
    // Mutants: one ALU instruction deleted that is the first write of its
    // destination in the kernel's text (writers: the first operand of any
    // instruction, an over-approximation), where the next line naming the
    // register reads it. That read then reads what nothing wrote. Registers
    // the launch may set (s0–s15, v0) are left out.
    let d = dir("uninit");
    let (mut tried, mut caught) = (0, 0);
    let mut roles = std::collections::BTreeMap::new();
    let mut missed = Vec::new();
    let mut snapped = false;
    for target in TARGETS {
        for name in ["reduce", "saxpy"] {
            let text = asm_of(name, target, &d);
            let lines: Vec<&str> = text.lines().collect();
            let start = lines
                .iter()
                .position(|l| l.split(';').next().unwrap().trim() == format!("{name}:"))
                .unwrap();
            let end = start
                + lines[start..]
                    .iter()
                    .position(|l| l.starts_with(".Lfunc_end"))
                    .unwrap();
            let body: Vec<(usize, String, Vec<String>)> = (start..end)
                .filter_map(|i| parse_line(lines[i]).map(|(m, o)| (i, m, o)))
                .collect();
            for (k, (i, m, ops)) in body.iter().enumerate() {
                let alu = (m.starts_with("v_") || m.starts_with("s_"))
                    && ![
                        "s_cmp",
                        "s_bitcmp",
                        "s_cbranch",
                        "s_branch",
                        "s_waitcnt",
                        "s_nop",
                        "s_endpgm",
                        "s_barrier",
                        "s_load",
                        "v_cmp",
                        "v_readfirstlane",
                        "v_readlane",
                        "v_writelane",
                        "s_and_saveexec",
                        "s_or_saveexec",
                        "s_andn2_saveexec",
                    ]
                    .iter()
                    .any(|p| m.starts_with(p));
                if !alu || ops.is_empty() {
                    continue;
                }
                let dst = regs_of(&ops[0]);
                if dst.is_empty()
                    || dst
                        .iter()
                        .any(|&(f, r)| (f == 's' && r < 16) || (f == 'v' && r == 0))
                {
                    continue;
                }
                // The first write of the register in the kernel's text, and
                // the next line naming it reads it.
                let writes = |o: &[String]| {
                    o.first()
                        .is_some_and(|o0| regs_of(o0).iter().any(|r| dst.contains(r)))
                };
                let reads = |m2: &str, o: &[String]| {
                    o.iter().enumerate().any(|(n, op)| {
                        (n > 0
                            || m2.contains("mac")
                            || m2.starts_with("global_store")
                            || m2.starts_with("ds_write")
                            || m2.starts_with("s_cmp")
                            || m2.starts_with("s_cbranch"))
                            && regs_of(op).iter().any(|r| dst.contains(r))
                    })
                };
                let earlier_writer = body[..k].iter().any(|(_, _, o)| writes(o));
                let next = body[k + 1..]
                    .iter()
                    .find(|(_, m2, o)| writes(o) || reads(m2, o));
                let read_next = next.is_some_and(|(_, m2, o)| reads(m2, o));
                if earlier_writer || !read_next {
                    continue;
                }
                tried += 1;
                let mut m2 = lines.clone();
                m2.remove(*i);
                let file = format!("{name}-{target}-u{i}.s");
                let (co, p) = assemble(&(m2.join("\n") + "\n"), name, target, &file, &d);
                let kname = co.kernel(name).unwrap().clone();
                let mem = Memory::new();
                let xs = mem.alloc_bytes("x", &f32s(&vec![0.5; 512]));
                let ys = mem.alloc_bytes("y", &f32s(&vec![0.25; 512]));
                let args = if name == "reduce" {
                    vec![
                        ArgValue::Pointer(xs),
                        ArgValue::Pointer(ys),
                        ArgValue::Bytes(512u32.to_le_bytes().to_vec()),
                    ]
                } else {
                    vec![
                        ArgValue::Bytes(0.5f32.to_le_bytes().to_vec()),
                        ArgValue::Pointer(xs),
                        ArgValue::Pointer(ys),
                        ArgValue::Bytes(512u32.to_le_bytes().to_vec()),
                    ]
                };
                let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
                launch.sanitize = Checks::DEFAULT;
                launch.max_instructions = 100_000;
                let names: Vec<String> = dst.iter().map(|(f, r)| format!("{f}{r}")).collect();
                let hit = match run(&co, &kname, &p, &mem, &args, &launch) {
                    Ok(s) => {
                        // Reported where the value is used, naming the
                        // deleted write's register as its origin.
                        let f = s.findings.iter().find(|f| {
                            f.kind == Kind::UninitializedRegister
                                && names.iter().any(|n| {
                                    f.message.contains(&format!(
                                        "it comes from {n}, which nothing wrote"
                                    ))
                                })
                        });
                        if let Some(f) = f {
                            let role = f.message.split(" uses an uninitialized value ").nth(1);
                            let role = role.and_then(|r| r.split(':').next()).unwrap_or("?");
                            *roles.entry(role.to_string()).or_insert(0) += 1;
                        }
                        if let (Some(f), false, "gfx942", "saxpy") = (f, snapped, *target, name) {
                            insta::assert_snapshot!(
                                "uninitialized_register_saxpy_gfx942",
                                f.to_string()
                            );
                            snapped = true;
                        }
                        f.is_some()
                    }
                    Err(e) => {
                        missed.push(format!(
                            "{target} {name}: `{}` deleted: error {e}",
                            lines[*i].trim()
                        ));
                        false
                    }
                };
                if hit {
                    caught += 1;
                } else {
                    missed.push(format!(
                        "{target} {name}: line {} `{}` deleted",
                        i + 1,
                        lines[*i].trim()
                    ));
                }
            }
        }
    }
    eprintln!("uninitialized-register mutants: tried {tried}, caught {caught}, reported {roles:?}");
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    // The figures measured: 16 mutants over reduce and saxpy on three
    // targets, every one caught where its value is used.
    assert_eq!((tried, caught), (16, 16));
}

/// A wave that never reaches the barrier the others wait at (it spins on an
/// LDS flag only they would set after it) is a deadlock under `barriers`,
/// naming the spinning wave, the barrier and the loop, under every
/// schedule; without the check it is the budget error; with nobody
/// spinning, no finding.
#[test]
fn a_wave_spinning_while_others_wait_at_a_barrier_is_a_deadlock() {
    let d = dir("deadlock");
    for target in TARGETS {
        let (co, p) = barrier_kernel("spin", target, &d);
        let k = co.kernel("spin").unwrap();
        let go = |value: u32, schedule: u64, checks: Checks| {
            let mem = Memory::new();
            let out = mem.alloc_bytes("out", &[0u8; 1024]);
            let mut launch = Launch::new([1, 1, 1], [256, 1, 1]);
            launch.sanitize = checks;
            launch.seed = schedule;
            launch.max_instructions = 20_000;
            let args = [
                ArgValue::Pointer(out),
                ArgValue::Bytes(value.to_le_bytes().to_vec()),
            ];
            run(&co, k, &p, &mem, &args, &launch)
        };
        for schedule in [0, 1, 2] {
            let f = go(64, schedule, Checks::DEFAULT)
                .unwrap_or_else(|e| panic!("{target}: {e}"))
                .findings;
            assert_eq!(f.len(), 1, "{target}: {f:?}");
            assert_eq!(
                (f[0].kind, f[0].wave),
                (Kind::Deadlock, 0),
                "{target}: {f:?}"
            );
            let m = &f[0].message;
            assert!(
                m.starts_with("wave 0 ran ") && m.contains("while wave(s) 1, 2, 3 wait at "),
                "{target}: {m}"
            );
            assert!(p.lines[&f[0].other.unwrap()].ends_with("s_barrier"), "{m}");
            assert!(m.contains("the last taken branch"), "{m}");
            if *target == "gfx942" && schedule == 0 {
                insta::assert_snapshot!("spin_deadlock_gfx942", f[0].to_string());
            }
            let e = go(64, schedule, Checks::NONE).unwrap_err();
            assert!(e.to_string().contains("20000"), "{target}: {e}");
            let clean = go(0, schedule, Checks::DEFAULT).unwrap().findings;
            assert!(clean.is_empty(), "{target}: {clean:?}");
        }
    }
}

/// `tests/kernels/uninit.hip` compiled for `target` to asm text.
fn uninit_asm(target: &str, d: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/uninit.hip");
    compile(&src, &format!("uninit-{target}.s"), target, d)
}

/// `text` without the first line of kernel `name`'s body that starts with
/// `prefix` (trimmed), and that line.
fn delete_first(text: &str, name: &str, prefix: &str) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.split(';').next().unwrap().trim() == format!("{name}:"))
        .unwrap();
    let i = start
        + lines[start..]
            .iter()
            .position(|l| l.trim().starts_with(prefix))
            .unwrap_or_else(|| panic!("`{prefix}` in {name}"));
    let gone = lines[i].trim().to_string();
    let mut m = lines.clone();
    m.remove(i);
    (m.join("\n") + "\n", gone)
}

/// Run kernel `name` of `(co, p)` over `wgs` workgroups of 256 with the
/// default checks; the findings and the bytes of buffer `out` (argument
/// `out_arg`).
fn run_uninit(
    co: &CodeObject,
    p: &Program,
    name: &str,
    wgs: u32,
    args: &[Vec<u8>],
    out_arg: usize,
    values: &[Vec<u8>],
) -> (Vec<Finding>, Vec<u8>) {
    let mem = Memory::new();
    let mut bases = Vec::new();
    let mut vals: Vec<ArgValue> = args
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let a = mem.alloc_bytes(&format!("arg{i}"), b);
            bases.push(a);
            ArgValue::Pointer(a)
        })
        .collect();
    vals.extend(values.iter().map(|v| ArgValue::Bytes(v.clone())));
    let mut launch = Launch::new([wgs, 1, 1], [256, 1, 1]);
    launch.sanitize = Checks::DEFAULT;
    launch.max_instructions = 1_000_000;
    let k = co.kernel(name).unwrap();
    let f = run(co, k, p, &mem, &vals, &launch).unwrap().findings;
    (f, mem.contents(bases[out_arg]).unwrap())
}

/// clang-22 computes the high half of `recs[(u64)i * mul]`'s byte offset
/// with a `v_mad_u64_u32` whose high addend register nothing wrote (only
/// the low result is used). The sanitizer used to report that read; with
/// propagation the undefined bits poison only the unused high result: no
/// finding, and the kernel's results are right.
#[test]
fn clangs_mad_u64_u32_with_an_undefined_high_addend_is_no_finding() {
    let d = dir("mad");
    for target in TARGETS {
        let text = uninit_asm(target, &d);
        let (co, p) = assemble(&text, "scaled", target, &format!("scaled-{target}.s"), &d);
        // The pattern: a v_mad_u64_u32 whose high addend register no earlier
        // instruction names as its first or second operand (an
        // over-approximation of the writers).
        let names = |ins: &gcn_emu::decode::Instruction, r: u16| {
            ins.ops.iter().take(2).any(|o| {
                matches!(o.op, gcn_emu::decode::Operand::Reg { file: gcn_emu::decode::RegFile::V, index, count } if index <= r && r < index + count.max(1))
            })
        };
        let undefined_hi = p.instructions.iter().enumerate().find_map(|(k, ins)| {
            let gcn_emu::decode::Operand::Reg {
                index, count: 2, ..
            } = ins.ops.get(4)?.op
            else {
                return None;
            };
            (ins.mnemonic == "v_mad_u64_u32"
                && !p.instructions[..k].iter().any(|e| names(e, index + 1)))
            .then(|| ins.text.clone())
        });
        let mad = undefined_hi.unwrap_or_else(|| {
            panic!("{target}: no v_mad_u64_u32 with an undefined high addend in scaled")
        });
        let (n, mul) = (512u32, 3u64);
        let recs: Vec<f32> = (0..n as usize * mul as usize * 6)
            .map(|j| j as f32)
            .collect();
        let (f, out) = run_uninit(
            &co,
            &p,
            "scaled",
            2,
            &[f32s(&recs), f32s(&vec![0.0; n as usize])],
            1,
            &[n.to_le_bytes().to_vec(), mul.to_le_bytes().to_vec()],
        );
        assert!(
            f.is_empty(),
            "{target} `{mad}`: {}",
            f.iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
        let want: Vec<f32> = (0..n as u64)
            .map(|i| recs[(i * mul * 6 + 2) as usize])
            .collect();
        assert_eq!(to_f32(&out), want, "{target}");
    }
}

/// Real uses are still reported, each at the use with the value's origin:
/// an LDS element nothing wrote stored to global memory (`shift_bug`; with
/// a select that drops it, `shift_ok`, no finding), a private array's
/// element nothing wrote stored to global memory (`private_bug`: scratch on
/// gfx942/gfx950, the private segment buffer on gfx90a), a kernel argument's
/// load deleted so that the loop condition is undefined (a branch), and
/// the move of a pointer's high half deleted (an address).
#[test]
fn uninitialized_values_reaching_global_memory_a_branch_or_an_address_are_reported() {
    let d = dir("uses");
    for target in TARGETS {
        let text = uninit_asm(target, &d);
        let x: Vec<f32> = (0..512).map(|i| i as f32 + 0.5).collect();
        // LDS: work-item 255 (wave 3, lane 63) of each workgroup reads
        // t[256], LDS byte 0x400.
        let (co, p) = assemble(&text, "shift_bug", target, &format!("shift-{target}.s"), &d);
        let (f, _) = run_uninit(
            &co,
            &p,
            "shift_bug",
            2,
            &[f32s(&x), f32s(&[0.0; 512])],
            1,
            &[],
        );
        assert_eq!(f.len(), 1, "{target}: {f:?}");
        let g = &f[0];
        assert_eq!(
            (g.kind, g.wave, g.occurrences),
            (Kind::UninitializedLds, 3, 2),
            "{target}: {g}"
        );
        assert!(
            p.instructions[p.index[&g.addr]]
                .mnemonic
                .starts_with("global_store"),
            "{g}"
        );
        assert!(
            p.instructions[p.index[&g.other.unwrap()]]
                .mnemonic
                .starts_with("ds_read"),
            "{g}"
        );
        for want in ["in a store to global memory", "lane 63", "LDS byte 0x400"] {
            assert!(g.message.contains(want), "{target}: {want} in {g}");
        }
        if *target == "gfx942" {
            insta::assert_snapshot!("uninit_lds_stored_to_global_gfx942", g.to_string());
        }
        let (co, p) = assemble(
            &text,
            "shift_ok",
            target,
            &format!("shiftok-{target}.s"),
            &d,
        );
        let (f, out) = run_uninit(
            &co,
            &p,
            "shift_ok",
            2,
            &[f32s(&x), f32s(&[0.0; 512])],
            1,
            &[],
        );
        assert!(f.is_empty(), "{target}: {f:?}");
        let want: Vec<f32> = (0..512)
            .map(|i| if i % 256 == 255 { 0.0 } else { x[i + 1] })
            .collect();
        assert_eq!(to_f32(&out), want, "{target}");
        // Scratch: a[63] of private_bug, which nothing writes, read by the
        // work-items with t % 64 == 63 (lane 63 of each wave).
        let (co, p) = assemble(
            &text,
            "private_bug",
            target,
            &format!("private-{target}.s"),
            &d,
        );
        let ins: Vec<u32> = (0..512).collect();
        let (f, _) = run_uninit(
            &co,
            &p,
            "private_bug",
            1,
            &[u32s(&ins), u32s(&[0; 256])],
            1,
            &[],
        );
        assert_eq!(f.len(), 1, "{target}: {f:?}");
        let g = &f[0];
        assert_eq!(
            (g.kind, g.occurrences),
            (Kind::UninitializedScratch, 4),
            "{target}: {g}"
        );
        assert!(
            p.instructions[p.index[&g.addr]]
                .mnemonic
                .starts_with("global_store"),
            "{g}"
        );
        let load = &p.instructions[p.index[&g.other.unwrap()]].mnemonic;
        assert!(
            load.starts_with("scratch_load") || load.starts_with("buffer_load"),
            "{g}"
        );
        for want in [
            "in a store to global memory",
            "lane 63",
            "private (scratch) byte 0xfc of lane 63",
        ] {
            assert!(g.message.contains(want), "{target}: {want} in {g}");
        }
        // A branch: sum_n without the load of n.
        let (m, gone) = delete_first(&text, "sum_n", "s_load_dword ");
        let (co, p) = assemble(&m, "sum_n", target, &format!("sum-{target}.s"), &d);
        let (f, _) = run_uninit(
            &co,
            &p,
            "sum_n",
            1,
            &[f32s(&x), f32s(&[0.0; 256])],
            1,
            &[4u32.to_le_bytes().to_vec()],
        );
        let reg = gone
            .split_whitespace()
            .nth(1)
            .unwrap()
            .trim_end_matches(',');
        let b = f
            .iter()
            .find(|f| f.message.contains("as a branch condition"))
            .unwrap_or_else(|| panic!("{target}: `{gone}` deleted: {f:?}"));
        assert_eq!(b.kind, Kind::UninitializedRegister, "{b}");
        assert!(
            p.instructions[p.index[&b.addr]]
                .mnemonic
                .starts_with("s_cbranch_scc"),
            "{b}"
        );
        assert!(
            b.message
                .contains(&format!("it comes from {reg}, which nothing wrote")),
            "{target}: {b}"
        );
        // An address: scaled without the move of the records' high half.
        let (m, gone) = delete_first(&text, "scaled", "v_mov_b32_e32 v3, s");
        let (co, p) = assemble(&m, "scaled", target, &format!("scaled-addr-{target}.s"), &d);
        let recs = f32s(&vec![1.0; 512 * 6]);
        let (f, _) = run_uninit(
            &co,
            &p,
            "scaled",
            1,
            &[recs, f32s(&[0.0; 256])],
            1,
            &[256u32.to_le_bytes().to_vec(), 1u64.to_le_bytes().to_vec()],
        );
        let a = f
            .iter()
            .find(|f| f.message.contains("as a memory address"))
            .unwrap_or_else(|| panic!("{target}: `{gone}` deleted: {f:?}"));
        assert!(
            p.instructions[p.index[&a.addr]]
                .mnemonic
                .starts_with("global_load"),
            "{a}"
        );
        assert!(
            a.message.contains("it comes from v3, which nothing wrote"),
            "{target}: {a}"
        );
    }
}

/// The rule is the same on CDNA3 and RDNA3: AMDGPUUsage's memory models for
/// GFX942 and for GFX10-GFX11 both say the LDS has several request queues
/// shared by the SIMDs of a CU (WGP), so LDS operations of different waves
/// of a workgroup may be reordered and `s_waitcnt lgkmcnt(0)` is needed to
/// order them (LLVM's SIMemoryLegalizer emits it for a workgroup release on
/// both). The corpus' reduce.hip uses a bare `__builtin_amdgcn_s_barrier()`:
/// clang-22 puts each LDS store right before `s_barrier` on gfx942 and on
/// gfx1100 alike, and the sanitizer must report the store in flight at the
/// barrier on both, naming the generation's memory model; with
/// `__syncthreads()` (tests/kernels/reduce_sync.hip) both run clean.
#[test]
fn a_bare_barrier_after_an_lds_store_is_the_same_race_on_gfx942_and_gfx1100() {
    let d = dir("bare-barrier");
    let bare = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/src/reduce.hip");
    for (target, store, model) in [
        ("gfx942", "ds_write_b32", "memory model GFX942"),
        ("gfx1100", "ds_store_b32", "memory model GFX10-GFX11"),
    ] {
        let file = format!("reduce-bare-{target}.s");
        let text = compile(&bare, &file, target, &d);
        // The premise: the first LDS store goes straight into the barrier.
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with(store))
            .unwrap_or_else(|| panic!("{target}: no `{store}` in\n{text}"));
        assert_eq!(lines[at + 1], "s_barrier", "{target}:\n{text}");
        let (co, p) = assemble(&text, "reduce", target, &file, &d);
        let f = sanitize(&co, &p, "reduce", 1, 1000);
        let first = f
            .iter()
            .find(|f| {
                f.kind == Kind::StoreInFlightAtBarrier
                    && f.other.map(|a| line_of(&p, a)) == Some(at + 1)
            })
            .unwrap_or_else(|| {
                panic!(
                    "{target}: the store at line {} in flight at the barrier is not reported: {:?}",
                    at + 1,
                    f.iter().map(|f| f.to_string()).collect::<Vec<_>>()
                )
            });
        assert!(
            first.message.contains(&format!(
                "needs `s_waitcnt lgkmcnt(0)` before line {}",
                at + 2
            )) && first.message.contains(model),
            "{target}: {first}"
        );
        let text = asm_of("reduce", target, &d);
        let (co, p) = assemble(
            &text,
            "reduce",
            target,
            &format!("reduce-sync-{target}.s"),
            &d,
        );
        let f = sanitize(&co, &p, "reduce", 1, 1000);
        assert!(f.is_empty(), "{target}: reduce_sync: {f:?}");
    }
}
