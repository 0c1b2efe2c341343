// Reductions, scans and sorting. Reduced-precision inputs accumulate in float32 (float64 for
// float64), integer sums accumulate in int64, as PyTorch does.
#pragma once
#include <optional>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor& sum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& self);
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& self);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// var, std, var_mean, std_mean with libtorch's overload set: (bool unbiased), (dims, bool unbiased,
// keepdim), (dims, optional correction, keepdim) and (int dim). As in libtorch, an integer passed
// after the dims converts to `unbiased`, not to the correction: write std::optional<int64_t>(2).
Tensor var(const Tensor& self, bool unbiased = true);
Tensor var(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor var(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim = false);
Tensor var(const Tensor& self, int dim);
Tensor std(const Tensor& self, bool unbiased = true);
Tensor std(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim = false);
Tensor std(const Tensor& self, int dim);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased = true);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, int dim);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased = true);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, int dim);
Tensor norm(const Tensor& self, const std::optional<Scalar>& p = 2, IntArrayRef dim = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1, bool keepdim = false);

}  // namespace ember
