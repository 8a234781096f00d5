	.amdhsa_kernel k
		.amdhsa_next_free_vgpr 8
	.end_amdhsa_kernel
	.amdgpu_metadata
---
amdhsa.kernels: []
...
