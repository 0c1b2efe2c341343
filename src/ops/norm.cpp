// Normalization: batch_norm (training statistics and running-stat updates, or eval with running
// stats), instance_norm, layer_norm, group_norm and rms_norm. Statistics are computed in double
// per channel (batch/instance) or per row (layer/group/rms, vectorized); the normalization itself
// is one affine map per (sample, channel) or per row, written in the input's dtype.
#include <cfloat>
#include <cmath>
#include <sstream>
#include <vector>

#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/norm_kernels.h"

namespace ember {
namespace nn::functional {
namespace {

// A parameter (weight, bias, running stat) as C doubles, or empty when undefined.
std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v;
  if (!t.defined()) return v;
  const Tensor d = t.to(kDouble).contiguous();
  v.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  return v;
}

Tensor from_doubles(const std::vector<double>& v, IntArrayRef sizes, ScalarType dtype) {
  Tensor t = make_empty({static_cast<int64_t>(v.size())}, kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dtype).view(sizes);
}

void check_float(const char* op, const Tensor& input) {
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
}

// The layout the output takes: the input's, when it is channels_last.
MemoryFormat layout_of(const Tensor& t) {
  if (t.dim() == 4 || t.dim() == 5) return t.suggest_memory_format();
  return MemoryFormat::Contiguous;
}

// y = x * scale[n, c] + shift[n, c] over x viewed as (N, C, rest), in x's layout.
Tensor channel_affine(const Tensor& input, const std::vector<double>& scale, const std::vector<double>& shift) {
  const int64_t N = input.size(0), C = input.size(1);
  Tensor y = make_empty(input.sizes(), input.dtype());
  if (input.numel() > 0) {
    const int64_t L = input.numel() / (N * C);
    kernels::channel_affine_kernel(input.contiguous().view({N, C, L}), y.view({N, C, L}), scale.data(), shift.data());
  }
  const MemoryFormat f = layout_of(input);
  return f == MemoryFormat::Contiguous ? y : y.contiguous(f);
}

void check_param(const char* op, const char* what, const Tensor& t, int64_t C) {
  EMBER_CHECK(!t.defined() || t.numel() == C, op, what, " should contain ", C, " elements not ",
              t.defined() ? t.numel() : 0);
}

// The checks batch_norm and instance_norm share: a float input of at least 2 dims and per-channel
// parameters of size C. Returns C.
int64_t check_channel_norm_args(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                                const Tensor& running_mean, const Tensor& running_var) {
  check_float(op, input);
  EMBER_CHECK(input.dim() >= 2, op, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t C = input.size(1);
  check_param(op, "weight", weight, C);
  check_param(op, "bias", bias, C);
  check_param(op, "running_mean", running_mean, C);
  check_param(op, "running_var", running_var, C);
  return C;
}

// Batch statistics of (N, C, L) per channel, or the running ones; then the affine map.
std::tuple<Tensor, Tensor, Tensor> batch_norm_impl(const char* op, const Tensor& input, const Tensor& weight,
                                                   const Tensor& bias, const Tensor& running_mean,
                                                   const Tensor& running_var, bool training, double momentum,
                                                   double eps) {
  const int64_t C = check_channel_norm_args(op, input, weight, bias, running_mean, running_var);
  const int64_t N = input.size(0);
  EMBER_CHECK(training || (running_mean.defined() && running_var.defined()), op,
              "running_mean and running_var must be defined in evaluation mode");
  const ScalarType stat_dtype = weight.defined() ? weight.dtype() : input.dtype();
  if (input.numel() == 0) {  // nothing to normalize, no statistics to learn from
    return {make_empty(input.sizes(), input.dtype(), layout_of(input)), make_empty({0}, stat_dtype),
            make_empty({0}, stat_dtype)};
  }
  const int64_t L = input.numel() / (N * C);
  std::vector<double> mean(C), var(C);
  if (training) {
    kernels::channel_moments_kernel(input.contiguous().view({N, C, L}), mean.data(), var.data());
    const double n = static_cast<double>(N * L);
    if (running_mean.defined()) {
      std::vector<double> rm = as_doubles(running_mean);
      for (int64_t c = 0; c < C; ++c) rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
      Tensor(running_mean).copy_(from_doubles(rm, running_mean.sizes(), running_mean.dtype()));
    }
    if (running_var.defined()) {
      std::vector<double> rv = as_doubles(running_var);
      for (int64_t c = 0; c < C; ++c) rv[c] = (1 - momentum) * rv[c] + momentum * var[c] * n / (n - 1);
      Tensor(running_var).copy_(from_doubles(rv, running_var.sizes(), running_var.dtype()));
    }
  } else {
    mean = as_doubles(running_mean);
    var = as_doubles(running_var);
  }
  const std::vector<double> w = as_doubles(weight), b = as_doubles(bias);
  std::vector<double> invstd(C), scale(N * C), shift(N * C);
  for (int64_t c = 0; c < C; ++c) {
    invstd[c] = 1.0 / std::sqrt(var[c] + eps);
    const double s = invstd[c] * (w.empty() ? 1.0 : w[c]);
    const double t = (b.empty() ? 0.0 : b[c]) - mean[c] * s;
    for (int64_t n = 0; n < N; ++n) scale[n * C + c] = s, shift[n * C + c] = t;
  }
  Tensor out = channel_affine(input, scale, shift);
  if (!training) return {out, make_empty({0}, stat_dtype), make_empty({0}, stat_dtype)};
  return {out, from_doubles(mean, {C}, stat_dtype), from_doubles(invstd, {C}, stat_dtype)};
}

struct NativeBatchNormOp {
  static constexpr const char* name = "native_batch_norm";
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                const Tensor& rm, const Tensor& rv, bool training, double momentum,
                                                double eps) {
    return batch_norm_impl(name, input, weight, bias, rm, rv, training, momentum, eps);
  }
};

struct BatchNormOp {
  static constexpr const char* name = "batch_norm";
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& rm,
                    const Tensor& rv, bool training, double momentum, double eps) {
    if (training && input.dim() >= 2) {
      const int64_t per_channel = input.numel() / std::max<int64_t>(input.size(1), 1);
      EMBER_CHECK(per_channel != 1, name, "Expected more than 1 value per channel when training, got input size ",
                  input.sizes());
    }
    return std::get<0>(batch_norm_impl(name, input, weight, bias, rm, rv, training, momentum, eps));
  }
};

// Per (sample, channel) statistics; running stats (if any) move towards the mean over samples.
struct InstanceNormOp {
  static constexpr const char* name = "instance_norm";
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                    const Tensor& running_var, bool use_input_stats, double momentum, double eps) {
    const int64_t C = check_channel_norm_args(name, input, weight, bias, running_mean, running_var);
    const int64_t N = input.size(0);
    if (!use_input_stats) {
      return std::get<0>(batch_norm_impl(name, input, weight, bias, running_mean, running_var, false, momentum, eps));
    }
    const int64_t L = N * C > 0 ? input.numel() / (N * C) : 0;
    EMBER_CHECK(L != 1, name, "Expected more than 1 spatial element when training, got input size ", input.sizes());
    if (input.numel() == 0) return make_empty(input.sizes(), input.dtype(), layout_of(input));
    std::vector<double> mean(N * C), var(N * C);
    kernels::row_norm_kernel(input.contiguous().view({N * C, L}), Tensor(), Tensor(), Tensor(), eps, false,
                             mean.data(), var.data());
    const std::vector<double> w = as_doubles(weight), b = as_doubles(bias);
    std::vector<double> scale(N * C), shift(N * C);
    for (int64_t i = 0; i < N * C; ++i) {
      const int64_t c = i % C;
      scale[i] = (w.empty() ? 1.0 : w[c]) / std::sqrt(var[i] + eps);
      shift[i] = (b.empty() ? 0.0 : b[c]) - mean[i] * scale[i];
    }
    for (int pass = 0; pass < 2; ++pass) {
      const Tensor& running = pass == 0 ? running_mean : running_var;
      if (!running.defined()) continue;
      std::vector<double> r = as_doubles(running), avg(C, 0.0);
      for (int64_t i = 0; i < N * C; ++i) avg[i % C] += (pass == 0 ? mean[i] : var[i] * L / (L - 1)) / N;
      for (int64_t c = 0; c < C; ++c) r[c] = (1 - momentum) * r[c] + momentum * avg[c];
      Tensor(running).copy_(from_doubles(r, running.sizes(), running.dtype()));
    }
    return channel_affine(input, scale, shift);
  }
};

