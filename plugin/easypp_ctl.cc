// easypp-ctl: what sched/easypp is doing, for administrators. Reads the
// status and state files the plugin writes under StateSaveLocation
// (plugin_state.h, docs/state-files.md); never talks to slurmctld except to
// ask scontrol where StateSaveLocation is.
//
// Exit status: 0 success, 1 a missing or corrupt file, 2 a usage error. Every
// error is one line on standard error starting with "easypp-ctl: ".
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "easypp/prediction_book.h"
#include "plugin_check.h"
#include "plugin_config.h"
#include "plugin_state.h"
#include "text_escape.h"

#ifndef EASYPP_VERSION
#define EASYPP_VERSION "unknown"
#endif

using easypp::Predictor;
using easypp::Selective;
using easypp::SlowdownMeans;
using easypp::Time;
using easypp::UserId;
using easypp::plugin::printable;
namespace ps = easypp::plugin;

namespace {

const char* kDefaultDir = "/var/spool/slurmctld";
#ifndef EASYPP_SLURM_PLUGINDIR
#define EASYPP_SLURM_PLUGINDIR "/usr/lib/x86_64-linux-gnu/slurm-wlm"
#endif
// Where `make install` put the plugin, and the slurmctld to compare it with.
const char* kDefaultPlugin = EASYPP_SLURM_PLUGINDIR "/sched_easypp.so";
const char* kDefaultSlurmctld = "/usr/sbin/slurmctld";
constexpr int kScontrolTimeout = 5;  // seconds

const char* kHelp = R"(Usage: easypp-ctl [--dir DIR] [--json] [COMMAND [ARGS]]

Show what the sched/easypp Slurm scheduler plugin is doing, from the files it
writes under StateSaveLocation (easypp_status.json after every cycle,
easypp_state.json with the learned history).

Commands:
  status                  settings, when the status was written (warns if it
                          is stale: the plugin may not be running), selective
                          thresholds and slowdowns (easypp_selective), the
                          last cycle's statistics and the totals (the default)
  jobs [--user U] [--partition P]
                          every pending and running job: estimate (time
                          limit), prediction and its source (history or
                          fallback), corrections, planned start (pending) or
                          start and predicted end (running), reservation
  users [USER] [--estimate DURATION]
                          each user's history (runtimes and estimates, oldest
                          first) and the prediction a new job would get; with
                          USER, the details of that user. The estimate
                          defaults to that of the user's most recent job
  state [--file F]        read and validate the state file (exit 0 if valid,
                          1 with the error if missing or corrupt)
  check [--plugin SO] [--slurm-version X.Y.Z]
                          will slurmctld load the installed plugin? Compares
                          its plugin_version with the installed slurmctld's
                          release (slurmctld -V), or with X.Y.Z before an
                          upgrade to it: Slurm refuses a plugin built for any
                          other release, point releases included; then the
                          SchedulerParameters slurmctld has (scontrol show
                          config) or --scheduler-parameters: bad easypp_*
                          values, and every sched/backfill key (bf_*,
                          max_rpc_cnt) the plugin does not honour, with what
                          it does instead. Exit 0 if the plugin loads and no
                          key does harm, 1 if it must be rebuilt or a key
                          does harm (bf_licenses)

Options:
  -d, --dir DIR           StateSaveLocation (default: from 'scontrol show
                          config' if it answers within 5 s, else
                          /var/spool/slurmctld)
  -j, --json              print the command's section of the file as JSON
                          (status: all but history and jobs; jobs: the jobs
                          array; users: the history array; state: the file)
  -u, --user U            jobs: only U's jobs (user name or numeric uid)
  -p, --partition P       jobs: only jobs of partition P
  -e, --estimate DURATION users: predict for this estimate (3600, 90m, 2h,
                          1d2h, 1:30:00, 1-00:00:00; a plain number is seconds)
  -f, --file F            state: the state file to check (default:
                          DIR/easypp_state.json)
  -P, --plugin SO         check: the plugin file (default:
                          )" EASYPP_SLURM_PLUGINDIR R"(/sched_easypp.so)
  -s, --slurm-version V   check: compare with Slurm V (X.Y.Z) instead of the
                          installed slurmctld
  -S, --scheduler-parameters S
                          check: these SchedulerParameters instead of those
                          of 'scontrol show config' (e.g. before a switch)
  -h, --help              this help
  -V, --version           version

Exit status: 0 success, 1 a missing or corrupt file (check: a plugin that
must be rebuilt, or a harmful SchedulerParameters key), 2 a usage error.
)";

// --- errors --------------------------------------------------------------------

struct Exit {
  int status;
};

[[noreturn]] void die(int status, const std::string& msg) {
  std::fflush(stdout);
  std::fprintf(stderr, "easypp-ctl: %s\n", printable(msg).c_str());
  throw Exit{status};
}
[[noreturn]] void usage(const std::string& msg) {
  die(2, msg + " (see easypp-ctl --help)");
}

// --- formatting -------------------------------------------------------------------

