// ember_dist_bench: the distributed cases of issue 20, each against its baseline (Gloo's own
// all-reduce, one process, PyTorch's Python DDP, the unsharded optimizer). A case needs several
// processes, so the program starts copies of itself as ranks (`--worker KIND`, rendezvous by
// env:// as ember-run's) and reads back what each measured; ranks that outlive a deadline are
// killed. Output as ember_bench's (report.h). docs/distributed.md describes the cases.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include "ember/distributed.h"
#include "ember/distributed/zero_redundancy_optimizer.h"
#include "ember/ember.h"
#include "ember/nn/parallel/distributed.h"
#include "registry.h"
#include "report.h"

extern char** environ;

namespace dist = ember::distributed;
using Clock = std::chrono::steady_clock;

namespace {

// ---- the ranks' side ----------------------------------------------------------------------------
// Each worker prints its figures as lines "result <name> <value>" on stdout.

void emit(const char* name, double value) {
  std::printf("result %s %.9g\n", name, value);
  std::fflush(stdout);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v) throw std::runtime_error(std::string("ember_dist_bench --worker: ") + name + " is not set");
  return std::atoi(v);
}

// all_reduce of `mb` MB of float32, alternating with Gloo's own all-reduce (the function and
// reduction PyTorch's ProcessGroupGloo calls) on the same buffer over a second Gloo context.
void worker_allreduce(double mb, int reps, const std::string& dir) {
  dist::init_process_group("gloo");
  const int rank = dist::get_rank(), size = dist::get_world_size();
  ember::Tensor t = ember::empty({static_cast<int64_t>(mb * (1 << 20) / 4)}, ember::kFloat);

  gloo::rendezvous::FileStore store(dir);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  auto device = gloo::transport::tcp::CreateDevice(attr);
  context->connectFullMesh(store, device);
  uint32_t tag = 0;
  auto gloo_allreduce = [&] {
    gloo::AllreduceOptions o(context);
    o.setOutput(t.data_ptr<float>(), static_cast<size_t>(t.numel()));
    o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    o.setTag(tag++);
    gloo::allreduce(o);
  };

  std::vector<double> ember_s, gloo_s;
  for (int r = 0; r < reps + 1; ++r) {  // the first round warms up both
    for (int side = 0; side < 2; ++side) {
      const bool ember_side = (side == 0) == (r % 2 == 0);  // alternate which side goes first
      t.fill_(1.0);
      dist::barrier();
      const auto t0 = Clock::now();
      if (ember_side) {
        dist::all_reduce(t);
      } else {
        gloo_allreduce();
      }
      const double s = seconds_since(t0);
      if (r > 0) (ember_side ? ember_s : gloo_s).push_back(s);
      if (t.data_ptr<float>()[0] != static_cast<float>(size))
        throw std::runtime_error("all_reduce: wrong sum " + std::to_string(t.data_ptr<float>()[0]));
    }
  }
  emit("ember_s", median(ember_s));
  emit("gloo_s", median(gloo_s));
  dist::destroy_process_group();
}

ember::nn::Sequential make_mlp() {
  ember::manual_seed(0);
  return ember::nn::Sequential(ember::nn::Linear(784, 256), ember::nn::ReLU(), ember::nn::Linear(256, 128),
                               ember::nn::ReLU(), ember::nn::Linear(128, 10));
}

