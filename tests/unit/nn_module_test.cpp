// nn::Module and its holders: registration (and its errors), the recursive accessors and their
// order, train/eval, to(), zero_grad, printing, and the containers.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/ember.h"
#include "ember/torch.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace nn = ember::nn;
using ember::Tensor;

namespace {

struct NetImpl : nn::Module {
  NetImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(4));
    fc = register_module("fc", nn::Linear(4, 2));
    scale = register_parameter("scale", ember::ones({1}));
    register_buffer("step", ember::zeros({}, ember::TensorOptions().dtype(ember::kLong)));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = ember::relu(bn(conv(x)));
    h = ember::adaptive_avg_pool2d(h, {1, 1}).flatten(1);
    return fc(h) * scale;
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
  Tensor scale;
};
TORCH_MODULE(Net);

std::string print(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

}  // namespace

TEST(NnModule, NamedParametersAreInRegistrationOrderWithDottedNames) {
  Net net;
  std::vector<std::string> expected{"scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "fc.weight",
                                    "fc.bias"};
  EXPECT_EQ(net->named_parameters().keys(), expected);
  EXPECT_EQ(net->parameters().size(), 7u);
  EXPECT_EQ(net->named_parameters(/*recurse=*/false).keys(), std::vector<std::string>{"scale"});
  std::vector<std::string> buffers{"step", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"};
  EXPECT_EQ(net->named_buffers().keys(), buffers);
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  for (const Tensor& b : net->buffers()) EXPECT_FALSE(b.requires_grad());
  // The holder's field and the registered tensor are the same tensor.
  EXPECT_TRUE(net->named_parameters()["fc.weight"].is_same(net->fc->weight));
}

TEST(NnModule, ModulesAndChildren) {
  Net net;
  auto named = net->named_modules();
  EXPECT_EQ(named.keys(), (std::vector<std::string>{"", "conv", "bn", "fc"}));
  EXPECT_EQ(named[""].get(), net.get());
  EXPECT_EQ(net->modules(/*include_self=*/false).size(), 3u);
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"conv", "bn", "fc"}));
  EXPECT_EQ(net->children().size(), 3u);
  EXPECT_NE(net->children()[2]->as<nn::Linear>(), nullptr);
  EXPECT_EQ(net->children()[2]->as<nn::Conv2d>(), nullptr);
  EXPECT_EQ(net->named_modules("model").keys(),
            (std::vector<std::string>{"model", "model.conv", "model.bn", "model.fc"}));
  // A module on the stack cannot hand out a shared_ptr to itself.
  NetImpl on_stack;
  EXPECT_ERROR(on_stack.modules(), "std::make_shared");
  EXPECT_EQ(on_stack.modules(false).size(), 3u);
}

TEST(NnModule, RegistrationErrors) {
  nn::Module m;
  m.register_parameter("w", ember::ones({2}));
  EXPECT_ERROR(m.register_parameter("w", ember::ones({2})), "Parameter 'w' already defined");
  EXPECT_ERROR(m.register_parameter("a.b", ember::ones({2})), "must not contain a dot", "a.b");
  EXPECT_ERROR(m.register_parameter("", ember::ones({2})), "must not be empty");
  m.register_buffer("b", ember::ones({2}));
  EXPECT_ERROR(m.register_buffer("b", ember::ones({2})), "Buffer 'b' already defined");
  EXPECT_ERROR(m.register_buffer("x.y", ember::ones({2})), "must not contain a dot");
  m.register_module("lin", nn::Linear(2, 2));
  EXPECT_ERROR(m.register_module("lin", nn::Linear(2, 2)), "Submodule 'lin' already defined");
  EXPECT_ERROR(m.register_module("l.x", nn::Linear(2, 2)), "must not contain a dot");
  EXPECT_ERROR(m.register_module("empty", nn::Linear(nullptr)), "Accessing empty ModuleHolder");
  EXPECT_ERROR(m.unregister_module("nope"), "No Module with name `nope`");
  m.unregister_module("lin");
  EXPECT_TRUE(m.children().empty());
  // requires_grad = false is kept; undefined parameters (absent bias) are skipped.
  m.register_parameter("frozen", ember::ones({1}), false);
  m.register_parameter("absent", Tensor());
  EXPECT_FALSE(m.named_parameters()["frozen"].requires_grad());
  EXPECT_EQ(m.parameters().size(), 2u);
}

