// Tensors in and out of files: the safetensors reader/writer and PyTorch checkpoint import on
// top of the tensor-free format code (safetensors_format, checkpoint_format), and the checked
// copy into a module.
#include "ember/serialize.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "ember/autograd.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/jit.h"
#include "ember/quantized.h"
#include "serialize/checkpoint_format.h"
#include "serialize/safetensors_format.h"
#include "serialize/safetensors_io.h"

namespace ember {

// Files are little-endian and tensors are read and written by memcpy.
static_assert(std::endian::native == std::endian::little, "Ember's serialization assumes a little-endian host");

namespace {

using serialize::SafetensorsEntry;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_file(const std::string& path, const char* mode, const std::string& what) {
  File f(std::fopen(path.c_str(), mode));
  EMBER_CHECK(f, what.c_str(), "cannot open the file for ", mode[0] == 'r' ? "reading" : "writing", ": ",
              std::strerror(errno));
  return f;
}

uint64_t file_size(std::FILE* f, const std::string& what) {
  EMBER_CHECK(std::fseek(f, 0, SEEK_END) == 0, what.c_str(), "cannot seek");
  const long n = std::ftell(f);
  EMBER_CHECK(n >= 0 && std::fseek(f, 0, SEEK_SET) == 0, what.c_str(), "cannot determine the file size");
  return static_cast<uint64_t>(n);
}

void read_exact(std::FILE* f, void* dst, uint64_t n, const std::string& what) {
  EMBER_CHECK(n == 0 || std::fread(dst, 1, n, f) == n, what.c_str(), "short read (file changed or truncated?)");
}

void write_exact(std::FILE* f, const void* src, uint64_t n, const std::string& what) {
  EMBER_CHECK(n == 0 || std::fwrite(src, 1, n, f) == n, what.c_str(), "write failed: ", std::strerror(errno));
}

serialize::ByteSource file_source(std::FILE* f, const std::string& what) {
  return {file_size(f, what), [f, what](void* dst, uint64_t n) { read_exact(f, dst, n, what); }};
}

serialize::SafetensorsHeader read_safetensors(const std::string& path, OrderedDict<std::string, Tensor>* tensors,
                                              const std::string& what) {
  File f = open_file(path, "rb", what);
  return serialize::read_safetensors(file_source(f.get(), what), tensors, what);
}

std::string shape_string(IntArrayRef s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path, const StringPairs& metadata) {
  const std::string what = "save('" + path + "')";
  File f;  // opened once everything is checked, so a bad call leaves no file behind
  serialize::write_safetensors(
      tensors, metadata,
      [&](const void* data, uint64_t n) {
        if (!f) f = open_file(path, "wb", what);
        write_exact(f.get(), data, n, what);
      },
      what);
  EMBER_CHECK(std::fflush(f.get()) == 0, what.c_str(), "write failed: ", std::strerror(errno));
}

void save(const Tensor& tensor, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  d.insert("tensor", tensor);
  save(d, path);
}

void save(const Tensor& tensor, std::ostream& stream) {
  serialize::OutputArchive archive;
  archive.write("tensor", tensor);
  archive.save_to(stream);
}

void load(Tensor& tensor, std::istream& stream) {
  serialize::InputArchive archive;
  archive.load_from(stream);
  const std::vector<std::string> keys = archive.keys();
  EMBER_CHECK(keys.size() == 1, "load", "expected a stream holding one tensor, it holds ", keys.size(), " entries");
  Tensor t;
  archive.read(keys[0], t);
  tensor = t;
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  for (size_t i = 0; i < tensors.size(); ++i) d.insert(std::to_string(i), tensors[i]);
  save(d, path);
}

void save(const std::vector<Tensor>& tensors, std::ostream& stream) {
  serialize::OutputArchive archive;
  for (size_t i = 0; i < tensors.size(); ++i) archive.write(std::to_string(i), tensors[i]);
  archive.save_to(stream);
}

void load(std::vector<Tensor>& tensors, std::istream& stream) {
  serialize::InputArchive archive;
  archive.load_from(stream);
  const size_t n = archive.keys().size();
  std::vector<Tensor> out(n);
  for (size_t i = 0; i < n; ++i) {
    EMBER_CHECK(archive.find(std::to_string(i)), "load", "expected a stream holding tensors named 0..", n - 1, ", \"",
                i, "\" is missing");
    archive.read(std::to_string(i), out[i]);
  }
  tensors = std::move(out);
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  const std::string what = "load('" + path + "')";
  OrderedDict<std::string, Tensor> d;
  read_safetensors(path, &d, what);
  std::vector<Tensor> out;
  for (size_t i = 0; i < d.size(); ++i) {
    const Tensor* t = d.find(std::to_string(i));
    EMBER_CHECK(t, what.c_str(), "expected a list of tensors named 0..", d.size() - 1, ", \"", i, "\" is missing");
    out.push_back(*t);
  }
  tensors = std::move(out);
}

OrderedDict<std::string, Tensor> load_tensors(const std::string& path) {
  OrderedDict<std::string, Tensor> out;
  read_safetensors(path, &out, "load_tensors('" + path + "')");
  return out;
}

StringPairs load_metadata(const std::string& path) {
  return read_safetensors(path, nullptr, "load_metadata('" + path + "')").metadata;
}

void load(Tensor& tensor, const std::string& path) {
  const std::string what = "load('" + path + "')";
  OrderedDict<std::string, Tensor> d;
  read_safetensors(path, &d, what);
  EMBER_CHECK(d.size() == 1, what.c_str(), "expected a file holding one tensor, it holds ", d.size());
  tensor = d[0].value();
}

OrderedDict<std::string, Tensor> load_torch_checkpoint(const std::string& path) {
  const std::string what = "load_torch_checkpoint('" + path + "')";
  File f = open_file(path, "rb", what);
  std::vector<unsigned char> bytes(file_size(f.get(), what));
  read_exact(f.get(), bytes.data(), bytes.size(), what);
  const serialize::TorchCheckpoint ck = serialize::read_torch_checkpoint(bytes.data(), bytes.size(), what);

  // One Ember storage per Python storage, so views and tied weights stay shared.
  std::unordered_map<const serialize::PickleObject*, Tensor> storages;
  for (const auto& [s, src] : ck.storage_data) {
    Tensor base = empty({s->numel}, TensorOptions().dtype(s->dtype));
    std::memcpy(base.data_ptr(), src, base.nbytes());
    storages.emplace(s, std::move(base));
  }
  OrderedDict<std::string, Tensor> out;
  for (const auto& [name, t] : ck.tensors)
    out.insert(name, storages.at(t->items[0]).as_strided(t->sizes, t->strides, t->storage_offset));
  return out;
}

namespace detail {

StringPairs encode_param_groups(const std::vector<OrderedDict<std::string, double>>& groups) {
  StringPairs out;
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& item : groups[g]) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", item.value());  // 17 digits: the double round-trips
      out.emplace_back("param_groups." + std::to_string(g) + "." + item.key(), buf);
    }
  return out;
}

std::vector<OrderedDict<std::string, double>> decode_param_groups(const StringPairs& metadata,
                                                                  const std::string& what) {
  std::vector<OrderedDict<std::string, double>> groups;
  const std::string prefix = "param_groups.";
  for (const auto& [key, text] : metadata) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t dot = key.find('.', prefix.size());
    const std::string index = key.substr(prefix.size(), dot == std::string::npos ? dot : dot - prefix.size());
    EMBER_CHECK(dot != std::string::npos && !index.empty() && index.size() < 10 &&
                    index.find_first_not_of("0123456789") == std::string::npos,
                what.c_str(), "metadata key \"", key, "\" is not param_groups.<index>.<name>");
    const size_t g = std::stoul(index);
    // Groups are written in order, so a new one may only follow the last.
    EMBER_CHECK(g <= groups.size(), what.c_str(), "metadata key \"", key, "\" skips a param group");
    if (g == groups.size()) groups.emplace_back();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    EMBER_CHECK(!text.empty() && end == text.c_str() + text.size(), what.c_str(), "metadata \"", key, "\" = \"", text,
                "\" is not a number");
    groups[g].insert(key.substr(dot + 1), v);
  }
  return groups;
}

