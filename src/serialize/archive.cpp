// The archives as one safetensors file: tensors under their dotted names, numbers and strings in
// the metadata under "ivalue.<name>" as "int:<decimal>", "double:<hex float>" (exact),
// "bool:0|1" or "str:<text>".
#include "ember/serialize/archive.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string_view>

#include "ember/autograd.h"
#include "ember/error.h"
#include "serialize/safetensors_io.h"
#include "serialize/zip.h"

namespace ember::serialize {

namespace {

constexpr const char* kValuePrefix = "ivalue.";

std::string encode(const std::string& what, const std::string& key, const jit::IValue& v);

// A tuple's or list's elements, each as "<length>|<encoded element>" (libtorch's optimizers
// serialize betas as a tuple).
std::string encode_elements(const std::string& what, const std::string& key, const std::vector<jit::IValue>& elems) {
  std::string out;
  for (const jit::IValue& e : elems) {
    EMBER_CHECK(!e.isTensor(), what.c_str(), "'", key,
                "' holds a tensor inside a tuple or list; Ember's archives "
                "hold those of numbers, bools and strings");
    const std::string text = encode(what, key, e);
    out += std::to_string(text.size()) + "|" + text;
  }
  return out;
}

std::string encode(const std::string& what, const std::string& key, const jit::IValue& v) {
  if (v.isNone()) return "none:";
  if (v.isTuple()) return "tuple:" + encode_elements(what, key, v.toTuple()->elements());
  if (v.isList()) return "list:" + encode_elements(what, key, v.toListRef());
  if (v.isInt()) return "int:" + std::to_string(v.toInt());
  if (v.isBool()) return v.toBool() ? "bool:1" : "bool:0";
  if (v.isString()) return "str:" + v.toStringRef();
  EMBER_CHECK(
      v.isDouble(), what.c_str(), "'", key, "' is a ", v.tag_name(),
      "; Ember's archives hold tensors, ints, doubles, bools, strings, None and tuples or lists of those but tensors");
  char buf[64];
  std::snprintf(buf, sizeof buf, "double:%a", v.toDouble());
  return buf;
}

// Tuples and lists nest at most this deep: a crafted archive must not exhaust the stack.
constexpr int kMaxValueNesting = 64;

jit::IValue decode(const std::string& what, const std::string& key, std::string_view text, int depth);

std::vector<jit::IValue> decode_elements(const std::string& what, const std::string& key, std::string_view body,
                                         int depth) {
  EMBER_CHECK(depth < kMaxValueNesting, what.c_str(), "'", key, "' nests tuples or lists more than ", kMaxValueNesting,
              " deep");
  std::vector<jit::IValue> out;
  for (size_t pos = 0; pos < body.size();) {
    const size_t bar = body.find('|', pos);
    EMBER_CHECK(bar != std::string_view::npos && bar > pos, what.c_str(), "'", key,
                "' holds a bad tuple or list: ", body);
    uint64_t n = 0;
    bool digits = true;
    for (size_t i = pos; i < bar && digits; ++i) {
      const char c = body[i];
      n = n * 10 + static_cast<uint64_t>(c - '0');
      digits = c >= '0' && c <= '9' && n <= body.size();  // n stays small: no overflow
    }
    EMBER_CHECK(digits && n <= body.size() - bar - 1, what.c_str(), "'", key, "' holds a bad tuple or list: ", body);
    out.push_back(decode(what, key, body.substr(bar + 1, n), depth + 1));
    pos = bar + 1 + n;
  }
  return out;
}

jit::IValue decode(const std::string& what, const std::string& key, std::string_view text, int depth) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (colon != std::string_view::npos && kind == "tuple") {
    return jit::IValue(std::make_shared<jit::ivalue::Tuple>(decode_elements(what, key, text.substr(colon + 1), depth)));
  }
  if (colon != std::string_view::npos && kind == "list") {
    return jit::IValue(decode_elements(what, key, text.substr(colon + 1), depth));
  }
  const std::string body = colon == std::string_view::npos ? "" : std::string(text.substr(colon + 1));
  char* end = nullptr;
  errno = 0;
  if (kind == "none" && colon != std::string_view::npos) {
    EMBER_CHECK(body.empty(), what.c_str(), "'", key, "' holds a bad None: ", text);
    return jit::IValue();
  }
  if (kind == "int") {
    const long long i = std::strtoll(body.c_str(), &end, 10);
    EMBER_CHECK(!body.empty() && *end == '\0' && errno == 0, what.c_str(), "'", key, "' holds a bad int: ", body);
    return jit::IValue(static_cast<int64_t>(i));
  }
  if (kind == "double") {
    const double d = std::strtod(body.c_str(), &end);
    EMBER_CHECK(!body.empty() && *end == '\0', what.c_str(), "'", key, "' holds a bad double: ", body);
    return jit::IValue(d);
  }
  if (kind == "bool") {
    EMBER_CHECK(body == "0" || body == "1", what.c_str(), "'", key, "' holds a bad bool: ", body);
    return jit::IValue(body == "1");
  }
  EMBER_CHECK(kind == "str" && colon != std::string_view::npos, what.c_str(), "'", key,
              "' holds a value of unknown kind: ", text);
  return jit::IValue(body);
}

jit::IValue decode(const std::string& what, const std::string& key, const std::string& text) {
  return decode(what, key, std::string_view(text), 0);
}

// The first component of a dotted name.
std::string head(const std::string& name) { return name.substr(0, name.find('.')); }

}  // namespace

