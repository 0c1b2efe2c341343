// torch.distributed on Gloo: stores, collectives against local computations, and faults. Each
// multi-process case forks its ranks (before the test process runs any op, so no thread pool is
// copied) and kills them if they outlive a deadline: a hang fails, never blocks.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <functional>
#include <numeric>
#include <thread>

#include "ember/distributed.h"
#include "ember/ember.h"
#include "ember/nn/parallel/distributed.h"
#include "ember/data/samplers/distributed_sampler.h"
#include "ember/distributed/join.h"
#include "ember/distributed/zero_redundancy_optimizer.h"

namespace dist = ember::distributed;
using namespace ember;
using namespace std::chrono_literals;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/ember_dist_XXXXXX";
  const char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d;
}

// Runs fn(rank) in `n` forked processes; each must exit cleanly within `deadline`.
void run_ranks(int n, const std::function<void(int)>& fn, std::chrono::milliseconds deadline = 20s) {
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        fn(r);
        code = ::testing::Test::HasFailure() ? 1 : 0;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d threw: %s\n", r, e.what());
        code = 2;
      }
      if (dist::is_initialized()) dist::destroy_process_group();
      std::fflush(stderr);
      std::fflush(stdout);
      _exit(code);
    }
    pids.push_back(pid);
  }
  const auto end = std::chrono::steady_clock::now() + deadline;
  std::vector<int> status(n, -1);
  int left = n;
  while (left > 0) {
    for (int r = 0; r < n; ++r) {
      if (status[r] != -1) continue;
      int st = 0;
      if (waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        status[r] = st;
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > end) {
      for (int r = 0; r < n; ++r)
        if (status[r] == -1) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          ADD_FAILURE() << "rank " << r << " did not finish within " << deadline.count() << " ms";
        }
      return;
    }
    std::this_thread::sleep_for(2ms);
  }
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0)
        << "rank " << r << " failed (status " << status[r] << ")";
}

void init_file(const std::string& dir, int rank, int size, std::chrono::milliseconds timeout = 10s) {
  dist::init_process_group("gloo", "file://" + dir + "/store", size, rank, timeout);
}

// A port that was free a moment ago (the test's ranks then bind it).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Rank r's deterministic input: values r*100 + i.
Tensor input_of(int r, int64_t n = 6, ScalarType dtype = kFloat) {
  return (arange(n, kDouble) + 100.0 * r).to(dtype);
}

std::string what_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Store, TCPStoreOperations) {
  dist::TCPStore server("127.0.0.1", {0, true, std::nullopt, false, 2s});
  dist::TCPStore client("127.0.0.1", {server.port(), false, std::nullopt, false, 2s});
  client.set("a", std::string("xyz"));
  const auto v = server.get("a");
  EXPECT_EQ(std::string(v.begin(), v.end()), "xyz");
  EXPECT_EQ(server.add("n", 3), 3);
  EXPECT_EQ(client.add("n", 4), 7);
  EXPECT_TRUE(client.check({"a", "n"}));
  EXPECT_FALSE(client.check({"a", "missing"}));
  const std::vector<uint8_t> one{'1'}, two{'2'};
  EXPECT_EQ(client.compare_set("c", {}, one), one);   // absent and nothing expected: set
  EXPECT_EQ(client.compare_set("c", two, two), one);  // wrong expectation: unchanged
  EXPECT_EQ(server.compare_set("c", one, two), two);
  EXPECT_EQ(client.num_keys(), 3);  // a, n, c
  EXPECT_TRUE(client.delete_key("a"));
  EXPECT_FALSE(server.delete_key("a"));
  EXPECT_FALSE(server.check({"a"}));
  EXPECT_EQ(server.num_keys(), 2);
  std::thread later([&] {
    std::this_thread::sleep_for(50ms);
    server.set("late", std::string("1"));
  });
  client.wait({"late"});
  later.join();
  const std::string err = what_of([&] { client.wait({"never"}, 100ms); });
  EXPECT_NE(err.find("timed out after 100 ms"), std::string::npos) << err;
  EXPECT_NE(err.find("never"), std::string::npos) << err;
  EXPECT_NE(err.find("127.0.0.1:" + std::to_string(server.port())), std::string::npos) << err;
}

TEST(Store, TCPStoreWaitsForItsWorkers) {
  const auto port = static_cast<uint16_t>(free_port());
  std::thread worker([&] { dist::TCPStore w("127.0.0.1", {port, false, 2, true, 2s}); });
  dist::TCPStore server("127.0.0.1", {port, true, 2, true, 2s});  // returns once both are in
  worker.join();
  EXPECT_EQ(server.add("__ember_workers", 0), 2);
  const std::string err = what_of([] {
    dist::TCPStore alone("127.0.0.1", {0, true, 2, true, 100ms});
  });
  EXPECT_NE(err.find("waiting for 2 workers"), std::string::npos) << err;
}

