// nn::utils::rnn: packed sequences (a batch of variable-length sequences stored time step by
// time step, longest first) and the padding helpers, as libtorch's torch/nn/utils/rnn.h.
#pragma once
#include <optional>
#include <tuple>

#include "ember/array_ref.h"
#include "ember/tensor.h"
#include "ember/tensor_options.h"

namespace ember::nn::utils::rnn {

// The inverse of a permutation (an int64 vector); undefined for an undefined input.
Tensor invert_permutation(const Tensor& permutation);

// data: (sum(batch_sizes), *) rows of time step 0 for every sequence, then step 1, ...;
// batch_sizes: int64 CPU tensor, how many sequences are still running at each step;
// sorted_indices: the permutation that sorted the batch by decreasing length (undefined when
// the batch came sorted), unsorted_indices its inverse.
class PackedSequence {
 public:
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});
  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  // data converted (dtype/device); the indices follow the device, batch_sizes stays.
  PackedSequence to(TensorOptions options) const;
  PackedSequence cpu() const { return *this; }
  PackedSequence pin_memory() const { return *this; }
  bool is_cuda() const { return false; }
  bool is_pinned() const { return false; }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// input (T, B, *) (or (B, T, *) with batch_first) padded, lengths (B) int64 (any integer dtype,
// or a CPU tensor). With enforce_sorted the lengths must be decreasing; otherwise the batch is
// sorted and the permutation kept in the result.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false, bool enforce_sorted = true);

// The inverse: (padded (T, B, *) or (B, T, *), lengths (B) int64) in the original batch order.
// total_length pads the time dimension to that many steps (at least the longest sequence).
std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

// Sequences (L_i, *) stacked into (max L, B, *) (or (B, max L, *)), padded with padding_value.
Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first = false, double padding_value = 0);

// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted = true);

}  // namespace ember::nn::utils::rnn
