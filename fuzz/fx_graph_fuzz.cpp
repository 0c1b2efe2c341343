// libFuzzer target: the fx graph reader (what fx::load parses from a file's metadata) on
// arbitrary bytes; a graph it accepts must be written back and read again to the same nodes.
#include <cstdint>
#include <string>

#include "ember/error.h"
#include "fx/graph_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::fx::format;
  GraphSpec spec;
  try {
    spec = parse_graph(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const ember::Error&) {
    return 0;  // rejecting the input is the expected outcome for most inputs
  }
  const GraphSpec again = parse_graph(write_graph(spec), "fuzz round trip");
  if (again.nodes.size() != spec.nodes.size() || again.attributes.size() != spec.attributes.size()) __builtin_trap();
  return 0;
}
