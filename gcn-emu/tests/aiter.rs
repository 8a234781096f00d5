//! aiter's hand-written kernels (the sample in tests/corpus/aiter, copied
//! unchanged from ROCm/aiter) run on inputs constructed here and compared
//! with a Rust reference.
//!
//! `topksoftmax_4x128x6` (gfx942 and gfx950; aiter's `topk_softmax_asm`,
//! csrc/py_itfs_cu/asm_topksoftmax.cu): the router of a mixture of experts.
//! For each token, the softmax of its 128 gating logits (f32), then the 6
//! largest probabilities in descending order with their expert indices;
//! with `renormalize` the 6 weights are divided by their sum. Four tokens
//! per workgroup of 256 work-items. Its arguments are aiter's packed
//! `KernelArgs`: pointers and u32 values in 16-byte slots (the pads are
//! arguments of their own in the metadata).

mod common;
use common::*;

const EXPERTS: usize = 128;
const TOPK: usize = 6;

fn kernel(target: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../tests/corpus/aiter/{target}/topksoftmax/topksoftmax_4x128x6.co"
    ))
}

/// (weights, indices) of every token.
fn reference(gating: &[f32], renormalize: bool) -> Vec<(Vec<f64>, Vec<u32>)> {
    gating
        .chunks(EXPERTS)
        .map(|row| {
            let m = row.iter().fold(f64::MIN, |a, &b| a.max(b as f64));
            let e: Vec<f64> = row.iter().map(|&v| (v as f64 - m).exp()).collect();
            let s: f64 = e.iter().sum();
            let mut idx: Vec<u32> = (0..EXPERTS as u32).collect();
            idx.sort_by(|&a, &b| row[b as usize].total_cmp(&row[a as usize]));
            idx.truncate(TOPK);
            let mut w: Vec<f64> = idx.iter().map(|&i| e[i as usize] / s).collect();
            if renormalize {
                let t: f64 = w.iter().sum();
                w.iter_mut().for_each(|x| *x /= t);
            }
            (w, idx)
        })
        .collect()
}

#[test]
fn aiter_topksoftmax_routes_tokens_like_the_reference() {
    // 10 tokens: three workgroups, the last one partly past `batch`.
    const TOKENS: usize = 10;
    for target in ["gfx942", "gfx950"] {
        let l = load(&kernel(target), "_ZN5aiter19topksoftmax_4x128x6E");
        for renormalize in [false, true] {
            let mut r = Rng(41);
            // Distinct logits in [-4, 4): no ties in the top 6.
            let mut gating: Vec<f32> = Vec::new();
            for _ in 0..TOKENS {
                let mut row: Vec<f32> = (0..EXPERTS).map(|i| i as f32 / 16.0 - 4.0).collect();
                for i in (1..EXPERTS).rev() {
                    row.swap(i, r.next_u32() as usize % (i + 1));
                }
                gating.extend(row);
            }
            let k = l.co.kernel(&l.name).unwrap();
            let args: Vec<A> = k
                .args
                .iter()
                .filter(|a| !a.is_hidden())
                .map(|a| match a.name.as_deref().unwrap_or("") {
                    "T" => A::Buf(vec![0xff; 4 * TOKENS * TOPK]),
                    "W" => A::Buf(vec![0xff; 4 * TOKENS * TOPK]),
                    "A" => A::Buf(f32s(&gating)),
                    "batch" => A::Val((TOKENS as u32).to_le_bytes().to_vec()),
                    "expert" => A::Val((EXPERTS as u32).to_le_bytes().to_vec()),
                    "topk" => A::Val((TOPK as u32).to_le_bytes().to_vec()),
                    "renormalize" => A::Val((renormalize as u32).to_le_bytes().to_vec()),
                    "out_stride" => A::Val((4 * TOPK as u32).to_le_bytes().to_vec()),
                    "pad" => A::Val(vec![0; a.size as usize]),
                    other => panic!("{target}: unexpected argument `{other}`"),
                })
                .collect();
            let (bufs, _) = launch(&l, [TOKENS.div_ceil(4) as u32, 1, 1], [256, 1, 1], args)
                .unwrap_or_else(|e| panic!("{target}: {e}"));
            let (indices, weights) = (to_u32(&bufs[0]), to_f32(&bufs[1]));
            for (t, (w, idx)) in reference(&gating, renormalize).iter().enumerate() {
                assert_eq!(
                    &indices[t * TOPK..(t + 1) * TOPK],
                    &idx[..],
                    "{target} renormalize={renormalize}: token {t}'s experts"
                );
                for j in 0..TOPK {
                    let g = weights[t * TOPK + j] as f64;
                    assert!(
                        (g - w[j]).abs() <= 1e-5 * w[j],
                        "{target} renormalize={renormalize}: token {t} weight {j}: {g} vs {}",
                        w[j]
                    );
                }
            }
        }
    }
}
