// VOPD pairs (RDNA dual issue), each pinned to registers that meet the
// pairing rules (RDNA3 ISA guide 7.6: X and Y src0 in different VGPR banks,
// likewise vsrc1; destinations one even, one odd). Inputs: io[0..32) a,
// [32..64) b, [64..96) c, [96..128) d, [128..160) x's old destination,
// [160..192) y's; outputs: x's destination at [192..224), y's at [224..256).
// RDNA only: tests/isa.rs builds every kernel here for CDNA too, where
// the file is empty.
#if defined(__GFX11__) || defined(__GFX12__)
#define __global__ __attribute__((global))
#define PAIR(NAME, ASM)                                                        \
  extern "C" __global__ void NAME(float *io) {                                 \
    int i = __builtin_amdgcn_workitem_id_x();                                                     \
    float a = io[i], b = io[32 + i], c = io[64 + i], d = io[96 + i];           \
    float x = io[128 + i], y = io[160 + i];                                    \
    asm volatile(ASM                                                           \
                 : "+{v10}"(x), "+{v11}"(y)                                    \
                 : "{v4}"(a), "{v5}"(b), "{v6}"(c), "{v7}"(d)                  \
                 : "vcc");                                                     \
    io[192 + i] = x;                                                           \
    io[224 + i] = y;                                                           \
  }
#if defined(__gfx1200__) || defined(__gfx1201__)
#define MAX "v_dual_max_num_f32"
#define MIN "v_dual_min_num_f32"
#else
#define MAX "v_dual_max_f32"
#define MIN "v_dual_min_f32"
#endif
PAIR(fmac_fmaak, "v_dual_fmac_f32 v10, v4, v5 :: v_dual_fmaak_f32 v11, v6, v7, 0x40400000")
PAIR(fmamk_mul, "v_dual_fmamk_f32 v10, v4, 0x3fc00000, v5 :: v_dual_mul_f32 v11, v6, v7")
PAIR(add_sub, "v_dual_add_f32 v10, v4, v5 :: v_dual_sub_f32 v11, v6, v7")
PAIR(subrev_dx9, "v_dual_subrev_f32 v10, v4, v5 :: v_dual_mul_dx9_zero_f32 v11, v6, v7")
PAIR(mov_cndmask, "v_cmp_lt_f32_e32 vcc_lo, 0, v6\n v_dual_mov_b32 v10, v4 :: v_dual_cndmask_b32 v11, v6, v7")
PAIR(cndmask_mov, "v_cmp_lt_f32_e32 vcc_lo, 0, v5\n v_dual_cndmask_b32 v10, v4, v5 :: v_dual_mov_b32 v11, 1.0")
PAIR(max_min, MAX " v10, v4, v5 :: " MIN " v11, v6, v7")
PAIR(dot2_f16_bf16, "v_dual_dot2acc_f32_f16 v10, v4, v5 :: v_dual_dot2acc_f32_bf16 v11, v6, v7")
PAIR(mul_addnc, "v_dual_mul_f32 v10, v4, v5 :: v_dual_add_nc_u32 v11, v6, v7")
PAIR(add_lshlrev, "v_dual_add_f32 v10, v4, v5 :: v_dual_lshlrev_b32 v11, v6, v7")
PAIR(sub_and, "v_dual_sub_f32 v10, v4, v5 :: v_dual_and_b32 v11, v6, v7")
// Y reads X's destination: it gets the old value.
PAIR(y_reads_x, "v_dual_mul_f32 v10, v4, v5 :: v_dual_add_f32 v11, v10, v7")
// Each reads the other's destination: a swap.
PAIR(swap, "v_dual_mov_b32 v10, v11 :: v_dual_mov_b32 v11, v10")
#endif
