#include "core/tensor_iterator.h"

#include "ember/shape.h"

namespace ember {

// ---- type promotion -----------------------------------------------------------------------

namespace {
ScalarType promote_skip_undefined(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return promote_types(a, b);
}
// A higher-priority group wins unless the lower one is of a higher category (bool < int < float).
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_floating_type(higher)) return higher;
  if (higher == kBool || is_floating_type(lower)) return promote_skip_undefined(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}
}  // namespace

void ResultTypeState::update(const Tensor& t) {
  if (t.dim() > 0) {
    dim_ = promote_skip_undefined(dim_, t.dtype());
  } else {
    zero_ = promote_skip_undefined(zero_, t.dtype());
  }
}

void ResultTypeState::update(const Scalar& s) {
  ScalarType t = s.type();
  if (t == kDouble) t = get_default_dtype();  // a Python float is the default dtype
  wrapped_ = promote_skip_undefined(wrapped_, t);
}

ScalarType ResultTypeState::result() const { return combine_categories(dim_, combine_categories(zero_, wrapped_)); }

ScalarType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.update(a);
  s.update(b);
  return s.result();
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  s.update(a);
  s.update(b);
  return s.result();
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_type(from) && is_integral_type(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// ---- building -----------------------------------------------------------------------------

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  outputs_.push_back({t, std::nullopt});
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  EMBER_CHECK(t.defined(), op_, "expected a defined tensor for argument #", inputs_.size() + 1);
  inputs_.push_back({t, std::nullopt});
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Scalar& s) {
  inputs_.push_back({Tensor(), s});
  return *this;
}

namespace {

void write_scalar(char* buf, const Scalar& s, ScalarType t) {
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T x = s.to<T>();
    std::memcpy(buf, &x, sizeof(T));
  });
}

// [first byte, one past last byte] that a tensor can touch.
std::pair<const char*, const char*> memory_range(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data_ptr());
  int64_t extent = 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.sizes()[d] - 1) * t.strides()[d];
  return {p, p + extent * static_cast<int64_t>(t.element_size())};
}

void check_no_internal_overlap(const Tensor& out, const char* op) {
  for (int64_t d = 0; d < out.dim(); ++d) {
    EMBER_CHECK(!(out.strides()[d] == 0 && out.sizes()[d] > 1), op,
                "unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation.");
  }
}

void check_no_partial_overlap(const Tensor& out, const Tensor& in, const char* op) {
  if (out.numel() == 0 || in.numel() == 0) return;
  if (out.impl()->storage() != in.impl()->storage()) return;
  if (out.data_ptr() == in.data_ptr() && out.sizes() == in.sizes() && out.strides() == in.strides()) return;
  auto [a0, a1] = memory_range(out);
  auto [b0, b1] = memory_range(in);
  EMBER_CHECK(a1 <= b0 || b1 <= a0, op,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
              "single memory location. Please clone() the tensor before performing the operation.");
}

bool same_sizes(IntArrayRef a, IntArrayRef b) { return a.equals(b); }

}  // namespace

