// A small libtorch program that includes libtorch's headers by their own paths: a dataset, a
// data loader, a module, SGD and a learning-rate schedule. Exits non-zero unless it learns
// y = 3x - 1.
#include <ATen/ATen.h>
#include <c10/util/Optional.h>
#include <c10/util/irange.h>
#include <torch/data/datasets/base.h>
#include <torch/nn/module.h>
#include <torch/optim/schedulers/step_lr.h>
#include <torch/optim/sgd.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>

struct Line : torch::data::Dataset<Line> {
  torch::data::Example<> get(size_t i) override {
    torch::Tensor x = torch::full({1}, static_cast<double>(i) / 32 - 1);
    return {x, 3 * x - 1};
  }
  c10::optional<size_t> size() const override { return 64; }
};

struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};

// Modules of different forward signatures in one Sequential (libtorch chains them through AnyValue).
struct SplitImpl : torch::nn::Module {
  std::tuple<torch::Tensor, torch::Tensor> forward(torch::Tensor x) { return {x, 2 * x}; }
};
TORCH_MODULE(Split);
struct JoinImpl : torch::nn::Module {
  torch::Tensor forward(std::tuple<torch::Tensor, torch::Tensor> parts) {
    return std::get<0>(parts) + std::get<1>(parts);
  }
};
TORCH_MODULE(Join);
struct ScaleImpl : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x, double by = 2) { return x * by; }
  FORWARD_HAS_DEFAULT_ARGS({1, torch::nn::AnyValue(2.0)})
};
TORCH_MODULE(Scale);

// An optimizer written for libtorch as its users write their own (LAMB, Lion, ... in public
// programs): options and per-parameter state deriving libtorch's cloneable bases with TORCH_ARGs,
// serialized with libtorch's macros, state kept in the base's state_ under the key libtorch uses.
using Betas = std::tuple<double, double>;
struct SignMomentumOptions : torch::optim::OptimizerCloneableOptions<SignMomentumOptions> {
  SignMomentumOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT
  TORCH_ARG(double, lr);
  TORCH_ARG(Betas, betas) = std::make_tuple(0.9, 0.99);
  TORCH_ARG(double, weight_decay) = 0;
  TORCH_ARG(c10::optional<int64_t>, warmup) = c10::nullopt;

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(betas);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(warmup);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(Betas, betas);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG_OPTIONAL(int64_t, warmup);
  }
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};
struct SignMomentumParamState : torch::optim::OptimizerCloneableParamState<SignMomentumParamState> {
  TORCH_ARG(int64_t, step) = 0;
  TORCH_ARG(torch::Tensor, exp_avg);

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
  }
};
class SignMomentum : public torch::optim::Optimizer {
 public:
  SignMomentum(std::vector<torch::Tensor> params, SignMomentumOptions defaults = {})
      : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(params))},
                                std::make_unique<SignMomentumOptions>(defaults)) {}
  torch::Tensor step(LossClosure closure = nullptr) override {
    torch::NoGradGuard no_grad;
    torch::Tensor loss;
    if (closure) {
      torch::AutoGradMode enable_grad(true);
      loss = closure();
    }
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const SignMomentumOptions&>(group.options());
      for (auto& p : group.params()) {
        if (!p.grad().defined()) continue;
        const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
        if (state_.find(key) == state_.end()) {
          auto fresh = std::make_unique<SignMomentumParamState>();
          fresh->exp_avg(torch::zeros_like(p));
          state_[key] = std::move(fresh);
        }
        auto& state = static_cast<SignMomentumParamState&>(*state_[key]);
        state.step(state.step() + 1);
        const auto [beta1, beta2] = options.betas();
        if (options.weight_decay() != 0) p.mul_(1 - options.lr() * options.weight_decay());
        p.add_(state.exp_avg().mul(beta1).add(p.grad(), 1 - beta1).sign(), -options.lr());
        state.exp_avg().mul_(beta2).add_(p.grad(), 1 - beta2);
      }
    }
    return loss;
  }
};

