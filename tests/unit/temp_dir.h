// A fresh directory for one test program's files, removed when the program ends, and the
// interpreter that writes PyTorch's files at test time.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("ember_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Debian's interpreter, which has python3-torch (a python3 earlier on PATH may not); EMBER_PYTHON
// overrides it.
inline std::string python() {
  if (const char* p = std::getenv("EMBER_PYTHON")) return p;
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

// std::system(command) for a command that runs python() on files in `dir` and writes its results
// there. Where EMBER_TEST_PYTHON_CACHE names a directory, the files a successful run wrote are
// kept there under a hash of the command (with `dir` written as a placeholder) and of every file
// `dir` held before the run (the script and the inputs the test wrote), and a later run with the
// same key gets those files copied back instead of running PyTorch again. CI (scripts/test.sh)
// runs every test program twice, against the Release and the sanitized library: PyTorch's side is
// the same both times, and took 114 s of the second run (72 s of it training a MobileNet).
inline int run_python_in(const std::string& command, std::string dir) {
  namespace fs = std::filesystem;
  const char* cache_root = std::getenv("EMBER_TEST_PYTHON_CACHE");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto contents = [&] {  // relative path -> the file's bytes, hashed
    std::map<std::string, size_t> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = std::hash<std::string>()(read(e.path()));
    return files;
  };
  if (cache_root == nullptr || *cache_root == 0 || dir.empty()) return std::system(command.c_str());
  std::string key_text;
  for (size_t at = 0, next; at <= command.size(); at = next + dir.size()) {
    next = command.find(dir, at);
    key_text += command.substr(at, next == std::string::npos ? next : next - at);
    if (next == std::string::npos) break;
    key_text += "<dir>";
  }
  const std::map<std::string, size_t> before = contents();
  for (const auto& [name, hash] : before) key_text += "\n" + name + "\t" + std::to_string(hash);
  char key[17];
  std::snprintf(key, sizeof key, "%016zx", std::hash<std::string>()(key_text));
  const fs::path entry = fs::path(cache_root) / key;
  std::error_code ec;
  if (fs::is_directory(entry, ec)) {
    fs::copy(entry, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return 0;
  }
  const int status = std::system(command.c_str());
  if (status != 0) return status;
  // what the run wrote, staged beside the entry and renamed into place (another test program may
  // be storing the same key)
  const fs::path staging = fs::path(cache_root) / (std::string(key) + ".part" + std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  for (const auto& [name, hash] : contents()) {
    const auto it = before.find(name);
    if (it != before.end() && it->second == hash) continue;
    fs::create_directories((staging / name).parent_path());
    fs::copy_file(fs::path(dir) / name, staging / name);
  }
  fs::create_directories(staging, ec);  // a run that wrote nothing still leaves an entry
  fs::rename(staging, entry, ec);
  if (ec) fs::remove_all(staging, ec);
  return status;
}
