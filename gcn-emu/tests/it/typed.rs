//! The typed executor (`gcn_emu::typed`, instructions decoded once) against
//! the reference executor (`gcn_emu::exec`): every instruction of the
//! corpora that lowers to a typed operation — the HIP test kernels built by
//! clang-22 for gfx942/gfx950, IREE's and Triton's objects, the aiter
//! sample — runs on both from random wave states (random registers, exec
//! mask and scc; see `typed::differential`), and every register, scc and
//! the program counter must agree.

use crate::common;

use std::path::{Path, PathBuf};

use gcn_emu::decode::{find_objdump, Program};
use gcn_emu::load::CodeObject;

fn objects(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("{}: missing (run tests/setup.sh)", dir.display());
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            objects(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("co" | "hsaco")) {
            out.push(p);
        }
    }
}

/// Instructions the corpora run too rarely (or in too few forms) to cover
/// the typed lowering of issue 33's long tail: f64 arithmetic with its
/// modifiers and constants, 64-bit compares, cross-lane moves, scalar bit
/// operations, saveexec, scalar loads and global atomics, CDNA's dot
/// products with scalar and constant sources, `ds_rsub_*` (each form once);
/// and registers of the unified VGPR/AGPR file under both names (the
/// random states' AGPRs are `v128` up: `a44` is `v172`).
const TAIL: &str = r"
  ds_rsub_u32 v1, v2
  ds_rsub_rtn_u32 v0, v1, v2 offset:8
  ds_rsub_u64 v1, v[2:3] offset:16
  ds_rsub_rtn_u64 v[4:5], v1, v[2:3]
  v_dot2_f32_f16 v0, v1, s2, v3
  v_dot2_i32_i16 v0, s1, v2, 7 clamp
  v_dot4_u32_u8 v0, v1, v2, -1 clamp
  v_dot8_i32_i4 v0, v1, v2, s3
  v_dot2c_f32_f16_e64 v0, v1, v2
  v_dot4c_i32_i8_e32 v0, 5, v2
  v_dot2_f32_f16 v0, v1, v2, v3 clamp
  v_add_f64 v[0:1], v[2:3], -v[4:5]
  v_add_f64 v[0:1], |v[2:3]|, s[4:5]
  v_mul_f64 v[0:1], v[2:3], 0x40100000
  v_mul_f64 v[0:1], 2.0, v[2:3] clamp
  v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7] mul:2
  v_fma_f64 v[0:1], -v[2:3], v[4:5], |v[6:7]| div:2
  v_fmac_f64_e32 v[0:1], v[2:3], v[4:5]
  v_min_f64 v[0:1], v[2:3], v[4:5]
  v_max_f64 v[0:1], -v[2:3], v[4:5]
  v_rcp_f64_e32 v[0:1], v[2:3]
  v_sqrt_f64_e32 v[0:1], v[2:3]
  v_rsq_f64_e64 v[0:1], |v[2:3]|
  v_floor_f64_e32 v[0:1], v[2:3]
  v_ceil_f64_e32 v[0:1], v[2:3]
  v_trunc_f64_e32 v[0:1], v[2:3]
  v_rndne_f64_e32 v[0:1], v[2:3]
  v_ldexp_f64 v[0:1], v[2:3], v4
  v_ldexp_f64 v[0:1], -v[2:3], 5
  v_div_scale_f64 v[0:1], vcc, v[2:3], v[4:5], v[2:3]
  v_div_scale_f64 v[0:1], s[10:11], v[2:3], v[4:5], v[4:5]
  v_div_fmas_f64 v[0:1], v[2:3], v[4:5], v[6:7]
  v_div_fixup_f64 v[0:1], v[2:3], v[4:5], v[6:7]
  v_cvt_f64_f32_e32 v[0:1], v2
  v_cvt_f64_f32_e64 v[0:1], -|v2|
  v_cvt_f64_i32_e32 v[0:1], v2
  v_cvt_f64_u32_e32 v[0:1], v2
  v_cvt_f32_f64_e32 v0, v[2:3]
  v_cvt_i32_f64_e32 v0, v[2:3]
  v_cvt_u32_f64_e32 v0, v[2:3]
  v_cmp_lt_f64_e32 vcc, v[2:3], v[4:5]
  v_cmp_nge_f64_e64 s[10:11], -v[2:3], v[4:5]
  v_cmpx_gt_f64_e64 s[10:11], v[2:3], v[4:5]
  v_cmp_u_f64_e32 vcc, v[2:3], v[4:5]
  v_cmp_class_f64_e32 vcc, v[2:3], v4
  v_cmp_class_f64_e64 s[10:11], -v[2:3], s4
  v_cmp_lt_u64_e32 vcc, v[2:3], v[4:5]
  v_cmp_ge_i64_e64 s[10:11], v[2:3], s[4:5]
  v_cmp_ne_u64_e32 vcc, 0, v[2:3]
  v_readlane_b32 s10, v2, s4
  v_readlane_b32 s10, v2, 5
  v_readfirstlane_b32 s10, v2
  v_writelane_b32 v2, s10, m0
  v_writelane_b32 v2, s10, 9
  s_and_saveexec_b64 s[10:11], s[4:5]
  s_or_saveexec_b64 s[10:11], s[4:5]
  s_xor_saveexec_b64 s[10:11], s[4:5]
  s_andn2_saveexec_b64 s[10:11], vcc
  s_orn2_saveexec_b64 s[10:11], s[4:5]
  s_nand_saveexec_b64 s[10:11], s[4:5]
  s_nor_saveexec_b64 s[10:11], s[4:5]
  s_xnor_saveexec_b64 s[10:11], s[4:5]
  s_andn1_saveexec_b64 s[10:11], s[4:5]
  s_orn1_saveexec_b64 s[10:11], s[4:5]
  s_bfe_u32 s10, s4, s5
  s_bfe_i32 s10, s4, 0x80004
  s_bfe_u64 s[10:11], s[4:5], s6
  s_bfe_i64 s[10:11], s[4:5], 0x200008
  s_bfm_b32 s10, s4, s5
  s_bfm_b64 s[10:11], s4, s5
  s_brev_b32 s10, s4
  s_brev_b64 s[10:11], s[4:5]
  s_bcnt1_i32_b32 s10, s4
  s_bcnt1_i32_b64 s10, s[4:5]
  s_ff1_i32_b32 s10, s4
  s_ff1_i32_b64 s10, s[4:5]
  s_flbit_i32_b32 s10, s4
  s_flbit_i32_b64 s10, s[4:5]
  s_not_b32 s10, s4
  s_not_b64 s[10:11], s[4:5]
  s_nand_b32 s10, s4, s5
  s_nor_b32 s10, s4, s5
  s_xnor_b32 s10, s4, s5
  s_nand_b64 s[10:11], s[4:5], s[6:7]
  s_nor_b64 s[10:11], s[4:5], s[6:7]
  s_xnor_b64 s[10:11], s[4:5], s[6:7]
  s_ashr_i64 s[10:11], s[4:5], s6
  s_sext_i32_i8 s10, s4
  s_sext_i32_i16 s10, s4
  s_abs_i32 s10, s4
  s_absdiff_i32 s10, s4, s5
  s_pack_ll_b32_b16 s10, s4, s5
  s_pack_lh_b32_b16 s10, s4, s5
  s_pack_hh_b32_b16 s10, s4, s5
  s_mulk_i32 s10, 0x1234
  s_load_dword s10, s[4:5], 0x10
  s_load_dwordx2 s[10:11], s[4:5], s6
  s_load_dwordx4 s[12:15], s[4:5], 0x0
  s_load_dwordx8 s[16:23], s[4:5], 0x40
  s_load_dwordx16 s[16:31], s[4:5], 0x0 glc
  global_atomic_add v[2:3], v4, off
  global_atomic_add v6, v2, v4, s[8:9] offset:16 sc0
  global_atomic_sub v6, v[2:3], v4, off sc0
  global_atomic_smin v[2:3], v4, off
  global_atomic_smax v[2:3], v4, off offset:-8
  global_atomic_umin v[2:3], v4, off
  global_atomic_umax v6, v[2:3], v4, off sc0
  global_atomic_and v[2:3], v4, off
  global_atomic_or v[2:3], v4, off
  global_atomic_xor v[2:3], v4, off
  global_atomic_inc v6, v[2:3], v4, off sc0
  global_atomic_dec v6, v[2:3], v4, off sc0
  global_atomic_swap v6, v[2:3], v4, off sc0
  global_atomic_cmpswap v6, v[2:3], v[4:5], off sc0
  global_atomic_cmpswap_x2 v[6:7], v[2:3], v[8:11], off sc0
  global_atomic_add_x2 v[6:7], v[2:3], v[4:5], off sc0
  global_atomic_smax_x2 v[2:3], v[4:5], off
  global_atomic_add_f32 v[2:3], v4, off
  global_atomic_add_f64 v[6:7], v[2:3], v[4:5], off sc0
  global_atomic_max_f64 v[2:3], v[4:5], off
  global_atomic_min_f64 v[2:3], v[4:5], off
  global_atomic_pk_add_f16 v6, v[2:3], v4, off sc0
  global_atomic_pk_add_bf16 v[2:3], v4, off
  ds_add_u32 v2, v4 offset:16
  ds_add_rtn_u32 v6, v2, v4
  ds_sub_u32 v2, v4
  ds_min_i32 v2, v4
  ds_max_rtn_u32 v6, v2, v4
  ds_and_b32 v2, v4
  ds_or_rtn_b32 v6, v2, v4
  ds_xor_b32 v2, v4
  ds_inc_rtn_u32 v6, v2, v4
  ds_dec_u32 v2, v4
  ds_wrxchg_rtn_b32 v6, v2, v4
  ds_cmpst_rtn_b32 v6, v2, v4, v5
  ds_cmpst_b64 v2, v[4:5], v[6:7]
  ds_add_u64 v2, v[4:5]
  ds_add_rtn_u64 v[6:7], v2, v[4:5]
  ds_max_i64 v2, v[4:5]
  ds_add_f32 v2, v4
  ds_add_rtn_f32 v6, v2, v4
  ds_max_f32 v2, v4
  ds_min_rtn_f64 v[6:7], v2, v[4:5]
  ds_add_f64 v2, v[4:5]
  ds_pk_add_f16 v2, v4
  ds_pk_add_rtn_bf16 v6, v2, v4
  scratch_load_dword v0, v1, off
  scratch_load_dwordx2 v[0:1], off, s4 offset:16
  scratch_load_dwordx4 v[8:11], v1, s4
  scratch_load_sbyte v0, v1, s4
  scratch_load_ushort v0, v1, off offset:2
  scratch_load_sshort v0, v1, off
  scratch_store_dwordx4 v1, v[4:7], off
  scratch_store_byte v1, v2, s4
  scratch_store_short v1, v2, off offset:6
  scratch_store_dwordx3 off, v[4:6], s4 offset:32
  v_mfma_i32_16x16x32_i8 v[0:3], v[4:5], v[6:7], v[8:11]
  v_mfma_i32_16x16x32_i8 a[0:3], v[4:5], v[6:7], 0
  v_mfma_i32_32x32x16_i8 a[0:15], v[4:5], v[6:7], a[0:15]
  v_accvgpr_write_b32 a44, v2
  v_accvgpr_read_b32 v0, a44
  v_mov_b32_e32 v172, v2
  v_mfma_f32_16x16x4f32 a[40:43], v172, v173, a[40:43]
  v_mfma_f32_16x16x4f32 v[168:171], v1, v172, v[168:171]
  v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,1]
  v_fma_mix_f32 v0, -v1, |v2|, v3 op_sel:[1,0,1] op_sel_hi:[1,1,0] clamp
  v_fma_mix_f32 v0, v1, s2, 1.0 op_sel_hi:[0,1,0]
  v_fma_mixlo_f16 v0, v1, v2, v3 op_sel_hi:[1,1,1]
  v_fma_mixhi_f16 v0, v1, -v2, v3 op_sel:[0,1,0] op_sel_hi:[1,1,1] clamp
  v_div_fixup_f16 v0, v1, v2, v3
  v_div_fixup_f16 v0, -v1, |v2|, 1.0
  v_add_u16_e32 v0, v1, v2
  v_sub_u16_e64 v0, s1, v2
  v_subrev_u16_e32 v0, 7, v2
  v_mul_lo_u16_e32 v0, v1, v2
  v_add_i16 v0, v1, v2
  v_add_u16_e64 v0, v1, v2 clamp
  v_sub_u16_e64 v0, v1, v2 clamp
  v_subrev_u16_e64 v0, v1, v2 clamp
  v_add_i16 v0, v1, v2 clamp
  v_sub_i16 v0, v1, v2 clamp
  v_add_u32_e64 v0, v1, v2 clamp
  v_sub_u32_e64 v0, v1, v2 clamp
  v_subrev_u32_e64 v0, v1, v2 clamp
  v_add_i32 v0, v1, v2 clamp
  v_sub_i32 v0, v1, v2 clamp
  s_barrier
  v_cmp_class_f32_e32 vcc, v1, v2
  v_cmp_class_f32_e64 s[4:5], -|v1|, s6
  v_cmpx_class_f32_e64 s[4:5], v1, 3
  v_mov_b32_dpp v0, v1 row_newbcast:5 row_mask:0xf bank_mask:0xf
  s_set_gpr_idx_on s2, gpr_idx(SRC0,DST)
  s_set_gpr_idx_idx s3
  s_set_gpr_idx_mode gpr_idx(SRC1)
  s_set_gpr_idx_off
  s_setvskip s2, s3
  s_trap 2
  s_mov_b64 s[2:3], src_shared_base
  s_mov_b64 s[2:3], src_private_base
  flat_load_dword v0, v[2:3]
  flat_load_dwordx2 v[0:1], v[2:3] offset:8
  flat_load_dwordx4 v[4:7], v[2:3]
  flat_load_ubyte v0, v[2:3]
  flat_load_sshort v0, v[2:3] offset:2
  flat_store_dword v[2:3], v4
  flat_store_dwordx4 v[2:3], v[4:7] offset:16
  flat_store_byte v[2:3], v4 offset:3
  flat_store_short v[2:3], v4
  flat_atomic_add v[2:3], v4
  flat_atomic_add v0, v[2:3], v4 sc0
  flat_atomic_umax v0, v[2:3], v4 offset:4 sc0
  flat_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7] sc0
  flat_atomic_add_f32 v[2:3], v4
  buffer_atomic_add v4, off, s[8:11], 0
  buffer_atomic_add v4, v2, s[8:11], s12 offen sc0
  buffer_atomic_add_f32 v4, v2, s[8:11], 0 offen offset:16
  buffer_atomic_umax v4, v2, s[8:11], s12 idxen sc0
  buffer_atomic_cmpswap_x2 v[4:7], v[2:3], s[8:11], 0 idxen offen sc0
  buffer_atomic_smin_x2 v[4:5], v2, s[8:11], 0 offen
  buffer_atomic_pk_add_f16 v4, v2, s[8:11], 0 offen
  v_mfma_f32_16x16x32_fp8_fp8 v[0:3], v[4:5], v[6:7], v[8:11]
  v_mfma_f32_32x32x16_bf8_fp8 a[0:15], v[4:5], v[6:7], 0
  v_mfma_f32_16x16x32_fp8_bf8 v[0:3], v[4:5], v[6:7], 1.0
  v_cvt_pk_u8_f32 v0, v1, v2, v3
  v_cvt_pk_u8_f32 v0, s1, 3, v3
  ds_bpermute_b32 v0, v1, v2 offset:4
  ds_permute_b32 v0, v1, v2
  ds_swizzle_b32 v0, v1 offset:swizzle(QUAD_PERM,1,0,3,2)
  ds_swizzle_b32 v0, v1 offset:swizzle(SWAP,1)
  ds_swizzle_b32 v0, v1 offset:swizzle(BROADCAST,8,3)
  v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[0,1]
  v_pk_mov_b32 v[0:1], s[2:3], v[4:5] op_sel:[1,0]
  v_pk_mov_b32 v[0:1], v[2:3], 1.0
  v_cvt_off_f32_i4_e32 v0, v1
  global_load_lds_dword v[2:3], off
  global_load_lds_dword v2, s[4:5] offset:16
  s_store_dword s5, s[0:1], 0x4
  s_store_dwordx2 s[6:7], s[0:1], s8 offset:0x10
  s_store_dwordx4 s[8:11], s[0:1], 0x0 glc
  s_atomic_add s4, s[0:1], 0x0 glc
  s_atomic_umax s5, s[0:1], 0x8
  s_atomic_cmpswap_x2 s[4:7], s[0:1], s8 glc
  s_atomic_xor_x2 s[4:5], s[0:1], 0x10
  v_add_u32_sdwa v0, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2 src1_sel:WORD_1
  v_lshlrev_b32_sdwa v0, v1, sext(v2) dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:BYTE_0
  v_mul_f32_sdwa v0, -v1, |v2| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
  v_mov_b32_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_3
  v_and_b32_sdwa v0, s1, v2 dst_sel:BYTE_0 dst_unused:UNUSED_SEXT src0_sel:DWORD src1_sel:BYTE_2
  v_cvt_f16_f32_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD
  v_max_i32_sdwa v0, sext(v1), v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD
  v_cvt_f32_fp8_sdwa v0, v14 src0_sel:BYTE_1
  v_cvt_f32_bf8_e32 v0, v1
  v_cvt_pk_f32_fp8_e32 v[8:9], v14
  v_cvt_pk_f32_bf8_sdwa v[10:11], v14 src0_sel:WORD_1
  v_cvt_pk_fp8_f32 v7, v2, v3
  v_cvt_pk_bf8_f32 v7, -v4, |v5| op_sel:[0,0,1]
