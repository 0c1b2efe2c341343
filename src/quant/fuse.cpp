// Eager-mode module fusion, as torch.ao.quantization.fuse_modules: conv-bn(-relu), conv-relu,
// linear-bn, linear-relu and bn-relu groups become one module (batch norm folded in eval mode),
// the others Identity. docs/quantization.md.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <sstream>
#include <string>
#include <vector>

#include "ember/nn/intrinsic.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/quantization.h"
#include "nn/utils/fusion.h"

namespace ember::quantization {
namespace {

constexpr const char* kFuseOp = "fuse_modules";

// A module named by a dotted path, with the Sequential holding it.
struct Slot {
  std::string path;
  nn::SequentialImpl* parent;
  std::string key;  // its name in parent
  std::shared_ptr<nn::Module> module;
};

Slot resolve(nn::Module& model, const std::string& path) {
  nn::Module* parent = &model;
  std::shared_ptr<nn::Module> module;
  std::string key;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const auto children = parent->named_children();
    const std::shared_ptr<nn::Module>* child = children.find(key);
    EMBER_CHECK(child, kFuseOp, "the model has no submodule '", path, "' (no child '", key, "' in ",
                parent == &model ? std::string("the model") : path.substr(0, start - 1), ")");
    module = *child;
    if (dot == std::string::npos) break;
    parent = module.get();
    start = dot + 1;
  }
  auto* seq = dynamic_cast<nn::SequentialImpl*>(parent);
  EMBER_CHECK(seq, kFuseOp, "'", path, "' is a member of ", parent->name(),
              ", not of a Sequential: a C++ module calls its members in forward(), so putting the fused "
              "module in its place (PyTorch's setattr) would not change what runs; hold the layers to fuse "
              "in an nn::Sequential, or build the model with nn::intrinsic modules");
  return {path, seq, key, module};
}

template <class T>
T* as(const Slot& s) {
  return dynamic_cast<T*>(s.module.get());
}

std::string describe(const std::vector<Slot>& slots) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < slots.size(); ++i) s << (i ? ", " : "") << slots[i].module->name();
  s << ")";
  return s.str();
}

// The eval-mode batch norm of `bn` folded into a copy of `layer` (fuse_conv_bn_eval /
// fuse_linear_bn_eval).
template <size_t D, class Impl>
std::shared_ptr<Impl> fold(const Impl& layer, const Slot& bn, const std::vector<Slot>& slots) {
  EMBER_CHECK(layer.is_training() == bn.module->is_training(), kFuseOp, "Conv and BN both must be in the same mode (train "
              "or eval) in ", describe(slots));
  EMBER_CHECK(!layer.is_training(), kFuseOp, "fusing ", describe(slots),
              " in training mode makes a QAT module (ConvBn, for prepare_qat): use fuse_modules_qat, or call "
              "model.eval() first to fold the batch norm");
  nn::detail::BatchNormFold fold;
  EMBER_CHECK(nn::detail::bn_fold<D>(*bn.module, fold), kFuseOp, "the batch norm ", bn.path,
              " has no running statistics to fold (track_running_stats=false)");
  const int64_t channels = layer.weight.size(0);
  EMBER_CHECK(fold.mean.numel() == channels, kFuseOp, "the batch norm ", bn.path, " has ", fold.mean.numel(),
              " features but the layer before it has ", channels, " output channels");
  return nn::detail::folded(layer, layer.options, fold);
}

template <size_t D>
using ConvReLUFor = std::conditional_t<D == 1, nn::intrinsic::ConvReLU1dImpl,
                                       std::conditional_t<D == 2, nn::intrinsic::ConvReLU2dImpl, nn::intrinsic::ConvReLU3dImpl>>;

// The fused form of a group starting with a Conv{D}d: conv-bn, conv-bn-relu or conv-relu; empty
// when it is none of these.
// qat: conv-bn(-relu) keep the batch norm (ConvBn, ConvBnReLU).
template <size_t D, class Conv, class BN>
nn::AnyModule fuse_conv(const std::vector<Slot>& s, bool qat) {
  auto conv = std::dynamic_pointer_cast<Conv>(s[0].module);
  if (!conv || s.size() < 2 || s.size() > 3) return {};
  auto bn = std::dynamic_pointer_cast<BN>(s[1].module);
  auto relu = std::dynamic_pointer_cast<nn::ReLUImpl>(s.back().module);
  if (bn && qat) {
    EMBER_CHECK(conv->is_training() == bn->is_training(), kFuseOp, "Conv and BN both must be in the same mode (train "
                "or eval) in ", describe(s));
    const nn::intrinsic::ConvHolder<D> c(conv);
    const nn::intrinsic::BatchNormHolder<D> b(bn);
    auto make = [&](auto fused) {  // (as its own type: AnyModule keeps its forward)
      fused->train(conv->is_training());
      return nn::AnyModule(fused);
    };
    if (s.size() == 2) return make(std::make_shared<nn::intrinsic::ConvBnFor<D>>(c, b));
    return relu ? make(std::make_shared<nn::intrinsic::ConvBnReLUFor<D>>(c, b, nn::ReLU(relu))) : nn::AnyModule();
  }
  if (s.size() == 2 && bn) return nn::AnyModule(fold<D>(*conv, s[1], s));
  if (!relu || (s.size() == 3 && !bn)) return {};
  auto fused = std::make_shared<ConvReLUFor<D>>(s.size() == 3 ? fold<D>(*conv, s[1], s) : conv, nn::ReLU(relu));
  fused->train(conv->is_training());
  return nn::AnyModule(fused);
}

