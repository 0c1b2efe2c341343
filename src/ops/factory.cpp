// Factories: new tensors from sizes, values, ranges, random draws or foreign memory.
#include "ember/factory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "dispatch/dispatch.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "kernels/cpu/cast.h"
#include "ops/quantized_util.h"
#include "ops/random.h"

namespace ember {
namespace {

Tensor empty_with(IntArrayRef sizes, const TensorOptions& o) {
  check_cpu_device("empty", o.device());
  MemoryFormat f = o.memory_format_opt().value_or(MemoryFormat::Contiguous);
  return make_empty(sizes, o.dtype(), f);
}

// Options of a *_like factory: the input's dtype and layout unless `options` says otherwise.
Tensor empty_like_impl(const Tensor& self, const TensorOptions& options) {
  const ScalarType dtype = options.has_dtype() ? options.dtype() : self.dtype();
  MemoryFormat f = options.memory_format_opt().value_or(MemoryFormat::Preserve);
  if (f == MemoryFormat::Preserve) {
    if (self.is_non_overlapping_and_dense()) return make_empty_strided(self.sizes(), self.strides(), dtype);
    f = self.suggest_memory_format();
  }
  return make_empty(self.sizes(), dtype, f);
}

// A complex tensor of `sizes` over a new real tensor of sizes + [2] that make(real options, real
// sizes) fills: the random factories draw the two parts independently, as PyTorch.
template <class F>
Tensor complex_of_parts(IntArrayRef sizes, const TensorOptions& o, F&& make) {
  DimVector real_sizes(sizes);
  real_sizes.push_back(2);
  const Tensor r = make(o.dtype(to_real_value_type(o.dtype())), real_sizes);
  return Tensor(IntrusivePtr<TensorImpl>::make(r.impl()->storage(), o.dtype(), sizes, contiguous_strides(sizes).ref(), 0));
}

template <class F>
Tensor fill_each(Tensor out, F&& draw) {  // draw() -> double, written in out's dtype
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = kernels::cast<T>(draw());
  });
  return out;
}

struct EmptyOp {
  static constexpr const char* name = "empty";
  static Tensor run(IntArrayRef sizes, const TensorOptions& o) {
    if (!is_quantized_type(o.dtype())) return empty_with(sizes, o);
    // a quantized dtype: PyTorch's _empty_affine_quantized with its defaults, scale 1, zero point 0
    check_cpu_device("empty", o.device());
    return quantized::empty_quantized(sizes, quantized::per_tensor_quantizer(o.dtype(), 1.0, 0),
                                      o.memory_format_opt().value_or(MemoryFormat::Contiguous));
  }
};
struct FullOp {
  static constexpr const char* name = "full";
  static Tensor run(IntArrayRef sizes, const Scalar& value, const TensorOptions& o) {
    TensorOptions opt = o;
    if (!o.has_dtype()) {  // full infers its dtype from the value, as PyTorch
      opt = o.dtype(value.isFloatingPoint() ? get_default_dtype()
                    : value.isComplex()     ? to_complex_type(get_default_dtype())
                                            : value.type());
    }
    Tensor t = empty_with(sizes, opt);
    return t.fill_(value);
  }
};
struct ArangeOp {
  static constexpr const char* name = "arange";
  static Tensor run(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
    const double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
    EMBER_CHECK(st != 0, name, "step must be nonzero");
    EMBER_CHECK(std::isfinite(s) && std::isfinite(e), name, "unsupported range: ", start, " -> ", end);
    EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), name, "upper bound and larger bound inconsistent with step sign");
    const bool all_int = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
    const ScalarType dtype = o.has_dtype() ? o.dtype() : all_int ? kLong : get_default_dtype();
    const int64_t n = all_int ? (end.toLong() - start.toLong() + step.toLong() - (step.toLong() > 0 ? 1 : -1)) / step.toLong()
                              : static_cast<int64_t>(std::ceil((e - s) / st));
    Tensor out = make_empty({std::max<int64_t>(n, 0)}, dtype);
    int64_t i = 0;
    if (all_int) {
      const int64_t s0 = start.toLong(), d = step.toLong();
      return fill_each(out, [&] { return static_cast<double>(s0 + d * i++); });
    }
    return fill_each(out, [&] { return s + st * static_cast<double>(i++); });
  }
};
struct LinspaceOp {
  static constexpr const char* name = "linspace";
  static Tensor run(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& o) {
    EMBER_CHECK(steps >= 0, name, "number of steps must be non-negative");
    Tensor out = empty_with({steps}, o);
    const double s = start.toDouble(), e = end.toDouble();
    const double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
    const int64_t half = steps / 2;
    int64_t i = 0;
    // symmetric evaluation from both ends, as PyTorch, so the last element is exactly `end`
    return fill_each(out, [&] {
      const int64_t k = i++;
      if (steps == 1) return s;
      return k < half ? s + step * static_cast<double>(k) : e - step * static_cast<double>(steps - k - 1);
    });
  }
};
struct EyeOp {
  static constexpr const char* name = "eye";
  static Tensor run(int64_t n, int64_t m, const TensorOptions& o) {
    EMBER_CHECK(n >= 0, name, "n must be greater or equal to 0, got ", n);
    EMBER_CHECK(m >= 0, name, "m must be greater or equal to 0, got ", m);
    Tensor out = empty_with({n, m}, o);
    out.zero_();
    if (std::min(n, m) > 0) out.diagonal().fill_(1);
    return out;
  }
};

