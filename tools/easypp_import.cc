// easypp-import: a site's Slurm accounting, read as structured JSON (from
// slurmrestd's /slurmdb/v0.0.NN/jobs or `sacct --json`), written as
//   - SWF with the conventions of easypp-sacct2swf (easypp-sim replays it),
//   - and/or the plugin's history state file (a warm start: sched/easypp then
//     predicts from the users' real last runs from its first cycle).
//
// Months of history: the time range is read in windows (one request, or one
// sacct run, per window); each answer is parsed one job at a time
// (import/json_stream.h) and only a compact record per job is kept. A job
// belongs to the window its end falls in (a job running across windows is
// returned by several), so nothing is counted twice.
//
// Faults (slurmrestd down, refusing, 401/403/404/5xx, timeouts, truncated or
// malformed JSON, an unknown OpenAPI version): one message naming the URL and
// the cause, bounded retries with backoff for the transient ones, exit status
// 2, and no output file unless everything was read (temporary file, rename).
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "easypp/predictor.h"
#include "import/acct_job.h"
#include "import/json_stream.h"
#include "import/rest_client.h"
#include "plugin_config.h"
#include "plugin_state.h"

#ifndef EASYPP_VERSION
#define EASYPP_VERSION "dev"
#endif

namespace {

using easypp::import::AcctJob;
using easypp::import::document_errors;
using easypp::import::known_api_version;
using easypp::import::url_encode;
using easypp::import::JobStream;
using easypp::import::RestEndpoint;
using easypp::import::RestResult;
using Time = std::int64_t;

const char* const kProg = "easypp-import";
// The plugin's estimate for a job without a time limit (agent.cc).
constexpr Time kUnlimitedEstimate = Time(365) * 24 * 3600;

// 23.02/23.11 v0.0.39-40, 24.05 v0.0.39-41, 24.11 v0.0.40-42.

struct InputError {
  std::string what;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "%s: %s (see --help)\n", kProg, msg.c_str());
  std::exit(2);
}

const char* const kHelp = R"(Usage: easypp-import --url URL [options]
       easypp-import --sacct-json FILE|- [options]
       easypp-import --run-sacct [options]

Read a site's Slurm accounting as structured JSON and write it as an SWF log
(replayed by easypp-sim, same conventions as easypp-sacct2swf) and/or as
sched/easypp's history state file (a warm start).

INPUT (one of)
  --url URL           slurmrestd: http://HOST:PORT (JWT: the token from
                      SLURM_JWT or --token-file, the user from --user) or
                      unix:/path/to/socket (rest_auth/local: slurmrestd must
                      run as the calling user, or the caller be root). Reads
                      GET /slurmdb/v0.0.NN/jobs?start_time=..&end_time=..
                      &skip_steps=true, one request per window
  --sacct-json FILE   the output of `sacct --json` (a file, or - for a pipe)
  --run-sacct         run `sacct --json --allusers -S .. -E ..` per window
                      (no slurmrestd needed)

RANGE
  --start TIME, --end TIME
                      jobs that ended in [start, end): YYYY-MM-DD[THH:MM[:SS]]
                      (local time) or Unix seconds; --end defaults to now
                      (jobs that ended this second are in)
  --days N            start = end - N days (default 30 with --url/--run-sacct)
  --window-hours H    hours of history per request (default 24): bounds the
                      size of each answer, not the memory of this tool
  Jobs still running or pending at --end are counted and skipped (or written
  with --include-running). With --sacct-json the range only filters.

SLURMRESTD
  --api VERSION       the slurmdb OpenAPI version (v0.0.36 .. v0.0.42) or auto
                      (default): the highest one slurmrestd's /openapi/v3
                      lists that this tool knows
  --user NAME         X-SLURM-USER-NAME (default: the user running this tool)
  --token-file FILE   the JWT (a line TOKEN or SLURM_JWT=TOKEN); default:
                      the SLURM_JWT environment variable
  --timeout S         seconds for one answer (default 300; 10 to connect)
  --retries N         tries again after a transient fault (connection refused,
                      timeout, HTTP 5xx, a truncated answer), waiting 1 s, 2 s,
                      4 s, ... (default 3); 401/403/404 and malformed JSON are
                      not retried

SWF OUTPUT (as easypp-sacct2swf)
  -o, --output FILE   write the SWF here, mode 0600 (a temporary file, then
                      renamed; into a directory no one but its owner and
                      root can write to: another is refused);
                      default: standard output unless --state is given
  --procs N           machine size (default: sinfo's CPU total, else the
                      largest allocation, with a warning)
  --no-sinfo          do not ask sinfo
  --computer NAME     the Computer header (default: the cluster name)
  --installation TEXT an Installation header line
  --partition LIST, --cluster LIST
                      keep only these partitions / clusters
  --keep-ids          users and groups as UIDs/GIDs (resolved on this host)
  --jobname-as-app    number job names 1..N (field 14)
  --include-running   write running jobs with their run time so far, status -1
  --requeued last|all requeued jobs: only the last run (default) or each run
  --submit-from submit|eligible

WARM START
  --state FILE        write sched/easypp's history state file (the format of
                      StateSaveLocation/easypp_state.json): the finished jobs
                      of the range, learned in order of their end as the
                      plugin learns them (positive run time; a heterogeneous
                      job once, from its leader; earlier runs of requeued jobs
                      not). Written atomically, mode 0600, owned by SlurmUser
                      when run as root (given through the descriptor before
                      the rename; a directory others than its owner and root
                      can write to is refused). Write it while slurmctld is stopped
                      (or not yet using sched/easypp): it would overwrite it
  --force             replace an existing state file (its history is lost)
  --slurm-conf FILE   where SchedulerParameters' easypp_* predictor settings
                      (window, history type, ...) and SlurmUser are read
                      (default: $SLURM_CONF, else /etc/slurm/slurm.conf)

OTHER
  -q, --quiet         no summary on standard error
  -h, --help, -V, --version

EXIT STATUS
  0 written; 2 bad usage, unreadable or malformed input, slurmrestd or sacct
  failing (after the retries), nothing to write; 1 internal error.

EXAMPLES
  export SLURM_JWT=$(scontrol token lifespan=3600 | cut -d= -f2-)
  easypp-import --url http://ctl:6820 --days 90 --procs 2048 -o site.swf
  easypp-import --url unix:/run/slurmrestd.sock --days 30 --state \
      /var/spool/slurmctld/easypp_state.json
  sacct --json -a -S 2024-01-01 -E 2024-04-01 | easypp-import --sacct-json - -o q1.swf
  easypp-sim -w site.swf -s easy,easy++
)";

