// Recurrent and attention modules against libtorch's, with the same parameters: a two-layer LSTM's
// forward and backward, a GRU's forward without recording, one LSTMCell step at batch 1 (the
// latency case), MultiheadAttention's self-attention forward and backward, and scaled dot-product
// attention over a long sequence (peak memory and time).
#include <cstdio>
#include <tuple>

#include "counting_allocator.h"
#include "torch_check.h"

namespace {

constexpr const char* kRnnLabel = "rnn: sequence models";
constexpr const char* kCellLabel = "rnn: one cell step";
constexpr const char* kAttentionLabel = "attention: MultiheadAttention";
constexpr const char* kSdpaMemoryLabel = "attention: peak memory";
constexpr const char* kSdpaTimeLabel = "attention: long sequence";

ember::Tensor input(ember::IntArrayRef sizes, uint64_t seed) {
  return parity::random(sizes, ember::kFloat, seed) * 0.5;
}

// libtorch's module gets Ember's parameters, by name.
void copy_parameters_to_torch(const ember::nn::Module& e, torch::nn::Module& t) {
  torch::NoGradGuard no_grad;
  auto tp = t.named_parameters();
  for (const auto& p : e.named_parameters()) tp[p.key()].copy_(parity::to_torch(p.value()));
}

bench::Register lstm_2layer{{
    .name = "lstm_2layer_h256_seq50_b32_fwd_bwd",
    .label = kRnnLabel,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          ember::nn::LSTM e(ember::nn::LSTMOptions(256, 256).num_layers(2));
          torch::nn::LSTM t(torch::nn::LSTMOptions(256, 256).num_layers(2));
          copy_parameters_to_torch(*e, *t);
          const ember::Tensor x = input({50, 32, 256}, 1);
          const torch::Tensor tx = parity::to_torch(x);
          auto ember_step = [&] {
            e->zero_grad();
            auto [out, hc] = e(x);
            (out.sum() + std::get<1>(hc).sum()).backward();
          };
          auto torch_step = [&] {
            t->zero_grad();
            auto [out, hc] = t->forward(tx);
            (out.sum() + std::get<1>(hc).sum()).backward();
          };
          ember_step();
          torch_step();
          bench::check_close(ctx, e->named_parameters()["weight_hh_l0"].grad(),
                             t->named_parameters()["weight_hh_l0"].grad(), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = ember_step, .baseline = torch_step, .rounds = 3});
        },
}};

bench::Register gru_1layer{{
    .name = "gru_1layer_h512_seq100_b16_fwd",
    .label = kRnnLabel,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          ember::nn::GRU e(512, 512);
          torch::nn::GRU t(512, 512);
          copy_parameters_to_torch(*e, *t);
          const ember::Tensor x = input({100, 16, 512}, 2);
          const torch::Tensor tx = parity::to_torch(x);
          ember::NoGradGuard no_grad;
          torch::NoGradGuard torch_no_grad;
          bench::check_close(ctx, std::get<0>(e(x)), std::get<0>(t->forward(tx)), parity::Tol{1e-5, 1e-5});
          return bench::time_pair(ctx, {.ember = [&] { (void)e(x); }, .baseline = [&] { (void)t->forward(tx); },
                                        .rounds = 3});
        },
}};

bench::Register lstm_cell_step{{
    .name = "lstm_cell_h256_b1_step",
    .label = kCellLabel,
    .target = 0.4,
    .run =
        [](const bench::Context& ctx) {
          ember::nn::LSTMCell e(256, 256);
          torch::nn::LSTMCell t(256, 256);
          copy_parameters_to_torch(*e, *t);
          const ember::Tensor x = input({1, 256}, 3), h = input({1, 256}, 4), c = input({1, 256}, 5);
          const torch::Tensor tx = parity::to_torch(x), th = parity::to_torch(h), tc = parity::to_torch(c);
          ember::NoGradGuard no_grad;
          torch::NoGradGuard torch_no_grad;
          bench::check_close(ctx, std::get<1>(e(x, std::make_tuple(h, c))),
                             std::get<1>(t->forward(tx, std::make_tuple(th, tc))), parity::Tol{1e-5, 1e-5});
          return bench::time_pair(ctx, {.ember = [&] { (void)e(x, std::make_tuple(h, c)); },
                                        .baseline = [&] { (void)t->forward(tx, std::make_tuple(th, tc)); }});
        },
}};

