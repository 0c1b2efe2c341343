#include "serialize/safetensors_format.h"

#include <algorithm>
#include <cstring>

#include "ember/error.h"
#include "serialize/json.h"

namespace ember::serialize {

namespace {

struct DtypeName {
  const char* name;
  ScalarType dtype;
};
constexpr DtypeName kDtypes[] = {
    {"F32", kFloat}, {"F64", kDouble}, {"F16", kHalf}, {"BF16", kBFloat16}, {"I64", kLong},
    {"I32", kInt},   {"I16", kShort},  {"I8", kChar},  {"U8", kByte},       {"BOOL", kBool},
};

// a * b into out, false on overflow of 2^63 - 1 (tensor sizes are int64 in Ember).
bool mul_checked(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > static_cast<uint64_t>(INT64_MAX) / a) return false;
  out = a * b;
  return true;
}

SafetensorsEntry parse_entry(const std::string& name, const Json& info, uint64_t data_size, const std::string& what) {
  const char* w = what.c_str();
  EMBER_CHECK(info.is_object(), w, "tensor \"", name, "\": expected an object with dtype, shape and data_offsets");
  for (const auto& [key, v] : info.members())
    EMBER_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", w, "tensor \"", name, "\": unknown field \"",
                key, "\"");
  const Json* dtype = info.find("dtype");
  const Json* shape = info.find("shape");
  const Json* offsets = info.find("data_offsets");
  EMBER_CHECK(dtype && shape && offsets, w, "tensor \"", name, "\": missing ",
              !dtype ? "dtype" : !shape ? "shape" : "data_offsets");

  SafetensorsEntry e;
  e.name = name;
  EMBER_CHECK(dtype->is_string(), w, "tensor \"", name, "\": dtype must be a string");
  const DtypeName* d = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                    [&](const DtypeName& x) { return dtype->text() == x.name; });
  EMBER_CHECK(d != std::end(kDtypes), w, "tensor \"", name, "\": unknown or unsupported dtype \"", dtype->text(), "\"");
  e.dtype = d->dtype;

  EMBER_CHECK(shape->is_array(), w, "tensor \"", name, "\": shape must be an array");
  uint64_t numel = 1;
  for (const Json& s : shape->elements()) {
    uint64_t v;
    EMBER_CHECK(s.to_uint64(v) && v <= static_cast<uint64_t>(INT64_MAX), w, "tensor \"", name,
                "\": shape entries must be non-negative integers, got ", s.text());
    EMBER_CHECK(mul_checked(numel, v, numel), w, "tensor \"", name, "\": shape overflows");
    e.shape.push_back(static_cast<int64_t>(v));
  }

  EMBER_CHECK(offsets->is_array() && offsets->elements().size() == 2 && offsets->elements()[0].to_uint64(e.begin) &&
                  offsets->elements()[1].to_uint64(e.end),
              w, "tensor \"", name, "\": data_offsets must be two non-negative integers [begin, end]");
  EMBER_CHECK(e.begin <= e.end && e.end <= data_size, w, "tensor \"", name, "\": data_offsets [", e.begin, ", ", e.end,
              "] out of range of the ", data_size, "-byte data buffer");
  uint64_t nbytes;
  EMBER_CHECK(mul_checked(numel, element_size(e.dtype), nbytes) && nbytes == e.end - e.begin, w, "tensor \"", name,
              "\": data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin, " bytes but dtype ", d->name,
              " and shape need ", numel, " elements of ", element_size(e.dtype), " bytes");
  return e;
}

}  // namespace

uint64_t safetensors_header_length(const unsigned char* prefix, uint64_t file_size, const std::string& what) {
  EMBER_CHECK(file_size >= 8, what.c_str(), "file is ", file_size,
              " bytes long, too short for the 8-byte header length (truncated file?)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  EMBER_CHECK(n <= kMaxSafetensorsHeader, what.c_str(), "header length ", n, " exceeds the limit of ",
              kMaxSafetensorsHeader, " bytes (not a safetensors file?)");
  EMBER_CHECK(n <= file_size - 8, what.c_str(), "header length ", n, " exceeds the ", file_size - 8,
              " bytes after the length prefix (truncated file?)");
  return n;
}

SafetensorsHeader parse_safetensors_header(std::string_view header, uint64_t data_size, const std::string& what) {
  const char* w = what.c_str();
  EMBER_CHECK(!header.empty() && header[0] == '{', w, "header does not start with '{' (not a safetensors file?)");
  const Json doc = Json::parse(header, w);
  EMBER_CHECK(doc.is_object(), w, "header must be a JSON object");

  SafetensorsHeader out;
  for (const auto& [name, info] : doc.members()) {
    if (name == "__metadata__") {
      EMBER_CHECK(info.is_object(), w, "__metadata__ must be an object of strings");
      for (const auto& [k, v] : info.members()) {
        EMBER_CHECK(v.is_string(), w, "__metadata__ value of \"", k, "\" must be a string");
        out.metadata.emplace_back(k, v.text());
      }
      continue;
    }
    out.entries.push_back(parse_entry(name, info, data_size, what));
  }

  // The data buffer must be exactly tiled by the tensors: no overlap (two tensors aliasing the
  // same bytes) and no holes (bytes that no tensor accounts for).
  std::stable_sort(out.entries.begin(), out.entries.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& e : out.entries) {
    EMBER_CHECK(e.begin >= pos, w, "tensor \"", e.name, "\": data_offsets [", e.begin, ", ", e.end,
                "] overlap tensor \"",
                prev ? prev->name : "", "\" ending at ", pos);
    EMBER_CHECK(e.begin == pos, w, "tensor \"", e.name, "\": data_offsets begin at ", e.begin,
                " leaving a hole after byte ", pos);
    pos = e.end;
    prev = &e;
  }
  EMBER_CHECK(pos == data_size, w, "the tensors cover ", pos, " of the ", data_size, " bytes of the data buffer");
  return out;
}

void check_bool_bytes(const unsigned char* data, uint64_t n, const std::string& what, const std::string& name) {
  for (uint64_t i = 0; i < n; ++i)
    EMBER_CHECK(data[i] <= 1, what.c_str(), "tensor \"", name, "\": byte ", i, " is ", static_cast<int>(data[i]),
                ", not a bool (0 or 1)");
}

const char* safetensors_dtype_name(ScalarType t) {
  for (const DtypeName& d : kDtypes)
    if (d.dtype == t) return d.name;
  detail::fail("save", "dtype has no safetensors name");
}

std::string safetensors_header(const std::vector<SafetensorsEntry>& entries,
                               const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i) json += ',';
      append_json_string(json, metadata[i].first);
      json += ':';
      append_json_string(json, metadata[i].second);
    }
    json += '}';
  }
  for (const SafetensorsEntry& e : entries) {
    if (json.size() > 1) json += ',';
    append_json_string(json, e.name);
    json += ":{\"dtype\":\"";
    json += safetensors_dtype_name(e.dtype);
    json += "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(e.shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json;
}

}  // namespace ember::serialize