// --- options ----------------------------------------------------------------------

struct Options {
  std::string url, sacct_json;
  bool run_sacct = false;
  std::optional<Time> start, end;
  std::optional<double> days;
  double window_hours = 24;
  std::string api = "auto";
  std::string user, token_file;
  long timeout = 300;
  int retries = 3;
  std::string output, state;
  bool force = false;
  std::string slurm_conf;
  std::optional<long> procs;
  bool no_sinfo = false;
  std::string computer, installation;
  std::set<std::string> partitions, clusters;
  bool keep_ids = false, jobname_as_app = false, include_running = false;
  bool requeued_all = false, submit_eligible = false;
  bool quiet = false;
};

std::optional<Time> parse_time_arg(const std::string& s) {
  if (!s.empty() && s.size() <= 12 &&
      std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Time(std::stoll(s));
  struct tm tm {};
  int y, mo, d, h = 0, mi = 0, sec = 0;
  char tail = 0;
  const int n = std::sscanf(s.c_str(), "%4d-%2d-%2d%c", &y, &mo, &d, &tail);
  if (n == 3) {
  } else if (n == 4 && (tail == 'T' || tail == ' ')) {
    const int m = std::sscanf(s.c_str() + 11, "%2d:%2d:%2d", &h, &mi, &sec);
    if (m < 2) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
    return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  tm.tm_isdst = -1;
  const time_t t = mktime(&tm);
  if (t == time_t(-1) || tm.tm_mday != d) return std::nullopt;  // 2024-02-31
  return Time(t);
}

std::set<std::string> split_list(const std::string& s) {
  std::set<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.insert(item);
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  auto need = [&](int& i, const std::string& name) -> std::string {
    if (i + 1 >= argc) usage_error(name + " needs a value");
    return argv[++i];
  };
  auto number = [&](const std::string& name, const std::string& v, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno != 0 || !(d >= lo && d <= hi))
      usage_error(name + " '" + v + "' is not a number in " + std::to_string(long(lo)) + ".." +
                  std::to_string(long(hi)));
    return d;
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
    auto val = [&]() { return has_inline ? inline_value : need(i, a); };
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "-V" || a == "--version") {
      std::printf("%s %s\n", kProg, EASYPP_VERSION);
      std::exit(0);
    } else if (a == "--url") {
      o.url = val();
    } else if (a == "--sacct-json") {
      o.sacct_json = val();
    } else if (a == "--run-sacct") {
      o.run_sacct = true;
    } else if (a == "--start" || a == "--end") {
      const std::string v = val();
      const auto t = parse_time_arg(v);
      if (!t) usage_error(a + " '" + v + "' is not a time (YYYY-MM-DD[THH:MM[:SS]] or Unix seconds)");
      (a == "--start" ? o.start : o.end) = *t;
    } else if (a == "--days") {
      o.days = number(a, val(), 0.001, 36500);
    } else if (a == "--window-hours") {
      o.window_hours = number(a, val(), 0.01, 24 * 366);
    } else if (a == "--api") {
      o.api = val();
    } else if (a == "--user") {
      o.user = val();
    } else if (a == "--token-file") {
      o.token_file = val();
    } else if (a == "--timeout") {
      o.timeout = long(number(a, val(), 1, 86400));
    } else if (a == "--retries") {
      o.retries = int(number(a, val(), 0, 10));
    } else if (a == "-o" || a == "--output") {
      o.output = has_inline ? inline_value : need(i, a);
    } else if (a == "--state") {
      o.state = val();
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--slurm-conf") {
      o.slurm_conf = val();
    } else if (a == "--procs") {
      o.procs = long(number(a, val(), 1, 1e9));
    } else if (a == "--no-sinfo") {
      o.no_sinfo = true;
    } else if (a == "--computer") {
      o.computer = val();
    } else if (a == "--installation") {
      o.installation = val();
    } else if (a == "--partition") {
      o.partitions = split_list(val());
    } else if (a == "--cluster") {
      o.clusters = split_list(val());
    } else if (a == "--keep-ids") {
      o.keep_ids = true;
    } else if (a == "--jobname-as-app") {
      o.jobname_as_app = true;
    } else if (a == "--include-running") {
      o.include_running = true;
    } else if (a == "--requeued") {
      const std::string v = val();
      if (v != "last" && v != "all") usage_error("--requeued must be last or all");
      o.requeued_all = v == "all";
    } else if (a == "--submit-from") {
      const std::string v = val();
      if (v != "submit" && v != "eligible") usage_error("--submit-from must be submit or eligible");
      o.submit_eligible = v == "eligible";
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else {
      usage_error("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  const int sources = !o.url.empty() + !o.sacct_json.empty() + o.run_sacct;
  if (sources == 0) usage_error("no input: give --url URL, --sacct-json FILE or --run-sacct");
  if (sources > 1) usage_error("give one input: --url, --sacct-json or --run-sacct");
  if (o.start && o.days) usage_error("give --start or --days, not both");
  if (o.start && o.end && *o.end <= *o.start) usage_error("--end must be after --start");
  if (o.api != "auto") {
    int v = -1;
    if (std::sscanf(o.api.c_str(), "v0.0.%d", &v) != 1 ||
        !known_api_version(v) ||
        o.api != "v0.0." + std::to_string(v))
      usage_error("--api '" + o.api + "' is not an OpenAPI version this tool knows "
                  "(v0.0.36 .. v0.0.42, or auto)");
  }
  if (o.output.empty() && o.state.empty()) o.output = "-";
  return o;
}

// --- the records ------------------------------------------------------------------

// Strings interned once: a record is a few integers.
class Names {
 public:
  std::uint32_t id(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto n = std::uint32_t(names_.size());
    names_.push_back(s);
    ids_.emplace(s, n);
    return n;
  }
  const std::string& operator[](std::uint32_t i) const { return names_[i]; }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> names_;
};

struct Rec {
  std::uint64_t seq;  // order of reading (ties)
  std::uint32_t job_id, array_job_id, het_job_id;
  std::uint32_t cluster, user, group, partition, name, state;
  Time submit, start, end, elapsed, suspended;
  std::int64_t limit_min;  // -1 none
  std::int64_t alloc, req, req_mem_mb;
  bool unlimited;
};

struct Stats {
  std::uint64_t records = 0, bad = 0, pending = 0, running = 0, running_kept = 0,
                requeued = 0, filtered = 0, ended_after = 0,
                never_started = 0, unlimited = 0, start_before_submit = 0, array_tasks = 0,
                het_components = 0, unresolved_ids = 0, no_user = 0, requeue_logged = 0,
                not_utf8 = 0;
  std::map<std::string, std::uint64_t> unknown_state;
  std::map<std::string, std::uint64_t> bad_reasons;
  std::set<std::int64_t> bad_ids;
  std::uint64_t requests = 0, retries = 0, bytes = 0;
};

struct Store {
  Names names;
  std::vector<Rec> recs;
  // (cluster << 32 | job id) -> index in recs: the last run of each job
  std::unordered_map<std::uint64_t, std::size_t> by_key;
  std::uint64_t seq = 0;
};

const std::set<std::string>& unfinished_states() {
  static const std::set<std::string> s = {
      "PENDING", "RUNNING", "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",
      "SPECIAL_EXIT", "STOPPED", "SIGNALING", "STAGE_OUT", "COMPLETING", "CONFIGURING",
      "RESV_DEL_HOLD"};
  return s;
}

// SWF status (field 11) of a state, as easypp-sacct2swf maps it; -2: unknown.
int swf_status(const std::string& st) {
  if (st == "COMPLETED") return 1;
  if (st == "CANCELLED" || st == "REVOKED") return 5;
  static const std::set<std::string> zero = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                                             "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REQUEUED"};
  return zero.count(st) ? 0 : -2;
}

// The window a record belongs to: finished jobs by their end in [lo, hi);
// unfinished ones (end 0) only in the last window (`last`).
struct Window {
  Time lo, hi;
  bool last;
};

// Classify and keep one parsed record. Returns nothing; counts in stats.
void accept(const AcctJob& j, const Options& o, const std::optional<Window>& w, Store& store,
            Stats& st) {
  if (w) {
    if (j.end > 0 && (j.end < w->lo || j.end >= w->hi)) {
      // another window's (or outside the range); a job that ends after the
      // range is "running at the end" once, in the last window
      if (w->last && j.end >= w->hi && j.start > 0 && j.start < w->hi) ++st.ended_after;
      return;
    }
    if (j.end == 0 && !w->last) return;
  }
  ++st.records;
  if (!o.partitions.empty() && !o.partitions.count(j.partition)) {
    ++st.filtered;
    return;
  }
  if (!o.clusters.empty() && !o.clusters.count(j.cluster)) {
    ++st.filtered;
    return;
  }
  if (j.start == 0 && j.end == 0) {
    ++st.pending;
    return;
  }
  if (j.end == 0) {
    if (!o.include_running) {
      ++st.running;
      return;
    }
    ++st.running_kept;
  }
  Rec r{};
  r.seq = store.seq++;
  r.job_id = j.job_id;
  r.array_job_id = j.array_job_id;
  r.het_job_id = j.het_job_id;
  r.cluster = store.names.id(j.cluster);
  r.user = store.names.id(j.user);
  r.group = store.names.id(j.group);
  r.partition = store.names.id(j.partition);
  r.name = store.names.id(o.jobname_as_app ? j.name : std::string());
  r.state = store.names.id(j.state);
  r.submit = (o.submit_eligible && j.eligible > j.submit) ? j.eligible : j.submit;
  r.start = j.start;
  r.end = j.end;
  r.elapsed = j.elapsed;
  r.suspended = j.suspended;
  r.limit_min = j.limit_min;
  r.unlimited = j.unlimited;
  r.alloc = j.alloc_cpus;
  r.req = j.req_cpus;
  r.req_mem_mb = j.req_mem_mb;
  if (o.requeued_all) {
    store.recs.push_back(r);
    return;
  }
  const std::uint64_t key = (std::uint64_t(r.cluster) << 32) | r.job_id;
  auto it = store.by_key.find(key);
  if (it == store.by_key.end()) {
    store.by_key.emplace(key, store.recs.size());
    store.recs.push_back(r);
    return;
  }
  ++st.requeued;
  Rec& prev = store.recs[it->second];
  // Keep the last run: the latest submit (Slurm resets it at a requeue).
  if (std::make_pair(r.submit, r.seq) >= std::make_pair(prev.submit, prev.seq)) prev = r;
}

// --- reading -----------------------------------------------------------------------

std::string fmt_local(Time t, const char* f = "%Y-%m-%dT%H:%M:%S") {
  const time_t tt = time_t(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  char b[64];
  std::strftime(b, sizeof b, f, &tm);
  return b;
}



// One JSON document (an answer or a sacct run) into the store. `where` names
// it in messages.
class DocumentReader {
 public:
  /// Each good record goes to `sink` as soon as it is parsed.
  using Sink = std::function<void(AcctJob&&)>;
  DocumentReader(const Options& o, Sink sink, Stats& st, const std::string& where)
      : o_(o), sink_(std::move(sink)), st_(st), where_(where),
        stream_([this](json_t* job, std::size_t index, std::string*) {
          AcctJob j;
          std::string why;
          if (!easypp::import::parse_job(job, &j, &why)) {
            // Windows overlap (and a job running across them is in each):
            // a bad record is counted once.
            json_t* id = json_object_get(job, "job_id");
            if (json_is_integer(id) && !st_.bad_ids.insert(json_integer_value(id)).second)
              return true;
            ++st_.bad;
            ++st_.bad_reasons[why.substr(0, why.find(' ', 10))];
            if (!o_.quiet && st_.bad <= 20)
              std::fprintf(stderr, "%s: %s: job %zu: %s; record skipped\n", kProg,
                           where_.c_str(), index + 1, why.c_str());
            else if (!o_.quiet && st_.bad == 21)
              std::fprintf(stderr, "%s: further bad records are only counted\n", kProg);
            return true;
          }
          sink_(std::move(j));
          return true;
        }) {}
  JobStream& stream() { return stream_; }

 private:
  const Options& o_;
  Sink sink_;
  Stats& st_;
  std::string where_;
  JobStream stream_;
};

std::string read_token(const Options& o) {
  std::string tok;
  if (!o.token_file.empty()) {
    std::ifstream f(o.token_file);
    if (!f) throw InputError{"cannot read the token file " + o.token_file + ": " +
                             std::strerror(errno)};
    std::getline(f, tok);
  } else if (const char* e = std::getenv("SLURM_JWT")) {
    tok = e;
  }
  if (tok.rfind("SLURM_JWT=", 0) == 0) tok = tok.substr(10);
  while (!tok.empty() && (tok.back() == '\n' || tok.back() == '\r' || tok.back() == ' '))
    tok.pop_back();
  return tok;
}

void sleep_backoff(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1000L << std::min(attempt, 6)));
}

// GET with the retries; the body goes to a fresh JobStream each attempt, the
// records to *jobs only when an attempt succeeded.
void fetch_document(const RestEndpoint& ep, const std::string& path, const Options& o,
                    std::vector<AcctJob>* jobs, Stats& st) {
  const std::string url = ep.display(path);
  std::string last;
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (attempt > 0) {
      ++st.retries;
      if (!o.quiet)
        std::fprintf(stderr, "%s: %s: %s; trying again (%d of %d)\n", kProg, url.c_str(),
                     last.c_str(), attempt, o.retries);
      sleep_backoff(attempt - 1);
    }
    std::vector<AcctJob> got;
    Stats local = st;  // bad-record counts of a failed attempt are not kept
    DocumentReader reader(o, [&got](AcctJob&& j) { got.push_back(std::move(j)); }, local, url);
    ++st.requests;
    RestResult r = easypp::import::rest_get(
        ep, path, [&](const char* d, std::size_t n, std::string* why) {
          if (!reader.stream().feed(d, n)) {
            *why = "malformed JSON in the answer: " + reader.stream().error();
            return false;
          }
          return true;
        });
    if (r.ok && !reader.stream().finish()) {
      r.ok = false;
      r.error = reader.stream().error();
      // a complete HTTP answer whose JSON ends early: slurmrestd or a proxy
      // cut it; a retry may get all of it
      r.retryable = r.error.find("truncated") != std::string::npos;
    }
    if (r.ok && !reader.stream().has_jobs_member()) {
      const std::string errs = document_errors(reader.stream().others());
      r.ok = false;
      r.error = errs.empty() ? "the answer has no \"jobs\" array (not a slurmdb jobs answer)"
                             : "slurmrestd answered with errors: " + errs;
    }
    if (r.ok) {
      const std::string errs = document_errors(reader.stream().others());
      if (!errs.empty()) {
        r.ok = false;
        r.error = "slurmrestd answered with errors: " + errs;
        if (errs.find("authentication") != std::string::npos)
          r.error += " (the token is not valid for this user, or expired: set SLURM_JWT or "
                     "--token-file, and --user)";
      }
    }
    if (r.ok) {
      st.bad = local.bad;
      st.bad_reasons = local.bad_reasons;
      st.bad_ids = local.bad_ids;
      st.bytes += reader.stream().bytes();
      st.not_utf8 += reader.stream().repaired();
      jobs->insert(jobs->end(), std::make_move_iterator(got.begin()),
                   std::make_move_iterator(got.end()));
      return;
    }
    last = r.error;
    if (!r.retryable) break;
  }
  throw InputError{url + ": " + last};
}

// auto: the highest known slurmdb version whose jobs path /openapi/v3 lists.
std::string detect_api(const RestEndpoint& ep, const Options& o, Stats& st) {
  std::string body;
  std::string last;
  const std::string path = "/openapi/v3";
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (attempt > 0) {
      ++st.retries;
      if (!o.quiet)
        std::fprintf(stderr, "%s: %s: %s; trying again (%d of %d)\n", kProg,
                     ep.display(path).c_str(), last.c_str(), attempt, o.retries);
      sleep_backoff(attempt - 1);
    }
    body.clear();
    ++st.requests;
    RestResult r = easypp::import::rest_get(ep, path, [&](const char* d, std::size_t n,
                                                         std::string* why) {
      if (body.size() + n > (std::size_t(256) << 20)) {
        *why = "the OpenAPI description is larger than 256 MiB";
        return false;
      }
      body.append(d, n);
      return true;
    });
    if (r.ok) {
      json_error_t e;
      json_t* spec = json_loadb(body.data(), body.size(), 0, &e);
      if (spec == nullptr)
        throw InputError{ep.display(path) + ": the OpenAPI description is not JSON (" + e.text +
                         ", line " + std::to_string(e.line) + ")"};
      json_t* paths = json_object_get(spec, "paths");
      std::vector<int> served;
      const char* k;
      json_t* v;
      json_object_foreach(paths, k, v) {
        int n = -1;
        char rest[16] = "";
        if (std::sscanf(k, "/slurmdb/v0.0.%d/jobs%15s", &n, rest) >= 1 &&
            (rest[0] == '\0' || std::string(rest) == "/"))
          served.push_back(n);
      }
      json_decref(spec);
      int best = -1;
      for (int n : served)
        if (known_api_version(n)) best = std::max(best, n);
      if (best < 0) {
        std::string list;
        for (int n : served) list += (list.empty() ? "" : ", ") + std::string("v0.0.") +
                                     std::to_string(n);
        throw InputError{ep.display(path) + ": this slurmrestd serves no slurmdb jobs endpoint "
                         "this tool knows (it serves: " + (list.empty() ? "none; is the "
                         "openapi/dbv0.0.NN or openapi/slurmdbd plugin loaded?" : list) +
                         "; known: v0.0.36 .. v0.0.42)"};
      }
      return "v0.0." + std::to_string(best);
    }
    last = r.error;
    if (!r.retryable) break;
  }
  throw InputError{ep.display(path) + ": " + last};
}