TEST(NnModule, ReplaceModule) {
  Net net;
  net->fc = net->replace_module("fc", nn::Linear(4, 3));
  EXPECT_EQ(net->fc->weight.size(0), 3);
  EXPECT_EQ(net->named_parameters()["fc.weight"].size(0), 3);
  EXPECT_ERROR(net->replace_module("nope", nn::Linear(1, 1)), "Submodule 'nope' is not defined");
}

TEST(NnModule, TrainEvalReachesEveryModule) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training());
  net->train(false);
  EXPECT_FALSE(net->bn->is_training());
}

TEST(NnModule, ToDtypeConvertsFloatingTensorsInPlace) {
  Net net;
  Tensor w = net->fc->weight;  // a handle held elsewhere sees the change
  const Tensor before = w.clone();
  net->to(ember::kDouble);
  EXPECT_EQ(w.dtype(), ember::kDouble);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.allclose(before.to(ember::kDouble)));
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.dtype(), ember::kDouble);
  EXPECT_EQ(net->bn->running_mean.dtype(), ember::kDouble);
  EXPECT_EQ(net->bn->num_batches_tracked.dtype(), ember::kLong);
  {
    ember::NoGradGuard no_grad;
    EXPECT_EQ(net->forward(ember::randn({2, 1, 5, 5}, ember::TensorOptions().dtype(ember::kDouble))).dtype(),
              ember::kDouble);
  }
  net->fc(ember::randn({2, 4}, ember::TensorOptions().dtype(ember::kDouble))).sum().backward();
  EXPECT_EQ(net->fc->weight.grad().dtype(), ember::kDouble);
  net->to(ember::kFloat);  // the gradient follows
  EXPECT_EQ(net->fc->weight.grad().dtype(), ember::kFloat);
  EXPECT_ERROR(net->to(ember::kInt), "floating point");
}