void copy_named_tensors(const OrderedDict<std::string, Tensor>& targets, const OrderedDict<std::string, Tensor>& source,
                        bool strict, bool allow_cast, const std::string& what) {
  std::vector<std::string> problems;
  std::vector<std::pair<Tensor, Tensor>> copies;
  for (const auto& item : targets) {
    const Tensor* src = source.find(item.key());
    const Tensor& dst = item.value();
    if (!src) {
      if (strict) problems.push_back("missing key \"" + item.key() + "\"");
      continue;
    }
    if (src->sizes() != dst.sizes()) {
      problems.push_back("shape mismatch for \"" + item.key() + "\": the file has " + shape_string(src->sizes()) +
                         ", the module " + shape_string(dst.sizes()));
    } else if (!allow_cast && src->dtype() != dst.dtype()) {
      problems.push_back("dtype mismatch for \"" + item.key() + "\": the file has " + to_string(src->dtype()) +
                         ", the module " + to_string(dst.dtype()));
    } else {
      copies.emplace_back(dst, *src);
    }
  }
  if (strict)
    for (const auto& item : source)
      if (!targets.contains(item.key())) problems.push_back("unexpected key \"" + item.key() + "\"");
  if (!problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
    detail::fail(what.c_str(), "nothing loaded: ", all);
  }
  NoGradGuard no_grad;
  for (auto& [dst, src] : copies) dst.copy_(src);
}

