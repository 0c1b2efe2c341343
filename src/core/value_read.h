// A hook called before a tensor's value is read into C++ (Tensor::item()): fx's tracer sets it
// to refuse reads of traced tensors, which would bake one example's values into the graph.
#pragma once

namespace ember {
class Tensor;
namespace detail {
using ValueReadHook = void (*)(const Tensor& t, const char* what);
ValueReadHook& value_read_hook();  // this thread's; null when unset
}  // namespace detail
}  // namespace ember