TEST(Store, TCPStoreUnreachableNamesTheAddress) {
  const int port = free_port();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = what_of([&] {
    dist::TCPStore c("127.0.0.1", {static_cast<uint16_t>(port), false, std::nullopt, false, 300ms});
  });
  EXPECT_NE(err.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

TEST(Store, FileAndPrefixStores) {
  const std::string dir = temp_dir();
  auto a = std::make_shared<dist::FileStore>(dir + "/s", 2s);
  dist::FileStore b(dir + "/s", 2s);
  a->set("k", std::string("v1"));
  a->set("k", std::string("v2"));
  const auto v = b.get("k");
  EXPECT_EQ(std::string(v.begin(), v.end()), "v2");
  EXPECT_EQ(a->add("n", 5), 5);
  EXPECT_EQ(b.add("n", -2), 3);
  dist::PrefixStore p("pre", a);
  p.set("k", std::string("p"));
  EXPECT_TRUE(a->check({"pre/k"}));
  const auto pv = p.get("k");
  EXPECT_EQ(std::string(pv.begin(), pv.end()), "p");
  EXPECT_EQ(p.compare_set("x", {}, {'7'}), std::vector<uint8_t>{'7'});
  EXPECT_EQ(b.num_keys(), 4);  // k, n, pre/k, pre/x
  EXPECT_EQ(p.num_keys(), 4);  // the underlying store's, as c10d's
  // a deletion is a record of its own: later readers of the file no longer see the key, and a
  // key set again after it is back
  EXPECT_TRUE(p.delete_key("k"));
  EXPECT_FALSE(a->delete_key("pre/k"));
  EXPECT_FALSE(b.check({"pre/k"}));
  EXPECT_TRUE(b.delete_key("n"));
  EXPECT_EQ(a->add("n", 1), 1);
  EXPECT_EQ(dist::FileStore(dir + "/s", 2s).num_keys(), 3);  // k, n, pre/x
  const std::string err = what_of([&] { p.wait({"absent"}, 50ms); });
  EXPECT_NE(err.find("pre/absent"), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

TEST(Distributed, CollectivesTwoRanks) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    EXPECT_TRUE(dist::is_initialized());
    EXPECT_EQ(dist::get_rank(), rank);
    EXPECT_EQ(dist::get_world_size(), 2);
    const Tensor x0 = input_of(0), x1 = input_of(1);
    struct Case {
      dist::ReduceOp op;
      Tensor want;
    };
    for (const Case& c : {Case{dist::ReduceOp::SUM, x0 + x1}, Case{dist::ReduceOp::AVG, (x0 + x1) / 2},
                          Case{dist::ReduceOp::PRODUCT, x0 * x1}, Case{dist::ReduceOp::MIN, minimum(x0, x1)},
                          Case{dist::ReduceOp::MAX, maximum(x0, x1)}}) {
      Tensor t = input_of(rank);
      dist::all_reduce(t, c.op);
      EXPECT_TRUE(t.equal(c.want)) << static_cast<int>(c.op);
    }
    for (ScalarType dt : {kDouble, kHalf, kBFloat16, kInt, kLong, kByte}) {
      Tensor t = input_of(rank, 6, dt);
      if (dt == kByte) t = arange(6, kByte) * (rank + 1);
      const Tensor want = dt == kByte ? arange(6, kByte) * 3 : (x0 + x1).to(dt);
      dist::all_reduce(t);
      EXPECT_TRUE(t.equal(want)) << dt;
    }
    // async: the work runs while this thread continues
    Tensor big = full({1 << 16}, static_cast<double>(rank + 1));
    auto work = dist::all_reduce(big, dist::ReduceOp::SUM, nullptr, true);
    work->wait();
    EXPECT_TRUE(work->is_completed() && work->is_success());
    EXPECT_TRUE(big.eq(3.0).all().item<bool>());

    // the process group's own interface: several tensors per call, each reduced on its own
    std::vector<Tensor> several{input_of(rank), input_of(rank, 3) * 2};
    dist::group_world()->allreduce(several)->wait();
    EXPECT_TRUE(several[0].equal(x0 + x1) && several[1].equal((input_of(0, 3) + input_of(1, 3)) * 2));

    Tensor b = rank == 1 ? input_of(1) : zeros({6});
    dist::broadcast(b, 1);
    EXPECT_TRUE(b.equal(x1));

    Tensor r = input_of(rank);
    dist::reduce(r, 0, dist::ReduceOp::SUM);
    if (rank == 0) EXPECT_TRUE(r.equal(x0 + x1));
    if (rank == 1) EXPECT_TRUE(r.equal(x1));  // other ranks' tensors are left as they were

    std::vector<Tensor> parts{empty({6}), empty({6})};
    dist::all_gather(parts, input_of(rank));
    EXPECT_TRUE(parts[0].equal(x0) && parts[1].equal(x1));
    Tensor flat = empty({2, 3});
    dist::all_gather_into_tensor(flat, input_of(rank, 3).view({1, 3}));
    EXPECT_TRUE(flat.equal(stack({input_of(0, 3), input_of(1, 3)})));

    Tensor rs = empty({3});
    dist::reduce_scatter(rs, {input_of(rank, 3), input_of(rank, 3) * 10});
    const Tensor s3 = input_of(0, 3) + input_of(1, 3);
    EXPECT_TRUE(rs.equal(rank == 0 ? s3 : s3 * 10));

    std::vector<Tensor> gathered{empty({6}), empty({6})};
    dist::gather(input_of(rank), rank == 0 ? &gathered : nullptr, 0);
    if (rank == 0) EXPECT_TRUE(gathered[0].equal(x0) && gathered[1].equal(x1));

    Tensor sc = empty({6});
    const std::vector<Tensor> to_scatter{x0 * 2, x1 * 2};
    dist::scatter(sc, rank == 1 ? &to_scatter : nullptr, 1);
    EXPECT_TRUE(sc.equal(rank == 0 ? x0 * 2 : x1 * 2));

    Tensor a2a_out = empty({2, 3});
    dist::all_to_all_single(a2a_out, input_of(rank).view({2, 3}));
    // slice j of rank i's input lands in slice i of rank j's output
    EXPECT_TRUE(a2a_out.equal(stack({x0.view({2, 3})[rank], x1.view({2, 3})[rank]})));
    std::vector<Tensor> outs{empty({3}), empty({3})};
    dist::all_to_all(outs, {input_of(rank, 3), input_of(rank, 3) + 50});
    EXPECT_TRUE(outs[0].equal(input_of(0, 3) + 50 * rank) && outs[1].equal(input_of(1, 3) + 50 * rank));
    // uneven: rank 0 sends 1 row to itself and 2 to rank 1; rank 1 sends 3 rows to rank 0, none to itself
    const Tensor rows0 = input_of(0).view({3, 2}), rows1 = input_of(1).view({3, 2});
    Tensor uneven_out = empty({rank == 0 ? 4 : 2, 2});
    dist::all_to_all_single(uneven_out, rank == 0 ? rows0 : rows1, rank == 0 ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{2, 0},
                            rank == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{3, 0});
    EXPECT_TRUE(uneven_out.equal(rank == 0 ? cat({rows0.narrow(0, 0, 1), rows1}) : rows0.narrow(0, 1, 2)));
    // lists of different sizes: rank r sends r + j + 1 values 10 r + j to rank j
    std::vector<Tensor> sized_in, sized_out;
    for (int j = 0; j < 2; ++j) {
      sized_in.push_back(full({rank + j + 1}, 10.0 * rank + j));
      sized_out.push_back(empty({j + rank + 1}));
    }
    dist::all_to_all(sized_out, sized_in);
    for (int j = 0; j < 2; ++j) EXPECT_TRUE(sized_out[j].equal(full({j + rank + 1}, 10.0 * j + rank))) << j;
    const std::string bad_split = what_of([&] {
      Tensor o = empty({3, 2});
      dist::all_to_all_single(o, rows0, {1, 2}, {1, 1});
    });
    EXPECT_NE(bad_split.find("the input split sizes add up to 2 but dim 0 of the input [3, 2]"), std::string::npos)
        << bad_split;

    dist::barrier();

    // point to point, both directions at once (posted before waiting: no deadlock)
    Tensor got = empty({6});
    auto s = dist::isend(input_of(rank), 1 - rank, nullptr, 7);
    auto rv = dist::irecv(got, 1 - rank, nullptr, 7);
    s->wait();
    rv->wait();
    EXPECT_TRUE(got.equal(input_of(1 - rank)));
    if (rank == 0) {
      dist::send(x0 * 3, 1);
    } else {
      Tensor one = empty({6});
      EXPECT_EQ(dist::recv(one, 0), 0);
      EXPECT_TRUE(one.equal(x0 * 3));
    }
  });
  std::filesystem::remove_all(dir);
}

TEST(Distributed, FourRanksEnvInitAndGroups) {
  const int port = free_port();
  run_ranks(4, [&](int rank) {
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", "4", 1);
    dist::init_process_group("gloo", "env://", -1, -1, 10s);
    Tensor t = input_of(rank);
    dist::all_reduce(t);
    EXPECT_TRUE(t.equal(input_of(0) + input_of(1) + input_of(2) + input_of(3)));
    // ranks 1 and 3 form a group; its collectives take global ranks
    auto odd = dist::new_group({1, 3});
    EXPECT_EQ(odd == nullptr, rank % 2 == 0);
    if (odd) {
      EXPECT_EQ(dist::get_world_size(odd), 2);
      EXPECT_EQ(dist::get_rank(odd), rank / 2);
      Tensor u = input_of(rank);
      dist::all_reduce(u, dist::ReduceOp::SUM, odd);
      EXPECT_TRUE(u.equal(input_of(1) + input_of(3)));
      Tensor b = rank == 3 ? input_of(3) : zeros({6});
      dist::broadcast(b, 3, odd);
      EXPECT_TRUE(b.equal(input_of(3)));
    }
    dist::barrier();
  });
}

TEST(Distributed, ShapeMismatchNamesRanksAndShapes) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2, 5s);
    Tensor t = rank == 0 ? zeros({3, 2}) : zeros({4});
    const std::string err = what_of([&] { dist::all_reduce(t); });
    EXPECT_NE(err.find("all_reduce"), std::string::npos) << err;
    EXPECT_NE(err.find("[3, 2]"), std::string::npos) << err;
    EXPECT_NE(err.find("[4]"), std::string::npos) << err;
    EXPECT_NE(err.find("rank " + std::to_string(rank)), std::string::npos) << err;
    // the group still works after the refused collective
    Tensor ok = ones({2});
    dist::all_reduce(ok);
    EXPECT_TRUE(ok.equal(full({2}, 2.0)));
  });
  std::filesystem::remove_all(dir);
}

