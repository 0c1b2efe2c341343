// nn::utils::parametrize and the built-in parametrizations: what module->weight reads, chains,
// right_inverse, cached(), state dict keys and round trips, optimizers stepping the original,
// gradients through the parametrizations (gradcheck) and bad input.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/ember.h"
#include "ember/torch.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace nn = ember::nn;
namespace P = ember::nn::utils::parametrize;
namespace PS = ember::nn::utils::parametrizations;
using ember::Tensor;
using ember::autograd::variable_list;

namespace {

struct Symmetric : nn::Module {
  Tensor forward(const Tensor& X) { return X.triu() + X.triu(1).mT(); }
};

// Symmetric with a right_inverse: the upper triangle holds the matrix.
struct SymmetricInv : nn::Module {
  Tensor forward(const Tensor& X) { return X.triu() + X.triu(1).mT(); }
  Tensor right_inverse(const Tensor& A) { return A.triu(); }
};

struct Scale : nn::Module {
  explicit Scale(double s) : s(s) {}
  Tensor forward(const Tensor& X) { return X * s; }
  Tensor right_inverse(const Tensor& Y) { return Y / s; }
  double s;
};

struct WrongShapeInverse : nn::Module {
  Tensor forward(const Tensor& X) { return X; }
  Tensor right_inverse(const Tensor& Y) { return Y.flatten(); }
};

struct WrongDtypeInverse : nn::Module {
  Tensor forward(const Tensor& X) { return X.to(ember::kFloat); }
  Tensor right_inverse(const Tensor& Y) { return Y.to(ember::kDouble); }
};

struct Flatten : nn::Module {
  Tensor forward(const Tensor& X) { return X.flatten(); }
};

Tensor symmetric(const Tensor& X) { return X.triu() + X.triu(1).mT(); }

std::vector<std::string> keys(const ember::OrderedDict<std::string, Tensor>& d) { return d.keys(); }

TEST(Parametrize, TheModuleReadsTheParametrizedTensor) {
  ember::manual_seed(0);
  nn::Linear linear(4, 4);
  const Tensor before = linear->weight.detach().clone();
  const Tensor member = linear->weight;  // the member's TensorImpl stays the module's tensor
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  EXPECT_TRUE(P::is_parametrized(linear));
  EXPECT_TRUE(P::is_parametrized(linear, "weight"));
  EXPECT_FALSE(P::is_parametrized(linear, "bias"));
  EXPECT_TRUE(linear->weight.is_same(member));
  const Tensor original = linear->parametrizations["weight"]->original;
  EXPECT_TRUE(original.is_leaf());
  EXPECT_TRUE(original.requires_grad());
  EXPECT_TRUE(original.equal(before));  // no right_inverse: the original is the old weight
  EXPECT_TRUE(linear->weight.equal(symmetric(before)));
  EXPECT_FALSE(linear->weight.is_leaf());
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "parametrizations.weight.original"}));
  const Tensor x = ember::randn({3, 4});
  EXPECT_TRUE(linear(x).allclose(x.matmul(symmetric(before).t()) + linear->bias));
  EXPECT_TRUE(linear->forward(x).allclose(linear(x)));
}

TEST(Parametrize, GradientsReachTheOriginalAndOptimizersStepIt) {
  ember::manual_seed(1);
  nn::Linear linear(5, 5);
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  const Tensor original = linear->parametrizations["weight"]->original;
  ember::optim::SGD opt(linear->parameters(), ember::optim::SGDOptions(0.1));
  const Tensor x = ember::randn({8, 5});
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    const Tensor expected_w = symmetric(original.detach()).requires_grad_();
    linear(x).pow(2).sum().backward();
    // The same loss through an explicitly parametrized weight.
    const Tensor ref = (x.matmul(symmetric(original).t()) + linear->bias).pow(2).sum();
    const Tensor g = ember::autograd::grad({ref}, {original})[0];
    EXPECT_TRUE(original.grad().allclose(g, 1e-5, 1e-5)) << "step " << step;
    EXPECT_TRUE(linear->weight.equal(expected_w.detach()));
    const Tensor before = original.detach().clone();
    opt.step();
    EXPECT_FALSE(original.equal(before));
    EXPECT_TRUE(linear->weight.allclose(symmetric(original.detach())));  // recomputed after the step
  }
}

