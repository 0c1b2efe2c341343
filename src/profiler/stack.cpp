// with_stack: each event's C++ call stack, as return addresses while recording (glibc's
// backtrace) and as names at stop() (dladdr and the C++ demangler), Ember's own frames left out.
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/recorder.h"

namespace ember::profiler {

namespace {

// The executable code of the module Ember's own functions are in, when that module is a shared
// library of its own (libember.so): its frames are left out by address while recording. In a
// static build Ember's code shares the executable with the user's; its frames are then told
// apart by name at stop() (see in_ember below), so more raw frames are kept.
struct EmberText {
  uintptr_t begin = 0, end = 0;
  bool separate = false;
  const void* base = nullptr;  // the module's load address, as dladdr tells it
};

int find_text(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* t = static_cast<EmberText*>(data);
  const auto self = reinterpret_cast<uintptr_t>(&capture_stack);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr, end = begin + ph.p_memsz;
    if (self >= begin && self < end) {
      t->begin = begin;
      t->end = end;
      t->separate = info->dlpi_name && info->dlpi_name[0] != '\0';  // the executable's name is ""
      return 1;
    }
  }
  return 0;
}

const EmberText& ember_text() {
  static const EmberText text = [] {
    EmberText t;
    dl_iterate_phdr(find_text, &t);
    Dl_info self{};
    if (dladdr(reinterpret_cast<const void*>(&capture_stack), &self) != 0) t.base = self.dli_fbase;
    return t;
  }();
  return text;
}

// Whether a demangled function name is in namespace ember (a template's name starts with its
// return type: "decltype(auto) ember::dispatch::call<...>(...)").
bool in_ember(std::string_view name) {
  const size_t paren = name.find('(');
  const std::string_view head = name.substr(0, paren);
  if (head.rfind("ember::", 0) == 0) return true;
  const size_t at = head.find(" ember::");
  return at != std::string_view::npos && head.find('<') > at;
}

}  // namespace

void capture_stack(std::vector<void*>& out, int64_t depth) {
  constexpr int kMaxFrames = 128;
  void* raw[kMaxFrames];
  const int n = backtrace(raw, kMaxFrames);
  const EmberText& text = ember_text();
  // separate: Ember's own frames are dropped here; static: by name at stop(). A few more than
  // `depth` are kept for the frames of Ember's inline functions compiled into the caller.
  const int64_t keep = text.separate ? depth + 16 : depth + 64;
  int64_t kept = 0;
  for (int i = 1; i < n && kept < keep; ++i) {  // raw[0] is this function
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (text.separate && a >= text.begin && a < text.end) continue;
    out.push_back(raw[i]);
    ++kept;
  }
}

namespace {

// A frame's name, or "" for a frame of Ember's own.
std::string frame_name(const void* frame) {
  // a return address points after the call: look up the byte before it
  const char* pc = static_cast<const char*>(frame) - 1;
  Dl_info info{};
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  char b[64];
  if (dladdr1(pc, &info, &entry, RTLD_DL_SYMENT) == 0) {
    std::snprintf(b, sizeof b, "%p", frame);
    return b;
  }
  // the nearest symbol below the address names the frame only if the address is inside it
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  const bool named = info.dli_sname && sym &&
                     (sym->st_size == 0 || pc < static_cast<const char*>(info.dli_saddr) + sym->st_size);
  // In a static build, a frame of the executable with no dynamic symbol may be Ember's (its
  // internal functions have none): left out.
  if (!named && !ember_text().separate && info.dli_fbase == ember_text().base) return std::string();
  if (named) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    std::string name = status == 0 && demangled ? demangled : info.dli_sname;
    std::free(demangled);
    return in_ember(name) ? std::string() : name;
  }
  const char* file = info.dli_fname ? info.dli_fname : "?";
  if (const char* slash = std::strrchr(file, '/')) file = slash + 1;
  std::snprintf(b, sizeof b, "+0x%zx",
                static_cast<size_t>(static_cast<const char*>(frame) - static_cast<const char*>(info.dli_fbase)));
  return file + std::string(b);
}

}  // namespace

std::vector<std::string> symbolize(const void* const* frames, size_t n, int64_t depth, FrameNames& names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n && static_cast<int64_t>(out.size()) < depth; ++i) {
    auto [it, fresh] = names.try_emplace(frames[i]);
    if (fresh) it->second = frame_name(frames[i]);
    if (!it->second.empty()) out.push_back(it->second);
  }
  return out;
}

}  // namespace ember::profiler