struct RandOp {
  static constexpr const char* name = "rand";
  static Tensor run(IntArrayRef sizes, Generator* g, const TensorOptions& o) {
    if (is_complex_type(o.dtype()))  // each part uniform in [0, 1)
      return complex_of_parts(sizes, o, [&](const TensorOptions& ro, IntArrayRef rs) { return run(rs, g, ro); });
    EMBER_CHECK(is_floating_type(o.dtype()), name, "expected a floating point dtype, got ", o.dtype());
    Tensor out = empty_with(sizes, o);
    rng::uniform_(out, 0, 1, g);
    return out;
  }
};
struct NormalOp {
  static constexpr const char* name = "normal";
  static Tensor run(double mean, double std, IntArrayRef sizes, Generator* g, const TensorOptions& o) {
    EMBER_CHECK(std >= 0.0, name, "expects std >= 0.0, but found std ", std);
    if (is_complex_type(o.dtype())) {  // each part with variance std^2 / 2, as PyTorch's complex normal
      return complex_of_parts(sizes, o, [&](const TensorOptions& ro, IntArrayRef rs) {
        return run(mean, std / std::sqrt(2.0), rs, g, ro);
      });
    }
    EMBER_CHECK(is_floating_type(o.dtype()), name, "expected a floating point dtype, got ", o.dtype());
    Tensor out = empty_with(sizes, o);
    rng::normal_(out, mean, std, g);
    return out;
  }
};
// normal(mean, std) with a tensor mean or std or both: libtorch's order, standard normals (std
// folded in when it is a number), times a tensor std, plus mean, in the broadcast shape and the
// tensors' dtype. Not reparameterized: mean and std get zero gradients (NormalBackward1/2/3).
struct NormalTensorOp {
  static constexpr const char* name = "normal";
  template <class M, class S>
  static Tensor run(const M& mean, const S& std, Generator* g) {
    DimVector sizes;
    ScalarType dtype = kFloat;
    if constexpr (autograd::is_tensor<M>) {
      EMBER_CHECK(is_floating_type(mean.dtype()), name, "expected mean to be a floating point tensor, got ",
                  mean.dtype());
      sizes = DimVector(mean.sizes());
      dtype = mean.dtype();
    }
    if constexpr (autograd::is_tensor<S>) {
      EMBER_CHECK(is_floating_type(std.dtype()), name, "expected std to be a floating point tensor, got ", std.dtype());
      EMBER_CHECK(std.numel() == 0 || std.ge(0).all().template item<bool>(), name,
                  "expects all elements of std >= 0.0");
      if constexpr (autograd::is_tensor<M>) {
        EMBER_CHECK(mean.dtype() == std.dtype(), name, "mean (", mean.dtype(), ") and std (", std.dtype(),
                    ") must have the same dtype");
        sizes = infer_size(mean.sizes(), std.sizes(), name);
      } else {
        sizes = DimVector(std.sizes());
        dtype = std.dtype();
      }
    } else {
      EMBER_CHECK(std >= 0.0, name, "expects std >= 0.0, but found std ", std);
    }
    // (out of place, so the result starts at version 0 as libtorch's)
    const Tensor z = empty(sizes, TensorOptions().dtype(dtype));
    if constexpr (autograd::is_tensor<S>) {
      rng::normal_(z, 0.0, 1.0, g);
      return z.mul(std).add(mean);
    } else {
      rng::normal_(z, 0.0, std, g);
      return z.add(mean);
    }
  }
  template <class M, class S>
  static void derivative(autograd::Derivative& d, const M& mean, const S& std, Generator* /*g*/) {
    d.name(!autograd::is_tensor<S>   ? "NormalBackward1"
           : !autograd::is_tensor<M> ? "NormalBackward2"
                                     : "NormalBackward3");
    if constexpr (autograd::is_tensor<M>)
      d.grad(mean, [s = DimVector(mean.sizes())](const auto& c) { return zeros(s, c.grad().options()); });
    if constexpr (autograd::is_tensor<S>)
      d.grad(std, [s = DimVector(std.sizes())](const auto& c) { return zeros(s, c.grad().options()); });
  }
};
struct RandintOp {
  static constexpr const char* name = "randint";
  static Tensor run(int64_t low, int64_t high, IntArrayRef sizes, Generator* g, const TensorOptions& o) {
    Tensor out = empty_with(sizes, o.has_dtype() ? o : o.dtype(kLong));
    rng::random_(out, low, high, g);
    return out;
  }
};
struct RandpermOp {
  static constexpr const char* name = "randperm";
  static Tensor run(int64_t n, Generator* g, const TensorOptions& o) {
    EMBER_CHECK(n >= 0, name, "n must be non-negative, got", n);
    Tensor out = empty_with({n}, o.has_dtype() ? o : o.dtype(kLong));
    rng::randperm_(out, g);
    return out;
  }
};
// The in-place and *_like random fills draw into a new tensor of the given sizes, strides and
// dtype (those of the tensor they fill), so that the values land in its memory order as
// libtorch's in-place kernels write them, and a captured graph draws anew at each replay. The ops
// take the layout, not the tensor: they read no values.
Tensor empty_laid_out(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  return make_empty_strided(sizes, strides, dtype);
}
// bernoulli(probs): 0 or 1 with the probabilities `probs` broadcast to sizes (torch::bernoulli(p):
// p's own layout and dtype).
struct BernoulliOp {
  static constexpr const char* name = "bernoulli";
  static constexpr bool differentiable = false;
  static Tensor run(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, const Tensor& probs, Generator* g) {
    EMBER_CHECK(is_floating_type(probs.dtype()), name, "expected a floating point tensor, got ", probs.dtype());
    const Tensor pr = probs.to(kDouble);
    EMBER_CHECK(pr.numel() == 0 || (pr.ge(0).logical_and(pr.le(1))).all().item<bool>(), name,
                "Expected p_in >= 0 && p_in <= 1 to be true, but got a probability outside [0, 1]");
    Tensor out = empty_laid_out(sizes, strides, dtype);
    rng::bernoulli_(out, probs, g);
    return out;
  }
};
struct RandomFillOp {
  static constexpr const char* name = "_random_fill";
  static constexpr bool differentiable = false;
  static Tensor run(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, int64_t kind, double a, double b,
                    Generator* g) {
    Tensor out = empty_laid_out(sizes, strides, dtype);
    switch (static_cast<RandomFill>(kind)) {
      case RandomFill::Uniform: rng::uniform_(out, a, b, g); break;
      case RandomFill::Normal: rng::normal_(out, a, b, g); break;
      case RandomFill::Bernoulli: rng::bernoulli_(out, a, g); break;
      case RandomFill::Exponential: rng::exponential_(out, a, g); break;
      case RandomFill::Geometric: rng::geometric_(out, a, g); break;
      case RandomFill::Cauchy: rng::cauchy_(out, a, b, g); break;
      case RandomFill::LogNormal: rng::log_normal_(out, a, b, g); break;
    }
    return out;
  }
};
// random_ as RandomFillOp: random_() without `from`, random_(from, to) with it.
struct RandomIntFillOp {
  static constexpr const char* name = "_random_int_fill";
  static constexpr bool differentiable = false;
  static Tensor run(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, std::optional<int64_t> from,
                    std::optional<int64_t> to, Generator* g) {
    Tensor out = empty_laid_out(sizes, strides, dtype);
    if (from) rng::random_(out, *from, to, g);
    else rng::random_(out, g);
    return out;
  }
};
struct FromBlobOp {
  static constexpr const char* name = "from_blob";
  // data is the storage's start; the tensor's first element sits storage_offset elements on
  static Tensor run(void* data, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                    const std::function<void(void*)>& deleter, const TensorOptions& o) {
    EMBER_CHECK(sizes.size() == strides.size(), name, "mismatch in length of strides and shape: ", sizes, " vs ",
                strides);
    EMBER_CHECK(storage_offset >= 0, name, "storage_offset must be non-negative, got ", storage_offset);
    int64_t extent = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      EMBER_CHECK(sizes[i] >= 0, name, "negative size ", sizes[i], " in ", sizes);
      if (sizes[i] == 0) extent = 0;
      if (extent) extent += (sizes[i] - 1) * strides[i];
    }
    if (extent) extent += storage_offset;
    auto storage = IntrusivePtr<StorageImpl>::make(data, static_cast<size_t>(extent) * element_size(o.dtype()), deleter);
    return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), o.dtype(), sizes, strides, storage_offset));
  }
};

