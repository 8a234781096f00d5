// 256x256x256 matmul, f16 x f16 -> f32 accumulate, zero-filled output.
func.func @matmul(%lhs: tensor<256x256xf16>, %rhs: tensor<256x256xf16>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
  %res = linalg.matmul ins(%lhs, %rhs : tensor<256x256xf16>, tensor<256x256xf16>)
                       outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %res : tensor<256x256xf32>
}
