// An insertion-ordered map with unique keys, as libtorch's torch::OrderedDict: what modules return
// from named_parameters() / named_buffers() and what checkpoints hold.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/error.h"

namespace ember {

template <class Key, class Value>
class OrderedDict {
 public:
  // One entry; libtorch's spelling is item.key() / item.value().
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value& operator*() { return pair_.second; }
    const Value& operator*() const { return pair_.second; }
    Value* operator->() { return &pair_.second; }
    const Value* operator->() const { return &pair_.second; }
    const std::pair<Key, Value>& pair() const { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  // `key_description` names what the keys are in error messages ("parameter", "buffer").
  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    for (const Item& item : items) insert(item.key(), item.value());
  }

  const std::string& key_description() const { return key_description_; }

  // Inserts a new key; an existing key is an error, as in libtorch.
  template <class V>
  Value& insert(Key key, V&& value) {
    EMBER_CHECK(index_.count(key) == 0, "OrderedDict", key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), Value(std::forward<V>(value)));
    return items_.back().value();
  }
  // Inserts or overwrites, keeping the first insertion's position.
  template <class V>
  Value& insert_or_assign(Key key, V&& value) {
    auto it = index_.find(key);
    if (it == index_.end()) return insert(std::move(key), std::forward<V>(value));
    return items_[it->second].value() = Value(std::forward<V>(value));
  }
  void update(const OrderedDict& other) {
    for (const Item& item : other) insert_or_assign(item.key(), item.value());
  }

  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  Value& at(const Key& key) {
    Value* v = find(key);
    EMBER_CHECK(v, "OrderedDict", key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& at(const Key& key) const { return const_cast<OrderedDict*>(this)->at(key); }
  // By position.
  Item& operator[](size_t i) { return items_.at(i); }
  const Item& operator[](size_t i) const { return items_.at(i); }

  // Removes a key; later items keep their order.
  void erase(const Key& key) {
    auto it = index_.find(key);
    EMBER_CHECK(it != index_.end(), "OrderedDict", key_description_, " '", key, "' is not defined");
    const size_t pos = it->second;
    index_.erase(it);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (auto& [k, i] : index_)
      if (i > pos) --i;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    index_.reserve(n);
  }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  Item& front() { return items_.front(); }
  Item& back() { return items_.back(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.value());
    return out;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    std::vector<std::pair<Key, Value>> out;
    out.reserve(items_.size());
    for (const Item& item : items_) out.push_back(item.pair());
    return out;
  }

 private:
  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace ember