TEST(NnModule, ToMemoryFormat) {
  nn::Sequential seq(nn::Conv2d(3, 4, 3), nn::Linear(2, 2));
  seq->to(ember::MemoryFormat::ChannelsLast);
  const Tensor w = seq->ptr<nn::Conv2dImpl>(0)->weight;
  EXPECT_TRUE(w.is_contiguous(ember::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(w.is_contiguous());
  EXPECT_TRUE(seq->ptr<nn::LinearImpl>(1)->weight.is_contiguous());
}

TEST(NnModule, ZeroGrad) {
  nn::Linear fc(3, 2);
  fc(ember::ones({1, 3})).sum().backward();
  ASSERT_TRUE(fc->weight.grad().defined());
  fc->zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(fc->weight.grad().defined());
  EXPECT_EQ(fc->weight.grad().abs().sum().item<double>(), 0.0);
  fc->zero_grad();
  EXPECT_FALSE(fc->weight.grad().defined());
}

TEST(NnModule, ApplyVisitsInPreOrder) {
  Net net;
  std::vector<std::string> names;
  net->apply([&](const std::string& name, nn::Module&) { names.push_back(name); });
  EXPECT_EQ(names, (std::vector<std::string>{"", "conv", "bn", "fc"}));
  int count = 0;
  net->apply([&](nn::Module& m) {
    if (auto* lin = m.as<nn::Linear>()) nn::init::zeros_(lin->weight);
    ++count;
  });
  EXPECT_EQ(count, 4);
  EXPECT_EQ(net->fc->weight.detach().abs().sum().item<double>(), 0.0);
}

TEST(NnModule, HolderCallsForward) {
  nn::Linear fc(784, 10);
  Tensor x = ember::randn({2, 784});
  EXPECT_TRUE(fc(x).equal(fc->forward(x)));
  EXPECT_EQ(fc(x).sizes(), ember::IntArrayRef({2, 10}));
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_FALSE(static_cast<bool>(empty));
  EXPECT_ERROR(empty->forward(x), "Accessing empty ModuleHolder");
  std::shared_ptr<nn::LinearImpl> p = fc;
  EXPECT_EQ(p.get(), fc.get());
}

// a user module prints as its demangled type name, here inside this file's unity namespace
#define EMBER_STRING(x) #x
#define EMBER_EXPANDED_STRING(x) EMBER_STRING(x)

TEST(NnModule, PrettyPrint) {
  Net net;
  EXPECT_EQ(print(*net),
            EMBER_EXPANDED_STRING(EMBER_UNITY_FILE) "::(anonymous namespace)::NetImpl(\n"
            "  (conv): torch::nn::Conv2d(1, 4, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1])\n"
            "  (bn): torch::nn::BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)\n"
            "  (fc): torch::nn::Linear(in_features=4, out_features=2, bias=true)\n"
            ")");
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::Sequential(nn::Dropout(0.2), nn::Tanh()));
  EXPECT_EQ(print(*seq),
            "torch::nn::Sequential(\n"
            "  (0): torch::nn::Linear(in_features=2, out_features=3, bias=true)\n"
            "  (1): torch::nn::ReLU()\n"
            "  (2): torch::nn::Sequential(\n"
            "    (0): torch::nn::Dropout(p=0.2, inplace=false)\n"
            "    (1): torch::nn::Tanh()\n"
            "  )\n"
            ")");
}

TEST(NnSequential, ChainsAndIndexes) {
  ember::NoGradGuard no_grad;  // forward only (gradients: nn_grad_modules_test)
  nn::Sequential seq(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2));
  ASSERT_EQ(seq->size(), 3u);
  Tensor x = ember::randn({5, 4});
  Tensor expected = seq->ptr<nn::LinearImpl>(2)->forward(ember::relu(seq->ptr<nn::LinearImpl>(0)->forward(x)));
  EXPECT_TRUE(seq->forward(x).allclose(expected));
  EXPECT_TRUE(seq(x).allclose(expected));
  EXPECT_EQ(seq->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_NE(std::dynamic_pointer_cast<nn::ReLUImpl>(seq[1]), nullptr);
  EXPECT_EQ(seq->at<nn::LinearImpl>(2).options.out_features(), 2);
  EXPECT_ERROR(seq->ptr<nn::ReLUImpl>(0), "Attempted to cast");
  EXPECT_ERROR(seq->ptr(3), "Index out of range");
  seq->push_back(nn::Softmax(1));
  seq->push_back("last", nn::Identity());
  EXPECT_EQ(seq->named_children().keys(), (std::vector<std::string>{"0", "1", "2", "3", "last"}));
  EXPECT_NEAR(seq(x).sum().item<double>(), 5.0, 1e-5);
  nn::Sequential empty;
  EXPECT_ERROR(empty->forward(x), "empty Sequential");
  // MultiheadAttention's forward needs query, key and value.
  nn::Sequential holds_mha(nn::MultiheadAttention(4, 2));
  EXPECT_ERROR(holds_mha->forward(x), "forward() method expects at least 3 argument(s) and at most 7 argument(s), but "
                                      "received 1");
}

// Modules of different forward signatures, as libtorch's AnyModule calls them: any argument and
// return types, forward's default arguments left out, a wrong count or type an ember::Error.
struct SplitImpl : nn::Module {
  std::tuple<Tensor, Tensor> forward(const Tensor& x) { return {x, x * 2}; }
};
TORCH_MODULE(Split);
struct JoinImpl : nn::Module {
  Tensor forward(std::tuple<Tensor, Tensor> parts) { return std::get<0>(parts) + std::get<1>(parts); }
};
TORCH_MODULE(Join);
struct ScaleImpl : nn::Module {
  Tensor forward(const Tensor& x, int64_t times = 3, double by = 0.5) { return x * static_cast<double>(times) * by; }
  FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(int64_t{3})}, {2, nn::AnyValue(0.5)})
};
TORCH_MODULE(Scale);
struct CountImpl : nn::Module {
  int64_t forward(const Tensor& x) { return x.numel(); }
};
TORCH_MODULE(Count);