// A sacct --json document from a stream (file, pipe, sacct's stdout).
// No retry here: the records go straight to `sink` (the caller writes
// nothing unless the whole document was read).
void read_stream(FILE* f, const std::string& where, const Options& o,
                 const DocumentReader::Sink& sink, Stats& st) {
  DocumentReader reader(o, sink, st, where);
  std::vector<char> buf(1 << 16);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    if (!reader.stream().feed(buf.data(), n))
      throw InputError{where + ": malformed JSON: " + reader.stream().error()};
  }
  if (std::ferror(f)) throw InputError{where + ": read error: " + std::strerror(errno)};
  if (!reader.stream().finish()) throw InputError{where + ": " + reader.stream().error()};
  st.bytes += reader.stream().bytes();
  st.not_utf8 += reader.stream().repaired();
  if (!reader.stream().has_jobs_member()) {
    const std::string errs = document_errors(reader.stream().others());
    throw InputError{where + ": no \"jobs\" array: not `sacct --json` output" +
                     (errs.empty() ? std::string() : " (errors: " + errs + ")")};
  }
  const std::string errs = document_errors(reader.stream().others());
  if (!errs.empty()) throw InputError{where + ": the document reports errors: " + errs};
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void run_sacct_window(const Options& o, const Window& w, const DocumentReader::Sink& sink,
                      Stats& st) {
  // Asked one hour wider each side, like the REST windows; records are
  // assigned to windows by their end.
  std::string cmd = "sacct --json --allusers --duplicates --starttime " +
                    fmt_local(w.lo - 3600) + " --endtime " + fmt_local(w.hi + 3600);
  if (!o.clusters.empty()) {
    std::string l;
    for (const auto& c : o.clusters) l += (l.empty() ? "" : ",") + c;
    cmd += " --clusters " + shell_quote(l);
  }
  char errpath[] = "/tmp/easypp-import-sacct.XXXXXX";
  const int efd = mkstemp(errpath);
  if (efd < 0) throw InputError{std::string("cannot create a temporary file: ") + std::strerror(errno)};
  close(efd);
  FILE* p = popen((cmd + " 2>" + errpath).c_str(), "r");
  if (p == nullptr) {
    unlink(errpath);
    throw InputError{"cannot run sacct: " + std::string(std::strerror(errno))};
  }
  ++st.requests;
  auto sacct_stderr = [&]() {
    std::ifstream f(errpath);
    std::string line, all;
    while (std::getline(f, line) && all.size() < 400) all += (all.empty() ? "" : " ") + line;
    unlink(errpath);
    return all;
  };
  try {
    read_stream(p, cmd, o, sink, st);
  } catch (InputError& e) {
    const int rc = pclose(p);
    const std::string err = sacct_stderr();
    if (rc != 0)
      throw InputError{cmd + ": sacct failed (exit status " +
                       std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc) + ")" +
                       (err.empty() ? "" : ": " + err)};
    throw;
  }
  const int rc = pclose(p);
  const std::string err = sacct_stderr();
  if (rc != 0)
    throw InputError{cmd + ": sacct failed (exit status " +
                     std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc) + ")" +
                     (err.empty() ? "" : ": " + err)};
}