bench::Register mha{{
    .name = "mha_seq256_d512_h8_b8_fwd_bwd",
    .label = kAttentionLabel,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          ember::nn::MultiheadAttention e(512, 8);
          torch::nn::MultiheadAttention t(512, 8);
          copy_parameters_to_torch(*e, *t);
          // (seq, batch, embed): self-attention, the input also a leaf that wants its gradient
          const ember::Tensor x = input({256, 8, 512}, 6).requires_grad_(true);
          const torch::Tensor tx = parity::to_torch(x.detach()).requires_grad_(true);
          auto ember_step = [&] {
            e->zero_grad();
            x.mutable_grad() = ember::Tensor();
            std::get<0>(e(x, x, x)).sum().backward();
          };
          auto torch_step = [&] {
            t->zero_grad();
            tx.mutable_grad() = torch::Tensor();
            std::get<0>(t->forward(tx, tx, tx)).sum().backward();
          };
          ember_step();
          torch_step();
          bench::check_close(ctx, x.grad(), tx.grad(), parity::Tol{1e-4, 1e-4});
          bench::check_close(ctx, e->named_parameters()["in_proj_weight"].grad(),
                             t->named_parameters()["in_proj_weight"].grad(), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = ember_step, .baseline = torch_step, .rounds = 3});
        },
}};

// Scaled dot-product attention over 4096 queries and keys, 8 heads of 64, forward without
// recording. libtorch 1.13's C++ API has it as at::_scaled_dot_product_attention (PyTorch 2's
// public torch::scaled_dot_product_attention came later): its math composition, which holds the
// (8, 4096, 4096) scores and their softmax. Ember's call takes the blocked kernel.
struct SdpaInputs {
  ember::Tensor q, k, v;
  torch::Tensor tq, tk, tv;
};
const SdpaInputs& sdpa_inputs() {
  static const SdpaInputs in = [] {
    SdpaInputs r{input({1, 8, 4096, 64}, 7), input({1, 8, 4096, 64}, 8), input({1, 8, 4096, 64}, 9), {}, {}, {}};
    r.tq = parity::to_torch(r.q), r.tk = parity::to_torch(r.k), r.tv = parity::to_torch(r.v);
    return r;
  }();
  return in;
}
torch::Tensor torch_sdpa(const SdpaInputs& in) {
  return std::get<0>(at::_scaled_dot_product_attention(in.tq, in.tk, in.tv, c10::nullopt, 0.0, false, false));
}

// Peak memory of one call above what was allocated before it: the bytes each library's allocator
// handed out (Ember's statistics; libtorch's CPU allocator wrapped to count), the output included.
bench::Register sdpa_memory{{
    .name = "sdpa_seq4096_d64_h8_b1_fwd",
    .label = kSdpaMemoryLabel,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          constexpr double kMB = 1024.0 * 1024.0;
          const SdpaInputs& in = sdpa_inputs();
          ember::NoGradGuard no_grad;
          torch::NoGradGuard torch_no_grad;
          bench::check_close(ctx, ember::scaled_dot_product_attention(in.q, in.k, in.v), torch_sdpa(in),
                             parity::Tol{1e-4, 1e-5});
          c10::Allocator* previous = c10::GetCPUAllocator();
          static bench::CountingAllocator counting(previous);  // outlives every tensor it allocated
          c10::SetCPUAllocator(&counting, /*priority=*/100);
          const size_t ember_before = ember::cpu_allocator::stats().allocated_bytes;
          ember::cpu_allocator::reset_peak_stats();
          (void)ember::scaled_dot_product_attention(in.q, in.k, in.v);
          const double ember_mb =
              static_cast<double>(ember::cpu_allocator::stats().peak_allocated_bytes - ember_before) / kMB;
          counting.reset_peak();
          const size_t torch_before = counting.live();
          (void)torch_sdpa(in);
          const double torch_mb = static_cast<double>(counting.peak() - torch_before) / kMB;
          c10::SetCPUAllocator(previous, /*priority=*/100);
          bench::Outcome out;
          out.unit = "MB";
          out.ember = ember_mb;
          out.baseline = torch_mb;
          char note[128];
          std::snprintf(note, sizeof note, "allocator peak of one call: Ember %.1f MB, libtorch %.1f MB", ember_mb,
                        torch_mb);
          out.notes.emplace_back(note);
          return out;
        },
}};

bench::Register sdpa_time{{
    .name = "sdpa_seq4096_d64_h8_b1_fwd_time",
    .label = kSdpaTimeLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const SdpaInputs& in = sdpa_inputs();
          ember::NoGradGuard no_grad;
          torch::NoGradGuard torch_no_grad;
          bench::check_close(ctx, ember::scaled_dot_product_attention(in.q, in.k, in.v), torch_sdpa(in),
                             parity::Tol{1e-4, 1e-5});
          // 2 products of 8 x 4096 x 4096 x 64 multiply-adds
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::scaled_dot_product_attention(in.q, in.k, in.v); },
                                        .baseline = [&] { (void)torch_sdpa(in); },
                                        .rounds = 3,
                                        .flops = 4.0 * 8 * 4096 * 4096 * 64});
        },
}};

}  // namespace
