// ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ZeroPad2d, ConstantPad1d/2d/3d.
#pragma once
#include "ember/nn/options/padding.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

// Mode 0 reflect, 1 replicate, 2 constant (value), 3 zero (ZeroPad2d).
template <size_t D, int Mode, class Options>
class PadImpl : public Module {
 public:
  explicit PadImpl(const Options& options) : options(options) {}
  explicit PadImpl(ExpandingArray<D * 2> padding)
    requires(Mode != 2)
      : options(padding) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  Options options;
};

#define EMBER_PAD_MODULE(Name, D, Mode, Options)        \
  class Name##Impl : public PadImpl<D, Mode, Options> { \
   public:                                              \
    using PadImpl<D, Mode, Options>::PadImpl;           \
  };                                                    \
  EMBER_MODULE(Name);
EMBER_PAD_MODULE(ReflectionPad1d, 1, 0, ReflectionPad1dOptions)
EMBER_PAD_MODULE(ReflectionPad2d, 2, 0, ReflectionPad2dOptions)
EMBER_PAD_MODULE(ReflectionPad3d, 3, 0, ReflectionPad3dOptions)
EMBER_PAD_MODULE(ReplicationPad1d, 1, 1, ReplicationPad1dOptions)
EMBER_PAD_MODULE(ReplicationPad2d, 2, 1, ReplicationPad2dOptions)
EMBER_PAD_MODULE(ReplicationPad3d, 3, 1, ReplicationPad3dOptions)
EMBER_PAD_MODULE(ZeroPad2d, 2, 3, ZeroPad2dOptions)
#undef EMBER_PAD_MODULE

template <size_t D>
class ConstantPadImpl : public PadImpl<D, 2, ConstantPadOptions<D>> {
 public:
  using PadImpl<D, 2, ConstantPadOptions<D>>::PadImpl;
  ConstantPadImpl(ExpandingArray<D * 2> padding, double value)
      : PadImpl<D, 2, ConstantPadOptions<D>>(ConstantPadOptions<D>(padding, value)) {}
};
class ConstantPad1dImpl : public ConstantPadImpl<1> {
 public:
  using ConstantPadImpl<1>::ConstantPadImpl;
};
class ConstantPad2dImpl : public ConstantPadImpl<2> {
 public:
  using ConstantPadImpl<2>::ConstantPadImpl;
};
class ConstantPad3dImpl : public ConstantPadImpl<3> {
 public:
  using ConstantPadImpl<3>::ConstantPadImpl;
};
EMBER_MODULE(ConstantPad1d);
EMBER_MODULE(ConstantPad2d);
EMBER_MODULE(ConstantPad3d);

}  // namespace ember::nn
