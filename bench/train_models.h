// The models of the training cases (written once against libtorch's API, compiled for both
// frameworks) and Adam steps of an Ember classifier beside its libtorch twin from the same
// weights; shared by cases_train.cpp and cases_profiler.cpp.
#pragma once
#include "torch_check.h"

namespace train_models {
// A 16-16-16-1 tanh MLP (the tiny regression net), a 784-256-128-10 ReLU classifier and a
// 1024-1024-1024-10 one (the mixed-precision case).
#define DEFINE_MLPS                                                                          \
  struct TanhMlpImpl : T::nn::Module {                                                       \
    T::nn::Linear l1{register_module("l1", T::nn::Linear(16, 16))};                          \
    T::nn::Linear l2{register_module("l2", T::nn::Linear(16, 16))};                          \
    T::nn::Linear l3{register_module("l3", T::nn::Linear(16, 1))};                           \
    T::Tensor forward(const T::Tensor& x) { return l3(T::tanh(l2(T::tanh(l1(x))))); }        \
  };                                                                                         \
  MODULE(TanhMlp);                                                                           \
  struct ReluMlpImpl : T::nn::Module {                                                       \
    T::nn::Linear l1{register_module("l1", T::nn::Linear(784, 256))};                        \
    T::nn::Linear l2{register_module("l2", T::nn::Linear(256, 128))};                        \
    T::nn::Linear l3{register_module("l3", T::nn::Linear(128, 10))};                         \
    T::Tensor forward(const T::Tensor& x) { return l3(T::relu(l2(T::relu(l1(x))))); }        \
  };                                                                                         \
  MODULE(ReluMlp);                                                                           \
  struct WideMlpImpl : T::nn::Module {                                                       \
    T::nn::Linear l1{register_module("l1", T::nn::Linear(1024, 1024))};                      \
    T::nn::Linear l2{register_module("l2", T::nn::Linear(1024, 1024))};                      \
    T::nn::Linear l3{register_module("l3", T::nn::Linear(1024, 10))};                        \
    T::Tensor forward(const T::Tensor& x) { return l3(T::relu(l2(T::relu(l1(x))))); }        \
  };                                                                                         \
  MODULE(WideMlp);

namespace on_ember {
namespace T = ::ember;
#define MODULE EMBER_MODULE
DEFINE_MLPS
#include "../examples/fashion_mnist/net.inc"
#undef MODULE
}  // namespace on_ember
namespace on_torch {
namespace T = ::torch;
#define MODULE TORCH_MODULE
DEFINE_MLPS
#include "../examples/fashion_mnist/net.inc"
#undef MODULE
}  // namespace on_torch
#undef DEFINE_MLPS

// libtorch's model takes Ember's initial parameters and buffers, name by name.
template <class EM, class TM>
void copy_weights(const EM& ember_model, TM& torch_model) {
  torch::NoGradGuard no_grad;
  auto copy = [](const auto& from, auto to) {
    for (const auto& item : from) to[item.key()].copy_(parity::to_torch(item.value().detach()));
  };
  copy(ember_model->named_parameters(), torch_model->named_parameters());
  copy(ember_model->named_buffers(), torch_model->named_buffers());
}

// After the same steps from the same weights, the parameters agree.
template <class EM, class TM>
void check_same_parameters(const bench::Context& ctx, const EM& ember_model, TM& torch_model, parity::Tol tol) {
  const auto theirs = torch_model->named_parameters();
  for (const auto& item : ember_model->named_parameters())
    bench::check_close(ctx, item.value().detach(), theirs[item.key()].detach(), tol);
}

// Adam steps of an Ember classifier and its libtorch twin on one batch (cross-entropy loss).
template <class EM, class TM>
struct AdamClassifierSteps {
  EM& em;
  TM& tm;
  ember::Tensor x, y;
  torch::Tensor tx = parity::to_torch(x), ty = parity::to_torch(y);
  ember::optim::Adam eopt{em->parameters(), ember::optim::AdamOptions(1e-3)};
  torch::optim::Adam topt{tm->parameters(), torch::optim::AdamOptions(1e-3)};
  void ember_step() {
    eopt.zero_grad();
    ember::nn::functional::cross_entropy(em(x), y).backward();
    eopt.step();
  }
  void torch_step() {
    topt.zero_grad();
    torch::nn::functional::cross_entropy(tm(tx), ty).backward();
    topt.step();
  }
  // A few steps of each from the same weights; then the parameters agree.
  void check(const bench::Context& ctx, parity::Tol tol) {
    for (int i = 0; i < 3; ++i) ember_step(), torch_step();
    check_same_parameters(ctx, em, tm, tol);
  }
};

}  // namespace train_models
