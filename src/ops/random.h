// libtorch's CPU random kernels: each fills `self` (a real dtype, any strides) in place from a
// Generator (the global one when null), drawing exactly the numbers libtorch 1.13 draws from the
// same generator state, in its order: one element after the other in memory order (the order of
// TensorIterator's serial loop over an output), every value through libtorch's transform.
// No autograd, no version counter: the callers (src/ops/factory.cpp, the Tensor methods) own those.
#pragma once
#include <cstdint>
#include <optional>

#include "ember/factory.h"

namespace ember::rng {

void uniform_(const Tensor& self, double from, double to, Generator* g);
// Contiguous tensors of 16 or more elements take Box-Muller 16 at a time (float32: the AVX2 kernel
// libtorch runs on this CPU class); the others one normal_distribution<double> draw each.
void normal_(const Tensor& self, double mean, double std, Generator* g);
// random_(from, to): integers in [from, to); without `to`, up to the dtype's top (2^mantissa digits
// for floating types), and from int64's lowest without `to`, all 64 bits. libtorch's checks.
void random_(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* g);
void random_(const Tensor& self, Generator* g);  // [0, 2^mantissa digits] (floating), [0, max] (integers)
void bernoulli_(const Tensor& self, double p, Generator* g);
void bernoulli_(const Tensor& self, const Tensor& p, Generator* g);  // p broadcast to self
void exponential_(const Tensor& self, double lambda, Generator* g);
void geometric_(const Tensor& self, double p, Generator* g);
void cauchy_(const Tensor& self, double median, double sigma, Generator* g);
void log_normal_(const Tensor& self, double mean, double std, Generator* g);
void randperm_(const Tensor& self, Generator* g);
// multinomial with replacement: probs (rows, categories) contiguous, out
// (rows, samples) int64; each row's normalized cumulative sums searched with a double uniform.
void multinomial_with_replacement(const Tensor& probs, const Tensor& out, Generator* g);  // self: 1-D, becomes a permutation of 0 .. n-1

// Gamma(alpha, 1) samples as libtorch's _standard_gamma draws them: alpha float or double, out
// contiguous of alpha's sizes and dtype, elements in alpha's logical order, each at least the
// dtype's smallest normal number (_sample_dirichlet draws from alpha in double).
void standard_gamma(const Tensor& alpha, const Tensor& out, Generator* g);

}  // namespace ember::rng

namespace ember {
// The in-place fills as one dispatch op: a new tensor with like's sizes, strides and dtype, filled
// as like.<kind>_(a, b) fills like; random_int_fill as like.random_(from, to), or like.random_()
// without `from`.
enum class RandomFill { Uniform, Normal, Bernoulli, Exponential, Geometric, Cauchy, LogNormal };
Tensor random_fill(const Tensor& like, RandomFill kind, double a, double b, Generator* g);
Tensor random_int_fill(const Tensor& like, std::optional<int64_t> from, std::optional<int64_t> to, Generator* g);
// bernoulli with the probabilities `probs` broadcast to like, laid out as like.
Tensor bernoulli_like(const Tensor& like, const Tensor& probs, Generator* g);
}  // namespace ember
