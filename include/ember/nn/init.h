// nn::init: in-place initializers of parameters, as libtorch's torch::nn::init. Each runs
// without recording a graph, draws from ember's global Generator (manual_seed makes it
// repeatable) and returns the tensor it filled.
#pragma once
#include <cstdint>
#include <tuple>
#include <variant>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn::init {

using NonlinearityType =
    std::variant<enumtype::kLinear, enumtype::kConv1D, enumtype::kConv2D, enumtype::kConv3D,
                 enumtype::kConvTranspose1D, enumtype::kConvTranspose2D, enumtype::kConvTranspose3D,
                 enumtype::kSigmoid, enumtype::kTanh, enumtype::kReLU, enumtype::kLeakyReLU>;
using FanModeType = std::variant<enumtype::kFanIn, enumtype::kFanOut>;

// The recommended gain for a nonlinearity; `param` is LeakyReLU's negative slope.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight of at least 2 dims: size(1) * receptive field, size(0) * receptive field.
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
// Normal(mean, std) restricted to [a, b] (inverse-CDF sampling).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor eye_(Tensor matrix);
// The identity of a convolution (3-5 dims): 1 at the centre of kernel [d][d], 0 elsewhere.
Tensor dirac_(Tensor tensor);
// A 2-D tensor drawn from N(0, std) with ceil(sparsity * rows) entries of each column zeroed.
Tensor sparse_(Tensor tensor, double sparsity, double std = 0.01);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                       NonlinearityType nonlinearity = kLeakyReLU);
// A (semi-)orthogonal matrix (the tensor viewed as size(0) x rest), scaled by gain.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace ember::nn::init