int main() {
  torch::manual_seed(0);
  auto net = std::make_shared<Net>();
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));
  torch::optim::StepLR schedule(optimizer, 30, 0.5);
  auto loader = torch::data::make_data_loader(Line().map(torch::data::transforms::Stack<>()),
                                              torch::data::DataLoaderOptions().batch_size(16));
  float loss = 0;
  for (const auto epoch : c10::irange(60)) {
    (void)epoch;
    for (auto& batch : *loader) {
      optimizer.zero_grad();
      torch::Tensor l = torch::mse_loss(net->forward(batch.data), batch.target);
      l.backward();
      optimizer.step();
      loss = l.item<float>();
    }
    schedule.step();
  }
  const at::Tensor w = net->fc->weight.detach();
  torch::Tensor probe = torch::zeros({2, 2});
  probe[1][0] = 5;  // assigning to a temporary writes into probe, as in libtorch
  if (probe.sum().item<float>() != 5) return 2;

  // Calls found in public libtorch programs (pytorch/examples' dcgan, prabhuomkar/pytorch-cpp's
  // tutorials) that once failed to build against Ember.
  const torch::Tensor image = torch::rand({2, 3, 4}).permute({1, 2, 0});
  const torch::Tensor bytes = image.mul(255).to(torch::kCPU, torch::kUInt8, false, false, torch::MemoryFormat::Contiguous);
  if (!bytes.is_contiguous() || bytes.scalar_type() != torch::kUInt8) return 3;
  // same dtype, and Contiguous is the format a permuted 3-D tensor suggests: libtorch returns it as it is
  if (!image.to(image, false, false, torch::MemoryFormat::Contiguous).is_same(image)) return 3;
  const auto rest = image.sizes().slice(1);  // all dimensions but the first
  if (rest.size() != 2 || rest[0] != 4 || rest.at(1) != 2 || image.sizes().slice(1, 1).vec() != std::vector<int64_t>{4})
    return 4;
  if (torch::str("sample-", 3, ".pt") != "sample-3.pt") return 5;
  const torch::nn::Module& as_base = *net->fc;
  if (as_base.as<torch::nn::Linear>() != net->fc.get() || as_base.as<torch::nn::Conv2d>() != nullptr) return 6;
  torch::nn::Sequential chain(Split{}, Join{}, Scale{});
  const torch::Tensor ones = torch::ones({2});
  if (!chain->forward(ones).equal(6 * ones) || !chain->forward<torch::Tensor>(ones).equal(6 * ones)) return 7;
  torch::nn::Sequential layers(torch::nn::Linear(2, 2), torch::nn::ReLU());
  torch::Tensor through = ones;
  for (auto m : *layers) through = m.forward<>(through);  // as neural style transfer takes each layer's output
  if (!through.equal(layers->forward(ones))) return 7;
  torch::nn::AnyModule split(Split{}), scale(Scale{});
  const auto parts = split.forward<std::tuple<torch::Tensor, torch::Tensor>>(ones);
  torch::nn::AnyValue value = split.any_forward(ones);
  if (!std::get<1>(parts).equal(2 * ones) || value.try_get<torch::Tensor>() != nullptr ||
      !scale.forward(ones, 3.0).equal(3 * ones))
    return 8;
  try {
    scale.forward(ones, ones);  // a Tensor where forward takes a double
    return 9;
  } catch (const c10::Error&) {
  }
  // pytorch/examples' transfer-learning: torch/types.h's short dtype names
  if (ones.to(torch::kF64).scalar_type() != torch::kDouble || torch::kU8 != torch::kByte) return 10;
  // torch.special's out= forms, complex pow and the Hermitian 2-D FFT
  torch::Tensor special_out = torch::empty({0});
  torch::special::erf_out(special_out, ones);
  torch::special::xlogy_out(special_out, 2.0, ones);
  if (!special_out.equal(torch::zeros({2}))) return 11;
  const torch::Tensor z = torch::complex(ones, -ones);
  if (!torch::allclose(torch::pow(z, 2), z * z) || torch::fft::hfft2(z.view({1, 2})).size(1) != 2) return 11;
  // in-place methods through const references, as image_captioning's weight initialisation and
  // `tensor.grad().zero_()` use them
  const auto init = [](const torch::Tensor& weight) {
    torch::NoGradGuard no_grad;
    weight.uniform_(-0.1, 0.1).mul_(0).add_(2);
  };
  const torch::Tensor initialised = torch::empty({3});
  init(initialised);
  const torch::Tensor leaf = torch::ones({2}, torch::requires_grad());
  (leaf * leaf).sum().backward();
  leaf.grad().zero_();
  if (!initialised.equal(torch::full({3}, 2.0)) || leaf.grad().sum().item<float>() != 0) return 12;
  // an optimizer of the program's own, its options and state through libtorch's archives
  auto fitted = torch::zeros({3}, torch::requires_grad());
  const torch::Tensor goal = torch::tensor({0.5f, -1.0f, 2.0f});
  SignMomentum sign(std::vector<torch::Tensor>{fitted},
                    SignMomentumOptions(0.01).betas(std::make_tuple(0.5, 0.5)).warmup(3));
  for (int i = 0; i < 400; ++i) {
    sign.zero_grad();
    (fitted - goal).pow(2).sum().backward();
    sign.step();
  }
  if (!torch::allclose(fitted, goal, 0, 0.02) || sign.state().size() != 1) return 13;
  auto& first = static_cast<SignMomentumParamState&>(*sign.state().begin()->second);
  torch::serialize::OutputArchive archive;
  static_cast<const SignMomentumOptions&>(sign.param_groups()[0].options()).serialize(archive);
  torch::serialize::OutputArchive state_archive;
  first.serialize(state_archive);
  archive.write("state", state_archive);
  std::stringstream stream;
  archive.save_to(stream);
  torch::serialize::InputArchive in;
  in.load_from(stream);
  SignMomentumOptions restored(1);
  restored.serialize(in);
  torch::serialize::InputArchive state_in;
  in.read("state", state_in);
  SignMomentumParamState restored_state;
  restored_state.serialize(state_in);
  if (restored.lr() != 0.01 || std::get<1>(restored.betas()) != 0.5 || restored.warmup() != 3 ||
      restored_state.step() != 400 || !restored_state.exp_avg().equal(first.exp_avg()))
    return 14;
  std::printf("libtorch_program: loss %.2e, weight %.4f, lr %.4f\n", loss, w.item<float>(),
              optimizer.param_groups()[0].options().get_lr());
  return loss < 1e-4 ? 0 : 1;
}
