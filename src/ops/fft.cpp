// torch.fft: the public transforms resize their input to the signal sizes asked for (crop or
// zero-pad), choose the normalization, and call one of three differentiable primitives, as
// PyTorch's: _fft_c2c (complex to complex), _fft_r2c (real to complex, one-sided or full) and
// _fft_c2r (a one-sided Hermitian spectrum to real). Each primitive copies its input into a
// contiguous buffer and transforms it along each dim in place (kernels/cpu/fft.h).
#include <algorithm>
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/aten_tail2.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/fft.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "kernels/cpu/fft.h"

namespace ember {
namespace {

// How a primitive scales its result (PyTorch's fft_norm_mode): not, by 1/sqrt(n) or by 1/n,
// n the product of the transformed signal sizes.
enum FftNorm : int64_t { kNormNone = 0, kNormBySqrtN = 1, kNormByN = 2 };

int64_t norm_from_string(const char* op, fft::NormMode norm, bool forward) {
  if (!norm || *norm == "backward") return forward ? kNormNone : kNormByN;
  if (*norm == "forward") return forward ? kNormByN : kNormNone;
  if (*norm == "ortho") return kNormBySqrtN;
  detail::fail(op, "Invalid normalization mode: \"", *norm, "\"");
}

Tensor apply_norm(Tensor x, double signal_numel, int64_t norm) {
  if (norm == kNormNone) return x;
  x.mul_(norm == kNormByN ? 1.0 / signal_numel : 1.0 / std::sqrt(signal_numel));
  return x;
}

// Unnormalized complex transforms of a complex tensor along dims, into a new tensor.
Tensor c2c_raw(const Tensor& self, IntArrayRef dims, bool forward) {
  Tensor x = self.clone(MemoryFormat::Contiguous);  // a new buffer, conjugate bit resolved
  for (int64_t d : dims) kernels::fft_c2c_dim(x, d, forward);
  return x;
}

double numel_of(const Tensor& t, IntArrayRef dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(t.size(d));
  return n;
}

Tensor fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward);
Tensor fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided);
Tensor fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size);

struct FftC2COp {
  static constexpr const char* name = "_fft_c2c";
  static constexpr bool conj_aware = true;  // the transform's copy resolves the bit
  static Tensor run(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
    return apply_norm(c2c_raw(self, dim, forward), numel_of(self, dim), normalization);
  }
  // FftC2CBackward0 -- self: _fft_c2c(grad, dim, normalization, !forward)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dim, int64_t normalization,
                         bool forward) {
    d.name("FftC2CBackward0");
    d.grad(self, [dims = DimVector(dim), normalization, forward](const auto& c) {
      return fft_c2c(c.grad(), dims, normalization, !forward);
    });
  }
};

struct FftR2COp {
  static constexpr const char* name = "_fft_r2c";
  static Tensor run(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
    if (!onesided) return apply_norm(c2c_raw(self.to(to_complex_type(self.dtype())), dim, true), numel_of(self, dim),
                                     normalization);
    // the real transform along the last dim, then complex ones along the others
    const int64_t last = dim.back(), n = self.size(last);
    const Tensor rows = self.movedim(last, -1).contiguous();
    DimVector sizes(rows.sizes());
    sizes.back() = n / 2 + 1;
    Tensor out = make_empty(sizes, to_complex_type(self.dtype()));
    kernels::fft_r2c_rows(out, rows, n);
    out = out.movedim(-1, last);
    if (dim.size() > 1) out = c2c_raw(out, IntArrayRef(dim.data(), dim.size() - 1), true);
    return apply_norm(out, numel_of(self, dim), normalization);
  }
  // FftR2CBackward0 -- self: fft_r2c_backward(grad, dim, normalization, onesided, self.size(dim.back())):
  // the one-sided gradient zero-padded to the full spectrum, transformed back, its real part
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dim, int64_t normalization,
                         bool onesided) {
    d.name("FftR2CBackward0");
    d.grad(self, [dims = DimVector(dim), normalization, onesided, n = self.size(dim.back())](const auto& c) {
      Tensor g = c.grad();
      const int64_t last = dims.ref().back();
      if (onesided && g.size(last) < n) {
        DimVector pad_sizes(g.sizes());
        pad_sizes[static_cast<size_t>(last)] = n - g.size(last);
        g = cat({g, zeros(pad_sizes, g.options())}, last);
      }
      return real(fft_c2c(g, dims, normalization, false));
    });
  }
};

