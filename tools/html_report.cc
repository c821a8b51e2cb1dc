#include "html_report.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "config.h"

extern char** environ;

namespace easypp::report {

namespace fs = std::filesystem;

namespace {

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

bool executable(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

void write_file(const std::string& path, const char* data, std::size_t len) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(sys_error("cannot write " + path));
  std::size_t done = 0;
  while (done < len) {
    const ssize_t k = ::write(fd, data + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      const std::string msg = sys_error("cannot write " + path);
      ::close(fd);
      throw std::runtime_error(msg);
    }
    done += std::size_t(k);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw std::runtime_error(sys_error("cannot write " + path));
}

}  // namespace

std::string find_report_script() {
  if (const char* env = std::getenv("EASYPP_REPORT"); env && *env) return executable(env) ? env : "";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::string beside = (self.parent_path() / "easypp-report").string();
    if (executable(beside)) return beside;
  }
  const std::string installed = std::string(EASYPP_PKGLIBEXECDIR) + "/easypp-report";
  return executable(installed) ? installed : "";
}

ReportDir::ReportDir(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  const fs::path p(dir_);
  std::string parent = p.parent_path().string();
  if (parent.empty()) parent = ".";
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    existed_ = true;
    if (!S_ISDIR(st.st_mode)) throw BadReportDir("--report " + dir_ + ": exists and is not a directory");
    if (::access(dir_.c_str(), W_OK | X_OK) != 0) throw BadReportDir(sys_error("--report " + dir_));
  }
  // The temporary directory goes beside DIR, on the same file system, so
  // that moving it into place is a rename.
  std::string templ = parent + "/." + p.filename().string() + ".tmp-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw BadReportDir(sys_error("--report " + dir_ + ": cannot write in " + parent));
  tmp_ = buf.data();
}

ReportDir::~ReportDir() {
  if (committed_ || tmp_.empty()) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

void ReportDir::write(json_t* doc) {
  char* text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER);
  if (!text) throw std::runtime_error("cannot build the report data");
  const std::string data = tmp_ + "/report.json";
  try {
    write_file(data, text, std::strlen(text));
  } catch (...) {
    std::free(text);
    throw;
  }
  std::free(text);

  const std::string script = find_report_script();
  if (script.empty())
    throw std::runtime_error(std::string("--report: easypp-report not found (looked at $EASYPP_REPORT, beside "
                                         "this program, and in ") + EASYPP_PKGLIBEXECDIR + ")");
  const std::string html = tmp_ + "/index.html";
  std::vector<std::string> args = {script, data, html};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The script's standard output goes to our standard error: ours may be
  // the JSON document.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, script.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("--report: cannot run " + script + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(sys_error("--report: waiting for " + script));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("--report: " + script + " failed (" +
                             (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                                : "signal " + std::to_string(WTERMSIG(status))) +
                             "); nothing was written to " + dir_);
  if (::access(html.c_str(), R_OK) != 0)
    throw std::runtime_error("--report: " + script + " wrote no index.html");
  commit();
}

void ReportDir::commit() {
  // A new DIR: one rename. An existing DIR (or one made meanwhile) keeps its
  // other files: the two files are renamed into it, the page last.
  if (!existed_) {
    if (::rename(tmp_.c_str(), dir_.c_str()) == 0) {
      committed_ = true;
      return;
    }
    if (errno != EEXIST && errno != ENOTEMPTY)
      throw std::runtime_error(sys_error("--report: cannot move the report to " + dir_));
  }
  for (const char* f : {"report.json", "index.html"}) {
    const std::string from = tmp_ + "/" + f, to = dir_ + "/" + f;
    if (::rename(from.c_str(), to.c_str()) != 0)
      throw std::runtime_error(sys_error("--report: cannot move " + std::string(f) + " to " + dir_));
  }
  ::rmdir(tmp_.c_str());
  committed_ = true;
}

}  // namespace easypp::report