TEST(Distributed, SecondInitAndBadArguments) {
  const std::string dir = temp_dir();
  run_ranks(1, [&](int rank) {
    EXPECT_NE(what_of([] { dist::get_world_size(); }).find("not been initialized"), std::string::npos);
    init_file(dir, 0, 1);
    EXPECT_NE(what_of([&] { init_file(dir, 0, 1); }).find("twice"), std::string::npos);
    Tensor t = ones({4, 4}).t();
    EXPECT_NE(what_of([&] { dist::all_reduce(t); }).find("contiguous"), std::string::npos);
    Tensor b = ones({2}, kBool);
    EXPECT_NE(what_of([&] { dist::all_reduce(b); }).find("Bool"), std::string::npos);
    Tensor i = ones({2}, kInt);
    EXPECT_NE(what_of([&] { dist::all_reduce(i, dist::ReduceOp::AVG); }).find("AVG"), std::string::npos);
    dist::destroy_process_group();
    EXPECT_FALSE(dist::is_initialized());
    EXPECT_NE(what_of([] { dist::init_process_group("nccl", "env://", 1, 0); }).find("nccl"), std::string::npos);
  });
  std::filesystem::remove_all(dir);
}

TEST(Distributed, DeadPeerRaisesWithinTheTimeout) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2, 2s);
    Tensor t = ones({1000});
    dist::all_reduce(t);
    if (rank == 1) _exit(0);  // dies before the next collective
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = what_of([&] { dist::all_reduce(t); });
    EXPECT_NE(err.find("all_reduce"), std::string::npos) << err;
    EXPECT_NE(err.find("rank 0"), std::string::npos) << err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  });
  std::filesystem::remove_all(dir);
}

TEST(Distributed, SilentPeerTimesOut) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2, 500ms);
    if (rank == 1) {  // alive but never joins the collective
      std::this_thread::sleep_for(1200ms);
      _exit(0);
    }
    Tensor t = ones({8});
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = what_of([&] { dist::all_reduce(t); });
    EXPECT_NE(err.find("all_reduce: failed on rank 0 of 2 (timeout 500 ms"), std::string::npos) << err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1100ms);
  });
  std::filesystem::remove_all(dir);
}

