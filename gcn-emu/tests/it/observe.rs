//! The observer interface (`gcn_emu::observe`): what a subscriber sees of a
//! real kernel's run — every wave-instruction once, and each memory
//! instruction's lanes with the addresses the kernel's own indexing gives.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use gcn_emu::dispatch::{run, run_observed, ArgValue, Launch};
use gcn_emu::memory::Memory;
use gcn_emu::observe::{Access, AccessKind, Event, Issue, Observe, Observer, Space};
use gcn_emu::sanitize::{Checks, Kind};

/// Records everything of one workgroup.
#[derive(Default)]
struct Recorder {
    wg: [u32; 3],
    /// (wave, instruction index, exec, accesses)
    events: Vec<(u32, usize, u64, Vec<Access>)>,
    barriers: u32,
}

impl Observer for Recorder {
    fn executed(&mut self, e: &Event<'_>) {
        assert_eq!(e.workgroup, self.wg);
        self.events
            .push((e.wave, e.index, e.exec, e.accesses.to_vec()));
    }
    fn barrier_released(&mut self) {
        self.barriers += 1;
    }
}

struct Record;

impl Observe for Record {
    type Workgroup = Recorder;
    fn workgroup(&self, wg: [u32; 3]) -> Recorder {
        Recorder {
            wg,
            ..Default::default()
        }
    }
}

#[test]
fn an_observer_sees_every_instruction_and_the_lanes_addresses() {
    let dir = tempfile_dir("observe");
    let path = build("reduce_sync", "gfx942", &dir);
    let l = load(&path, "reduce");
    let n = 3 * 256 - 10;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let k = l.co.kernel("reduce").unwrap();
    let mut runs = Vec::new();
    for threads in [1, 2] {
        let mem = Memory::new();
        let inp = mem.alloc_bytes("in", &f32s(&input));
        let out = mem.alloc_bytes("out", &[0; 12]);
        let args = [
            ArgValue::Pointer(inp),
            ArgValue::Pointer(out),
            ArgValue::Bytes((n as u32).to_le_bytes().to_vec()),
        ];
        let mut launch = Launch::new([3, 1, 1], [256, 1, 1]);
        launch.threads = threads;
        let (stats, wgs) =
            run_observed(&l.co, k, &l.program, &mem, &args, &launch, &Record).unwrap();
        // The same dispatch unobserved computes the same.
        let mem2 = Memory::new();
        let inp2 = mem2.alloc_bytes("in", &f32s(&input));
        let out2 = mem2.alloc_bytes("out", &[0; 12]);
        let plain = run(
            &l.co,
            k,
            &l.program,
            &mem2,
            &[
                ArgValue::Pointer(inp2),
                ArgValue::Pointer(out2),
                ArgValue::Bytes((n as u32).to_le_bytes().to_vec()),
            ],
            &launch,
        )
        .unwrap();
        assert_eq!(stats.instructions, plain.instructions);
        assert_eq!(mem.contents(out), mem2.contents(out2));
        // Workgroups in order, each event once.
        assert_eq!(wgs.len(), 3);
        for (i, wg) in wgs.iter().enumerate() {
            assert_eq!(wg.wg, [i as u32, 0, 0]);
            // log2(256) + 1 barriers, every wave at each.
            assert_eq!(wg.barriers, 9, "workgroup {i}");
        }
        let total: usize = wgs.iter().map(|w| w.events.len()).sum();
        assert_eq!(total as u64, stats.instructions);
        // The global loads: lane l of wave w of workgroup g reads element
        // g*256 + w*64 + l (only where it is < n: the kernel branches).
        let mut loads: BTreeMap<u64, u32> = BTreeMap::new();
        let mut lds_writes = 0;
        for (g, wg) in wgs.iter().enumerate() {
            for (wave, index, exec, acc) in &wg.events {
                let text = &l.program.instructions[*index].text;
                for a in acc {
                    assert!(exec >> a.lane & 1 == 1, "{text}: lane {} is off", a.lane);
                    match (a.space, a.kind) {
                        (Space::Global, AccessKind::Read) => {
                            let e = (g as u64 * 256) + *wave as u64 * 64 + a.lane as u64;
                            assert_eq!(a.addr, inp + 4 * e, "{text}");
                            assert_eq!(a.bytes, 4);
                            *loads.entry(e).or_default() += 1;
                        }
                        (Space::Lds, AccessKind::Write) => {
                            assert!(a.addr < 1024 && a.bytes == 4, "{text}: {a:?}");
                            lds_writes += 1;
                        }
                        (Space::Global, AccessKind::Write) => {
                            assert_eq!(a.addr, out + 4 * g as u64, "{text}");
                        }
                        _ => {}
                    }
                }
            }
        }
        assert_eq!(loads.len(), n, "every element read once");
        assert!(loads.values().all(|&c| c == 1));
        // 768 initial writes, then 128 + 64 + … + 1 per workgroup.
        assert_eq!(lds_writes, 3 * (256 + 255));
        runs.push(wgs.into_iter().map(|w| w.events).collect::<Vec<_>>());
    }
    assert!(
        runs[0] == runs[1],
        "the observed stream does not depend on the thread count"
    );
}

