; To reproduce the .rocmasm from .optimized.ll, run:
; llc -mtriple=amdgpu12.01-amd-amdhsa -mcpu=gfx1201 -mattr='+wavefrontsize32' -O3 <.optimized.ll> -o <out.rocmasm>

	.amdgcn_target "amdgpu12.01-amd-amdhsa-unknown-gfx1201"
	.amdhsa_code_object_version 5
	.text
	.globl	softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store
	.p2align	8
	.type	softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store,@function
softmax_dispatch_0_softmax_128x1024xf32_dispatch_tensor_store:
	s_load_b128 s[4:7], s[0:1], 0x0
	v_lshlrev_b32_e32 v1, 2, v0
	s_mov_b32 s3, 0x31027000
	s_mov_b32 s2, 0x80000
	v_and_b32_e32 v8, 31, v0
	s_delay_alu instid0(VALU_DEP_2) | instskip(NEXT) | instid1(VALU_DEP_2)
	v_lshl_or_b32 v1, ttmp9, 10, v1
	v_cmp_eq_u32_e32 vcc_lo, 0, v8
	s_delay_alu instid0(VALU_DEP_2)
	v_lshlrev_b32_e32 v5, 2, v1
	s_wait_kmcnt 0x0
	s_and_b32 s1, s5, 0xffff
	s_mov_b32 s0, s4
	buffer_load_b128 v[1:4], v5, s[0:3], null offen
	s_wait_loadcnt 0x0
	v_max_num_f32_e32 v6, v1, v2
	s_barrier_signal -1
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	v_max3_num_f32 v6, v6, v3, v4
	v_max_num_f32_e32 v6, 0xff800000, v6
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(VALU_DEP_1)
	v_max_num_f32_dpp v6, v6, v6 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1
	s_barrier_wait -1
	v_max_num_f32_dpp v6, v6, v6 quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf bound_ctrl:1
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	v_max_num_f32_dpp v6, v6, v6 row_half_mirror row_mask:0xf bank_mask:0xf bound_ctrl:1
	v_max_num_f32_dpp v6, v6, v6 row_mirror row_mask:0xf bank_mask:0xf bound_ctrl:1
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	v_permlanex16_b32 v7, v6, -1, -1 op_sel:[1,0]
	v_max_num_f32_e32 v6, v6, v7
	v_lshrrev_b32_e32 v7, 5, v0
	s_delay_alu instid0(VALU_DEP_2) | instskip(NEXT) | instid1(VALU_DEP_2)
	v_readlane_b32 s0, v6, 31
	v_lshlrev_b32_e32 v6, 2, v7
	s_and_saveexec_b32 s1, vcc_lo
	s_wait_alu depctr_va_sdst(0)
	v_mov_b32_e32 v7, s0
	ds_store_b32 v6, v7
	s_wait_alu depctr_sa_sdst(0)
	s_or_b32 exec_lo, exec_lo, s1
	s_wait_dscnt 0x0
	s_barrier_signal -1
	v_and_b32_e32 v0, 7, v0
	s_delay_alu instid0(VALU_DEP_1)
	v_lshlrev_b32_e32 v0, 2, v0
	s_barrier_wait -1
	ds_load_b32 v7, v0
	s_wait_dscnt 0x0
	v_max_num_f32_e32 v7, 0xff800000, v7
	s_barrier_signal -1
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	v_max_num_f32_dpp v7, v7, v7 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1
	v_max_num_f32_dpp v7, v7, v7 quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf bound_ctrl:1
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(VALU_DEP_1)
	v_max_num_f32_dpp v7, v7, v7 row_half_mirror row_mask:0xf bank_mask:0xf bound_ctrl:1
	s_barrier_wait -1
	v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v7
	v_dual_sub_f32 v3, v3, v7 :: v_dual_sub_f32 v4, v4, v7
	s_delay_alu instid0(VALU_DEP_2) | instskip(NEXT) | instid1(VALU_DEP_2)
	v_dual_mul_f32 v7, 0x3fb8aa3b, v1 :: v_dual_mul_f32 v8, 0x3fb8aa3b, v2
	v_dual_mul_f32 v9, 0x3fb8aa3b, v3 :: v_dual_mul_f32 v10, 0x3fb8aa3b, v4
	v_cmp_ngt_f32_e64 s0, 0xc2ce8ed0, v1
	s_delay_alu instid0(VALU_DEP_3)
	v_fma_f32 v11, v1, 0x3fb8aa3b, -v7
	v_rndne_f32_e32 v12, v7
	v_fma_f32 v13, v2, 0x3fb8aa3b, -v8
	v_fma_f32 v17, v4, 0x3fb8aa3b, -v10
	v_rndne_f32_e32 v18, v10
	v_rndne_f32_e32 v14, v8
	v_fmac_f32_e32 v11, 0x32a5705f, v1
	v_fma_f32 v15, v3, 0x3fb8aa3b, -v9
	s_delay_alu instid0(VALU_DEP_4) | instskip(SKIP_3) | instid1(VALU_DEP_4)
	v_dual_fmac_f32 v17, 0x32a5705f, v4 :: v_dual_sub_f32 v10, v10, v18
	v_fmac_f32_e32 v13, 0x32a5705f, v2
	v_sub_f32_e32 v8, v8, v14
	v_rndne_f32_e32 v16, v9
	v_dual_fmac_f32 v15, 0x32a5705f, v3 :: v_dual_add_f32 v10, v10, v17
	s_delay_alu instid0(VALU_DEP_3) | instskip(NEXT) | instid1(VALU_DEP_3)
	v_dual_sub_f32 v7, v7, v12 :: v_dual_add_f32 v8, v8, v13
	v_sub_f32_e32 v9, v9, v16
	v_cvt_i32_f32_e32 v13, v16
	s_delay_alu instid0(VALU_DEP_4) | instskip(NEXT) | instid1(VALU_DEP_3)
	v_exp_f32_e32 v10, v10
	v_add_f32_e32 v7, v7, v11
	v_cvt_i32_f32_e32 v11, v12
	v_add_f32_e32 v9, v9, v15
	v_exp_f32_e32 v8, v8
	v_cvt_i32_f32_e32 v12, v14
	v_exp_f32_e32 v7, v7
	v_cvt_i32_f32_e32 v14, v18
	v_exp_f32_e32 v9, v9
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(TRANS32_DEP_3)
	v_ldexp_f32 v10, v10, v14
	v_ldexp_f32 v8, v8, v12
	s_delay_alu instid0(TRANS32_DEP_2) | instskip(NEXT) | instid1(TRANS32_DEP_1)
	v_ldexp_f32 v7, v7, v11
	v_ldexp_f32 v9, v9, v13
	s_wait_alu depctr_va_sdst(0)
	s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_2) | instid1(VALU_DEP_1)
	v_cndmask_b32_e64 v7, 0, v7, s0
	v_cmp_ngt_f32_e64 s0, 0xc2ce8ed0, v2
	s_wait_alu depctr_va_sdst(0)
	v_cndmask_b32_e64 v8, 0, v8, s0
	v_cmp_ngt_f32_e64 s0, 0xc2ce8ed0, v3
	s_wait_alu depctr_va_sdst(0)
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(VALU_DEP_1)
	v_cndmask_b32_e64 v9, 0, v9, s0
	v_cmp_nlt_f32_e64 s0, 0x42b17218, v1
	s_wait_alu depctr_va_sdst(0)
	v_cndmask_b32_e64 v1, 0x7f800000, v7, s0
	v_cmp_nlt_f32_e64 s0, 0x42b17218, v2
	s_wait_alu depctr_va_sdst(0)
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(VALU_DEP_2)
	v_cndmask_b32_e64 v2, 0x7f800000, v8, s0
	v_cmp_nlt_f32_e64 s0, 0x42b17218, v3
	v_add_f32_e32 v8, v1, v2
	s_wait_alu depctr_va_sdst(0)
	s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_2) | instid1(VALU_DEP_1)
	v_cndmask_b32_e64 v3, 0x7f800000, v9, s0
	v_cmp_ngt_f32_e64 s0, 0xc2ce8ed0, v4
	s_wait_alu depctr_va_sdst(0)
	v_cndmask_b32_e64 v7, 0, v10, s0
	v_cmp_nlt_f32_e64 s0, 0x42b17218, v4
	s_wait_alu depctr_va_sdst(0)
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(VALU_DEP_1)
	v_cndmask_b32_e64 v4, 0x7f800000, v7, s0
	v_add_f32_e32 v7, v8, v3
	v_add_f32_e32 v7, v7, v4
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	v_add_f32_dpp v7, v7, v7 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf bound_ctrl:1
	v_add_f32_dpp v7, v7, v7 quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf bound_ctrl:1
	