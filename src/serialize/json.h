// A small strict JSON reader and writer for the safetensors header. The reader accepts exactly
// RFC 8259 JSON (no comments, no trailing commas, no duplicate keys, valid UTF-8) and bounds its
// nesting depth, so a hostile header can neither recurse the stack away nor smuggle ambiguity.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::serialize {

class Json {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool boolean() const { return boolean_; }  // a Bool's value
  // Numbers keep their source text: the header only ever needs exact unsigned integers.
  bool is_number() const { return kind_ == Kind::Number; }
  // The value as a non-negative integer below 2^64, or false if it is not one.
  bool to_uint64(uint64_t& out) const;
  const std::string& text() const { return text_; }  // string value or number text
  const std::vector<Json>& elements() const { return elements_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }
  const Json* find(std::string_view key) const;

  // Throws ember::Error "<what>: malformed JSON at byte N: reason".
  static Json parse(std::string_view text, const char* what);

 private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool boolean_ = false;
  std::string text_;
  std::vector<Json> elements_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Appends s as a JSON string literal (quotes and escapes) to out.
void append_json_string(std::string& out, std::string_view s);

}  // namespace ember::serialize