struct FftC2ROp {
  static constexpr const char* name = "_fft_c2r";
  static constexpr bool conj_aware = true;  // the transform's copies resolve the bit
  static Tensor run(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
    const int64_t last = dim.back();
    Tensor x = dim.size() > 1 ? c2c_raw(self, IntArrayRef(dim.data(), dim.size() - 1), false) : self;
    // the full Hermitian spectrum along the last dim: X[n - k] = conj(X[k])
    const Tensor half = x.movedim(last, -1);
    const int64_t n = last_dim_size, mirrored = n - half.size(-1);
    Tensor full = mirrored > 0 ? cat({half, half.narrow(-1, 1, mirrored).flip({-1}).conj()}, -1)
                               : half.clone(MemoryFormat::Contiguous);
    full = full.contiguous();
    kernels::fft_c2c_dim(full, full.dim() - 1, false);
    Tensor out = real(full).movedim(-1, last).contiguous();
    double signal = static_cast<double>(n);
    for (size_t i = 0; i + 1 < dim.size(); ++i) signal *= static_cast<double>(self.size(dim[i]));
    return apply_norm(out, signal, normalization);
  }
  // FftC2RBackward0 -- self: fft_c2r_backward(grad, dim, normalization): the one-sided real-to-
  // complex transform of grad, the entries that stand for two conjugate ones doubled
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dim, int64_t normalization,
                         int64_t) {
    d.name("FftC2RBackward0");
    d.grad(self, [dims = DimVector(dim), normalization](const auto& c) {
      const Tensor& grad = c.grad();
      Tensor gi = fft_r2c(grad, dims, normalization, true);
      const int64_t last = dims.ref().back(), half = gi.size(last), doubled = grad.size(last) - half;
      if (doubled <= 0) return gi;
      Tensor w = ones({half}, TensorOptions().dtype(to_real_value_type(gi.dtype())));
      w.narrow(0, 1, doubled).fill_(2);
      DimVector shape(static_cast<size_t>(gi.dim()), 1);
      shape[static_cast<size_t>(last)] = half;
      return gi * w.view(shape);
    });
  }
};

Tensor fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  return dispatch::call<FftC2COp>(self, dim, normalization, forward);
}
Tensor fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  return dispatch::call<FftR2COp>(self, dim, normalization, onesided);
}
Tensor fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  return dispatch::call<FftC2ROp>(self, dim, normalization, last_dim_size);
}

// ---- argument handling -----------------------------------------------------------------------

// PyTorch's promote_type_fft: integers become the default float dtype; float16 has no transform.
Tensor promote_fft_input(const char* op, const Tensor& x, bool require_complex) {
  ScalarType t = x.dtype();
  if (is_integral_type(t, true)) t = get_default_dtype();
  EMBER_CHECK(t == kFloat || t == kDouble || is_complex_type(t), op, "Unsupported dtype ", x.dtype());
  if (require_complex && !is_complex_type(t)) t = to_complex_type(t);
  return t == x.dtype() ? x : x.to(t);
}