// ---- OutputArchive --------------------------------------------------------------------------------

void OutputArchive::check_new_key(const std::string& key) const {
  constexpr const char* op = "OutputArchive::write";
  EMBER_CHECK(!key.empty(), op, "an empty key");
  EMBER_CHECK(!tensors_.contains(key), op, "'", key, "' was written already");
  for (const auto& [k, v] : values_) EMBER_CHECK(k != key, op, "'", key, "' was written already");
}

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  check_new_key(key);
  EMBER_CHECK(tensor.defined(), "OutputArchive::write", "tensor '", key, "' is undefined");
  tensors_.insert(key, tensor.detach());
}

void OutputArchive::write(const std::string& key, const jit::IValue& ivalue) {
  if (ivalue.isTensor()) return write(key, ivalue.toTensor());
  check_new_key(key);
  values_.emplace_back(key, encode("OutputArchive::write", key, ivalue));
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  check_new_key(key);
  for (const auto& item : nested.tensors_) write(key + "." + item.key(), item.value());
  for (const auto& [k, v] : nested.values_) {
    check_new_key(key + "." + k);
    values_.emplace_back(key + "." + k, v);
  }
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& func) const {
  StringPairs metadata;
  for (const auto& [k, v] : values_) metadata.emplace_back(kValuePrefix + k, v);
  write_safetensors(
      tensors_, metadata,
      [&](const void* data, uint64_t n) {
        EMBER_CHECK(func(data, n) == n, "OutputArchive::save_to", "the writer took fewer than ", n, " bytes");
      },
      "OutputArchive::save_to");
}

void OutputArchive::save_to(std::ostream& stream) const {
  save_to([&](const void* data, size_t n) -> size_t {
    stream.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    return stream ? n : 0;
  });
}

void OutputArchive::save_to(const std::string& filename) const {
  std::ofstream file(filename, std::ios::binary);
  EMBER_CHECK(file, "OutputArchive::save_to", "cannot open '", filename, "' for writing: ", std::strerror(errno));
  save_to(file);
  file.flush();
  EMBER_CHECK(file, "OutputArchive::save_to", "writing '", filename, "' failed: ", std::strerror(errno));
}

// ---- InputArchive ---------------------------------------------------------------------------------

