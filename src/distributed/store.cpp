// The stores of the rendezvous: TCPStore (a small request/response protocol of its own: the
// collectives themselves all go through Gloo), FileStore and PrefixStore.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include "ember/distributed.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s = "[";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + keys[i];
  return s + "]";
}

// Polls check() until the keys exist: the stores need no server-side waiters.
void poll_wait(Store& store, const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
               const std::string& where) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!store.check(keys)) {
    EMBER_CHECK(Clock::now() < deadline, "Store::wait", "timed out after ", timeout.count(),
                " ms waiting for keys ", join_keys(keys), " in ", where);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

int64_t decode_int(const Bytes& b) {
  return b.empty() ? 0 : std::stoll(std::string(b.begin(), b.end()));
}
Bytes encode_int(int64_t v) {
  const std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

// ---- socket helpers -----------------------------------------------------------------------------
bool write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
bool read_all(int fd, void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}
bool write_bytes(int fd, const Bytes& b) {
  const uint64_t n = b.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, b.data(), b.size());
}
bool read_bytes(int fd, Bytes& b) {
  uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n > (uint64_t{1} << 32)) return false;
  b.resize(n);
  return read_all(fd, b.data(), n);
}

enum Command : uint8_t { kSet, kGet, kAdd, kCompareSet, kCheck, kDeleteKey, kNumKeys };

// The keys and values, and the operations both the TCP server and the file store apply to them.
struct KeyValues {
  std::map<std::string, Bytes> map;

  Bytes apply(uint8_t cmd, const std::vector<Bytes>& args) {
    const std::string key = args.empty() ? std::string() : std::string(args[0].begin(), args[0].end());
    switch (cmd) {
      case kSet:
        map[key] = args.at(1);
        return {};
      case kGet: {
        auto it = map.find(key);
        if (it == map.end()) return {0};
        Bytes r{1};
        r.insert(r.end(), it->second.begin(), it->second.end());
        return r;
      }
      case kAdd: {
        const int64_t v = decode_int(map[key]) + decode_int(args.at(1));
        map[key] = encode_int(v);
        return map[key];
      }
      case kCompareSet: {
        auto it = map.find(key);
        if (it == map.end()) {
          if (args.at(1).empty()) return map[key] = args.at(2);
          return args.at(1);  // absent and a value was expected: c10d returns the expected value
        }
        if (it->second == args.at(1)) it->second = args.at(2);
        return it->second;
      }
      case kCheck:
        for (const Bytes& k : args)
          if (!map.count(std::string(k.begin(), k.end()))) return {0};
        return {1};
      case kDeleteKey:
        return {static_cast<uint8_t>(map.erase(key))};
      case kNumKeys:
        return encode_int(static_cast<int64_t>(map.size()));
      default:
        return {};
    }
  }
};

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

// ---- TCPStore -----------------------------------------------------------------------------------
// The server: one thread accepts, one thread per client serves its requests in order.
struct TCPStore::Server {
  int listen_fd = -1;
  std::atomic<bool> stopping{false};
  std::mutex mutex;  // guards kv and clients
  KeyValues kv;
  std::vector<int> clients;
  std::vector<std::thread> threads;
  std::thread acceptor;

  void serve(int fd) {
    while (true) {
      uint8_t cmd = 0;
      uint32_t nargs = 0;
      if (!read_all(fd, &cmd, 1) || !read_all(fd, &nargs, sizeof nargs) || nargs > 1024) break;
      std::vector<Bytes> args(nargs);
      bool ok = true;
      for (Bytes& a : args) ok = ok && read_bytes(fd, a);
      if (!ok) break;
      Bytes reply;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        reply = kv.apply(cmd, args);
      }
      if (!write_bytes(fd, reply)) break;
    }
  }
  void accept_loop() {
    while (!stopping) {
      const int fd = ::accept(listen_fd, nullptr, nullptr);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // the listening socket was shut down
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      const std::lock_guard<std::mutex> lock(mutex);
      if (stopping) {
        ::close(fd);
        return;
      }
      clients.push_back(fd);
      threads.emplace_back([this, fd] { serve(fd); });
    }
  }
  ~Server() {
    stopping = true;
    ::shutdown(listen_fd, SHUT_RDWR);
    if (acceptor.joinable()) acceptor.join();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      for (int fd : clients) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : threads) t.join();
    for (int fd : clients) ::close(fd);
    ::close(listen_fd);
  }
};