TEST(Distributed, WrongWorldSizeTimesOutNamingTheStore) {
  const int port = free_port();
  run_ranks(2, [&](int rank) {
    // both say three processes: the third never comes
    const std::string err = what_of([&] {
      dist::init_process_group("gloo", "tcp://127.0.0.1:" + std::to_string(port), 3, rank, 1s);
    });
    EXPECT_NE(err.find("init_process_group"), std::string::npos) << err;
    EXPECT_NE(err.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << err;
    EXPECT_FALSE(dist::is_initialized());
  });
}

// ---- DistributedDataParallel -------------------------------------------------------------------
namespace {

nn::Sequential make_mlp(uint64_t seed, int64_t hidden = 16) {
  manual_seed(seed);
  return nn::Sequential(nn::Linear(8, hidden), nn::ReLU(), nn::Linear(hidden, 4));
}

// The global batch of a step (every rank draws the same one) and its rows for `rank`.
std::pair<Tensor, Tensor> batch(int step, int rank = -1, int64_t per_rank = 5, int world = 2) {
  manual_seed(1000 + step);
  Tensor x = randn({per_rank * world, 8}), y = randn({per_rank * world, 4});
  if (rank < 0) return {x, y};
  return {x.narrow(0, rank * per_rank, per_rank), y.narrow(0, rank * per_rank, per_rank)};
}

// max |a - b| / max |b| over the parameters
double worst_relative(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(b[i].abs().max().item<double>(), 1e-12);
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>() / scale);
  }
  return worst;
}

std::vector<Tensor> grads_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> g;
  for (const Tensor& p : params) g.push_back(p.grad());
  return g;
}

}  // namespace

TEST(Autograd, QueueCallbackOnlyDuringBackward) {
  run_ranks(1, [](int) {  // in a child: this process runs no op before it forks ranks
    EXPECT_NE(what_of([] { autograd::queue_callback([] {}); }).find("during backward"), std::string::npos);
    Tensor w = ones({2}).requires_grad_();
    std::vector<std::string> order;
    w.register_hook([&](const Tensor& g) {
      order.push_back("hook");
      autograd::queue_callback([&] {
        // runs once .grad is written
        order.push_back(w.grad().defined() ? "callback after grad" : "callback before grad");
      });
      return Tensor();
    });
    (w * 3).sum().backward();
    EXPECT_EQ(order, (std::vector<std::string>{"hook", "callback after grad"}));
  });
}

namespace {
void expect_training_matches_single_process(bool gradient_as_bucket_view) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    // each rank starts from other weights: DDP broadcasts rank 0's
    nn::Sequential local = make_mlp(1 + rank);
    nn::parallel::DistributedDataParallel ddp(
        local,
        nn::DistributedDataParallelOptions().bucket_cap_mb(0.0002).gradient_as_bucket_view(gradient_as_bucket_view));
    nn::Sequential ref = make_mlp(1);
    // reverse registration order, several buckets (210 bytes: two)
    const auto buckets = ddp->bucket_indices();
    EXPECT_EQ(buckets, (std::vector<std::vector<size_t>>{{3, 2}, {1, 0}}));
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    EXPECT_EQ(worst_relative(ddp->parameters(), ref->parameters()), 0.0);
    for (int step = 0; step < 20; ++step) {
      auto [x, y] = batch(step, rank);
      opt.zero_grad();
      mse_loss(ddp->forward(x), y).backward();
      opt.step();
      auto [gx, gy] = batch(step);
      ref_opt.zero_grad();
      mse_loss(ref->forward(gx), gy).backward();
      ref_opt.step();
      const double rel = worst_relative(ddp->parameters(), ref->parameters());
      EXPECT_LE(rel, 1e-6) << "step " << step;
    }
  });
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST(DistributedDataParallel, MatchesSingleProcessTraining) { expect_training_matches_single_process(false); }
TEST(DistributedDataParallel, MatchesSingleProcessTrainingWithGradientAsBucketView) {
  expect_training_matches_single_process(true);
}

// gradient_as_bucket_view: each .grad is its parameter's view of the bucket (buckets {3, 2} and
// {1, 0}), stays so through no_sync accumulation and zero_grad(false), and becomes it again after
// zero_grad(true); every step equals one process's on the concatenated batches.
TEST(DistributedDataParallel, GradientAsBucketViewAliasesTheBuckets) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::parallel::DistributedDataParallel ddp(
        make_mlp(1), nn::DistributedDataParallelOptions().bucket_cap_mb(0.0002).gradient_as_bucket_view(true));
    nn::Sequential ref = make_mlp(1);
    const std::vector<Tensor> ps = ddp->parameters(), rs = ref->parameters();
    optim::SGD opt(ps, optim::SGDOptions(0.1).momentum(0.9));
    optim::SGD ref_opt(rs, optim::SGDOptions(0.1).momentum(0.9));
    auto backward = [&](int b) {
      auto [x, y] = batch(b, rank);
      mse_loss(ddp->forward(x), y).backward();
      auto [gx, gy] = batch(b);
      mse_loss(ref->forward(gx), gy).backward();
    };
    backward(0);
    EXPECT_TRUE(ps[3].grad().is_alias_of(ps[2].grad()));
    EXPECT_EQ(ps[2].grad().data_ptr<float>(), ps[3].grad().data_ptr<float>() + ps[3].numel());
    EXPECT_TRUE(ps[1].grad().is_alias_of(ps[0].grad()));
    EXPECT_FALSE(ps[1].grad().is_alias_of(ps[2].grad()));
    std::vector<const float*> views;
    for (const Tensor& p : ps) views.push_back(p.grad().data_ptr<float>());
    auto expect_views = [&](const char* when) {
      for (size_t k = 0; k < ps.size(); ++k)
        EXPECT_EQ(ps[k].grad().data_ptr<float>(), views[k]) << "parameter " << k << " " << when;
    };
    {
      auto guard = ddp->no_sync();
      backward(1);  // accumulates in the buckets, locally
    }
    expect_views("after no_sync");
    backward(2);  // averages the three batches' sum
    EXPECT_LE(worst_relative(grads_of(ps), grads_of(rs)), 1e-6);
    expect_views("after the synchronized backward");
    for (bool set_to_none : {false, true, false}) {
      opt.step();
      ref_opt.step();
      EXPECT_LE(worst_relative(ps, rs), 1e-6);
      opt.zero_grad(set_to_none);
      ref_opt.zero_grad(set_to_none);
      EXPECT_EQ(ps[0].grad().defined(), !set_to_none);
      backward(3 + set_to_none);
      expect_views(set_to_none ? "after zero_grad(true)" : "after zero_grad(false)");
      EXPECT_LE(worst_relative(grads_of(ps), grads_of(rs)), 1e-6);
    }
  });
  std::filesystem::remove_all(dir);
}

