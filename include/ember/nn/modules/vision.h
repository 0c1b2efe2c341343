// PixelShuffle, PixelUnshuffle, Upsample, CosineSimilarity, PairwiseDistance.
#pragma once
#include "ember/nn/functional/distance.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/options/distance.h"
#include "ember/nn/options/pixelshuffle.h"
#include "ember/nn/options/upsampling.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

class PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) { return functional::pixel_shuffle(input, options); }
  void pretty_print(std::ostream& stream) const override;
  PixelShuffleOptions options;
};
EMBER_MODULE(PixelShuffle);

class PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) { return functional::pixel_unshuffle(input, options); }
  void pretty_print(std::ostream& stream) const override;
  PixelUnshuffleOptions options;
};
EMBER_MODULE(PixelUnshuffle);

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  UpsampleOptions options;
};
EMBER_MODULE(Upsample);

class CosineSimilarityImpl : public Module {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2) {
    return functional::cosine_similarity(input1, input2, options);
  }
  void pretty_print(std::ostream& stream) const override;
  CosineSimilarityOptions options;
};
EMBER_MODULE(CosineSimilarity);

class PairwiseDistanceImpl : public Module {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input1, const Tensor& input2) {
    return functional::pairwise_distance(input1, input2, options);
  }
  void pretty_print(std::ostream& stream) const override;
  PairwiseDistanceOptions options;
};
EMBER_MODULE(PairwiseDistance);

}  // namespace ember::nn
