/*
s_nop 0
*/
"quoted label": s_nop 0 ; c
# hash
	s_and_saveexec_b64 s[2:3], vcc"
v_dual_sub_f32 v1, v1, v7 :: v_dual_sub_f32 v2, v2, v7
.set x, 1