void InputArchive::assign(OrderedDict<std::string, Tensor> tensors, StringPairs metadata, const std::string& what) {
  std::vector<std::pair<std::string, std::string>> values;
  for (auto& [k, v] : metadata) {
    if (k.rfind(kValuePrefix, 0) != 0) continue;  // another writer's metadata
    const std::string key = k.substr(std::strlen(kValuePrefix));
    decode(what, key, v);  // a bad value fails the load, not a later read
    values.emplace_back(key, std::move(v));
  }
  tensors_ = std::move(tensors);
  values_ = std::move(values);
  prefix_.clear();
}

void InputArchive::load_from(const std::function<size_t(uint64_t, void*, size_t)>& read_func,
                             const std::function<size_t()>& size_func, std::optional<Device> device) {
  const std::string what = "InputArchive::load_from";
  EMBER_CHECK(!device || device->is_cpu(), what.c_str(), "only the CPU exists in Ember, asked for ", *device);
  uint64_t pos = 0;
  ByteSource source{size_func(), [&](void* dst, uint64_t n) {
                      EMBER_CHECK(read_func(pos, dst, n) == n, what.c_str(), "short read at byte ", pos,
                                  " (truncated input?)");
                      pos += n;
                    }};
  OrderedDict<std::string, Tensor> tensors("InputArchive");
  SafetensorsHeader h = read_safetensors(source, &tensors, what);
  assign(std::move(tensors), std::move(h.metadata), what);
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  load_from(
      [&](uint64_t pos, void* buf, size_t n) -> size_t {
        if (pos > size || n > size - pos) return 0;
        std::memcpy(buf, data + pos, n);
        return n;
      },
      [&] { return size; }, device);
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  const std::string bytes = read_rest(stream);
  load_from(bytes.data(), bytes.size(), device);
}

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  std::ifstream file(filename, std::ios::binary);
  EMBER_CHECK(file, "InputArchive::load_from", "cannot open '", filename, "' for reading: ", std::strerror(errno));
  load_from(file, device);
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  const Tensor* stored = tensors_.find(key);
  if (!stored) return false;
  if (!tensor.defined()) {
    tensor = *stored;
    return true;
  }
  EMBER_CHECK(tensor.sizes() == stored->sizes(), "InputArchive::read", "'", path_of(key), "' has shape ",
              stored->sizes(), " in the archive but ", tensor.sizes(), " in the tensor read into");
  NoGradGuard no_grad;
  tensor.copy_(*stored);
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  EMBER_CHECK(try_read(key, tensor, is_buffer), "InputArchive::read", "No such serialized tensor '", path_of(key),
              "'");
}

bool InputArchive::try_read(const std::string& key, jit::IValue& ivalue) {
  if (const Tensor* t = tensors_.find(key)) {
    ivalue = *t;
    return true;
  }
  for (const auto& [k, v] : values_) {
    if (k != key) continue;
    ivalue = decode("InputArchive::read", path_of(key), v);
    return true;
  }
  return false;
}

void InputArchive::read(const std::string& key, jit::IValue& ivalue) {
  EMBER_CHECK(try_read(key, ivalue), "InputArchive::read", "No such serialized value '", path_of(key), "'");
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) {
  const std::string prefix = key + ".";
  OrderedDict<std::string, Tensor> tensors("InputArchive");
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& item : tensors_)
    if (item.key().rfind(prefix, 0) == 0) tensors.insert(item.key().substr(prefix.size()), item.value());
  for (const auto& [k, v] : values_)
    if (k.rfind(prefix, 0) == 0) values.emplace_back(k.substr(prefix.size()), v);
  const bool found = !tensors.is_empty() || !values.empty();
  nested.tensors_ = std::move(tensors);
  nested.values_ = std::move(values);
  nested.prefix_ = prefix_ + prefix;
  return found;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  EMBER_CHECK(try_read(key, nested), "InputArchive::read", "No such serialized submodule: '", path_of(key), "'");
}

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    const std::string h = head(name);
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  };
  for (const auto& item : tensors_) add(item.key());
  for (const auto& [k, v] : values_) add(k);
  return out;
}

}  // namespace ember::serialize