";

/// gfx950's own instructions of the tail.
const TAIL_GFX950: &str = r"
  v_bitop3_b32 v0, v1, v2, v3 bitop3:0x96
  v_bitop3_b32 v0, s1, v2, 7 bitop3:0xe8
  v_permlane16_swap_b32_e32 v0, v1
  v_permlane32_swap_b32_e32 v0, v1
  v_cvt_f32_bf16_e32 v0, v1
  ds_read_b64_tr_b16 v[0:1], v2 offset:8
  ds_read_b64_tr_b8 v[0:1], v2
  ds_read_b64_tr_b4 v[0:1], v2
  v_mfma_i32_16x16x64_i8 v[0:3], v[4:7], v[8:11], v[0:3]
  v_mfma_i32_32x32x32_i8 a[0:15], v[4:7], v[8:11], a[0:15]
  v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]
  v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:9], v[12:15], v[0:3] cbsz:2 blgp:4
  v_mfma_f32_32x32x64_f8f6f4 a[0:15], v[4:11], v[12:17], 0 cbsz:1 blgp:3
  v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21
  v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:15], v[0:3], v20, v21 op_sel:[1,0,0] op_sel_hi:[0,1,0] blgp:4
  v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[4:11], v[12:19], v[0:15], v20, v21 cbsz:1
  v_smfmac_f32_16x16x128_fp8_fp8 v[0:3], v[4:7], v[8:15], v20
  v_smfmac_f32_16x16x128_bf8_fp8 a[0:3], v[4:7], v[8:15], v20
  v_cvt_scalef32_pk_fp4_f32 v0, v1, v2, v3
  v_cvt_scalef32_pk_fp4_f32 v0, v1, s2, v3 op_sel:[0,0,1,1]
  v_cvt_scalef32_pk_bf16_fp8 v0, v1, v2
  v_cvt_scalef32_pk_bf16_fp8 v0, v1, s2 op_sel:[1,0,0]
