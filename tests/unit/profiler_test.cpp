// The profiler (issue 19): events, shapes, nesting, forward/backward links, memory attribution,
// schedules, the Chrome trace checked against the Trace Event Format's rules, threads, bad
// input, and the HTML report rendered in headless Chromium.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "ember/ember.h"
#include "serialize/json.h"

// A user's function for with_stack: exported (the test program links with -rdynamic, so dladdr
// names it), not inlined, and not a tail call (its frame stays on the stack while exp runs).
[[gnu::noinline]] ember::Tensor profiler_test_user_function(const ember::Tensor& x) {
  ember::Tensor y = x.exp();
  asm volatile("" ::: "memory");
  return y;
}

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace T = ::ember;
#define MODULE EMBER_MODULE
#include "../../examples/fashion_mnist/net.inc"
#undef MODULE

namespace {

using namespace ember;
using namespace ember::profiler;
namespace fs = std::filesystem;

std::vector<const FunctionEvent*> named(const profile& prof, const std::string& name) {
  std::vector<const FunctionEvent*> out;
  for (const FunctionEvent& e : prof.events())
    if (e.name == name) out.push_back(&e);
  return out;
}

fs::path scratch_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ember_profiler_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Profiler, EventsAndShapesOfAKnownSequence) {
  const Tensor a = randn({2, 3}), b = randn({2, 3}), m = randn({3, 4});
  profile prof(ProfilerOptions().record_shapes(true));
  const Tensor c = a + b;
  const Tensor d = c.mm(m);
  const Tensor e = d.sum();
  prof.stop();
  std::vector<std::string> top;
  for (const FunctionEvent& ev : prof.events())
    if (ev.parent < 0) top.push_back(ev.name);
  EXPECT_EQ(top, (std::vector<std::string>{"aten::add", "aten::mm", "aten::sum"}));
  const FunctionEvent& add = *named(prof, "aten::add").at(0);
  EXPECT_EQ(add.input_shapes, (std::vector<std::vector<int64_t>>{{2, 3}, {2, 3}, {}}));
  EXPECT_EQ(add.input_dtypes, (std::vector<std::string>{"float", "float", ""}));
  const FunctionEvent& mm = *named(prof, "aten::mm").at(0);
  EXPECT_EQ(mm.input_shapes, (std::vector<std::vector<int64_t>>{{2, 3}, {3, 4}}));
  int64_t previous_end = 0;
  for (const FunctionEvent& ev : prof.events()) {
    EXPECT_EQ(ev.thread, 1);
    EXPECT_EQ(ev.kind, EventKind::Op);
    EXPECT_EQ(ev.sequence_nr, -1) << ev.name << ": nothing requires grad";
    EXPECT_GE(ev.start_ns, 0);
    EXPECT_GE(ev.end_ns, ev.start_ns);
    if (ev.parent < 0) {
      EXPECT_GE(ev.start_ns, previous_end);
      previous_end = ev.end_ns;
    }
  }
  // key_averages: one row per name; by input shape, one per (name, shapes).
  const KeyAverages avg = prof.key_averages(true);
  ASSERT_EQ(avg.rows().size(), prof.events().size());
  EXPECT_EQ(avg.rows()[0].key, "aten::add");
  EXPECT_EQ(avg.rows()[0].input_shapes, "[[2, 3], [2, 3], []]");
  const std::string table = avg.table("cpu_time_total", 10);
  for (const char* column : {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls",
                             "Input Shapes", "[[2, 3], [3, 4]]", "Self CPU time total: "})
    EXPECT_NE(table.find(column), std::string::npos) << column << "\n" << table;
  EXPECT_EQ(table.find("CPU Mem"), std::string::npos) << "memory columns only with profile_memory";
}

TEST(Profiler, NestedOpsAndUserScopes) {
  const Tensor x = randn({4, 5}), image = randn({1, 2, 5, 5}), w = randn({3, 2, 3, 3});
  profile prof;
  {
    record_function outer("my_block");
    {
      record_function inner("inner_block");
      (void)conv2d(image, w);
    }
    (void)x.relu();
  }
  prof.stop();
  const auto blocks = named(prof, "my_block");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0]->kind, EventKind::UserScope);
  EXPECT_EQ(blocks[0]->parent, -1);
  const FunctionEvent& inner = *named(prof, "inner_block").at(0);
  EXPECT_EQ(inner.parent, blocks[0]->id);
  const FunctionEvent& conv = *named(prof, "aten::conv2d").at(0);
  EXPECT_EQ(conv.parent, inner.id);
  ASSERT_FALSE(conv.children.empty()) << "conv2d's inner ops are events of their own";
  EXPECT_EQ(prof.events()[conv.children.back()].name, "aten::convolution");
  for (int64_t c : conv.children) {
    const FunctionEvent& child = prof.events()[c];
    EXPECT_EQ(child.parent, conv.id);
    EXPECT_GE(child.start_ns, conv.start_ns);
    EXPECT_LE(child.end_ns, conv.end_ns);
  }
  int64_t children_time = 0;
  for (int64_t c : conv.children) children_time += prof.events()[c].cpu_time_total_ns();
  EXPECT_EQ(conv.self_cpu_time_total_ns, conv.cpu_time_total_ns() - children_time);
  EXPECT_EQ(named(prof, "aten::relu").at(0)->parent, blocks[0]->id);
  // Without a profiler, a scope records nothing and costs one check.
  { record_function idle("idle"); }
}