/// Counts what it sees before and after each instruction, and checks the
/// wave's state in both.
#[derive(Default)]
struct Before {
    issued: Vec<(u32, usize)>,
    executed: Vec<(u32, usize)>,
}

impl Observer for Before {
    fn wants_issue(&self) -> bool {
        true
    }
    fn issue(&mut self, i: &Issue<'_>) {
        // The state before: the instruction is the wave's next one.
        assert_eq!(i.state.pc, i.index);
        self.issued.push((i.wave, i.index));
    }
    fn executed(&mut self, e: &Event<'_>) {
        // The state after: the wave has gone on (a branch may go back).
        assert_eq!(e.state.executed as usize, self.count(e.wave) + 1);
        self.executed.push((e.wave, e.index));
    }
}

impl Before {
    fn count(&self, wave: u32) -> usize {
        self.executed.iter().filter(|x| x.0 == wave).count()
    }
}

struct Befores;

impl Observe for Befores {
    type Workgroup = Before;
    fn workgroup(&self, _: [u32; 3]) -> Before {
        Before::default()
    }
}

#[test]
fn an_observer_may_look_at_each_instruction_before_it_runs() {
    let dir = tempfile_dir("issue");
    let path = build("reduce_sync", "gfx942", &dir);
    let l = load(&path, "reduce");
    let k = l.co.kernel("reduce").unwrap();
    let mem = Memory::new();
    let inp = mem.alloc_bytes("in", &f32s(&[1.0; 256]));
    let out = mem.alloc_bytes("out", &[0; 4]);
    let args = [
        ArgValue::Pointer(inp),
        ArgValue::Pointer(out),
        ArgValue::Bytes(256u32.to_le_bytes().to_vec()),
    ];
    let launch = Launch::new([1, 1, 1], [256, 1, 1]);
    let (stats, wgs) = run_observed(&l.co, k, &l.program, &mem, &args, &launch, &Befores).unwrap();
    assert_eq!(wgs[0].issued.len() as u64, stats.instructions);
    assert_eq!(
        wgs[0].issued, wgs[0].executed,
        "each issue, then its execution"
    );
}

/// The sanitizer observes the run beside the caller's observer: each sees
/// what it sees alone (the sanitizer its findings, the observer the same
/// events, wide accesses merged).
#[test]
fn the_sanitizer_and_an_observer_see_what_each_sees_alone() {
    let dir = tempfile_dir("both");
    let path = build("uninit", "gfx942", &dir);
    let l = load(&path, "shift_bug");
    let k = l.co.kernel("shift_bug").unwrap();
    let x: Vec<f32> = (0..512).map(|i| i as f32 + 0.5).collect();
    let go = |sanitize: Checks, observed: bool| {
        let mem = Memory::new();
        let args = [
            ArgValue::Pointer(mem.alloc_bytes("x", &f32s(&x))),
            ArgValue::Pointer(mem.alloc_bytes("out", &[0; 4 * 512])),
        ];
        let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
        launch.sanitize = sanitize;
        launch.threads = 1;
        if observed {
            let (s, w) = run_observed(&l.co, k, &l.program, &mem, &args, &launch, &Record).unwrap();
            (s, Some(w.into_iter().map(|w| w.events).collect::<Vec<_>>()))
        } else {
            (
                run(&l.co, k, &l.program, &mem, &args, &launch).unwrap(),
                None,
            )
        }
    };
    let (alone, _) = go(Checks::DEFAULT, false);
    assert_eq!(alone.findings.len(), 1, "{:?}", alone.findings);
    assert_eq!(alone.findings[0].kind, Kind::UninitializedLds);
    let (both, seen) = go(Checks::DEFAULT, true);
    assert_eq!(both.findings, alone.findings);
    let (_, unsanitized) = go(Checks::NONE, true);
    assert!(
        seen == unsanitized,
        "the observer's events change with the sanitizer"
    );
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
