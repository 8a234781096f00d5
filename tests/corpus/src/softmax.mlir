// Row-wise softmax over a 128x1024 f32 tensor (last dimension).
func.func @softmax(%x: tensor<128x1024xf32>) -> tensor<128x1024xf32> {
  %empty = tensor.empty() : tensor<128x1024xf32>
  %res = linalg.softmax dimension(1) ins(%x : tensor<128x1024xf32>)
                                     outs(%empty : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  return %res : tensor<128x1024xf32>
}
