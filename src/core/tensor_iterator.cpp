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
// A higher-priority group wins unless the lower one is of a higher category (bool < int < float
// < complex). A float tensor with a complex number becomes complex of the tensor's precision.
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_complex_type(higher)) return higher;
  if (is_floating_type(higher)) return is_complex_type(lower) ? to_complex_type(higher) : higher;
  if (higher == kBool || is_floating_type(lower) || is_complex_type(lower)) return promote_skip_undefined(higher, lower);
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
  if (t == kComplexDouble) t = to_complex_type(get_default_dtype());  // a Python complex: its complex
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
  if (is_complex_type(from) && !is_complex_type(to)) return false;
  if (is_floating_type(from) && is_integral_type(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// ---- building -----------------------------------------------------------------------------

TensorIteratorConfig::Operand& TensorIteratorConfig::push(bool output) {
  EMBER_CHECK(noutputs_ + ninputs_ < kMaxOperands, op_, "too many operands");
  if (output) {
    EMBER_CHECK(ninputs_ == 0 && noutputs_ < 2, op_, "outputs must be added first (at most 2)");
    return operands_[noutputs_++];
  }
  return operands_[noutputs_ + ninputs_++];
}
TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  push(true).tensor = &t;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  EMBER_CHECK(t.defined(), op_, "expected a defined tensor for argument #", ninputs_ + 1);
  push(false).tensor = &t;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_owned_input(Tensor t) {
  EMBER_CHECK(t.defined(), op_, "expected a defined tensor for argument #", ninputs_ + 1);
  Operand& o = push(false);
  o.owned = std::move(t);
  o.tensor = &o.owned;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Scalar& s) {
  Operand& o = push(false);
  o.tensor = nullptr;
  o.scalar = s;
  return *this;
}

namespace {

void write_scalar(char* buf, const Scalar& s, ScalarType t) {
  if (is_complex_type(t)) {
    visit_complex(t, [&](auto v) {
      using T = decltype(v);
      T x = s.to<T>();
      std::memcpy(buf, &x, sizeof(T));
    });
    return;
  }
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
  // Strided operands (chunks of one tensor along an inner dim) interleave without sharing an
  // element; telling that apart from real overlap is too hard, and PyTorch allows them too.
  if (!out.is_non_overlapping_and_dense() || !in.is_non_overlapping_and_dense()) return;
  auto [a0, a1] = memory_range(out);
  auto [b0, b1] = memory_range(in);
  EMBER_CHECK(a1 <= b0 || b1 <= a0, op,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
              "single memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace

TensorIterator::TensorIterator(const TensorIteratorConfig& c) {
  const char* op = c.op_;
  noutputs_ = c.noutputs_;
  ntensors_ = c.noutputs_ + c.ninputs_;
  const TensorIteratorConfig::Operand* ops = c.operands_;
  if (try_fast_build(c)) return;

  // dtypes
  ScalarType common;
  if (c.common_) {
    common = *c.common_;
  } else {
    ResultTypeState st;
    for (int i = noutputs_; i < ntensors_; ++i) ops[i].tensor ? st.update(*ops[i].tensor) : st.update(ops[i].scalar);
    common = st.result();
    if (common == ScalarType::Undefined) common = c.out_dtype_.value_or(get_default_dtype());
  }
  if (c.int_to_float_ && !is_floating_type(common) && !is_complex_type(common)) common = get_default_dtype();
  common_dtype_ = common;
  const ScalarType out_dtype = c.out_dtype_.value_or(common);

  // broadcast shape of the inputs (of the outputs when there are no tensor inputs)
  DimVector shape;
  bool have_shape = false;
  for (int i = noutputs_; i < ntensors_; ++i) {
    if (!ops[i].tensor) continue;
    IntArrayRef s = ops[i].tensor->sizes();
    if (!have_shape) {
      shape = s;
      have_shape = true;
    } else if (!shape.ref().equals(s)) {
      shape = infer_size(shape, s, op);
    }
  }
  for (int i = 0; i < noutputs_ && !have_shape; ++i) {
    if (ops[i].tensor->defined()) {
      shape = ops[i].tensor->sizes();
      have_shape = true;
    }
  }
  const int64_t nd = static_cast<int64_t>(shape.size());
  EMBER_CHECK(nd <= kMaxDims, op, "tensors with more than ", kMaxDims, " dimensions are not supported");
  numel_ = 1;
  for (int64_t s : shape) numel_ *= s;

  // The tensor each operand is computed in: t[i] (null for a Scalar or an output to allocate).
  const Tensor* t[kMaxOperands] = {};

  // outputs the caller gave: check shape, overlap and dtype
  for (int i = 0; i < noutputs_; ++i) {
    outputs_[i] = *ops[i].tensor;
    dtypes_[i] = out_dtype;
    Tensor& out = outputs_[i];
    if (!out.defined()) continue;
    if (!out.sizes().equals(shape)) {
      EMBER_CHECK(c.resize_outputs_, op, "output with shape ", out.sizes(), " doesn't match the broadcast shape ",
                  shape.ref());
      out.resize_(shape);
    }
    check_no_internal_overlap(out, op);
    for (int j = noutputs_; j < ntensors_; ++j)
      if (ops[j].tensor) check_no_partial_overlap(out, *ops[j].tensor, op);
    if (out.dtype() != out_dtype || out.is_conj()) {
      EMBER_CHECK(can_cast(out_dtype, out.dtype()), op, "result type ", out_dtype,
                  " can't be cast to the desired output type ", out.dtype());
      // compute in out_dtype into a temporary of the same layout, copied into `out` at the end
      // (copy_ casts, and conjugates into a conjugate view)
      owned_[i] = out.is_non_overlapping_and_dense() ? make_empty_strided(out.sizes(), out.strides(), out_dtype)
                                                     : make_empty(out.sizes(), out_dtype);
      t[i] = &owned_[i];
    } else {
      t[i] = &out;
    }
  }
  for (int i = noutputs_; i < ntensors_; ++i) {
    if (!ops[i].tensor) {
      dtypes_[i] = c.cast_inputs_ ? common : ops[i].scalar.type();
      write_scalar(scalars_[i], ops[i].scalar, dtypes_[i]);
      continue;
    }
    const Tensor& in = *ops[i].tensor;
    if (c.cast_inputs_ && in.dtype() != common) {
      owned_[i] = in.to(common);
      t[i] = &owned_[i];
    } else if (ops[i].owned.defined()) {
      owned_[i] = ops[i].owned;
      t[i] = &owned_[i];
    } else {
      t[i] = &in;
    }
    dtypes_[i] = t[i]->dtype();
    conj_[i] = t[i]->is_conj();
  }

  // Flat path: every tensor operand contiguous with the full shape -> one dimension.
  bool flat = true;
  for (int i = 0; i < ntensors_ && flat; ++i)
    if (t[i]) flat = t[i]->is_contiguous() && t[i]->sizes().equals(shape);
  if (flat) {
    ndim_ = nd == 0 ? 0 : 1;
    shape_[0] = numel_;
    for (int i = 0; i < ntensors_; ++i) {
      if (i < noutputs_ && !t[i]) {
        outputs_[i] = make_empty(shape, dtypes_[i]);
        t[i] = &outputs_[i];
      }
      data_[i] = t[i] ? static_cast<char*>(t[i]->data_ptr()) : scalars_[i];
      strides_[i][0] = t[i] ? static_cast<int64_t>(element_size(dtypes_[i])) : 0;
    }
    return;
  }

  // General path. Byte strides of every operand over the broadcast shape (0 where broadcast).
  int64_t st[kMaxOperands][kMaxDims];
  for (int i = 0; i < ntensors_; ++i) {
    for (int64_t d = 0; d < nd; ++d) st[i][d] = 0;
    if (!t[i]) continue;
    const int64_t off = nd - t[i]->dim();
    const int64_t es = static_cast<int64_t>(element_size(dtypes_[i]));
    for (int64_t d = 0; d < t[i]->dim(); ++d)
      st[i][off + d] = (t[i]->sizes()[d] == 1 && shape[off + d] != 1) ? 0 : t[i]->strides()[d] * es;
  }

  // Order dims innermost first by the operands' strides (outputs given by the caller lead).
  int64_t perm[kMaxDims];
  for (int64_t k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int i = 0; i < ntensors_; ++i) {
      if (!t[i]) continue;
      const int64_t s0 = st[i][d0], s1 = st[i][d1];
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
    if (t[i]) continue;
    DimVector ost(nd);
    int64_t s = 1;
    for (int64_t k = 0; k < nd; ++k) {
      ost[perm[k]] = s;
      s *= std::max<int64_t>(shape[perm[k]], 1);
    }
    outputs_[i] = make_empty_strided(shape, ost, dtypes_[i]);
    t[i] = &outputs_[i];
    const int64_t es = static_cast<int64_t>(element_size(dtypes_[i]));
    for (int64_t d = 0; d < nd; ++d) st[i][d] = shape[d] == 1 ? 0 : ost[d] * es;
  }

  // Permute, then coalesce neighbouring dims that are contiguous in every operand.
  for (int64_t k = 0; k < nd; ++k) {
    shape_[k] = shape[perm[k]];
    for (int i = 0; i < ntensors_; ++i) strides_[i][k] = st[i][perm[k]];
  }
  ndim_ = nd;
  if (nd > 0) {
    int64_t prev = 0;
    for (int64_t d = 1; d < nd; ++d) {
      bool can = shape_[prev] == 1 || shape_[d] == 1;
      if (!can) {
        can = true;
        for (int i = 0; i < ntensors_ && can; ++i) can = strides_[i][prev] * shape_[prev] == strides_[i][d];
      }
      if (can) {
        if (shape_[prev] == 1)
          for (int i = 0; i < ntensors_; ++i) strides_[i][prev] = strides_[i][d];
        shape_[prev] *= shape_[d];
      } else {
        ++prev;
        shape_[prev] = shape_[d];
        for (int i = 0; i < ntensors_; ++i) strides_[i][prev] = strides_[i][d];
      }
    }
    ndim_ = prev + 1;
  }
  for (int i = 0; i < ntensors_; ++i) data_[i] = t[i] ? static_cast<char*>(t[i]->data_ptr()) : scalars_[i];
}

// The common small op: fresh outputs, contiguous tensor inputs of one dtype and one shape, no
// Scalars and no dtype overrides. Everything the general path would compute is known directly.
bool TensorIterator::try_fast_build(const TensorIteratorConfig& c) {
  const TensorIteratorConfig::Operand* ops = c.operands_;
  if (c.common_ || c.out_dtype_ || c.ninputs_ == 0) return false;
  for (int i = 0; i < noutputs_; ++i)
    if (ops[i].tensor->defined()) return false;
  if (!ops[noutputs_].tensor) return false;
  const Tensor& first = *ops[noutputs_].tensor;
  const ScalarType dt = first.dtype();
  const IntArrayRef sizes = first.sizes();
  if (c.int_to_float_ && !is_floating_type(dt) && !is_complex_type(dt)) return false;
  for (int i = noutputs_; i < ntensors_; ++i) {
    const Tensor* in = ops[i].tensor;
    if (!in || in->dtype() != dt || !in->is_contiguous() || !in->sizes().equals(sizes)) return false;
  }
  common_dtype_ = dt;
  numel_ = first.numel();
  ndim_ = sizes.empty() ? 0 : 1;
  shape_[0] = numel_;
  const int64_t es = static_cast<int64_t>(element_size(dt));
  for (int i = 0; i < ntensors_; ++i) {
    if (i < noutputs_) outputs_[i] = make_empty(sizes, dt);
    if (i >= noutputs_ && ops[i].owned.defined()) owned_[i] = ops[i].owned;
    dtypes_[i] = dt;
    if (i >= noutputs_) conj_[i] = ops[i].tensor->is_conj();
    data_[i] = static_cast<char*>(i < noutputs_ ? outputs_[i].data_ptr() : ops[i].tensor->data_ptr());
    strides_[i][0] = es;
  }
  return true;
}

void TensorIterator::for_each_rows(RowFn loop, int64_t grain_size) {
  if (numel_ > 0) {
    if (numel_ < grain_size) {
      serial_rows(loop, 0, numel_);
    } else {
      parallel_for(0, numel_, grain_size, [&](int64_t b, int64_t e) { serial_rows(loop, b, e); });
    }
  }
  write_back();
}

void TensorIterator::serial_rows(RowFn loop, int64_t begin, int64_t end) const {
  const int nt = ntensors_;
  const int64_t nd = ndim();
  char* ptrs[kMaxOperands] = {};
  int64_t inner[kMaxOperands];
  int64_t outer[kMaxOperands] = {};  // zero for the operands past nt, which the thunk also steps
  if (nd <= 1) {
    for (int a = 0; a < nt; ++a) {
      inner[a] = nd == 0 ? 0 : strides_[a][0];
      ptrs[a] = data_[a] + begin * inner[a];
    }
    loop.call(loop.obj, ptrs, inner, end - begin, 1, outer);
    return;
  }
  int64_t idx[kMaxDims];
  int64_t rem = begin;
  for (int64_t d = 0; d < nd; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  for (int a = 0; a < nt; ++a) {
    inner[a] = strides_[a][0];
    outer[a] = strides_[a][1];
  }
  const int64_t len = shape_[0];
  int64_t pos = begin;
  while (pos < end) {
    for (int a = 0; a < nt; ++a) {
      char* p = data_[a];
      for (int64_t d = 0; d < nd; ++d) p += idx[d] * strides_[a][d];
      ptrs[a] = p;
    }
    // whole rows along dim 1 go to the loop at once; a partial row alone
    const int64_t rows = idx[0] == 0 ? std::min(shape_[1] - idx[1], (end - pos) / len) : 0;
    const int64_t n = rows > 0 ? len : std::min(len - idx[0], end - pos);
    loop.call(loop.obj, ptrs, inner, n, std::max<int64_t>(rows, 1), outer);
    if (rows > 0) {
      pos += rows * len;
      idx[1] += rows;
    } else {
      pos += n;
      idx[0] += n;
    }
    for (int64_t d = 0; d + 1 < nd; ++d) {
      if (idx[d] >= shape_[d]) {
        idx[d] = 0;
        ++idx[d + 1];
      }
    }
  }
}

bool TensorIterator::is_contiguous_or_scalar() const {
  if (ndim_ > 1) return false;
  if (ndim_ == 0) return true;
  for (int i = 0; i < ntensors_; ++i) {
    const int64_t s = strides_[i][0];
    if (s != 0 && s != static_cast<int64_t>(element_size(dtypes_[i]))) return false;
  }
  return true;
}

void TensorIterator::write_back() {
  for (int i = 0; i < noutputs_; ++i)
    if (owned_[i].defined()) outputs_[i].copy_(owned_[i]);
}

}  // namespace ember
