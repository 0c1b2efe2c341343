#include "ember/nn/utils/rnn.h"

#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn::utils::rnn {
namespace {

std::vector<int64_t> to_vector(const Tensor& t) {
  const Tensor c = t.to(kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// The sizes of t with the first dim replaced by n.
DimVector with_first(const Tensor& t, int64_t n) {
  DimVector sizes(t.sizes());
  sizes[0] = n;
  return sizes;
}

// rows padded with padding_value up to n rows (along dim 0).
Tensor pad_rows(const Tensor& rows, int64_t n, double padding_value) {
  if (rows.size(0) == n) return rows;
  return cat({rows, full(with_first(rows, n - rows.size(0)), padding_value, TensorOptions().dtype(rows.dtype()))}, 0);
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return Tensor();
  Tensor inverse = empty_like(permutation);
  inverse.scatter_(0, permutation, arange(permutation.numel(), TensorOptions().dtype(permutation.dtype())));
  return inverse;
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  // unsorted_indices, when given, is taken to be the inverse of sorted_indices (as libtorch).
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
}

PackedSequence PackedSequence::to(TensorOptions options) const {
  return PackedSequence(data_.to(options), batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  const char* op = "pack_padded_sequence";
  EMBER_CHECK(input.dim() >= 2, op, "expected input of at least 2 dimensions (time and batch), got ", input.sizes());
  lengths = lengths.to(kLong);
  Tensor sorted_indices;
  if (!enforce_sorted) {
    std::tie(lengths, sorted_indices) = lengths.sort(/*stable=*/true, -1, /*descending=*/true);
    input = input.index_select(batch_first ? 0 : 1, sorted_indices);
  }
  if (batch_first) input = input.transpose(0, 1);
  EMBER_CHECK(input.numel() > 0, op, "Cannot pack empty tensors.");
  const int64_t steps = input.size(0), batch = input.size(1);
  const std::vector<int64_t> l = to_vector(lengths);
  EMBER_CHECK(static_cast<int64_t>(l.size()) == batch, op, "Expected `len(lengths)` to be equal to batch_size, but got ",
              l.size(), " (batch_size=", batch, ")");
  EMBER_CHECK(l[batch - 1] > 0, op,
              "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  for (int64_t i = 1; i < batch; ++i)
    EMBER_CHECK(l[i] <= l[i - 1], op,
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                "you do not need ONNX exportability.");
  EMBER_CHECK(l[0] <= steps, op, "Expected every length to be at most the padded sequence length ", steps,
              ", but got a length of ", l[0]);
  // Step t holds the sequences longer than t: the first batch_sizes[t] of the sorted batch.
  std::vector<int64_t> batch_sizes;
  std::vector<Tensor> rows;
  for (int64_t t = 0; t < l[0]; ++t) {
    int64_t b = batch;
    while (l[b - 1] <= t) --b;
    batch_sizes.push_back(b);
    rows.push_back(input.select(0, t).narrow(0, 0, b));
  }
  return PackedSequence(cat(rows, 0), tensor(batch_sizes, TensorOptions().dtype(kLong)), sorted_indices, {});
}

std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const std::vector<int64_t> batch_sizes = to_vector(sequence.batch_sizes());
  const int64_t max_steps = static_cast<int64_t>(batch_sizes.size());
  int64_t steps = max_steps;
  if (total_length) {
    EMBER_CHECK(*total_length >= max_steps, "pad_packed_sequence",
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                "total_length=",
                *total_length, " and max sequence length being ", max_steps);
    steps = *total_length;
  }
  EMBER_CHECK(max_steps > 0, "pad_packed_sequence", "expected a packed sequence of at least one step");
  const Tensor& data = sequence.data();
  const int64_t batch = batch_sizes[0];
  std::vector<Tensor> per_step = data.split_with_sizes(batch_sizes, 0);
  for (Tensor& rows : per_step) rows = pad_rows(rows, batch, padding_value);
  Tensor padded = stack(per_step, 0);
  if (steps > max_steps) padded = pad_rows(padded, steps, padding_value);
  std::vector<int64_t> lengths(static_cast<size_t>(batch), 0);
  for (int64_t b : batch_sizes)
    for (int64_t i = 0; i < b; ++i) ++lengths[static_cast<size_t>(i)];
  Tensor lengths_t = tensor(lengths, TensorOptions().dtype(kLong));
  if (batch_first) padded = padded.transpose(0, 1);
  if (sequence.unsorted_indices().defined()) {
    padded = padded.index_select(batch_first ? 0 : 1, sequence.unsorted_indices());
    lengths_t = lengths_t.index_select(0, sequence.unsorted_indices());
  }
  return {padded, lengths_t};
}

Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first, double padding_value) {
  EMBER_CHECK(!sequences.empty(), "pad_sequence", "received an empty list of sequences");
  int64_t longest = 0;
  for (const Tensor& s : sequences) {
    EMBER_CHECK(s.dim() >= 1, "pad_sequence", "expected sequences of at least 1 dimension, got ", s.sizes());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) padded.push_back(pad_rows(s, longest, padding_value));
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.size(0));
  return pack_padded_sequence(rnn::pad_sequence(sequences), tensor(lengths, TensorOptions().dtype(kLong)), false,
                               enforce_sorted);
}

}  // namespace ember::nn::utils::rnn