TEST(NnAnyModule, ForwardAnyForwardAndErrors) {
  Tensor x = ember::ones({2, 3});
  nn::AnyModule split(Split{});
  auto [a, b] = split.forward<std::tuple<Tensor, Tensor>>(x);
  EXPECT_TRUE(b.equal(x * 2));
  nn::AnyValue value = split.any_forward(x);
  EXPECT_EQ(value.type_info(), typeid(std::tuple<Tensor, Tensor>));
  EXPECT_EQ(value.try_get<Tensor>(), nullptr);
  EXPECT_ERROR(value.get<Tensor>(), "Attempted to cast AnyValue to ember::Tensor, but its actual type is std::tuple<");
  EXPECT_ERROR(split.forward(x), "Attempted to cast AnyValue to ember::Tensor");
  EXPECT_EQ(nn::AnyModule(Count{}).forward<int64_t>(x), 6);

  nn::AnyModule scale(Scale{});
  EXPECT_TRUE(scale.forward(x).equal(x * 1.5));
  EXPECT_TRUE(scale.forward<>(x, int64_t{4}).equal(x * 2.0));
  EXPECT_TRUE(scale.forward(x, int64_t{4}, 1.0).equal(x * 4.0));
  EXPECT_ERROR(scale.forward(), "ScaleImpl's forward() method expects at least 1 argument(s) and at most 3 argument(s), "
                                "but received 0");
  EXPECT_ERROR(scale.forward(x, 4), "ScaleImpl's forward() method expects argument #1 to be of type long, but received "
                                    "a value of type int");
  EXPECT_ERROR(split.forward(x, x), "SplitImpl's forward() method expects 1 argument(s), but received 2");
  EXPECT_ERROR(split.any_forward(1.0), "expects argument #0 to be of type ember::Tensor, but received a value of type double");

  EXPECT_EQ(&scale.get<ScaleImpl>(), scale.ptr().get());
  EXPECT_EQ(scale.get<Scale>().get(), scale.ptr().get());
  EXPECT_EQ(scale.type_info(), typeid(ScaleImpl));
  EXPECT_ERROR(nn::AnyModule().forward(x), "Cannot call forward() on an empty AnyModule");
  EXPECT_ERROR(nn::AnyModule(std::make_shared<nn::ModuleListImpl>()).forward(x),
               "has no forward() that AnyModule can call");

  // Recurrent modules: an optional state and a nested tuple.
  nn::AnyModule lstm(nn::LSTM(3, 4));
  auto [out, state] = lstm.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(x.unsqueeze(0));
  EXPECT_EQ(out.sizes(), ember::IntArrayRef({1, 2, 4}));
  auto [out2, state2] = lstm.forward<std::tuple<Tensor, std::tuple<Tensor, Tensor>>>(
      x.unsqueeze(0), std::optional<std::tuple<Tensor, Tensor>>(state));
  EXPECT_EQ(std::get<1>(state2).sizes(), ember::IntArrayRef({1, 2, 4}));
}

TEST(NnSequential, ChainsAnyTypes) {
  ember::NoGradGuard no_grad;
  Tensor x = ember::randn({2, 3});
  nn::Sequential seq(nn::Linear(3, 4), Split(), Join(), Scale());
  Tensor h = seq->ptr<nn::LinearImpl>(0)->forward(x);
  EXPECT_TRUE(seq->forward(x).allclose(h * 3 * 1.5));
  EXPECT_TRUE(seq->forward<Tensor>(x).allclose(h * 3 * 1.5));
  EXPECT_TRUE(seq(x).allclose(h * 3 * 1.5));
  // The first module takes all the inputs; the return type is the last one's.
  nn::Sequential first_scale(Scale{}, Split{});
  auto [a, b] = first_scale->forward<std::tuple<Tensor, Tensor>>(x, int64_t{2}, 1.0);
  EXPECT_TRUE(b.equal(x * 4));
  EXPECT_ERROR(first_scale->forward(x), "The type of the return value is std::tuple<ember::Tensor, ember::Tensor>, but "
                                        "you asked for type ember::Tensor");
  EXPECT_ERROR(nn::Sequential(nn::ReLU(), Join())->forward(x),
               "JoinImpl's forward() method expects argument #0 to be of type std::tuple<");
  nn::Sequential count(nn::ReLU{}, Count{});
  EXPECT_EQ(count->forward<int64_t>(x), 6);
  // A Sequential in a Sequential is called with one Tensor (its forward is a template).
  nn::Sequential nested(nn::Linear(3, 3), nn::Sequential(nn::ReLU(), Split(), Join()));
  EXPECT_EQ(nested->forward(x).sizes(), ember::IntArrayRef({2, 3}));
  // MultiheadAttention: three inputs, defaults for the rest, a tuple out.
  nn::Sequential attention(nn::MultiheadAttention(3, 1));
  Tensor q = ember::randn({2, 1, 3});
  auto [attended, weights] = attention->forward<std::tuple<Tensor, Tensor>>(q, q, q);
  EXPECT_EQ(weights.sizes(), ember::IntArrayRef({1, 2, 2}));
}