// 45s, 3m05s, 1h02m, 2d03h.
std::string duration(Time s) {
  if (s < 0) return "-" + duration(-s);
  char b[64];
  if (s < 60) std::snprintf(b, sizeof b, "%llds", (long long)s);
  else if (s < 3600) std::snprintf(b, sizeof b, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else if (s < 86400)
    std::snprintf(b, sizeof b, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else
    std::snprintf(b, sizeof b, "%lldd%02lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
  return b;
}

std::string seconds_text(double s) {
  char b[64];
  if (s < 10) std::snprintf(b, sizeof b, "%.3fs", s);
  else if (s < 600) std::snprintf(b, sizeof b, "%.1fs", s);
  else return duration(Time(s));
  return b;
}

// A number with `digits` decimals (thresholds, means).
std::string fixed(double x, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, x);
  return b;
}

// Local time, squeue's style.
std::string date(Time t) {
  if (t <= 0) return "-";
  const std::time_t tt = std::time_t(t);
  struct tm tm;
  if (!localtime_r(&tt, &tm)) return std::to_string(t);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  return b;
}

std::string user_name(UserId uid, const std::string& known = "") {
  if (!known.empty()) return known;
  if (uid < 0) return "-";
  static std::map<UserId, std::string> cache;
  auto it = cache.find(uid);
  if (it != cache.end()) return it->second;
  std::string name = std::to_string(uid);
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid_t(uid), &pw, buf.data(), buf.size(), &res) == 0 && res && res->pw_name)
    name = res->pw_name;
  cache[uid] = name;
  return name;
}

// A left-aligned text table.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) {
    for (std::string& cell : row) cell = printable(cell);  // names come from files
    rows_.push_back(std::move(row));
  }
  void print() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::printf("%s\n", line.c_str());
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// --- parsing ----------------------------------------------------------------------

// 3600, 3600s, 90m, 2h, 1d2h30m, 1:30:00 (h:m:s), 30:00 (m:s), 1-00:00:00.
std::optional<Time> parse_duration(std::string_view s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  auto digits = [](std::string_view t) {
    return !t.empty() && t.size() <= 12 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  auto num = [](std::string_view t) { return Time(std::stoll(std::string(t))); };
  Time days = 0;
  std::string_view rest = s;
  const std::size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    if (!digits(s.substr(0, dash))) return std::nullopt;
    days = num(s.substr(0, dash));
    rest = s.substr(dash + 1);
    if (rest.find(':') == std::string_view::npos) {  // D-H
      if (!digits(rest)) return std::nullopt;
      return days * 86400 + num(rest) * 3600;
    }
  }
  if (rest.find(':') != std::string_view::npos) {
    std::vector<Time> parts;
    while (true) {
      const std::size_t c = rest.find(':');
      const std::string_view p = rest.substr(0, c);
      if (!digits(p)) return std::nullopt;
      parts.push_back(num(p));
      if (c == std::string_view::npos) break;
      rest = rest.substr(c + 1);
    }
    if (parts.size() == 2) {
      if (dash != std::string_view::npos) return days * 86400 + parts[0] * 3600 + parts[1] * 60;
      return parts[0] * 60 + parts[1];
    }
    if (parts.size() == 3) return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2];
    return std::nullopt;
  }
  if (dash != std::string_view::npos) return std::nullopt;
  if (digits(rest)) return num(rest);
  Time total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < rest.size()) {
    std::size_t j = i;
    while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
    if (j == i || j == rest.size() || !digits(rest.substr(i, j - i))) return std::nullopt;
    const Time v = num(rest.substr(i, j - i));
    switch (rest[j]) {
      case 'd': total += v * 86400; break;
      case 'h': total += v * 3600; break;
      case 'm': total += v * 60; break;
      case 's': total += v; break;
      default: return std::nullopt;
    }
    any = true;
    i = j + 1;
  }
  if (!any) return std::nullopt;
  return total;
}

// --- StateSaveLocation from scontrol ----------------------------------------------------

std::string find_in_path(const char* prog) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t i = 0;
  while (i <= p.size()) {
    std::size_t j = p.find(':', i);
    if (j == std::string::npos) j = p.size();
    std::string dir = p.substr(i, j - i);
    if (dir.empty()) dir = ".";
    const std::string cand = dir + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    i = j + 1;
  }
  return "";
}

// Standard output of `prog arg` (found in PATH unless it contains a '/'), or
// nullopt if it is missing, fails, or does not answer within the timeout
// (then its process group is killed).
std::optional<std::string> run_capture(const std::string& name, const char* arg1,
                                       const char* arg2 = nullptr) {
  const std::string prog = name.find('/') != std::string::npos ? name : find_in_path(name.c_str());
  if (prog.empty() || access(prog.c_str(), X_OK) != 0) return std::nullopt;
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 2);
    }
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(prog.c_str(), prog.c_str(), arg1, arg2, (char*)nullptr);
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: no race on who runs first
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kScontrolTimeout);
  auto left_ms = [&] {
    const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return int(std::max<long long>(0, d.count()));
  };
  std::string out;
  bool timed_out = false;
  while (true) {
    struct pollfd p = {fds[0], POLLIN, 0};
    const int r = poll(&p, 1, left_ms());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = true;
      break;
    }
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, std::size_t(n));
  }
  close(fds[0]);
  int status = 0;
  bool exited = false;
  while (!timed_out) {  // EOF: give it the rest of the time to exit
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (left_ms() == 0) {
      timed_out = true;
      break;
    }
    usleep(10000);
  }
  if (!exited) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