";

/// RDNA's forms the typed engine lowers (wave32): VOPD pairs (Y reading
/// X's destination), DPP8, `row_share`/`row_xmask`, wave32 saveexec and lane
/// masks in one SGPR, `null` destinations and sources, lane numbers past
/// 31, d16 loads, `v_permlane16_b32`/`v_permlanex16_b32`.
const TAIL_RDNA: &str = r"
  v_dual_mov_b32 v0, v1 :: v_dual_add_f32 v1, v0, v2
  v_dual_fmac_f32 v2, v3, v4 :: v_dual_mul_f32 v3, v2, v5
  v_dual_cndmask_b32 v4, v5, v6 :: v_dual_mov_b32 v5, v4
  v_dual_fmaak_f32 v6, v7, v8, 0x40400000 :: v_dual_add_nc_u32 v7, v6, v9
  v_mov_b32_dpp v0, v1 dpp8:[7,6,5,4,3,2,1,0]
  v_add_f32_dpp v0, v1, v2 row_share:3 row_mask:0xf bank_mask:0xf
  v_add_f32_dpp v0, v1, v2 row_xmask:5 row_mask:0x3 bank_mask:0xa bound_ctrl:1
  s_and_saveexec_b32 s10, s4
  s_or_saveexec_b32 s10, vcc_lo
  s_and_not1_saveexec_b32 s10, s4
  v_add_co_u32 v0, s10, v1, v2
  v_add_co_ci_u32_e64 v0, null, s4, v2, s5
  v_add_co_ci_u32_e32 v0, vcc_lo, v1, v2, vcc_lo
  v_sub_co_u32 v0, null, v1, v2
  v_cmp_lt_u32_e64 s10, v1, v2
  v_cmp_eq_f32_e32 vcc_lo, v1, v2
  v_cmpx_gt_i32_e32 v1, v2
  v_cndmask_b32_e64 v0, v1, v2, s10
  v_cndmask_b32_e32 v0, v1, v2, vcc_lo
  v_div_scale_f32 v0, null, v1, v1, v2
  v_div_scale_f32 v0, s10, v1, v2, v1
  v_div_fmas_f32 v0, v1, v2, v3
  v_readlane_b32 s10, v1, s4
  v_writelane_b32 v1, s10, 37
  ds_load_u16_d16 v0, v1 offset:4
  ds_load_u16_d16_hi v0, v1
  ds_load_u8_d16 v0, v1
  ds_load_i8_d16_hi v0, v1
  global_load_d16_b16 v0, v[2:3], off
  global_load_d16_hi_b16 v0, v1, s[4:5] offset:8
  global_load_d16_i8 v0, v[2:3], off
  s_load_b64 s[10:11], s[4:5], 0x10
  s_mov_b32 exec_lo, s4
  s_cbranch_vccz 0
  v_permlane16_b32 v0, v1, s4, s5
  v_permlanex16_b32 v0, v1, s4, s5 op_sel:[1,0]
  v_permlane16_b32 v0, v1, s4, 0x76543210 op_sel:[0,1]