// Checks of layer_norm and rms_norm; returns (rows, cols) of the input seen as a matrix.
std::pair<int64_t, int64_t> check_normalized(const char* op, const Tensor& input, IntArrayRef shape,
                                             const Tensor& weight, const Tensor& bias) {
  check_float(op, input);
  EMBER_CHECK(!shape.empty(), op,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape);
  EMBER_CHECK(!weight.defined() || weight.sizes() == shape, op,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              weight.defined() ? weight.sizes() : IntArrayRef(), " and normalized_shape = ", shape);
  EMBER_CHECK(!bias.defined() || bias.sizes() == shape, op,
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              bias.defined() ? bias.sizes() : IntArrayRef(), " and normalized_shape = ", shape);
  const int64_t nd = input.dim(), ns = static_cast<int64_t>(shape.size());
  bool ok = nd >= ns;
  for (int64_t i = 0; ok && i < ns; ++i) ok = input.size(nd - ns + i) == shape[i];
  if (!ok) {
    std::ostringstream os;
    os << "Given normalized_shape=" << shape << ", expected input with shape [*";
    for (int64_t s : shape) os << ", " << s;
    os << "], but got input of size" << input.sizes();
    detail::fail(op, os.str());
  }
  int64_t cols = 1;
  for (int64_t s : shape) cols *= s;
  return {cols == 0 ? 0 : input.numel() / cols, cols};
}

