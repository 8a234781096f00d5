//! CDNA's dot products (`v_dot2_f32_f16`, `v_dot2c_f32_f16`,
//! `v_dot2_i32_i16`, `v_dot2c_i32_i16`, `v_dot2_u32_u16`, `v_dot4_i32_i8`,
//! `v_dot4c_i32_i8`, `v_dot4_u32_u8`, `v_dot8_i32_i4`, `v_dot8c_i32_i4`,
//! `v_dot8_u32_u4`, and gfx950's `v_dot2_f32_bf16`/`v_dot2c_f32_bf16`),
//! from clang-22's builtins (`tests/kernels/dot.hip`, clamp off and on) on
//! gfx90a, gfx942 and gfx950, against NumPy: the integer forms exactly
//! (64-bit sums, wrapped or saturated), the f16/bf16 forms bit-exactly
//! under the CDNA3 ISA pseudo-code's order (two f32 sums, each rounded;
//! the products are exact in f32), clamp to [0, 1].

use crate::common;
use common::*;

const NUMPY: &str = r#"
x = np.frombuffer(a0, np.uint32).astype(np.uint64)
y = np.frombuffer(a1, np.uint32).astype(np.uint64)
z = np.frombuffer(a2, np.uint32)
n = len(z)
o = np.zeros((n, 16), np.uint32)
def fdot(dt):
    def h(v, k):
        w = ((v >> (16 * k)) & 0xffff).astype(np.uint16)
        if dt == 'f16':
            return w.view(np.float16).astype(np.float32)
        return (w.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(all='ignore'):
        t = z.view(np.float32) + h(x, 0) * h(y, 0)
        t = (t + h(x, 1) * h(y, 1)).astype(np.float32)
        c = np.clip(t, np.float32(0), np.float32(1))
    r = []
    for v in (t, c):
        b = v.view(np.uint32).copy()
        b[np.isnan(v)] = 0x7fc00000
        r.append(b)
    return r
def idot(nel, signed):
    bits = 32 // nel
    def el(v, i):
        e = ((v >> np.uint64(bits * i)) & np.uint64((1 << bits) - 1)).astype(np.int64)
        if signed:
            e = np.where(e >= (1 << (bits - 1)), e - (1 << bits), e)
        return e
    acc = z.view(np.int32).astype(np.int64) if signed else z.astype(np.int64)
    for i in range(nel):
        acc = acc + el(x, i) * el(y, i)
    wrap = (acc & 0xffffffff).astype(np.uint32)
    lo, hi = (-(1 << 31), (1 << 31) - 1) if signed else (0, (1 << 32) - 1)
    sat = (np.clip(acc, lo, hi) & 0xffffffff).astype(np.uint32)
    return [wrap, sat]
o[:, 0], o[:, 1] = fdot('f16')
for k, (nel, s) in enumerate([(2, True), (2, False), (4, True), (4, False), (8, True), (8, False)]):
    o[:, 2 + 2 * k], o[:, 3 + 2 * k] = idot(nel, s)
o[:, 14], o[:, 15] = fdot('bf16')
out = [o]
"#;

/// Inputs: random words, small f16/bf16 values (in [-2, 2]: the
/// accumulator's rounding and the [0, 1] clamp both matter), extreme
/// integers, and accumulators at the i32/u32 limits (clamp saturates).
fn inputs() -> [Vec<u32>; 3] {
    let mut r = Rng(0x00d0_7d07);
    let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
    for lane in 0..64u32 {
        let (x, y, z) = match lane % 4 {
            0 => (r.next_u32(), r.next_u32(), r.next_u32()),
            1 => {
                let h = |r: &mut Rng| half::f16::from_f32(r.f32() * 2.0).to_bits() as u32;
                let x = h(&mut r) | h(&mut r) << 16;
                let y = h(&mut r) | h(&mut r) << 16;
                (x, y, (r.f32() * 0.5).to_bits())
            }
            2 => {
                let h = |r: &mut Rng| half::bf16::from_f32(r.f32() * 2.0).to_bits() as u32;
                let x = h(&mut r) | h(&mut r) << 16;
                let y = h(&mut r) | h(&mut r) << 16;
                (x, y, (r.f32() * 0.5 + 0.5).to_bits())
            }
            _ => {
                let ext = [
                    0x7fff_7fff,
                    0x8000_8000,
                    0xffff_ffff,
                    0x7f7f_7f7f,
                    0x8080_8080,
                ];
                let lim = [0x7fff_fff0u32, 0x8000_0010, 0xffff_fff0, 0x10];
                (
                    ext[r.next_u32() as usize % ext.len()],
                    ext[r.next_u32() as usize % ext.len()],
                    lim[r.next_u32() as usize % lim.len()],
                )
            }
        };
        a.push(x);
        b.push(y);
        c.push(z);
    }
    [a, b, c]
}

#[test]
fn dot_products_match_numpy_on_cdna() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let [a, b, c] = inputs();
    let want = numpy(NUMPY, &[&u32s(&a), &u32s(&b), &u32s(&c)]);
    let want = to_u32(&want[0]);
    for target in ["gfx90a", "gfx942", "gfx950"] {
        let l = load(&build("dot", target, &dir), "dots");
        let seen: Vec<String> = l
            .program
            .instructions
            .iter()
            .map(|i| i.mnemonic.clone())
            .filter(|m| m.starts_with("v_dot"))
            .collect();
        assert!(
            seen.len() >= 12,
            "{target}: too few dot instructions: {seen:?}"
        );
        let (out, _) = launch(
            &l,
            [1, 1, 1],
            [64, 1, 1],
            vec![
                A::Buf(u32s(&a)),
                A::Buf(u32s(&b)),
                A::Buf(u32s(&c)),
                A::Buf(vec![0; 64 * 16 * 4]),
            ],
        )
        .unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = to_u32(&out[3]);
        let cols = if target == "gfx950" { 16 } else { 14 };
        for lane in 0..64 {
            for k in 0..cols {
                let (g, w) = (got[lane * 16 + k], want[lane * 16 + k]);
                assert_eq!(
                    g, w,
                    "{target} lane {lane} column {k} (a {:#x} b {:#x} c {:#x}): {g:#x} != NumPy's {w:#x}",
                    a[lane], b[lane], c[lane]
                );
            }
        }
    }
}