TEST(Parametrize, GraphsAreFreshAcrossBackwardsAndSharedWithinOne) {
  ember::manual_seed(2);
  nn::Linear linear(3, 3);
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  const Tensor original = linear->parametrizations["weight"]->original;
  const Tensor x = ember::randn({2, 3});
  linear(x).sum().backward();
  const Tensor g1 = original.grad().clone();
  linear(x).sum().backward();  // gradient accumulation: a second graph
  EXPECT_TRUE(original.grad().allclose(g1 * 2));
  original.mutable_grad().reset();
  (linear(x).sum() + linear(x * 2).sum()).backward();  // two calls, one backward
  EXPECT_TRUE(original.grad().allclose(g1 * 3, 1e-5, 1e-5));
  {
    ember::NoGradGuard no_grad;
    EXPECT_FALSE(linear(x).requires_grad());
  }
  EXPECT_TRUE(linear(x).requires_grad());
}

TEST(Parametrize, RightInverseAssignsThroughTheParametrization) {
  nn::Linear linear(3, 3);
  P::register_parametrization(linear, "weight", std::make_shared<SymmetricInv>());
  const auto list = linear->parametrizations["weight"];
  const Tensor original = list->original;
  EXPECT_TRUE(original.equal(original.triu()));  // registered through right_inverse
  const Tensor A = symmetric(ember::randn({3, 3}));
  list->right_inverse(A);
  EXPECT_TRUE(list->original.is_same(original));  // set in place: optimizers keep tracking it
  EXPECT_TRUE(original.equal(A.triu()));
  EXPECT_TRUE(linear->weight.allclose(A));
}

TEST(Parametrize, ChainsApplyInOrder) {
  ember::manual_seed(3);
  nn::Linear linear(3, 3);
  const Tensor w = linear->weight.detach().clone();
  P::register_parametrization(linear, "weight", std::make_shared<Scale>(2.0));
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  const auto list = linear->parametrizations["weight"];
  EXPECT_EQ(linear->parametrizations.keys(), std::vector<std::string>{"weight"});
  EXPECT_EQ(list->size(), 2u);
  EXPECT_TRUE((*list)[1].module->as<Symmetric>());
  EXPECT_ERROR((*list)[2], "index 2 out of range for 2 parametrizations");
  EXPECT_TRUE(list->original.allclose(w / 2));
  EXPECT_TRUE(linear->weight.allclose(symmetric(w)));
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "parametrizations.weight.original"}));
  // Assigning needs every right_inverse; Symmetric has none.
  EXPECT_ERROR(list->right_inverse(w), "Symmetric", "does not implement right_inverse");
  std::ostringstream printed;
  printed << *linear;
  EXPECT_NE(printed.str().find("(parametrizations): ModuleDict"), std::string::npos) << printed.str();
}

TEST(Parametrize, CachedComputesOncePerScope) {
  nn::Linear linear(3, 3);
  P::register_parametrization(linear, "weight", std::make_shared<Scale>(3.0));
  Tensor original = linear->parametrizations["weight"]->original;
  {
    P::cached scope;
    const Tensor first = linear->weight.detach().clone();
    {
      ember::NoGradGuard no_grad;
      original.add_(1.0);
    }
    EXPECT_TRUE(linear->weight.equal(first));  // not recomputed inside the scope
  }
  EXPECT_TRUE(linear->weight.allclose(original.detach() * 3));
}

