// Saving and loading tensors, modules and PyTorch checkpoints, as libtorch spells it:
//   ember::save(tensor_or_dict_or_module, path); ember::load(tensor_or_module, path);
// Files are safetensors (https://github.com/huggingface/safetensors): readable by other tools.
// PyTorch checkpoints (Python torch.save, zip format) load without libtorch or Python, through a
// restricted unpickler that never runs code from the file. Every reader checks every size and
// offset against the file before allocating; bad files raise ember::Error naming the problem.
#pragma once
#include <concepts>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/serialize/archive.h"
#include "ember/tensor.h"

namespace ember {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

// One tensor, saved contiguous under the name "tensor"; load replaces `tensor` with the file's
// only tensor.
void save(const Tensor& tensor, const std::string& path);
void load(Tensor& tensor, const std::string& path);
void save(const Tensor& tensor, std::ostream& stream);
void load(Tensor& tensor, std::istream& stream);
// A list of tensors, under the names "0", "1", ...; load replaces the list with the file's.
void save(const std::vector<Tensor>& tensors, const std::string& path);
void load(std::vector<Tensor>& tensors, const std::string& path);
// The same through a stream, as libtorch's (an archive whose tensors are named 0, 1, ...).
void save(const std::vector<Tensor>& tensors, std::ostream& stream);
void load(std::vector<Tensor>& tensors, std::istream& stream);

// Named tensors with optional string metadata (safetensors' "__metadata__"), in order.
void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path, const StringPairs& metadata = {});
OrderedDict<std::string, Tensor> load_tensors(const std::string& path);
StringPairs load_metadata(const std::string& path);

// The tensors of a file written by Python's torch.save (zip format) under their state_dict names;
// nested dicts and lists join keys with '.', non-tensor values (numbers, strings) are skipped.
// Tensors that shared a storage in Python share one here (views keep their offsets and strides).
OrderedDict<std::string, Tensor> load_torch_checkpoint(const std::string& path);

namespace detail {

template <class M>
concept HasNamedTensors = requires(M& m) {
  { m.named_parameters(true) } -> std::convertible_to<OrderedDict<std::string, Tensor>>;
  { m.named_buffers(true) } -> std::convertible_to<OrderedDict<std::string, Tensor>>;
};

// A module, or a holder / shared_ptr of one (anything whose operator-> reaches a module).
template <class M>
concept ModuleLike = HasNamedTensors<std::remove_reference_t<M>> || requires(M& m) {
  requires HasNamedTensors<std::remove_reference_t<decltype(*m.operator->())>>;
};

template <class M>
decltype(auto) module_of(M& m) {
  if constexpr (HasNamedTensors<M>) return (m);
  else return (*m.operator->());
}

// Parameters, then buffers, recursively.
template <class M>
OrderedDict<std::string, Tensor> named_tensors(M& m) {
  auto& mod = module_of(m);
  OrderedDict<std::string, Tensor> out = mod.named_parameters(true);
  for (const auto& item : mod.named_buffers(true)) out.insert(item.key(), item.value());
  return out;
}

// An optimizer as ember::optim's: state_dict() with `state` (named tensors) and `param_groups`
// (a vector of OrderedDict<std::string, double> of hyperparameters), and load_state_dict().
template <class O>
concept OptimizerLike = !ModuleLike<O> && requires(O& o) {
  { o.state_dict().state } -> std::convertible_to<OrderedDict<std::string, Tensor>>;
  { o.state_dict().param_groups[0] } -> std::convertible_to<OrderedDict<std::string, double>>;
  o.load_state_dict(o.state_dict());
};

// Hyperparameters as safetensors metadata: "param_groups.<group>.<name>" -> the double, exactly.
StringPairs encode_param_groups(const std::vector<OrderedDict<std::string, double>>& groups);
std::vector<OrderedDict<std::string, double>> decode_param_groups(const StringPairs& metadata, const std::string& what);

// Copies `source` into `targets` (the module's own tensors) after checking all of it: a key
// missing from either side (ignored unless strict), a shape mismatch, or (unless allow_cast) a
// dtype mismatch raises one ember::Error listing every problem, and then nothing is copied.
void copy_named_tensors(const OrderedDict<std::string, Tensor>& targets, const OrderedDict<std::string, Tensor>& source,
                        bool strict, bool allow_cast, const std::string& what);

// The tensors torch::load(module, path) reads: a safetensors file's, or, for a TorchScript
// archive (a zip written by libtorch's torch::save(module) or by ScriptModule.save), its
// parameters and buffers under their qualified names, as libtorch's InputArchive finds them.
OrderedDict<std::string, Tensor> load_module_tensors(const std::string& path);

}  // namespace detail

