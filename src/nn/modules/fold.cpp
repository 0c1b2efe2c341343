// Unfold is a convolution of each channel with the one-hot kernels of the window positions
// (output channel k picks offset k of the window, in PyTorch's row-major order), so im2col and
// its gradient come from the convolution; fold is the transposed convolution of the same
// kernels, which sums the overlapping entries.
#include "ember/nn/modules/fold.h"

#include "ember/factory.h"
#include "ember/nn_ops.h"

namespace ember::nn {
namespace functional {
namespace {

Tensor window_kernels(const ExpandingArray<2>& k, ScalarType dtype) {
  const int64_t n = k[0] * k[1];
  return eye(n, TensorOptions().dtype(dtype)).view({n, 1, k[0], k[1]});
}

}  // namespace

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  EMBER_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 4), "unfold",
              "Input Error: Only unbatched (3D) or batched (4D) input Tensors are supported (got ",
              input.defined() ? input.dim() : 0, "D)");
  if (input.dim() == 3) return unfold(input.unsqueeze(0), o).squeeze(0);
  const int64_t n = input.size(0), c = input.size(1);
  const Tensor cols = ember::conv2d(input.reshape({n * c, 1, input.size(2), input.size(3)}),
                                    window_kernels(o.kernel_size(), input.dtype()), {}, o.stride(), o.padding(),
                                    o.dilation());
  return cols.reshape({n, c * o.kernel_size()[0] * o.kernel_size()[1], -1});
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  EMBER_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3), "fold",
              "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got ",
              input.defined() ? input.dim() : 0, "D)");
  if (input.dim() == 2) return fold(input.unsqueeze(0), o).squeeze(0);
  const auto& k = o.kernel_size();
  const int64_t kk = k[0] * k[1];
  EMBER_CHECK(input.size(1) % kk == 0, "fold",
              "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
              input.size(1), " and kernel_size=", o.kernel_size());
  int64_t blocks[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t span = o.dilation()[i] * (k[i] - 1) + 1;
    blocks[i] = (o.output_size()[i] + 2 * o.padding()[i] - span) / o.stride()[i] + 1;
    EMBER_CHECK(blocks[i] > 0, "fold", "Given output_size=", o.output_size(), ", kernel_size=", o.kernel_size(),
                ", dilation=", o.dilation(), ", padding=", o.padding(), ", stride=", o.stride(),
                ", calculated shape of the array of sliding blocks is non-positive");
  }
  EMBER_CHECK(input.size(2) == blocks[0] * blocks[1], "fold", "Given output_size=", o.output_size(),
              ", kernel_size=", o.kernel_size(), ", dilation=", o.dilation(), ", padding=", o.padding(),
              ", stride=", o.stride(), ", expected size of input's dimension 2 to match the calculated number of sliding blocks ",
              blocks[0], " * ", blocks[1], " = ", blocks[0] * blocks[1], ", but got input.size(2)=", input.size(2), ".");
  const int64_t n = input.size(0), c = input.size(1) / kk;
  // The full sum over the padded plane, from padded row/column 0 to the last one a window reaches;
  // the rows and columns past it stay zero, then the padding is cut off.
  Tensor out = ember::conv_transpose2d(input.reshape({n * c, kk, blocks[0], blocks[1]}),
                                       window_kernels(k, input.dtype()), {}, o.stride(), 0, 0, 1, o.dilation());
  int64_t short_of[2];
  for (int i = 0; i < 2; ++i) short_of[i] = o.output_size()[i] + 2 * o.padding()[i] - out.size(2 + i);
  if (short_of[0] > 0 || short_of[1] > 0) out = ember::pad(out, {0, short_of[1], 0, short_of[0]});
  out = out.narrow(2, o.padding()[0], o.output_size()[0]).narrow(3, o.padding()[1], o.output_size()[1]);
  return out.reshape({n, c, o.output_size()[0], o.output_size()[1]});
}

}  // namespace functional

void FoldImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Fold(output_size=" << options.output_size() << ", kernel_size=" << options.kernel_size()
         << ", dilation=" << options.dilation() << ", padding=" << options.padding()
         << ", stride=" << options.stride() << ")";
}
void UnfoldImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Unfold(kernel_size=" << options.kernel_size() << ", dilation=" << options.dilation()
         << ", padding=" << options.padding() << ", stride=" << options.stride() << ")";
}

}  // namespace ember::nn
