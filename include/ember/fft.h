// torch.fft (docs/complex.md): discrete Fourier transforms of any length over float32/float64
// and complex inputs, with libtorch's signatures and defaults (torch/fft.h). `norm` is
// "backward" (the default: no scaling forward, 1/n inverse), "forward" (1/n forward) or "ortho"
// (1/sqrt(n) both ways). Each transform is differentiable.
#pragma once
#include <numeric>
#include <optional>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::fft {

using NormMode = std::optional<std::string_view>;

Tensor fft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);
Tensor ifft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);
Tensor rfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);
Tensor irfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);
Tensor hfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);
Tensor ihfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, NormMode norm = std::nullopt);

Tensor fft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
            NormMode norm = std::nullopt);
Tensor ifft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             NormMode norm = std::nullopt);
Tensor rfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             NormMode norm = std::nullopt);
Tensor irfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              NormMode norm = std::nullopt);
// The Hermitian pairs in two and n dimensions: hfftn transforms the signal whose last dim holds
// the first half of a Hermitian spectrum (a real result), ihfftn is its inverse (one-sided).
Tensor hfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             NormMode norm = std::nullopt);
Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              NormMode norm = std::nullopt);

Tensor fftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
            NormMode norm = std::nullopt);
Tensor ifftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
             NormMode norm = std::nullopt);
Tensor rfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
             NormMode norm = std::nullopt);
Tensor irfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
              NormMode norm = std::nullopt);
// (libtorch 1.13's C++ hfftn and ihfftn default to the last two dims, not all: kept so.)
Tensor hfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             NormMode norm = std::nullopt);
Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
              NormMode norm = std::nullopt);

// Sample frequencies: [0, 1, ..., -2, -1] / (d * n) and [0, 1, ..., n / 2] / (d * n).
Tensor fftfreq(int64_t n, const TensorOptions& options = {});
Tensor fftfreq(int64_t n, double d, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, double d, const TensorOptions& options = {});
// Rolls the zero frequency to the centre (and back) along dim (all dims by default).
Tensor fftshift(const Tensor& x, OptionalIntArrayRef dim = std::nullopt);
Tensor ifftshift(const Tensor& x, OptionalIntArrayRef dim = std::nullopt);

}  // namespace ember::fft

namespace ember {

// Short-time Fourier transforms, as torch.stft/istft (libtorch 1.13's two stft overloads: without
// `center`, which frames the signal as it is, and with it, which first pads n_fft / 2 on each side
// by pad_mode). self is [L] or [B, L]; the result is [B?, n_fft / 2 + 1 (one-sided) or n_fft,
// frames], complex when return_complex (given, or implied by a complex input or window), else its
// real view [..., 2]. A window shorter than n_fft sits in its middle; `normalized` scales by
// n_fft^-1/2. istft inverts it by overlap-add divided by the window's squared envelope.
// Differentiable: composed of framing views, fft primitives and col2im.
Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
            const std::optional<Tensor>& window, bool normalized, std::optional<bool> onesided = std::nullopt,
            std::optional<bool> return_complex = std::nullopt);
Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
            std::optional<int64_t> win_length = std::nullopt, const std::optional<Tensor>& window = {},
            bool center = true, std::string_view pad_mode = "reflect", bool normalized = false,
            std::optional<bool> onesided = std::nullopt, std::optional<bool> return_complex = std::nullopt);
Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
             std::optional<int64_t> win_length = std::nullopt, const std::optional<Tensor>& window = {},
             bool center = true, bool normalized = false, std::optional<bool> onesided = std::nullopt,
             std::optional<int64_t> length = std::nullopt, bool return_complex = false);

// ATen's names of the transforms, as libtorch declares them in namespace at (and so torch):
// torch::fft_rfft(x) is torch::fft::rfft(x). fft_hfftn/fft_ihfftn take an optional dim as ATen's
// do (absent: the last s.size() dims, or all of them), where torch::fft's default to the last two.
#define EMBER_FFT_ATEN_1D(name)                                                                    \
  inline Tensor fft_##name(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1, \
                           fft::NormMode norm = std::nullopt) {                                    \
    return fft::name(self, n, dim, norm);                                                          \
  }
#define EMBER_FFT_ATEN_ND(name, Dim, dim_default)                                                  \
  inline Tensor fft_##name(const Tensor& self, OptionalIntArrayRef s = std::nullopt, Dim dim = dim_default, \
                           fft::NormMode norm = std::nullopt) {                                    \
    return fft::name(self, s, dim, norm);                                                          \
  }
EMBER_FFT_ATEN_1D(fft)
EMBER_FFT_ATEN_1D(ifft)
EMBER_FFT_ATEN_1D(rfft)
EMBER_FFT_ATEN_1D(irfft)
EMBER_FFT_ATEN_1D(hfft)
EMBER_FFT_ATEN_1D(ihfft)
EMBER_FFT_ATEN_ND(fft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(ifft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(rfft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(irfft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(hfft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(ihfft2, IntArrayRef, IntArrayRef({-2, -1}))
EMBER_FFT_ATEN_ND(fftn, OptionalIntArrayRef, std::nullopt)
EMBER_FFT_ATEN_ND(ifftn, OptionalIntArrayRef, std::nullopt)
EMBER_FFT_ATEN_ND(rfftn, OptionalIntArrayRef, std::nullopt)
EMBER_FFT_ATEN_ND(irfftn, OptionalIntArrayRef, std::nullopt)
#undef EMBER_FFT_ATEN_1D
#undef EMBER_FFT_ATEN_ND

namespace detail {
// ATen's dims of an n-dimensional transform given without dims: the last s.size(), or all
inline std::vector<int64_t> fft_default_dims(const Tensor& self, OptionalIntArrayRef s) {
  const int64_t count = s ? static_cast<int64_t>(s->size()) : self.dim();
  std::vector<int64_t> dims(static_cast<size_t>(std::max<int64_t>(count, 0)));
  std::iota(dims.begin(), dims.end(), self.dim() - count);
  return dims;
}
}  // namespace detail

inline Tensor fft_hfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
                        fft::NormMode norm = std::nullopt) {
  return fft::hfftn(self, s, dim ? *dim : IntArrayRef(detail::fft_default_dims(self, s)), norm);
}
inline Tensor fft_ihfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt, OptionalIntArrayRef dim = std::nullopt,
                         fft::NormMode norm = std::nullopt) {
  return fft::ihfftn(self, s, dim ? *dim : IntArrayRef(detail::fft_default_dims(self, s)), norm);
}
inline Tensor fft_fftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {}) {
  return fft::fftfreq(n, d, options);
}
inline Tensor fft_rfftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {}) {
  return fft::rfftfreq(n, d, options);
}
inline Tensor fft_fftshift(const Tensor& self, OptionalIntArrayRef dim = std::nullopt) {
  return fft::fftshift(self, dim);
}
inline Tensor fft_ifftshift(const Tensor& self, OptionalIntArrayRef dim = std::nullopt) {
  return fft::ifftshift(self, dim);
}

}  // namespace ember