// The dims and signal sizes of an n-dimensional transform (PyTorch's canonicalize_fft_shape_and_dim_args).
struct ShapeAndDims {
  DimVector shape, dims;
};
ShapeAndDims canonicalize(const char* op, const Tensor& x, OptionalIntArrayRef s, OptionalIntArrayRef dim) {
  const int64_t nd = x.dim();
  ShapeAndDims r;
  if (dim) {
    for (int64_t d : *dim) r.dims.push_back(maybe_wrap_dim(d, nd, op, false));
    DimVector sorted = r.dims;
    std::sort(sorted.begin(), sorted.end());
    EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), op, "FFT dims must be unique");
  }
  if (s) {
    if (dim) {
      EMBER_CHECK(s->size() == dim->size(), op, "When given, dim and shape arguments must have the same length");
    } else {
      EMBER_CHECK(static_cast<int64_t>(s->size()) <= nd, op, "Got shape with ", s->size(),
                  " values but input tensor only has ", nd, " dimensions.");
      for (int64_t d = nd - static_cast<int64_t>(s->size()); d < nd; ++d) r.dims.push_back(d);
    }
    for (size_t i = 0; i < s->size(); ++i) {
      const int64_t v = (*s)[i] == -1 ? x.size(r.dims[i]) : (*s)[i];
      EMBER_CHECK(v > 0, op, "Invalid number of data points (", v, ") specified");
      r.shape.push_back(v);
    }
  } else {
    if (!dim)
      for (int64_t d = 0; d < nd; ++d) r.dims.push_back(d);
    for (int64_t d : r.dims) {
      EMBER_CHECK(x.size(d) > 0, op, "Invalid number of data points (", x.size(d), ") specified");
      r.shape.push_back(x.size(d));
    }
  }
  return r;
}

// x cropped or zero-padded to `sizes` along `dims`.
Tensor resize_fft_input(Tensor x, IntArrayRef dims, IntArrayRef sizes) {
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i], have = x.size(d), want = sizes[i];
    if (have > want) {
      x = x.narrow(d, 0, want);
    } else if (have < want) {
      DimVector pad_sizes(x.sizes());
      pad_sizes[static_cast<size_t>(d)] = want - have;
      x = cat({x, zeros(pad_sizes, x.options())}, d);
    }
  }
  return x;
}

// One-dimensional forms: their n and dim as an n-dimensional call's.
OptionalIntArrayRef one_n(const std::optional<int64_t>& n, int64_t& storage) {
  if (!n) return std::nullopt;
  storage = *n;
  return IntArrayRef(&storage, 1);
}

Tensor c2c_nd(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, fft::NormMode norm,
              bool forward) {
  const Tensor x = promote_fft_input(op, self, true);
  const ShapeAndDims sd = canonicalize(op, x, s, dim);
  return fft_c2c(resize_fft_input(x, sd.dims, sd.shape), sd.dims, norm_from_string(op, norm, forward), forward);
}

Tensor r2c_nd(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, fft::NormMode norm,
              bool forward) {
  EMBER_CHECK(!self.is_complex(), op, op, " expects a real input tensor, but got ", self.dtype());
  const Tensor x = promote_fft_input(op, self, false);
  const ShapeAndDims sd = canonicalize(op, x, s, dim);
  EMBER_CHECK(!sd.dims.empty(), op, op, " must transform at least one axis");
  const Tensor r = fft_r2c(resize_fft_input(x, sd.dims, sd.shape), sd.dims, norm_from_string(op, norm, forward), true);
  return forward ? r : r.conj();
}

Tensor c2r_nd(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, fft::NormMode norm,
              bool forward) {
  const Tensor x = promote_fft_input(op, self, true);
  ShapeAndDims sd = canonicalize(op, x, s, dim);
  EMBER_CHECK(!sd.dims.empty(), op, op, " must transform at least one axis");
  // -1 (or no s) asks for the length of the full Hermitian signal, as PyTorch's c2r arguments.
  const int64_t last_dim_size = s && s->back() != -1 ? sd.shape.back() : 2 * (x.size(sd.dims.back()) - 1);
  EMBER_CHECK(last_dim_size >= 1, op, "Invalid number of data points (", last_dim_size, ") specified");
  sd.shape.back() = last_dim_size / 2 + 1;
  const Tensor in = resize_fft_input(x, sd.dims, sd.shape);
  return fft_c2r(forward ? in.conj() : in, sd.dims, norm_from_string(op, norm, forward), last_dim_size);
}

DimVector one_dim(int64_t dim) { return DimVector{dim}; }

// ihfft2/ihfftn refuse complex input with a message of their own (libtorch's).
void check_ihfftn_input(const char* op, const Tensor& self) {
  EMBER_CHECK(!self.is_complex(), op, "Expected self.is_floating_point() to be true, but got false.");
}

}  // namespace