TEST(NnSequential, Named) {
  ember::NoGradGuard no_grad;
  nn::Sequential seq({{"conv", nn::Conv2d(1, 2, 3)}, {"act", nn::ReLU()}, {"flat", nn::Flatten()}});
  EXPECT_EQ(seq->named_children().keys(), (std::vector<std::string>{"conv", "act", "flat"}));
  EXPECT_EQ(seq(ember::randn({2, 1, 5, 5})).sizes(), ember::IntArrayRef({2, 18}));
  EXPECT_ERROR(nn::Sequential({{"a", nn::ReLU()}, {"a", nn::ReLU()}}), "Submodule 'a' already defined");
}

TEST(NnModuleList, PushInsertIndex) {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  list->push_back(nn::Linear(3, 1));
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->ptr<nn::LinearImpl>(2)->options.in_features(), 3);
  list->insert(1, nn::Tanh());
  EXPECT_NE(list->ptr<nn::TanhImpl>(1), nullptr);
  EXPECT_EQ(list->named_children().keys(), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(list->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias"}));
  EXPECT_ERROR(list->ptr(9), "Index out of range");
  EXPECT_ERROR(list->ptr<nn::LinearImpl>(1), "Unable to cast");
  Tensor x = ember::randn({1, 2});
  for (const auto& m : *list) {
    if (auto* lin = m->as<nn::Linear>()) x = lin->forward(x);
  }
  EXPECT_EQ(x.sizes(), ember::IntArrayRef({1, 1}));
  EXPECT_EQ(print(*list).substr(0, 23), "torch::nn::ModuleList(\n");
}

TEST(NnModuleDict, InsertReplacePop) {
  std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> entries{{"a", nn::Linear(1, 2).ptr()},
                                                                           {"b", nn::ReLU().ptr()}};
  nn::ModuleDict dict(entries);
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(dict->contains("a"));
  dict->insert("a", nn::Linear(1, 5));  // replaces, keeping the position
  EXPECT_EQ(dict->at<nn::LinearImpl>("a").options.out_features(), 5);
  EXPECT_EQ(dict->named_children().keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(dict->named_parameters()["a.weight"].size(0), 5);
  const auto items = dict->items();  // (name, module) pairs, as libtorch's
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].first, "b");
  EXPECT_EQ(items[0].second->as<nn::LinearImpl>()->options.out_features(), 5);
  auto b = dict->pop("b");
  EXPECT_NE(b->as<nn::ReLU>(), nullptr);
  EXPECT_EQ(dict->size(), 1u);
  EXPECT_ERROR((*dict)["b"], "Module 'b' is not defined");
  EXPECT_ERROR(dict->pop("b"), "Module 'b' is not defined");
  dict->clear();
  EXPECT_TRUE(dict->is_empty());
  EXPECT_TRUE(dict->children().empty());
}

TEST(NnOptions, BuildersChain) {
  auto o = nn::Conv2dOptions(1, 10, 5).stride(2).padding({1, 2}).bias(false);
  EXPECT_EQ(o.kernel_size()[1], 5);
  EXPECT_EQ(o.kernel_size()->at(0), 5);  // libtorch's ExpandingArray is also a pointer to its std::array
  EXPECT_EQ(o.stride()[0], 2);
  EXPECT_EQ(std::get<ember::ExpandingArray<2>>(o.padding())[1], 2);  // a variant, as libtorch's (or kSame, kValid)
  EXPECT_FALSE(o.bias());
  nn::Linear fc(nn::LinearOptions(4, 5).bias(false));
  EXPECT_FALSE(fc->bias.defined());
  EXPECT_EQ(fc->parameters().size(), 1u);
  EXPECT_ERROR(nn::Conv2dOptions(1, 2, std::vector<int64_t>{1, 2, 3}), "Expected 2 values");
  EXPECT_ERROR(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), "in_channels must be divisible by groups");
  EXPECT_ERROR(nn::Dropout(1.5), "dropout probability has to be between 0 and 1, but got 1.5");
  EXPECT_ERROR(nn::GroupNorm(4, 6), "num_channels must be divisible by num_groups");
  EXPECT_ERROR(nn::MultiheadAttention(6, 4), "embed_dim must be divisible by num_heads");
  EXPECT_ERROR(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), "Padding_idx must be within num_embeddings");
}