// The median time of one Adam step of the 784-256-128-10 MLP at batch 64 on one thread, under
// DDP when the world has more than one rank, and where it goes: the medians of its forward, its
// backward (which waits for the gradients' all-reduce) and the optimizer's step, and of a bare
// all_reduce of as many floats as the model's gradients.
void worker_step(int steps, int blocks) {
  ember::set_num_threads(1);
  const int size = env_int("WORLD_SIZE");
  if (size > 1) dist::init_process_group("gloo");
  ember::nn::Sequential mlp = make_mlp();
  std::optional<ember::nn::parallel::DistributedDataParallel> ddp;
  if (size > 1) ddp.emplace(mlp);
  ember::optim::Adam opt(mlp->parameters(), ember::optim::AdamOptions(1e-3));
  ember::Generator gen(env_int("RANK") + 1);
  const ember::Tensor x = ember::randn({64, 784}, &gen);
  const ember::Tensor y = ember::randint(0, 10, {64}, &gen, ember::kLong);
  std::vector<double> forward_s, backward_s, optimizer_s;
  auto step = [&] {
    opt.zero_grad();
    const auto t0 = Clock::now();
    const ember::Tensor loss = ember::nn::functional::cross_entropy(ddp ? (*ddp)->forward(x) : mlp->forward(x), y);
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    opt.step();
    forward_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    backward_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    optimizer_s.push_back(seconds_since(t2));
  };
  for (int i = 0; i < steps; ++i) step();  // warm-up: caches, allocator, Adam's state
  forward_s.clear();
  backward_s.clear();
  optimizer_s.clear();
  std::vector<double> per_step;
  for (int b = 0; b < blocks; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) step();
    per_step.push_back(seconds_since(t0) / steps);
  }
  emit("step_s", median(per_step));
  emit("forward_s", median(forward_s));
  emit("backward_s", median(backward_s));
  emit("optimizer_s", median(optimizer_s));
  if (size > 1) {
    int64_t numel = 0;
    for (const ember::Tensor& p : mlp->parameters()) numel += p.numel();
    ember::Tensor grads = ember::zeros({numel});
    std::vector<double> allreduce_s;
    for (int i = 0; i < steps; ++i) {
      const auto t0 = Clock::now();
      dist::all_reduce(grads);
      allreduce_s.push_back(seconds_since(t0));
    }
    emit("allreduce_s", median(allreduce_s));
    dist::destroy_process_group();
  }
}

int64_t state_bytes(const ember::optim::Optimizer& opt) {
  int64_t bytes = 0;
  for (const auto& item : opt.state_dict().state) bytes += item.value().nbytes();
  return bytes;
}

// Each rank's Adam state under ZeroRedundancyOptimizer after one step, and an unsharded Adam's.
void worker_zero() {
  dist::init_process_group("gloo");
  ember::nn::Sequential mlp = make_mlp(), ref = make_mlp();
  dist::optim::ZeroRedundancyOptimizer zero(mlp->parameters(), dist::optim::optimizer_class<ember::optim::Adam>,
                                            ember::optim::AdamOptions(1e-3));
  ember::optim::Adam adam(ref->parameters(), ember::optim::AdamOptions(1e-3));
  const ember::Tensor x = ember::randn({64, 784});
  for (ember::nn::Sequential* m : {&mlp, &ref}) (*m)->forward(x).sum().backward();
  zero.step();
  adam.step();
  emit("sharded_bytes", static_cast<double>(state_bytes(zero.optim())));
  emit("unsharded_bytes", static_cast<double>(state_bytes(adam)));
  dist::destroy_process_group();
}



// The all-reduce sizes --simulate times, in float32 elements (1 KB to 4 MB).
const std::vector<int64_t> kSweepElements = {256, 4096, 65536, 262144, 1048576};

// The median time of an all-reduce of each of kSweepElements, as DDP's buckets run it (without the
// per-collective shape check: the ring's messages only).
void worker_sweep(int reps) {
  dist::init_process_group("gloo");
  for (int64_t n : kSweepElements) {
    std::vector<ember::Tensor> t{ember::zeros({n})};
    std::vector<double> times;
    for (int i = 0; i < reps + 2; ++i) {  // two to warm up
      const auto t0 = Clock::now();
      dist::group_world()->allreduce(t, {.reduce_op = dist::ReduceOp::SUM, .shapes_verified = true})->wait();
      if (i >= 2) times.push_back(seconds_since(t0));
    }
    emit(("allreduce_s_" + std::to_string(n)).c_str(), median(times));
  }
  dist::destroy_process_group();
}

