#include "plugin_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

namespace easypp::plugin {

namespace {

// Reads structures out of the file's bytes, every offset bounds-checked.
class ElfFile {
 public:
  explicit ElfFile(std::string bytes) : b_(std::move(bytes)) {}
  template <class T>
  bool at(std::uint64_t off, T* out) const {
    if (off > b_.size() || b_.size() - off < sizeof(T)) return false;
    std::memcpy(out, b_.data() + off, sizeof(T));
    return true;
  }
  // The NUL-terminated string at off, or nullopt past the end.
  std::optional<std::string_view> str(std::uint64_t off) const {
    if (off >= b_.size()) return std::nullopt;
    const std::size_t end = b_.find('\0', off);
    if (end == std::string::npos) return std::nullopt;
    return std::string_view(b_).substr(off, end - off);
  }
  std::size_t size() const { return b_.size(); }

 private:
  std::string b_;
};

// The file offset of dynamic symbol `name` (its size in *size), or 0.
std::uint64_t dynsym_offset(const ElfFile& f, const Elf64_Ehdr& eh, const char* name,
                            std::uint64_t* size) {
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (std::size_t i = 0; i < sh.size(); ++i)
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !f.at(eh.e_shoff + i * sizeof(Elf64_Shdr), &sh[i]))
      return 0;
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_type != SHT_DYNSYM || s.sh_entsize != sizeof(Elf64_Sym) || s.sh_link >= sh.size())
      continue;
    const Elf64_Shdr& strtab = sh[s.sh_link];
    for (std::uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      if (!f.at(s.sh_offset + k * sizeof(Elf64_Sym), &sym)) return 0;
      const auto n = f.str(strtab.sh_offset + sym.st_name);
      if (!n || *n != name || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sh.size()) continue;
      const Elf64_Shdr& in = sh[sym.st_shndx];
      if (in.sh_type == SHT_NOBITS || sym.st_value < in.sh_addr) return 0;
      *size = sym.st_size;
      return sym.st_value - in.sh_addr + in.sh_offset;
    }
  }
  return 0;
}

constexpr off_t kMaxPluginBytes = off_t(256) << 20;

// The file whole, if it is a regular file of at most kMaxPluginBytes:
// opened without blocking (a FIFO in its place would hang the command) and
// checked before anything is read (/dev/zero would never end).
bool read_plugin_file(const std::string& so, std::string* bytes, std::string* error) {
  const int fd = open(so.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = so + ": cannot open (" + std::strerror(errno) + ")";
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0;
  if (!ok) {
    *error = so + ": cannot stat (" + std::strerror(errno) + ")";
  } else if (!S_ISREG(st.st_mode)) {
    *error = so + ": not a regular file";
    ok = false;
  } else if (st.st_size > kMaxPluginBytes) {
    *error = so + ": larger than 256 MiB: not a plugin";
    ok = false;
  }
  if (ok) {
    bytes->resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < bytes->size()) {
      const ssize_t n = read(fd, &(*bytes)[got], bytes->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += std::size_t(n);
    }
    bytes->resize(got);
  }
  close(fd);
  return ok;
}

}  // namespace

bool read_plugin_version(const std::string& so, std::uint32_t* version, std::string* error) {
  std::string bytes;
  if (!read_plugin_file(so, &bytes, error)) return false;
  const ElfFile f(std::move(bytes));
  Elf64_Ehdr eh;
  if (!f.at(0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    *error = so + ": not a 64-bit little-endian ELF shared object";
    return false;
  }
  std::uint64_t size = 0;
  const std::uint64_t off = dynsym_offset(f, eh, "plugin_version", &size);
  std::uint32_t v = 0;
  if (off == 0 || size != sizeof v || !f.at(off, &v)) {
    *error = so + ": exports no plugin_version (not a Slurm plugin?)";
    return false;
  }
  *version = v;
  return true;
}

std::string slurm_version_text(std::uint32_t n) {
  char b[32];
  std::snprintf(b, sizeof b, "%02u.%02u.%u", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
  return b;
}

std::optional<std::uint32_t> parse_slurm_version(std::string_view t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] < '0' || t[i] > '9' || (i > 0 && t[i - 1] >= '0' && t[i - 1] <= '9')) continue;
    unsigned part[3] = {0, 0, 0};
    std::size_t j = i;
    int k = 0;
    for (; k < 3; ++k) {
      std::size_t digits = 0;
      while (j < t.size() && t[j] >= '0' && t[j] <= '9' && digits < 4) {
        part[k] = part[k] * 10 + unsigned(t[j] - '0');
        ++j;
        ++digits;
      }
      if (digits == 0 || part[k] > 255) break;
      if (k < 2) {
        if (j >= t.size() || t[j] != '.') break;
        ++j;
      }
    }
    if (k == 3 && (j == t.size() || t[j] < '0' || t[j] > '9'))
      return (part[0] << 16) | (part[1] << 8) | part[2];
  }
  return std::nullopt;
}

}  // namespace easypp::plugin