";

/// gfx11's own cache invalidations.
const TAIL_GFX11: &str = r"
  buffer_gl0_inv
  buffer_gl1_inv
  v_mov_b16_e32 v9.h, v9.l
  v_mov_b16_e32 v9.l, v10.h
  v_mov_b16_e32 v11.h, v10.h
  v_mov_b16_e32 v12.l, v3.l
  v_mov_b16_e32 v12.h, 0x1234
  v_mov_b16_e32 v12.l, -1
";

/// gfx12's own: split waits, the workgroup barrier, `v_max_num_f32`, the
/// float and 64-bit scalar ALU, `scope:`/`th:` on global memory.
const TAIL_GFX12: &str = r"
  s_wait_loadcnt 0x0
  s_wait_dscnt 0x0
  s_wait_loadcnt_dscnt 0x0
  s_wait_alu 0xfffe
  s_barrier_signal -1
  s_barrier_wait -1
  v_max_num_f32_e32 v0, v1, v2
  v_min_num_f32_e64 v0, -v1, |v2|
  v_max_num_f32_dpp v0, v1, v2 row_xmask:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  s_load_b64 s[10:11], s[4:5], null
  s_load_b128 s[12:15], s[4:5], 0x10
  v_dual_max_num_f32 v0, v1, v2 :: v_dual_mov_b32 v1, v0
  s_add_co_i32 s10, s4, s5
  s_add_co_ci_u32 s10, s4, s5
  v_add_co_ci_u32_e64 v0, null, s4, v2, s5
  s_add_f32 s10, s4, s5
  s_sub_f32 s10, s4, 1.0
  s_mul_f32 s10, s4, s5
  s_max_num_f32 s10, s4, s5
  s_min_num_f32 s10, s4, s5
  s_fmac_f32 s10, s4, s5
  s_fmaak_f32 s10, s4, s5, 0x40400000
  s_fmamk_f32 s10, s4, 0x40400000, s5
  s_cvt_f32_i32 s10, s4
  s_cvt_f32_u32 s10, s4
  s_cvt_i32_f32 s10, s4
  s_cvt_u32_f32 s10, s4
  s_add_nc_u64 s[10:11], s[4:5], s[6:7]
  s_sub_nc_u64 s[10:11], s[4:5], 5
  s_mul_u64 s[10:11], s[4:5], s[6:7]
  global_inv
  global_wb
  global_atomic_add_u32 v5, v1, v6, s[4:5] offset:16 th:TH_ATOMIC_RETURN scope:SCOPE_DEV
  global_atomic_xor_b32 v1, v5, s[4:5] offset:12 scope:SCOPE_DEV
  global_load_b32 v0, v1, s[4:5] scope:SCOPE_SYS
  global_inv scope:SCOPE_SE