int run_worker(const std::string& kind, const std::vector<std::string>& args) {
  auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
  try {
    if (kind == "allreduce") {
      worker_allreduce(std::stod(arg(0)), std::stoi(arg(1)), arg(2));
    } else if (kind == "step") {
      worker_step(std::stoi(arg(0)), std::stoi(arg(1)));
    } else if (kind == "zero") {
      worker_zero();
    } else if (kind == "sweep") {
      worker_sweep(std::stoi(arg(0)));
    } else {
      std::fprintf(stderr, "ember_dist_bench: unknown worker '%s'\n", kind.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    const char* rank = std::getenv("RANK");
    std::fprintf(stderr, "ember_dist_bench worker %s (rank %s): %s\n", kind.c_str(), rank ? rank : "?", e.what());
    return 1;
  }
  return 0;
}

// ---- the launcher's side ------------------------------------------------------------------------

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// A port that was free a moment ago (rank 0's store then binds it).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) close(fd);
  if (!ok) throw std::runtime_error("ember_dist_bench: cannot find a free port");
  return ntohs(addr.sin_port);
}

using Figures = std::map<std::string, double>;

// Runs `argv` as ranks 0..n-1 of one world (env:// variables as ember-run sets them, one OpenMP
// thread each) and returns each rank's "result" lines. A rank that fails or outlives the
// deadline fails the case; the others are killed.
std::vector<Figures> run_ranks(const std::vector<std::string>& argv, int n, std::chrono::seconds deadline = std::chrono::seconds(120)) {
  const int port = free_port();
  std::vector<pid_t> pids;
  std::vector<int> fds;
  std::vector<std::string> out(n);
  auto kill_all = [&] {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
    for (int fd : fds) close(fd);
  };
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const std::string s = *e;
      static const std::regex ours("^(RANK|WORLD_SIZE|LOCAL_RANK|MASTER_ADDR|MASTER_PORT|OMP_NUM_THREADS)=");
      if (!std::regex_search(s, ours)) env_strings.push_back(s);
    }
    for (const std::string& s : {"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r),
                                 "WORLD_SIZE=" + std::to_string(n), std::string("MASTER_ADDR=127.0.0.1"),
                                 "MASTER_PORT=" + std::to_string(port), std::string("OMP_NUM_THREADS=1")})
      env_strings.push_back(s);
    std::vector<char*> c_argv, c_env;
    for (const std::string& s : argv) c_argv.push_back(const_cast<char*>(s.c_str()));
    c_argv.push_back(nullptr);
    for (const std::string& s : env_strings) c_env.push_back(const_cast<char*>(s.c_str()));
    c_env.push_back(nullptr);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      kill_all();
      throw std::runtime_error("ember_dist_bench: pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    pid_t pid = 0;
    const int err = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    if (err != 0) {
      close(pipe_fds[0]);
      kill_all();
      throw std::runtime_error("ember_dist_bench: cannot start " + argv[0] + ": " + std::strerror(err));
    }
    pids.push_back(pid);
    fds.push_back(pipe_fds[0]);
  }
  // Read every rank's output until each closes it, within the deadline.
  const auto end = Clock::now() + deadline;
  int open = n;
  std::vector<bool> done(n, false);
  while (open > 0) {
    std::vector<pollfd> polls;
    for (int r = 0; r < n; ++r)
      if (!done[r]) polls.push_back({fds[r], POLLIN, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0 || poll(polls.data(), polls.size(), static_cast<int>(left)) == 0) {
      kill_all();
      throw std::runtime_error("the ranks of '" + argv[0] + "' did not finish within " +
                               std::to_string(deadline.count()) + " s");
    }
    for (const pollfd& p : polls) {
      if (!p.revents) continue;
      const int r = static_cast<int>(std::find(fds.begin(), fds.end(), p.fd) - fds.begin());
      char buf[4096];
      const ssize_t got = read(p.fd, buf, sizeof buf);
      if (got > 0) {
        out[r].append(buf, static_cast<size_t>(got));
      } else {
        done[r] = true;
        --open;
      }
    }
  }
  for (int fd : fds) close(fd);
  fds.clear();
  std::string failures;
  for (int r = 0; r < n; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures += " rank " + std::to_string(r) + " (status " + std::to_string(status) + ")";
  }
  if (!failures.empty()) throw std::runtime_error("'" + argv[0] + "' failed on" + failures + " (its messages are above)");
  std::vector<Figures> figures(n);
  for (int r = 0; r < n; ++r) {
    std::istringstream lines(out[r]);
    std::string word, name;
    double value = 0;
    while (lines >> word)
      if (word == "result" && lines >> name >> value) figures[r][name] = value;
  }
  return figures;
}

double figure(const Figures& f, const std::string& name) {
  const auto it = f.find(name);
  if (it == f.end()) throw std::runtime_error("a rank did not report '" + name + "'");
  return it->second;
}

// ---- the cases ----------------------------------------------------------------------------------

constexpr int kRuns = 3;           // launches per side; the case reports the median of their medians
constexpr int kStepsPerBlock = 100;
constexpr int kBlocks = 5;

std::vector<std::string> step_worker() {
  return {self_path(), "--worker", "step", std::to_string(kStepsPerBlock), std::to_string(kBlocks)};
}

bench::Register allreduce_case{{
    .name = "ddp_allreduce_bus_bandwidth_2proc_64mb",
    .label = "distributed",
    // at least 0.95 of Gloo's bandwidth: at most 1 / 0.95 of its time
    .target = 1 / 0.95,
    .run = [](const bench::Context&) {
      const double mb = 64;
      const std::string dir = std::filesystem::temp_directory_path() / ("ember_dist_bench_" + std::to_string(getpid()));
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      std::vector<Figures> f;
      try {
        f = run_ranks({self_path(), "--worker", "allreduce", std::to_string(mb), "9", dir}, 2);
      } catch (...) {
        std::filesystem::remove_all(dir);
        throw;
      }
      std::filesystem::remove_all(dir);
      bench::Outcome o;
      o.unit = "ms";
      o.ember = figure(f[0], "ember_s") * 1e3;
      o.baseline = figure(f[0], "gloo_s") * 1e3;
      // bus bandwidth as nccl-tests define it: algorithm bandwidth x 2 (n - 1) / n, here x 1
      const double bytes = mb * (1 << 20);
      char buf[160];
      std::snprintf(buf, sizeof buf, "bus bandwidth: ember %.2f GB/s, Gloo's allreduce %.2f GB/s (%.0f%%)",
                    bytes / (o.ember * 1e-3) / 1e9, bytes / (*o.baseline * 1e-3) / 1e9, 100 * *o.baseline / o.ember);
      o.notes.push_back(buf);
      return o;
    },
}};

bench::Register step_vs_1proc_case{{
    .name = "ddp_step_mlp784_2proc_vs_1proc",
    .label = "distributed",
    .target = 1.25,
    .baseline = bench::Baseline::Ember,
    .run = [](const bench::Context&) {
      std::map<std::string, std::vector<double>> two, one;
      for (int run = 0; run < kRuns; ++run) {
        for (const auto& f : run_ranks(step_worker(), 2))
          for (const auto& [name, value] : f) two[name].push_back(value);
        const std::vector<Figures> alone = run_ranks(step_worker(), 1);
        for (const auto& [name, value] : alone[0]) one[name].push_back(value);
      }
      bench::Outcome o;
      o.ember = median(two["step_s"]) * 1e6;
      o.baseline = median(one["step_s"]) * 1e6;
      o.notes.push_back("784-256-128-10 MLP, Adam, batch 64 per rank, 1 thread per process; baseline: 1 process");
      // where the time goes (medians per step, in us)
      auto phases = [](std::map<std::string, std::vector<double>>& f) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "forward %.0f, backward %.0f, Adam %.0f", median(f["forward_s"]) * 1e6,
                      median(f["backward_s"]) * 1e6, median(f["optimizer_s"]) * 1e6);
        return std::string(buf);
      };
      char buf[128];
      std::snprintf(buf, sizeof buf, "; an all_reduce of the 0.94 MB of gradients alone: %.0f", median(two["allreduce_s"]) * 1e6);
      o.notes.push_back("2 processes: " + phases(two) + buf);
      o.notes.push_back("1 process: " + phases(one));
      return o;
    },
}};