namespace fft {

Tensor fft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return c2c_nd("fft", self, one_n(n, s), d.ref(), norm, true);
}
Tensor ifft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return c2c_nd("ifft", self, one_n(n, s), d.ref(), norm, false);
}
Tensor rfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return r2c_nd("rfft", self, one_n(n, s), d.ref(), norm, true);
}
Tensor irfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return c2r_nd("irfft", self, one_n(n, s), d.ref(), norm, false);
}
// hfft: the transform of a Hermitian signal given by its first half: irfft of the conjugate with
// the normalization of a forward transform.
Tensor hfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return c2r_nd("hfft", self, one_n(n, s), d.ref(), norm, true);
}
// ihfft: the inverse, the conjugate of the one-sided inverse transform of a real signal.
Tensor ihfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, NormMode norm) {
  int64_t s;
  const DimVector d = one_dim(dim);
  return r2c_nd("ihfft", self, one_n(n, s), d.ref(), norm, false);
}

Tensor fft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return c2c_nd("fft2", self, s, dim, norm, true);
}
Tensor ifft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return c2c_nd("ifft2", self, s, dim, norm, false);
}
Tensor rfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return r2c_nd("rfft2", self, s, dim, norm, true);
}
Tensor irfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return c2r_nd("irfft2", self, s, dim, norm, false);
}
// hfftn is irfftn of the conjugate with a forward transform's normalization; ihfftn the
// conjugate of rfftn with an inverse's (as hfft and ihfft; PyTorch splits off the leading dims
// as complex transforms, which is the same sum).
Tensor hfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return c2r_nd("hfft2", self, s, dim, norm, true);
}
Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  check_ihfftn_input("ihfft2", self);
  return r2c_nd("ihfft2", self, s, dim, norm, false);
}
Tensor hfftn(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  return c2r_nd("hfftn", self, s, dim, norm, true);
}
Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, NormMode norm) {
  check_ihfftn_input("ihfftn", self);
  return r2c_nd("ihfftn", self, s, dim, norm, false);
}
Tensor fftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, NormMode norm) {
  return c2c_nd("fftn", self, s, dim, norm, true);
}
Tensor ifftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, NormMode norm) {
  return c2c_nd("ifftn", self, s, dim, norm, false);
}
Tensor rfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, NormMode norm) {
  return r2c_nd("rfftn", self, s, dim, norm, true);
}
Tensor irfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, NormMode norm) {
  return c2r_nd("irfftn", self, s, dim, norm, false);
}

Tensor fftfreq(int64_t n, double d, const TensorOptions& options) {
  Tensor r = arange(n, options.has_dtype() ? options : options.dtype(get_default_dtype()));
  r.narrow(0, (n + 1) / 2, n - (n + 1) / 2).sub_(n);
  return r.mul_(1.0 / (static_cast<double>(n) * d));
}
Tensor fftfreq(int64_t n, const TensorOptions& options) { return fftfreq(n, 1.0, options); }
Tensor rfftfreq(int64_t n, double d, const TensorOptions& options) {
  Tensor r = arange(n / 2 + 1, options.has_dtype() ? options : options.dtype(get_default_dtype()));
  return r.mul_(1.0 / (static_cast<double>(n) * d));
}
Tensor rfftfreq(int64_t n, const TensorOptions& options) { return rfftfreq(n, 1.0, options); }

namespace {
Tensor shift(const Tensor& x, OptionalIntArrayRef dim, bool inverse) {
  DimVector dims, shifts;
  if (dim) {
    for (int64_t d : *dim) dims.push_back(maybe_wrap_dim(d, x.dim(), inverse ? "ifftshift" : "fftshift"));
  } else {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  for (int64_t d : dims) shifts.push_back(inverse ? (x.size(d) + 1) / 2 : x.size(d) / 2);
  return x.roll(shifts, dims);
}
}  // namespace
Tensor fftshift(const Tensor& x, OptionalIntArrayRef dim) { return shift(x, dim, false); }
Tensor ifftshift(const Tensor& x, OptionalIntArrayRef dim) { return shift(x, dim, true); }

}  // namespace fft
}  // namespace ember

// ---- short-time transforms (PyTorch's stft and istft) ------------------------------------------

