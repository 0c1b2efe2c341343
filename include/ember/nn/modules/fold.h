// Fold and Unfold: sliding blocks of a (N, C, H, W) input as columns (N, C * kh * kw, L), and
// back (overlapping entries summed).
#pragma once
#include "ember/nn/options/fold.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

namespace functional {
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
}  // namespace functional

class FoldImpl : public Module {
 public:
  FoldImpl(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size) : options(output_size, kernel_size) {}
  explicit FoldImpl(const FoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) { return functional::fold(input, options); }
  void pretty_print(std::ostream& stream) const override;
  FoldOptions options;
};
EMBER_MODULE(Fold);

class UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(const UnfoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) { return functional::unfold(input, options); }
  void pretty_print(std::ostream& stream) const override;
  UnfoldOptions options;
};
EMBER_MODULE(Unfold);

}  // namespace ember::nn