TCPStore::TCPStore(std::string host, const TCPStoreOptions& options)
    : Store(options.timeout), host_(std::move(host)), port_(options.port), mutex_(std::make_unique<std::mutex>()) {
  if (options.is_server) {
    server_ = std::make_unique<Server>();
    server_->listen_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EMBER_CHECK(server_->listen_fd >= 0, "TCPStore", "socket() failed: ", std::strerror(errno));
    const int one = 1;
    setsockopt(server_->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(port_);
    if (::bind(server_->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(server_->listen_fd, 128) != 0) {
      const std::string err = std::strerror(errno);
      ::close(server_->listen_fd);
      server_.reset();
      detail::fail("TCPStore", "the server cannot listen on port ", port_, ": ", err);
    }
    socklen_t len = sizeof addr;
    getsockname(server_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    server_->acceptor = std::thread([s = server_.get()] { s->accept_loop(); });
  }
  // Connect, retrying until the server is up or the timeout passes.
  const auto deadline = Clock::now() + timeout_;
  std::string last_error;
  while (fd_ < 0) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    const int gai = getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
    if (gai == 0) {
      for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      freeaddrinfo(res);
    } else {
      last_error = gai_strerror(gai);
    }
    if (fd_ >= 0) break;
    if (Clock::now() >= deadline) {
      server_.reset();
      detail::fail("TCPStore", "cannot connect to the store at ", host_, ":", port_, " within ", timeout_.count(),
                   " ms (", last_error, ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (options.is_server && options.num_workers && options.wait_for_workers) {
    add("__ember_workers", 1);
    const auto wait_deadline = Clock::now() + timeout_;
    while (add("__ember_workers", 0) < static_cast<int64_t>(*options.num_workers)) {
      if (Clock::now() >= wait_deadline) {
        ::close(fd_);  // the destructor does not run for a constructor that throws
        detail::fail("TCPStore", "timed out after ", timeout_.count(), " ms waiting for ", *options.num_workers,
                     " workers at ", host_, ":", port_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } else if (options.num_workers) {
    add("__ember_workers", 1);
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<uint8_t> TCPStore::request(uint8_t cmd, const std::vector<std::vector<uint8_t>>& args) {
  const std::lock_guard<std::mutex> lock(*mutex_);
  // a server that stopped answering (its process died) must not hang the client
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(timeout_.count() % 1000 * 1000);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const uint32_t nargs = static_cast<uint32_t>(args.size());
  bool ok = write_all(fd_, &cmd, 1) && write_all(fd_, &nargs, sizeof nargs);
  for (const Bytes& a : args) ok = ok && write_bytes(fd_, a);
  Bytes reply;
  ok = ok && read_bytes(fd_, reply);
  EMBER_CHECK(ok, "TCPStore", "lost the connection to the store at ", host_, ":", port_);
  return reply;
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) { request(kSet, {to_bytes(key), value}); }

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  wait({key});
  Bytes r = request(kGet, {to_bytes(key)});
  return Bytes(r.begin() + 1, r.end());
}

int64_t TCPStore::add(const std::string& key, int64_t amount) {
  return decode_int(request(kAdd, {to_bytes(key), encode_int(amount)}));
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  return request(kCompareSet, {to_bytes(key), expected, desired});
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::vector<Bytes> args;
  for (const std::string& k : keys) args.push_back(to_bytes(k));
  return request(kCheck, args).at(0) == 1;
}

bool TCPStore::delete_key(const std::string& key) { return request(kDeleteKey, {to_bytes(key)}).at(0) == 1; }

int64_t TCPStore::num_keys() { return decode_int(request(kNumKeys, {})); }

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  poll_wait(*this, keys, timeout, "the TCPStore at " + host_ + ":" + std::to_string(port_));
}

// ---- FileStore ----------------------------------------------------------------------------------
namespace {
// A record whose value has this length deletes its key (it has no value bytes).
constexpr uint64_t kDeletedLength = ~uint64_t{0};

// Runs one operation on the file under an exclusive lock: reads every record (key, value; a
// later record of a key replaces an earlier one), applies the operation and appends what it set
// or deleted.
Bytes file_apply(const std::string& path, uint8_t cmd, const std::vector<Bytes>& args) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "FileStore", "cannot open ", path, ": ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }  // also drops the lock
  } closer{fd};
  EMBER_CHECK(::flock(fd, LOCK_EX) == 0, "FileStore", "cannot lock ", path, ": ", std::strerror(errno));
  KeyValues kv;
  Bytes all;
  uint8_t chunk[65536];
  for (ssize_t r; (r = ::read(fd, chunk, sizeof chunk)) > 0;) all.insert(all.end(), chunk, chunk + r);
  size_t at = 0;
  bool deleted = false;  // the last value taken was a deletion
  auto take = [&](Bytes& out) {
    uint64_t n = 0;
    if (at + sizeof n > all.size()) return false;
    std::memcpy(&n, all.data() + at, sizeof n);
    deleted = n == kDeletedLength;
    if (deleted) {
      out.clear();
      at += sizeof n;
      return true;
    }
    if (at + sizeof n + n > all.size()) return false;
    const auto begin = all.begin() + static_cast<ptrdiff_t>(at + sizeof n);
    out.assign(begin, begin + static_cast<ptrdiff_t>(n));
    at += sizeof n + n;
    return true;
  };
  for (Bytes k, v; take(k) && take(v);) {
    if (deleted) {
      kv.map.erase(std::string(k.begin(), k.end()));
    } else {
      kv.map[std::string(k.begin(), k.end())] = v;
    }
  }
  const std::string key = args.empty() ? std::string() : std::string(args[0].begin(), args[0].end());
  auto it = kv.map.find(key);
  const bool had = it != kv.map.end();
  const Bytes before = had ? it->second : Bytes();
  Bytes reply = kv.apply(cmd, args);
  const bool set = (cmd == kSet || cmd == kAdd || cmd == kCompareSet) && kv.map.count(key) &&
                   (!had || before != kv.map[key]);
  if (set || (cmd == kDeleteKey && had)) {
    Bytes rec;
    auto append = [&](uint64_t n, const Bytes& b) {
      rec.insert(rec.end(), reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + sizeof n);
      rec.insert(rec.end(), b.begin(), b.end());
    };
    append(args[0].size(), args[0]);
    if (set) {
      append(kv.map[key].size(), kv.map[key]);
    } else {
      append(kDeletedLength, {});
    }
    ::lseek(fd, 0, SEEK_END);
    EMBER_CHECK(::write(fd, rec.data(), rec.size()) == static_cast<ssize_t>(rec.size()), "FileStore",
                "cannot write ", path, ": ", std::strerror(errno));
  }
  return reply;
}
}  // namespace

FileStore::FileStore(std::string path, std::chrono::milliseconds timeout) : Store(timeout), path_(std::move(path)) {
  file_apply(path_, kCheck, {});  // creates the file; a bad path fails here
}

void FileStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  file_apply(path_, kSet, {to_bytes(key), value});
}
std::vector<uint8_t> FileStore::get(const std::string& key) {
  wait({key});
  Bytes r = file_apply(path_, kGet, {to_bytes(key)});
  return Bytes(r.begin() + 1, r.end());
}
int64_t FileStore::add(const std::string& key, int64_t amount) {
  return decode_int(file_apply(path_, kAdd, {to_bytes(key), encode_int(amount)}));
}
std::vector<uint8_t> FileStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  return file_apply(path_, kCompareSet, {to_bytes(key), expected, desired});
}
bool FileStore::check(const std::vector<std::string>& keys) {
  std::vector<Bytes> args;
  for (const std::string& k : keys) args.push_back(to_bytes(k));
  return file_apply(path_, kCheck, args).at(0) == 1;
}
bool FileStore::delete_key(const std::string& key) { return file_apply(path_, kDeleteKey, {to_bytes(key)}).at(0) == 1; }
int64_t FileStore::num_keys() { return decode_int(file_apply(path_, kNumKeys, {})); }
void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  poll_wait(*this, keys, timeout, "the FileStore " + path_);
}

// ---- PrefixStore --------------------------------------------------------------------------------
PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store ? store->timeout() : kDefaultTimeout), prefix_(std::move(prefix)), store_(std::move(store)) {
  EMBER_CHECK(store_, "PrefixStore", "needs a store");
}
void PrefixStore::set(const std::string& k, const std::vector<uint8_t>& value) { store_->set(key(k), value); }
std::vector<uint8_t> PrefixStore::get(const std::string& k) { return store_->get(key(k)); }
int64_t PrefixStore::add(const std::string& k, int64_t amount) { return store_->add(key(k), amount); }
std::vector<uint8_t> PrefixStore::compare_set(const std::string& k, const std::vector<uint8_t>& expected,
                                              const std::vector<uint8_t>& desired) {
  return store_->compare_set(key(k), expected, desired);
}
bool PrefixStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> full;
  for (const std::string& k : keys) full.push_back(key(k));
  return store_->check(full);
}
bool PrefixStore::delete_key(const std::string& k) { return store_->delete_key(key(k)); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  for (const std::string& k : keys) full.push_back(key(k));
  store_->wait(full, timeout);
}

}  // namespace ember::distributed
