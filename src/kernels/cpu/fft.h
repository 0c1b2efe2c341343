// Ember's FFT engine (fft_kernels.cpp): complex transforms of any length, in float and double.
// Lengths whose prime factors are all small run a mixed-radix Stockham autosort FFT (radix 4, 2
// and 3 butterflies and a generic one for the other primes up to 13); lengths with a larger prime
// factor run Bluestein's algorithm on a transform whose length has only the factors 2 and 3.
// Plans (factors, twiddles, the Bluestein chirp and its transform) are cached per (length,
// direction, dtype).
//
// The engine transforms one SIMD vector's worth of signals at once: it copies them into a work
// buffer as separate real and imaginary planes, signal b's element j at [j * lanes + b], so every
// butterfly is a vertical vector operation with the same twiddle in each lane (pocketfft, which
// PyTorch uses, batches signals the same way). Signals along an inner dimension are gathered from
// contiguous runs; rows are gathered across rows. A single signal runs with one lane, its later
// stages vectorized along the signal.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// Transforms `data`, a contiguous complex tensor, along `dim` in place:
// X[k] = sum_j x[j] exp(-+2 pi i j k / n) (minus sign forward), unnormalized. Groups of signals
// run in parallel.
void fft_c2c_dim(const Tensor& data, int64_t dim, bool forward);

// The one-sided forward transform of each row of `in` (contiguous float32/float64 [rows, n]) into
// `out` (contiguous complex [rows, n / 2 + 1]), unnormalized. An even n runs a complex transform
// of half the length on the pairs (x[2j], x[2j + 1]) and untangles its result.
void fft_r2c_rows(const Tensor& out, const Tensor& in, int64_t n);

}  // namespace ember::kernels
