// Views (share storage with their input) and shape ops.
#pragma once
#include <vector>

#include "ember/tensor.h"

namespace ember {

Tensor view(const Tensor& self, IntArrayRef sizes);
Tensor reshape(const Tensor& self, IntArrayRef sizes);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor expand(const Tensor& self, IntArrayRef sizes);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> broadcast_tensors(TensorList tensors);
Tensor broadcast_to(const Tensor& self, IntArrayRef sizes);

// Shape maths shared by ops.
// Broadcast shape of two shapes, or Error from `op` (PyTorch's "The size of tensor a (5) must match ...").
DimVector infer_size(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");
// Strides for `sizes` laid out in `format` (channels_last needs 4 dims, channels_last_3d 5).
DimVector contiguous_strides(IntArrayRef sizes, MemoryFormat format = MemoryFormat::Contiguous);

}  // namespace ember
