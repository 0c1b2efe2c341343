// The FuncOptions forms of the convolutions, on the positional ops of ember/nn_ops.h.
#include "ember/nn/functional/conv.h"

#include "ember/nn_ops.h"

namespace ember::nn::functional {
namespace {

template <size_t D, class Conv, class ConvPadded>
Tensor conv_nd(const Tensor& input, const Tensor& weight, const ConvFuncOptions<D>& o, Conv conv, ConvPadded conv_mode) {
  if (const auto* pad = std::get_if<ExpandingArray<D>>(&o.padding())) {
    return conv(input, weight, o.bias(), o.stride(), *pad, o.dilation(), o.groups());
  }
  const char* mode = std::holds_alternative<enumtype::kSame>(o.padding()) ? "same" : "valid";
  return conv_mode(input, weight, o.bias(), o.stride(), PaddingMode(mode), o.dilation(), o.groups());
}

}  // namespace

#define EMBER_CONV_FUNC(D)                                                                                   \
  Tensor conv##D##d(const Tensor& input, const Tensor& weight, const Conv##D##dFuncOptions& options) {      \
    using Fixed = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, \
                             int64_t);                                                                       \
    using Mode = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, IntArrayRef, PaddingMode, IntArrayRef,  \
                            int64_t);                                                                        \
    return conv_nd<D>(input, weight, options, static_cast<Fixed>(&ember::conv##D##d),                         \
                      static_cast<Mode>(&ember::conv##D##d));                                                 \
  }                                                                                                          \
  Tensor conv_transpose##D##d(const Tensor& input, const Tensor& weight,                                     \
                              const ConvTranspose##D##dFuncOptions& o) {                                     \
    return ember::conv_transpose##D##d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), \
                                       o.groups(), o.dilation());                                            \
  }
EMBER_CONV_FUNC(1)
EMBER_CONV_FUNC(2)
EMBER_CONV_FUNC(3)
#undef EMBER_CONV_FUNC

}  // namespace ember::nn::functional