";

/// gfx1250's GLOBAL accesses with `saddr`, whose 32-bit VGPR offset gfx1250
/// sign-extends (LLVM's `hasSignedGVSOffset`): the differential's
/// addresses give them negative offsets half the time (`typed::aim`), so a
/// typed engine that zero-extended them would fault where the reference
/// does not.
const TAIL_GFX1250: &str = r"
  global_load_b32 v0, v1, s[4:5]
  global_load_b32 v0, v1, s[4:5] offset:-16
  global_load_b64 v[2:3], v1, s[4:5] offset:8
  global_load_b128 v[8:11], v1, s[4:5]
  global_load_u8 v0, v1, s[4:5] offset:3
  global_load_i16 v0, v1, s[4:5]
  global_load_d16_hi_b16 v0, v1, s[4:5]
  global_store_b32 v1, v5, s[4:5] offset:4
  global_store_b64 v1, v[6:7], s[4:5]
  global_store_b8 v1, v5, s[4:5] offset:-7
  global_atomic_add_u32 v5, v1, v6, s[4:5] offset:16 th:TH_ATOMIC_RETURN
  global_atomic_xor_b32 v1, v5, s[4:5] offset:12
  global_atomic_cmpswap_b32 v5, v1, v[6:7], s[4:5] th:TH_ATOMIC_RETURN
  global_atomic_add_u64 v1, v[6:7], s[4:5]
  global_load_b32 v0, v[2:3], off