TensorIterator::TensorIterator(const TensorIteratorConfig& c) {
  const char* op = c.op_;
  noutputs_ = static_cast<int>(c.outputs_.size());
  ntensors_ = noutputs_ + static_cast<int>(c.inputs_.size());
  EMBER_CHECK(ntensors_ <= kMaxOperands && noutputs_ <= 2, op, "too many operands");

  // dtypes
  ScalarType common;
  if (c.common_) {
    common = *c.common_;
  } else {
    ResultTypeState st;
    for (const auto& in : c.inputs_) in.scalar ? st.update(*in.scalar) : st.update(in.tensor);
    common = st.result();
    if (common == ScalarType::Undefined) common = c.out_dtype_.value_or(get_default_dtype());
  }
  if (c.int_to_float_ && !is_floating_type(common)) common = get_default_dtype();
  common_dtype_ = common;
  const ScalarType out_dtype = c.out_dtype_.value_or(common);

  // broadcast shape of the inputs
  DimVector shape;
  bool have_shape = false;
  for (const auto& in : c.inputs_) {
    if (in.scalar) continue;
    if (!have_shape) {
      shape = in.tensor.sizes();
      have_shape = true;
    } else if (!same_sizes(shape, in.tensor.sizes())) {
      try {
        shape = infer_size(shape, in.tensor.sizes());
      } catch (const Error& e) {
        throw Error(std::string(op) + ": " + e.what());
      }
    }
  }
  if (!have_shape) {
    for (const auto& o : c.outputs_)
      if (o.tensor.defined()) {
        shape = o.tensor.sizes();
        break;
      }
  }
  numel_ = 1;
  for (int64_t s : shape) numel_ *= s;

  // outputs the caller gave: check shape, overlap and dtype
  for (int i = 0; i < noutputs_; ++i) {
    Tensor out = c.outputs_[i].tensor;
    user_outputs_[i] = out;
    dtypes_[i] = out_dtype;
    if (!out.defined()) continue;
    if (!same_sizes(out.sizes(), shape)) {
      EMBER_CHECK(c.resize_outputs_, op, "output with shape ", out.sizes(), " doesn't match the broadcast shape ",
                  shape.ref());
      out.resize_(shape);
    }
    check_no_internal_overlap(out, op);
    for (const auto& in : c.inputs_)
      if (!in.scalar) check_no_partial_overlap(out, in.tensor, op);
    if (out.dtype() != out_dtype) {
      EMBER_CHECK(can_cast(out_dtype, out.dtype()), op, "result type ", out_dtype,
                  " can't be cast to the desired output type ", out.dtype());
      // compute in out_dtype into a temporary of the same layout, copied into `out` at the end
      out = out.is_non_overlapping_and_dense() ? make_empty_strided(out.sizes(), out.strides(), out_dtype)
                                               : make_empty(out.sizes(), out_dtype);
    }
    tensors_[i] = out;
    dtypes_[i] = out_dtype;
  }
  for (int i = noutputs_; i < ntensors_; ++i) {
    const auto& in = c.inputs_[i - noutputs_];
    if (in.scalar) {
      dtypes_[i] = c.cast_inputs_ ? common : in.scalar->type();
      write_scalar(scalars_[i], *in.scalar, dtypes_[i]);
      continue;
    }
    Tensor t = in.tensor;
    if (c.cast_inputs_ && t.dtype() != common) t = t.to(common);
    tensors_[i] = t;
    dtypes_[i] = t.dtype();
  }

  // Fast path: every tensor operand contiguous with the full shape -> one flat dimension.
  bool flat = true;
  for (int i = 0; i < ntensors_ && flat; ++i) {
    const Tensor& t = tensors_[i];
    if (!t.defined()) continue;
    flat = t.is_contiguous() && same_sizes(t.sizes(), shape);
  }
  if (flat) {
    for (int i = 0; i < noutputs_; ++i)
      if (!tensors_[i].defined()) tensors_[i] = make_empty(shape, dtypes_[i]);
    if (!shape.empty()) shape_.push_back(numel_);
    for (int i = 0; i < ntensors_; ++i) {
      const bool scalar = !tensors_[i].defined();
      data_[i] = scalar ? scalars_[i] : static_cast<char*>(tensors_[i].data_ptr());
      if (!shape.empty()) strides_[i].push_back(scalar ? 0 : static_cast<int64_t>(element_size(dtypes_[i])));
    }
    for (int i = 0; i < noutputs_; ++i)
      if (!user_outputs_[i].defined()) user_outputs_[i] = tensors_[i];
    return;
  }

  // General path. Byte strides of every operand over the broadcast shape (0 where broadcast).
  const int64_t nd = static_cast<int64_t>(shape.size());
  for (int i = 0; i < ntensors_; ++i) {
    strides_[i] = DimVector(nd, 0);
    const Tensor& t = tensors_[i];
    if (!t.defined()) continue;
    const int64_t off = nd - t.dim();
    const int64_t es = static_cast<int64_t>(element_size(dtypes_[i]));
    for (int64_t d = 0; d < t.dim(); ++d)
      strides_[i][off + d] = (t.sizes()[d] == 1 && shape[off + d] != 1) ? 0 : t.strides()[d] * es;
  }

  // Order dims innermost first by the operands' strides (outputs given by the caller lead).
  DimVector perm(nd);
  for (int64_t k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int i = 0; i < ntensors_; ++i) {
      if (!tensors_[i].defined()) continue;
      const int64_t s0 = strides_[i][d0], s1 = strides_[i][d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      int cmp = should_swap(perm[d0], perm[d1]);
      if (cmp > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (cmp < 0) {
        break;
      }
    }
  }

  // Allocate missing outputs dense in that order: they inherit the inputs' layout.
  for (int i = 0; i < noutputs_; ++i) {
    if (tensors_[i].defined()) continue;
    DimVector st(nd);
    int64_t s = 1;
    for (int64_t k = 0; k < nd; ++k) {
      st[perm[k]] = s;
      s *= std::max<int64_t>(shape[perm[k]], 1);
    }
    tensors_[i] = make_empty_strided(shape, st, dtypes_[i]);
    user_outputs_[i] = tensors_[i];
    const int64_t es = static_cast<int64_t>(element_size(dtypes_[i]));
    for (int64_t d = 0; d < nd; ++d) strides_[i][d] = shape[d] == 1 ? 0 : st[d] * es;
  }
  for (int i = 0; i < noutputs_; ++i)
    if (!user_outputs_[i].defined()) user_outputs_[i] = tensors_[i];

  // Permute, then coalesce neighbouring dims that are contiguous in every operand.
  shape_.resize(nd);
  SmallVector<int64_t, 5> permuted[kMaxOperands];
  for (int64_t k = 0; k < nd; ++k) shape_[k] = shape[perm[k]];
  for (int i = 0; i < ntensors_; ++i) {
    permuted[i].resize(nd);
    for (int64_t k = 0; k < nd; ++k) permuted[i][k] = strides_[i][perm[k]];
  }
  if (nd > 0) {
    int64_t prev = 0;
    for (int64_t d = 1; d < nd; ++d) {
      bool can = shape_[prev] == 1 || shape_[d] == 1;
      if (!can) {
        can = true;
        for (int i = 0; i < ntensors_; ++i)
          if (permuted[i][prev] * shape_[prev] != permuted[i][d]) {
            can = false;
            break;
          }
      }
      if (can) {
        if (shape_[prev] == 1)
          for (int i = 0; i < ntensors_; ++i) permuted[i][prev] = permuted[i][d];
        shape_[prev] *= shape_[d];
      } else {
        ++prev;
        if (prev != d) {
          shape_[prev] = shape_[d];
          for (int i = 0; i < ntensors_; ++i) permuted[i][prev] = permuted[i][d];
        }
      }
    }
    shape_.resize(prev + 1);
    for (int i = 0; i < ntensors_; ++i) permuted[i].resize(prev + 1);
  }
  EMBER_CHECK(shape_.size() <= 16, op, "tensors with more than 16 non-coalescible dims are not supported");
  for (int i = 0; i < ntensors_; ++i) {
    strides_[i] = std::move(permuted[i]);
    data_[i] = tensors_[i].defined() ? static_cast<char*>(tensors_[i].data_ptr()) : scalars_[i];
  }
}

bool TensorIterator::is_contiguous_or_scalar() const {
  if (ndim() > 1) return false;
  if (ndim() == 0) return true;
  for (int i = 0; i < ntensors_; ++i) {
    const int64_t s = strides_[i][0];
    if (s != 0 && s != static_cast<int64_t>(element_size(dtypes_[i]))) return false;
  }
  return true;
}

void TensorIterator::write_back() {
  for (int i = 0; i < noutputs_; ++i)
    if (!tensors_[i].is_same(user_outputs_[i])) user_outputs_[i].copy_(tensors_[i]);
}

}  // namespace ember
