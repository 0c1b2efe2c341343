// Automatic mixed precision: the gradient scaler (PyTorch's torch.cuda.amp.GradScaler, on CPU).
//
//   amp::GradScaler scaler;                        // amp::GradScalerOptions().init_scale(1024)...
//   for (...) {
//     opt.zero_grad();
//     scaler.scale(loss_fn(model(x), y)).backward();  // gradients of loss * scale
//     scaler.unscale_(opt);                           // optional: e.g. to clip true gradients
//     scaler.step(opt);                               // unscales; skips the step on inf/NaN
//     scaler.update();                                // backs off after inf/NaN, else grows
//   }
//
// Scaling the loss keeps small float16 gradients from flushing to zero; a step whose gradients
// overflowed is skipped and the scale halved; after growth_interval clean steps it doubles.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ember/nn/options.h"
#include "ember/optim/optimizer.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::amp {

// PyTorch's defaults.
struct GradScalerOptions {
  EMBER_ARG(double, init_scale) = 65536.0;
  EMBER_ARG(double, growth_factor) = 2.0;
  EMBER_ARG(double, backoff_factor) = 0.5;
  EMBER_ARG(int64_t, growth_interval) = 2000;
  EMBER_ARG(bool, enabled) = true;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (float32 scale: a float16 or bfloat16 loss gives a float32 result of shape
  // [1], as in PyTorch); disabled: the outputs unchanged.
  Tensor scale(const Tensor& outputs) const;
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs) const;

  // Divides the optimizer's gradients by the scale in place (one multi-tensor pass that also
  // records whether any was inf or NaN). At most once per optimizer between update()s, before step().
  void unscale_(optim::Optimizer& optimizer);
  // unscale_ (unless done already), then optimizer.step() unless a gradient was inf or NaN.
  // Returns whether the optimizer stepped (PyTorch returns step()'s value, or None when skipped).
  // Inside a graph capture the step's kernels read the inf flag themselves at each replay (no
  // host read: docs/graphs.md), and step returns true.
  bool step(optim::Optimizer& optimizer);
  // The scale for the next iteration from the inf/NaN checks of this one (or new_scale); forgets
  // which optimizers were unscaled and stepped.
  void update();
  void update(double new_scale);

  double get_scale() const;  // 1 when disabled
  bool is_enabled() const { return options_.enabled(); }
  double get_growth_factor() const { return options_.growth_factor(); }
  double get_backoff_factor() const { return options_.backoff_factor(); }
  int64_t get_growth_interval() const { return options_.growth_interval(); }

  // "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" (PyTorch's
  // keys); empty when disabled. Loading into a disabled scaler does nothing; loading an empty dict
  // into an enabled one raises.
  OrderedDict<std::string, double> state_dict() const;
  void load_state_dict(const OrderedDict<std::string, double>& dict);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  struct OptimizerState {
    Stage stage = Stage::kReady;
    Tensor found_inf;  // [1] float32, 1 if a gradient was inf or NaN
  };

  GradScalerOptions options_;
  Tensor scale_;           // [1] float32
  Tensor growth_tracker_;  // [1] int32: consecutive steps without inf/NaN
  std::unordered_map<const optim::Optimizer*, OptimizerState> per_optimizer_;
};

}  // namespace ember::amp
