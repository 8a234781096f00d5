//! LDS accesses outside the workgroup's allocation (static + dynamic LDS)
//! on every path that reaches LDS: `ds_*` (gcn-patch/tests/it/lds.rs), flat
//! accesses in the LDS aperture and LDS DMA. Real kernels compiled by
//! clang-22, run with a smaller allocation than they declare: the accesses
//! are counted ([`Stats::lds_out_of_range`]) and, with the sanitizer, each
//! instruction that makes one is a finding naming it, the lane, the offset
//! and the allocation; the run goes on.

mod common;

use common::*;
use gcn_emu::dispatch::{Launch, Stats};
use gcn_emu::sanitize::Kind;

/// `l` with its descriptor's static LDS set to `bytes`.
fn with_static_lds(mut l: Loaded, bytes: u32) -> Loaded {
    for k in l.co.kernels.iter_mut() {
        k.descriptor.group_segment_fixed_size = bytes;
    }
    l
}

/// Run without and with the sanitizer: (stats, stats with the sanitizer).
fn both(l: &Loaded, args: impl Fn() -> Vec<A>, dynamic: u32) -> (Stats, Stats) {
    let k = l.co.kernel(&l.name).unwrap();
    let run = |sanitize: bool| {
        let mem = gcn_emu::memory::Memory::new();
        let vals: Vec<_> = args()
            .into_iter()
            .enumerate()
            .map(|(i, a)| match a {
                A::Buf(b) => {
                    gcn_emu::dispatch::ArgValue::Pointer(mem.alloc_bytes(&format!("arg{i}"), &b))
                }
                A::Val(v) => gcn_emu::dispatch::ArgValue::Bytes(v),
            })
            .collect();
        let mut launch = Launch::new([1, 1, 1], [64, 1, 1]);
        launch.dynamic_lds = dynamic;
        launch.sanitize = sanitize.into();
        gcn_emu::dispatch::run(&l.co, k, &l.program, &mem, &vals, &launch).unwrap()
    };
    (run(false), run(true))
}

fn lds_findings(s: &Stats) -> Vec<String> {
    s.findings
        .iter()
        .filter(|f| f.kind == Kind::LdsOutOfBounds)
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn flat_accesses_in_the_lds_aperture_are_bounded_by_the_allocation() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-lds-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // `s[64]` of ints: 256 bytes; give it 64 static + 64 dynamic.
    let l = with_static_lds(load(&build("flat_lds", "gfx942", &dir), "flat_lds"), 64);
    let args = || {
        vec![
            A::Buf(vec![0; 256]),
            A::Buf(vec![0xEE; 256]),
            A::Val(1i32.to_le_bytes().to_vec()),
        ]
    };
    let (plain, san) = both(&l, args, 64);
    assert!(plain.findings.is_empty());
    // Lanes 32..63 store, add and load outside (3 instructions × 32 lanes);
    // the loads of lanes 31 and 63 ((lane + 1) & 63) and the atomics of
    // lanes 27..31 and 59..63 ((lane + 5) & 63) move the boundary.
    assert!(plain.lds_out_of_range >= 90, "{plain:?}");
    assert_eq!(san.lds_out_of_range, plain.lds_out_of_range);
    let f = lds_findings(&san);
    assert!(!f.is_empty(), "{:?}", san.findings);
    assert!(
        f.iter().any(|m| m.contains("`flat_store_dword")
            && m.contains(", lane 32: 4-byte LDS write at offset 0x80 is outside the workgroup's LDS allocation of 128 bytes (64 static from the descriptor + 64 dynamic from the launch)")),
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|m| m.contains("`flat_load_dword") && m.contains("LDS read")),
        "{f:#?}"
    );
    // With its whole allocation: nothing.
    let l = with_static_lds(l, 256);
    let (plain, san) = both(&l, args, 0);
    assert_eq!(plain.lds_out_of_range, 0);
    assert!(lds_findings(&san).is_empty(), "{:?}", san.findings);
}

#[test]
fn lds_dma_past_the_allocation_is_dropped_and_reported() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-lds-dma-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // a[80] then b[80] (ints): 640 bytes; with 320, all of b is outside.
    let l = with_static_lds(load(&build("lds_dma", "gfx942", &dir), "lds_dma"), 320);
    let x: Vec<u32> = (0..128).map(|i| 5000 + i).collect();
    let args = || {
        vec![
            A::Buf(u32s(&x)),
            A::Buf(vec![0xEE; 4 * 128]),
            A::Val(50i32.to_le_bytes().to_vec()),
        ]
    };
    let (plain, san) = both(&l, args, 0);
    assert!(
        plain.lds_out_of_range >= 128,
        "DMA writes and reads of b: {plain:?}"
    );
    let f = lds_findings(&san);
    assert!(
        f.iter().any(|m| m.contains("`global_load_lds_dword")
            && m.contains(", lane 0: 4-byte LDS write at offset 0x140 is outside the workgroup's LDS allocation of 320 bytes (320 static from the descriptor + 0 dynamic from the launch)")),
        "{f:#?}"
    );
}
