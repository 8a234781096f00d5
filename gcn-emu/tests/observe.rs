//! The observer interface (`gcn_emu::observe`): what a subscriber sees of a
//! real kernel's run — every wave-instruction once, and each memory
//! instruction's lanes with the addresses the kernel's own indexing gives.

mod common;

use std::collections::BTreeMap;

use common::*;
use gcn_emu::dispatch::{run, run_observed, ArgValue, Launch};
use gcn_emu::memory::Memory;
use gcn_emu::observe::{Access, AccessKind, Event, Observe, Observer, Space};

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

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