TEST(DistributedDataParallel, NoSyncAccumulatesThenAverages) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::parallel::DistributedDataParallel ddp(make_mlp(1));
    nn::Sequential ref = make_mlp(1);
    {
      auto guard = ddp->no_sync();
      for (int micro = 0; micro < 2; ++micro) {
        auto [x, y] = batch(micro, rank);
        mse_loss(ddp->forward(x), y).backward();
      }
    }
    // local gradients only so far: rank 0's first-layer gradient differs from the global one
    if (rank == 0) {
      auto [gx, gy] = batch(0);
      nn::Sequential probe = make_mlp(1);
      mse_loss(probe->forward(gx), gy).backward();
      EXPECT_GT(worst_relative({ddp->parameters()[0].grad()}, {probe->parameters()[0].grad()}), 1e-3);
    }
    auto [x, y] = batch(2, rank);
    mse_loss(ddp->forward(x), y).backward();
    for (int micro = 0; micro < 3; ++micro) {
      auto [gx, gy] = batch(micro);
      mse_loss(ref->forward(gx), gy).backward();
    }
    EXPECT_LE(worst_relative(grads_of(ddp->parameters()), grads_of(ref->parameters())), 1e-6);
  });
  std::filesystem::remove_all(dir);
}

TEST(DistributedDataParallel, CompressionHooks) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::parallel::DistributedDataParallel fp16(make_mlp(1));
    fp16->register_comm_hook(dist::ProcessGroupPtr(), dist::ddp_comm_hooks::fp16_compress_hook);
    nn::parallel::DistributedDataParallel bf16(make_mlp(1));
    bf16->register_comm_hook(dist::ProcessGroupPtr(), dist::ddp_comm_hooks::bf16_compress_hook);
    EXPECT_NE(what_of([&] { bf16->register_comm_hook(dist::ProcessGroupPtr(), dist::ddp_comm_hooks::allreduce_hook); })
                  .find("only be called once"),
              std::string::npos);
    nn::Sequential ref = make_mlp(1);
    auto [x, y] = batch(0, rank);
    mse_loss(fp16->forward(x), y).backward();
    mse_loss(bf16->forward(x), y).backward();
    auto [gx, gy] = batch(0);
    mse_loss(ref->forward(gx), gy).backward();
    // a half rounds to 2^-11 relative, bfloat16 to 2^-8 (twice: before and after the sum)
    EXPECT_LE(worst_relative(grads_of(fp16->parameters()), grads_of(ref->parameters())), 2e-3);
    EXPECT_LE(worst_relative(grads_of(bf16->parameters()), grads_of(ref->parameters())), 1.6e-2);
    EXPECT_GT(worst_relative(grads_of(bf16->parameters()), grads_of(ref->parameters())), 0.0);
  });
  std::filesystem::remove_all(dir);
}

namespace {
// Uses only its first layer (the second's parameters get no gradient).
struct HalfUsedImpl : nn::Module {
  HalfUsedImpl() {
    manual_seed(3);
    used = register_module("used", nn::Linear(8, 4));
    unused = register_module("unused", nn::Linear(8, 4));
  }
  Tensor forward(const Tensor& x) { return used(x); }
  nn::Linear used{nullptr}, unused{nullptr};
};
EMBER_MODULE(HalfUsed);
}  // namespace

TEST(DistributedDataParallel, UnusedParameters) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    auto [x, y] = batch(0, rank);
    nn::parallel::DistributedDataParallel strict{HalfUsed()};
    const std::string err = what_of([&] { mse_loss(strict->forward(x), y).backward(); });
    EXPECT_NE(err.find("unused.weight"), std::string::npos) << err;
    EXPECT_NE(err.find("find_unused_parameters"), std::string::npos) << err;

    HalfUsed model;
    HalfUsed ref;
    nn::parallel::DistributedDataParallel ddp(model, nn::DistributedDataParallelOptions().find_unused_parameters(true));
    mse_loss(ddp->forward(x), y).backward();
    auto [gx, gy] = batch(0);
    mse_loss(ref->forward(gx), gy).backward();
    EXPECT_LE(worst_relative({model->used->weight.grad(), model->used->bias.grad()},
                             {ref->used->weight.grad(), ref->used->bias.grad()}),
              1e-6);
    EXPECT_FALSE(model->unused->weight.grad().defined());  // unused on every rank: left alone
  });
  std::filesystem::remove_all(dir);
}

// static_graph: the first backward finds the unused layer, later ones reuse what it found;
// gradients as with find_unused_parameters at every step.
TEST(DistributedDataParallel, StaticGraph) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    HalfUsed model, ref;
    nn::parallel::DistributedDataParallel ddp(model, nn::DistributedDataParallelOptions().static_graph(true));
    nn::parallel::DistributedDataParallel finding(ref, nn::DistributedDataParallelOptions().find_unused_parameters(true));
    for (int step = 0; step < 3; ++step) {
      auto [x, y] = batch(step, rank);
      for (nn::parallel::DistributedDataParallel* d : {&ddp, &finding}) {
        (*d)->zero_grad();
        mse_loss((*d)->forward(x), y).backward();
      }
      EXPECT_LE(worst_relative({model->used->weight.grad(), model->used->bias.grad()},
                               {ref->used->weight.grad(), ref->used->bias.grad()}),
                1e-6)
          << "step " << step;
      EXPECT_FALSE(model->unused->weight.grad().defined());
    }
  });
  std::filesystem::remove_all(dir);
}

TEST(DistributedDataParallel, ParameterShapesMustAgree) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    const std::string err = what_of([&] { nn::parallel::DistributedDataParallel ddp(make_mlp(1, 16 + rank)); });
    EXPECT_NE(err.find("'0.weight'"), std::string::npos) << err;
    EXPECT_NE(err.find("[16, 8]"), std::string::npos) << err;
    EXPECT_NE(err.find("[17, 8]"), std::string::npos) << err;
  });
  std::filesystem::remove_all(dir);
}