TEST(NnUtils, ClipGradNorm) {
  Tensor a = ember::zeros({2}).requires_grad_(), b = ember::zeros({2}).requires_grad_();
  a.mutable_grad() = ember::tensor({3.f, 0.f});
  b.mutable_grad() = ember::tensor({0.f, 4.f});
  // Joint 2-norm 5, clipped to 1: every gradient scaled by 1 / 5.
  EXPECT_NEAR(nn::utils::clip_grad_norm_({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_TRUE(a.grad().allclose(ember::tensor({0.6f, 0.f}), 1e-5, 1e-6));
  EXPECT_TRUE(b.grad().allclose(ember::tensor({0.f, 0.8f}), 1e-5, 1e-6));
  // Under the limit nothing changes; the returned norm is the one before clipping.
  EXPECT_NEAR(nn::utils::clip_grad_norm_({a, b}, 10.0), 1.0, 1e-5);
  EXPECT_TRUE(a.grad().allclose(ember::tensor({0.6f, 0.f}), 1e-5, 1e-6));
  b.mutable_grad() = ember::tensor({0.f, -2.f});
  EXPECT_NEAR(nn::utils::clip_grad_norm_({a, b}, 1.0, INFINITY), 2.0, 1e-6);
  EXPECT_TRUE(b.grad().allclose(ember::tensor({0.f, -1.f}), 1e-5, 1e-6));  // scaled by 1 / 2
  EXPECT_NEAR(nn::utils::clip_grad_norm_(a, 100.0, 1.0), 0.3, 1e-6);
  b.mutable_grad() = ember::tensor({NAN, 1.f});
  EXPECT_ERROR(nn::utils::clip_grad_norm_({a, b}, 1.0, 2.0, true), "clip_grad_norm_", "non-finite");
  Tensor no_grad = ember::zeros({2}).requires_grad_();
  EXPECT_EQ(nn::utils::clip_grad_norm_(no_grad, 1.0), 0.0);
}

TEST(NnUtils, ClipGradValueAndVectors) {
  Tensor a = ember::zeros({3}).requires_grad_();
  a.mutable_grad() = ember::tensor({-2.f, 0.5f, 3.f});
  nn::utils::clip_grad_value_(a, 1.0);
  EXPECT_TRUE(a.grad().equal(ember::tensor({-1.f, 0.5f, 1.f})));
  ember::NoGradGuard no_grad;  // cat's derivative is pending
  nn::Linear fc(2, 3);
  Tensor v = nn::utils::parameters_to_vector(fc->parameters());
  EXPECT_EQ(v.numel(), 9);
  nn::utils::vector_to_parameters(ember::arange(9, ember::TensorOptions().dtype(ember::kFloat)), fc->parameters());
  EXPECT_TRUE(fc->bias.detach().equal(ember::tensor({6.f, 7.f, 8.f})));
  EXPECT_ERROR(nn::utils::vector_to_parameters(ember::zeros({4}), fc->parameters()), "vector_to_parameters",
               "4 elements");
}

TEST(NnOptions, DropoutFuncOptionsAndModule) {
  namespace F = torch::nn::functional;
  Tensor x = ember::ones({1000});
  EXPECT_TRUE(F::dropout(x, F::DropoutFuncOptions().p(0.3).training(false)).equal(x));
  Tensor y = F::dropout(x, F::DropoutFuncOptions().p(0.5));
  const double kept = (y > 0).sum().item<double>();
  EXPECT_NEAR(kept, 500, 80);
  EXPECT_NEAR(y.max().item<double>(), 2.0, 1e-6);
  EXPECT_ERROR(F::dropout(x, F::DropoutFuncOptions().p(-0.1)), "dropout probability has to be between 0 and 1");
  nn::Dropout d(0.5);
  d->eval();
  EXPECT_TRUE(d(x).equal(x));
}

#undef EMBER_STRING
#undef EMBER_EXPANDED_STRING

}  // namespace EMBER_UNITY_FILE