TEST(Profiler, ForwardAndBackwardLinkedBySequenceNumber) {
  manual_seed(0);
  FashionNet model;
  model->eval();  // no dropout: the same ops every call
  const Tensor images = randn({2, 1, 28, 28}), labels = tensor({3, 7});
  profile prof(ProfilerOptions().record_shapes(true));
  nn::functional::cross_entropy(model->forward(images), labels).backward();
  prof.stop();
  std::map<int64_t, const FunctionEvent*> forward;
  for (const FunctionEvent& e : prof.events())
    if (e.kind == EventKind::Op && e.sequence_nr >= 0) forward.emplace(e.sequence_nr, &e);
  int backward_nodes = 0;
  std::set<std::string> linked;
  for (const FunctionEvent& e : prof.events()) {
    if (!e.is_backward() || e.sequence_nr < 0) continue;
    ++backward_nodes;
    auto it = forward.find(e.sequence_nr);
    ASSERT_NE(it, forward.end()) << e.name << " has no forward op with sequence number " << e.sequence_nr;
    EXPECT_LT(it->second->start_ns, e.start_ns);
    if (e.name.rfind("autograd::engine::evaluate_function: ", 0) != 0) linked.insert(it->second->name + "->" + e.name);
  }
  EXPECT_GT(backward_nodes, 10);
  EXPECT_TRUE(linked.count("aten::conv2d->ConvolutionBackward0") || linked.count("aten::convolution->ConvolutionBackward0"))
      << ::testing::PrintToString(linked);
  EXPECT_TRUE(linked.count("aten::relu->ReluBackward0")) << ::testing::PrintToString(linked);
  // The leaves' accumulation shows too, without a forward op.
  const auto accumulate = named(prof, "torch::autograd::AccumulateGrad");
  ASSERT_FALSE(accumulate.empty());
  EXPECT_EQ(accumulate[0]->sequence_nr, -1);
}

TEST(Profiler, MemoryAttributionSumsToTheAllocatorsNetChange) {
  const Tensor x = randn({64, 64});
  const int64_t before = static_cast<int64_t>(cpu_allocator::stats().allocated_bytes);
  profile prof(ProfilerOptions().profile_memory(true));
  Tensor kept = x * 2 + 1;  // the temporary x * 2 is freed inside add's caller
  { Tensor dropped = x.exp(); }
  Tensor big = zeros({256, 1024});  // empty, then fill_
  prof.stop();
  const int64_t after = static_cast<int64_t>(cpu_allocator::stats().allocated_bytes);
  int64_t attributed = 0, allocated = 0, freed = 0;
  for (const FunctionEvent& e : prof.events()) {
    attributed += e.self_cpu_memory_usage;
    allocated += e.allocated_bytes;
    freed += e.freed_bytes;
  }
  int64_t outside = 0;
  for (const MemoryEvent& m : prof.memory_events())
    if (m.event < 0) outside += m.bytes;
  EXPECT_EQ(attributed + outside, after - before);
  EXPECT_GE(allocated, 256 * 1024 * 4 + 3 * 64 * 64 * 4);
  EXPECT_GT(freed + (-outside), 0) << "the temporaries' frees are recorded";
  const FunctionEvent& exp = *named(prof, "aten::exp").at(0);
  EXPECT_EQ(exp.allocated_bytes, 64 * 64 * 4);
  EXPECT_EQ(named(prof, "aten::empty").at(0)->cpu_memory_usage, 256 * 1024 * 4);
  // The table's memory columns sum the same way, "[memory]" holding what no op did.
  int64_t rows = 0;
  const KeyAverages averages = prof.key_averages();
  for (const FunctionEventAvg& r : averages.rows()) rows += r.self_cpu_memory_usage;
  EXPECT_EQ(rows, after - before);
  const std::string table = prof.key_averages().table("self_cpu_memory_usage", 5);
  EXPECT_NE(table.find("CPU Mem"), std::string::npos);
  EXPECT_NE(table.find("1.00 Mb"), std::string::npos) << table;
  // The memory counter: the running total moves by each event's bytes.
  const auto& mem = prof.memory_events();
  ASSERT_FALSE(mem.empty());
  for (size_t i = 1; i < mem.size(); ++i) EXPECT_EQ(mem[i].total_allocated, mem[i - 1].total_allocated + mem[i].bytes);
  EXPECT_EQ(mem.back().total_allocated - mem.front().total_allocated + mem.front().bytes, after - before);
}