// The buckets' all-reduces skip the per-collective shape check, so construction compares them.
TEST(DistributedDataParallel, BucketsMustAgree) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    const std::string err = what_of([&] {
      nn::parallel::DistributedDataParallel ddp(make_mlp(1),
                                                nn::DistributedDataParallelOptions().bucket_cap_mb(rank ? 25 : 0.0002));
    });
    EXPECT_NE(err.find("bucket_cap_mb must be the same on every rank"), std::string::npos) << err;
    EXPECT_NE(err.find("[212]"), std::string::npos) << err;  // rank 1's single bucket
  });
  std::filesystem::remove_all(dir);
}

// ---- DistributedSampler -------------------------------------------------------------------------
namespace {
// torch.utils.data.distributed.DistributedSampler.__iter__ without shuffle, transcribed.
std::vector<size_t> pytorch_share(size_t n, size_t replicas, size_t rank, bool drop_last) {
  const double nd = static_cast<double>(n), rd = static_cast<double>(replicas);
  const size_t num_samples = drop_last && n % replicas != 0
                                 ? static_cast<size_t>(std::max(0.0, std::ceil((nd - rd) / rd)))
                                 : static_cast<size_t>(std::ceil(nd / rd));
  const size_t total = num_samples * replicas;
  std::vector<size_t> indices(n);
  std::iota(indices.begin(), indices.end(), size_t{0});
  if (!drop_last) {
    const size_t padding = total - n;
    std::vector<size_t> pad;
    while (pad.size() < padding) pad.insert(pad.end(), indices.begin(), indices.end());
    indices.insert(indices.end(), pad.begin(), pad.begin() + static_cast<std::ptrdiff_t>(padding));
  } else {
    indices.resize(total);
  }
  std::vector<size_t> share;
  for (size_t i = rank; i < total; i += replicas) share.push_back(indices[i]);
  return share;
}
}  // namespace

TEST(DistributedSampler, PartitionAsPyTorch) {
  for (size_t n : {0, 1, 3, 10, 11, 12, 13}) {
    for (size_t replicas : {1, 2, 3, 4, 5}) {
      for (bool drop_last : {false, true}) {
        for (size_t rank = 0; rank < replicas; ++rank) {
          dist::DistributedSampler s(n, replicas, rank, /*shuffle=*/false, 0, drop_last);
          const auto want = pytorch_share(n, replicas, rank, drop_last);
          EXPECT_EQ(s.indices(), want) << n << " " << replicas << " " << rank << " " << drop_last;
          EXPECT_EQ(s.size(), want.size());
        }
      }
    }
  }
  // shuffled: one permutation per (seed, epoch), the same on every rank, split without overlap
  std::vector<size_t> all;
  for (size_t rank = 0; rank < 3; ++rank) {
    dist::DistributedSampler s(12, 3, rank, true, 5);
    s.set_epoch(2);
    s.reset();
    std::vector<size_t> got;
    while (auto b = s.next(3)) got.insert(got.end(), b->begin(), b->end());
    EXPECT_EQ(got.size(), 4u);
    all.insert(all.end(), got.begin(), got.end());
  }
  std::vector<size_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> every(12);
  std::iota(every.begin(), every.end(), size_t{0});
  EXPECT_EQ(sorted, every);
  EXPECT_NE(all, every);  // shuffled
  dist::DistributedSampler a(12, 3, 1, true, 5), b(12, 3, 1, true, 5);
  b.set_epoch(1);
  b.reset();
  EXPECT_NE(a.indices(), b.indices());  // another epoch, another order
  b.set_epoch(0);
  b.reset();
  EXPECT_EQ(a.indices(), b.indices());
  EXPECT_NE(what_of([] { dist::DistributedSampler s(10, 2, 2); }).find("Invalid rank 2"), std::string::npos);
}

TEST(DistributedDataParallel, BroadcastsBuffersFromRankZero) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    auto with_norm = [] {
      manual_seed(4);
      return nn::Sequential(nn::Linear(8, 6), nn::BatchNorm1d(6));
    };
    nn::Sequential shared_model = with_norm(), local_model = with_norm();
    nn::parallel::DistributedDataParallel shared(shared_model);
    nn::parallel::DistributedDataParallel local(local_model,
                                                nn::DistributedDataParallelOptions().broadcast_buffers(false));
    auto [x1, y1] = batch(0, rank);
    auto [x2, y2] = batch(1, rank);
    shared->forward(x1);
    shared->forward(x2);  // starts from rank 0's statistics
    local->forward(x1);
    local->forward(x2);
    nn::Sequential ref_shared = with_norm(), ref_local = with_norm();
    ref_shared->forward(batch(0, 0).first);
    ref_shared->forward(x2);
    ref_local->forward(x1);
    ref_local->forward(x2);
    EXPECT_LE(worst_relative(shared_model->buffers(), ref_shared->buffers()), 1e-6);
    EXPECT_LE(worst_relative(local_model->buffers(), ref_local->buffers()), 1e-6);
  });
  std::filesystem::remove_all(dir);
}

// ---- ember-run ----------------------------------------------------------------------------------
namespace {
// Runs a shell command, returning its exit status and its standard output.
std::pair<int, std::string> shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
}  // namespace

TEST(EmberRun, SetsTheEnvironmentOfEachRank) {
  const auto [code, out] = shell(std::string(EMBER_RUN) +
                                 " --nproc-per-node 2 --master-port 12345 sh -c 'echo $RANK/$WORLD_SIZE/$LOCAL_RANK/"
                                 "$MASTER_ADDR:$MASTER_PORT/${OMP_NUM_THREADS:+threads}' | sort");
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "0/2/0/127.0.0.1:12345/threads\n1/2/1/127.0.0.1:12345/threads\n");
  const auto [code2, out2] =
      shell(std::string(EMBER_RUN) +
            " --nproc-per-node 2 --nnodes 2 --node-rank 1 sh -c 'echo $RANK/$WORLD_SIZE' | sort");
  EXPECT_EQ(out2, "2/4\n3/4\n");
}

