// data::Example: one (data, target) pair, as libtorch's torch::data::Example.
#pragma once
#include <utility>

#include "ember/tensor.h"

namespace ember::data {

namespace example {
using NoTarget = void;  // Example<Data, NoTarget> holds data only
}

template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

template <class Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit, as libtorch
  operator Data&() { return data; }               // NOLINT
  operator const Data&() const { return data; }   // NOLINT

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace ember::data