TEST(Profiler, Flops) {
  const Tensor a = randn({4, 5}), b = randn({5, 6}), x = randn({1, 2, 5, 5}), w = randn({3, 2, 3, 3});
  profile prof(ProfilerOptions().with_flops(true));
  (void)a.mm(b);
  (void)matmul(a, b);
  (void)nn::functional::linear(a, b.t());
  (void)bmm(a.unsqueeze(0).expand({3, 4, 5}), b.unsqueeze(0).expand({3, 5, 6}));
  (void)conv2d(x, w, {}, 1, 1);
  (void)a.relu();
  prof.stop();
  EXPECT_EQ(named(prof, "aten::mm").at(0)->flops, 2 * 4 * 5 * 6);
  EXPECT_EQ(named(prof, "aten::matmul").at(0)->flops, 2 * 4 * 5 * 6);
  EXPECT_EQ(named(prof, "aten::linear").at(0)->flops, 2 * 4 * 5 * 6);
  EXPECT_EQ(named(prof, "aten::bmm").at(0)->flops, 3 * 2 * 4 * 5 * 6);
  EXPECT_EQ(named(prof, "aten::conv2d").at(0)->flops, 2 * (1 * 3 * 5 * 5) * (2 * 3 * 3));
  EXPECT_EQ(named(prof, "aten::relu").at(0)->flops, 0);
  EXPECT_TRUE(named(prof, "aten::mm").at(0)->input_shapes.empty()) << "shapes are kept only with record_shapes";
  {
    profile bad(ProfilerOptions().with_flops(true));
    EXPECT_THROW(conv2d(x, w, {}, 0), Error);  // a zero stride: no FLOPs formula divides by it
    bad.stop();
    EXPECT_EQ(named(bad, "aten::conv2d").at(0)->flops, 0);
  }
  const std::string table = prof.key_averages().table("flops");
  EXPECT_NE(table.find("Total KFLOPs"), std::string::npos) << table;  // scaled to the largest, 2700
  EXPECT_NE(table.find("2.700"), std::string::npos) << table;
}

TEST(Profiler, SchedulesRecordTheActiveSteps) {
  const Tensor x = randn({3});
  std::vector<int64_t> ready_at;
  std::vector<std::vector<std::string>> steps_seen;
  {
    profile prof(ProfilerOptions()
                     .schedule(schedule(/*wait=*/1, /*warmup=*/1, /*active=*/2, /*repeat=*/2))
                     .on_trace_ready([&](profile& p) {
                       ready_at.push_back(p.step_num());
                       std::vector<std::string> steps;
                       for (const FunctionEvent& e : p.events()) {
                         if (e.name.rfind("ProfilerStep#", 0) == 0) {
                           steps.push_back(e.name);
                           EXPECT_EQ(e.children.size(), 1u);  // the step's op
                         }
                       }
                       steps_seen.push_back(steps);
                     }));
    for (int i = 0; i < 12; ++i) {
      (void)x.neg();
      prof.step();
    }
  }
  EXPECT_EQ(ready_at, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(steps_seen, (std::vector<std::vector<std::string>>{{"ProfilerStep#2", "ProfilerStep#3"},
                                                                {"ProfilerStep#6", "ProfilerStep#7"}}));
  // skip_first, and repeat = 0 (cycles until the profiler stops)
  const Schedule s = schedule(0, 0, 1, 0, 2);
  EXPECT_EQ(s(0), ProfilerAction::NONE);
  EXPECT_EQ(s(2), ProfilerAction::RECORD_AND_SAVE);
  EXPECT_EQ(s(100), ProfilerAction::RECORD_AND_SAVE);
  EXPECT_EQ(schedule(1, 1, 3)(3), ProfilerAction::RECORD);
  EXPECT_THROW(schedule(1, 1, 0), Error);
  EXPECT_THROW(schedule(1, 1, -2), Error);
  EXPECT_THROW(schedule(-1, 0, 1), Error);
}

// prof.step() inside a user range: the step range ends there, and the user range still ends
// where its scope does (not the step range in its place).
TEST(Profiler, StepInsideAUserRange) {
  const Tensor x = randn({3});
  profile prof(ProfilerOptions().schedule(schedule(0, 0, 3, 1)));
  for (int i = 0; i < 2; ++i) {
    record_function scope("user_step");
    (void)x.neg();
    prof.step();
    (void)x.exp();
  }
  prof.stop();
  const auto users = named(prof, "user_step");
  ASSERT_EQ(users.size(), 2u);
  const auto exps = named(prof, "aten::exp");
  ASSERT_EQ(exps.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const FunctionEvent& u = *users[i];
    ASSERT_EQ(u.children.size(), 2u) << "neg and the next step's range";
    EXPECT_EQ(prof.events()[u.children[0]].name, "aten::neg");
    EXPECT_EQ(prof.events()[u.children[1]].name, "ProfilerStep#" + std::to_string(i + 1));
    EXPECT_EQ(exps[i]->parent, u.children[1]);
    EXPECT_GE(u.end_ns, exps[i]->end_ns) << "the user range ends with its scope";
  }
  EXPECT_EQ(named(prof, "ProfilerStep#0").at(0)->children, std::vector<int64_t>{users[0]->id});
  EXPECT_EQ(named(prof, "ProfilerStep#1").size(), 1u);
  EXPECT_EQ(named(prof, "ProfilerStep#2").size(), 1u);
}

TEST(Profiler, TensorboardHandlerWritesOneTracePerCycle) {
  const fs::path dir = scratch_dir("tb") / "traces";  // created by the handler
  const Tensor x = randn({3});
  {
    profile prof(ProfilerOptions()
                     .schedule(schedule(0, 0, 1, 2))
                     .on_trace_ready(tensorboard_trace_handler(dir.string(), "worker0")));
    for (int i = 0; i < 4; ++i) {
      (void)x.neg();
      prof.step();
    }
  }
  std::set<std::string> files;
  for (const auto& f : fs::directory_iterator(dir)) files.insert(f.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"worker0.1.pt.trace.json", "worker0.2.pt.trace.json"}));
  fs::remove_all(dir.parent_path());
}