// The row kernel over the input as (rows, cols) with affine parameters in the input's dtype.
std::tuple<Tensor, Tensor, Tensor> row_norm(const char* op, const Tensor& input, IntArrayRef shape,
                                            const Tensor& weight, const Tensor& bias, double eps, bool rms) {
  const auto [rows, cols] = check_normalized(op, input, shape, weight, bias);
  Tensor out = make_empty(input.sizes(), input.dtype());
  std::vector<double> mean(rows), rstd(rows);
  if (input.numel() > 0) {
    const Tensor w = weight.defined() ? weight.to(input.dtype()).contiguous() : weight;
    const Tensor b = bias.defined() ? bias.to(input.dtype()).contiguous() : bias;
    kernels::row_norm_kernel(input.contiguous().view({rows, cols}), out.view({rows, cols}), w, b, eps, rms,
                             mean.data(), rstd.data());
    for (double& v : rstd) v = 1.0 / std::sqrt(v + eps);
  }
  DimVector stat_shape(input.sizes());
  for (size_t i = input.sizes().size() - shape.size(); i < stat_shape.size(); ++i) stat_shape[i] = 1;
  return {out, from_doubles(mean, stat_shape, input.dtype()), from_doubles(rstd, stat_shape, input.dtype())};
}

struct NativeLayerNormOp {
  static constexpr const char* name = "native_layer_norm";
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, IntArrayRef shape, const Tensor& weight,
                                                const Tensor& bias, double eps) {
    return row_norm(name, input, shape, weight, bias, eps, false);
  }
};

// layer_norm skips the statistics tensors native_layer_norm returns.
struct LayerNormOp {
  static constexpr const char* name = "layer_norm";
  static Tensor run(const Tensor& input, IntArrayRef shape, const Tensor& weight, const Tensor& bias, double eps) {
    const auto [rows, cols] = check_normalized(name, input, shape, weight, bias);
    Tensor out = make_empty(input.sizes(), input.dtype());
    if (input.numel() > 0) {
      std::vector<double> mean(rows), var(rows);
      const Tensor w = weight.defined() ? weight.to(input.dtype()).contiguous() : weight;
      const Tensor b = bias.defined() ? bias.to(input.dtype()).contiguous() : bias;
      kernels::row_norm_kernel(input.contiguous().view({rows, cols}), out.view({rows, cols}), w, b, eps, false,
                               mean.data(), var.data());
    }
    return out;
  }
};