TEST(Parametrize, StateDictKeysAndRoundTrips) {
  ember::manual_seed(4);
  nn::Linear a(4, 3);
  PS::weight_norm(a);
  EXPECT_EQ(keys(a->named_parameters()), (std::vector<std::string>{"bias", "parametrizations.weight.original0",
                                                                  "parametrizations.weight.original1"}));
  nn::Conv2d c(nn::Conv2dOptions(2, 3, 3));
  PS::spectral_norm(c);
  EXPECT_EQ(keys(c->named_buffers()),
            (std::vector<std::string>{"parametrizations.weight.0._u", "parametrizations.weight.0._v"}));
  nn::Linear o(4, 4);
  PS::orthogonal(o);
  EXPECT_EQ(keys(o->named_buffers()), (std::vector<std::string>{"parametrizations.weight.0.base"}));

  // torch::save / torch::load into a module parametrized the same way, both in eval mode before
  // the load: `c2->eval()` after it would refresh c2's stale weight in training mode through
  // operator->, one power iteration PyTorch does not run (docs/nn.md, parametrizations).
  std::stringstream stream;
  c->eval();
  torch::save(c, stream);
  nn::Conv2d c2(nn::Conv2dOptions(2, 3, 3));
  PS::spectral_norm(c2);
  c2->eval();
  torch::load(c2, stream);
  const Tensor x = ember::randn({1, 2, 5, 5});
  EXPECT_TRUE(c(x).allclose(c2(x)));
  // A state dict loaded by name.
  nn::Linear o2(4, 4);
  PS::orthogonal(o2);
  ember::load_state_dict(o2, ember::detail::named_tensors(o));
  EXPECT_TRUE(o2->weight.allclose(o->weight));
}

TEST(Parametrize, ToCastsTheOriginalAndTheValueFollows) {
  nn::Linear linear(3, 3);
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  linear->to(ember::kDouble);
  EXPECT_EQ(linear->parametrizations["weight"]->original.dtype(), ember::kDouble);
  EXPECT_EQ(linear->weight.dtype(), ember::kDouble);
  EXPECT_EQ(linear(ember::randn({2, 3}, ember::kDouble)).dtype(), ember::kDouble);
}

TEST(Parametrize, RemoveLeavesAParameter) {
  ember::manual_seed(5);
  nn::Linear linear(3, 3);
  const Tensor w = linear->weight.detach().clone();
  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  P::remove_parametrizations(linear, "weight");
  EXPECT_FALSE(P::is_parametrized(linear));
  EXPECT_TRUE(linear->weight.is_leaf());
  EXPECT_TRUE(linear->weight.requires_grad());
  EXPECT_TRUE(linear->weight.equal(symmetric(w)));
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_TRUE(linear->named_parameters()["weight"].is_same(linear->weight));
  EXPECT_TRUE(linear->named_children().is_empty());

  P::register_parametrization(linear, "weight", std::make_shared<Symmetric>());
  P::remove_parametrizations(linear, "weight", /*leave_parametrized=*/false);
  EXPECT_TRUE(linear->weight.equal(symmetric(w)));  // the original (the value it had when registered)

  PS::weight_norm(linear);
  EXPECT_ERROR(P::remove_parametrizations(linear, "weight", false), "Linear", "weight",
               "sequence of tensors");
  P::remove_parametrizations(linear, "weight");
  EXPECT_TRUE(linear->weight.allclose(symmetric(w)));
}

TEST(Parametrize, BuffersCanBeParametrized) {
  nn::BatchNorm1d bn(3);
  P::register_parametrization(bn, "running_var", std::make_shared<Scale>(2.0));
  EXPECT_TRUE(bn->named_buffers().contains("parametrizations.running_var.original"));
  EXPECT_FALSE(bn->named_parameters().contains("parametrizations.running_var.original"));
  EXPECT_TRUE(bn->running_var.allclose(ember::ones({3})));
}

TEST(Parametrize, ModulesReachedThroughAHolderAreRefreshed) {
  nn::Sequential seq(nn::Linear(3, 3), nn::ReLU());
  auto linear = seq->ptr<nn::LinearImpl>(0);
  P::register_parametrization(*linear, "weight", std::make_shared<Scale>(2.0));
  Tensor original = linear->parametrizations["weight"]->original;
  {
    ember::NoGradGuard no_grad;
    original.fill_(1.0);
  }
  const Tensor x = ember::ones({1, 3});
  EXPECT_TRUE(seq(x).allclose((ember::full({1, 3}, 6.0) + linear->bias.detach()).relu()));
}