// The Trace Event Format's rules: every event has ph, ts, pid and tid; complete events nest per
// thread; flow events pair up, start before they finish; counters carry numbers.
void check_trace(const serialize::Json& trace, int64_t* flows_out) {
  ASSERT_TRUE(trace.is_object());
  const serialize::Json* events = trace.find("traceEvents");
  ASSERT_TRUE(events && events->is_array());
  std::map<std::string, std::vector<std::pair<double, double>>> slices;  // per pid:tid
  std::map<std::string, std::vector<std::pair<char, double>>> flows;     // per id
  for (const serialize::Json& e : events->elements()) {
    ASSERT_TRUE(e.is_object());
    for (const char* key : {"ph", "ts", "pid", "tid"}) ASSERT_TRUE(e.find(key)) << "an event without " << key;
    const std::string ph = e.find("ph")->text();
    const double ts = std::stod(e.find("ts")->text());
    EXPECT_GE(ts, 0);
    const std::string row = e.find("pid")->text() + ":" + e.find("tid")->text();
    if (ph == "X") {
      ASSERT_TRUE(e.find("dur") && e.find("name") && e.find("name")->is_string());
      slices[row].emplace_back(ts, ts + std::stod(e.find("dur")->text()));
    } else if (ph == "s" || ph == "f") {
      ASSERT_TRUE(e.find("id"));
      flows[e.find("id")->text()].emplace_back(ph[0], ts);
    } else if (ph == "C") {
      ASSERT_TRUE(e.find("args") && e.find("args")->is_object());
      for (const auto& [k, v] : e.find("args")->members()) EXPECT_TRUE(v.is_number()) << k;
    } else {
      EXPECT_EQ(ph, "M");
    }
  }
  for (auto& [row, s] : slices) {
    std::sort(s.begin(), s.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [begin, end] : s) {
      while (!open.empty() && open.back() <= begin) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back()) << "slices overlap without nesting on " << row;
      }
      open.push_back(end);
    }
  }
  for (const auto& [id, f] : flows) {
    ASSERT_EQ(f.size(), 2u) << "flow " << id;
    EXPECT_EQ(f[0].first, 's');
    EXPECT_EQ(f[1].first, 'f');
    EXPECT_LE(f[0].second, f[1].second);
  }
  *flows_out = static_cast<int64_t>(flows.size());
}

TEST(Profiler, ChromeTraceIsValidTraceEventFormat) {
  const fs::path dir = scratch_dir("trace");
  manual_seed(1);
  nn::Linear layer(8, 4);
  const Tensor x = randn({3, 8});
  profile prof(ProfilerOptions().record_shapes(true).profile_memory(true).with_flops(true));
  {
    record_function scope("step \"one\"");  // a name the JSON must escape
    layer->forward(x).relu().sum().backward();
  }
  prof.stop();
  const fs::path path = dir / "trace.json";
  prof.export_chrome_trace(path.string());
  const serialize::Json trace = serialize::Json::parse(read_text(path), "trace");
  int64_t flows = 0;
  check_trace(trace, &flows);
  EXPECT_GE(flows, 3) << "linear, relu and sum link to their backward nodes";
  const std::string text = read_text(path);
  EXPECT_NE(text.find("\"Input Dims\": [[3, 8], [4, 8], [4]]"), std::string::npos);
  EXPECT_NE(text.find("step \\\"one\\\""), std::string::npos);
  EXPECT_NE(text.find("\"ph\": \"C\""), std::string::npos) << "the memory counter track";
  // Memory timeline: as many points as memory events.
  prof.export_memory_timeline((dir / "memory.json").string());
  const serialize::Json timeline = serialize::Json::parse(read_text(dir / "memory.json"), "timeline");
  EXPECT_EQ(timeline.find("total_allocated")->elements().size(), prof.memory_events().size());
  fs::remove_all(dir);
}

