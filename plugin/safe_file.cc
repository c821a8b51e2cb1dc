// See safe_file.h for the protocol and why each step is there.
#include "safe_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>

namespace easypp::plugin {

namespace {

std::string errno_text(int e) {
  char buf[256];
  buf[0] = '\0';
  // GNU strerror_r returns the text, which may or may not be buf.
  const char* r = strerror_r(e, buf, sizeof buf);
  return r ? r : buf;
}

std::string octal(unsigned mode) {
  char b[16];
  std::snprintf(b, sizeof b, "%04o", mode & 07777u);
  return b;
}

std::string base_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A name nobody can guess: 16 hex digits from getrandom(2) (the clock and
// the pid only where getrandom fails, which needs a kernel before 3.17).
std::string random_suffix() {
  unsigned long long r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != ssize_t(sizeof r)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (static_cast<unsigned long long>(ts.tv_nsec) << 20) ^
        static_cast<unsigned long long>(ts.tv_sec) ^ static_cast<unsigned long long>(getpid());
  }
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", r);
  return b;
}

// The check of safe_file.h's point 2 on an open directory.
bool check_directory(int dfd, const std::string& dir, const FileOwner& owner,
                     std::string* error) {
  struct stat st;
  if (fstat(dfd, &st) != 0) {
    *error = dir + ": cannot stat the directory: " + errno_text(errno);
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    *error = dir + ": the directory is writable by others than its owner (mode " +
             octal(st.st_mode) + "): refusing to write there, since they could swap the file " +
             "for a link; make it writable by its owner only (chmod go-w) or choose another";
    return false;
  }
  const uid_t me = geteuid();
  if (st.st_uid != 0 && st.st_uid != me && !(owner.set && st.st_uid == owner.uid)) {
    *error = dir + ": the directory belongs to uid " + std::to_string(st.st_uid) +
             ", who is neither root, nor the writer (uid " + std::to_string(me) + ")" +
             (owner.set ? ", nor the file's owner (uid " + std::to_string(owner.uid) + ")" : "") +
             ": refusing to write there";
    return false;
  }
  return true;
}

bool write_all(int fd, const std::string& data) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    left -= std::size_t(n);
  }
  return true;
}

// Create the temporary file in dfd: a fresh random name each try, never a
// file or link that was there already.
int create_temporary(int dfd, const std::string& base, mode_t mode, std::string* tmp) {
  for (int tries = 0; tries < 16; ++tries) {
    *tmp = "." + base + ".tmp." + random_suffix();
    const int fd = openat(dfd, tmp->c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool write_in(int dfd, const std::string& path, const std::string& dir, const std::string& data,
              unsigned mode, const FileOwner& owner, std::string* error) {
  const std::string base = base_of(path);
  std::string tmp;
  const bool from_umask = mode == kModeFromUmask;
  int fd = create_temporary(dfd, base, from_umask ? 0666 : 0600, &tmp);
  if (fd < 0) {
    *error = path + ": cannot create a temporary file in " + dir + ": " + errno_text(errno);
    return false;
  }
  auto fail = [&](const char* what) {
    const int e = errno;
    if (fd >= 0) close(fd);
    unlinkat(dfd, tmp.c_str(), 0);
    *error = path + ": " + what + " (temporary file " + dir + "/" + tmp + "): " + errno_text(e);
    return false;
  };
  // Owner first: fchown clears set-id bits, and the mode must be exact.
  if (owner.set && fchown(fd, owner.uid, owner.gid) != 0)
    return fail(("cannot give it to uid " + std::to_string(owner.uid)).c_str());
  if (!from_umask && fchmod(fd, mode_t(mode & 0777)) != 0) return fail("cannot set its mode");
  if (!write_all(fd, data)) return fail("cannot write");
  if (fsync(fd) != 0) return fail("cannot fsync");
  const int c = close(fd);
  fd = -1;
  if (c != 0) return fail("cannot close");
  if (renameat(dfd, tmp.c_str(), dfd, base.c_str()) != 0) return fail("cannot rename over it");
  if (fsync(dfd) != 0 && errno != EINVAL && errno != ENOTSUP) {
    *error = path + ": written, but fsync of its directory " + dir + " failed: " +
             errno_text(errno);
    return false;
  }
  return true;
}

}  // namespace

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool private_directory(const std::string& dir, const FileOwner& owner, std::string* error) {
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    *error = dir + ": cannot open the directory: " + errno_text(errno);
    return false;
  }
  const bool ok = check_directory(dfd, dir, owner, error);
  close(dfd);
  return ok;
}

bool write_file_safely(const std::string& path, const std::string& data, unsigned mode,
                       const FileOwner& owner, std::string* error, DirCheck check) {
  try {
    if (path.empty() || path.back() == '/') {
      *error = "'" + path + "': not a file name";
      return false;
    }
    const std::string dir = dir_of(path);
    const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
      *error = path + ": cannot open its directory " + dir + ": " + errno_text(errno);
      return false;
    }
    const bool checked = check == DirCheck::kWhenRoot && geteuid() != 0;
    const bool ok = (checked || check_directory(dfd, dir, owner, error)) &&
                    write_in(dfd, path, dir, data, mode, owner, error);
    close(dfd);
    return ok;
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  }
  return false;
}

bool set_file_mode(const std::string& path, unsigned mode, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    // Missing, or a link (ELOOP): nothing of ours to change.
    if (errno == ENOENT || errno == ELOOP) return true;
    *error = path + ": cannot open: " + errno_text(errno);
    return false;
  }
  struct stat st;
  bool ok = true;
  if (fstat(fd, &st) != 0) {
    *error = path + ": cannot stat: " + errno_text(errno);
    ok = false;
  } else if (S_ISREG(st.st_mode) && (st.st_mode & 07777) != (mode & 0777) &&
             fchmod(fd, mode_t(mode & 0777)) != 0) {
    *error = path + ": cannot set mode " + octal(mode) + ": " + errno_text(errno);
    ok = false;
  }
  close(fd);
  return ok;
}

}  // namespace easypp::plugin
