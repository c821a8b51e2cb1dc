// easypp-shadow: follow a live cluster that sched/backfill schedules and keep,
// for every job, the prediction sched/easypp would have made: the same core
// (libpredict's PredictionBook with the plugin's options), the same settings
// (SchedulerParameters' easypp_* keys through plugin_config), the same job
// scan (plugin/job_scan), replayed cycle by cycle between polls
// (tools/shadow/shadow.h). It only reads: slurmrestd's job lists, or squeue
// and sacct; nothing is ever written to the cluster.
//
// It reports how accurate the predictions would have been against the users'
// time limits (tools/shadow/report.h; HTML through easypp-report), keeps its
// own state so that a restart continues, and keeps sched/easypp's history
// state file up to date, so the switch starts with what the shadow learned.
//
// Faults: a poll that cannot reach the cluster is retried with backoff, then
// logged and tried again at the next interval; exit status 2 only for
// configuration errors (bad options or files, 401/403/404, an OpenAPI
// version slurmrestd does not serve, a missing command) or when no poll
// ever reached the cluster.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "html_report.h"
#include "import/acct_job.h"
#include "import/rest_client.h"
#include "plugin_config.h"
#include "plugin_state.h"
#include "shadow/report.h"
#include "shadow/shadow.h"
#include "shadow/shadow_file.h"
#include "shadow/source.h"

#ifndef EASYPP_VERSION
#define EASYPP_VERSION "dev"
#endif

namespace {

using namespace easypp;
using namespace easypp::shadow;

const char* const kProg = "easypp-shadow";

struct ConfigError {
  std::string what;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "%s: %s (see --help)\n", kProg, msg.c_str());
  std::exit(2);
}

const char* const kHelp = R"(Usage: easypp-shadow --url URL [options]
       easypp-shadow --commands [options]
       easypp-shadow --report-only --shadow-state FILE [options]

Follow a live cluster that sched/backfill schedules and keep, for every job,
the prediction sched/easypp would have made: the same core, the same settings
(SchedulerParameters' easypp_* keys), the same job scan, replayed cycle by
cycle between polls. It only reads (slurmrestd's job lists, or squeue and
sacct) and never changes anything on the cluster. It reports how accurate the
predictions would have been against the users' time limits and how often a
correction would have fired, and keeps sched/easypp's history state file
ready, so that the switch starts with the history the shadow learned.

INPUT (one of)
  --url URL           slurmrestd: http://HOST:PORT (JWT: the token from
                      SLURM_JWT or --token-file, the user from --user) or
                      unix:/path/to/socket (rest_auth/local). Each poll reads
                      GET /slurm/v0.0.NN/jobs (slurmctld's pending, running
                      and recently ended jobs) and GET /slurmdb/v0.0.NN/jobs
                      (accounting: jobs that ended since the previous poll)
  --commands          run `squeue --json` and `sacct --json` instead (no
                      slurmrestd needed; Slurm's client commands on PATH)

FOLLOWING
  --interval S        seconds between polls (default 60). Predictions do not
                      depend on it: the plugin's cycles in between are
                      replayed from the jobs' times
  --polls N           stop after N polls (default: run until SIGINT/SIGTERM,
                      then report)
  --duration TIME     stop after this long (3600, 90m, 12h, 7d)
  --shadow-state FILE this tool's own state, written atomically after every
                      poll (mode 0600). Run again with the same FILE and it
                      continues where it stopped: what happened meanwhile is
                      replayed from accounting
  --warm-from FILE    start from sched/easypp's history state file (as
                      `easypp-import --state` writes it, or a plugin's
                      StateSaveLocation/easypp_state.json)
  --state FILE        keep sched/easypp's history state file up to date with
                      the shadow's history (after every poll that learned a
                      runtime, and at exit): temporary file, fsync, rename,
                      mode 0600, owned by SlurmUser when run as root (set
                      before the rename). Both files go only into directories
                      no one but their owner and root can write to. At the
                      switch, stop slurmctld, copy it to
                      StateSaveLocation/easypp_state.json, start slurmctld
  --force             let --state replace a file this shadow did not write