// --- SWF -------------------------------------------------------------------------

std::optional<long> sinfo_cpus(const Options& o, std::string* why) {
  std::string cmd = "timeout 5 sinfo -h -N -o '%N %C'";
  if (!o.partitions.empty()) {
    std::string l;
    for (const auto& p : o.partitions) l += (l.empty() ? "" : ",") + p;
    cmd += " -p " + shell_quote(l);
  }
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    *why = "sinfo could not run";
    return std::nullopt;
  }
  std::map<std::string, long> nodes;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    char node[256], cpus[256];
    if (std::sscanf(line, "%255s %255s", node, cpus) != 2) continue;
    long a, i, ot, t;
    if (std::sscanf(cpus, "%ld/%ld/%ld/%ld", &a, &i, &ot, &t) == 4) nodes[node] = t;
  }
  const int rc = pclose(p);
  if (rc != 0 || nodes.empty()) {
    *why = rc != 0 ? "sinfo failed or is not installed" : "sinfo reported no nodes";
    return std::nullopt;
  }
  long total = 0;
  for (const auto& kv : nodes) total += kv.second;
  *why = "sinfo: " + std::to_string(total) + " CPUs on " + std::to_string(nodes.size()) +
         " nodes";
  return total;
}

struct SwfResult {
  std::size_t jobs = 0, users = 0, partitions = 0;
  long procs = 0;
  std::string procs_source;
};

