// 2-D NHWC convolution, 3x3 kernel, 64 -> 64 channels, f16 x f16 -> f32 accumulate.
func.func @conv(%input: tensor<1x34x34x64xf16>, %filter: tensor<3x3x64x64xf16>) -> tensor<1x32x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x32x32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  %res = linalg.conv_2d_nhwc_hwcf
           {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
           ins(%input, %filter : tensor<1x34x34x64xf16>, tensor<3x3x64x64xf16>)
           outs(%acc : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  return %res : tensor<1x32x32x64xf32>
}