OrderedDict<std::string, Tensor> load_module_tensors(const std::string& path) {
  char magic[4] = {};
  {
    File f = open_file(path, "rb", "load('" + path + "')");
    if (std::fread(magic, 1, sizeof magic, f.get()) != sizeof magic) return load_tensors(path);  // it names the error
  }
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) return load_tensors(path);
  const jit::Module archive = jit::load(path);
  OrderedDict<std::string, Tensor> out;
  for (const auto& p : archive.named_parameters()) out.insert(p.name, p.value);
  for (const auto& b : archive.named_buffers()) out.insert(b.name, b.value);
  return out;
}

}  // namespace detail
}  // namespace ember

namespace ember::serialize {

namespace {

// safetensors has no quantized dtypes: a quantized tensor is stored as its integers under its name,
// its scheme and parameters in the metadata entry kQuantizedKey + name ("per_tensor_affine quint8
// <scale> <zero point>" or "per_channel_affine qint8 <axis>"), a per-channel tensor's scales
// (float64) and zero points (int64) as two more tensors named <name> + kScales / kZeroPoints.
constexpr const char* kQuantizedKey = "ember.quantized.";
// Nor complex dtypes: a complex tensor is stored as its real view (float32 or float64, a trailing
// dim of 2 for the parts), flagged by the metadata entry kComplexKey + name ("complex64" or
// "complex128").
constexpr const char* kComplexKey = "ember.complex.";
constexpr const char* kScales = ".__q_scales";
constexpr const char* kZeroPoints = ".__q_zero_points";

// PyTorch's names of the quantized dtypes.
const char* qdtype_name(ScalarType t) { return t == kQInt8 ? "qint8" : t == kQUInt8 ? "quint8" : "qint32"; }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // 17 digits: the double round-trips
  return buf;
}

}  // namespace

void write_safetensors(const OrderedDict<std::string, Tensor>& tensors, const StringPairs& user_metadata,
                       const std::function<void(const void*, uint64_t)>& sink, const std::string& what) {
  std::vector<SafetensorsEntry> entries;
  std::vector<Tensor> data;
  StringPairs metadata = user_metadata;
  uint64_t offset = 0;
  auto add = [&](const std::string& name, const Tensor& value) {
    data.push_back(value.contiguous());
    const Tensor& t = data.back();
    entries.push_back({name, t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), offset,
                       offset + t.nbytes()});
    offset += t.nbytes();
  };
  for (const auto& item : tensors) {
    const Tensor& t = item.value();
    EMBER_CHECK(t.defined(), what.c_str(), "tensor \"", item.key(), "\" is undefined");
    EMBER_CHECK(item.key() != "__metadata__", what.c_str(), "\"__metadata__\" is reserved and cannot name a tensor");
    if (t.is_complex()) {
      add(item.key(), view_as_real(t.resolve_conj()));
      metadata.emplace_back(kComplexKey + item.key(), t.dtype() == kComplexFloat ? "complex64" : "complex128");
      continue;
    }
    if (!t.is_quantized()) {
      add(item.key(), t);
      continue;
    }
    add(item.key(), t.int_repr());
    const std::string dtype = qdtype_name(t.dtype());
    if (t.qscheme() == kPerTensorAffine) {
      metadata.emplace_back(kQuantizedKey + item.key(), "per_tensor_affine " + dtype + " " + number(t.q_scale()) +
                                                            " " + std::to_string(t.q_zero_point()));
    } else {
      EMBER_CHECK(t.qscheme() == kPerChannelAffine, what.c_str(), "tensor \"", item.key(), "\" is quantized ",
                  t.qscheme(), ", which Ember does not save");
      metadata.emplace_back(kQuantizedKey + item.key(),
                            "per_channel_affine " + dtype + " " + std::to_string(t.q_per_channel_axis()));
      add(item.key() + kScales, t.q_per_channel_scales().to(kDouble));
      add(item.key() + kZeroPoints, t.q_per_channel_zero_points().to(kLong));
    }
  }
  const std::string header = safetensors_header(entries, metadata);
  sink(header.data(), header.size());
  for (const Tensor& t : data) sink(t.data_ptr(), t.nbytes());
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.compare(0, std::strlen(prefix), prefix) == 0; }