TEST(Profiler, FailedExportLeavesNoFile) {
  const fs::path dir = scratch_dir("fail");
  profile prof;
  (void)randn({2}).neg();
  prof.stop();
  try {
    prof.export_chrome_trace("/nonexistent_ember_dir/trace.json");
    FAIL() << "expected ember::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("export_chrome_trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent_ember_dir/trace.json"), std::string::npos) << e.what();
  }
  // A target that cannot be replaced (a directory): the temporary file is removed again.
  fs::create_directories(dir / "taken");
  EXPECT_THROW(prof.export_chrome_trace((dir / "taken").string()), Error);
  EXPECT_THROW(prof.export_html((dir / "taken").string()), Error);
  std::vector<std::string> left;
  for (const auto& f : fs::directory_iterator(dir)) left.push_back(f.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"taken"});
  EXPECT_TRUE(fs::is_empty(dir / "taken"));
  fs::remove_all(dir);
}

TEST(Profiler, BadInput) {
  {
    profile outer;
    EXPECT_THROW(profile inner, Error);  // nested profilers: the inner raises, as PyTorch's
    outer.stop();
    EXPECT_THROW(outer.stop(), Error);  // stopping a profiler that is not running
    EXPECT_THROW(outer.step(), Error);
    EXPECT_TRUE(outer.events().empty());
    // key_averages before any event: an empty table
    const std::string table = outer.key_averages().table();
    EXPECT_NE(table.find("Self CPU time total: 0.000us"), std::string::npos) << table;
    EXPECT_THROW(outer.key_averages().table("cpu_time_totl"), Error);
    profile after;  // once stopped, another may start
  }
  EXPECT_THROW(profile(ProfilerOptions().with_stack(true).stack_depth(0)), Error);
  {
    profile p;
    p.stop();
    EXPECT_THROW(p.key_averages(false, -1), Error);
  }
  // the profile that failed to start left nothing behind
  profile again;
  again.stop();
}

// Every thread that runs ops while the profiler records gets a row of its own, as PyTorch's
// profiler follows every thread; RecordThread attaches a thread before its first op.
TEST(Profiler, ThreadsGetTheirOwnRows) {
  const Tensor x = randn({4});
  profile prof(ProfilerOptions().record_shapes(true));
  (void)x.neg();
  auto work = [&](bool joined) {
    std::optional<RecordThread> guard;
    if (joined) guard.emplace();
    record_function scope(joined ? "joined" : "not_joined");
    for (int i = 0; i < 3; ++i) (void)x.exp();
  };
  std::thread t1(work, true), t2(work, true), t3(work, false);
  t1.join();
  t2.join();
  t3.join();
  prof.stop();
  std::map<int64_t, int> exps;
  std::map<std::string, int> parents;
  for (const FunctionEvent& e : prof.events()) {
    if (e.name == "aten::exp") {
      ++exps[e.thread];
      ASSERT_GE(e.parent, 0);
      ++parents[prof.events()[e.parent].name];
      EXPECT_EQ(prof.events()[e.parent].thread, e.thread);
    }
  }
  EXPECT_EQ(named(prof, "aten::neg").at(0)->thread, 1);
  EXPECT_EQ(exps.size(), 3u);
  for (const auto& [thread, n] : exps) {
    EXPECT_NE(thread, 1);
    EXPECT_EQ(n, 3);
  }
  EXPECT_EQ(parents["joined"], 6);
  EXPECT_EQ(parents["not_joined"], 3) << "a thread that never joined is followed from its first range";
}

