//! Launch descriptions (`gcn_emu::launch`) on a real kernel: HIP's saxpy
//! built with clang-22, its launch read from TOML, its random inputs from
//! seeds, the result checked against a Rust reference, and two runs
//! compared (the same object: equal; a mutated one: the differing elements).

// gcn_emu::Error is large by design (see the crate root).
use crate::common;
use common::*;

use gcn_emu::dispatch::{run, Launch};
use gcn_emu::launch::{compare, random_bytes, LaunchSpec, Output, Tolerance};
use gcn_emu::memory::Memory;
use gcn_emu::sanitize::Checks;

const SAXPY: &str = r#"
grid = 4
block = 256
args = [
  { scalar = "f32", value = 0.75 },
  { random = "f32", shape = 1000, seed = 1 },
  { random = "f32", shape = 1000, seed = 2, range = [-4, 4] },
  { scalar = "u32", value = 1000 },
]
"#;

fn run_spec(l: &Loaded, spec: &LaunchSpec) -> Vec<Output> {
    let mem = Memory::new();
    let k = l.co.kernel(&l.name).unwrap();
    let p = spec.prepare(k, &mem).unwrap();
    let mut launch = Launch::new(spec.grid.0, spec.block.0);
    launch.sanitize = Checks::DEFAULT;
    let stats = run(&l.co, k, &l.program, &mem, &p.values, &launch).unwrap();
    assert!(stats.findings.is_empty(), "{:?}", stats.findings);
    p.outputs(&mem)
}

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gcn-emu-launch-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_toml_launch_runs_saxpy_on_seeded_inputs_and_matches_the_reference() {
    let spec: LaunchSpec = toml::from_str(SAXPY).unwrap();
    let d = dir();
    for t in TARGETS {
        let l = load(&build("saxpy", t, &d), "saxpy");
        let out = run_spec(&l, &spec);
        assert_eq!(out.len(), 2, "two buffers: x and y");
        let x = to_f32(&random_bytes(
            gcn_emu::launch::Dtype::F32,
            1000,
            1,
            (-1.0, 1.0),
        ));
        let y0 = to_f32(&random_bytes(
            gcn_emu::launch::Dtype::F32,
            1000,
            2,
            (-4.0, 4.0),
        ));
        assert_eq!(
            to_f32(&out[0].data),
            x,
            "{t}: x is the seed-1 input, untouched"
        );
        let y = to_f32(&out[1].data);
        for i in 0..1000 {
            assert_eq!(
                y[i].to_bits(),
                0.75f32.mul_add(x[i], y0[i]).to_bits(),
                "{t}: y[{i}]"
            );
        }
        assert_eq!((out[0].buffer.index, out[1].buffer.index), (1, 2));
    }
}

#[test]
fn compare_finds_nothing_between_equal_runs_and_every_element_a_mutant_changes() {
    let spec: LaunchSpec = toml::from_str(SAXPY).unwrap();
    let d = dir();
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/hip/gfx942/saxpy.s");
    let original = load(&assemble(&src, "gfx942", "saxpy-orig", &d), "saxpy");
    // y = a + x instead of a·x + y.
    let text = std::fs::read_to_string(&src).unwrap();
    assert!(text.contains("v_fmac_f32_e32 v5, s2, v4"));
    let mutated = d.join("saxpy-mutated.s");
    std::fs::write(
        &mutated,
        text.replace("v_fmac_f32_e32 v5, s2, v4", "v_add_f32_e32 v5, s2, v4"),
    )
    .unwrap();
    let mutant = load(&assemble(&mutated, "gfx942", "saxpy-mutated", &d), "saxpy");

    let a = run_spec(&original, &spec);
    let same = compare(&a, &run_spec(&original, &spec), Tolerance::Exact, 3).unwrap();
    assert!(same.equal());

    let b = run_spec(&mutant, &spec);
    let c = compare(&a, &b, Tolerance::Exact, 3).unwrap();
    assert!(!c.equal());
    assert_eq!(c.buffers[0].differing, 0, "x is not written");
    assert_eq!(c.buffers[1].differing, 1000, "every y differs");
    let x = to_f32(&a[0].data);
    let first = &c.buffers[1].first[0];
    assert_eq!(first.index, [0]);
    assert_eq!(first.b, format!("{:?}", 0.75f32 + x[0]));
    assert_eq!(c.buffers[1].first.len(), 3);
    // A tolerance wider than every difference lets it pass.
    let wide = compare(
        &a,
        &b,
        Tolerance::Close {
            abs: 100.0,
            rel: 0.0,
        },
        3,
    )
    .unwrap();
    assert!(wide.equal());
}

#[test]
fn a_launch_that_does_not_fit_the_kernel_names_the_argument() {
    let d = dir();
    let l = load(&build("saxpy", "gfx942", &d), "saxpy");
    let k = l.co.kernel("saxpy").unwrap();
    let cases = [
        ("args = []", "takes 4 explicit argument(s), the launch gives 0"),
        (
            "args = [{ scalar = \"f64\", value = 1 }, { null = true }, { null = true }, { scalar = \"u32\", value = 1 }]",
            "argument 0 (by_value, 4 bytes) is 4 bytes, the scalar's dtype f64 is 8",
        ),
        (
            "args = [{ scalar = \"f32\", value = 1 }, { scalar = \"u64\", value = 0 }, { null = true }, { scalar = \"u32\", value = 1 }]",
            "argument 1 (global_buffer, 8 bytes) is a pointer",
        ),
        (
            "args = [{ output = \"f32\", shape = 4 }, { null = true }, { null = true }, { scalar = \"u32\", value = 1 }]",
            "argument 0 (by_value, 4 bytes) takes a value",
        ),
    ];
    for (args, want) in cases {
        let spec: LaunchSpec = toml::from_str(&format!("grid = 1\nblock = 64\n{args}")).unwrap();
        let e = spec.check(k).unwrap_err().to_string();
        assert!(e.contains(want), "{args}\n{e}\nwanted: {want}");
    }
}