SwfResult write_swf(Store& store, const Options& o, Stats& st, const std::string& source_note) {
  std::vector<const Rec*> jobs;
  jobs.reserve(store.recs.size());
  for (const auto& r : store.recs) jobs.push_back(&r);
  std::sort(jobs.begin(), jobs.end(), [](const Rec* a, const Rec* b) {
    if (a->submit != b->submit) return a->submit < b->submit;
    if (a->job_id != b->job_id) return a->job_id < b->job_id;
    return a->seq < b->seq;
  });
  const Time t0 = jobs.front()->submit;
  std::map<std::uint32_t, int> users, groups, parts, apps;
  std::map<int, std::string> part_names;
  auto number = [&](std::map<std::uint32_t, int>& table, std::uint32_t key) {
    if (store.names[key].empty()) return -1;
    auto it = table.find(key);
    if (it != table.end()) return it->second;
    const int n = int(table.size()) + 1;
    table.emplace(key, n);
    return n;
  };
  auto keep_id = [&](const std::string& name, bool user) -> long {
    if (!name.empty()) {
      if (user) {
        if (struct passwd* pw = getpwnam(name.c_str())) return long(pw->pw_uid);
      } else if (struct group* gr = getgrnam(name.c_str())) {
        return long(gr->gr_gid);
      }
    }
    ++st.unresolved_ids;
    return -1;
  };
  std::string lines;
  std::size_t n = 0;
  std::int64_t max_alloc = 0;
  Time last_time = t0;
  std::set<std::uint32_t> user_set;
  for (const Rec* r : jobs) {
    ++n;
    if (r->array_job_id) ++st.array_tasks;
    if (r->het_job_id) ++st.het_components;
    const bool started = r->start > 0 && r->alloc > 0;
    Time wait = -1, run = -1;
    std::int64_t alloc = -1;
    if (started) {
      wait = r->start - r->submit;
      if (wait < 0) {
        ++st.start_before_submit;
        wait = 0;
      }
      if (r->elapsed >= 0) run = r->elapsed;
      else if (r->end > 0) run = std::max<Time>(0, r->end - r->start);
      alloc = r->alloc;
      max_alloc = std::max(max_alloc, alloc);
    } else {
      ++st.never_started;
    }
    const std::string& state = store.names[r->state];
    int status;
    if (r->end == 0) {
      status = -1;
    } else if (swf_status(state) >= 0) {
      status = swf_status(state);
    } else if ((state == "PENDING" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED") &&
               started) {
      status = 0;
      ++st.requeue_logged;
    } else {
      status = -1;
      ++st.unknown_state[state.empty() ? "(none)" : state];
    }
    if (r->unlimited) ++st.unlimited;
    const std::int64_t req = r->req > 0 ? r->req : -1;
    const std::int64_t limit = r->limit_min >= 0 ? r->limit_min * 60 : -1;
    std::int64_t reqmem = -1;
    if (r->req_mem_mb > 0) {
      const std::int64_t procs = req > 0 ? req : alloc;
      if (procs > 0) reqmem = std::int64_t(double(r->req_mem_mb) * 1024.0 / double(procs) + 0.5);
    }
    long user, group;
    if (o.keep_ids) {
      user = keep_id(store.names[r->user], true);
      group = keep_id(store.names[r->group], false);
    } else {
      user = number(users, r->user);
      group = number(groups, r->group);
    }
    if (store.names[r->user].empty()) ++st.no_user;
    user_set.insert(r->user);
    const int app = o.jobname_as_app ? number(apps, r->name) : -1;
    const int part = number(parts, r->partition);
    if (part > 0) part_names[part] = store.names[r->partition];
    last_time = std::max({last_time, r->submit, r->end});
    char b[320];
    std::snprintf(b, sizeof b,
                  "%zu %lld %lld %lld %lld -1 -1 %lld %lld %lld %d %ld %ld %d -1 %d -1 -1\n", n,
                  (long long)(r->submit - t0), (long long)wait, (long long)run,
                  (long long)alloc, (long long)req, (long long)limit, (long long)reqmem, status,
                  user, group, app, part);
    lines += b;
  }
  SwfResult res;
  res.jobs = n;
  res.users = user_set.size();
  res.partitions = parts.size();
  if (o.procs) {
    res.procs = *o.procs;
    res.procs_source = "--procs";
  } else {
    std::string why = "--no-sinfo";
    std::optional<long> s = o.no_sinfo ? std::nullopt : sinfo_cpus(o, &why);
    if (s) {
      res.procs = *s;
      res.procs_source = why + " on this host";
      if (max_alloc > *s && !o.quiet)
        std::fprintf(stderr, "%s: warning: a job had %lld CPUs, more than the %ld CPUs sinfo "
                     "reports: is the accounting from this cluster? Pass --procs\n",
                     kProg, (long long)max_alloc, *s);
    } else {
      res.procs = std::max<long>(long(max_alloc), 1);
      res.procs_source = "the largest AllocCPUS (" + why + "; pass --procs)";
      if (!o.quiet)
        std::fprintf(stderr, "%s: warning: machine size unknown (%s): MaxProcs set to the "
                     "largest AllocCPUS, %ld; pass --procs N with the cluster's CPU count, or "
                     "the replay runs on too small a machine\n", kProg, why.c_str(), res.procs);
    }
  }
  // header
  std::set<std::string> clusters;
  for (const Rec* r : jobs)
    if (!store.names[r->cluster].empty()) clusters.insert(store.names[r->cluster]);
  std::string computer = o.computer;
  if (computer.empty())
    for (const auto& c : clusters) computer += (computer.empty() ? "" : ",") + c;
  if (computer.empty()) computer = "Slurm cluster";
  const char* sde = std::getenv("SOURCE_DATE_EPOCH");
  const Time now = sde ? Time(std::atoll(sde)) : Time(std::time(nullptr));
  auto human = [](Time t) { return fmt_local(t, "%a %b %d %H:%M:%S %Z %Y"); };
  std::string h;
  auto add = [&](const std::string& s) { h += "; " + s + "\n"; };
  add("Version: 2.2");
  add("Computer: " + computer);
  if (!o.installation.empty()) add("Installation: " + o.installation);
  {
    const time_t tt = time_t(now);
    struct tm tm;
    gmtime_r(&tt, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%d", &tm);
    add(std::string("Conversion: easypp import ") + b);
  }
  add("MaxJobs: " + std::to_string(n));
  add("MaxRecords: " + std::to_string(n));
  add("Preemption: No");
  add("UnixStartTime: " + std::to_string(t0));
  add("StartTime: " + human(t0));
  add("EndTime: " + human(last_time));
  add("MaxProcs: " + std::to_string(res.procs));
  add("Note: MaxProcs from " + res.procs_source);
  add("MaxPartitions: " + std::to_string(parts.size()));
  for (const auto& kv : part_names) add("Partition: " + std::to_string(kv.first) + " " + kv.second);
  add("Note: converted from Slurm accounting (" + source_note + ") by " + kProg + " " +
      EASYPP_VERSION);
  add("Note: requested time -1 = UNLIMITED or Partition_Limit; allocated -1, wait -1");
  h += ";       and run -1 = never started (cancelled while pending)\n";
  add("Note: status 1 COMPLETED, 0 FAILED/TIMEOUT/NODE_FAIL/OUT_OF_MEMORY/BOOT_FAIL/");
  h += ";       DEADLINE/PREEMPTED/REQUEUED, 5 CANCELLED/REVOKED, -1 other\n";
  add(o.keep_ids ? "Note: users and groups are UIDs and GIDs"
                 : "Note: users and groups are anonymized, numbered in order of first appearance");
  if (o.jobname_as_app)
    add("Note: application numbers are job names in order of first appearance");
  if (o.submit_eligible)
    add("Note: submit times are Eligible times (when the job could first start)");
  add("Note: array tasks and heterogeneous job components are separate jobs");
  std::vector<std::string> skipped;
  if (st.running) skipped.push_back(std::to_string(st.running) + " still running");
  if (st.pending) skipped.push_back(std::to_string(st.pending) + " pending");
  if (st.requeued) skipped.push_back(std::to_string(st.requeued) + " earlier attempts of requeued jobs");
  if (st.filtered) skipped.push_back(std::to_string(st.filtered) + " of other partitions/clusters");
  if (st.ended_after) skipped.push_back(std::to_string(st.ended_after) + " ended after --end");
  if (st.bad) skipped.push_back(std::to_string(st.bad) + " unreadable records");
  if (!skipped.empty()) {
    std::string s;
    for (const auto& x : skipped) s += (s.empty() ? "" : ", ") + x;
    add("Note: not converted: " + s);
  }
  if (st.never_started)
    add("Note: " + std::to_string(st.never_started) + " jobs never started (wait -1, run -1)");
  if (st.running_kept)
    add("Note: " + std::to_string(st.running_kept) +
        " jobs were still running: run time so far, status -1");
  const std::string text = h + lines;
  if (o.output == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw InputError{std::string("cannot write to standard output: ") + std::strerror(errno)};
  } else {
    std::string err;
    // Every user's jobs: private to the writer, as the plugin's files
    // (safe_file.h: no link followed, no directory others can write to).
    if (!easypp::plugin::write_file_safely(o.output, text, 0600, {}, &err))
      throw InputError{err};
  }
  return res;
}

// --- warm start ---------------------------------------------------------------------

struct StateResult {
  std::size_t users = 0;
  std::uint64_t learned = 0, het = 0, not_run = 0, requeued = 0, unknown_user = 0;
  Time last_end = 0;
  std::string owner;
};

// Who gets the state file: SlurmUser when run as root (slurmctld reads the
// file as that user), given through the descriptor before the rename
// (safe_file.h); otherwise whoever runs this (unset). *name: SlurmUser's.
easypp::plugin::FileOwner state_owner(const std::map<std::string, std::string>& conf,
                                      bool conf_found, std::string* name) {
  if (geteuid() != 0) return {};
  const std::string su = conf.count("slurmuser") ? conf.at("slurmuser") : "root";
  struct passwd* pw = getpwnam(su.c_str());
  if (pw == nullptr)
    throw InputError{"SlurmUser '" + su + "'" +
                     (conf_found ? "" : " (the default: no slurm.conf read)") +
                     " is not a user on this host; cannot give it the state file"};
  *name = su;
  return easypp::plugin::FileOwner{true, pw->pw_uid, pw->pw_gid};
}

// The directories the output and the state go to, checked before anything
// is read (hours, on a large site): writable, and by no one else.
void check_output_dirs(const Options& o, const std::map<std::string, std::string>& conf,
                       bool conf_found) {
  std::string name, why;
  if (!o.output.empty() && o.output != "-" &&
      !easypp::plugin::private_directory(easypp::plugin::dir_of(o.output), {}, &why))
    throw InputError{o.output + ": " + why};
  if (!o.state.empty() &&
      !easypp::plugin::private_directory(easypp::plugin::dir_of(o.state),
                                         state_owner(conf, conf_found, &name), &why))
    throw InputError{o.state + ": " + why};
}

StateResult write_state(Store& store, const Options& o,
                        const std::map<std::string, std::string>& conf, bool conf_found) {
  StateResult res;
  easypp::plugin::ParsedConfig pc = easypp::plugin::parse_scheduler_parameters(
      conf.count("schedulerparameters") ? conf.at("schedulerparameters").c_str() : nullptr);
  for (const auto& w : pc.warnings)
    if (!o.quiet) std::fprintf(stderr, "%s: warning: SchedulerParameters: %s\n", kProg, w.c_str());
  easypp::Predictor pred(pc.config.sched.predictor);
  std::vector<const Rec*> done;
  for (const auto& r : store.recs) {
    const std::string& state = store.names[r.state];
    if (r.end == 0 || unfinished_states().count(state)) continue;
    if (state == "REQUEUED") {  // an earlier run (--requeued all): not a finished job
      ++res.requeued;
      continue;
    }
    if (r.het_job_id != 0 && r.het_job_id != r.job_id) {
      ++res.het;
      continue;
    }
    done.push_back(&r);
  }
  std::sort(done.begin(), done.end(), [](const Rec* a, const Rec* b) {
    if (a->end != b->end) return a->end < b->end;
    return a->job_id < b->job_id;
  });
  std::map<std::string, easypp::UserId> uids;
  std::set<easypp::UserId> learned_users;
  for (const Rec* r : done) {
    const Time runtime = r->elapsed >= 0 ? r->elapsed : r->end - r->start - r->suspended;
    if (r->start <= 0 || r->alloc <= 0 || runtime <= 0) {
      ++res.not_run;
      continue;
    }
    const std::string& name = store.names[r->user];
    auto it = uids.find(name);
    if (it == uids.end()) {
      easypp::UserId uid = easypp::kNoUser;
      if (!name.empty()) {
        if (struct passwd* pw = getpwnam(name.c_str())) uid = easypp::UserId(pw->pw_uid);
      }
      it = uids.emplace(name, uid).first;
    }
    if (it->second == easypp::kNoUser) {
      ++res.unknown_user;
      continue;
    }
    const Time estimate = r->limit_min > 0 ? r->limit_min * 60 : kUnlimitedEstimate;
    pred.record(it->second, runtime, estimate);
    learned_users.insert(it->second);
    ++res.learned;
    res.last_end = std::max(res.last_end, r->end);
  }
  res.users = learned_users.size();
  easypp::plugin::SavedState s;
  s.last_learned_end = res.last_end;
  s.learned_jobs = res.learned;
  s.window = pc.config.sched.predictor.window;
  s.rings = pred.snapshot();
  const easypp::plugin::FileOwner owner = state_owner(conf, conf_found, &res.owner);
  std::string err;
  if (!easypp::plugin::save_state(o.state, s, &err, owner)) throw InputError{err};
  return res;
}

std::string join_counts(const std::vector<std::pair<std::uint64_t, std::string>>& items) {
  std::string out;
  for (const auto& [n, what] : items)
    if (n) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  return out.empty() ? "none" : out;
}

int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  Stats st;
  Store store;

  std::string conf_path = o.slurm_conf;
  if (conf_path.empty()) {
    const char* e = std::getenv("SLURM_CONF");
    conf_path = e && *e ? e : "/etc/slurm/slurm.conf";
  }
  std::map<std::string, std::string> conf;
  bool conf_found = false;
  if (!o.state.empty()) {
    struct stat sb;
    if (!o.force && stat(o.state.c_str(), &sb) == 0)
      throw InputError{o.state + " exists: it holds the history sched/easypp learned; "
                       "--force replaces it"};
    if (access(conf_path.c_str(), R_OK) == 0) {
      easypp::import::read_slurm_conf(conf_path, &conf);
      conf_found = true;
    } else if (!o.slurm_conf.empty()) {
      throw InputError{"cannot read " + conf_path + ": " + std::strerror(errno)};
    }
  }
  check_output_dirs(o, conf, conf_found);

  // The range and its windows.
  const bool windowed = !o.url.empty() || o.run_sacct;
  const Time now = Time(std::time(nullptr));
  std::optional<Time> lo = o.start, hi = o.end;
  if (windowed || o.days) {
    // [lo, hi): a job that ended in this very second is in (CI saw an
    // import right after a job's end drop that run without a word).
    if (!hi) hi = now + 1;
    if (!lo) lo = *hi - Time((o.days ? *o.days : 30.0) * 86400);
  }
  std::string source_note;
  auto add_jobs = [&](std::vector<AcctJob>& got, const std::optional<Window>& w) {
    for (const auto& j : got) accept(j, o, w, store, st);
    got.clear();
  };

  if (!o.sacct_json.empty()) {
    FILE* f = o.sacct_json == "-" ? stdin : std::fopen(o.sacct_json.c_str(), "rb");
    if (f == nullptr)
      throw InputError{"cannot read " + o.sacct_json + ": " + std::strerror(errno)};
    if (f == stdin && isatty(fileno(stdin)))
      usage_error("--sacct-json -: standard input is a terminal; pipe `sacct --json` into it");
    const std::string where = o.sacct_json == "-" ? "<stdin>" : o.sacct_json;
    std::optional<Window> w;
    if (lo || hi) w = Window{lo.value_or(0), hi.value_or(easypp::import::kMaxTime), true};
    try {
      read_stream(f, where, o, [&](AcctJob&& j) { accept(j, o, w, store, st); }, st);
    } catch (...) {
      if (f != stdin) std::fclose(f);
      throw;
    }
    if (f != stdin) std::fclose(f);
    source_note = "sacct --json";
  } else {
    std::vector<Window> windows;
    const Time step = std::max<Time>(60, Time(o.window_hours * 3600));
    for (Time a = *lo; a < *hi; a += step) windows.push_back({a, std::min(*hi, a + step), false});
    if (windows.empty()) usage_error("the range is empty");
    windows.back().last = true;
    if (o.run_sacct) {
      for (const auto& w : windows)
        run_sacct_window(o, w, [&](AcctJob&& j) { accept(j, o, w, store, st); }, st);
      source_note = "sacct --json";
    } else {
      easypp::import::rest_global_init();
      RestEndpoint ep;
      ep.base = o.url;
      ep.timeout = o.timeout;
      ep.token = read_token(o);
      ep.user = o.user;
      if (ep.user.empty()) {
        if (struct passwd* pw = getpwuid(geteuid())) ep.user = pw->pw_name;
      }
      if (!ep.is_unix() && ep.token.empty())
        throw InputError{o.url + ": no token for slurmrestd's JWT authentication: set "
                         "SLURM_JWT (scontrol token) or --token-file, or use a unix socket"};
      const std::string api = o.api == "auto" ? detect_api(ep, o, st) : o.api;
      std::string query_extra;
      // 22.05 (v0.0.36-38) returns every run of a requeued job by default and
      // refuses unknown query fields; from v0.0.39 on, giving any flag (here
      // skip_steps) drops the default duplicates, so ask for them.
      if (std::atoi(api.c_str() + 5) >= 39) query_extra += "&show_duplicates=true";
      if (!o.clusters.empty()) {
        std::string l;
        for (const auto& c : o.clusters) l += (l.empty() ? "" : ",") + c;
        query_extra += "&cluster=" + url_encode(l);
      }
      for (const auto& w : windows) {
        // slurmrestd reads the times in its own local time zone; a window
        // is asked one hour wider each side (daylight-saving changes) and
        // the records are assigned to windows by their end here.
        const std::string path = "/slurmdb/" + api + "/jobs?start_time=" +
                                 url_encode(fmt_local(w.lo - 3600)) + "&end_time=" +
                                 url_encode(fmt_local(w.hi + 3600)) + "&skip_steps=true" +
                                 query_extra;
        std::vector<AcctJob> got;
        fetch_document(ep, path, o, &got, st);
        add_jobs(got, w);
      }
      source_note = "slurmrestd /slurmdb/" + api + "/jobs";
    }
  }

  if (store.recs.empty() && o.state.empty()) {
    std::string why = join_counts({{st.records, "records read"}, {st.running, "still running"},
                                   {st.pending, "pending"}, {st.filtered, "filtered"},
                                   {st.bad, "unreadable"}});
    throw InputError{"no job to write (" +
                     (why == "none" ? std::string("the accounting has no job in the range") : why) +
                     ")"};
  }
  if (!o.output.empty() && !store.recs.empty()) {
    const SwfResult r = write_swf(store, o, st, source_note);
    if (!o.quiet) {
      std::fprintf(stderr, "%s: wrote %zu jobs to %s (%zu users, %zu partitions, MaxProcs %ld "
                   "from %s)\n", kProg, r.jobs,
                   o.output == "-" ? "standard output" : o.output.c_str(), r.users,
                   r.partitions, r.procs, r.procs_source.c_str());
      std::fprintf(stderr, "  skipped: %s\n",
                   join_counts({{st.running, "still running (--include-running keeps them)"},
                                {st.pending, "pending"},
                                {st.requeued, "earlier attempts of requeued jobs (--requeued all keeps them)"},
                                {st.filtered, "of other partitions/clusters"},
                                {st.ended_after, "ended after --end"},
                                {st.bad, "unreadable records"}})
                       .c_str());
      std::string written = join_counts(
          {{st.never_started, "never started (wait -1, run -1: easypp-sim drops them)"},
           {st.running_kept, "still running (run so far, status -1)"},
           {st.array_tasks, "array tasks"},
           {st.het_components, "heterogeneous job components"}});
      if (written != "none") std::fprintf(stderr, "  written: %s\n", written.c_str());
      std::string unknown;
      for (const auto& [s, n] : st.unknown_state)
        unknown += (unknown.empty() ? "" : ", ") + s + " " + std::to_string(n);
      std::string adjusted = join_counts(
          {{st.unlimited, "time limits UNLIMITED/Partition_Limit -> -1"},
           {st.start_before_submit, "starts before submit -> wait 0"},
           {st.requeue_logged, "requeued runs logged as PENDING -> status 0"},
           {st.unresolved_ids, "users/groups without a numeric id -> -1"},
           {st.no_user, "jobs without a user name (no association) -> user -1"},
           {st.not_utf8, "records with bytes that are not UTF-8 (job names...) -> U+FFFD"}});
      if (!unknown.empty())
        adjusted = (adjusted == "none" ? "" : adjusted + ", ") + "unknown states -> status -1: " +
                   unknown;
      if (adjusted != "none") std::fprintf(stderr, "  adjusted: %s\n", adjusted.c_str());
    }
  } else if (!o.output.empty() && !o.quiet) {
    std::fprintf(stderr, "%s: no job in the range: no SWF written\n", kProg);
  }
  if (!o.state.empty()) {
    const StateResult r = write_state(store, o, conf, conf_found);
    if (!o.quiet) {
      std::fprintf(stderr, "%s: wrote the history of %zu users (%llu finished jobs learned, "
                   "the last ended %s) to %s%s%s\n", kProg, r.users,
                   (unsigned long long)r.learned,
                   r.last_end ? fmt_local(r.last_end).c_str() : "never", o.state.c_str(),
                   r.owner.empty() ? "" : ", owned by ", r.owner.c_str());
      std::fprintf(stderr, "  not learned: %s\n",
                   join_counts({{r.het, "heterogeneous job components (learned once, from the leader)"},
                                {r.not_run, "jobs that never ran or ran 0 s"},
                                {r.requeued, "earlier runs of requeued jobs"},
                                {r.unknown_user, "jobs of users unknown on this host"}})
                       .c_str());
    }
  }
  if (!o.quiet && st.requests)
    std::fprintf(stderr, "  read: %llu requests%s, %llu bytes of JSON\n",
                 (unsigned long long)st.requests,
                 st.retries ? (" (" + std::to_string(st.retries) + " retries)").c_str() : "",
                 (unsigned long long)st.bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProg, e.what.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", kProg);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", kProg, e.what());
    return 1;
  }
}
