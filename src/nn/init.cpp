#include "ember/nn/init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/pointwise.h"

namespace ember::nn::init {
namespace {

void check_defined(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), op, "the tensor to initialize is undefined");
  EMBER_CHECK(t.is_floating_point(), op, "expected a floating-point tensor, but got ", t.dtype());
}

int64_t fan(const Tensor& t, FanModeType mode) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(t);
  return std::holds_alternative<enumtype::kFanIn>(mode) ? fan_in : fan_out;
}

}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) {
  if (std::holds_alternative<enumtype::kTanh>(nonlinearity)) return 5.0 / 3.0;
  if (std::holds_alternative<enumtype::kReLU>(nonlinearity)) return std::sqrt(2.0);
  if (std::holds_alternative<enumtype::kLeakyReLU>(nonlinearity)) return std::sqrt(2.0 / (1 + param * param));
  return 1.0;  // linear, conv*, sigmoid
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK(tensor.dim() >= 2, "_calculate_fan_in_and_fan_out",
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

// The random initializers draw as libtorch's do: through the tensor's own uniform_ / normal_, in
// its dtype, so that after manual_seed they give libtorch's values.
Tensor uniform_(Tensor tensor, double low, double high) {
  check_defined(tensor, "uniform_");
  EMBER_CHECK(low <= high, "uniform_", "uniform_ expects to return a [from, to) range, but found from=", low,
              " > to=", high);
  NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  check_defined(tensor, "normal_");
  EMBER_CHECK(std >= 0, "normal_", "normal_ expects std >= 0.0, but found std ", std);
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

// PyTorch's (Python) trunc_normal_: uniform in [2l-1, 2u-1], then the inverse of erf maps it onto
// the truncated normal, each step in place in the tensor's dtype.
Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  check_defined(tensor, "trunc_normal_");
  EMBER_CHECK(a < b, "trunc_normal_", "expected a < b, but got a=", a, ", b=", b);
  EMBER_CHECK(std >= 0, "trunc_normal_", "expects std >= 0.0, but found std ", std);
  NoGradGuard no_grad;
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  tensor.uniform_(2 * l - 1, 2 * u - 1);
  tensor.copy_(erfinv(tensor).mul_(std * std::sqrt(2.0)).add_(mean).clamp_(Scalar(a), Scalar(b)));
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  EMBER_CHECK(tensor.defined(), "constant_", "the tensor to initialize is undefined");
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor eye_(Tensor matrix) {
  EMBER_CHECK(matrix.defined() && matrix.dim() == 2, "eye_", "Only tensors with 2 dimensions are supported");
  NoGradGuard no_grad;
  matrix.copy_(eye(matrix.size(0), matrix.size(1), TensorOptions().dtype(matrix.dtype())));
  return matrix;
}

Tensor dirac_(Tensor tensor) {
  check_defined(tensor, "dirac_");
  const int64_t dims = tensor.dim();
  EMBER_CHECK(dims >= 3 && dims <= 5, "dirac_", "Only tensors with 3, 4, or 5 dimensions are supported");
  NoGradGuard no_grad;
  tensor.zero_();
  const int64_t n = std::min(tensor.size(0), tensor.size(1));
  for (int64_t d = 0; d < n; ++d) {
    Tensor kernel = tensor.select(0, d).select(0, d);
    for (int64_t k = 2; k < dims; ++k) kernel = kernel.select(0, tensor.size(k) / 2);
    kernel.fill_(1);
  }
  return tensor;
}

Tensor sparse_(Tensor tensor, double sparsity, double std) {
  check_defined(tensor, "sparse_");
  EMBER_CHECK(tensor.dim() == 2, "sparse_", "Only tensors with 2 dimensions are supported");
  NoGradGuard no_grad;
  const int64_t rows = tensor.size(0), columns = tensor.size(1);
  const auto num_zeros = static_cast<int64_t>(std::ceil(sparsity * static_cast<double>(rows)));
  tensor.normal_(0, std);
  for (int64_t c = 0; c < columns; ++c) {
    const Tensor zero_rows = randperm(rows).narrow(0, 0, std::min(num_zeros, rows));
    tensor.select(1, c).index_fill_(0, zero_rows, 0);
  }
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  check_defined(tensor, "xavier_uniform_");
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  check_defined(tensor, "xavier_normal_");
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return normal_(std::move(tensor), 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  check_defined(tensor, "kaiming_uniform_");
  if (tensor.numel() == 0) return tensor;  // PyTorch warns and leaves an empty tensor alone
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  check_defined(tensor, "kaiming_normal_");
  if (tensor.numel() == 0) return tensor;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  return normal_(std::move(tensor), 0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  check_defined(tensor, "orthogonal_");
  EMBER_CHECK(tensor.dim() >= 2, "orthogonal_", "Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  const int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  // QR of a normal matrix with at least as many rows as columns (transposed otherwise), by
  // modified Gram-Schmidt; Q's columns take the signs of R's diagonal so Q is uniformly distributed.
  const bool transposed = rows < cols;
  const int64_t m = transposed ? cols : rows, n = transposed ? rows : cols;
  // libtorch's draw: randn(rows, cols) in the default dtype, transposed when wide; its Householder QR
  // is replaced by Gram-Schmidt in float64, which gives the same Q up to rounding
  Tensor a = randn({rows, cols});
  a = (transposed ? a.t() : a).to(kDouble).contiguous();
  double* q = a.data_ptr<double>();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < m; ++i) dot += q[i * n + k] * q[i * n + j];
      for (int64_t i = 0; i < m; ++i) q[i * n + j] -= dot * q[i * n + k];
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += q[i * n + j] * q[i * n + j];
    norm = std::sqrt(norm);
    // r_jj = norm > 0, so the sign correction keeps the column as it is.
    for (int64_t i = 0; i < m; ++i) q[i * n + j] /= norm;
  }
  NoGradGuard no_grad;
  Tensor result = transposed ? a.t() : a;
  tensor.copy_((result * gain).contiguous().view(tensor.sizes()));
  return tensor;
}

}  // namespace ember::nn::init