// The complex and quantized tensors of a file made whole again (see write_safetensors); their
// metadata entries leave the header's metadata.
void restore_encoded(SafetensorsHeader& h, OrderedDict<std::string, Tensor>* tensors, const std::string& what) {
  StringPairs user;
  for (const auto& [key, text] : h.metadata) {
    const bool complex = starts_with(key, kComplexKey);
    if (!complex && !starts_with(key, kQuantizedKey)) {
      user.emplace_back(key, text);
      continue;
    }
    if (!tensors) continue;
    const std::string name = key.substr(std::strlen(complex ? kComplexKey : kQuantizedKey));
    Tensor* t = tensors->find(name);
    EMBER_CHECK(t, what.c_str(), "metadata \"", key, "\" describes a ", complex ? "complex" : "quantized",
                " tensor the file does not hold");
    if (complex) {
      const ScalarType part = text == "complex64" ? kFloat : text == "complex128" ? kDouble : ScalarType::Undefined;
      EMBER_CHECK(part != ScalarType::Undefined && t->dtype() == part && t->dim() > 0 && t->size(-1) == 2,
                  what.c_str(), "metadata \"", key, "\" = \"", text, "\" does not fit tensor \"", name, "\" (",
                  t->dtype(), " of shape ", t->sizes(), "): a complex64 or complex128 tensor is stored as float32 or ",
                  "float64 with a last dim of 2");
      *t = view_as_complex(*t);
      continue;
    }
    std::istringstream in(text);
    std::string scheme, dtype;
    in >> scheme >> dtype;
    const ScalarType want = t->dtype() == kChar ? kQInt8 : t->dtype() == kByte ? kQUInt8 : kQInt32;
    EMBER_CHECK(dtype == qdtype_name(want) && (t->dtype() == kChar || t->dtype() == kByte || t->dtype() == kInt),
                what.c_str(), "metadata \"", key, "\" = \"", text, "\" does not fit the tensor's dtype ", t->dtype());
    if (scheme == "per_tensor_affine") {
      double scale = 0;
      int64_t zero_point = 0;
      in >> scale >> zero_point;
      EMBER_CHECK(!in.fail(), what.c_str(), "metadata \"", key, "\" = \"", text, "\" is not \"per_tensor_affine ",
                  "<dtype> <scale> <zero point>\"");
      *t = _make_per_tensor_quantized_tensor(*t, scale, zero_point);
    } else {
      int64_t axis = 0;
      in >> axis;
      EMBER_CHECK(scheme == "per_channel_affine" && !in.fail(), what.c_str(), "metadata \"", key, "\" = \"", text,
                  "\" is not a quantization Ember reads");
      const Tensor* scales = tensors->find(name + kScales);
      const Tensor* zero_points = tensors->find(name + kZeroPoints);
      EMBER_CHECK(scales && zero_points, what.c_str(), "the per-channel parameters of \"", name, "\" are missing");
      *t = _make_per_channel_quantized_tensor(*t, *scales, *zero_points, axis);
      tensors->erase(name + kScales);
      tensors->erase(name + kZeroPoints);
    }
  }
  h.metadata = std::move(user);
}

}  // namespace

SafetensorsHeader read_safetensors(const ByteSource& source, OrderedDict<std::string, Tensor>* tensors,
                                   const std::string& what) {
  unsigned char prefix[8] = {};
  source.read(prefix, source.size < 8 ? source.size : 8);
  const uint64_t header_len = safetensors_header_length(prefix, source.size, what);
  std::string header(header_len, '\0');
  source.read(header.data(), header_len);
  SafetensorsHeader h = parse_safetensors_header(header, source.size - 8 - header_len, what);
  if (!tensors) {
    restore_encoded(h, nullptr, what);
    return h;
  }
  // The data follows the header contiguously in the order the entries are sorted in.
  for (const SafetensorsEntry& e : h.entries) {
    Tensor t = empty(e.shape, TensorOptions().dtype(e.dtype));
    source.read(t.data_ptr(), e.end - e.begin);
    if (e.dtype == kBool) check_bool_bytes(static_cast<const unsigned char*>(t.data_ptr()), e.end - e.begin, what, e.name);
    tensors->insert(e.name, std::move(t));
  }
  restore_encoded(h, tensors, what);
  return h;
}

}  // namespace ember::serialize