// A thread followed in one session records nothing between sessions and is followed again by
// the next one, in a row of its own there; its ops after the profiler stopped leave no trace.
TEST(Profiler, ThreadsAreFollowedAgainByTheNextProfiler) {
  const Tensor x = randn({4});
  std::mutex m;
  std::condition_variable cv;
  int phase = 0, done = -1;  // the main thread sets phase; the worker reports the phase it ran
  std::thread worker([&] {
    for (int p = 1; p <= 3; ++p) {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return phase == p; });
      lock.unlock();
      for (int i = 0; i < p; ++i) (void)x.exp();
      lock.lock();
      done = p;
      cv.notify_all();
    }
  });
  auto run_phase = [&](int p) {
    std::unique_lock<std::mutex> lock(m);
    phase = p;
    cv.notify_all();
    cv.wait(lock, [&] { return done == p; });
  };
  profile first;
  run_phase(1);
  first.stop();
  run_phase(2);  // between the profilers: not recorded, and the worker lets its recorder go
  profile second;
  run_phase(3);
  second.stop();
  worker.join();
  ASSERT_EQ(named(first, "aten::exp").size(), 1u);
  EXPECT_NE(named(first, "aten::exp")[0]->thread, 1);
  ASSERT_EQ(named(second, "aten::exp").size(), 3u);
  for (const FunctionEvent* e : named(second, "aten::exp")) EXPECT_EQ(e->thread, 2);
}

// OpenMP workers running Ember ops join as any other thread (the starting thread records already).
TEST(Profiler, OpenMPWorkersGetTheirOwnRows) {
  const Tensor x = randn({4});
  profile prof;
  int team = 0;
#pragma omp parallel
  {
    RecordThread join;
    (void)x.neg();
#pragma omp single
    team = omp_get_num_threads();
  }
  prof.stop();
  std::set<int64_t> threads;
  for (const FunctionEvent* e : named(prof, "aten::neg")) threads.insert(e->thread);
  EXPECT_EQ(named(prof, "aten::neg").size(), static_cast<size_t>(team));
  EXPECT_EQ(threads.size(), static_cast<size_t>(team));
  EXPECT_TRUE(threads.count(1));
}

// The report in a real browser: headless Chromium renders it offline, the rendered page shows the
// ops, and a screenshot is left next to the test's output for a person to look at.
TEST(Profiler, HtmlReportRendersInHeadlessChromium) {
  manual_seed(2);
  FashionNet model;
  model->eval();
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  const Tensor images = randn({4, 1, 28, 28}), labels = tensor({1, 2, 3, 4});
  profile prof(ProfilerOptions().record_shapes(true).profile_memory(true).with_flops(true));
  prof.register_module(*model);
  prof.register_optimizer(opt);
  for (int step = 0; step < 2; ++step) {
    record_function scope("train_step");
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(images), labels).backward();
    opt.step();
  }
  prof.stop();
  const fs::path html = fs::absolute("profiler_report.html");
  prof.export_html(html.string());
  const std::string page = read_text(html);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg")) << "no network resources";
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);

  const std::string chrome = "chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                             "--user-data-dir=" + scratch_dir("chromium").string();
  const fs::path dom_file = fs::absolute("profiler_report.dom.html");
  const std::string dump = chrome + " --dump-dom file://" + html.string() + " > " + dom_file.string() + " 2>/dev/null";
  ASSERT_EQ(std::system(dump.c_str()), 0) << dump;
  const std::string dom = read_text(dom_file);
  for (const char* shown : {"id=\"ops\"", "id=\"timeline\"", "id=\"memory\"", "<td>aten::convolution</td>", "<td>aten::linear</td>",
                            "<td>train_step</td>", "ConvolutionBackward0", "thread 1", "Optimizer.step#Adam.step",
                            "class=\"mem-parameter\"", "class=\"mem-gradient\"", "class=\"mem-optimizer_state\"",
                            "id=\"memory-legend\""})
    EXPECT_NE(dom.find(shown), std::string::npos) << shown;
  const fs::path png = fs::absolute("profiler_report.png");
  fs::remove(png);
  const std::string shot = chrome + " --screenshot=" + png.string() + " --window-size=1280,2000 file://" +
                           html.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(shot.c_str()), 0) << shot;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 10000u);
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  fs::remove(dom_file);
}