bench::Register step_vs_pytorch_case{{
    .name = "ddp_step_mlp784_vs_pytorch",
    .label = "distributed",
    .target = 0.7,
    .run = [](const bench::Context&) {
      const std::vector<std::string> python = {"/usr/bin/python3", EMBER_DIST_BENCH_DIR "/ddp_step.py",
                                               std::to_string(kStepsPerBlock), std::to_string(kBlocks)};
      std::vector<double> ours, theirs;
      for (int run = 0; run < kRuns; ++run) {
        for (const auto& f : run_ranks(step_worker(), 2)) ours.push_back(figure(f, "step_s"));
        for (const auto& f : run_ranks(python, 2)) theirs.push_back(figure(f, "step_s"));
      }
      bench::Outcome o;
      o.ember = median(ours) * 1e6;
      o.baseline = median(theirs) * 1e6;
      o.notes.push_back("2 processes, 1 thread each; baseline: PyTorch's DistributedDataParallel on gloo "
                        "(bench/dist/ddp_step.py, /usr/bin/python3)");
      return o;
    },
}};

bench::Register zero_case{{
    .name = "zero_optimizer_state_bytes_2proc",
    .label = "distributed",
    .target = 0.55,
    .baseline = bench::Baseline::Ember,
    .run = [](const bench::Context&) {
      const std::vector<Figures> f = run_ranks({self_path(), "--worker", "zero"}, 2);
      bench::Outcome o;
      o.unit = "bytes";
      for (const Figures& r : f) o.ember = std::max(o.ember, figure(r, "sharded_bytes"));
      o.baseline = figure(f[0], "unsharded_bytes");
      o.notes.push_back("the largest rank's Adam state under ZeroRedundancyOptimizer; baseline: unsharded Adam");
      return o;
    },
}};

