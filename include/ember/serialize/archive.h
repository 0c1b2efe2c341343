// libtorch's serialization archives (torch::serialize::OutputArchive / InputArchive): a tree of
// named tensors, numbers and strings, and nested archives (a module writes its parameters and
// buffers and one nested archive per child). Ember stores an archive as one safetensors file:
// nested names join with '.', so a module's archive holds exactly its state_dict, and numbers and
// strings go into the file's metadata as "ivalue.<name>".
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/device.h"
#include "ember/jit.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::serialize {

class OutputArchive {
 public:
  OutputArchive() = default;
  // A tensor (buffers are stored as parameters are; libtorch's flag only tells them apart).
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  // A tensor, number (int or double), bool or string; other kinds raise ember::Error.
  void write(const std::string& key, const jit::IValue& ivalue);
  // Everything `nested` holds, under "key.".
  void write(const std::string& key, const OutputArchive& nested);
  template <class... Ts>
  void operator()(Ts&&... ts) {
    write(std::forward<Ts>(ts)...);
  }

  void save_to(const std::string& filename) const;
  void save_to(std::ostream& stream) const;
  // Called with consecutive pieces of the file; must return the number of bytes it took.
  void save_to(const std::function<size_t(const void*, size_t)>& func) const;

  const OrderedDict<std::string, Tensor>& tensors() const { return tensors_; }

 private:
  void check_new_key(const std::string& key) const;
  OrderedDict<std::string, Tensor> tensors_{"OutputArchive"};
  std::vector<std::pair<std::string, std::string>> values_;  // key -> encoded number or string
};

class InputArchive {
 public:
  InputArchive() = default;
  // Reads into `tensor`: a defined tensor keeps its identity (a parameter stays the module's) and
  // takes the stored values, which must have its shape; an undefined one becomes the stored tensor.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, jit::IValue& ivalue);
  bool try_read(const std::string& key, jit::IValue& ivalue);
  // The archive written under "key." (a child module's). try_read leaves `nested` empty (but
  // placed under "key.", for messages) when nothing was written there, as for a child module
  // without parameters or buffers.
  void read(const std::string& key, InputArchive& nested);
  bool try_read(const std::string& key, InputArchive& nested);
  template <class... Ts>
  void operator()(Ts&&... ts) {
    read(std::forward<Ts>(ts)...);
  }

  // The device is accepted as libtorch's; only the CPU exists.
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);
  void load_from(const std::function<size_t(uint64_t pos, void* buf, size_t nbytes)>& read_func,
                 const std::function<size_t()>& size_func, std::optional<Device> device = std::nullopt);

  // The names at this level: tensors, values and nested archives, in file order.
  std::vector<std::string> keys() const;
  // Ember's addition: the tensor stored under a dotted name ("child.weight"), or null.
  const Tensor* find(const std::string& key) const { return tensors_.find(key); }
  // Where this archive sits in its file ("" or "child."), as messages name it.
  const std::string& prefix() const { return prefix_; }

 private:
  void assign(OrderedDict<std::string, Tensor> tensors, std::vector<std::pair<std::string, std::string>> values,
              const std::string& what);
  std::string path_of(const std::string& key) const { return prefix_ + key; }
  OrderedDict<std::string, Tensor> tensors_{"InputArchive"};
  std::vector<std::pair<std::string, std::string>> values_;
  std::string prefix_;  // this archive's place in the file, for messages ("child.")
};

}  // namespace ember::serialize