TEST(EmberRun, OneFailureStopsTheOthers) {
  const auto t0 = std::chrono::steady_clock::now();
  // rank 1 fails at once; rank 0 would sleep for a minute
  const auto [code, out] = shell(std::string(EMBER_RUN) +
                                 " --nproc-per-node 2 sh -c 'if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60' 2>&1");
  EXPECT_EQ(code, 3) << out;
  EXPECT_NE(out.find("rank 1) failed with status 3"), std::string::npos) << out;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(shell(std::string(EMBER_RUN) + " 2>/dev/null").first, 2);  // no program: usage
}

// ---- ZeroRedundancyOptimizer --------------------------------------------------------------------
TEST(ZeroRedundancyOptimizer, EqualsUnshardedAdamHoldingItsShareOfTheState) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::Sequential model = make_mlp(1), ref = make_mlp(1);
    nn::parallel::DistributedDataParallel ddp(model);
    dist::optim::ZeroRedundancyOptimizer zero(ddp->parameters(), dist::optim::optimizer_class<optim::Adam>,
                                              optim::AdamOptions(1e-2).weight_decay(1e-3));
    optim::Adam ref_opt(ref->parameters(), optim::AdamOptions(1e-2).weight_decay(1e-3));
    // PyTorch's partition of sizes 128, 16, 64, 4: largest first to the least loaded rank
    EXPECT_EQ(zero.param_ranks(), (std::vector<int>{0, 1, 1, 1}));
    for (int step = 0; step < 5; ++step) {
      auto [x, y] = batch(step, rank);
      zero.zero_grad();
      mse_loss(ddp->forward(x), y).backward();
      zero.step();
      auto [gx, gy] = batch(step);
      ref_opt.zero_grad();
      mse_loss(ref->forward(gx), gy).backward();
      ref_opt.step();
      EXPECT_LE(worst_relative(model->parameters(), ref->parameters()), 1e-6) << "step " << step;
    }
    // each rank holds the Adam state (exp_avg, exp_avg_sq, step) of its share only
    size_t mine = 0, want = 0;
    for (const auto& item : zero.optim().state_dict().state) mine += item.value().nbytes();
    for (size_t i = 0; i < 4; ++i)
      if (zero.param_ranks()[i] == rank) want += 2 * model->parameters()[i].nbytes() + sizeof(int64_t);
    EXPECT_EQ(mine, want);
    EXPECT_NE(what_of([&] { zero.state_dict(); }).find("consolidate_state_dict"), std::string::npos);
    zero.consolidate_state_dict(1);
    if (rank == 1) {
      const optim::OptimizerStateDict got = zero.state_dict(), want = ref_opt.state_dict();
      ASSERT_EQ(got.state.size(), want.state.size());
      for (const auto& item : want.state) {
        const Tensor* t = got.state.find(item.key());
        ASSERT_NE(t, nullptr) << item.key();
        EXPECT_LE(worst_relative({*t}, {item.value()}), 1e-5) << item.key();
      }
      EXPECT_EQ(got.param_groups.size(), 1u);
      EXPECT_EQ(*got.param_groups[0].find("params"), 4.0);
    } else {
      EXPECT_NE(what_of([&] { zero.state_dict(); }).find("not been consolidated"), std::string::npos);
    }
    // a fresh model and ZeRO resumed from the unsharded state continue as the reference does
    nn::Sequential resumed = make_mlp(7);
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < 4; ++i) resumed->parameters()[i].copy_(ref->parameters()[i]);
    }
    nn::parallel::DistributedDataParallel ddp2(resumed);
    dist::optim::ZeroRedundancyOptimizer zero2(ddp2->parameters(), dist::optim::optimizer_class<optim::Adam>,
                                               optim::AdamOptions(1.0));
    zero2.load_state_dict(ref_opt.state_dict());
    EXPECT_EQ(zero2.param_groups()[0].options().get_lr(), 1e-2);
    auto [x, y] = batch(9, rank);
    mse_loss(ddp2->forward(x), y).backward();
    zero2.step();
    auto [gx, gy] = batch(9);
    ref_opt.zero_grad();
    mse_loss(ref->forward(gx), gy).backward();
    ref_opt.step();
    EXPECT_LE(worst_relative(resumed->parameters(), ref->parameters()), 1e-6);
  });
  std::filesystem::remove_all(dir);
}

// Rank 1 runs out of data after one step; joined, it steps with its last gradients while rank 0
// steps twice more, so both broadcast their shares every time: each parameter ends three Adam
// steps along its owner's (constant) gradient, the same on both ranks.
TEST(ZeroRedundancyOptimizer, JoinShadowsTheStepsOfRanksStillIterating) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::Sequential model = make_mlp(1), ref = make_mlp(1);
    dist::optim::ZeroRedundancyOptimizer zero(model->parameters(), dist::optim::optimizer_class<optim::Adam>,
                                              optim::AdamOptions(1e-2));
    optim::Adam ref_opt(ref->parameters(), optim::AdamOptions(1e-2));
    auto grad_of = [](int r, const Tensor& p) { return full(p.sizes(), 0.5 + r); };
    {
      dist::algorithms::Join join({&zero});
      for (int step = 0; step < (rank == 0 ? 3 : 1); ++step) {
        for (const Tensor& p : model->parameters()) p.mutable_grad() = grad_of(rank, p);
        zero.step();
      }
      join.join();
    }
    const std::vector<Tensor> ps = ref->parameters();
    for (int step = 0; step < 3; ++step) {
      for (size_t k = 0; k < ps.size(); ++k) ps[k].mutable_grad() = grad_of(zero.param_ranks()[k], ps[k]);
      ref_opt.step();
    }
    EXPECT_LE(worst_relative(model->parameters(), ref->parameters()), 1e-6);
  });
  std::filesystem::remove_all(dir);
}
TEST(DistributedDataParallel, PowerSGDHook) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    using dist::ddp_comm_hooks::PowerSGDState;
    // full rank and every tensor compressed: P Q^T reproduces the averaged gradient; the first
    // iteration (before start_powerSGD_iter) is the plain all-reduce
    nn::parallel::DistributedDataParallel exact(make_mlp(1));
    exact->register_comm_hook(std::make_shared<PowerSGDState>(nullptr, 16, 1, 0.0, false),
                              dist::ddp_comm_hooks::powerSGD_hook);
    nn::Sequential ref = make_mlp(1);
    for (int step = 0; step < 2; ++step) {
      exact->zero_grad();
      ref->zero_grad();
      auto [x, y] = batch(step, rank);
      mse_loss(exact->forward(x), y).backward();
      auto [gx, gy] = batch(step);
      mse_loss(ref->forward(gx), gy).backward();
      EXPECT_LE(worst_relative(grads_of(exact->parameters()), grads_of(ref->parameters())), step == 0 ? 1e-6 : 1e-4)
          << "step " << step;
    }
    // rank 1 with error feedback and warm start fits a linear map as well as the plain all-reduce
    // (a 16 x 32 weight: compressed)
    manual_seed(11);
    const Tensor target = randn({32, 16});
    auto train = [&](const std::shared_ptr<PowerSGDState>& state) {
      manual_seed(12);
      nn::Linear lin(nn::LinearOptions(32, 16).bias(false));
      nn::parallel::DistributedDataParallel ddp(lin);
      if (state) ddp->register_comm_hook(state, dist::ddp_comm_hooks::powerSGD_hook);
      optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.3));
      double first = 0, last = 0;
      for (int step = 0; step < 150; ++step) {
        manual_seed(2000 + step * 2 + rank);
        const Tensor x = randn({16, 32});
        opt.zero_grad();
        Tensor loss = mse_loss(ddp->forward(x), matmul(x, target));
        loss.backward();
        opt.step();
        (step == 0 ? first : last) = loss.item<double>();
      }
      return last / first;
    };
    auto state = std::make_shared<PowerSGDState>(nullptr, 1, 2);
    const double compressed = train(state), plain = train(nullptr);
    EXPECT_EQ(state->iter, 150);
    // both fit the map (the loss falls by more than 1000x in 150 steps; rank-1 factors and their
    // error feedback lose nothing visible here)
    EXPECT_LT(plain, 1e-3);
    EXPECT_LT(compressed, 1e-3) << "plain all-reduce: " << plain;
  });
  std::filesystem::remove_all(dir);
}