nn::AnyModule fuse_linear(const std::vector<Slot>& s) {
  auto linear = std::dynamic_pointer_cast<nn::LinearImpl>(s[0].module);
  if (!linear || s.size() != 2) return {};
  if (as<nn::BatchNorm1dImpl>(s[1])) {
    EMBER_CHECK(!linear->is_training() && !s[1].module->is_training(), kFuseOp,
                "Fusing Linear+BatchNorm not yet supported in training (", describe(s), "); call model.eval() first");
    return nn::AnyModule(fold<1>(*linear, s[1], s));
  }
  auto relu = std::dynamic_pointer_cast<nn::ReLUImpl>(s[1].module);
  if (!relu) return {};
  auto fused = std::make_shared<nn::intrinsic::LinearReLUImpl>(linear, nn::ReLU(relu));
  fused->train(linear->is_training());
  return nn::AnyModule(fused);
}

template <class BN, class BNReLU>
nn::AnyModule fuse_bn_relu(const std::vector<Slot>& s) {
  auto bn = std::dynamic_pointer_cast<BN>(s[0].module);
  auto relu = s.size() == 2 ? std::dynamic_pointer_cast<nn::ReLUImpl>(s[1].module) : nullptr;
  if (!bn || !relu) return {};
  auto fused = std::make_shared<BNReLU>(bn, nn::ReLU(relu));
  fused->train(bn->is_training());
  return nn::AnyModule(fused);
}

nn::AnyModule fused_form(const std::vector<Slot>& s, bool qat) {
  for (auto f : {&fuse_conv<1, nn::Conv1dImpl, nn::BatchNorm1dImpl>, &fuse_conv<2, nn::Conv2dImpl, nn::BatchNorm2dImpl>,
                 &fuse_conv<3, nn::Conv3dImpl, nn::BatchNorm3dImpl>}) {
    nn::AnyModule m = f(s, qat);
    if (!m.is_empty()) return m;
  }
  for (auto f : {&fuse_linear, &fuse_bn_relu<nn::BatchNorm2dImpl, nn::intrinsic::BNReLU2dImpl>,
                 &fuse_bn_relu<nn::BatchNorm3dImpl, nn::intrinsic::BNReLU3dImpl>}) {
    nn::AnyModule m = f(s);
    if (!m.is_empty()) return m;
  }
  EMBER_CHECK(false, kFuseOp, "Cannot fuse modules: ", describe(s),
              "; the patterns are conv-bn, conv-bn-relu, conv-relu (Conv1d/2d/3d with BatchNorm1d/2d/3d), "
              "linear-bn (BatchNorm1d), linear-relu and bn-relu (BatchNorm2d/3d)");
  return {};
}

void fuse(nn::Module& model, const std::vector<std::vector<std::string>>& modules_to_fuse, bool qat) {
  // every group resolved and fused first, so that a refusal leaves the model as it was
  std::vector<std::pair<std::vector<Slot>, nn::AnyModule>> plan;
  std::vector<std::string> seen;
  for (const auto& group : modules_to_fuse) {
    std::vector<Slot> slots;
    for (const std::string& name : group) {
      EMBER_CHECK(std::find(seen.begin(), seen.end(), name) == seen.end(), kFuseOp, "the module '", name,
                  "' is in more than one group");
      seen.push_back(name);
      slots.push_back(resolve(model, name));
    }
    EMBER_CHECK(slots.size() >= 2, kFuseOp, "a group names the modules to fuse, at least two, got ", slots.size());
    nn::AnyModule fused = fused_form(slots, qat);
    plan.emplace_back(std::move(slots), std::move(fused));
  }
  for (auto& [slots, fused] : plan) {
    // as PyTorch: the fused module takes the first name, Identity the others (in its mode)
    const bool training = slots[0].module->is_training();
    slots[0].parent->replace(slots[0].key, std::move(fused));
    for (size_t i = 1; i < slots.size(); ++i) {
      auto identity = std::make_shared<nn::IdentityImpl>();
      identity->train(training);
      slots[i].parent->replace(slots[i].key, nn::AnyModule(identity));
    }
  }
}

}  // namespace

void fuse_modules(nn::Module& model, const std::vector<std::vector<std::string>>& modules_to_fuse) {
  fuse(model, modules_to_fuse, /*qat=*/false);
}
void fuse_modules_qat(nn::Module& model, const std::vector<std::vector<std::string>>& modules_to_fuse) {
  fuse(model, modules_to_fuse, /*qat=*/true);
}

}  // namespace ember::quantization