// A parametrization reaching its own module through the holder (which refreshes) does not recurse.
struct ReadsItsModule : nn::Module {
  explicit ReadsItsModule(nn::Linear host) : host(std::move(host)) {}
  Tensor forward(const Tensor& X) { return X + host->bias.detach().sum(); }
  nn::Linear host;
};

TEST(Parametrize, AParametrizationMayReadItsModule) {
  nn::Linear linear(2, 2);
  P::register_parametrization(linear, "weight", std::make_shared<ReadsItsModule>(linear));
  const Tensor original = linear->parametrizations["weight"]->original;
  EXPECT_TRUE(linear->weight.allclose(original.detach() + linear->bias.detach().sum()));
  // Breaks the ownership cycle (module -> parametrization -> module).
  linear->parametrizations["weight"]->named_children()["0"]->as<ReadsItsModule>()->host = nn::Linear(nullptr);
}

// ---- built-ins ----------------------------------------------------------------------------------

TEST(Parametrizations, WeightNormSplitsMagnitudeAndDirection) {
  ember::manual_seed(6);
  nn::Linear linear(4, 3);
  const Tensor w = linear->weight.detach().clone();
  PS::weight_norm(linear);
  const auto list = linear->parametrizations["weight"];
  ASSERT_EQ(list->originals.size(), 2u);
  EXPECT_FALSE(list->original.defined());
  EXPECT_TRUE(list->originals[0].allclose(w.norm(2, {1}, true)));
  EXPECT_EQ(list->originals[0].sizes(), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(list->originals[1].equal(w));
  EXPECT_TRUE(linear->weight.allclose(w, 1e-6, 1e-6));
  // dim = nullopt: one norm over the whole tensor.
  nn::Linear whole(4, 3);
  PS::weight_norm(whole, "weight", std::nullopt);
  EXPECT_EQ(whole->parametrizations["weight"]->originals[0].dim(), 0);
}

TEST(Parametrizations, SpectralNormPowerIteratesInTrainingOnly) {
  ember::manual_seed(7);
  nn::Linear linear(6, 5);
  PS::spectral_norm(linear);
  auto* sn = linear->parametrizations["weight"]->named_children()["0"]->as<PS::SpectralNormImpl>();
  ASSERT_NE(sn, nullptr);
  Tensor original = linear->parametrizations["weight"]->original;
  const Tensor sigma = ember::linalg_svdvals(original.detach())[0];
  EXPECT_NEAR(ember::linalg_svdvals(linear->weight.detach())[0].item<double>(), 1.0, 1e-3);
  EXPECT_TRUE(linear->weight.allclose(original.detach() / sigma, 1e-3, 1e-4));
  const Tensor x = ember::randn({2, 6});
  linear->eval();
  const Tensor u = sn->_u.clone();
  linear(x);
  {
    ember::NoGradGuard no_grad;
    original.mul_(1.5);
  }
  linear(x);
  EXPECT_TRUE(sn->_u.equal(u));  // eval: no power iteration
  linear->train();
  linear(x).sum().backward();
  EXPECT_TRUE(original.grad().defined());
  // ConvTranspose normalizes along dim 1 by default (its _u has in_channels... the out dim).
  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(2, 5, 3));
  PS::spectral_norm(ct);
  EXPECT_EQ(ct->named_buffers()["parametrizations.weight.0._u"].size(0), 5);
}

TEST(Parametrizations, OrthogonalMapsGiveOrthogonalMatrices) {
  ember::manual_seed(8);
  for (const char* map : {"matrix_exp", "cayley", "householder"}) {
    for (bool triv : {true, false}) {
      for (auto shape : {std::vector<int64_t>{4, 4}, std::vector<int64_t>{6, 3}, std::vector<int64_t>{3, 6}}) {
        nn::Linear linear(shape[1], shape[0]);
        linear->to(ember::kDouble);
        PS::orthogonal(linear, "weight", std::string(map), triv);
        const Tensor q = linear->weight.detach();
        const Tensor gram = shape[0] >= shape[1] ? q.t().matmul(q) : q.matmul(q.t());
        EXPECT_TRUE(gram.allclose(ember::eye(std::min(shape[0], shape[1]), ember::kDouble), 1e-7, 1e-9))
            << map << " trivialization " << triv << " " << shape[0] << "x" << shape[1];
        if (triv || std::string(map) == "householder") {
          // Assigning an orthogonal matrix gives it back.
          const Tensor target = linear->weight.detach().clone().flip({0});
          linear->parametrizations["weight"]->right_inverse(target);
          EXPECT_TRUE(linear->weight.allclose(target, 1e-7, 1e-9)) << map << " " << triv;
        }
      }
    }
  }
}

