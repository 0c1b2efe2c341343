// Indexing, gathering, scattering and joining ops, and the TensorIndex type of t.index({...}).
#pragma once
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/tensor.h"

namespace ember {
namespace indexing {

struct NoneIndexType {};
struct EllipsisIndexType {};
// As in libtorch, None is nullopt: a new dim in t.index({None}) and a missing end in Slice(None, 3).
constexpr std::nullopt_t None = std::nullopt;
constexpr EllipsisIndexType Ellipsis{};

// Python's start:stop:step; missing ends are the whole range.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step.value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : v_(NoneIndexType{}) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : v_(EllipsisIndexType{}) {}  // NOLINT
  TensorIndex(const char* s);  // "..." only, as libtorch
  TensorIndex(int64_t i) : v_(i) {}  // NOLINT
  TensorIndex(int i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  TensorIndex(bool b) : v_(b) {}  // NOLINT
  TensorIndex(Slice s) : v_(s) {}  // NOLINT
  TensorIndex(Tensor t) : v_(std::move(t)) {}  // NOLINT

  bool is_none() const { return std::holds_alternative<NoneIndexType>(v_); }
  bool is_ellipsis() const { return std::holds_alternative<EllipsisIndexType>(v_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(v_); }
  bool is_boolean() const { return std::holds_alternative<bool>(v_); }
  bool is_slice() const { return std::holds_alternative<Slice>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  int64_t integer() const { return std::get<int64_t>(v_); }
  bool boolean() const { return std::get<bool>(v_); }
  const Slice& slice() const { return std::get<Slice>(v_); }
  const Tensor& tensor() const { return std::get<Tensor>(v_); }

 private:
  std::variant<NoneIndexType, EllipsisIndexType, int64_t, bool, Slice, Tensor> v_;
};

}  // namespace indexing

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor& cat_out(Tensor& out, TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// reduce "add" or "multiply": src's values (or value) added into or multiplied into self's.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);
Tensor repeat(const Tensor& self, IntArrayRef repeats);
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
// Advanced indexing with a list of (optional) index tensors, as Tensor.index does after slicing.
Tensor index(const Tensor& self, ArrayRef<std::optional<Tensor>> indices);
Tensor& index_put_(Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                   bool accumulate = false);

namespace nn::functional {
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
}
using nn::functional::one_hot;

}  // namespace ember