// DDP then ZeRO under one Join (DDP tells it of each iteration): ranks with 1 and 3 batches
// finish, and end with the parameters of the last to join.
TEST(ZeroRedundancyOptimizer, JoinsWithDistributedDataParallel) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::Sequential model = make_mlp(1);
    nn::parallel::DistributedDataParallel ddp(model);
    dist::optim::ZeroRedundancyOptimizer zero(ddp->parameters(), dist::optim::optimizer_class<optim::Adam>,
                                              optim::AdamOptions(1e-2));
    {
      dist::algorithms::Join join({ddp.get(), &zero});
      for (int step = 0; step < (rank == 0 ? 3 : 1); ++step) {
        auto [x, y] = batch(step, rank);
        zero.zero_grad();
        mse_loss(ddp->forward(x), y).backward();
        zero.step();
      }
      join.join();
    }
    for (const Tensor& p : model->parameters()) {
      Tensor from0 = p.clone();
      dist::broadcast(from0, 0);
      EXPECT_TRUE(from0.equal(p));
    }
  });
  std::filesystem::remove_all(dir);
}

TEST(DistributedDataParallel, JoinWithUnevenInputs) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::Sequential model = make_mlp(1), ref = make_mlp(1);
    nn::parallel::DistributedDataParallel ddp(model, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0002));
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1));
    const int batches[2] = {2, 4};  // rank 0 runs out of data first
    {
      dist::algorithms::Join join({ddp.get()});
      for (int step = 0; step < batches[rank]; ++step) {
        auto [x, y] = batch(step, rank);
        opt.zero_grad();
        mse_loss(ddp->forward(x), y).backward();
        opt.step();
      }
      join.join();
    }
    // the reference: each step averages the gradients of the ranks that still had a batch over
    // the whole world (PyTorch's divide_by_initial_world_size)
    for (int step = 0; step < 4; ++step) {
      ref_opt.zero_grad();
      Tensor loss = zeros({});
      for (int r = 0; r < 2; ++r) {
        if (step >= batches[r]) continue;
        auto [x, y] = batch(step, r);
        loss = loss + mse_loss(ref->forward(x), y) / 2;
      }
      loss.backward();
      ref_opt.step();
    }
    // every rank ends with the last joiner's model
    EXPECT_LE(worst_relative(model->parameters(), ref->parameters()), 1e-6);
    // and training goes on evenly afterwards
    auto [x, y] = batch(7, rank);
    mse_loss(ddp->forward(x), y).backward();
  });
  std::filesystem::remove_all(dir);
}

// throw_on_early_termination: the rank that runs out of inputs raises in join(), the other at its
// next forward; with even inputs nobody raises, and the group stays usable.
TEST(DistributedDataParallel, JoinThrowOnEarlyTermination) {
  const std::string dir = temp_dir();
  run_ranks(2, [&](int rank) {
    init_file(dir, rank, 2);
    nn::parallel::DistributedDataParallel ddp(make_mlp(1));
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
    auto run = [&](int batches) {
      int steps = 0;
      dist::algorithms::Join join({ddp.get()}, true, true);
      const std::string error = what_of([&] {
        for (; steps < batches; ++steps) {
          auto [x, y] = batch(steps, rank);
          opt.zero_grad();
          mse_loss(ddp->forward(x), y).backward();
          opt.step();
        }
        join.join();
      });
      return std::make_pair(steps, error);
    };
    auto [steps, error] = run(rank == 0 ? 1 : 3);
    if (rank == 0) {
      EXPECT_EQ(steps, 1);
      EXPECT_NE(error.find("Join: rank 0 exhausted its inputs while 1 other rank(s) still iterate"), std::string::npos)
          << error;
    } else {
      EXPECT_EQ(steps, 1);  // raised in its second forward
      EXPECT_NE(error.find("rank 1: detected at least one rank that exhausted its inputs"), std::string::npos) << error;
    }
    EXPECT_EQ(run(2), std::make_pair(2, std::string("no error")));
    Tensor one = ones({1});
    dist::all_reduce(one);
    EXPECT_EQ(one.item<float>(), 2.0f);
  });
  std::filesystem::remove_all(dir);
}