// ---- --simulate: the scaling model and its check on loopback ----------------------------------
// A ring all-reduce of S bytes on n processes takes 2 (n - 1) steps, each sending S / n bytes:
// T = 2 (n - 1) alpha + 2 (n - 1) / n * S * beta, with alpha the cost of one message and beta that
// of one byte. alpha and beta are fitted (least squares) to all_reduce times measured on 2
// processes; larger worlds on this machine check the formula's shape.
struct Costs {
  double alpha = 0, beta = 0;  // seconds per message, per byte
};

double ring_seconds(const Costs& c, int n, double bytes) {
  return 2.0 * (n - 1) * c.alpha + 2.0 * (n - 1) / n * bytes * c.beta;
}

// Times per kSweepElements size, as medians over the ranks.
std::vector<double> sweep_times(int n) {
  std::vector<double> out;
  const std::vector<Figures> f = run_ranks({self_path(), "--worker", "sweep", "20"}, n);
  for (int64_t e : kSweepElements) {
    std::vector<double> per_rank;
    for (const Figures& r : f) per_rank.push_back(figure(r, "allreduce_s_" + std::to_string(e)));
    out.push_back(median(per_rank));
  }
  return out;
}

// One DDP step of a model whose backward takes `backward` seconds and produces `bytes` of
// gradients at an even rate, split into k equal buckets: bucket i is ready at i * backward / k and
// its all-reduce (tau each, one at a time) starts when it and the previous one are done. Returns
// the time from the start of backward until the last all-reduce ends.
double backward_with_buckets(const Costs& c, int n, double bytes, double backward, int k) {
  const double tau = ring_seconds(c, n, bytes / k);
  double done = 0;
  for (int i = 1; i <= k; ++i) done = std::max(done, i * backward / k) + tau;
  return std::max(done, backward);
}