// The value of `name` in `scontrol show config`'s output ("" for "(null)"),
// nullopt if the output has no such line.
std::optional<std::string> config_value(const std::string& out, const char* name) {
  const std::string key = name;
  std::size_t i = 0;
  while (i < out.size()) {
    std::size_t j = out.find('\n', i);
    if (j == std::string::npos) j = out.size();
    const std::string line = out.substr(i, j - i);
    i = j + 1;
    if (line.rfind(key, 0) != 0 || line.size() == key.size() ||
        (line[key.size()] != ' ' && line[key.size()] != '=' && line[key.size()] != '\t'))
      continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.pop_back();
    return v == "(null)" ? std::string() : v;
  }
  return std::nullopt;
}

std::string state_save_location() {
  const std::optional<std::string> out = run_capture("scontrol", "show", "config");
  if (!out) return kDefaultDir;
  const std::optional<std::string> v = config_value(*out, "StateSaveLocation");
  return v && !v->empty() ? *v : kDefaultDir;
}

// --- options ---------------------------------------------------------------------

struct Options {
  std::string command = "status";
  std::string dir;  // empty: ask scontrol
  bool json = false;
  std::optional<std::string> user, partition, file, user_arg, plugin, slurm_version,
      scheduler_parameters;
  std::optional<Time> estimate;
};

// Options that take a value: short and long name, the command they belong
// to (nullptr: every command), and how the value is stored.
struct ValueOption {
  const char* short_name;
  const char* long_name;
  const char* command;
  void (*set)(Options&, const std::string&);
};

const ValueOption kValueOptions[] = {
    {"-d", "--dir", nullptr,
     [](Options& o, const std::string& v) {
       if (v.empty()) usage("--dir needs a directory");
       o.dir = v;
     }},
    {"-u", "--user", "jobs",
     [](Options& o, const std::string& v) {
       if (v.empty()) usage("--user needs a user name or uid");
       o.user = v;
     }},
    {"-p", "--partition", "jobs",
     [](Options& o, const std::string& v) {
       if (v.empty()) usage("--partition needs a partition name");
       o.partition = v;
     }},
    {"-f", "--file", "state",
     [](Options& o, const std::string& v) {
       if (v.empty()) usage("--file needs a file name");
       o.file = v;
     }},
    {"-e", "--estimate", "users",
     [](Options& o, const std::string& v) {
       o.estimate = parse_duration(v);
       if (!o.estimate || *o.estimate <= 0 || *o.estimate > (Time(1) << 40))
         usage("--estimate '" + v + "' is not a positive duration (3600, 90m, 2h, 1:30:00)");
     }},
    {"-P", "--plugin", "check",
     [](Options& o, const std::string& v) {
       if (v.empty()) usage("--plugin needs a file name");
       o.plugin = v;
     }},
    {"-s", "--slurm-version", "check",
     [](Options& o, const std::string& v) {
       if (!ps::parse_slurm_version(v)) usage("--slurm-version '" + v + "' is not X.Y.Z (22.05.9)");
       o.slurm_version = v;
     }},
    {"-S", "--scheduler-parameters", "check",
     [](Options& o, const std::string& v) { o.scheduler_parameters = v; }},
};

// The command and its operands; options given to the wrong command refused.
void check_operands(Options& o, const std::vector<std::string>& operands,
                    const std::set<std::string>& given) {
  if (!operands.empty()) o.command = operands[0];
  static const std::set<std::string> commands = {"status", "jobs", "users", "state", "check"};
  if (!commands.count(o.command))
    usage("unknown command '" + o.command + "' (status, jobs, users, state or check)");
  const std::size_t max_operands = o.command == "users" ? 2 : 1;
  if (operands.size() > max_operands)
    usage("unexpected argument '" + operands[max_operands] + "' for " + o.command);
  if (o.command == "users" && operands.size() == 2) o.user_arg = operands[1];
  for (const ValueOption& v : kValueOptions)
    if (v.command && given.count(v.long_name) && o.command != v.command)
      usage(std::string(v.long_name) + " applies to '" + v.command + "', not to '" + o.command +
            "'");
}

Options parse_args(int argc, char** argv) {
  Options o;
  std::vector<std::string> operands;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::optional<std::string> inline_value;
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      const std::size_t eq = a.find('=');
      if (eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
      }
    }
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      throw Exit{0};
    } else if (a == "-V" || a == "--version") {
      std::printf("easypp-ctl (easypp) %s\n", EASYPP_VERSION);
      throw Exit{0};
    } else if (a == "-j" || a == "--json") {
      if (inline_value) usage("--json takes no value");
      o.json = true;
      continue;
    }
    const ValueOption* opt = nullptr;
    for (const ValueOption& v : kValueOptions)
      if (a == v.short_name || a == v.long_name) opt = &v;
    if (opt != nullptr) {
      if (!seen.insert(opt->long_name).second) usage("option " + std::string(opt->long_name) + " given twice");
      if (!inline_value && i + 1 >= argc) usage("option " + a + " needs a value");
      opt->set(o, inline_value ? *inline_value : std::string(argv[++i]));
    } else if (a.size() > 1 && a[0] == '-') {
      usage("unknown option '" + a + "'");
    } else {
      operands.push_back(a);
    }
  }
  check_operands(o, operands, seen);
  return o;
}

