// A restricted unpickler for PyTorch state_dicts. It interprets the pickle opcodes a state_dict
// needs and builds plain data from them; it never imports or calls anything. The only callables
// are an allowlist of names (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter) that the unpickler itself implements, and torch's storage type names,
// which only label persistent ids. Any other opcode or global is rejected with ember::Error.
// TorchScript archives (unpickle_torchscript) also hold objects of TorchScript classes: their
// `__torch__.*` globals only label inert Objects built by NEWOBJ and given their attribute dict by
// BUILD, and torch.jit._pickle's list builders are implemented here as the other callables.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/dtype.h"

namespace ember::serialize {

struct PickleObject {
  enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor, Object };
  Kind kind = Kind::None;
  int64_t integer = 0;  // Bool, Int; Tensor: requires_grad
  double real = 0;
  std::string text;  // String; Global "module.name"; Storage key; Object its class "module.name"
  std::vector<PickleObject*> items;  // Tuple, List; Dict as key, value, ...; Object: its attribute Dict
  // Storage: dtype and numel from the persistent id.
  ScalarType dtype = ScalarType::Undefined;
  int64_t numel = 0;
  // Tensor: items[0] is its Storage.
  int64_t storage_offset = 0;
  std::vector<int64_t> sizes, strides;
};

// Owns every object of one unpickling (objects refer to each other by pointer, possibly shared
// or cyclic through the memo, so the arena rather than the objects owns them).
class Unpickled {
 public:
  const PickleObject* root() const { return root_; }

 private:
  friend class Unpickler;
  std::vector<std::unique_ptr<PickleObject>> arena_;
  const PickleObject* root_ = nullptr;
};

Unpickled unpickle_state_dict(const unsigned char* data, uint64_t size, const std::string& what);
// A TorchScript archive's data.pkl or constants.pkl.
Unpickled unpickle_torchscript(const unsigned char* data, uint64_t size, const std::string& what);

}  // namespace ember::serialize
