// libtorch's remaining ATen free functions (issue 26): aliases, composite math, shape and
// reduction helpers, all composed from Ember's ops in src/ops/aten_tail.cpp so autograd
// follows the composition. Names, overloads and defaults are libtorch 1.13's.
#pragma once
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/factory.h"
#include "ember/tensor.h"
#include "ember/unary_ops.h"

namespace ember {

#define EMBER_DECLARE_COMPOSITE_UNARY(name) \
  Tensor name(const Tensor& self);          \
  Tensor& name##_(Tensor& self);
EMBER_FOR_EACH_COMPOSITE_UNARY(EMBER_DECLARE_COMPOSITE_UNARY)
#undef EMBER_DECLARE_COMPOSITE_UNARY
Tensor positive(const Tensor& self);
Tensor signbit(const Tensor& self);
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor& logit_(Tensor& self, std::optional<double> eps = std::nullopt);

// Free forms of existing methods and their aliases.
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor detach(const Tensor& self);
Tensor& detach_(Tensor& self);
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& fill_(Tensor& self, const Tensor& value);
Tensor& zero_(Tensor& self);
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor& clamp_min_(Tensor& self, const Scalar& min);
Tensor& clamp_min_(Tensor& self, const Tensor& min);
Tensor& clamp_max_(Tensor& self, const Scalar& max);
Tensor& clamp_max_(Tensor& self, const Tensor& max);
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clip(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor& clip_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor& clip_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor multiply(const Tensor& self, const Tensor& other);
Tensor multiply(const Tensor& self, const Scalar& other);
Tensor divide(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor divide(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor true_divide(const Tensor& self, const Tensor& other);
Tensor true_divide(const Tensor& self, const Scalar& other);
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor subtract(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
#define EMBER_DECLARE_COMPARISON_ALIAS(name)            \
  Tensor name(const Tensor& self, const Tensor& other); \
  Tensor name(const Tensor& self, const Scalar& other);
EMBER_DECLARE_COMPARISON_ALIAS(greater)
EMBER_DECLARE_COMPARISON_ALIAS(greater_equal)
EMBER_DECLARE_COMPARISON_ALIAS(less)
EMBER_DECLARE_COMPARISON_ALIAS(less_equal)
EMBER_DECLARE_COMPARISON_ALIAS(not_equal)
#undef EMBER_DECLARE_COMPARISON_ALIAS
Tensor concat(TensorList tensors, int64_t dim = 0);
Tensor concatenate(TensorList tensors, int64_t dim = 0);
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1);
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination);
Tensor ravel(const Tensor& self);
Tensor msort(const Tensor& self);
int64_t size(const Tensor& self, int64_t dim);
int64_t stride(const Tensor& self, int64_t dim);
bool is_same_size(const Tensor& self, const Tensor& other);
bool is_nonzero(const Tensor& self);
bool is_complex(const Tensor& self);
bool is_conj(const Tensor& self);
bool is_neg(const Tensor& self);
ScalarType result_type(const Tensor& tensor, const Tensor& other);
ScalarType result_type(const Tensor& tensor, const Scalar& other);
ScalarType result_type(const Scalar& scalar, const Tensor& tensor);
ScalarType result_type(const Scalar& scalar1, const Scalar& scalar2);
bool can_cast(ScalarType from, ScalarType to);
Tensor& nan_to_num_(Tensor& self, std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt);
Tensor relu6(const Tensor& self);
Tensor& relu6_(Tensor& self);
Tensor& gelu_(Tensor& self, std::string_view approximate = "none");
Tensor& elu_(Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& dropout_(Tensor& self, double p, bool train);

// Binary math.
Tensor arctan2(const Tensor& self, const Tensor& other);
Tensor hypot(const Tensor& self, const Tensor& other);
Tensor copysign(const Tensor& self, const Tensor& other);
Tensor copysign(const Tensor& self, const Scalar& other);
Tensor heaviside(const Tensor& self, const Tensor& values);
Tensor ldexp(const Tensor& self, const Tensor& other);
Tensor& ldexp_(Tensor& self, const Tensor& other);
Tensor logaddexp(const Tensor& self, const Tensor& other);
Tensor logaddexp2(const Tensor& self, const Tensor& other);
Tensor fmax(const Tensor& self, const Tensor& other);
Tensor fmin(const Tensor& self, const Tensor& other);
Tensor xlogy(const Tensor& self, const Tensor& other);
Tensor xlogy(const Scalar& self, const Tensor& other);
Tensor xlogy(const Tensor& self, const Scalar& other);
Tensor& xlogy_(Tensor& self, const Tensor& other);
Tensor& xlogy_(Tensor& self, const Scalar& other);
Tensor float_power(const Tensor& self, const Tensor& exponent);
Tensor float_power(const Tensor& self, const Scalar& exponent);
Tensor float_power(const Scalar& self, const Tensor& exponent);

// Shape and indexing.
Tensor atleast_1d(const Tensor& self);
std::vector<Tensor> atleast_1d(TensorList tensors);
Tensor atleast_2d(const Tensor& self);
std::vector<Tensor> atleast_2d(TensorList tensors);
Tensor atleast_3d(const Tensor& self);
std::vector<Tensor> atleast_3d(TensorList tensors);
Tensor hstack(TensorList tensors);
Tensor vstack(TensorList tensors);
Tensor row_stack(TensorList tensors);
Tensor dstack(TensorList tensors);
Tensor column_stack(TensorList tensors);
std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
std::vector<Tensor> hsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> unsafe_chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size, int64_t dim = 0);
Tensor tile(const Tensor& self, IntArrayRef dims);
Tensor rot90(const Tensor& self, int64_t k = 1, IntArrayRef dims = {0, 1});
Tensor fliplr(const Tensor& self);
Tensor flipud(const Tensor& self);
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor diagflat(const Tensor& self, int64_t offset = 0);
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor block_diag(TensorList tensors);
Tensor cartesian_prod(TensorList tensors);
std::vector<Tensor> meshgrid(TensorList tensors);
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing);
Tensor kron(const Tensor& self, const Tensor& other);
Tensor trace(const Tensor& self);
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions options = kLong);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions options = kLong);
Tensor take(const Tensor& self, const Tensor& index);
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
Tensor diagonal_copy(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor permute_copy(const Tensor& self, IntArrayRef dims);
Tensor select_copy(const Tensor& self, int64_t dim, int64_t index);
Tensor squeeze_copy(const Tensor& self);
Tensor squeeze_copy(const Tensor& self, int64_t dim);
Tensor unsqueeze_copy(const Tensor& self, int64_t dim);
Tensor t_copy(const Tensor& self);
Tensor transpose_copy(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor expand_copy(const Tensor& self, IntArrayRef size, bool implicit = false);
Tensor view_copy(const Tensor& self, IntArrayRef size);
Tensor detach_copy(const Tensor& self);
Tensor alias_copy(const Tensor& self);
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor unfold_copy(const Tensor& self, int64_t dimension, int64_t size, int64_t step);
Tensor slice_copy(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                  std::optional<int64_t> end = std::nullopt, int64_t step = 1);

// Reductions and statistics.
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
               std::optional<ScalarType> dtype = std::nullopt);
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim = std::nullopt);
Tensor count_nonzero(const Tensor& self, IntArrayRef dim);
std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor median(const Tensor& self);
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor logcumsumexp(const Tensor& self, int64_t dim);
Tensor diff(const Tensor& self, int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = std::nullopt,
            const std::optional<Tensor>& append = std::nullopt);
Tensor trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapz(const Tensor& y, double dx = 1, int64_t dim = -1);
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p = 2);
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm);
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false, bool invert = false);
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
Tensor isposinf(const Tensor& self);
Tensor isneginf(const Tensor& self);
Tensor isreal(const Tensor& self);

// Factories and random fills.
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0, TensorOptions options = {});
Tensor range(const Scalar& start, const Scalar& end, TensorOptions options = {});
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {});
Tensor hann_window(int64_t window_length, TensorOptions options = {});
Tensor hann_window(int64_t window_length, bool periodic, TensorOptions options = {});
Tensor hamming_window(int64_t window_length, TensorOptions options = {});
Tensor hamming_window(int64_t window_length, bool periodic, TensorOptions options = {});
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, TensorOptions options = {});
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta, TensorOptions options = {});
Tensor bartlett_window(int64_t window_length, TensorOptions options = {});
Tensor bartlett_window(int64_t window_length, bool periodic, TensorOptions options = {});
Tensor blackman_window(int64_t window_length, TensorOptions options = {});
Tensor blackman_window(int64_t window_length, bool periodic, TensorOptions options = {});

}  // namespace ember