// Shape and dtype of a nested initializer list, checked for regularity.
void init_shape(const TensorInit& init, DimVector& sizes, size_t depth, Scalar::Kind& kind, bool& any) {
  if (init.is_scalar()) {
    EMBER_CHECK(depth == sizes.size(), "tensor", "expected a list at depth ", depth, " of the initializer");
    const Scalar::Kind k = init.scalar().kind();
    if (!any || static_cast<int>(k) > static_cast<int>(kind)) kind = k;
    any = true;
    return;
  }
  const int64_t n = static_cast<int64_t>(init.children().size());
  if (depth == sizes.size()) {
    sizes.push_back(n);
  } else {
    EMBER_CHECK(sizes[depth] == n, "tensor", "expected sequence of length ", sizes[depth], " at dim ", depth,
                " (got ", n, ")");
  }
  for (const auto& c : init.children()) init_shape(c, sizes, depth + 1, kind, any);
}
void init_values(const TensorInit& init, std::vector<Scalar>& out) {
  if (init.is_scalar()) {
    out.push_back(init.scalar());
    return;
  }
  for (const auto& c : init.children()) init_values(c, out);
}

}  // namespace

// ---- public functions -----------------------------------------------------------------------
// As libtorch's torch:: factories, a factory whose options ask for requires_grad returns a leaf that
// requires grad. The tensor is made and filled with the flag off (filling a leaf that requires grad
// would be an in-place op on it), then the flag is set.
// Its version starts at 0, as PyTorch's factories' (the fills and copies that made it do not count).
template <class F>
Tensor leaf(const TensorOptions& o, F&& make) {
  Tensor t = make(o.requires_grad(std::nullopt));
  if (t.defined()) t.impl()->storage()->reset_version_of_new_storage();
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor empty(IntArrayRef sizes, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<EmptyOp>(sizes, p); });
}
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return make_empty_strided(sizes, strides, p.dtype()); });
}
Tensor zeros(IntArrayRef sizes, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty(sizes, p).zero_(); });
}
Tensor ones(IntArrayRef sizes, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty(sizes, p).fill_(1); });
}
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<FullOp>(sizes, value, p); });
}
Tensor scalar_tensor(const Scalar& value, TensorOptions o) { return full({}, value, o.has_dtype() ? o : o.dtype(get_default_dtype())); }
Tensor arange(const Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions o) { return arange(start, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<ArangeOp>(start, end, step, p); });
}
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<LinspaceOp>(start, end, steps, p); });
}
Tensor eye(int64_t n, TensorOptions o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<EyeOp>(n, m, p); });
}
Tensor rand(IntArrayRef sizes, TensorOptions o) { return rand(sizes, nullptr, o); }
Tensor rand(IntArrayRef sizes, Generator* g, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<RandOp>(sizes, g, p); });
}
Tensor randn(IntArrayRef sizes, TensorOptions o) { return randn(sizes, nullptr, o); }
Tensor randn(IntArrayRef sizes, Generator* g, TensorOptions o) { return normal(0.0, 1.0, sizes, g, o); }
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions o) { return randint(0, high, sizes, nullptr, o); }
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions o) {
  return randint(low, high, sizes, nullptr, o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator* g, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<RandintOp>(low, high, sizes, g, p); });
}
Tensor randperm(int64_t n, TensorOptions o) { return randperm(n, nullptr, o); }
Tensor randperm(int64_t n, Generator* g, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<RandpermOp>(n, g, p); });
}
Tensor normal(double mean, double std, IntArrayRef sizes, Generator* g, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return dispatch::call<NormalOp>(mean, std, sizes, g, p); });
}
Tensor normal(const Tensor& mean, const Tensor& std, Generator* g) {
  return dispatch::call<NormalTensorOp>(mean, std, g);
}
Tensor normal(const Tensor& mean, double std, Generator* g) { return dispatch::call<NormalTensorOp>(mean, std, g); }
Tensor normal(double mean, const Tensor& std, Generator* g) { return dispatch::call<NormalTensorOp>(mean, std, g); }
// As libtorch's, a new contiguous tensor (LEGACY_CONTIGUOUS_MEMORY_FORMAT) filled by bernoulli_.
Tensor bernoulli(const Tensor& probs, Generator* g) {
  return dispatch::call<BernoulliOp>(probs.sizes(), contiguous_strides(probs.sizes()).ref(), probs.dtype(), probs, g);
}
Tensor bernoulli(const Tensor& self, double p, Generator* g) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli", "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return dispatch::call<RandomFillOp>(self.sizes(), contiguous_strides(self.sizes()).ref(), self.dtype(),
                                      static_cast<int64_t>(RandomFill::Bernoulli), p, 0.0, g);
}
Tensor random_int_fill(const Tensor& like, std::optional<int64_t> from, std::optional<int64_t> to, Generator* g) {
  return dispatch::call<RandomIntFillOp>(like.sizes(), like.strides(), like.dtype(), from, to, g);
}
Tensor bernoulli_like(const Tensor& like, const Tensor& probs, Generator* g) {
  return dispatch::call<BernoulliOp>(like.sizes(), like.strides(), like.dtype(), probs, g);
}
Tensor random_fill(const Tensor& like, RandomFill kind, double a, double b, Generator* g) {
  return dispatch::call<RandomFillOp>(like.sizes(), like.strides(), like.dtype(), static_cast<int64_t>(kind), a, b, g);
}

