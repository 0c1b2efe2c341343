// The PowerSGD communication hook (Vogels et al. 2019, as PyTorch's powerSGD_hook).
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn/parallel/distributed.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::distributed::ddp_comm_hooks {

PowerSGDState::PowerSGDState(ProcessGroupPtr process_group, int64_t matrix_approximation_rank,
                             int64_t start_powerSGD_iter, double min_compression_rate, bool use_error_feedback,
                             bool warm_start, double orthogonalization_epsilon, uint64_t random_seed)
    : process_group(std::move(process_group)),
      matrix_approximation_rank(matrix_approximation_rank),
      start_powerSGD_iter(start_powerSGD_iter),
      min_compression_rate(min_compression_rate),
      use_error_feedback(use_error_feedback),
      warm_start(warm_start),
      orthogonalization_epsilon(orthogonalization_epsilon),
      rng(random_seed) {
  EMBER_CHECK(matrix_approximation_rank >= 1, "PowerSGDState", "matrix_approximation_rank must be at least 1, got ",
              matrix_approximation_rank);
}

namespace {

// Gram-Schmidt on the columns of m (in place).
void orthogonalize(Tensor m, double eps) {
  const int64_t cols = m.size(1);
  for (int64_t i = 0; i < cols; ++i) {
    Tensor col = m.narrow(1, i, 1);
    col.div_(eps == 0 ? col.norm() : col.norm() + eps);
    if (i + 1 < cols) {
      Tensor rest = m.narrow(1, i + 1, cols - i - 1);
      rest.sub_(col * (col * rest).sum(0, true));
    }
  }
}

WorkPtr allreduce_async(const ProcessGroupPtr& group, const Tensor& t) {
  std::vector<Tensor> one{t};
  return group->allreduce(one);
}

}  // namespace

FuturePtr powerSGD_hook(const std::shared_ptr<PowerSGDState>& state, GradBucket& bucket) {
  EMBER_CHECK(state, "powerSGD_hook", "needs a PowerSGDState");
  const ProcessGroupPtr group = state->process_group ? state->process_group : group_world();
  EMBER_CHECK(group, "powerSGD_hook", "the default process group has not been initialized");
  const int world = group->size();
  const size_t index = bucket.index();
  auto finish = [&](FuturePtr f) {
    if (bucket.is_last()) ++state->iter;
    return f;
  };
  if (state->iter < state->start_powerSGD_iter) return finish(allreduce_hook(group, bucket));

  NoGradGuard no_grad;
  Tensor input = bucket.buffer();
  Tensor input_copy;
  if (state->use_error_feedback) {
    auto it = state->error_dict.find(index);
    if (it != state->error_dict.end()) {
      input.add_(it->second);
    }
    input_copy = input.clone();
  }
  // which gradients go compressed (as matrices) and which whole
  std::vector<Tensor> matrices, whole;
  std::vector<int64_t> ranks;
  for (const Tensor& g : bucket.gradients()) {
    const int64_t n = g.dim() == 0 ? 1 : g.size(0);
    const int64_t m = n == 0 ? 0 : g.numel() / n;
    const int64_t r = std::min({n, m, state->matrix_approximation_rank});
    if (r > 0 && static_cast<double>((n + m) * r) * state->min_compression_rate < static_cast<double>(n * m)) {
      matrices.push_back(g.view({n, m}));
      ranks.push_back(r);
    } else {
      whole.push_back(g);
    }
  }
  // As PyTorch's, the all-reduces of the whole tensors and of P start here, while backward goes
  // on; the future does the rest when DDP waits for the bucket: Gram-Schmidt on P, Q's
  // all-reduce, P Q^T. Every rank waits for its buckets in order, so the Q all-reduces are issued
  // in the same order everywhere.
  Tensor joined;
  WorkPtr last_work;
  if (!whole.empty()) {
    std::vector<Tensor> flat;
    for (const Tensor& t : whole) flat.push_back(t.reshape({-1}));
    joined = cat(flat);
    last_work = allreduce_async(group, joined);
  }
  std::vector<Tensor> ps, qs;
  Tensor p_memory, q_memory;
  if (!matrices.empty()) {
    int64_t p_total = 0, q_total = 0;
    for (size_t i = 0; i < matrices.size(); ++i) {
      p_total += matrices[i].size(0) * ranks[i];
      q_total += matrices[i].size(1) * ranks[i];
    }
    const bool fresh = !state->warm_start || !state->p_memory_dict.count(index);
    if (fresh) {
      state->p_memory_dict[index] = empty({p_total}, input.options());
      state->q_memory_dict[index] = empty({q_total}, input.options());
    }
    p_memory = state->p_memory_dict[index];
    q_memory = state->q_memory_dict[index];
    int64_t p_at = 0, q_at = 0;
    for (size_t i = 0; i < matrices.size(); ++i) {
      const int64_t n = matrices[i].size(0), m = matrices[i].size(1), r = ranks[i];
      ps.push_back(p_memory.narrow(0, p_at, n * r).view({n, r}));
      qs.push_back(q_memory.narrow(0, q_at, m * r).view({m, r}));
      p_at += n * r;
      q_at += m * r;
    }
    if (fresh) {
      // the same draws on every rank: one seed from the state's generator per fresh bucket
      Generator g(state->rng.next_u64() % 1000000000);
      for (Tensor& q : qs) q.copy_(randn(q.sizes(), &g, q.options()));
    }
    for (size_t i = 0; i < matrices.size(); ++i) ps[i].copy_(matmul(matrices[i], qs[i]));
    last_work = allreduce_async(group, p_memory);
  }
  // the group runs its collectives in issue order: the last one done means all are
  FuturePtr started = last_work ? make_future(last_work) : make_completed_future(input);
  return finish(started->then([=, whole = std::move(whole), matrices = std::move(matrices), ps = std::move(ps),
                               qs = std::move(qs)](Tensor) mutable {
    NoGradGuard no_grad;
    if (joined.defined()) {
      joined.div_(world);
      int64_t at = 0;
      for (Tensor& t : whole) {
        t.view({-1}).copy_(joined.narrow(0, at, t.numel()));
        at += t.numel();
      }
    }
    if (!matrices.empty()) {
      for (Tensor& p : ps) orthogonalize(p, state->orthogonalization_epsilon);
      for (size_t i = 0; i < matrices.size(); ++i) qs[i].copy_(matmul(matrices[i].t(), ps[i]));
      allreduce_async(group, q_memory)->wait();
      q_memory.div_(world);
      for (size_t i = 0; i < matrices.size(); ++i) matrices[i].copy_(matmul(ps[i], qs[i].t()));
      if (!state->warm_start) {
        state->p_memory_dict.erase(index);
        state->q_memory_dict.erase(index);
      }
    }
    if (state->use_error_feedback) state->error_dict[index] = input_copy - input;
    return input;
  }));
}

}  // namespace ember::distributed::ddp_comm_hooks