int simulate(int max_n) {
  std::printf("ember_dist_bench --simulate: all_reduce of float32 on n processes on this machine (loopback)\n\n");
  std::map<int, std::vector<double>> measured;
  for (int n = 2; n <= max_n; n *= 2) measured[n] = sweep_times(n);
  // least squares of T = a + S b on n = 2, where a = 2 alpha and b = beta
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(kSweepElements.size());
  for (size_t i = 0; i < kSweepElements.size(); ++i) {
    const double x = 4.0 * kSweepElements[i], y = measured[2][i];
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  Costs loop;
  loop.beta = std::max(0.0, (m * sxy - sx * sy) / (m * sxx - sx * sx));
  loop.alpha = std::max(0.0, (sy - loop.beta * sx) / m / 2);
  std::printf("fitted on 2 processes: alpha %.1f us per message, beta %.3f ns per byte (%.2f GB/s)\n\n",
              loop.alpha * 1e6, loop.beta * 1e9, 1 / loop.beta / 1e9);
  std::printf("%4s %10s %12s %12s %7s\n", "n", "bytes", "measured us", "model us", "ratio");
  for (const auto& [n, times] : measured)
    for (size_t i = 0; i < kSweepElements.size(); ++i) {
      const double bytes = 4.0 * kSweepElements[i], model = ring_seconds(loop, n, bytes);
      std::printf("%4d %10.0f %12.1f %12.1f %7.2f\n", n, bytes, times[i] * 1e6, model * 1e6, times[i] / model);
    }

  // The MLP's step on one process, for the compute side of the model.
  const std::vector<Figures> alone = run_ranks(step_worker(), 1);
  const double forward = figure(alone[0], "forward_s"), backward = figure(alone[0], "backward_s"),
               adam = figure(alone[0], "optimizer_s");
  const double bytes = 4.0 * 235146;  // the MLP's gradients
  std::printf("\nthe 784-256-128-10 MLP on one process: forward %.0f us, backward %.0f us, Adam %.0f us; "
              "gradients %.2f MB\n", forward * 1e6, backward * 1e6, adam * 1e6, bytes / (1 << 20));
  std::printf("per step at n processes over a network of B Gb/s (alpha as fitted; beta the slower of the wire "
              "and this machine's per-byte cost), with the number of buckets k that minimizes it:\n");
  std::printf("%6s %6s %4s %10s %12s %10s %11s\n", "n", "Gb/s", "k", "bucket MB", "all-reduce", "step ms",
              "efficiency");
  for (int n : {2, 8, 64, 1024})
    for (double gbps : {10.0, 100.0}) {
      const Costs net{loop.alpha, std::max(loop.beta, 8 / (gbps * 1e9))};
      int best_k = 1;
      for (int k = 2; k <= 64; ++k)
        if (backward_with_buckets(net, n, bytes, backward, k) < backward_with_buckets(net, n, bytes, backward, best_k))
          best_k = k;
      const double step = forward + backward_with_buckets(net, n, bytes, backward, best_k) + adam;
      std::printf("%6d %6.0f %4d %10.3f %9.2f ms %10.2f %10.0f%%\n", n, gbps, best_k, bytes / best_k / (1 << 20),
                  ring_seconds(net, n, bytes) * 1e3, step * 1e3, 100 * (forward + backward + adam) / step);
    }
  return 0;
}

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: ember_dist_bench [--filter REGEX] [--json FILE] [--list]\n"
               "       ember_dist_bench --simulate N\n"
               "  --filter REGEX  run only the cases whose name matches (std::regex_search)\n"
               "  --json FILE     also write the results as a JSON array (as ember_bench's)\n"
               "  --list          print the case names and exit\n"
               "  --simulate N    fit the all-reduce cost model on 2 processes, check it on 4 .. N (at most 8),\n"
               "                  and print the model's step time for 2 to 1024 processes\n");
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--worker")
    return run_worker(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  std::string filter_text, json;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--filter" || a == "--json") && i + 1 < argc) {
      (a == "--filter" ? filter_text : json) = argv[++i];
    } else if (a == "--list") {
      list = true;
    } else if (a == "--simulate" && i + 1 < argc) {
      const int n = std::atoi(argv[++i]);
      if (n < 2 || n > 8) {
        std::fprintf(stderr, "ember_dist_bench: --simulate expects 2 to 8 processes, got '%s'\n", argv[i]);
        usage(2);
      }
      try {
        return simulate(n);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ember_dist_bench --simulate: %s\n", e.what());
        return 1;
      }
    } else if (a == "--help" || a == "-h") {
      usage(0);
    } else {
      std::fprintf(stderr, "ember_dist_bench: unknown argument '%s'\n", a.c_str());
      usage(2);
    }
  }
  std::regex filter;
  try {
    filter = std::regex(filter_text);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "ember_dist_bench: bad --filter regex '%s': %s\n", filter_text.c_str(), e.what());
    return 2;
  }
  std::vector<const bench::Case*> selected;
  for (const bench::Case& c : bench::registry())
    if (std::regex_search(c.name, filter)) selected.push_back(&c);
  if (list) {
    for (const bench::Case* c : selected) std::printf("%s\n", c->name.c_str());
    return 0;
  }
  if (selected.empty()) {
    std::fprintf(stderr, "ember_dist_bench: no case matches '%s' (see --list)\n", filter_text.c_str());
    return 2;
  }
  std::printf("ember_dist_bench: each case starts its own processes on this machine (loopback)\n\n");
  std::fflush(stdout);
  return bench::run_suite(selected, 1, bench::MachineLimits{}, json, "ember_dist_bench",
                          "named in the case's note");
}