// The names PyTorch 1.13's profiler prints for the same program (a small MLP's Adam step under
// torch.profiler, Debian's python3-torch): ATen ops as "aten::<op>", the engine's ranges and nodes,
// the optimizer's ranges. (Ember's graph differs where its ops differ: linear is one op with its
// own LinearBackward0, where PyTorch's decomposes into t and addmm.)
TEST(Profiler, NamesArePyTorchs) {
  manual_seed(3);
  nn::Sequential model(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 4));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  const Tensor x = randn({3, 8}), y = tensor({0, 1, 2});
  Tensor out = empty({3, 8});
  profile prof(ProfilerOptions().with_flops(true));
  {
    record_function step("train_step");
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(x), y).backward();
    opt.step();
  }
  add_out(out, x, x);
  Tensor product = empty({3, 3});
  mm_out(product, x, x.t());
  prof.stop();
  std::set<std::string> names;
  for (const FunctionEvent& e : prof.events()) {
    names.insert(e.name);
    if (e.kind == EventKind::Op) EXPECT_EQ(e.name.rfind("aten::", 0), 0u) << e.name;
  }
  for (const char* expected :
       {"train_step", "Optimizer.zero_grad#Adam.zero_grad", "aten::linear", "aten::relu", "aten::cross_entropy_loss",
        "aten::log_softmax", "aten::nll_loss", "autograd::engine::evaluate_function: NllLossBackward0",
        "NllLossBackward0", "aten::nll_loss_backward", "autograd::engine::evaluate_function: LogSoftmaxBackward0",
        "LogSoftmaxBackward0", "aten::_log_softmax_backward_data", "autograd::engine::evaluate_function: ReluBackward0",
        "ReluBackward0", "aten::threshold_backward", "aten::mm", "aten::sum",
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad",
        "Optimizer.step#Adam.step", "aten::add"})
    EXPECT_TRUE(names.count(expected)) << expected << " in " << ::testing::PrintToString(names);
  EXPECT_FALSE(names.count("aten::add_out")) << "out= forms are their op's overload, as in ATen";
  EXPECT_EQ(named(prof, "aten::mm").back()->flops, 2 * 3 * 8 * 3) << "mm_out counts as mm";
  // The engine's range holds what it does with a node's gradients: the bias gradient summed to
  // the bias's shape is inside the evaluate_function range of the linear's backward node.
  int sums_in_backward = 0;
  for (const FunctionEvent* e : named(prof, "aten::sum")) {
    for (int64_t p = e->parent; p >= 0; p = prof.events()[p].parent) {
      if (prof.events()[p].name == "autograd::engine::evaluate_function: LinearBackward0") {
        ++sums_in_backward;
        break;
      }
    }
  }
  EXPECT_EQ(sums_in_backward, 2) << "one per linear layer's bias";
  // Each evaluate_function range holds its node's range, with the same sequence number.
  for (const FunctionEvent& e : prof.events()) {
    if (e.kind != EventKind::BackwardNode || e.name.rfind("autograd::engine::evaluate_function: ", 0) != 0) continue;
    ASSERT_FALSE(e.children.empty()) << e.name;
    const FunctionEvent& node = prof.events()[e.children[0]];
    EXPECT_EQ("autograd::engine::evaluate_function: " + node.name, e.name);
    EXPECT_EQ(node.sequence_nr, e.sequence_nr);
  }
  const std::string table = prof.key_averages().table("count");
  EXPECT_NE(table.find("aten::threshold_backward"), std::string::npos) << table;
}

