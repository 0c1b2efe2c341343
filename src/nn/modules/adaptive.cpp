#include "ember/nn/modules/adaptive.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_)
    : options(std::move(options_)) {
  reset();
}

void AdaptiveLogSoftmaxWithLossImpl::reset() {
  cutoffs = options.cutoffs();
  EMBER_CHECK(!cutoffs.empty() && std::is_sorted(cutoffs.begin(), cutoffs.end()) && cutoffs.front() > 0 &&
                  cutoffs.back() <= options.n_classes() - 1 &&
                  std::set<int64_t>(cutoffs.begin(), cutoffs.end()).size() == cutoffs.size(),
              "AdaptiveLogSoftmaxWithLoss",
              "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each "
              "value is between 1 and n_classes-1");
  EMBER_CHECK(options.div_value() != 0, "AdaptiveLogSoftmaxWithLoss", "div_value should not be equal to 0");
  cutoffs.push_back(options.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module("head", Linear(LinearOptions(options.in_features(), head_size).bias(options.head_bias())));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const auto hsz = static_cast<int64_t>(
        std::floor(static_cast<double>(options.in_features()) / std::pow(options.div_value(), static_cast<double>(i + 1))));
    const int64_t osz = cutoffs[i + 1] - cutoffs[i];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features(), hsz).bias(false)),
                               Linear(LinearOptions(hsz, osz).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (const auto& projection : *tail) {
    for (const auto& m : projection->children()) std::dynamic_pointer_cast<LinearImpl>(m)->reset_parameters();
  }
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveLogSoftmaxWithLoss";
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  const char* name = "AdaptiveLogSoftmaxWithLoss";
  const int64_t targ_dim = target_.dim();
  EMBER_CHECK(targ_dim == 1 || targ_dim == 0, name, "0D or 1D target tensor expected, multi-target not supported");
  if (targ_dim == 1) {
    EMBER_CHECK(input_.dim() == 2, name, "1D target tensor expects 2D input tensors, but found inputs with size ",
                input_.sizes());
  } else {
    EMBER_CHECK(input_.dim() == 1, name, "0D target tensor expects 1D input tensors, but found inputs with size ",
                input_.sizes());
  }
  const bool batched = targ_dim > 0;
  const Tensor input = batched ? input_ : input_.unsqueeze(0);
  const Tensor target = batched ? target_ : target_.unsqueeze(0);
  EMBER_CHECK(input.size(0) == target.size(0), name,
              "Input and target should have the same size in the batch dimension.");
  EMBER_CHECK(input.size(1) == options.in_features(), name, "expected input with ", options.in_features(),
              " features, got input of size ", input.sizes());
  const int64_t batch_size = target.size(0);
  Tensor output = zeros({batch_size}, input.options());
  Tensor gather_inds = empty({batch_size}, target.options());
  int64_t used_rows = 0;
  for (int64_t i = 0; i <= n_clusters; ++i) {
    const int64_t low = i == 0 ? 0 : cutoffs[i - 1], high = cutoffs[i];
    const Tensor target_mask = logical_and(target >= low, target < high);
    const Tensor row_indices = target_mask.nonzero().view({-1});
    if (row_indices.numel() == 0) continue;
    if (i == 0) {
      gather_inds.index_copy_(0, row_indices, target.masked_select(target_mask));
    } else {
      const Tensor cluster_output = tail->ptr<SequentialImpl>(i - 1)->forward(input.index_select(0, row_indices));
      gather_inds.index_fill_(0, row_indices, shortlist_size + i - 1);
      const Tensor local_target = target.masked_select(target_mask) - low;
      const Tensor cluster_logprob = log_softmax(cluster_output, 1);
      output = output.index_copy(0, row_indices, cluster_logprob.gather(1, local_target.unsqueeze(1)).squeeze(1));
    }
    used_rows += row_indices.numel();
  }
  EMBER_CHECK(used_rows == batch_size, name, "Target values should be in [0, ", options.n_classes() - 1, "], ",
              "but values in range [", target.min().item<double>(), ", ", target.max().item<double>(),
              "] were found. ");
  const Tensor head_logprob = log_softmax(head(input), 1);
  output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1);
  const double loss = (-output).mean().item<double>();
  return ASMoutput(batched ? output : output.squeeze(0), loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::_get_full_log_prob(const Tensor& input, const Tensor& head_output) {
  const Tensor head_logprob = log_softmax(head_output, 1);
  std::vector<Tensor> parts = {head_logprob.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    const Tensor cluster_logprob = log_softmax(tail->ptr<SequentialImpl>(i)->forward(input), 1);
    parts.push_back(cluster_logprob + head_logprob.narrow(1, shortlist_size + i, 1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) { return _get_full_log_prob(input, head(input)); }

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  const Tensor head_output = head(input);
  Tensor output = head_output.argmax(1);
  const Tensor not_in_shortlist = output >= shortlist_size;
  if (!not_in_shortlist.any().item<bool>()) return output;
  if (not_in_shortlist.all().item<bool>()) return _get_full_log_prob(input, head_output).argmax(1);
  const Tensor rows = not_in_shortlist.nonzero().view({-1});
  const Tensor log_prob = _get_full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows));
  return output.index_copy(0, rows, log_prob.argmax(1));
}

}  // namespace ember::nn
