#include "ember/nn/modules/padding.h"

#include "ember/nn_ops.h"

namespace ember::nn {

template <size_t D, int Mode, class Options>
Tensor PadImpl<D, Mode, Options>::forward(const Tensor& input) {
  static constexpr const char* kMode[] = {"reflect", "replicate", "constant", "constant"};
  double value = 0;
  if constexpr (Mode == 2) value = options.value();
  return ember::pad(input, *options.padding(), kMode[Mode],
                    Mode >= 2 ? std::optional<double>(value) : std::nullopt);
}

template <size_t D, int Mode, class Options>
void PadImpl<D, Mode, Options>::pretty_print(std::ostream& stream) const {
  static constexpr const char* kName[] = {"ReflectionPad", "ReplicationPad", "ConstantPad", "ZeroPad"};
  stream << "torch::nn::" << kName[Mode] << D << "d(padding=" << options.padding();
  if constexpr (Mode == 2) stream << ", value=" << options.value();
  stream << ")";
}

template class PadImpl<1, 0, ReflectionPad1dOptions>;
template class PadImpl<2, 0, ReflectionPad2dOptions>;
template class PadImpl<3, 0, ReflectionPad3dOptions>;
template class PadImpl<1, 1, ReplicationPad1dOptions>;
template class PadImpl<2, 1, ReplicationPad2dOptions>;
template class PadImpl<3, 1, ReplicationPad3dOptions>;
template class PadImpl<2, 3, ZeroPad2dOptions>;
template class PadImpl<1, 2, ConstantPad1dOptions>;
template class PadImpl<2, 2, ConstantPad2dOptions>;
template class PadImpl<3, 2, ConstantPad3dOptions>;

}  // namespace ember::nn
