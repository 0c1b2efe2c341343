// The autocast layer of dispatch::call (the public side is include/ember/autocast.h).
//
// An op opts in by naming its policy in its description:
//   static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
// or, when the policy depends on an argument (pad's mode), by a function of the op's arguments:
//   static dispatch::Autocast autocast_policy(const Tensor&, IntArrayRef, std::string_view mode, ...);
// Inside an autocast region the layer casts the op's floating Tensor arguments (Tensor,
// optional<Tensor>, lists; never float64) per the policy, then runs the layers below with autocast
// off, so the op's inner ops run in the dtypes it was given (PyTorch excludes its Autocast key
// the same way). Ops without a policy run unchanged, and their inner ops see the region.
#pragma once
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/tensor.h"

namespace ember::dispatch {

enum class Autocast : uint8_t {
  kNone,            // run in the inputs' dtypes
  kLowerPrecision,  // floating inputs to the region's dtype (bfloat16 or float16)
  kFloat32,         // floating inputs to float32
  kPromote,         // floating inputs to the widest among them
};

template <class Op>
concept HasAutocastConstant = requires { requires std::is_same_v<std::decay_t<decltype(Op::autocast)>, Autocast>; };
template <class Op, class... Args>
concept HasAutocastFunction = requires(const Args&... a) {
  { Op::autocast_policy(a...) } -> std::same_as<Autocast>;
};
template <class Op, class... Args>
concept HasAutocast = HasAutocastConstant<Op> || HasAutocastFunction<Op, Args...>;

namespace autocast_impl {

ScalarType region_dtype();  // the thread's autocast dtype
// Float32, float16 or bfloat16: what autocast may cast (float64 stays, as in PyTorch).
inline bool eligible(const Tensor& t) {
  if (!t.defined()) return false;
  const ScalarType s = t.scalar_type();
  return s == kFloat || s == kHalf || s == kBFloat16;
}
// t in dtype `to` when eligible (else t); parameter casts come from the region's cache.
Tensor cast(const Tensor& t, ScalarType to);

// The promote target: the widest eligible dtype among the arguments.
inline void widen(std::optional<ScalarType>& to, const Tensor& t) {
  if (eligible(t)) to = to ? promote_types(*to, t.scalar_type()) : t.scalar_type();
}
// Clears the autocast bit of the thread's layer word for a scope (the op under the layer, and
// the autograd engine's backward).
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool was_on_;
};

}  // namespace autocast_impl

template <class Op, class... Args>
Autocast autocast_policy_of(const Args&... args) {
  if constexpr (HasAutocastFunction<Op, Args...>) {
    return Op::autocast_policy(args...);
  } else {
    return Op::autocast;
  }
}

}  // namespace ember::dispatch
