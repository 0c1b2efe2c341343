// Sorting and selection: sort, argsort, topk, kthvalue. Each op checks its arguments, allocates
// values and int64 indices and runs a kernel of kernels/cpu/sort.h.
#include "dispatch/dispatch.h"
#include "ember/reduce.h"
#include "kernels/cpu/sort.h"
#include "ops/indexing_util.h"

namespace ember {
namespace {

int64_t size_along(const Tensor& self, int64_t dim) { return self.dim() == 0 ? 1 : self.size(dim); }

// sort's outputs keep the input's layout when it is dense (channels_last stays channels_last).
Tensor empty_like_layout(const Tensor& self, ScalarType dtype) {
  return self.is_non_overlapping_and_dense() ? make_empty_strided(self.sizes(), self.strides(), dtype)
                                             : make_empty(self.sizes(), dtype);
}

std::tuple<Tensor, Tensor> sort_impl(const char* op, const Tensor& self, int64_t dim, bool descending) {
  const int64_t d = maybe_wrap_dim(dim, self.dim(), op);
  Tensor values = empty_like_layout(self, self.dtype());
  Tensor indices = empty_like_layout(self, kLong);
  kernels::sort_kernel(values, indices, self, d, descending);
  return {values, indices};
}

struct SortOp {
  static constexpr const char* name = "sort";
  // Always stable, so stable=false gives one of the orders PyTorch allows.
  static std::tuple<Tensor, Tensor> run(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
    return sort_impl(name, self, dim, descending);
  }
  // SortBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), true)
  static void derivative(autograd::Derivative& d, const Tensor& self, std::optional<bool>, int64_t dim, bool) {
    value_selecting_derivative(d, self, dim, true, "SortBackward0");
  }
};

struct ArgsortOp {
  static constexpr const char* name = "argsort";
  static constexpr bool differentiable = false;  // integer results
  static Tensor run(const Tensor& self, int64_t dim, bool descending) {
    return std::get<1>(sort_impl(name, self, dim, descending));
  }
};

struct TopkOp {
  static constexpr const char* name = "topk";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
    const int64_t d = maybe_wrap_dim(dim, self.dim(), name);
    EMBER_CHECK(k >= 0 && k <= size_along(self, d), name, "selected index k out of range (k = ", k,
                ", size of dim ", d, " = ", size_along(self, d), ")");
    DimVector shape(self.sizes());
    if (self.dim() > 0) shape[d] = k;
    Tensor values = make_empty(shape, self.dtype());
    Tensor indices = make_empty(shape, kLong);
    // a 0-dim result holds one element whatever k is (PyTorch returns the input for k = 0 too)
    kernels::topk_kernel(values, indices, self, self.dim() == 0 ? 1 : k, d, largest);
    return {values, indices};
  }
  // TopkBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), true)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t, int64_t dim, bool, bool) {
    value_selecting_derivative(d, self, dim, true, "TopkBackward0");
  }
};

struct KthvalueOp {
  static constexpr const char* name = "kthvalue";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
    const int64_t d = maybe_wrap_dim(dim, self.dim(), name);
    const int64_t n = size_along(self, d);
    EMBER_CHECK(self.numel() != 0 || n != 0, name, "Expected reduction dim ", d, " to have non-zero size.");
    EMBER_CHECK(k >= 1 && k <= n, name, "selected number k out of range for dimension ", d, " (k = ", k,
                ", size = ", n, ")");
    DimVector keep(self.sizes()), shape(self.sizes());
    if (self.dim() > 0) {
      keep[d] = 1;
      if (keepdim) {
        shape = keep;
      } else {
        shape.erase(static_cast<size_t>(d));
      }
    }
    // fresh results (not views, as PyTorch's), written through aliases of keepdim shape
    Tensor values = make_empty(shape, self.dtype()), indices = make_empty(shape, kLong);
    kernels::kthvalue_kernel(contiguous_alias(values, keep), contiguous_alias(indices, keep), self, k, d);
    return {values, indices};
  }
  // KthvalueBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t, int64_t dim, bool keepdim) {
    value_selecting_derivative(d, self, dim, keepdim, "KthvalueBackward0");
  }
};

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return dispatch::call<SortOp>(self, std::nullopt, dim, descending);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  return dispatch::call<SortOp>(self, stable, dim, descending);
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) { return dispatch::call<ArgsortOp>(self, dim, descending); }
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return dispatch::call<TopkOp>(self, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  return dispatch::call<KthvalueOp>(self, k, dim, keepdim);
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const { return ember::sort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim, bool descending) const {
  return ember::sort(*this, stable, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const { return ember::argsort(*this, dim, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return ember::kthvalue(*this, k, dim, keepdim);
}

}  // namespace ember