// The memory view by category: an MLP's Adam step with the module and the optimizer registered.
// The parameters' sizes are whole allocator blocks (multiples of 64 bytes), so each category's
// bytes are the tensors' nbytes.
TEST(Profiler, MemoryTimelineByCategory) {
  manual_seed(4);
  nn::Sequential model(nn::Linear(16, 32), nn::ReLU(), nn::Linear(32, 16));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  const Tensor x = randn({8, 16}), y = randint(0, 16, {8});
  auto train_step = [&] {
    opt.zero_grad();
    nn::functional::cross_entropy(model->forward(x), y).backward();
    opt.step();
  };
  int64_t parameter_bytes = 0;
  for (const Tensor& p : model->parameters()) parameter_bytes += p.nbytes();
  ASSERT_EQ(parameter_bytes, (16 * 32 + 32 + 32 * 16 + 16) * 4);
  for (int round = 0; round < 2; ++round) {
    // round 0: the first step, which makes the gradients and Adam's state while recording;
    // round 1: a later step, where they exist before recording begins
    if (round == 1) train_step();
    const fs::path dir = scratch_dir("timeline" + std::to_string(round));
    profile prof(ProfilerOptions().profile_memory(true));
    prof.register_module(*model);
    prof.register_optimizer(opt);
    train_step();
    prof.stop();
    const int64_t in_use = static_cast<int64_t>(cpu_allocator::stats().allocated_bytes);
    const MemoryTimeline t = prof.memory_timeline();
    ASSERT_EQ(t.times_ns.size(), prof.memory_events().size() + 1);
    const auto at = [&](size_t point, MemoryCategory c) { return t.bytes[point][static_cast<size_t>(c)]; };
    const std::vector<int64_t> total = t.total();
    for (size_t i = 1; i < total.size(); ++i) {
      EXPECT_EQ(total[i], prof.memory_events()[i - 1].total_allocated) << "point " << i;
      for (int c = 0; c < kMemoryCategories; ++c) EXPECT_GE(t.bytes[i][c], 0) << to_string(static_cast<MemoryCategory>(c));
    }
    EXPECT_EQ(total.back(), in_use) << "the categories add up to the allocator's bytes in use";
    const size_t last = t.bytes.size() - 1;
    EXPECT_EQ(at(last, MemoryCategory::Parameter), parameter_bytes);
    EXPECT_EQ(at(last, MemoryCategory::Gradient), parameter_bytes);
    EXPECT_EQ(at(last, MemoryCategory::OptimizerState), 2 * parameter_bytes) << "exp_avg and exp_avg_sq";
    EXPECT_EQ(at(0, MemoryCategory::Parameter), parameter_bytes) << "the parameters were there before recording";
    EXPECT_EQ(at(0, MemoryCategory::Gradient), round == 0 ? 0 : parameter_bytes);
    EXPECT_EQ(at(0, MemoryCategory::OptimizerState), round == 0 ? 0 : 2 * parameter_bytes);
    // After backward (the optimizer's step begins): every gradient is there, the activations
    // autograd saved are gone again; while the forward ran, some were held.
    const FunctionEvent& step = *named(prof, "Optimizer.step#Adam.step").at(0);
    size_t before_step = 0, peak_activations = 0;
    int64_t activations = 0;
    for (size_t i = 1; i < t.times_ns.size() && t.times_ns[i] < step.start_ns; ++i) {
      before_step = i;
      if (at(i, MemoryCategory::Activation) > activations) {
        activations = at(i, MemoryCategory::Activation);
        peak_activations = i;
      }
    }
    EXPECT_EQ(at(before_step, MemoryCategory::Gradient), parameter_bytes);
    EXPECT_EQ(at(before_step, MemoryCategory::Activation), 0);
    EXPECT_GT(peak_activations, 0u);
    EXPECT_GE(activations, 8 * 32 * 4) << "at least the hidden layer's output, saved by relu";
    int64_t temporaries = 0;
    for (const MemoryEvent& m : prof.memory_events())
      if (m.category == MemoryCategory::Temporary && m.bytes > 0) temporaries += m.bytes;
    EXPECT_GT(temporaries, 0);
    // The file: one row of bytes per point, one number per category.
    prof.export_memory_timeline((dir / "memory.json").string());
    const serialize::Json json = serialize::Json::parse(read_text(dir / "memory.json"), "timeline");
    ASSERT_EQ(json.find("categories")->elements().size(), static_cast<size_t>(kMemoryCategories));
    EXPECT_EQ(json.find("categories")->elements()[0].text(), "parameter");
    ASSERT_EQ(json.find("bytes")->elements().size(), t.bytes.size());
    EXPECT_EQ(json.find("bytes")->elements().back().elements()[0].text(), std::to_string(parameter_bytes));
    fs::remove_all(dir);
  }
  // Without registration the engine's accumulation still tells parameters and gradients apart.
  profile prof(ProfilerOptions().profile_memory(true));
  train_step();
  prof.stop();
  const MemoryTimeline t = prof.memory_timeline();
  EXPECT_EQ(t.bytes.back()[static_cast<size_t>(MemoryCategory::Gradient)], parameter_bytes);
  EXPECT_EQ(t.bytes.back()[static_cast<size_t>(MemoryCategory::Parameter)], parameter_bytes);
  EXPECT_EQ(t.bytes.back()[static_cast<size_t>(MemoryCategory::OptimizerState)], 0) << "not told without it";
}

// with_stack: each op's C++ call stack outside Ember, innermost first.
TEST(Profiler, WithStackRecordsTheCallersFrames) {
  const Tensor x = randn({4});
  profile prof(ProfilerOptions().with_stack(true).stack_depth(4));
  (void)profiler_test_user_function(x);
  prof.stop();
  const auto exps = named(prof, "aten::exp");
  ASSERT_EQ(exps.size(), 1u);
  const std::vector<std::string>& stack = exps[0]->stack;
  ASSERT_FALSE(stack.empty());
  EXPECT_LE(stack.size(), 4u);
  EXPECT_NE(stack[0].find("profiler_test_user_function"), std::string::npos)
      << "the innermost frame outside Ember is the user's: " << ::testing::PrintToString(stack);
  for (const std::string& f : stack) EXPECT_NE(f.rfind("ember::", 0), 0u) << f;
  // in the trace, as PyTorch's "Call stack" argument, and in the table grouped by stack
  const fs::path dir = scratch_dir("stack");
  prof.export_chrome_trace((dir / "trace.json").string());
  const std::string trace = read_text(dir / "trace.json");
  EXPECT_NE(trace.find("\"Call stack\": \"profiler_test_user_function"), std::string::npos) << trace;
  const KeyAverages by_stack = prof.key_averages(false, 1);
  ASSERT_EQ(by_stack.rows().size(), 1u);
  EXPECT_EQ(by_stack.rows()[0].stack, std::vector<std::string>{stack[0]});
  const std::string table = by_stack.table();
  EXPECT_NE(table.find("Source Location"), std::string::npos) << table;
  EXPECT_NE(table.find("profiler_test_user_function"), std::string::npos) << table;
  fs::remove_all(dir);
  // off, events carry no stack
  profile plain;
  (void)profiler_test_user_function(x);
  plain.stop();
  EXPECT_TRUE(named(plain, "aten::exp").at(0)->stack.empty());
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