Tensor empty_like(const Tensor& self, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty_like_impl(self, p); });
}
Tensor zeros_like(const Tensor& self, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty_like_impl(self, p).zero_(); });
}
Tensor ones_like(const Tensor& self, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty_like_impl(self, p).fill_(1); });
}
Tensor full_like(const Tensor& self, const Scalar& value, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) { return empty_like_impl(self, p).fill_(value); });
}
// The *_like draws: as libtorch, empty_like's result (its layout) filled in place; complex ones
// contiguous, drawn as rand and randn draw them (each part).
Tensor rand_like(const Tensor& self, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) {
    const ScalarType dt = p.has_dtype() ? p.dtype() : self.dtype();
    if (is_complex_type(dt)) return rand(self.sizes(), TensorOptions(p).dtype(dt));
    return random_fill(empty_like_impl(self, p), RandomFill::Uniform, 0, 1, nullptr);
  });
}
Tensor randn_like(const Tensor& self, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) {
    const ScalarType dt = p.has_dtype() ? p.dtype() : self.dtype();
    if (is_complex_type(dt)) return randn(self.sizes(), TensorOptions(p).dtype(dt));
    return random_fill(empty_like_impl(self, p), RandomFill::Normal, 0, 1, nullptr);
  });
}
Tensor randint_like(const Tensor& self, int64_t low, int64_t high, TensorOptions o) {
  return leaf(o, [&](const TensorOptions& p) {
    return random_int_fill(empty_like_impl(self, p), low, high, nullptr);
  });
}
Tensor randint_like(const Tensor& self, int64_t high, TensorOptions o) { return randint_like(self, 0, high, o); }

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions o) {
  return from_blob(data, sizes, contiguous_strides(sizes).ref(), o);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions o) {
  return from_blob(data, sizes, strides, 0, {}, o);
}
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter, TensorOptions o) {
  return from_blob(data, sizes, contiguous_strides(sizes).ref(), 0, deleter, o);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 TensorOptions o, std::optional<Device> target_device) {
  return from_blob(data, sizes, strides, 0, deleter, o, target_device);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                 const std::function<void(void*)>& deleter, TensorOptions o, std::optional<Device> target_device) {
  if (target_device) o = o.device(*target_device);
  return leaf(o, [&](const TensorOptions& p) {
    return dispatch::call<FromBlobOp>(data, sizes, strides, storage_offset, deleter, p);
  });
}

