// Fits y = 3x - 1 with a libtorch-style module and optimizer; exits non-zero unless it learns.
#include <ember/torch.h>

#include <cstdio>

struct FitImpl : torch::nn::Module {
  torch::nn::Linear fc{register_module("fc", torch::nn::Linear(1, 1))};
  torch::Tensor forward(const torch::Tensor& x) { return fc(x); }
};
TORCH_MODULE(Fit);

int main() {
  torch::manual_seed(0);
  Fit model;
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  const torch::Tensor x = torch::linspace(-1, 1, 64).unsqueeze(1);
  const torch::Tensor y = 3 * x - 1;
  double loss = 0;
  for (int step = 0; step < 200; ++step) {
    opt.zero_grad();
    torch::Tensor l = torch::nn::functional::mse_loss(model(x), y);
    l.backward();
    opt.step();
    loss = l.item<double>();
  }
  const double w = model->fc->weight.item<double>(), b = model->fc->bias.item<double>();
  std::printf("consumer: loss %.2e, weight %.4f, bias %.4f (%s)\n", loss, w, b, torch::get_cpu_capability().c_str());
  return loss < 1e-4 ? 0 : 1;
}