namespace ember {
namespace {

// Overlap-add of frames [B, F, n] placed hop samples apart into [B, length] (col2im).
Tensor overlap_add(const Tensor& frames, int64_t length, int64_t hop) {
  if (frames.is_complex()) return make_complex(overlap_add(real(frames), length, hop), overlap_add(imag(frames), length, hop));
  const int64_t n = frames.size(2);
  return col2im(frames.transpose(1, 2), {1, length}, {1, n}, {1, 1}, {0, 0}, {1, hop}).reshape({frames.size(0), length});
}

}  // namespace

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
            const std::optional<Tensor>& window, bool normalized, std::optional<bool> onesided,
            std::optional<bool> return_complex) {
  const char* op = "stft";
  const int64_t hop = hop_length.value_or(n_fft >> 2), win = win_length.value_or(n_fft);
  const bool has_window = window && window->defined();
  const bool complex_out = return_complex.value_or(self.is_complex() || (has_window && window->is_complex()));
  EMBER_CHECK(is_floating_type(self.dtype()) || self.is_complex(), op,
              "expected a tensor of floating point or complex values");
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, op, "expected a 1D or 2D tensor");
  const Tensor input = self.dim() == 1 ? self.unsqueeze(0) : self;
  const int64_t len = input.size(1);
  EMBER_CHECK(n_fft > 0 && n_fft <= len, op, "expected 0 < n_fft < ", len, ", but got n_fft=", n_fft);
  EMBER_CHECK(hop > 0, op, "expected hop_length > 0, but got hop_length=", hop);
  EMBER_CHECK(win > 0 && win <= n_fft, op, "expected 0 < win_length <= n_fft, but got win_length=", win);
  EMBER_CHECK(!has_window || (window->dim() == 1 && window->size(0) == win), op,
              "expected a 1D window tensor of size equal to win_length=", win, ", but got window with size ",
              window->sizes());
  Tensor w = has_window ? *window : Tensor();
  if (win < n_fft) {  // the window in the middle of n_fft samples
    const Tensor full = zeros({n_fft}, self.options());
    const Tensor middle = full.narrow(0, (n_fft - win) / 2, win);
    if (has_window) {
      middle.copy_(w);
    } else {
      middle.fill_(1);
    }
    w = full;
  }
  Tensor frames = input.unfold(1, n_fft, hop);  // [B, frames, n_fft]
  if (w.defined()) frames = frames * w;
  const bool sided = onesided.value_or(!frames.is_complex());
  const int64_t norm = normalized ? kNormBySqrtN : kNormNone;
  const int64_t last[] = {2};
  EMBER_CHECK(!(frames.is_complex() && sided), op, "Cannot have onesided output if window or input is complex");
  Tensor out = frames.is_complex() ? fft_c2c(frames, last, norm, true) : fft_r2c(frames, last, norm, sided);
  out = out.transpose(1, 2);
  if (self.dim() == 1) out = out.squeeze(0);
  return complex_out ? out : view_as_real(out);
}

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
            const std::optional<Tensor>& window, bool center, std::string_view pad_mode, bool normalized,
            std::optional<bool> onesided, std::optional<bool> return_complex) {
  Tensor input = self;
  if (center) {  // pad n_fft / 2 on each side: pad's modes take [N, C, L]
    const int64_t extra = std::max<int64_t>(3, self.dim()) - self.dim();
    DimVector shape(static_cast<size_t>(extra), 1);
    for (int64_t s : self.sizes()) shape.push_back(s);
    input = pad(self.view(shape), {n_fft / 2, n_fft / 2}, pad_mode);
    input = input.view(input.sizes().slice(static_cast<size_t>(extra)));
  }
  return stft(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex);
}

Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
             const std::optional<Tensor>& window, bool center, bool normalized, std::optional<bool> onesided,
             std::optional<int64_t> length, bool return_complex) {
  const char* op = "istft";
  const int64_t hop = hop_length.value_or(n_fft >> 2), win = win_length.value_or(n_fft);
  Tensor input = self;
  if (!self.is_complex()) {  // stft's real view [..., 2]
    EMBER_CHECK(self.dim() > 0 && self.size(-1) == 2, op, "expected a complex tensor or its real view [..., 2], but got ",
                "shape ", self.sizes());
    input = view_as_complex(self.stride(-1) == 1 ? self : self.contiguous());
  }
  const int64_t dims = input.dim();
  EMBER_CHECK(input.numel() > 0, op, "istft input tensor cannot be empty");
  EMBER_CHECK(dims == 2 || dims == 3, op, "expected a tensor with 2 or 3 dimensions of complex dtype, but got ", dims);
  const int64_t n_frames = input.size(-1), fft_size = input.size(-2);
  const int64_t full_len = n_fft + hop * (n_frames - 1);
  if (dims == 2) input = input.unsqueeze(0);
  input = input.transpose(1, 2);  // [B, frames, fft_size]
  const bool sided = onesided.value_or(fft_size != n_fft);
  EMBER_CHECK(!sided || fft_size == n_fft / 2 + 1, op, "expected the frequency dimension (3rd to the last) of the ",
              "input tensor to match n_fft / 2 + 1 when onesided=True, but got ", fft_size);
  EMBER_CHECK(sided || fft_size == n_fft, op, "expected the frequency dimension (3rd to the last) of the input ",
              "tensor to match n_fft when onesided=False, but got ", fft_size);
  EMBER_CHECK(0 < hop && hop <= win, op, "expected 0 < hop_length <= win_length");
  EMBER_CHECK(0 < win && win <= n_fft, op, "expected 0 < win_length <= n_fft");
  const bool has_window = window && window->defined();
  EMBER_CHECK(!has_window || (window->dim() == 1 && window->size(0) == win), op,
              "Invalid window shape. window has to be 1D and length of `win_length`");
  Tensor w = has_window ? *window : ones({win}, TensorOptions().dtype(to_real_value_type(input.dtype())));
  if (win != n_fft) w = pad(w, {(n_fft - win) / 2, n_fft - win - (n_fft - win) / 2});
  if (normalized) input = input * std::sqrt(static_cast<double>(n_fft));
  if (return_complex) {
    EMBER_CHECK(!sided, op, "Cannot have onesided output if window or input is complex");
    input = fft::ifft(input, n_fft, -1);
  } else {
    EMBER_CHECK(!has_window || !window->is_complex(), op, "Complex windows are incompatible with return_complex=False");
    input = fft::irfft(sided ? input : input.narrow(-1, 0, n_fft / 2 + 1), n_fft, -1);
  }
  Tensor y = overlap_add(input * w.view({1, 1, n_fft}), full_len, hop);
  Tensor envelope = overlap_add(w.pow(2).expand({1, n_frames, n_fft}), full_len, hop);
  const int64_t start = center ? n_fft / 2 : 0;
  const int64_t end = length ? start + *length : (center ? full_len - n_fft / 2 : full_len);
  y = y.slice(1, start, std::min(end, full_len));
  envelope = envelope.slice(1, start, std::min(end, full_len));
  EMBER_CHECK(!envelope.abs().min().lt(1e-11).item<bool>(), op, "window overlap add min: 1 (the window's squared ",
              "overlap-add is zero somewhere: the signal cannot be recovered there)");
  y = y / envelope;
  if (dims == 2) y = y.squeeze(0);
  if (end > full_len) y = pad(y, {0, end - full_len});  // a length beyond the frames: zeros
  return y;
}

Tensor Tensor::stft(int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
                    const std::optional<Tensor>& window, bool normalized, std::optional<bool> onesided,
                    std::optional<bool> return_complex) const {
  return ember::stft(*this, n_fft, hop_length, win_length, window, normalized, onesided, return_complex);
}
Tensor Tensor::stft(int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
                    const std::optional<Tensor>& window, bool center, std::string_view pad_mode, bool normalized,
                    std::optional<bool> onesided, std::optional<bool> return_complex) const {
  return ember::stft(*this, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                     return_complex);
}
Tensor Tensor::istft(int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
                     const std::optional<Tensor>& window, bool center, bool normalized, std::optional<bool> onesided,
                     std::optional<int64_t> length, bool return_complex) const {
  return ember::istft(*this, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                      return_complex);
}

}  // namespace ember