SETTINGS
  --slurm-conf FILE   read SchedulerParameters (its easypp_* keys) and
                      SlurmUser from this slurm.conf (default: `scontrol show
                      config`). Slurm ignores easypp_* keys under
                      sched/backfill, so they can be set before the switch
  --set LIST          easypp_* settings applied after slurm.conf's, e.g.
                      easypp_window=3,easypp_metric=median: try settings
                      before putting them into slurm.conf

SLURMRESTD
  --api VERSION       the OpenAPI version of both job lists (v0.0.36 ..
                      v0.0.42), or auto (default): the highest that
                      slurmrestd's /openapi/v3 lists and this tool knows
  --user NAME         X-SLURM-USER-NAME (default: the user running this
                      tool). It must see every user's jobs (an operator, or
                      SlurmUser, if PrivateData hides jobs)
  --token-file FILE   the JWT (a line TOKEN or SLURM_JWT=TOKEN), read again
                      at every poll (a rotated token is picked up); default:
                      the SLURM_JWT environment variable
  --timeout S         seconds for one answer (default 60)
  --retries N         tries again after a transient fault (connection
                      refused, timeout, HTTP 5xx, a truncated answer, a
                      failing command), waiting 1 s, 2 s, 4 s, ... (default 3)

REPORT (at the end; with --report-only, from a shadow state at any time)
  --json              the report as one JSON document on standard output
                      (default: tables)
  --jobs              the tables also list every judged job: first
                      prediction, the one it started with, the final one,
                      corrections, limit, runtime, accuracies
  --top N             rows of the per-user and per-partition tables
                      (default 20; JSON: all)
  --report DIR        also DIR/index.html (self-contained charts: accuracy
                      histograms, limit/runtime ratios, per-user and
                      per-partition accuracy) and DIR/report.json, mode 0700
  --report-only       do not poll: report from --shadow-state FILE (a
                      running shadow's file can be read at any time)
  -q, --quiet         no log line per poll on standard error

OTHER
  -h, --help, -V, --version

EXIT STATUS
  0 done (stopped by --polls, --duration or a signal); 2 bad usage or
  configuration (unreadable slurm.conf or state files, slurmrestd refusing
  the token (401/403), a path or OpenAPI version it does not serve (404), a
  missing squeue/sacct), or no poll ever reached the cluster; 1 internal
  error. Transient faults during a run are logged and retried.

EXAMPLES
  export SLURM_JWT=$(scontrol token username=slurm lifespan=864000 | cut -d= -f2-)
  easypp-shadow --url http://ctl:6820 --user slurm --interval 60 \
      --shadow-state /var/lib/easypp/shadow.json \
      --state /var/lib/easypp/easypp_state.json --report /var/www/easypp
  easypp-shadow --commands --duration 7d --shadow-state shadow.json
  easypp-shadow --report-only --shadow-state shadow.json --jobs
)";

// --- options ----------------------------------------------------------------------

struct Options {
  std::string url;
  bool commands = false;
  long interval = 60;
  std::optional<long> polls;
  std::optional<long> duration;
  std::string shadow_state, warm_from, state;
  bool force = false;
  std::string slurm_conf, set;
  SourceOptions source;
  bool json = false, jobs = false, report_only = false, quiet = false;
  std::size_t top = 20;
  std::string report_dir;
  std::string command_line;
};

