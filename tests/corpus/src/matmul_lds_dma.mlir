// 4096x4096x4096 matmul, f16 x f16 -> f32 accumulate, zero-filled output.
// Large enough that IREE's gfx950 pipeline double-buffers the tiles through
// LDS DMA (`buffer_load_dwordx4 ... lds`) read by `ds_read_b64_tr_b16`.
func.func @matmul_lds_dma(%lhs: tensor<4096x4096xf16>, %rhs: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4096x4096xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %res = linalg.matmul ins(%lhs, %rhs : tensor<4096x4096xf16>, tensor<4096x4096xf16>)
                       outs(%acc : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %res : tensor<4096x4096xf32>
}