// As PyTorch 2.4's rms_norm, the default eps is the epsilon of the type computed in (float for
// the 16-bit floats).
struct RmsNormOp {
  static constexpr const char* name = "rms_norm";
  static Tensor run(const Tensor& input, IntArrayRef shape, const Tensor& weight, std::optional<double> eps) {
    const double e = eps.value_or(input.dtype() == kDouble ? DBL_EPSILON : FLT_EPSILON);
    return std::get<0>(row_norm(name, input, shape, weight, Tensor(), e, true));
  }
};

// Statistics per (sample, group) over the group's channels and positions, affine per channel.
struct NativeGroupNormOp {
  static constexpr const char* name = "native_group_norm";
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                int64_t G, double eps) {
    check_float(name, input);
    EMBER_CHECK(input.dim() >= 2, name, "Expected at least 2 dimensions for input tensor but received ", input.dim());
    const int64_t N = input.size(0), C = input.size(1);
    EMBER_CHECK(G > 0 && C % G == 0, name,
                "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
                input.sizes(), " and num_groups=", G);
    EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C), name,
                "Expected weight to be a vector of size equal to the number of channels in input, but got weight of "
                "shape ",
                weight.sizes(), " and input of shape ", input.sizes());
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C), name,
                "Expected bias to be a vector of size equal to the number of channels in input, but got bias of "
                "shape ",
                bias.sizes(), " and input of shape ", input.sizes());
    std::vector<double> mean(N * G), rstd(N * G);
    if (input.numel() == 0) {
      std::fill(mean.begin(), mean.end(), NAN);
      std::fill(rstd.begin(), rstd.end(), NAN);
      return {make_empty(input.sizes(), input.dtype(), layout_of(input)), from_doubles(mean, {N, G}, input.dtype()),
              from_doubles(rstd, {N, G}, input.dtype())};
    }
    const int64_t per_group = input.numel() / (N * G);
    kernels::row_norm_kernel(input.contiguous().view({N * G, per_group}), Tensor(), Tensor(), Tensor(), eps, false,
                             mean.data(), rstd.data());
    for (double& v : rstd) v = 1.0 / std::sqrt(v + eps);
    const std::vector<double> w = as_doubles(weight), b = as_doubles(bias);
    std::vector<double> scale(N * C), shift(N * C);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t g = n * G + c / (C / G);
        scale[n * C + c] = rstd[g] * (w.empty() ? 1.0 : w[c]);
        shift[n * C + c] = (b.empty() ? 0.0 : b[c]) - mean[g] * scale[n * C + c];
      }
    return {channel_affine(input, scale, shift), from_doubles(mean, {N, G}, input.dtype()),
            from_doubles(rstd, {N, G}, input.dtype())};
  }
};

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool) {
  return dispatch::call<BatchNormOp>(input, weight, bias, running_mean, running_var, training, momentum, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  return dispatch::call<NativeBatchNormOp>(input, weight, bias, running_mean, running_var, training, momentum, eps);
}
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps, bool) {
  return dispatch::call<InstanceNormOp>(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps);
}
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool) {
  return dispatch::call<LayerNormOp>(input, normalized_shape, weight, bias, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  return dispatch::call<NativeLayerNormOp>(input, normalized_shape, weight, bias, eps);
}
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps, bool) {
  return std::get<0>(dispatch::call<NativeGroupNormOp>(input, weight, bias, num_groups, eps));
}
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t num_groups, double eps) {
  return dispatch::call<NativeGroupNormOp>(input, weight, bias, num_groups, eps);
}
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  return dispatch::call<RmsNormOp>(input, normalized_shape, weight, eps);
}

}  // namespace nn::functional
}  // namespace ember