";

/// A kernel of `body` for `target`, assembled and linked by clang-22 and
/// ld.lld-22 into `dir`.
fn tail_kernel(target: &str, body: &str, dir: &Path) -> PathBuf {
    let rdna = target.starts_with("gfx1");
    let (wave, accum) = if rdna {
        ("\t\t.amdhsa_wavefront_size32 1", "")
    } else {
        ("", "\t\t.amdhsa_accum_offset 64")
    };
    let src = format!(
        r#"	.amdgcn_target "amdgcn-amd-amdhsa--{target}"
	.amdhsa_code_object_version 6
	.text
	.globl	tail
	.p2align	8
	.type	tail,@function
tail:
{body}
  s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel tail
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 64
		.amdhsa_next_free_sgpr 96
{accum}
{wave}
	.end_amdhsa_kernel
	.text
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:           []
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .max_flat_workgroup_size: 256
    .name:           tail
    .private_segment_fixed_size: 0
    .sgpr_count:     96
    .sgpr_spill_count: 0
    .symbol:         tail.kd
    .vgpr_count:     64
    .vgpr_spill_count: 0
    .wavefront_size: {size}
amdhsa.target:   amdgcn-amd-amdhsa--{target}
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
"#,
        size = if rdna { 32 } else { 64 }
    );
    let path = dir.join(format!("tail-{target}.s"));
    std::fs::write(&path, src).unwrap();
    common::assemble(&path, target, &format!("tail-{target}"), dir)
}