Tensor from_file(std::string_view filename, std::optional<bool> shared, std::optional<int64_t> size,
                 TensorOptions o) {
  const int64_t n = size.value_or(0);
  EMBER_CHECK(n >= 0, "from_file", "size must be non-negative, got ", n);
  const ScalarType dtype = o.has_dtype() ? o.dtype() : get_default_dtype();
  const size_t bytes = static_cast<size_t>(n) * element_size(dtype);
  const std::string name(filename);
  const bool share = shared.value_or(false);
  // shared: a mapping of the file itself (created, or extended, to the size); else a private one
  struct File {
    int fd;
    ~File() {
      if (fd >= 0) ::close(fd);
    }
  } file{::open(name.c_str(), share ? O_RDWR | O_CREAT : O_RDONLY, 0600)};
  EMBER_CHECK(file.fd >= 0, "from_file", "unable to open file <", name, ">: ", std::strerror(errno));
  struct stat st {};
  EMBER_CHECK(::fstat(file.fd, &st) == 0, "from_file", "unable to read the size of file <", name, ">: ",
              std::strerror(errno));
  const size_t have = static_cast<size_t>(st.st_size);
  EMBER_CHECK(have >= bytes || share, "from_file", "file <", name, "> has ", have, " bytes, but ", n, " elements of ",
              dtype, " take ", bytes);
  EMBER_CHECK(have >= bytes || ::ftruncate(file.fd, static_cast<off_t>(bytes)) == 0, "from_file",
              "unable to extend file <", name, "> to ", bytes, " bytes: ", std::strerror(errno));
  void* p = bytes ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, share ? MAP_SHARED : MAP_PRIVATE, file.fd, 0)
                  : nullptr;
  EMBER_CHECK(p != MAP_FAILED, "from_file", "unable to map ", bytes, " bytes of file <", name, ">: ",
              std::strerror(errno));
  if (!p) return empty({0}, o.dtype(dtype));
  return from_blob(p, {n}, [bytes](void* q) { ::munmap(q, bytes); }, o.dtype(dtype));
}

Tensor tensor(const TensorInit& init, TensorOptions o) {
  DimVector sizes;
  Scalar::Kind kind = Scalar::Kind::Double;
  bool any = false;
  init_shape(init, sizes, 0, kind, any);
  std::vector<Scalar> values;
  init_values(init, values);
  ScalarType dtype = o.has_dtype() ? o.dtype()
                     : !any       ? get_default_dtype()
                     : kind == Scalar::Kind::Double ? get_default_dtype()
                     : kind == Scalar::Kind::Int    ? kLong
                                                    : kBool;
  Tensor out = make_empty(sizes, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.data_ptr());
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i].to<T>();
  });
  if (o.requires_grad()) out.requires_grad_(true);
  return out;
}

}  // namespace ember
