// What the profiler writes: the Chrome trace (Trace Event Format), the HTML report and the
// memory timeline. Every file goes through a temporary file renamed over the target.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "profiler/recorder.h"
#include "serialize/json.h"

namespace ember::profiler {

void write_file_atomically(const std::string& path, const std::string& text, const char* what) {
  EMBER_CHECK(!path.empty(), what, "the path is empty");
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  EMBER_CHECK(f, what, "cannot write '", path, "': ", std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = written && closed ? errno : saved_errno;
    std::remove(tmp.c_str());
    EMBER_CHECK(false, what, "cannot write '", path, "': ", std::strerror(err));
  }
}

namespace {

// Nanoseconds as the format's microseconds, exactly (three decimals): nesting survives.
std::string micros(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  return b;
}

const char* category(EventKind k) {
  switch (k) {
    case EventKind::Op: return "cpu_op";
    case EventKind::UserScope: return "user_annotation";
    case EventKind::BackwardNode: return "backward";
  }
  return "cpu_op";
}

// The outermost event of a chain of events sharing one sequence number and kind (a composite
// op and its first inner op; evaluate_function and its node): the ends of a flow arrow.
bool outermost_with_sequence(const std::vector<FunctionEvent>& events, const FunctionEvent& e) {
  if (e.sequence_nr < 0) return false;
  if (e.parent < 0) return true;
  const FunctionEvent& p = events[e.parent];
  return !(p.sequence_nr == e.sequence_nr && p.is_backward() == e.is_backward());
}

// Forward op -> backward node pairs, by thread and sequence number.
std::vector<std::pair<int64_t, int64_t>> forward_backward_pairs(const std::vector<FunctionEvent>& events) {
  std::map<std::pair<int64_t, int64_t>, int64_t> forward;
  for (const FunctionEvent& e : events)
    if (e.kind == EventKind::Op && outermost_with_sequence(events, e)) forward.emplace(std::make_pair(e.thread, e.sequence_nr), e.id);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const FunctionEvent& e : events) {
    if (!e.is_backward() || !outermost_with_sequence(events, e)) continue;
    auto it = forward.find({e.thread, e.sequence_nr});
    if (it != forward.end()) pairs.emplace_back(it->second, e.id);
  }
  return pairs;
}

}  // namespace

void profile::export_chrome_trace(const std::string& path) const {
  const std::string pid = std::to_string(getpid());
  std::string out = "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto begin_event = [&] {
    out += first ? "  {" : ",\n  {";
    first = false;
  };
  begin_event();
  out += "\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid + ", \"tid\": 0, \"ts\": 0, \"args\": {\"name\": \"ember\"}}";
  int64_t threads = 0;
  for (const FunctionEvent& e : events_) threads = std::max(threads, e.thread);
  for (const MemoryEvent& m : memory_events_) threads = std::max(threads, m.thread);
  for (int64_t t = 1; t <= threads; ++t) {
    begin_event();
    out += "\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + std::to_string(t) +
           ", \"ts\": 0, \"args\": {\"name\": \"thread " + std::to_string(t) + (t == 1 ? " (profiler)" : "") + "\"}}";
  }
  for (const FunctionEvent& e : events_) {
    begin_event();
    out += "\"ph\": \"X\", \"cat\": \"";
    out += category(e.kind);
    out += "\", \"name\": ";
    serialize::append_json_string(out, e.name);
    out += ", \"pid\": " + pid + ", \"tid\": " + std::to_string(e.thread) + ", \"ts\": " + micros(e.start_ns) +
           ", \"dur\": " + micros(e.cpu_time_total_ns()) + ", \"args\": {\"External id\": " + std::to_string(e.id);
    if (e.sequence_nr >= 0) out += ", \"Sequence number\": " + std::to_string(e.sequence_nr);
    if (!e.input_shapes.empty()) {
      out += ", \"Input Dims\": [";
      for (size_t i = 0; i < e.input_shapes.size(); ++i) {
        out += i ? ", [" : "[";
        for (size_t j = 0; j < e.input_shapes[i].size(); ++j) out += (j ? ", " : "") + std::to_string(e.input_shapes[i][j]);
        out += "]";
      }
      out += "], \"Input type\": [";
      for (size_t i = 0; i < e.input_dtypes.size(); ++i) {
        if (i) out += ", ";
        serialize::append_json_string(out, e.input_dtypes[i]);
      }
      out += "]";
    }
    if (e.flops) out += ", \"Flops\": " + std::to_string(e.flops);
    if (!e.stack.empty()) {  // as PyTorch's traces: the frames in one string, ";" between them
      std::string frames;
      for (size_t i = 0; i < e.stack.size(); ++i) frames += (i ? ";" : "") + e.stack[i];
      out += ", \"Call stack\": ";
      serialize::append_json_string(out, frames);
    }
    if (options_.profile_memory())
      out += ", \"Allocated bytes\": " + std::to_string(e.allocated_bytes) +
             ", \"Freed bytes\": " + std::to_string(e.freed_bytes);
    out += "}}";
  }
  int64_t flow = 0;
  for (const auto& [fwd, bwd] : forward_backward_pairs(events_)) {
    const FunctionEvent &f = events_[fwd], &b = events_[bwd];
    const std::string id = std::to_string(++flow);
    begin_event();
    out += "\"ph\": \"s\", \"id\": " + id + ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"pid\": " + pid +
           ", \"tid\": " + std::to_string(f.thread) + ", \"ts\": " + micros(f.start_ns) + "}";
    begin_event();
    out += "\"ph\": \"f\", \"bp\": \"e\", \"id\": " + id + ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"pid\": " + pid +
           ", \"tid\": " + std::to_string(b.thread) + ", \"ts\": " + micros(b.start_ns) + "}";
  }
  for (const MemoryEvent& m : memory_events_) {
    begin_event();
    out += "\"ph\": \"C\", \"name\": \"Memory\", \"pid\": " + pid + ", \"tid\": " + std::to_string(m.thread) +
           ", \"ts\": " + micros(m.time_ns) + ", \"args\": {\"Total Allocated\": " + std::to_string(m.total_allocated) + "}}";
  }
  out += "\n]}\n";
  write_file_atomically(path, out, "export_chrome_trace");
}

namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A stable colour per name, so one op reads the same everywhere on the timeline.
std::string colour(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  char b[32];
  std::snprintf(b, sizeof b, "hsl(%u,55%%,62%%)", h % 360);
  return b;
}

std::string fixed(double v, int decimals) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

}  // namespace

// Static HTML and SVG, drawn here: the page needs no script and no network to show everything.
void profile::export_html(const std::string& path) const {
  constexpr double kWidth = 1100, kLane = 14;
  int64_t span = 1, threads = 0;
  for (const FunctionEvent& e : events_) {
    span = std::max(span, e.end_ns);
    threads = std::max(threads, e.thread);
  }
  for (const MemoryEvent& m : memory_events_) span = std::max(span, m.time_ns);
  const double scale = kWidth / static_cast<double>(span);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Ember profile</title>\n<style>\n"
      "body{font:13px system-ui,sans-serif;margin:16px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:24px}\n"
            "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}\n"
      "td:first-child,th:first-child{text-align:left}th{background:#eee}.lane{fill:#fafafa}\n"
      "svg text{font:11px monospace}\n</style></head><body>\n<h1>Ember profile</h1>\n";
  int64_t peak = 0;
  for (const MemoryEvent& m : memory_events_) peak = std::max(peak, m.total_allocated);
  out += "<p id=\"summary\">" + std::to_string(events_.size()) + " events on " + std::to_string(threads) +
         " thread(s) over " + fixed(static_cast<double>(span) / 1e6, 3) + " ms";
  if (options_.profile_memory()) out += "; peak memory " + fixed(static_cast<double>(peak) / 1048576.0, 2) + " MiB";
  out += ".</p>\n";

  // The op table: PyTorch's columns, by self CPU time.
  const KeyAverages averages = key_averages();
  std::vector<FunctionEventAvg> rows = averages.rows();
  std::stable_sort(rows.begin(), rows.end(), [](const FunctionEventAvg& a, const FunctionEventAvg& b) {
    return a.self_cpu_time_total_ns > b.self_cpu_time_total_ns;
  });
  int64_t self_total = 0;
  for (const FunctionEventAvg& r : rows) self_total += r.self_cpu_time_total_ns;
  out += "<h2>Ops by self CPU time</h2>\n<table id=\"ops\"><tr><th>Name</th><th>Self CPU %</th><th>Self CPU (us)</th>"
         "<th>CPU total (us)</th><th>CPU time avg (us)</th>";
  if (options_.profile_memory()) out += "<th>CPU Mem (bytes)</th><th>Self CPU Mem (bytes)</th>";
  out += "<th># of Calls</th>";
  if (options_.with_flops()) out += "<th>Total MFLOPs</th>";
  out += "</tr>\n";
  for (const FunctionEventAvg& r : rows) {
    out += "<tr><td>" + html_escape(r.key) + "</td><td>" +
           fixed(self_total ? 100.0 * static_cast<double>(r.self_cpu_time_total_ns) / static_cast<double>(self_total) : 0, 2) +
           "</td><td>" + fixed(static_cast<double>(r.self_cpu_time_total_ns) / 1e3, 1) + "</td><td>" +
           fixed(static_cast<double>(r.cpu_time_total_ns) / 1e3, 1) + "</td><td>" +
           fixed(static_cast<double>(r.cpu_time_ns()) / 1e3, 1) + "</td>";
    if (options_.profile_memory())
      out += "<td>" + std::to_string(r.cpu_memory_usage) + "</td><td>" + std::to_string(r.self_cpu_memory_usage) + "</td>";
    out += "<td>" + std::to_string(r.count) + "</td>";
    if (options_.with_flops()) out += "<td>" + (r.flops ? fixed(static_cast<double>(r.flops) / 1e6, 3) : "--") + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";

  // The timeline: one band per thread, nested events stacked below their parents.
  std::vector<int> depth(events_.size(), 0);
  std::vector<int> thread_depth(static_cast<size_t>(threads) + 1, 0);
  for (const FunctionEvent& e : events_) {
    depth[e.id] = e.parent < 0 ? 0 : depth[e.parent] + 1;
    thread_depth[e.thread] = std::max(thread_depth[e.thread], depth[e.id] + 1);
  }
  std::vector<double> band_top(static_cast<size_t>(threads) + 2, 20);
  for (int64_t t = 1; t <= threads; ++t) band_top[t + 1] = band_top[t] + (thread_depth[t] + 1) * kLane + 10;
  const double height = band_top[threads + 1];
  out += "<h2>Timeline</h2>\n<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(kWidth + 120, 0) +
         "\" height=\"" + fixed(height, 0) + "\">\n";
  for (int64_t t = 1; t <= threads; ++t) {
    out += "<rect class=\"lane\" x=\"0\" y=\"" + fixed(band_top[t], 0) + "\" width=\"" + fixed(kWidth + 120, 0) +
           "\" height=\"" + fixed((thread_depth[t] + 1) * kLane, 0) + "\"/><text x=\"2\" y=\"" +
           fixed(band_top[t] + 11, 0) + "\">thread " + std::to_string(t) + "</text>\n";
  }
  for (const FunctionEvent& e : events_) {
    const double x = 110 + static_cast<double>(e.start_ns) * scale;
    const double w = std::max(0.5, static_cast<double>(e.cpu_time_total_ns()) * scale);
    out += "<rect x=\"" + fixed(x, 2) + "\" y=\"" + fixed(band_top[e.thread] + (depth[e.id] + 1) * kLane, 0) +
           "\" width=\"" + fixed(w, 2) + "\" height=\"" + fixed(kLane - 2, 0) + "\" fill=\"" + colour(e.name) +
           "\"><title>" + html_escape(e.name) + " " + fixed(static_cast<double>(e.cpu_time_total_ns()) / 1e3, 1) +
           " us</title></rect>\n";
  }
  out += "<text x=\"110\" y=\"12\">0 ms</text><text x=\"" + fixed(kWidth + 60, 0) + "\" y=\"12\">" +
         fixed(static_cast<double>(span) / 1e6, 3) + " ms</text>\n</svg>\n";

  // Memory over time: the allocator's bytes in use, as the recorded threads moved them, stacked
  // by category (PyTorch's memory_timeline colours).
  out += "<h2>Memory</h2>\n";
  if (memory_events_.empty()) {
    out += "<p id=\"memory\">No memory events (profile_memory was off, or nothing was allocated).</p>\n";
  } else {
    static const char* const kColours[kMemoryCategories] = {"darkgreen", "goldenrod", "mediumpurple",
                                                            "red",       "mediumblue", "grey"};
    const MemoryTimeline t = memory_timeline();
    int64_t high = 1;
    for (const int64_t v : t.total()) high = std::max(high, v);
    constexpr double kChart = 200;
    auto x_of = [&](int64_t ns) { return 110 + static_cast<double>(ns) * scale; };
    auto y_of = [&](int64_t bytes) { return 10 + kChart - kChart * static_cast<double>(bytes) / static_cast<double>(high); };
    out += "<svg id=\"memory\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(kWidth + 120, 0) + "\" height=\"" +
           fixed(kChart + 30, 0) + "\">\n";
    // One band per category, from the top of the ones below it to its own top: a step shape (the
    // figure holds from one event to the next).
    std::vector<int64_t> below(t.bytes.size(), 0);
    const int64_t end = std::max(span, t.times_ns.back());
    for (int c = 0; c < kMemoryCategories; ++c) {
      bool any = false;
      for (const auto& row : t.bytes) any = any || row[c] != 0;
      if (!any) continue;
      std::string upper, lower;
      for (size_t i = 0; i < t.bytes.size(); ++i) {
        const double x0 = x_of(t.times_ns[i]), x1 = x_of(i + 1 < t.times_ns.size() ? t.times_ns[i + 1] : end);
        const double top = y_of(below[i] + t.bytes[i][c]);
        upper += fixed(x0, 2) + "," + fixed(top, 2) + " " + fixed(x1, 2) + "," + fixed(top, 2) + " ";
      }
      for (size_t i = t.bytes.size(); i-- > 0;) {
        const double x0 = x_of(t.times_ns[i]), x1 = x_of(i + 1 < t.times_ns.size() ? t.times_ns[i + 1] : end);
        const double bottom = y_of(below[i]);
        lower += fixed(x1, 2) + "," + fixed(bottom, 2) + " " + fixed(x0, 2) + "," + fixed(bottom, 2) + " ";
      }
      out += "<polygon class=\"mem-" + std::string(to_string(static_cast<MemoryCategory>(c))) + "\" fill=\"" +
             kColours[c] + "\" fill-opacity=\"0.75\" stroke=\"none\" points=\"" + upper + lower + "\"><title>" +
             to_string(static_cast<MemoryCategory>(c)) + "</title></polygon>\n";
      for (size_t i = 0; i < t.bytes.size(); ++i) below[i] += t.bytes[i][c];
    }
    out += "<text x=\"2\" y=\"14\">" + fixed(static_cast<double>(high) / 1048576.0, 2) + " MiB</text><text x=\"2\" y=\"" +
           fixed(kChart + 10, 0) + "\">0 MiB</text>\n";
    out += "</svg>\n<p id=\"memory-legend\">";
    // the legend, with each category's peak
    for (int c = 0; c < kMemoryCategories; ++c) {
      int64_t peak_c = 0;
      for (const auto& row : t.bytes) peak_c = std::max(peak_c, row[c]);
      out += "<span style=\"margin-right:16px\"><span style=\"display:inline-block;width:12px;height:12px;background:" +
             std::string(kColours[c]) + "\"></span> " + to_string(static_cast<MemoryCategory>(c)) + " (peak " +
             fixed(static_cast<double>(peak_c) / 1048576.0, 2) + " MiB)</span>";
    }
    out += "</p>\n";
  }
  out += "</body></html>\n";
  write_file_atomically(path, out, "export_html");
}

void profile::export_memory_timeline(const std::string& path) const {
  const MemoryTimeline t = memory_timeline();
  std::string out = "{\"times_ns\": [";
  for (size_t i = 0; i < t.times_ns.size(); ++i) out += (i ? ", " : "") + std::to_string(t.times_ns[i]);
  out += "],\n \"total_allocated\": [";
  for (size_t i = 0; i < memory_events_.size(); ++i)
    out += (i ? ", " : "") + std::to_string(memory_events_[i].total_allocated);
  out += "],\n \"categories\": [";
  for (int c = 0; c < kMemoryCategories; ++c)
    out += std::string(c ? ", " : "") + "\"" + to_string(static_cast<MemoryCategory>(c)) + "\"";
  out += "],\n \"bytes\": [";
  for (size_t i = 0; i < t.bytes.size(); ++i) {
    out += i ? ",\n  [" : "\n  [";
    for (int c = 0; c < kMemoryCategories; ++c) out += (c ? ", " : "") + std::to_string(t.bytes[i][c]);
    out += "]";
  }
  out += "]}\n";
  write_file_atomically(path, out, "export_memory_timeline");
}

}  // namespace ember::profiler
