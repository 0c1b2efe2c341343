// nll_loss: an op of its own (forward and backward kernels) because it is the classification
// loss of every training run; cross_entropy is log_softmax followed by it. The other losses are
// composites of differentiable ops (src/nn/functional/loss.cpp).
#include <cmath>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/nn/modules/loss.h"

namespace ember {
namespace {

// Input as (N, C, S): N samples, C classes, S positions (1 without spatial dims).
struct NllShape {
  int64_t n, c, s;
};

NllShape check_nll(const char* op, const Tensor& self, const Tensor& target, const Tensor& weight,
                   int64_t reduction) {
  EMBER_CHECK(self.defined() && target.defined(), op, "input and target must be defined");
  EMBER_CHECK(self.dim() >= 1, op, "input tensor should be 1D or 2D or more, but got a 0-D input");
  EMBER_CHECK(is_floating_type(self.dtype()), op, "\"", op, "\" not implemented for '", self.dtype(), "'");
  EMBER_CHECK(target.dtype() == kLong || target.dtype() == kInt, op,
              "expected target of scalar type Long, but found ", target.dtype());
  EMBER_CHECK(reduction >= Reduction::None && reduction <= Reduction::Sum, op, "invalid reduction ", reduction);
  NllShape sh{1, self.size(self.dim() == 1 ? 0 : 1), 1};
  if (self.dim() == 1) {
    EMBER_CHECK(target.dim() == 0, op, "1D target tensor expects 0D target for 1D input, but got target of shape ",
                target.sizes(), " for input of shape ", self.sizes());
  } else {
    sh.n = self.size(0);
    EMBER_CHECK(target.dim() >= 1 && target.size(0) == sh.n, op, "Expected input batch_size (", sh.n,
                ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ").");
    bool same = target.dim() == self.dim() - 1;
    for (int64_t d = 2; same && d < self.dim(); ++d) same = target.size(d - 1) == self.size(d);
    EMBER_CHECK(same, op, "size mismatch (got input: ", self.sizes(), ", target: ", target.sizes(), ")");
    for (int64_t d = 2; d < self.dim(); ++d) sh.s *= self.size(d);
  }
  if (weight.defined()) {
    EMBER_CHECK(weight.dim() == 1 && weight.numel() == sh.c, op, "weight tensor should be defined either for all ",
                sh.c, " classes or no classes but got weight tensor of shape: ", weight.sizes());
  }
  return sh;
}

// Per entry (n, s): its class and weight (0 when ignored); checks the class range.
template <class T>
void entry_weights(const char* op, const Tensor& target, const Tensor& weight, int64_t c, int64_t ignore_index,
                   std::vector<int64_t>& cls, std::vector<T>& w) {
  const Tensor t = target.to(kLong).contiguous();
  const int64_t* tp = t.data_ptr<int64_t>();
  const Tensor wt = weight.defined() ? weight.to(CppTypeToScalarType<T>::value).contiguous() : Tensor();
  const T* wp = wt.defined() ? wt.data_ptr<T>() : nullptr;
  const int64_t m = t.numel();
  cls.resize(static_cast<size_t>(m));
  w.resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    const int64_t k = tp[i];
    if (k == ignore_index) {
      cls[i] = 0;
      w[i] = 0;
      continue;
    }
    EMBER_CHECK(k >= 0 && k < c, op, "Target ", k, " is out of bounds.");
    cls[i] = k;
    w[i] = wp ? wp[k] : T(1);
  }
}

// Computes in float for float16/bfloat16 (and returns in their dtype), as PyTorch's accumulation.
template <class F>
auto with_compute_dtype(const Tensor& self, F&& f) {
  if (self.dtype() == kDouble) return f(double{});
  return f(float{});
}

struct NllLossOp {
  static constexpr const char* name = "nll_loss";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kFloat32;
  static Tensor run(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                    int64_t ignore_index) {
    const NllShape sh = check_nll(name, self, target, weight, reduction);
    return with_compute_dtype(self, [&](auto tag) {
      using T = decltype(tag);
      constexpr ScalarType st = CppTypeToScalarType<T>::value;
      std::vector<int64_t> cls;
      std::vector<T> w;
      entry_weights<T>(name, target, weight, sh.c, ignore_index, cls, w);
      const Tensor x = self.to(st).contiguous();
      const T* xp = x.data_ptr<T>();
      auto value = [&](int64_t i) {  // i = n * S + s
        const int64_t n = i / sh.s, s = i % sh.s;
        return w[i] == T(0) ? T(0) : -w[i] * xp[(n * sh.c + cls[i]) * sh.s + s];
      };
      const int64_t m = sh.n * sh.s;
      if (reduction == Reduction::None) {
        Tensor out = make_empty(target.sizes(), st);
        T* op = out.data_ptr<T>();
        for (int64_t i = 0; i < m; ++i) op[i] = value(i);
        return out.to(self.dtype());
      }
      double total = 0, total_weight = 0;
      for (int64_t i = 0; i < m; ++i) {
        total += static_cast<double>(value(i));
        total_weight += static_cast<double>(w[i]);
      }
      // Mean over no counted entry is 0/0 = nan, as PyTorch.
      const double result = reduction == Reduction::Sum ? total : total / total_weight;
      return full({}, result, TensorOptions().dtype(self.dtype()));
    });
  }
  // NllLossBackward0 -- self: nll_loss_backward(grad, self, target, weight, reduction, ignore_index)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index) {
    d.name("NllLossBackward0");
    // target and weight never require grad here (not differentiable), so holding them is safe.
    d.grad(self, [s = d.save_for(self, self), target, weight, reduction, ignore_index](const auto& c) {
      return nll_loss_backward(c.grad(), c[s], target, weight, reduction, ignore_index);
    });
  }
};

struct NllLossBackwardOp {
  static constexpr const char* name = "nll_loss_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                    int64_t reduction, int64_t ignore_index) {
    const NllShape sh = check_nll(name, self, target, weight, reduction);
    return with_compute_dtype(self, [&](auto tag) {
      using T = decltype(tag);
      constexpr ScalarType st = CppTypeToScalarType<T>::value;
      std::vector<int64_t> cls;
      std::vector<T> w;
      entry_weights<T>(name, target, weight, sh.c, ignore_index, cls, w);
      const int64_t m = sh.n * sh.s;
      Tensor gi = zeros(self.sizes(), TensorOptions().dtype(st));
      T* gp = gi.data_ptr<T>();
      const Tensor g = grad_output.to(st).contiguous();
      const T* g0 = g.data_ptr<T>();
      if (reduction == Reduction::None) {
        EMBER_CHECK(g.numel() == m, name, "grad_output of shape ", grad_output.sizes(), " does not match target ",
                    target.sizes());
      }
      double scale = 1;
      if (reduction == Reduction::Mean) {
        double total_weight = 0;
        for (int64_t i = 0; i < m; ++i) total_weight += static_cast<double>(w[i]);
        scale = 1 / total_weight;
      }
      for (int64_t i = 0; i < m; ++i) {
        if (w[i] == T(0)) continue;
        const int64_t n = i / sh.s, s = i % sh.s;
        const T gv = reduction == Reduction::None ? g0[i] : static_cast<T>(g0[0] * scale);
        gp[(n * sh.c + cls[i]) * sh.s + s] = -w[i] * gv;
      }
      return gi.to(self.dtype());
    });
  }
};

}  // namespace

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  return dispatch::call<NllLossOp>(self, target, weight, reduction, ignore_index);
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index) {
  return dispatch::call<NllLossBackwardOp>(grad_output, self, target, weight, reduction, ignore_index);
}

}  // namespace ember
