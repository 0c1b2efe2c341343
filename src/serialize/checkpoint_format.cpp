#include "serialize/checkpoint_format.h"

#include <unordered_set>

#include "ember/error.h"
#include "serialize/safetensors_format.h"
#include "serialize/zip.h"

namespace ember::serialize {

namespace {

using Kind = PickleObject::Kind;
constexpr int kMaxNesting = 64;

struct Flattener {
  const std::string& what;
  std::vector<std::pair<std::string, const PickleObject*>>& out;
  // Names repeat their parents' keys, so a small pickle (one long key over many memo references)
  // could describe huge names: they get a budget proportional to the pickle.
  uint64_t name_budget;
  std::unordered_set<const PickleObject*> seen;  // containers: a cycle or shared container is an error

  static std::string join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }

  void visit(const PickleObject* o, const std::string& name, int depth) {
    if (o->kind == Kind::Tensor) {
      EMBER_CHECK(name.size() <= name_budget, what.c_str(), "key names are out of proportion to data.pkl");
      name_budget -= name.size();
      out.emplace_back(name, o);
      return;
    }
    // Numbers, strings and None hold no tensors.
    if (o->kind != Kind::Dict && o->kind != Kind::List && o->kind != Kind::Tuple) return;
    EMBER_CHECK(depth < kMaxNesting, what.c_str(), "containers nested deeper than ", kMaxNesting, " at \"", name, "\"");
    EMBER_CHECK(seen.insert(o).second, what.c_str(), "container at \"", name, "\" is referenced twice (or cyclic)");
    if (o->kind != Kind::Dict) {
      for (size_t i = 0; i < o->items.size(); ++i) visit(o->items[i], join(name, std::to_string(i)), depth + 1);
      return;
    }
    for (size_t i = 0; i + 1 < o->items.size(); i += 2) {
      const PickleObject* k = o->items[i];
      EMBER_CHECK(k->kind == Kind::String || k->kind == Kind::Int, what.c_str(), "dict key at \"", name,
                  "\" is neither a string nor an int");
      visit(o->items[i + 1], join(name, k->kind == Kind::String ? k->text : std::to_string(k->integer)), depth + 1);
    }
  }
};

// a * b + c without overflowing int64, or false.
bool mul_add(int64_t a, int64_t b, int64_t c, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out) && !__builtin_add_overflow(out, c, &out);
}

void check_extent(const std::string& name, const PickleObject* t, const std::string& what) {
  const PickleObject* s = t->items[0];
  const char* w = what.c_str();
  int64_t numel = 1, last = t->storage_offset;
  for (size_t d = 0; d < t->sizes.size(); ++d) {
    EMBER_CHECK(mul_add(numel, t->sizes[d], 0, numel), w, "tensor \"", name, "\": size overflows");
    if (t->sizes[d] > 0)
      EMBER_CHECK(mul_add(t->sizes[d] - 1, t->strides[d], last, last), w, "tensor \"", name, "\": extent overflows");
  }
  EMBER_CHECK(t->storage_offset <= s->numel && (numel == 0 || last < s->numel), w, "tensor \"", name,
              "\": offset ", t->storage_offset, ", size and stride reach element ", last, " of storage '", s->text,
              "' which holds ", s->numel, " elements");
}

}  // namespace

TorchCheckpoint read_torch_checkpoint(const unsigned char* data, uint64_t size, const std::string& what) {
  const char* w = what.c_str();
  const std::vector<ZipEntry> entries = read_zip(data, size, what);
  std::unordered_map<std::string, const ZipEntry*> by_name;
  const ZipEntry* pkl = nullptr;
  std::string prefix;
  for (const ZipEntry& e : entries) {
    by_name.emplace(e.name, &e);
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      EMBER_CHECK(!pkl, w, "archive holds two pickles, \"", pkl->name, "\" and \"", e.name, "\"");
      pkl = &e;
      prefix = e.name.substr(0, slash + 1);
    }
  }
  EMBER_CHECK(pkl, w, "no <archive>/data.pkl entry (not a PyTorch zip checkpoint?)");
  if (auto it = by_name.find(prefix + "byteorder"); it != by_name.end()) {
    check_crc(*it->second, what);
    const std::string order(reinterpret_cast<const char*>(it->second->data), it->second->size);
    EMBER_CHECK(order == "little", w, "byteorder is \"", order, "\"; Ember reads little-endian checkpoints only");
  }

  TorchCheckpoint ck;
  check_crc(*pkl, what);
  ck.pickle = unpickle_state_dict(pkl->data, pkl->size, what);
  Flattener{what, ck.tensors, 16 * pkl->size + 4096, {}}.visit(ck.pickle.root(), "", 0);

  std::unordered_set<std::string> names;
  for (const auto& [name, t] : ck.tensors) {
    EMBER_CHECK(names.insert(name).second, w, "key \"", name, "\" appears twice");
    check_tensor_storage(t, name, by_name, prefix + "data/", ck.storage_data, what);
  }
  return ck;
}

void check_tensor_storage(const PickleObject* t, const std::string& name,
                          const std::unordered_map<std::string, const ZipEntry*>& entries, const std::string& dir,
                          std::unordered_map<const PickleObject*, const unsigned char*>& storage_data,
                          const std::string& what) {
  const char* w = what.c_str();
  const PickleObject* s = t->items[0];
  if (!storage_data.count(s)) {
    auto it = entries.find(dir + s->text);
    EMBER_CHECK(it != entries.end(), w, "storage '", s->text, "' of tensor \"", name, "\" has no data entry");
    EMBER_CHECK(!it->second->deflated, w, "storage entry \"", it->second->name, "\" is compressed");
    int64_t nbytes;
    EMBER_CHECK(mul_add(s->numel, static_cast<int64_t>(element_size(s->dtype)), 0, nbytes) &&
                    static_cast<uint64_t>(nbytes) <= it->second->size,
                w, "storage '", s->text, "' of tensor \"", name, "\" claims ", s->numel,
                " elements but its entry holds ", it->second->size, " bytes");
    check_crc(*it->second, what);
    if (s->dtype == kBool) check_bool_bytes(it->second->data, static_cast<uint64_t>(nbytes), what, name);
    storage_data.emplace(s, it->second->data);
  }
  check_extent(name, t, what);
}

}  // namespace ember::serialize