// A module's parameters and buffers (state_dict names), for a module, holder or shared_ptr.
template <class M>
  requires detail::ModuleLike<M>
void save(M&& module, const std::string& path) {
  save(detail::named_tensors(module), path);
}

// The same file through a stream, written as libtorch does it: Module::save into an archive.
template <class M>
  requires detail::ModuleLike<M>
void save(M&& module, std::ostream& stream) {
  serialize::OutputArchive archive;
  detail::module_of(module).save(archive);
  archive.save_to(stream);
}
template <class M>
  requires detail::ModuleLike<M>
void load(M&& module, std::istream& stream) {
  serialize::InputArchive archive;
  archive.load_from(stream);
  detail::module_of(module).load(archive);
}
// Loads a file written by save(module, path), or a TorchScript archive, into a module of the
// same structure: every key must match with the same shape and dtype.
template <class M>
  requires detail::ModuleLike<M>
void load(M&& module, const std::string& path) {
  detail::copy_named_tensors(detail::named_tensors(module), detail::load_module_tensors(path), /*strict=*/true,
                             /*allow_cast=*/false, "load: '" + path + "'");
}

// As PyTorch's module.load_state_dict(state_dict, strict): shapes must match, values are cast to
// the module's dtypes, missing or unexpected keys are errors only when strict.
template <class M>
  requires detail::ModuleLike<M>
void load_state_dict(M&& module, const OrderedDict<std::string, Tensor>& state_dict, bool strict = true) {
  detail::copy_named_tensors(detail::named_tensors(module), state_dict, strict, /*allow_cast=*/true,
                             "load_state_dict");
}

// An optimizer's state (per-parameter tensors such as exp_avg, under "<index>.<field>") and its
// param groups' hyperparameters (in the file's metadata), as libtorch's torch::save(optimizer, path).
template <class O>
  requires detail::OptimizerLike<O>
void save(const O& optimizer, const std::string& path) {
  const auto sd = optimizer.state_dict();
  save(sd.state, path, detail::encode_param_groups(sd.param_groups));
}

// An optimizer through a stream, as libtorch's: Optimizer::save into an archive (a user's
// optimizer written for libtorch may override it), and Optimizer::load.
template <class O>
requires(!detail::ModuleLike<O>) &&
    requires(const O& o, O& m, serialize::OutputArchive& out, serialize::InputArchive& in) {
  o.save(out);
  m.load(in);
}
void save(const O& optimizer, std::ostream& stream) {
  serialize::OutputArchive archive;
  optimizer.save(archive);
  archive.save_to(stream);
}
template <class O>
requires(!detail::ModuleLike<O>) && requires(O& m, serialize::InputArchive& in) { m.load(in); }
void load(O& optimizer, std::istream& stream) {
  serialize::InputArchive archive;
  archive.load_from(stream);
  optimizer.load(archive);
}

// libtorch's load(value, path or stream, device): the device values are loaded to, the CPU only.
template <class V, class Source>
void load(V&& value, Source&& source, std::optional<Device> device) {
  if (device) check_cpu_device("load", *device);
  load(std::forward<V>(value), std::forward<Source>(source));
}

// Restores what save(optimizer, path) wrote; the optimizer's load_state_dict checks it against
// its parameters before changing anything.
template <class O>
  requires detail::OptimizerLike<O>
void load(O& optimizer, const std::string& path) {
  auto sd = optimizer.state_dict();
  sd.state = load_tensors(path);
  sd.param_groups = detail::decode_param_groups(load_metadata(path), "load('" + path + "')");
  optimizer.load_state_dict(sd);
}

}  // namespace ember