TEST(Parametrizations, GradcheckThroughEachParametrization) {
  ember::manual_seed(9);
  const auto opts = ember::TensorOptions().dtype(ember::kDouble);
  auto check = [&](const std::function<Tensor(const variable_list&)>& fn, const Tensor& in, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(ember::autograd::gradcheck(fn, {in.detach().requires_grad_()}));
  };
  const Tensor w = ember::randn({4, 3}, opts);
  PS::WeightNormImpl wn(0);
  const Tensor g = w.norm(2, {1}, true);
  EXPECT_TRUE(ember::autograd::gradcheck([&](const variable_list& in) { return wn.forward({in[0], in[1]}); },
                                         {g.requires_grad_(), w.clone().requires_grad_()}));
  PS::SpectralNormImpl sn(w, 1, 0);
  sn.eval();
  check([&](const variable_list& in) { return sn.forward(in[0]); }, w, "spectral_norm");
  for (auto map : {PS::OrthogonalImpl::Map::matrix_exp, PS::OrthogonalImpl::Map::cayley,
                   PS::OrthogonalImpl::Map::householder}) {
    PS::OrthogonalImpl orth(w, map, /*use_trivialization=*/false);
    check([&](const variable_list& in) { return orth.forward(in[0]); }, w * 0.3, "orthogonal");
  }
  // Second derivatives through the matrix exponential map (the bench case's).
  PS::OrthogonalImpl orth(w.narrow(1, 0, 3).narrow(0, 0, 3), PS::OrthogonalImpl::Map::matrix_exp, false);
  EXPECT_TRUE(ember::autograd::gradgradcheck([&](const variable_list& in) { return orth.forward(in[0]); },
                                             {(ember::randn({3, 3}, opts) * 0.3).requires_grad_()}));
  // Through a module: its input's gradient with a parametrized weight.
  nn::Linear linear(3, 4);
  linear->to(ember::kDouble);
  PS::orthogonal(linear, "weight", std::string("cayley"));
  check([&](const variable_list& in) { return linear(in[0]); }, ember::randn({2, 3}, opts), "module");
}

TEST(ClassicHooks, WeightNormAndSpectralNormUnderTheirClassicNames) {
  ember::manual_seed(10);
  nn::Linear linear(4, 3);
  const Tensor w = linear->weight.detach().clone();
  nn::utils::weight_norm(linear);
  EXPECT_FALSE(P::is_parametrized(linear));  // as PyTorch: a hook, not a parametrization
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "weight_g", "weight_v"}));
  EXPECT_TRUE(linear->named_parameters()["weight_g"].allclose(w.norm(2, {1}, true)));
  EXPECT_TRUE(linear->weight.allclose(w, 1e-6, 1e-6));
  const Tensor x = ember::randn({2, 4});
  linear(x).sum().backward();
  EXPECT_TRUE(linear->named_parameters()["weight_v"].grad().defined());
  {
    ember::NoGradGuard no_grad;
    linear->named_parameters()["weight_g"].mul_(2.0);
  }
  EXPECT_TRUE(linear->weight.allclose(w * 2, 1e-6, 1e-6));
  EXPECT_ERROR(nn::utils::weight_norm(linear), "Cannot register two weight_norm hooks on the same parameter weight");
  nn::utils::remove_weight_norm(linear);
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_TRUE(linear->weight.is_leaf());
  EXPECT_TRUE(linear->weight.allclose(w * 2, 1e-6, 1e-6));
  EXPECT_ERROR(nn::utils::remove_weight_norm(linear), "weight_norm of 'weight' not found in");

  nn::utils::spectral_norm(linear);
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "weight_orig"}));
  EXPECT_EQ(keys(linear->named_buffers()), (std::vector<std::string>{"weight_u", "weight_v"}));
  linear->eval();
  const Tensor u = linear->named_buffers()["weight_u"], v = linear->named_buffers()["weight_v"];
  const Tensor orig = linear->named_parameters()["weight_orig"].detach();
  EXPECT_TRUE(linear->weight.allclose(orig / u.dot(orig.mv(v))));
  nn::utils::remove_spectral_norm(linear);
  EXPECT_EQ(keys(linear->named_parameters()), (std::vector<std::string>{"bias", "weight"}));
  EXPECT_TRUE(linear->named_buffers().is_empty());
  EXPECT_ERROR(nn::utils::spectral_norm(linear, "bias", 0), "n_power_iterations to be positive");
  EXPECT_ERROR(nn::utils::spectral_norm(linear, "scale"), "has no parameter 'scale'");
}

