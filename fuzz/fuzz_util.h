// Helpers shared by the fuzz targets (see fuzz/README.md).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

/// A property every input must keep. A failure aborts, which libFuzzer (and
/// the corpus replay in 'make check') reports as a crash with the input.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace easypp::fuzz {

/// A private directory for the files a target reads and writes, on tmpfs
/// when there is one (no disk writes per input), removed at exit.
class TempDir {
 public:
  explicit TempDir(const char* name) {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string tmpl = std::string(base) + "/easypp-fuzz-" + name + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  /// Writes `size` bytes as `name` (replacing it); returns its path.
  std::string write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::string p = file(name);
    const int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0);
    std::size_t off = 0;
    while (off < size) {
      const ssize_t n = ::write(fd, data + off, size - off);
      FUZZ_CHECK(n > 0);
      off += std::size_t(n);
    }
    FUZZ_CHECK(close(fd) == 0);
    return p;
  }
  void remove(const std::string& name) const { unlink(file(name).c_str()); }

 private:
  std::string path_;
};

/// FNV-1a: options a target derives from its input (same input, same run).
inline std::uint32_t hash(const std::uint8_t* data, std::size_t size) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

}  // namespace easypp::fuzz
