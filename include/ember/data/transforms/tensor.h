// Transforms of an example's data tensor (the target passes through): TensorLambda and
// Normalize, as libtorch's.
#pragma once
#include <functional>
#include <utility>

#include "ember/data/example.h"
#include "ember/data/transforms/base.h"
#include "ember/factory.h"
#include "ember/tensor.h"

namespace ember::data::transforms {

template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (input - mean) / stddev per channel: mean and stddev hold one value per channel (dim 0 of a
// C x H x W example) or one for all.
template <class Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(channel_values(mean)), stddev(channel_values(stddev)) {}
  Normalize(double mean, double stddev) : Normalize(ArrayRef<double>(mean), ArrayRef<double>(stddev)) {}

  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }

  Tensor mean, stddev;

 private:
  // float32 values of shape (C, 1, 1), so they broadcast over an image's height and width.
  static Tensor channel_values(ArrayRef<double> values) {
    return ember::tensor(values.vec()).to(kFloat32).unsqueeze(1).unsqueeze(2);
  }
};

}  // namespace ember::data::transforms