#[test]
fn typed_operations_agree_with_the_reference_executor() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("gcn-emu-typed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for sub in [
        "../tests/corpus/iree/gfx90a",
        "../tests/corpus/iree/gfx942",
        "../tests/corpus/iree/gfx950",
        "../tests/corpus/aiter/gfx942",
        "../tests/corpus/aiter/gfx950",
        "tests/triton",
        // RDNA (wave32, and wave64 where a kernel asks): the HIP and
        // Triton objects of tests/rdna and IREE's.
        "tests/rdna/gfx1100",
        "tests/rdna/gfx1201",
        "../tests/corpus/iree/gfx1100",
        "../tests/corpus/iree/gfx1201",
    ] {
        objects(&root.join(sub), &mut files);
    }
    let mut kernels: Vec<String> = std::fs::read_dir(root.join("tests/kernels"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "hip").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    kernels.sort();
    // gfx942 and gfx950 (gfx90a's code is in IREE's corpus; some test
    // kernels use builtins gfx90a lacks); a `gfxNNN_*` kernel uses that
    // target's own builtins and is built for it alone (`gfx1250_*` for
    // none of these).
    for k in &kernels {
        for target in ["gfx942", "gfx950"] {
            let own = k.split('_').next().filter(|p| p.starts_with("gfx"));
            if own.is_some_and(|own| own != target) {
                continue;
            }
            files.push(common::build(k, target, &dir));
        }
    }
    files.push(tail_kernel("gfx942", TAIL, &dir));
    files.push(tail_kernel(
        "gfx950",
        &format!("{TAIL}\n{TAIL_GFX950}"),
        &dir,
    ));
    files.push(tail_kernel(
        "gfx1100",
        &format!("{TAIL_RDNA}\n{TAIL_GFX11}"),
        &dir,
    ));
    files.push(tail_kernel(
        "gfx1201",
        &format!("{TAIL_RDNA}\n{TAIL_GFX12}"),
        &dir,
    ));
    files.push(tail_kernel("gfx1250", TAIL_GFX1250, &dir));
    files.sort();
    let objdump = find_objdump(None).unwrap();
    let states: Vec<_> = (0..4).map(gcn_emu::typed::random_wave).collect();
    // Each distinct instruction is checked once, by whichever file's worker
    // meets it first; the files are spread over the cores (this test ran
    // last, alone on one core, in the binary's tail).
    let seen = std::sync::Mutex::new(std::collections::HashSet::new());
    let per_file = common::par_map(&files, |file| {
        let (mut total, mut lowered, mut runs) = (0usize, 0usize, 0usize);
        let mut kinds = std::collections::BTreeSet::new();
        let (mut rdna_lowered, mut rdna_kinds) = (0usize, std::collections::BTreeSet::new());
        let mut failures = Vec::new();
        let co = CodeObject::read_file(file).unwrap();
        let rdna = gcn_emu::rdna::is_rdna(&co.processor);
        for k in &co.kernels {
            let p = Program::disassemble(&co, k, &objdump).unwrap();
            // RDNA: the executor's renamed program, from states of the
            // kernel's wave (its lanes, gfx11's SGPR numbering).
            let (p, states) = if rdna {
                let wave = if k.descriptor.wave32() { 32 } else { 64 };
                let states: Vec<_> = states
                    .iter()
                    .map(|s| {
                        let mut s = s.clone();
                        s.wave_size = wave;
                        s.numbering = gcn_emu::decode::Numbering::of(&co.processor);
                        s
                    })
                    .collect();
                (gcn_emu::rdna::executable(&p), states)
            } else {
                (p, states.clone())
            };
            total += p.instructions.len();
            // The tail kernels hold only instructions the typed engine
            // lowers: each must.
            if file
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tail-"))
            {
                let lowered = if rdna {
                    gcn_emu::typed::lowered_for(&p, &co.processor, states[0].wave_size)
                } else {
                    gcn_emu::typed::lowered(&p)
                };
                for (ins, l) in p.instructions.iter().zip(lowered) {
                    if !l {
                        failures.push(format!("{}: `{}` does not lower", file.display(), ins.text));
                    }
                }
            }
            for (i, ins) in p.instructions.iter().enumerate() {
                // Each distinct instruction once (a branch's target differs
                // by address: branches are all checked).
                let text = ins.text.split("//").next().unwrap_or("").trim();
                // (Per kind of wave: RDNA's wave32 and wave64 are others,
                // and gfx1250's addressing is its own.)
                let gfx1250 = co.processor == "gfx1250";
                let key = (rdna, states[0].wave_size, gfx1250, text.to_string());
                if !ins.mnemonic.contains("branch") && !seen.lock().unwrap().insert(key) {
                    continue;
                }
                for (n, state) in states.iter().enumerate() {
                    for seed in 0..2u64 {
                        match gcn_emu::typed::differential(&p, i, state, seed * 31 + n as u64) {
                            Ok(false) => break,
                            Ok(true) => {
                                runs += 1;
                                if n == 0 && seed == 0 {
                                    lowered += 1;
                                    kinds.insert(ins.mnemonic.clone());
                                    if rdna {
                                        rdna_lowered += 1;
                                        rdna_kinds.insert(ins.mnemonic.clone());
                                    }
                                }
                            }
                            Err(e) => {
                                failures.push(format!("{}: {}: {e}", file.display(), k.name));
                                break;
                            }
                        }
                    }
                }
            }
        }
        (
            total,
            lowered,
            runs,
            kinds,
            rdna_lowered,
            rdna_kinds,
            failures,
        )
    });
    let (mut total, mut lowered, mut runs) = (0usize, 0usize, 0usize);
    let mut kinds = std::collections::BTreeSet::new();
    let (mut rdna_lowered, mut rdna_kinds) = (0usize, std::collections::BTreeSet::new());
    let mut failures = Vec::new();
    for (t, l, r, k, rl, rk, f) in per_file {
        total += t;
        lowered += l;
        runs += r;
        kinds.extend(k);
        rdna_lowered += rl;
        rdna_kinds.extend(rk);
        failures.extend(f);
    }
    let _ = std::fs::remove_dir_all(&dir);
    // CDNA's dot products (tests/kernels/dot.hip, the tail) run typed.
    for m in [
        "v_dot2_f32_f16",
        "v_dot2c_f32_f16_e32",
        "v_dot2_i32_i16",
        "v_dot4_u32_u8",
        "v_dot8_i32_i4",
        "v_dot8c_i32_i4_e32",
        "v_dot2_f32_bf16",
        "v_dot2c_f32_bf16_e32",
        "ds_rsub_rtn_u64",
    ] {
        assert!(
            kinds.contains(m),
            "{m} was not lowered to a typed operation"
        );
    }
    println!(
        "{} objects, {total} instructions, {lowered} distinct ones lowered ({} mnemonics), {runs} differential runs; RDNA: {rdna_lowered} distinct ones lowered ({} mnemonics)",
        files.len(),
        kinds.len(),
        rdna_kinds.len()
    );
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The comparison covers what it claims to: most mnemonics the typed
    // executor knows occur in the corpora.
    assert!(kinds.len() >= 60, "{} mnemonics lowered", kinds.len());
    // And RDNA's: what was measured (2026-11-27: 3,350 distinct
    // instructions, 184 mnemonics counting encodings).
    assert!(
        rdna_kinds.len() >= 184,
        "{} RDNA mnemonics lowered",
        rdna_kinds.len()
    );
}

