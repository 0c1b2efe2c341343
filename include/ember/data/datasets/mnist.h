// The MNIST dataset (and Fashion-MNIST, which uses the same files), as libtorch's: reads the IDX
// files under `root`, each plain or gzip-compressed (`name.gz`, tried when `name` is absent).
// Images are float32 of shape (N, 1, rows, cols) scaled to [0, 1], targets int64 of shape (N).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;
  // Gathers the whole batch at once, then hands out its rows.
  std::vector<Example<>> get_batch(ArrayRef<size_t> indices) override;
  std::optional<size_t> size() const override;

  bool is_train() const noexcept { return is_train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool is_train_;
};

}  // namespace ember::data::datasets
