// Transforms from a function: BatchLambda on whole batches, Lambda on each example.
#pragma once
#include <functional>
#include <utility>

#include "ember/data/transforms/base.h"

namespace ember::data::transforms {

template <class Input, class Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

template <class Input, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

}  // namespace ember::data::transforms
