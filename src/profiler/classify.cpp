// What the profiler decides once recording stops: the names PyTorch's profiler gives Ember's
// ops, and what each block of memory held (parameters, gradients, optimizer state, activations,
// temporaries).
#include <algorithm>
#include <climits>
#include <string_view>
#include <unordered_map>

#include "profiler/recorder.h"

namespace ember::profiler {

// ---- op names ----

std::string pytorch_op_name(const char* name) {
  std::string_view n = name;
  if (n.find("::") != std::string_view::npos) return std::string(n);  // quantized::add, ...
  // Ember's ops whose name is not ATen's, and Ember's own ops (functions of torch.nn.functional
  // in Python, passes' fused ops): PyTorch's profiler never shows these.
  static const std::unordered_map<std::string_view, std::string_view> renamed = {
      {"adaptive_avg_pool2d_backward", "aten::_adaptive_avg_pool2d_backward"},
      {"convolution_relu", "ember::convolution_relu"},
      {"fused_pointwise", "ember::fused_pointwise"},
      {"fused_pointwise_", "ember::fused_pointwise_"},
      {"from_blob", "ember::from_blob"},
      {"interpolate", "ember::interpolate"},
      {"maximum_", "ember::maximum_"},
      {"minimum_", "ember::minimum_"},
      {"multi_head_attention_forward", "ember::multi_head_attention_forward"},
      {"multilabel_soft_margin_loss", "ember::multilabel_soft_margin_loss"},
      {"rms_norm_backward", "ember::rms_norm_backward"},
  };
  if (auto it = renamed.find(n); it != renamed.end()) return std::string(it->second);
  // out= forms are overloads of the op in ATen ("aten::add" with overload "out")
  constexpr std::string_view kOut = "_out";
  if (n.size() > kOut.size() && n.substr(n.size() - kOut.size()) == kOut) n.remove_suffix(kOut.size());
  return "aten::" + std::string(n);
}

// ---- memory categories ----

const char* to_string(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::Parameter: return "parameter";
    case MemoryCategory::OptimizerState: return "optimizer_state";
    case MemoryCategory::Temporary: return "temporary";
    case MemoryCategory::Activation: return "activation";
    case MemoryCategory::Gradient: return "gradient";
    case MemoryCategory::Unknown: return "unknown";
  }
  return "unknown";
}

std::vector<int64_t> MemoryTimeline::total() const {
  std::vector<int64_t> out;
  out.reserve(bytes.size());
  for (const auto& row : bytes) {
    int64_t sum = 0;
    for (int64_t b : row) sum += b;
    out.push_back(sum);
  }
  return out;
}

namespace {

// One block's life as recorded: from its allocation (or from before recording began) to its
// free (or past the end).
struct Block {
  int64_t bytes = 0;
  int64_t begin = INT64_MIN, end = INT64_MAX;
  bool allocated_here = false, freed_here = false;
  uint8_t seen = 0;  // categories noted, one bit each
};

constexpr uint8_t bit(MemoryCategory c) { return static_cast<uint8_t>(1u << static_cast<unsigned>(c)); }

MemoryCategory category_of(const Block& b) {
  for (MemoryCategory c : {MemoryCategory::Parameter, MemoryCategory::Gradient, MemoryCategory::OptimizerState})
    if (b.seen & bit(c)) return c;
  // a saved tensor made before recording began is an input (the batch), not an activation
  if ((b.seen & bit(MemoryCategory::Activation)) && b.allocated_here) return MemoryCategory::Activation;
  return b.allocated_here && b.freed_here ? MemoryCategory::Temporary : MemoryCategory::Unknown;
}

}  // namespace

std::array<int64_t, kMemoryCategories> classify_memory(std::vector<MemoryEvent>& memory, std::vector<RawNote>& notes,
                                                       int64_t memory_at_start) {
  // The blocks, in the order of the memory events; per pointer, its blocks in time order.
  std::vector<Block> blocks;
  std::vector<size_t> block_of(memory.size());
  std::unordered_map<const void*, std::vector<size_t>> by_ptr;
  for (size_t i = 0; i < memory.size(); ++i) {
    const MemoryEvent& m = memory[i];
    std::vector<size_t>& chain = by_ptr[m.ptr];
    const bool open = !chain.empty() && blocks[chain.back()].end == INT64_MAX;
    if (m.bytes > 0) {
      if (open) blocks[chain.back()].end = m.time_ns;  // its free was not seen (another thread)
      Block& b = blocks.emplace_back();
      b.bytes = m.bytes;
      b.begin = m.time_ns;
      b.allocated_here = true;
    } else if (open) {
      blocks[chain.back()].end = m.time_ns;
      blocks[chain.back()].freed_here = true;
      block_of[i] = chain.back();
      continue;
    } else {  // a block from before recording began
      Block& b = blocks.emplace_back();
      b.bytes = -m.bytes;
      b.end = m.time_ns;
      b.freed_here = true;
    }
    chain.push_back(blocks.size() - 1);
    block_of[i] = blocks.size() - 1;
  }
  // Each note marks the block that held its storage at the time; a storage with no recorded
  // block then was allocated before recording began and is alive at least until the note.
  std::stable_sort(notes.begin(), notes.end(), [](const RawNote& a, const RawNote& b) { return a.time < b.time; });
  for (const RawNote& n : notes) {
    std::vector<size_t>& chain = by_ptr[n.ptr];
    size_t found = SIZE_MAX;
    for (size_t i : chain) {
      if (blocks[i].begin <= n.time && n.time <= blocks[i].end) found = i;  // the latest that holds it
    }
    if (found == SIZE_MAX) {
      if (n.bytes <= 0) continue;  // not the allocator's
      if (!chain.empty() && blocks[chain.front()].begin <= n.time) continue;  // stale: freed since
      Block& b = blocks.emplace_back();
      b.bytes = n.bytes;
      b.end = chain.empty() ? INT64_MAX : blocks[chain.front()].begin;
      chain.insert(chain.begin(), blocks.size() - 1);
      found = blocks.size() - 1;
    }
    blocks[found].seen |= bit(n.category);
  }
  // What was in use when recording began: the blocks from before it that were told apart, the
  // rest unknown.
  std::array<int64_t, kMemoryCategories> at_start{};
  int64_t told = 0;
  for (const Block& b : blocks) {
    if (b.allocated_here) continue;
    const MemoryCategory c = category_of(b);
    if (c == MemoryCategory::Unknown) continue;
    at_start[static_cast<size_t>(c)] += b.bytes;
    told += b.bytes;
  }
  at_start[static_cast<size_t>(MemoryCategory::Unknown)] = std::max<int64_t>(0, memory_at_start - told);
  for (size_t i = 0; i < memory.size(); ++i) memory[i].category = category_of(blocks[block_of[i]]);
  return at_start;
}

MemoryTimeline profile::memory_timeline() const {
  MemoryTimeline t;
  t.times_ns.reserve(memory_events_.size() + 1);
  t.bytes.reserve(memory_events_.size() + 1);
  t.times_ns.push_back(0);
  t.bytes.push_back(memory_at_start_);
  for (const MemoryEvent& m : memory_events_) {
    std::array<int64_t, kMemoryCategories> row = t.bytes.back();
    row[static_cast<size_t>(m.category)] += m.bytes;
    t.times_ns.push_back(m.time_ns);
    t.bytes.push_back(row);
  }
  return t;
}

}  // namespace ember::profiler
