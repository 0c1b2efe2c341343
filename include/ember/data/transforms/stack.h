// Stack: the collation that turns a std::vector of examples into one example of stacked tensors
// (data of shape (B, ...), target of shape (B, ...)), as libtorch's Stack<>.
#pragma once
#include <utility>
#include <vector>

#include "ember/data/example.h"
#include "ember/data/transforms/base.h"
#include "ember/indexing.h"

namespace ember::data::transforms {

template <class BatchType, class T = std::vector<BatchType>>
using Collation = BatchTransform<T, BatchType>;

template <class T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& example : examples) {
      data.push_back(std::move(example.data));
      targets.push_back(std::move(example.target));
    }
    return {ember::stack(data), ember::stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& example : examples) data.push_back(std::move(example.data));
    return ember::stack(data);
  }
};

}  // namespace ember::data::transforms