TEST(ParametrizeErrors, BadInputNamesModuleTensorAndShapes) {
  nn::Linear linear(3, 4);
  EXPECT_ERROR(P::register_parametrization(linear, "weigth", std::make_shared<Symmetric>()), "Linear", "weigth",
               "does not have a parameter, a buffer");
  nn::Linear nobias(nn::LinearOptions(3, 4).bias(false));
  EXPECT_ERROR(P::register_parametrization(nobias, "bias", std::make_shared<Symmetric>()), "bias");
  EXPECT_ERROR(P::register_parametrization(linear, "weight", std::make_shared<Flatten>()), "LinearImpl.weight",
               "may not change the shape", "[4, 3]", "[12]");
  EXPECT_ERROR(P::remove_parametrizations(linear, "weight"), "Linear", "does not have a parametrization on 'weight'");
  EXPECT_FALSE(P::is_parametrized(linear));
  EXPECT_TRUE(linear->named_parameters().contains("weight"));  // a failed registration changes nothing

  P::register_parametrization(linear, "weight", std::make_shared<WrongShapeInverse>(), /*unsafe=*/true);
  EXPECT_ERROR(linear->parametrizations["weight"]->right_inverse(ember::zeros({2, 3})), "LinearImpl.weight",
               "right_inverse returned", "[6]", "[12]");
  EXPECT_ERROR(linear->parametrizations["weight"]->right_inverse(ember::zeros({4, 3}, ember::kDouble)),
               "LinearImpl.weight", "Double");
  EXPECT_ERROR(linear->parametrizations["bias"], "no parametrization on 'bias'");

  nn::Linear l2(3, 4);
  EXPECT_ERROR(P::register_parametrization(l2, "weight", std::make_shared<WrongShapeInverse>()), "LinearImpl.weight",
               "may not change the shape", "[4, 3]", "[12]");
  EXPECT_ERROR(P::register_parametrization(l2, "weight", std::make_shared<WrongDtypeInverse>()), "LinearImpl.weight",
               "may not change the dtype", "Float [4, 3]", "Double [4, 3]");
  EXPECT_ERROR(PS::orthogonal(l2, "bias"), "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions");
  EXPECT_ERROR(PS::orthogonal(l2, "weight", std::string("qr")), "orthogonal_map has to be one of", "Got: qr");
  EXPECT_ERROR(PS::spectral_norm(l2, "weight", 1, 1e-12, 2), "Dimension out of range", "[-2, 1]", "got 2");
  EXPECT_ERROR(PS::spectral_norm(l2, "weight", 0), "n_power_iterations to be positive");
  PS::orthogonal(l2, "weight", std::string("matrix_exp"), /*use_trivialization=*/false);
  EXPECT_ERROR(l2->parametrizations["weight"]->right_inverse(ember::zeros({4, 3})),
               "not possible to assign to the matrix exponential");
  EXPECT_ERROR(l2->parametrizations["weight"]->right_inverse(ember::zeros({3, 3})),
               "Expected a matrix or batch of matrices of shape [4, 3]", "[3, 3]");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