// --- reading the files ------------------------------------------------------------

std::string join_path(const std::string& dir, const char* name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

ps::Status read_status_or_die(const std::string& path) {
  ps::Status s;
  std::string err;
  ps::LoadFailure why = ps::LoadFailure::kNone;
  if (!ps::read_status(path, &s, &err, &why)) {
    if (why == ps::LoadFailure::kMissing)
      die(1, err + "; is SchedulerType=sched/easypp running? (--dir sets StateSaveLocation)");
    die(1, err);
  }
  return s;
}

// jansson escapes C0 controls but prints DEL and C1 controls raw.
void print_text(const std::string& json) { std::printf("%s\n", easypp::plugin::json_printable(json).c_str()); }

// The plugin's settings as the status file carries them, through the
// plugin's own table (plugin_config.h); keys this easypp-ctl does not know
// (a newer plugin) are reported once.
ps::PluginConfig plugin_settings(const ps::Status* st, std::vector<std::string>* notes) {
  if (st == nullptr) return ps::PluginConfig();
  ps::ParsedConfig pc = ps::apply_settings(st->settings);
  for (const std::string& w : pc.warnings) notes->push_back("settings: " + w);
  return pc.config;
}

// --- users ------------------------------------------------------------------------

// The uid a USER argument names: numeric, a passwd name, or a name the status
// file knows from a job.
std::optional<UserId> resolve_user(const std::string& u, const ps::Status* st) {
  if (!u.empty() && std::all_of(u.begin(), u.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      u.size() <= 10) {
    const long long v = std::stoll(u);
    if (v <= 4294967295LL) return UserId(v);
  }
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(u.c_str(), &pw, buf.data(), buf.size(), &res) == 0 && res)
    return UserId(res->pw_uid);
  if (st)
    for (const ps::JobStatus& j : st->jobs)
      if (j.user_name == u) return j.user;
  return std::nullopt;
}

// --- commands ---------------------------------------------------------------------

// easypp_selective: the thresholds the last cycle used (adaptive ones as
// the slowdowns made them) and the slowdowns of the finished jobs.
void print_selective(const ps::Status& s, const ps::PluginConfig& cfg) {
  static const char* const kCat[] = {"SN", "SW", "LN", "LW"};
  const Selective& sel = cfg.sched.policy.selective;
  if (!s.thresholds.empty()) {
    std::string t;
    if (s.thresholds.size() == 1) {
      t = fixed(s.thresholds[0], 2) + " for every job";
    } else {
      for (std::size_t c = 0; c < s.thresholds.size(); ++c)
        t += std::string(c ? ", " : "") + kCat[c] + " " + fixed(s.thresholds[c], 2);
      t += " (short: planning value <= " + duration(sel.short_limit) +
           ", narrow: <= " + std::to_string(sel.narrow_width) + " CPUs)";
    }
    const bool adaptive = sel.mode == Selective::Mode::Adaptive;
    std::printf("  selective      %s%s\n", adaptive ? "adaptive, " : "", t.c_str());
    if (adaptive)
      std::printf("                 (%s x the mean bounded slowdown of the finished jobs; 1 "
                  "while none)\n", fixed(sel.scale, 2).c_str());
  }
  if (s.slowdowns && (s.slowdowns->n_all > 0 || !s.thresholds.empty())) {
    const SlowdownMeans::Sums& m = *s.slowdowns;
    auto mean = [](double sum, std::uint64_t n) { return n ? fixed(sum / double(n), 2) : "-"; };
    std::string per;
    for (std::size_t c = 0; c < 4; ++c)
      per += std::string(c ? ", " : "") + kCat[c] + " " + mean(m.sum[c], m.n[c]) + " (" +
             std::to_string(m.n[c]) + ")";
    std::printf("  slowdowns      mean %s over %llu finished jobs; %s\n",
                mean(m.sum_all, m.n_all).c_str(), (unsigned long long)m.n_all, per.c_str());
  }
}

int cmd_status(const Options& o, const std::string& dir) {
  const std::string path = join_path(dir, ps::kStatusFileName);
  const ps::Status s = read_status_or_die(path);
  if (o.json) {
    print_text(ps::status_to_json(s, ps::StatusPart::Summary));
    return 0;
  }
  std::vector<std::string> notes;
  const ps::PluginConfig cfg = plugin_settings(&s, &notes);
  for (const std::string& n : notes)
    std::fprintf(stderr, "easypp-ctl: warning: %s\n", printable(n).c_str());
  const Time interval = cfg.interval;
  const Time now = Time(std::time(nullptr));
  const Time age = now - s.written;
  const Time stale_after = std::max<Time>(3 * interval, 300);
  const bool stale = age > stale_after;

  std::size_t pending = 0, running = 0, suspended = 0, users = 0, entries = 0;
  for (const auto& j : s.jobs)
    (j.state == "PENDING" ? pending : j.state == "SUSPENDED" ? suspended : running) += 1;
  for (const auto& r : s.history)
    if (r.estimate_key < 0) ++users, entries += r.entries.size();

  std::printf("sched/easypp status (%s)\n", printable(path).c_str());
  std::printf("  written        %s (%s)%s\n", date(s.written).c_str(),
              age >= 0 ? (duration(age) + " ago").c_str() : "in the future",
              stale ? "  STALE" : "");
  std::printf("  version        easypp %s, Slurm %s\n", s.version.empty() ? "?" : printable(s.version).c_str(),
              s.slurm_version.empty() ? "?" : printable(s.slurm_version).c_str());
  std::printf("  settings       %s\n", cfg.describe().c_str());
  std::printf("  state file     %s\n", s.state_file.empty() ? "-" : printable(s.state_file).c_str());
  print_selective(s, cfg);
  std::printf("  history        %zu users, %zu runtimes\n", users, entries);
  std::printf("  jobs           %zu pending, %zu running", pending, running);
  if (suspended) std::printf(", %zu suspended", suspended);
  std::printf("\n");

  const ps::CycleStats& c = s.last;
  std::printf("\nLast cycle\n");
  if (c.time == 0) {
    std::printf("  (none yet)\n");
  } else {
    std::printf("  started        %s, took %s, trigger %s%s\n", date(c.time).c_str(),
                seconds_text(c.seconds).c_str(), c.trigger.empty() ? "-" : printable(c.trigger).c_str(),
                c.interrupted ? ", interrupted" : "");
    std::printf("  partitions     %u\n", c.partitions);
    std::printf("  queue          %u pending, %u running\n", c.pending, c.running);
    std::printf("  tested         %u backfill candidates\n", c.tested);
    std::printf("  started        %u in order, %u by backfill\n", c.started_in_order,
                c.started_backfill);
    std::printf("  reservations   %u\n", c.reservations);
    std::printf("  corrections    %u\n", c.corrections);
    std::printf("  learned        %u finished jobs\n", c.learned);
    std::printf("  lock yields    %u\n", c.yields);
  }
  const ps::Totals& t = s.totals;
  std::printf("\nTotals\n");
  std::printf("  cycles         %llu\n", (unsigned long long)t.cycles);
  std::printf("  tested         %llu\n", (unsigned long long)t.tested);
  std::printf("  started        %llu in order, %llu by backfill\n",
              (unsigned long long)t.started_in_order, (unsigned long long)t.started_backfill);
  std::printf("  corrections    %llu\n", (unsigned long long)t.corrections);
  std::printf("  learned        %llu finished jobs\n", (unsigned long long)t.learned);
  std::printf("  cycle time     %s total, %s mean, %s longest\n", seconds_text(t.seconds).c_str(),
              seconds_text(t.cycles ? t.seconds / double(t.cycles) : 0).c_str(),
              seconds_text(t.max_seconds).c_str());
  std::fflush(stdout);
  if (stale)
    std::fprintf(stderr,
                 "easypp-ctl: warning: the status is %s old (written every %s): the plugin may "
                 "not be running\n",
                 duration(age).c_str(), duration(interval).c_str());
  return 0;
}

int cmd_jobs(const Options& o, const std::string& dir) {
  const std::string path = join_path(dir, ps::kStatusFileName);
  const ps::Status s = read_status_or_die(path);
  std::optional<UserId> uid;
  if (o.user) uid = resolve_user(*o.user, &s);
  auto keep = [&](const ps::JobStatus& j) {
    if (o.partition && j.partition != *o.partition) return false;
    if (o.user && !(j.user_name == *o.user || (uid && j.user == *uid))) return false;
    return true;
  };
  if (o.json) {  // from the validated snapshot, never a second read
    ps::Status shown;
    for (const ps::JobStatus& j : s.jobs)
      if (keep(j)) shown.jobs.push_back(j);
    print_text(ps::status_to_json(shown, ps::StatusPart::Jobs));
    return 0;
  }
  Table t({"JOBID", "USER", "PARTITION", "STATE", "ESTIMATE", "PREDICTION", "SOURCE", "CORR",
           "START", "END", "RESERVED"});
  std::size_t n = 0;
  for (const ps::JobStatus& j : s.jobs) {
    if (!keep(j)) continue;
    ++n;
    const bool run = j.state != "PENDING";  // RUNNING or SUSPENDED
    const std::string id = j.array.empty() ? std::to_string(j.job_id) : j.array;
    // Running: the actual start and the predicted end. Pending: the planned
    // start and end, if the plan has one: the head's reservation, or beyond
    // the head a projection (easypp_publish_starts), an estimate.
    const std::string start = j.start > 0 ? date(j.start) : (run ? "-" : "(none)");
    const std::string end = j.start > 0 ? date(j.start + j.prediction) : "-";
    t.add({id, user_name(j.user, j.user_name), j.partition.empty() ? "-" : j.partition,
           j.state.empty() ? "-" : j.state, duration(j.estimate), duration(j.prediction),
           j.from_history ? "history" : "fallback", std::to_string(j.corrections), start, end,
           j.reserved ? "yes" : (!run && j.start > 0 ? "no (estimate)" : "")});
  }
  if (n == 0) {
    std::printf("no %sjobs\n", o.user || o.partition ? "matching " : "pending or running ");
    return 0;
  }
  t.print();
  return 0;
}

std::string entries_text(const std::vector<Predictor::Entry>& es) {
  std::string s;
  for (const auto& e : es) {
    if (!s.empty()) s += ' ';
    s += duration(e.runtime) + "/" + duration(e.estimate);
  }
  return s.empty() ? "-" : s;
}

// `users`: the history (from the status file, else the state file) and the
// planning value a new job would get, predicted as the plugin predicts: its
// settings, through the same core (PredictionBook).
class UsersCommand {
 public:
  UsersCommand(const Options& o, const std::string& dir) : o_(o) { load(dir); }

  int run() {
    std::optional<UserId> only;
    if (o_.user_arg) {
      only = resolve_user(*o_.user_arg, status_);
      if (!only)
        die(2, "unknown user '" + *o_.user_arg +
                   "' (not a uid, not in the passwd database, not in the status file)");
    }
    if (o_.json) {  // from the validated snapshot, never a second read
      ps::Status shown;
      for (const auto& r : rings_)
        if (!only || r.user == *only) shown.history.push_back(r);
      print_text(ps::status_to_json(shown, ps::StatusPart::History));
      return 0;
    }
    for (const std::string& n : notes_)
      std::fprintf(stderr, "easypp-ctl: warning: %s\n", printable(n).c_str());
    print_header();
    return only ? show_user(*only) : list_users();
  }

 private:
  // The status file has the newest history; the state file will do if the
  // plugin has not written a status yet.
  void load(const std::string& dir) {
    const std::string status_path = join_path(dir, ps::kStatusFileName);
    const std::string state_path = join_path(dir, ps::kStateFileName);
    std::string err, err2;
    ps::LoadFailure why = ps::LoadFailure::kNone;
    const bool have_state = ps::load_state(state_path, &saved_, &err2);
    if (ps::read_status(status_path, &st_, &err, &why)) {
      rings_ = st_.history;
      status_ = &st_;
      source_ = status_path;
    } else if (why == ps::LoadFailure::kMissing && have_state) {
      rings_ = saved_.rings;
      source_ = state_path;
    } else {
      die(1, err);
    }
    ps::PluginConfig pcfg = plugin_settings(status_, &notes_);
    if (!status_ && have_state)
      easypp::apply_knob(pcfg.sched, "window", std::to_string(saved_.window));
    cfg_ = pcfg.sched;
    book_ = std::make_unique<easypp::PredictionBook>(cfg_);
    book_->restore_history(rings_, Time(std::time(nullptr)));
    if (status_)  // names the status file knows (from jobs), else the passwd database
      for (const ps::JobStatus& j : status_->jobs)
        if (!j.user_name.empty()) names_.emplace(j.user, j.user_name);
  }

  void print_header() const {
    std::printf("History from %s\n", printable(source_).c_str());
    const easypp::PredictorConfig& p = cfg_.predictor;
    if (cfg_.plan == easypp::PlanWith::Prediction && p.kind == easypp::PredictorKind::History)
      std::printf("Predictor: window=%d metric=%s history_type=%s fullness=%s fallback=%s\n\n",
                  p.window, easypp::to_string(p.metric), easypp::to_string(p.type),
                  easypp::to_string(p.fullness), easypp::to_string(p.fallback));
    else if (cfg_.plan == easypp::PlanWith::Prediction)  // ewma or regression
      std::printf("Predictor: %s%s window=%d history_type=%s fullness=%s fallback=%s\n\n",
                  easypp::to_string(p.kind),
                  p.kind == easypp::PredictorKind::Ewma
                      ? (" alpha=" + easypp::knob_value(cfg_, "ewma-alpha")).c_str()
                      : "",
                  p.window, easypp::to_string(p.type), easypp::to_string(p.fullness),
                  easypp::to_string(p.fallback));
    else
      std::printf("Planning with time limits (easypp_plan=estimate): the history is kept but "
                  "not used\n\n");
  }

  // The planning value of a new job of `user`, and where it comes from.
  Time plan_of(UserId user, Time estimate, const char** source) const {
    bool from_history = false;
    const Time p = book_->plan_value(user, estimate, &from_history);
    *source = cfg_.plan != easypp::PlanWith::Prediction ? "time limit"
              : from_history                            ? "history"
                                                        : "fallback";
    return p;
  }
  // "2h00m -> 1h00m (history)".
  std::string predict_text(UserId user, Time estimate) const {
    const char* source = "";
    const Time p = plan_of(user, estimate, &source);
    return duration(estimate) + " -> " + duration(p) + " (" + source + ")";
  }
  std::string name_of(UserId u) const {
    auto it = names_.find(u);
    return user_name(u, it == names_.end() ? std::string() : it->second);
  }
  std::optional<Time> next_estimate(const Predictor::Ring& r) const {
    if (o_.estimate) return o_.estimate;
    if (!r.entries.empty() && r.entries.back().estimate > 0) return r.entries.back().estimate;
    return std::nullopt;
  }

  int list_users() const {
    Table t({"USER", "UID", "JOBS", "HISTORY (runtime/estimate, oldest first)",
             "NEXT JOB (estimate -> prediction)"});
    std::size_t n = 0;
    for (const auto& r : rings_) {
      if (r.estimate_key >= 0) continue;  // extended rings: see `users USER`
      ++n;
      const auto est = next_estimate(r);
      t.add({name_of(r.user), std::to_string(r.user), std::to_string(r.entries.size()),
             entries_text(r.entries), est ? predict_text(r.user, *est) : "-"});
    }
    if (n == 0) {
      std::printf("no history yet\n");
      return 0;
    }
    t.print();
    return 0;
  }

  int show_user(UserId uid) const {
    std::printf("User %s (uid %lld)\n", printable(name_of(uid)).c_str(), (long long)uid);
    const Predictor::Ring* user_ring = nullptr;
    std::vector<const Predictor::Ring*> extended;
    for (const auto& r : rings_) {
      if (r.user != uid) continue;
      if (r.estimate_key < 0) user_ring = &r;
      else extended.push_back(&r);
    }
    print_ring(user_ring);
    for (const Predictor::Ring* r : extended)
      std::printf("  for estimate %s: %s\n", duration(r->estimate_key).c_str(),
                  entries_text(r->entries).c_str());
    // Predictions: the requested estimate, else every distinct estimate seen.
    std::vector<Time> ests;
    if (o_.estimate) {
      ests.push_back(*o_.estimate);
    } else if (user_ring) {
      for (const auto& e : user_ring->entries)
        if (e.estimate > 0 && std::find(ests.begin(), ests.end(), e.estimate) == ests.end())
          ests.push_back(e.estimate);
    }
    if (ests.empty()) std::printf("  (give --estimate to see a prediction)\n");
    for (Time e : ests) {
      const char* source = "";
      const Time p = plan_of(uid, e, &source);
      std::printf("  a new job asking %s would be planned with %s (%s)\n", duration(e).c_str(),
                  duration(p).c_str(), source);
    }
    return 0;
  }

  void print_ring(const Predictor::Ring* ring) const {
    if (!ring || ring->entries.empty()) {
      std::printf("  no history: a new job gets the fallback (%s)\n",
                  easypp::to_string(cfg_.predictor.fallback));
      return;
    }
    std::printf("  history (oldest first):\n");
    Table t({"    #", "RUNTIME", "ESTIMATE", "RUNTIME/ESTIMATE"});
    for (std::size_t i = 0; i < ring->entries.size(); ++i) {
      const auto& e = ring->entries[i];
      char ratio[32] = "-";
      if (e.estimate > 0)
        std::snprintf(ratio, sizeof ratio, "%.0f%%", 100.0 * double(e.runtime) / double(e.estimate));
      t.add({"    " + std::to_string(i + 1), duration(e.runtime), duration(e.estimate), ratio});
    }
    t.print();
  }

  const Options& o_;
  ps::Status st_;
  ps::SavedState saved_;
  const ps::Status* status_ = nullptr;
  std::vector<Predictor::Ring> rings_;
  std::string source_;
  std::vector<std::string> notes_;
  easypp::SchedulerConfig cfg_;
  std::unique_ptr<easypp::PredictionBook> book_;
  std::map<UserId, std::string> names_;
};

int cmd_users(const Options& o, const std::string& dir) { return UsersCommand(o, dir).run(); }

int cmd_state(const Options& o, const std::string& dir) {
  const std::string path = o.file ? *o.file : join_path(dir, ps::kStateFileName);
  ps::SavedState s;
  std::string err;
  if (!ps::load_state(path, &s, &err)) die(1, err);
  if (o.json) {  // from the validated state, never a second read
    print_text(ps::state_to_json(s, s.written));
    return 0;
  }
  const Time written = s.written;
  std::size_t users = 0, extended = 0, entries = 0;
  for (const auto& r : s.rings) {
    (r.estimate_key < 0 ? users : extended) += 1;
    entries += r.entries.size();
  }
  std::printf("%s: valid (format_version %d)\n", printable(path).c_str(), ps::SavedState::kFormatVersion);
  std::printf("  written          %s\n", date(written).c_str());
  std::printf("  users            %zu (%zu extended rings), %zu runtimes\n", users, extended,
              entries);
  std::printf("  window           %d\n", s.window);
  std::printf("  learned jobs     %llu\n", (unsigned long long)s.learned_jobs);
  std::printf("  last learned end %s\n", date(s.last_learned_end).c_str());
  return 0;
}

// The SchedulerParameters as the plugin would read them at load: bad
// easypp_* values (WARNING), the sched/backfill keys it reads as easypp_*
// ones (ok), those it does not honour (WARNING, with what it does instead)
// and the harmful ones (ERROR: returns 1). The same table and words as the
// plugin's load-time lines (plugin_config.h, backfill_keys()).
int check_scheduler_parameters(const Options& o) {
  std::optional<std::string> params = o.scheduler_parameters;
  std::string from = "--scheduler-parameters";
  if (!params) {
    from = "scontrol show config";
    const std::optional<std::string> out = run_capture("scontrol", "show", "config");
    if (out) params = config_value(*out, "SchedulerParameters");
    if (!params) {
      std::printf("settings   not checked: `scontrol show config` gave no SchedulerParameters "
                  "(give them with --scheduler-parameters)\n");
      return 0;
    }
  }
  std::printf("settings   SchedulerParameters=%s (%s)\n", printable(*params).c_str(),
              from.c_str());
  const ps::ParsedConfig pc = ps::parse_scheduler_parameters(params->c_str());
  for (const std::string& w : pc.warnings) std::printf("WARNING: %s\n", printable(w).c_str());
  int rc = 0;
  for (const ps::BackfillKey* k : ps::backfill_keys_present(params->c_str())) {
    switch (k->use) {
      case ps::BackfillKeyUse::kHonoured:
        std::printf("ok: %s: %s\n", k->key, k->easypp);
        break;
      case ps::BackfillKeyUse::kSlurm:
        std::printf("ok: %s: %s\n", k->key, k->easypp);
        break;
      case ps::BackfillKeyUse::kIgnored:
        std::printf("WARNING: %s: not honoured by sched/easypp: %s\n", k->key, k->easypp);
        break;
      case ps::BackfillKeyUse::kHarmful:
        std::printf("ERROR: %s\n", ps::harmful_backfill_key_line(*k).c_str());
        rc = 1;
        break;
    }
  }
  return rc;
}

// Would slurmctld load the installed plugin? (plugin_check.h) The plugin's
// plugin_version against `slurmctld -V` of the installed slurmctld, or
// against --slurm-version (the release about to be installed).
[[maybe_unused]] int cmd_check(const Options& o) {  // unused in fuzz_ctl (no main)
  const std::string so = o.plugin ? *o.plugin : kDefaultPlugin;
  std::uint32_t plugin = 0;
  std::string err;
  if (!ps::read_plugin_version(so, &plugin, &err)) die(1, err);
  std::uint32_t slurm = 0;
  std::string against;
  if (o.slurm_version) {
    slurm = *ps::parse_slurm_version(*o.slurm_version);
    against = "Slurm " + ps::slurm_version_text(slurm) + " (--slurm-version)";
  } else {
    const std::optional<std::string> out = run_capture(kDefaultSlurmctld, "-V");
    const std::optional<std::uint32_t> v = out ? ps::parse_slurm_version(*out) : std::nullopt;
    if (!v)
      die(1, std::string("cannot tell the version of ") + kDefaultSlurmctld +
                 " (`slurmctld -V` failed): give it with --slurm-version X.Y.Z");
    slurm = *v;
    against = std::string(kDefaultSlurmctld) + " (Slurm " + ps::slurm_version_text(slurm) + ")";
  }
  const std::string built = ps::slurm_version_text(plugin);
  std::printf("plugin     %s: built for Slurm %s\n", so.c_str(), built.c_str());
  std::printf("slurmctld  %s\n", against.c_str());
  int rc = 0;
  if (ps::slurm_loads(plugin, slurm)) {
    std::printf("OK: slurmctld %s loads this plugin\n", ps::slurm_version_text(slurm).c_str());
  } else {
    std::printf("MISMATCH: slurmctld %s refuses a plugin built for Slurm %s (Slurm compares the "
                "major, minor and micro release): rebuild it against Slurm %s and install it "
                "before slurmctld restarts (docs/admin-guide.md, \"Upgrading Slurm\")\n",
                ps::slurm_version_text(slurm).c_str(), built.c_str(),
                ps::slurm_version_text(slurm).c_str());
    rc = 1;
  }
  return std::max(rc, check_scheduler_parameters(o));
}

}  // namespace

// fuzz/fuzz_ctl.cc includes this file with EASYPP_CTL_NO_MAIN to drive the
// commands above on its inputs.
#ifndef EASYPP_CTL_NO_MAIN
int main(int argc, char** argv) {
  try {
    const Options o = parse_args(argc, argv);
    // `state --file F` needs no directory (and no scontrol).
    if (o.command == "check") return cmd_check(o);
    const bool need_dir = !(o.command == "state" && o.file);
    const std::string dir = !o.dir.empty() ? o.dir : need_dir ? state_save_location() : "";
    if (o.command == "status") return cmd_status(o, dir);
    if (o.command == "jobs") return cmd_jobs(o, dir);
    if (o.command == "users") return cmd_users(o, dir);
    return cmd_state(o, dir);
  } catch (const Exit& e) {
    return e.status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "easypp-ctl: %s\n", e.what());
    return 1;
  }
}
#endif
