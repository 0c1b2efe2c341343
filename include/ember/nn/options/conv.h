// Options of the functional convolutions (F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).bias(b))).
#pragma once
#include <variant>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

template <size_t D>
struct ConvFuncOptions {
  // An explicit padding, or kValid (none) / kSame (output size = input size, stride 1).
  using padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
  EMBER_ARG(Tensor, bias) = Tensor();
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);

 public:
  decltype(auto) padding(std::initializer_list<int64_t> il) { return padding(ExpandingArray<D>(il)); }
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

template <size_t D>
struct ConvTransposeFuncOptions {
  EMBER_ARG(Tensor, bias) = Tensor();
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

}  // namespace ember::nn::functional