// 3600, 90m, 12h, 7d, 30s
std::optional<long> parse_duration(const std::string& v) {
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (errno != 0 || end == v.c_str() || !(d > 0)) return std::nullopt;
  double mult = 1;
  const std::string unit(end);
  if (unit.empty() || unit == "s") mult = 1;
  else if (unit == "m") mult = 60;
  else if (unit == "h") mult = 3600;
  else if (unit == "d") mult = 86400;
  else return std::nullopt;
  const double s = d * mult;
  if (s < 1 || s > 3650.0 * 86400) return std::nullopt;
  return long(s);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  auto number = [&](const std::string& name, const std::string& v, long lo, long hi) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
      usage_error(name + " '" + v + "' is not a whole number in " + std::to_string(lo) + ".." +
                  std::to_string(hi));
    return x;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto val = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    auto flag = [&]() {
      if (has_inline) usage_error(a + " takes no value");
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "-V" || a == "--version") {
      std::printf("%s %s\n", kProg, EASYPP_VERSION);
      std::exit(0);
    } else if (a == "--url") {
      o.url = val();
    } else if (a == "--commands") {
      flag();
      o.commands = true;
    } else if (a == "--interval") {
      o.interval = number(a, val(), 1, 86400);
    } else if (a == "--polls") {
      o.polls = number(a, val(), 1, LONG_MAX / 2);
    } else if (a == "--duration") {
      const std::string v = val();
      o.duration = parse_duration(v);
      if (!o.duration) usage_error("--duration '" + v + "' is not a duration (3600, 90m, 12h, 7d)");
    } else if (a == "--shadow-state") {
      o.shadow_state = val();
    } else if (a == "--warm-from") {
      o.warm_from = val();
    } else if (a == "--state") {
      o.state = val();
    } else if (a == "--force") {
      flag();
      o.force = true;
    } else if (a == "--slurm-conf") {
      o.slurm_conf = val();
    } else if (a == "--set") {
      const std::string v = val();
      o.set += (o.set.empty() ? "" : ",") + v;
    } else if (a == "--api") {
      o.source.api = val();
    } else if (a == "--user") {
      o.source.user = val();
    } else if (a == "--token-file") {
      o.source.token_file = val();
    } else if (a == "--timeout") {
      o.source.timeout = number(a, val(), 1, 3600);
    } else if (a == "--retries") {
      o.source.retries = int(number(a, val(), 0, 10));
    } else if (a == "--json") {
      flag();
      o.json = true;
    } else if (a == "--jobs") {
      flag();
      o.jobs = true;
    } else if (a == "--top") {
      o.top = std::size_t(number(a, val(), 1, 1000000));
    } else if (a == "--report") {
      o.report_dir = val();
      if (o.report_dir.empty()) usage_error("--report needs a directory");
    } else if (a == "--report-only") {
      flag();
      o.report_only = true;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else {
      usage_error("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  if (o.report_only) {
    if (o.shadow_state.empty()) usage_error("--report-only needs --shadow-state FILE");
    if (!o.url.empty() || o.commands)
      usage_error("--report-only reads --shadow-state only; drop --url/--commands");
  } else {
    if (o.url.empty() && !o.commands)
      usage_error("no input: give --url URL (slurmrestd) or --commands (squeue/sacct)");
    if (!o.url.empty() && o.commands) usage_error("give --url or --commands, not both");
  }
  if (o.source.api != "auto") {
    int v = -1;
    if (std::sscanf(o.source.api.c_str(), "v0.0.%d", &v) != 1 || v < 36 || v > 42 ||
        o.source.api != "v0.0." + std::to_string(v))
      usage_error("--api '" + o.source.api + "' is not an OpenAPI version this tool knows "
                  "(v0.0.36 .. v0.0.42, or auto)");
  }
  if (o.set.size() && o.set.find("easypp_") == std::string::npos)
    usage_error("--set '" + o.set + "': give easypp_* settings, e.g. easypp_window=3");
  o.source.url = o.url;
  return o;
}

// --- logging and signals ------------------------------------------------------------

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

void log_line(const std::string& msg) {
  const std::string t = local_time(Time(std::time(nullptr)));
  std::fprintf(stderr, "%s %s: %s\n", t.c_str(), kProg, msg.c_str());
  std::fflush(stderr);
}

// Sleep until `until` (Unix seconds) or a signal.
void sleep_until(Time until) {
  while (!g_stop && Time(std::time(nullptr)) < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

// --- settings -------------------------------------------------------------------------

struct ClusterConf {
  std::string sched_params;  // "" none
  std::string slurm_user;    // "" unknown
  std::string where;         // "FILE" or "scontrol show config"
};

ClusterConf read_slurm_conf(const std::string& path) {
  std::map<std::string, std::string> keys;
  if (!import::read_slurm_conf(path, &keys))
    throw ConfigError{"cannot read " + path + ": " + std::strerror(errno)};
  ClusterConf c;
  c.where = path;
  c.sched_params = keys["schedulerparameters"];
  c.slurm_user = keys["slurmuser"];
  return c;
}

ClusterConf scontrol_config() {
  FILE* p = popen("timeout 15 scontrol show config 2>&1", "r");
  if (p == nullptr) throw ConfigError{"cannot run scontrol: " + std::string(std::strerror(errno))};
  ClusterConf c;
  c.where = "scontrol show config";
  std::string all;
  char buf[4096];
  bool found = false;
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    all += line;
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 3);
    k.erase(k.find_last_not_of(" \t") + 1);
    v.erase(v.find_last_not_of(" \t\r\n") + 1);
    if (k == "SchedulerParameters") {
      found = true;
      c.sched_params = v == "(null)" ? "" : v;
    } else if (k == "SlurmUser") {
      c.slurm_user = v.substr(0, v.find('('));
    }
  }
  const int rc = pclose(p);
  if (rc != 0 || !found) {
    std::string first = all.substr(0, all.find('\n'));
    throw ConfigError{"scontrol show config failed" +
                      (first.empty() ? std::string() : ": " + first) +
                      " (is slurmctld reachable? or give --slurm-conf FILE)"};
  }
  return c;
}

plugin::PluginConfig load_settings(const Options& o, ClusterConf* conf) {
  *conf = o.slurm_conf.empty() ? scontrol_config() : read_slurm_conf(o.slurm_conf);
  std::string params = conf->sched_params;
  if (!o.set.empty()) params += (params.empty() ? "" : ",") + o.set;
  plugin::ParsedConfig pc = plugin::parse_scheduler_parameters(params.c_str());
  for (const auto& w : pc.warnings)
    std::fprintf(stderr, "%s: warning: SchedulerParameters (%s%s): %s\n", kProg,
                 conf->where.c_str(), o.set.empty() ? "" : " and --set", w.c_str());
  return pc.config;
}

// --- the plugin's state file --------------------------------------------------------

class PluginStateWriter {
 public:
  PluginStateWriter(std::string path, const ClusterConf& conf) : path_(std::move(path)) {
    if (path_.empty() || geteuid() != 0) return;
    const std::string su = conf.slurm_user.empty() ? "root" : conf.slurm_user;
    struct passwd* pw = getpwnam(su.c_str());
    if (pw == nullptr)
      throw ConfigError{"SlurmUser '" + su + "' (from " + conf.where +
                        ") is not a user on this host; cannot give it " + path_};
    owner_id_ = plugin::FileOwner{true, pw->pw_uid, pw->pw_gid};
    owner_ = su;
  }
  bool enabled() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  const std::string& owner() const { return owner_; }
  const plugin::FileOwner& file_owner() const { return owner_id_; }

  // Given to SlurmUser through the descriptor before the rename
  // (safe_file.h): nothing is done by path once the file is in place.
  bool write(const plugin::SavedState& s, std::string* err) {
    return plugin::save_state(path_, s, err, owner_id_);
  }

 private:
  std::string path_;
  plugin::FileOwner owner_id_;  // unset unless root writes for SlurmUser
  std::string owner_;
};

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// --- the report ---------------------------------------------------------------------------

void write_report(const Shadow& sh, const Options& o, const ReportInfo& info) {
  if (o.json) {
    json_t* doc = report_json(sh, info);
    char* text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (text == nullptr) throw std::bad_alloc();
    std::fputs(text, stdout);
    std::fputc('\n', stdout);
    std::free(text);
  } else {
    std::fputs(report_text(sh, info, o.top, o.jobs).c_str(), stdout);
  }
  std::fflush(stdout);
  if (!o.report_dir.empty()) {
    json_t* doc = report_json(sh, info);
    try {
      easypp::report::ReportDir dir(o.report_dir);
      dir.write(doc);
    } catch (const std::exception& e) {
      json_decref(doc);
      throw ConfigError{e.what()};
    }
    json_decref(doc);
    if (!o.quiet)
      std::fprintf(stderr, "%s: wrote %s/index.html\n", kProg, o.report_dir.c_str());
  }
}

// --- main -----------------------------------------------------------------------------

int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  if (!o.report_dir.empty()) {
    // Checked before following for hours: a typo costs nothing.
    try {
      easypp::report::ReportDir probe(o.report_dir);
    } catch (const std::exception& e) {
      throw ConfigError{e.what()};
    }
  }
  const Time now0 = Time(std::time(nullptr));

  ShadowState saved;
  bool have_saved = false;
  if (!o.shadow_state.empty()) {
    std::string err;
    bool missing = false;
    if (load_shadow_state(o.shadow_state, &saved, &err, &missing)) {
      have_saved = true;
    } else if (!missing || o.report_only) {
      throw ConfigError{err + (missing ? "" : " (fix or remove it; it is not overwritten)")};
    }
  }

  ReportInfo info;
  info.version = EASYPP_VERSION;
  info.command = o.command_line;

  if (o.report_only) {
    plugin::ParsedConfig pc = plugin::apply_settings(saved.settings);
    Shadow sh(pc.config);
    sh.restore(saved, now0);
    info.source = saved.source;
    info.settings = pc.config.settings();
    info.describe = pc.config.describe();
    info.generated = now0;
    write_report(sh, o, info);
    return 0;
  }

  ClusterConf conf;
  const plugin::PluginConfig cfg = load_settings(o, &conf);
  Shadow sh(cfg);
  if (have_saved) {
    const plugin::ParsedConfig before = plugin::apply_settings(saved.settings);
    if (before.config.describe() != cfg.describe() && !o.quiet)
      log_line("settings changed since " + o.shadow_state + " was written (" +
               before.config.describe() + " -> " + cfg.describe() +
               "): the history is kept; predictions from now on use the new settings");
    sh.restore(saved, now0);
    if (!o.quiet)
      log_line("continuing from " + o.shadow_state + ": " + std::to_string(saved.records.size()) +
               " jobs judged, " + std::to_string(saved.jobs.size()) + " followed, last poll " +
               local_time(saved.last));
    if (!o.warm_from.empty() && !o.quiet)
      log_line("--warm-from ignored: the shadow state already holds the history");
  } else if (!o.warm_from.empty()) {
    plugin::SavedState ws;
    std::string err;
    if (!plugin::load_state(o.warm_from, &ws, &err)) throw ConfigError{err};
    sh.warm_start(ws, now0);
    if (!o.quiet)
      log_line("warm start from " + o.warm_from + ": history of " +
               std::to_string(sh.book().predictor().users()) + " users (" +
               std::to_string(ws.learned_jobs) + " jobs learned so far, the last ended " +
               (ws.last_learned_end ? local_time(ws.last_learned_end) : std::string("never")) +
               ")");
  }

  // The plugin's state file: never replace one somebody else wrote.
  PluginStateWriter plugin_state(o.state, conf);
  if (plugin_state.enabled()) {
    struct stat st;
    const bool ours = have_saved && !saved.plugin_state.empty() && saved.plugin_state == o.state;
    const bool from_warm = !o.warm_from.empty() && same_file(o.warm_from, o.state);
    if (stat(o.state.c_str(), &st) == 0 && !ours && !from_warm && !o.force)
      throw ConfigError{o.state + " exists: it may hold the history sched/easypp learned; "
                        "--force replaces it (or give it as --warm-from too, to continue "
                        "from it)"};
  }

  easypp::import::rest_global_init();
  Source source(o.source, [&](const std::string& m) {
    if (!o.quiet) log_line(m);
  });
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);

  info.settings = cfg.settings();
  info.describe = cfg.describe();
  if (!o.quiet)
    log_line("following " + source.describe() + " every " + std::to_string(o.interval) +
             " s; settings from " + conf.where + (o.set.empty() ? "" : " and --set") + ": " +
             cfg.describe());

  const Time stop_at = o.duration ? now0 + *o.duration : 0;
  long polls = 0;
  std::uint64_t reached = 0;
  std::string last_error;
  bool first_attempt = true;
  auto save_all = [&](bool final) {
    if (!o.shadow_state.empty()) {
      ShadowState s = sh.save();
      s.source = source.describe();
      s.plugin_state = o.state;
      std::string err;
      if (!save_shadow_state(o.shadow_state, s, &err)) {
        if (final) throw ConfigError{err};
        log_line("error: " + err + " (will retry after the next poll)");
      }
    }
    if (plugin_state.enabled() && (sh.history_changed() || final)) {
      std::string err;
      if (plugin_state.write(sh.plugin_state(), &err)) {
        sh.clear_history_changed();
      } else {
        if (final) throw ConfigError{err};
        log_line("error: " + err + " (will retry after the next poll)");
      }
    }
  };

  // A directory that cannot take the files is a configuration error now,
  // not after a week (they are written by rename into it).
  // Nor one that others can write to (safe_file.h).
  for (const std::string* f : {&o.shadow_state, &o.state}) {
    if (f->empty()) continue;
    const std::string dir = plugin::dir_of(*f);
    if (access(dir.c_str(), W_OK | X_OK) != 0)
      throw ConfigError{*f + ": cannot write into " + dir + ": " + std::strerror(errno)};
    std::string why;
    if (!plugin::private_directory(dir, f == &o.state ? plugin_state.file_owner() : plugin::FileOwner{}, &why))
      throw ConfigError{*f + ": " + why};
  }

  while (!g_stop) {
    const Time t0 = Time(std::time(nullptr));
    // Accounting: the jobs that ran since the last replayed cycle (a restart
    // replays the time it was down), with a margin.
    const Time acct_since = (sh.last() > 0 ? sh.last() : t0) - std::max<long>(600, 2 * o.interval);
    Fetched f;
    SourceError err;
    if (source.fetch(acct_since, &f, &err)) {
      ++reached;
      const PollResult r = sh.poll(f.views, f.now);
      if (f.refused > 0 && !o.quiet)
        log_line(std::to_string(f.refused) + " job records could not be used (e.g. " +
                 f.refused_example + ")");
      save_all(false);
      if (!o.quiet)
        log_line("poll " + std::to_string(sh.counters().polls) + ": " + std::to_string(r.pending) +
                 " pending, " + std::to_string(r.running) + " running; " +
                 std::to_string(r.judged) + " jobs judged (" +
                 std::to_string(sh.records().size()) + " in all), " +
                 std::to_string(r.corrections) + " corrections, " + std::to_string(r.learned) +
                 " runtimes learned (history: " + std::to_string(sh.book().predictor().users()) +
                 " users); " + std::to_string(r.cycles) + " cycles replayed; read " +
                 std::to_string(f.ctld_jobs) + " jobs from slurmctld, " +
                 std::to_string(f.acct_jobs) + " from accounting");
    } else {
      sh.poll_failed();
      last_error = err.what;
      if (first_attempt && err.config) throw ConfigError{err.what};
      log_line("poll failed: " + err.what + (err.config ? "" : "; trying again at the next poll"));
    }
    first_attempt = false;
    ++polls;
    if (o.polls && polls >= *o.polls) break;
    Time next = t0 + o.interval;
    if (stop_at && next > stop_at) next = stop_at;
    sleep_until(next);
    if (stop_at && Time(std::time(nullptr)) >= stop_at) break;
  }
  if (reached == 0)
    throw ConfigError{"no poll reached the cluster" +
                      (last_error.empty() ? std::string() : ": " + last_error)};
  // The report is printed even if the last write fails (then exit 2).
  std::string final_error;
  try {
    save_all(true);
  } catch (const ConfigError& e) {
    final_error = e.what;
  }
  info.source = source.describe();
  info.generated = Time(std::time(nullptr));
  if (!o.quiet && g_stop) log_line("stopped by a signal; reporting");
  write_report(sh, o, info);
  if (!final_error.empty()) throw ConfigError{final_error};
  if (plugin_state.enabled() && !o.quiet)
    log_line("history of " + std::to_string(sh.book().predictor().users()) + " users in " +
             o.state + (plugin_state.owner().empty() ? "" : ", owned by " + plugin_state.owner()) +
             ": copy it to StateSaveLocation/easypp_state.json when switching to sched/easypp");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProg, e.what.c_str());
    return 2;
  } catch (const easypp::report::BadReportDir& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProg, e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", kProg);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", kProg, e.what());
    return 1;
  }
}
