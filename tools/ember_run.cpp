// ember-run: starts the processes of a distributed job on this node, as torchrun does.
//   ember-run [--nproc-per-node N] [--nnodes M] [--node-rank R] [--master-addr A] [--master-port P]
//             prog [args...]
// Each process gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and,
// unless it is set already, OMP_NUM_THREADS (this machine's threads shared among its processes).
// SIGINT, SIGTERM and SIGHUP are forwarded to the processes. When one fails, the others get
// SIGTERM (SIGKILL 5 s later) and ember-run exits with the failing process's status (128 + the
// signal when a signal ended it); it exits 0 when all succeed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

volatile sig_atomic_t forwarded_signal = 0;
std::vector<pid_t> children;  // written before the handlers are installed, read by them

void forward(int sig) {
  forwarded_signal = sig;
  for (pid_t pid : children)
    if (pid > 0) kill(pid, sig);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "ember-run: %s\nusage: ember-run [--nproc-per-node N] [--nnodes M] [--node-rank R] "
               "[--master-addr A] [--master-port P] prog [args...]\n",
               why);
  std::exit(2);
}

int parse_int(const char* flag, const char* value, int min) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v < min)
    usage((std::string(flag) + " needs an integer >= " + std::to_string(min)).c_str());
  return static_cast<int>(v);
}

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int main(int argc, char** argv) {
  int nproc = 1, nnodes = 1, node_rank = 0, port = 29500;
  std::string addr = "127.0.0.1";
  int i = 1;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (flag == "--") {
      ++i;
      break;
    } else if (flag == "--nproc-per-node" || flag == "--nproc_per_node") {
      nproc = parse_int(argv[i], value, 1);
    } else if (flag == "--nnodes") {
      nnodes = parse_int(argv[i], value, 1);
    } else if (flag == "--node-rank" || flag == "--node_rank") {
      node_rank = parse_int(argv[i], value, 0);
    } else if (flag == "--master-port" || flag == "--master_port") {
      port = parse_int(argv[i], value, 1);
    } else if (flag == "--master-addr" || flag == "--master_addr") {
      if (!value) usage("--master-addr needs an address");
      addr = value;
    } else {
      usage(("unknown option " + flag).c_str());
    }
    ++i;
  }
  if (i >= argc) usage("no program to run");
  if (node_rank >= nnodes) usage("--node-rank must be below --nnodes");
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max(1u, hw / static_cast<unsigned>(nproc)));

  children.assign(static_cast<size_t>(nproc), 0);
  for (int local = 0; local < nproc; ++local) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("ember-run: fork");
      forward(SIGTERM);
      return 1;
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(node_rank * nproc + local).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(nnodes * nproc).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("MASTER_ADDR", addr.c_str(), 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("OMP_NUM_THREADS", threads.c_str(), 0);
      execvp(argv[i], argv + i);
      std::fprintf(stderr, "ember-run: cannot run %s: %s\n", argv[i], std::strerror(errno));
      _exit(127);
    }
    children[static_cast<size_t>(local)] = pid;
  }
  struct sigaction sa {};
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

  int result = 0;
  size_t running = children.size();
  bool stopping = false;
  auto kill_deadline = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {  // stopping: the others are ending
      if (std::chrono::steady_clock::now() > kill_deadline) {
        for (pid_t c : children)
          if (c > 0) kill(c, SIGKILL);
        kill_deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    size_t local = 0;
    while (local < children.size() && children[local] != pid) ++local;
    if (local == children.size()) continue;
    children[local] = 0;
    --running;
    const int code = status_code(status);
    if (code != 0 && !stopping) {
      std::fprintf(stderr, "ember-run: local rank %zu (rank %zu) failed with status %d; stopping the others\n",
                   local, static_cast<size_t>(node_rank * nproc) + local, code);
      result = code;
      stopping = true;
      kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      for (pid_t c : children)
        if (c > 0) kill(c, SIGTERM);
    }
  }
  if (result == 0 && forwarded_signal) result = 128 + forwarded_signal;
  return result;
}
