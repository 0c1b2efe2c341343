// torch.fft (docs/complex.md): discrete Fourier transforms of any length over float32/float64
// and complex inputs, with libtorch's signatures and defaults (torch/fft.h). `norm` is
// "backward" (the default: no scaling forward, 1/n inverse), "forward" (1/n forward) or "ortho"
// (1/sqrt(n) both ways). Each transform is differentiable.
#pragma once
#include <optional>
#include <string_view>

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

}  // namespace ember
