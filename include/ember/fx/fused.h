// The fused pointwise engine behind fx::fuse_pointwise (issue 16): a chain of pointwise ops,
// described as a graph describes it (ops by their PyTorch names, arguments in libtorch's order),
// compiled once and run as one pass over memory per block of the output, with no intermediate
// tensor allocated. See docs/fx_fusion.md.
//
//   // y = sigmoid(x * a + b) * tanh(x) + relu(c); inputs x, a, b, c are values 0..3
//   fx::FusedPointwise chain(4, {{"mul", {R(0), R(1)}},             // value 4
//                                {"add", {R(4), R(2), S(1)}},       // value 5 (alpha 1)
//                                {"sigmoid", {R(5)}},               // 6
//                                {"tanh", {R(0)}},                  // 7
//                                {"mul", {R(6), R(7)}},             // 8
//                                {"relu", {R(3)}},                  // 9
//                                {"add", {R(8), R(9)}}},            // 10
//                            {10});
//   Tensor y = chain({x, a, b, c})[0];
//   (R = FusedArg::ref, S = FusedArg::scalar)
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/pimpl.h"
#include "ember/tensor.h"

namespace ember::fx {

// One argument of a step: a reference to a value (an input 0..num_inputs-1, or the result of step
// k as num_inputs + k), or a constant as libtorch's signature of the op orders them: a Scalar
// (add's alpha, clamp's min, a Scalar operand such as mul(x, 2)'s 2), a ScalarType (to's dtype), a
// bool (to's non_blocking and copy), a string (gelu's approximate, div's rounding_mode) or none
// (an absent optional: clamp's max, to's memory_format).
struct FusedArg {
  struct Ref {
    int index;
    bool operator==(const Ref&) const = default;
  };
  std::variant<std::monostate, Ref, Scalar, ScalarType, bool, std::string> value;

  static FusedArg ref(int index) { return {Ref{index}}; }
  static FusedArg scalar(const Scalar& s) { return {s}; }
  static FusedArg dtype(ScalarType t) { return {t}; }
  static FusedArg flag(bool b) { return {b}; }
  static FusedArg str(std::string s) { return {std::move(s)}; }
  static FusedArg none() { return {}; }

  bool is_ref() const { return std::holds_alternative<Ref>(value); }
  bool is_scalar() const { return std::holds_alternative<Scalar>(value); }
  bool is_none() const { return std::holds_alternative<std::monostate>(value); }
};

struct FusedStep {
  std::string op;  // PyTorch's name: "add", "mul", "sigmoid", "relu", "where", "clamp", "to", ...
  std::vector<FusedArg> args;
};

// Whether the engine supports `op` (a call_function target's name).
bool fusable(std::string_view op);
// The ops it supports, sorted.
std::vector<std::string> fusable_ops();

// A compiled chain. Copies share the compiled form; running is thread-safe.
class FusedPointwise {
 public:
  // Validates every step (known op, argument count and kinds, references to inputs or earlier
  // steps only) and the outputs (references to values); raises ember::Error naming the step.
  FusedPointwise(int num_inputs, std::vector<FusedStep> steps, std::vector<int> outputs);

  // Runs the chain on `inputs` (num_inputs tensors; broadcasting and promotion as the eager ops).
  // Float chains (float32, bfloat16, float16 computed in float32; float64 in float64) run fused;
  // anything else runs the ops one by one. Differentiable: the backward recomputes the chain.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  // Whether a call with these inputs runs the fused kernel (the dtypes, shapes and operand count
  // it covers, outside autocast) rather than the ops one by one.
  bool fuses(const std::vector<Tensor>& inputs) const;
  // The same chain, op by op through Ember's eager ops (what the fused run must equal).
  std::vector<Tensor> run_eager(const std::vector<Tensor>& inputs) const;

  int num_inputs() const;
  const std::vector<FusedStep>& steps() const;
  const std::vector<int>& outputs() const;
  // One line per step, as FX's generated code: "%4 = mul(%0, %1)".
  std::string str() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

// The engine as a module, the target of the call_module node fx::fuse_pointwise inserts.
class FusedPointwiseModuleImpl : public nn::Module {
 public:
  explicit FusedPointwiseModuleImpl(FusedPointwise chain) : chain(std::move(chain)) {}
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) { return chain(inputs); }
  void pretty_print(std::ostream& stream) const override;
  FusedPointwise chain;
};
EMBER_MODULE(FusedPointwiseModule);

}  // namespace ember::fx