/// gfx1250's sign-extended `saddr` VGPR offset (LLVM's GCNSubtarget.h
/// `hasSignedGVSOffset`) on both engines: every GLOBAL access of
/// [`TAIL_GFX1250`] from 48 random states, half of them aimed with
/// negative offsets (`typed::aim`), must agree, and enough runs must not
/// fault (a typed engine that zero-extends faults 4 GiB past the memory
/// where the reference does not: 104 disagreements measured).
#[test]
fn gfx1250_saddr_offsets_agree_with_the_reference() {
    let dir = std::env::temp_dir().join(format!("gcn-emu-typed-1250-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = tail_kernel("gfx1250", TAIL_GFX1250, &dir);
    let co = CodeObject::read_file(&file).unwrap();
    let k = &co.kernels[0];
    let p = Program::disassemble(&co, k, &find_objdump(None).unwrap()).unwrap();
    let p = gcn_emu::rdna::executable(&p);
    let (mut runs, mut failures) = (0usize, Vec::new());
    for n in 0..12u64 {
        let mut state = gcn_emu::typed::random_wave(n);
        state.wave_size = 32;
        state.numbering = gcn_emu::decode::Numbering::of("gfx1250");
        for (i, ins) in p.instructions.iter().enumerate() {
            if !ins.mnemonic.starts_with("global_") {
                continue;
            }
            for seed in 0..4u64 {
                match gcn_emu::typed::differential(&p, i, &state, seed * 131 + n) {
                    Ok(true) => runs += 1,
                    Ok(false) => failures.push(format!("`{}` does not lower", ins.text)),
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(runs >= 600, "{runs} runs");
}
