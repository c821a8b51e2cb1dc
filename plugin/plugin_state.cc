// The state and status files of sched/easypp (plugin_state.h); formats in
// docs/state-files.md.
//
// Writing: jansson builds and dumps the document (keys in a fixed order,
// indented); strings are made valid UTF-8 first (jansson refuses anything
// else). Values the reader would refuse are refused before anything
// touches the disk, so a file written here always reads back.
//
// Reading: the whole file is read into memory, checked for raw NUL bytes
// (which jansson's json_loadb silently skips) and for its nesting depth
// before jansson (which recurses) sees it, parsed with json_loadb, then every
// field is checked for presence, type and range. Nothing is stored in *out until all of it is
// valid. No function here throws: allocation failures are caught and
// reported like any other error.
#include "plugin_state.h"

#include "safe_file.h"
#include "utf8.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace easypp::plugin {

namespace {

// --- limits ------------------------------------------------------------------
// Durations and Unix times: at most 2^40 s (about 34,800 years); above any
// finite Slurm time limit (0xfffffffe minutes is about 2^38 s) and far below
// anything that could overflow the predictor's sums.
constexpr std::int64_t kMaxSeconds = std::int64_t(1) << 40;
constexpr std::int64_t kMaxUid = 4294967295LL;               // uid_t
constexpr std::int64_t kMaxCount = INT64_MAX;               // JSON integers are int64
constexpr std::int64_t kMaxJobId = 4294967295LL;
constexpr double kMaxRealSeconds = 1e12;
constexpr std::size_t kMaxFileBytes = std::size_t(512) << 20;  // 512 MiB
constexpr int kMaxDepth = 32;  // the formats nest 4 levels at most
// Sums of bounded slowdowns (each at most about 2^40 / 10, counts at most 1e15).
constexpr double kMaxSlowdownSum = 1e30;

// --- small helpers ---------------------------------------------------------------

// strerror_r comes in a GNU (returns char*) and an XSI (returns int) flavour.
[[maybe_unused]] const char* pick_strerror(int r, const char* buf) {
  return r == 0 ? buf : "unknown error";
}
[[maybe_unused]] const char* pick_strerror(const char* r, const char*) { return r; }

std::string errno_text(int e) {
  char buf[256];
  buf[0] = '\0';
  return pick_strerror(strerror_r(e, buf, sizeof buf), buf);
}

struct JsonDeleter {
  void operator()(json_t* j) const { json_decref(j); }
};
using JsonPtr = std::unique_ptr<json_t, JsonDeleter>;

// --- writing ------------------------------------------------------------------

// Small builders; jansson's *_new functions take ownership of the values.
json_t* jint(std::int64_t v) { return json_integer(json_int_t(v)); }
json_t* jstr(const std::string& v) {
  const std::string u = valid_utf8(v);
  return json_stringn(u.data(), u.size());
}
// Seconds with microsecond resolution.
json_t* jsec(double v) {
  if (!std::isfinite(v) || v < 0) v = 0;
  return json_real(std::round(v * 1e6) / 1e6);
}
void put(json_t* obj, const char* key, json_t* value) { json_object_set_new(obj, key, value); }

json_t* ring_json(const Predictor::Ring& r) {
  json_t* o = json_object();
  put(o, "user", jint(r.user));
  put(o, "estimate_key", jint(r.estimate_key));
  json_t* h = json_array();
  for (const auto& e : r.entries) {
    json_t* pair = json_array();
    json_array_append_new(pair, jint(e.runtime));
    json_array_append_new(pair, jint(e.estimate));
    json_array_append_new(h, pair);
  }
  put(o, "history", h);
  return o;
}

json_t* rings_json(const std::vector<Predictor::Ring>& rings) {
  json_t* a = json_array();
  for (const auto& r : rings) json_array_append_new(a, ring_json(r));
  return a;
}

// The document as text (keys in insertion order), or "" if jansson failed
// (out of memory).
std::string dump(json_t* root) {
  JsonPtr owner(root);
  char* text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  if (text == nullptr) return {};
  std::string out(text);
  std::free(text);
  out += '\n';
  return out;
}

// --- validation shared by writing and reading ---------------------------------

std::string range_text(std::int64_t lo, std::int64_t hi) {
  return std::to_string(lo) + ".." + std::to_string(hi);
}

// Checks one ring; `field` names it in messages ("users[3]").
bool check_ring(const Predictor::Ring& r, const std::string& field, std::string* why) {
  if (r.user < 0 || r.user > kMaxUid) {
    *why = "field " + field + ".user: must be a uid " + range_text(0, kMaxUid) + ", got " +
           std::to_string(r.user);
    return false;
  }
  if (r.estimate_key < -1 || r.estimate_key > kMaxSeconds) {
    *why = "field " + field + ".estimate_key: must be -1 or " + range_text(0, kMaxSeconds) +
           ", got " + std::to_string(r.estimate_key);
    return false;
  }
  if (r.entries.size() > std::size_t(PredictorConfig::kMaxWindow)) {
    *why = "field " + field + ".history: " + std::to_string(r.entries.size()) +
           " entries, at most " + std::to_string(PredictorConfig::kMaxWindow) + " allowed";
    return false;
  }
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    const Predictor::Entry& e = r.entries[i];
    const char* bad = e.runtime < 0 || e.runtime > kMaxSeconds     ? "runtime"
                      : e.estimate < 0 || e.estimate > kMaxSeconds ? "estimate"
                                                                   : nullptr;
    if (bad) {
      *why = "field " + field + ".history[" + std::to_string(i) + "] (" + bad +
             "): must be " + range_text(0, kMaxSeconds) + " seconds, got " +
             std::to_string(bad[0] == 'r' ? e.runtime : e.estimate);
      return false;
    }
  }
  return true;
}

bool check_rings(const std::vector<Predictor::Ring>& rings, const char* name, std::string* why) {
  std::set<std::pair<UserId, Time>> seen;
  for (std::size_t i = 0; i < rings.size(); ++i) {
    const std::string field = std::string(name) + "[" + std::to_string(i) + "]";
    if (!check_ring(rings[i], field, why)) return false;
    if (!seen.insert({rings[i].user, rings[i].estimate_key}).second) {
      *why = "field " + field + ": duplicate user " + std::to_string(rings[i].user) +
             " with estimate_key " + std::to_string(rings[i].estimate_key);
      return false;
    }
  }
  return true;
}

bool check_int(std::int64_t v, std::int64_t lo, std::int64_t hi, const std::string& field,
               std::string* why) {
  if (v >= lo && v <= hi) return true;
  *why = "field " + field + ": must be " + range_text(lo, hi) + ", got " + std::to_string(v);
  return false;
}

bool check_real(double v, const std::string& field, std::string* why) {
  if (std::isfinite(v) && v >= 0 && v <= kMaxRealSeconds) return true;
  *why = "field " + field + ": must be 0..1e12 seconds, got " + std::to_string(v);
  return false;
}

// Counters are unsigned in memory and int64 in JSON.
bool check_count(std::uint64_t v, const std::string& field, std::string* why) {
  if (v <= std::uint64_t(kMaxCount)) return true;
  *why = "field " + field + ": " + std::to_string(v) + " does not fit a JSON integer";
  return false;
}

// One sum of bounded slowdowns and its count (field: "slowdowns.sum[2]").
bool check_slowdown_sum(double sum, std::uint64_t n, const std::string& field,
                        const std::string& count_field, std::string* why) {
  if (n > SavedState::kMaxSlowdownCount) {
    *why = "field " + count_field + ": must be 0.." +
           std::to_string(SavedState::kMaxSlowdownCount) + ", got " + std::to_string(n);
    return false;
  }
  if (!std::isfinite(sum) || sum < 0 || sum > kMaxSlowdownSum) {
    *why = "field " + field + ": must be a finite number 0..1e30, got " + std::to_string(sum);
    return false;
  }
  if (n == 0 ? sum != 0 : sum < double(n)) {
    *why = "field " + field + ": a sum of " + std::to_string(n) +
           " bounded slowdowns (each >= 1) cannot be " + std::to_string(sum);
    return false;
  }
  return true;
}

bool check_slowdowns(const SlowdownMeans::Sums& m, std::string* why) {
  std::uint64_t total = 0;
  for (std::size_t c = 0; c < 4; ++c) {
    const std::string i = "[" + std::to_string(c) + "]";
    if (!check_slowdown_sum(m.sum[c], m.n[c], "slowdowns.sum" + i, "slowdowns.count" + i, why))
      return false;
    total += m.n[c];  // each <= 1e15: no overflow
  }
  if (!check_slowdown_sum(m.sum_all, m.n_all, "slowdowns.sum_all", "slowdowns.count_all", why))
    return false;
  if (m.n_all != total) {
    *why = "field slowdowns.count_all: must be the sum of slowdowns.count (" +
           std::to_string(total) + "), got " + std::to_string(m.n_all);
    return false;
  }
  return true;
}

bool check_state(const SavedState& s, std::string* why) {
  return check_int(s.last_learned_end, 0, kMaxSeconds, "last_learned_end", why) &&
         check_count(s.learned_jobs, "learned_jobs", why) &&
         check_int(s.window, 1, PredictorConfig::kMaxWindow, "window", why) &&
         check_rings(s.rings, "users", why) && (!s.slowdowns || check_slowdowns(*s.slowdowns, why));
}

// The selective thresholds of the status: none, one or four, each finite and
// 0..1e15 (an adaptive one is the scale times a mean of bounded slowdowns).
bool check_thresholds(const std::vector<double>& t, std::string* why) {
  if (!(t.empty() || t.size() == 1 || t.size() == 4)) {
    *why = "field selective_thresholds: must have 1 or 4 elements, got " + std::to_string(t.size());
    return false;
  }
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || t[i] < 0 || t[i] > 1e15) {
      *why = "field selective_thresholds[" + std::to_string(i) +
             "]: must be a finite number 0..1e15, got " + std::to_string(t[i]);
      return false;
    }
  return true;
}

bool check_status(const Status& s, std::string* why) {
  const CycleStats& c = s.last;
  const Totals& t = s.totals;
  if (!check_int(s.written, 0, kMaxSeconds, "written", why) ||
      !check_int(c.time, 0, kMaxSeconds, "last_cycle.time", why) ||
      !check_real(c.seconds, "last_cycle.seconds", why) ||
      !check_count(t.cycles, "totals.cycles", why) || !check_count(t.tested, "totals.tested", why) ||
      !check_count(t.started_in_order, "totals.started_in_order", why) ||
      !check_count(t.started_backfill, "totals.started_backfill", why) ||
      !check_count(t.corrections, "totals.corrections", why) ||
      !check_count(t.learned, "totals.learned", why) ||
      !check_real(t.seconds, "totals.seconds", why) ||
      !check_real(t.max_seconds, "totals.max_seconds", why) ||
      !check_rings(s.history, "history", why) || (s.slowdowns && !check_slowdowns(*s.slowdowns, why)) ||
      !check_thresholds(s.thresholds, why))
    return false;
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const JobStatus& j = s.jobs[i];
    const std::string f = "jobs[" + std::to_string(i) + "].";
    if (!check_int(j.user, kNoUser, kMaxUid, f + "user", why) ||
        !check_int(j.submit, 0, kMaxSeconds, f + "submit", why) ||
        !check_int(j.start, 0, kMaxSeconds, f + "start", why) ||
        !check_int(j.estimate, 0, kMaxSeconds, f + "estimate", why) ||
        !check_int(j.prediction, 0, kMaxSeconds, f + "prediction", why))
      return false;
  }
  return true;
}

// --- serialisation ---------------------------------------------------------------

// The member "slowdowns" of both files.
json_t* slowdowns_json(const SlowdownMeans::Sums& m) {
  json_t* sd = json_object();
  json_t* sum = json_array();
  json_t* count = json_array();
  for (std::size_t c = 0; c < 4; ++c) {
    json_array_append_new(sum, json_real(m.sum[c]));
    json_array_append_new(count, jint(std::int64_t(m.n[c])));
  }
  put(sd, "sum", sum);
  put(sd, "count", count);
  put(sd, "sum_all", json_real(m.sum_all));
  put(sd, "count_all", jint(std::int64_t(m.n_all)));
  return sd;
}

std::string state_json(const SavedState& s, Time written) {
  json_t* o = json_object();
  put(o, "format_version", jint(SavedState::kFormatVersion));
  put(o, "written", jint(written));
  put(o, "last_learned_end", jint(s.last_learned_end));
  put(o, "learned_jobs", jint(std::int64_t(s.learned_jobs)));
  put(o, "window", jint(s.window));
  put(o, "users", rings_json(s.rings));
  if (s.slowdowns) put(o, "slowdowns", slowdowns_json(*s.slowdowns));
  return dump(o);
}

json_t* job_json(const JobStatus& j) {
  json_t* o = json_object();
  put(o, "job_id", jint(j.job_id));
  put(o, "array", jstr(j.array));
  put(o, "user", jint(j.user));
  put(o, "user_name", jstr(j.user_name));
  put(o, "partition", jstr(j.partition));
  put(o, "state", jstr(j.state));
  put(o, "submit", jint(j.submit));
  put(o, "start", jint(j.start));
  put(o, "estimate", jint(j.estimate));
  put(o, "prediction", jint(j.prediction));
  put(o, "corrections", jint(j.corrections));
  put(o, "reserved", json_boolean(j.reserved));
  put(o, "from_history", json_boolean(j.from_history));
  return o;
}

json_t* cycle_json(const CycleStats& c) {
  json_t* lc = json_object();
  put(lc, "time", jint(c.time));
  put(lc, "seconds", jsec(c.seconds));
  put(lc, "partitions", jint(c.partitions));
  put(lc, "pending", jint(c.pending));
  put(lc, "running", jint(c.running));
  put(lc, "tested", jint(c.tested));
  put(lc, "started_in_order", jint(c.started_in_order));
  put(lc, "started_backfill", jint(c.started_backfill));
  put(lc, "reservations", jint(c.reservations));
  put(lc, "corrections", jint(c.corrections));
  put(lc, "learned", jint(c.learned));
  put(lc, "yields", jint(c.yields));
  put(lc, "het_started", jint(c.het_started));
  put(lc, "het_undone", jint(c.het_undone));
  put(lc, "interrupted", json_boolean(c.interrupted));
  put(lc, "trigger", jstr(c.trigger));
  return lc;
}

json_t* totals_json(const Totals& t) {
  json_t* tj = json_object();
  put(tj, "cycles", jint(std::int64_t(t.cycles)));
  put(tj, "tested", jint(std::int64_t(t.tested)));
  put(tj, "started_in_order", jint(std::int64_t(t.started_in_order)));
  put(tj, "started_backfill", jint(std::int64_t(t.started_backfill)));
  put(tj, "corrections", jint(std::int64_t(t.corrections)));
  put(tj, "learned", jint(std::int64_t(t.learned)));
  put(tj, "seconds", jsec(t.seconds));
  put(tj, "max_seconds", jsec(t.max_seconds));
  return tj;
}

json_t* jobs_json(const std::vector<JobStatus>& jobs) {
  json_t* a = json_array();
  for (const auto& j : jobs) json_array_append_new(a, job_json(j));
  return a;
}

json_t* status_object(const Status& s, StatusPart part) {
  if (part == StatusPart::Jobs) return jobs_json(s.jobs);
  if (part == StatusPart::History) return rings_json(s.history);
  json_t* o = json_object();
  put(o, "format_version", jint(Status::kFormatVersion));
  put(o, "version", jstr(s.version));
  put(o, "slurm_version", jstr(s.slurm_version));
  put(o, "written", jint(s.written));
  json_t* set = json_object();
  for (const auto& [k, v] : s.settings) put(set, k.c_str(), jstr(v));
  put(o, "settings", set);
  put(o, "state_file", jstr(s.state_file));
  put(o, "last_cycle", cycle_json(s.last));
  put(o, "totals", totals_json(s.totals));
  if (s.slowdowns) put(o, "slowdowns", slowdowns_json(*s.slowdowns));
  if (!s.thresholds.empty()) {
    json_t* t = json_array();
    for (double x : s.thresholds) json_array_append_new(t, json_real(x));
    put(o, "selective_thresholds", t);
  }
  if (part == StatusPart::Whole) {
    put(o, "history", rings_json(s.history));
    put(o, "jobs", jobs_json(s.jobs));
  }
  return o;
}

std::string status_json(const Status& s) { return dump(status_object(s, StatusPart::Whole)); }

// --- writing -----------------------------------------------------------------------

// Temporary file, write, fsync, rename, fsync of the directory, with every
// step through descriptors (safe_file.h): the tools write these files as
// root into SlurmUser's directory.
bool write_atomic(const std::string& path, const std::string& data, mode_t mode,
                  std::string* error, const FileOwner& owner = {}) {
  return write_file_safely(path, data, unsigned(mode), owner, error);
}

// --- reading ------------------------------------------------------------------

// Reads the whole file; *failure says why not (kMissing, kUnreadable, or
// kCorrupt for a file too large to be one of ours). Opened with O_NONBLOCK
// so that a FIFO in the file's place cannot block the caller (slurmctld's
// start-up, easypp-ctl): it is refused by the fstat() that follows.
bool read_file(const std::string& path, std::string* data, LoadFailure* failure,
               std::string* error) {
  *failure = LoadFailure::kUnreadable;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) *failure = LoadFailure::kMissing;
    *error = path + ": " + (e == ENOENT ? "no such file" : "cannot open") + " (" +
             errno_text(e) + ")";
    if (e == EACCES || e == EPERM)
      *error += "; the file is readable by SlurmUser and root only unless easypp_file_mode "
                "opens it";
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    *error = path + ": cannot stat: " + errno_text(e);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    *error = path + ": not a regular file";
    return false;
  }
  const int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (std::uint64_t(st.st_size) > kMaxFileBytes) {
    close(fd);
    *failure = LoadFailure::kCorrupt;
    *error = path + ": " + std::to_string(st.st_size) + " bytes, larger than the " +
             std::to_string(kMaxFileBytes >> 20) + " MiB limit";
    return false;
  }
  data->clear();
  data->reserve(std::size_t(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      close(fd);
      *error = path + ": cannot read: " + errno_text(e);
      return false;
    }
    if (n == 0) break;
    if (data->size() + std::size_t(n) > kMaxFileBytes) {  // grew while reading
      close(fd);
      *failure = LoadFailure::kCorrupt;
      *error = path + ": larger than the " + std::to_string(kMaxFileBytes >> 20) + " MiB limit";
      return false;
    }
    data->append(buf, std::size_t(n));
  }
  close(fd);
  *failure = LoadFailure::kNone;
  return true;
}

// Checks what jansson does not, before it sees the text: nesting deeper than
// kMaxDepth (jansson recurses; brackets inside strings do not count) and raw
// NUL bytes (never valid JSON, but jansson 2.14's json_loadb skips them).
bool precheck(const std::string& text, std::string* why) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') {
      *why = "not valid JSON: NUL byte at byte " + std::to_string(i + 1);
      return false;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        *why = "not valid JSON: nested deeper than " + std::to_string(kMaxDepth) +
               " levels at byte " + std::to_string(i + 1);
        return false;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

// Typed field access with messages naming the field.
class Fields {
 public:
  explicit Fields(std::string* why) : why_(why) {}

  json_t* member(json_t* obj, const std::string& parent, const char* key) {
    json_t* v = json_object_get(obj, key);
    if (!v) fail(join(parent, key), "missing");
    return v;
  }
  bool object(json_t* v, const std::string& field) {
    return json_is_object(v) || fail(field, "must be an object, got " + type_name(v));
  }
  bool array(json_t* v, const std::string& field) {
    return json_is_array(v) || fail(field, "must be an array, got " + type_name(v));
  }
  bool integer(json_t* v, const std::string& field, std::int64_t lo, std::int64_t hi,
               std::int64_t* out) {
    if (!json_is_integer(v)) return fail(field, "must be an integer, got " + type_name(v));
    const json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
      return fail(field, "must be " + range_text(lo, hi) + ", got " + std::to_string(x));
    *out = std::int64_t(x);
    return true;
  }
  bool real(json_t* v, const std::string& field, double* out) {
    if (!json_is_number(v)) return fail(field, "must be a number, got " + type_name(v));
    const double x = json_number_value(v);
    if (!(std::isfinite(x) && x >= 0 && x <= kMaxRealSeconds))
      return fail(field, "must be 0..1e12 seconds, got " + std::to_string(x));
    *out = x;
    return true;
  }
  bool string(json_t* v, const std::string& field, std::string* out) {
    if (!json_is_string(v)) return fail(field, "must be a string, got " + type_name(v));
    out->assign(json_string_value(v), json_string_length(v));
    return true;
  }
  bool boolean(json_t* v, const std::string& field, bool* out) {
    if (!json_is_boolean(v)) return fail(field, "must be true or false, got " + type_name(v));
    *out = json_is_true(v);
    return true;
  }

  // Member variants.
  bool get_int(json_t* obj, const std::string& parent, const char* key, std::int64_t lo,
               std::int64_t hi, std::int64_t* out) {
    json_t* v = member(obj, parent, key);
    return v && integer(v, join(parent, key), lo, hi, out);
  }
  template <class T>
  bool get_num(json_t* obj, const std::string& parent, const char* key, std::int64_t lo,
               std::int64_t hi, T* out) {
    std::int64_t x = 0;
    if (!get_int(obj, parent, key, lo, hi, &x)) return false;
    *out = T(x);
    return true;
  }
  bool get_real(json_t* obj, const std::string& parent, const char* key, double* out) {
    json_t* v = member(obj, parent, key);
    return v && real(v, join(parent, key), out);
  }
  bool get_string(json_t* obj, const std::string& parent, const char* key, std::string* out) {
    json_t* v = member(obj, parent, key);
    return v && string(v, join(parent, key), out);
  }
  bool get_bool(json_t* obj, const std::string& parent, const char* key, bool* out) {
    json_t* v = member(obj, parent, key);
    return v && boolean(v, join(parent, key), out);
  }

  bool fail(const std::string& field, const std::string& what) {
    *why_ = "field " + field + ": " + what;
    return false;
  }
  /// Where a shared check_*() writes its own "field F: what".
  std::string* why() { return why_; }

  static std::string join(const std::string& parent, const char* key) {
    return parent.empty() ? std::string(key) : parent + "." + key;
  }

 private:
  static std::string type_name(json_t* v) {
    switch (json_typeof(v)) {
      case JSON_OBJECT: return "an object";
      case JSON_ARRAY: return "an array";
      case JSON_STRING: return "a string";
      case JSON_INTEGER: return "an integer";
      case JSON_REAL: return "a real number";
      case JSON_TRUE:
      case JSON_FALSE: return "a boolean";
      case JSON_NULL: return "null";
    }
    return "something else";
  }
  std::string* why_;
};

bool parse_rings(Fields& f, json_t* arr, const std::string& name,
                 std::vector<Predictor::Ring>* out) {
  if (!f.array(arr, name)) return false;
  out->reserve(json_array_size(arr));
  for (std::size_t i = 0; i < json_array_size(arr); ++i) {
    const std::string field = name + "[" + std::to_string(i) + "]";
    json_t* o = json_array_get(arr, i);
    if (!f.object(o, field)) return false;
    Predictor::Ring r;
    if (!f.get_num(o, field, "user", 0, kMaxUid, &r.user) ||
        !f.get_num(o, field, "estimate_key", -1, kMaxSeconds, &r.estimate_key))
      return false;
    json_t* h = f.member(o, field, "history");
    const std::string hf = field + ".history";
    if (!h || !f.array(h, hf)) return false;
    if (json_array_size(h) > std::size_t(PredictorConfig::kMaxWindow))
      return f.fail(hf, std::to_string(json_array_size(h)) + " entries, at most " +
                            std::to_string(PredictorConfig::kMaxWindow) + " allowed");
    for (std::size_t k = 0; k < json_array_size(h); ++k) {
      const std::string ef = hf + "[" + std::to_string(k) + "]";
      json_t* e = json_array_get(h, k);
      if (!f.array(e, ef)) return false;
      if (json_array_size(e) != 2)
        return f.fail(ef, "must be [runtime, estimate], got " +
                              std::to_string(json_array_size(e)) + " elements");
      Predictor::Entry en;
      std::int64_t x = 0;
      if (!f.integer(json_array_get(e, 0), ef + " (runtime)", 0, kMaxSeconds, &x)) return false;
      en.runtime = x;
      if (!f.integer(json_array_get(e, 1), ef + " (estimate)", 0, kMaxSeconds, &x)) return false;
      en.estimate = x;
      r.entries.push_back(en);
    }
    out->push_back(std::move(r));
  }
  // Duplicates (the other checks were done field by field above).
  std::set<std::pair<UserId, Time>> seen;
  for (std::size_t i = 0; i < out->size(); ++i)
    if (!seen.insert({(*out)[i].user, (*out)[i].estimate_key}).second)
      return f.fail(name + "[" + std::to_string(i) + "]",
                    "duplicate user " + std::to_string((*out)[i].user) + " with estimate_key " +
                        std::to_string((*out)[i].estimate_key));
  return true;
}

// Reads, depth-checks and parses `path`; checks the root is an object of
// format_version `version`. *failure: why it failed (kCorrupt once the file
// was read).
JsonPtr load_root(const std::string& path, int version, LoadFailure* failure,
                  std::string* error) {
  std::string text;
  if (!read_file(path, &text, failure, error)) return nullptr;
  *failure = LoadFailure::kCorrupt;
  std::string why;
  if (text.empty()) {
    *error = path + ": empty file";
    return nullptr;
  }
  if (!precheck(text, &why)) {
    *error = path + ": " + why;
    return nullptr;
  }
  json_error_t jerr;
  JsonPtr root(json_loadb(text.data(), text.size(), JSON_REJECT_DUPLICATES, &jerr));
  if (!root) {
    *error = path + ": not valid JSON at line " + std::to_string(jerr.line) + ", column " +
             std::to_string(jerr.column) + ": " + jerr.text;
    return nullptr;
  }
  if (!json_is_object(root.get())) {
    *error = path + ": not an easypp file (the JSON is not an object)";
    return nullptr;
  }
  json_t* fv = json_object_get(root.get(), "format_version");
  if (!fv) {
    *error = path + ": field format_version: missing (not an easypp file?)";
    return nullptr;
  }
  if (!json_is_integer(fv) || json_integer_value(fv) != version) {
    const std::string got = json_is_integer(fv) ? std::to_string(json_integer_value(fv))
                                                : std::string("a non-integer");
    *error = path + ": field format_version: unsupported version " + got + " (this easypp reads " +
             std::to_string(version) + ")";
    return nullptr;
  }
  *failure = LoadFailure::kNone;
  return root;
}

// A sum as the file holds it: 15 significant digits (dump()'s precision), so
// that what is loaded saves and loads back the very same value.
double file_precision(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.15g", x);
  return std::strtod(b, nullptr);
}

// The optional member "slowdowns" (SavedState::slowdowns): absent is none.
bool parse_slowdowns(Fields& f, json_t* root, std::optional<SlowdownMeans::Sums>* out) {
  json_t* sd = json_object_get(root, "slowdowns");
  if (sd == nullptr) return true;
  if (!f.object(sd, "slowdowns")) return false;
  SlowdownMeans::Sums m;
  json_t* sum = f.member(sd, "slowdowns", "sum");
  if (!sum || !f.array(sum, "slowdowns.sum")) return false;
  json_t* count = f.member(sd, "slowdowns", "count");
  if (!count || !f.array(count, "slowdowns.count")) return false;
  if (json_array_size(sum) != 4)
    return f.fail("slowdowns.sum", "must have 4 elements (SN, SW, LN, LW)");
  if (json_array_size(count) != 4)
    return f.fail("slowdowns.count", "must have 4 elements (SN, SW, LN, LW)");
  const std::int64_t max_n = std::int64_t(SavedState::kMaxSlowdownCount);
  auto real = [&f](json_t* v, const std::string& field, double* x) {
    if (!json_is_number(v)) return f.fail(field, "must be a number");
    *x = file_precision(json_number_value(v));
    return true;
  };
  for (std::size_t c = 0; c < 4; ++c) {
    const std::string i = "[" + std::to_string(c) + "]";
    std::int64_t n = 0;
    if (!real(json_array_get(sum, c), "slowdowns.sum" + i, &m.sum[c]) ||
        !f.integer(json_array_get(count, c), "slowdowns.count" + i, 0, max_n, &n))
      return false;
    m.n[c] = std::uint64_t(n);
  }
  std::int64_t n_all = 0;
  json_t* sum_all = f.member(sd, "slowdowns", "sum_all");
  if (!sum_all || !real(sum_all, "slowdowns.sum_all", &m.sum_all) ||
      !f.get_int(sd, "slowdowns", "count_all", 0, max_n, &n_all))
    return false;
  m.n_all = std::uint64_t(n_all);
  if (!check_slowdowns(m, f.why())) return false;  // "field F: what", as fail() writes it
  *out = m;
  return true;
}

bool parse_state(const std::string& path, json_t* root, SavedState* s, std::string* error) {
  std::string why;
  Fields f(&why);
  std::int64_t learned = 0;
  json_t* users = nullptr;
  const bool ok =
      f.get_num(root, "", "written", 0, kMaxSeconds, &s->written) &&
      f.get_num(root, "", "last_learned_end", 0, kMaxSeconds, &s->last_learned_end) &&
      f.get_int(root, "", "learned_jobs", 0, kMaxCount, &learned) &&
      f.get_num(root, "", "window", 1, PredictorConfig::kMaxWindow, &s->window) &&
      (users = f.member(root, "", "users")) != nullptr && parse_rings(f, users, "users", &s->rings);
  if (!ok || !parse_slowdowns(f, root, &s->slowdowns)) {
    *error = path + ": " + why;
    return false;
  }
  s->learned_jobs = std::uint64_t(learned);
  return true;
}

constexpr std::int64_t kU32 = 4294967295LL;

bool parse_cycle(Fields& f, json_t* root, CycleStats* l) {
  json_t* c = f.member(root, "", "last_cycle");
  if (!c || !f.object(c, "last_cycle")) return false;
  const std::string lc = "last_cycle";
  return f.get_num(c, lc, "time", 0, kMaxSeconds, &l->time) &&
         f.get_real(c, lc, "seconds", &l->seconds) &&
         f.get_num(c, lc, "partitions", 0, kU32, &l->partitions) &&
         f.get_num(c, lc, "pending", 0, kU32, &l->pending) &&
         f.get_num(c, lc, "running", 0, kU32, &l->running) &&
         f.get_num(c, lc, "tested", 0, kU32, &l->tested) &&
         f.get_num(c, lc, "started_in_order", 0, kU32, &l->started_in_order) &&
         f.get_num(c, lc, "started_backfill", 0, kU32, &l->started_backfill) &&
         f.get_num(c, lc, "reservations", 0, kU32, &l->reservations) &&
         f.get_num(c, lc, "corrections", 0, kU32, &l->corrections) &&
         f.get_num(c, lc, "learned", 0, kU32, &l->learned) &&
         f.get_num(c, lc, "yields", 0, kU32, &l->yields) &&
         f.get_num(c, lc, "het_started", 0, kU32, &l->het_started) &&
         f.get_num(c, lc, "het_undone", 0, kU32, &l->het_undone) &&
         f.get_bool(c, lc, "interrupted", &l->interrupted) &&
         f.get_string(c, lc, "trigger", &l->trigger);
}

bool parse_totals(Fields& f, json_t* root, Totals* tt) {
  json_t* t = f.member(root, "", "totals");
  if (!t || !f.object(t, "totals")) return false;
  const std::string tn = "totals";
  return f.get_num(t, tn, "cycles", 0, kMaxCount, &tt->cycles) &&
         f.get_num(t, tn, "tested", 0, kMaxCount, &tt->tested) &&
         f.get_num(t, tn, "started_in_order", 0, kMaxCount, &tt->started_in_order) &&
         f.get_num(t, tn, "started_backfill", 0, kMaxCount, &tt->started_backfill) &&
         f.get_num(t, tn, "corrections", 0, kMaxCount, &tt->corrections) &&
         f.get_num(t, tn, "learned", 0, kMaxCount, &tt->learned) &&
         f.get_real(t, tn, "seconds", &tt->seconds) &&
         f.get_real(t, tn, "max_seconds", &tt->max_seconds);
}

bool parse_job(Fields& f, json_t* o, const std::string& jf, JobStatus* j) {
  return f.object(o, jf) && f.get_num(o, jf, "job_id", 0, kMaxJobId, &j->job_id) &&
         f.get_string(o, jf, "array", &j->array) &&
         f.get_num(o, jf, "user", kNoUser, kMaxUid, &j->user) &&
         f.get_string(o, jf, "user_name", &j->user_name) &&
         f.get_string(o, jf, "partition", &j->partition) &&
         f.get_string(o, jf, "state", &j->state) &&
         f.get_num(o, jf, "submit", 0, kMaxSeconds, &j->submit) &&
         f.get_num(o, jf, "start", 0, kMaxSeconds, &j->start) &&
         f.get_num(o, jf, "estimate", 0, kMaxSeconds, &j->estimate) &&
         f.get_num(o, jf, "prediction", 0, kMaxSeconds, &j->prediction) &&
         f.get_num(o, jf, "corrections", 0, kU32, &j->corrections) &&
         f.get_bool(o, jf, "reserved", &j->reserved) &&
         f.get_bool(o, jf, "from_history", &j->from_history);
}

// The settings object: every value a string (key order kept).
bool parse_settings(Fields& f, json_t* root, Status* s) {
  json_t* set = f.member(root, "", "settings");
  if (!set || !f.object(set, "settings")) return false;
  const char* key;
  json_t* value;
  json_object_foreach(set, key, value) {
    std::string v;
    if (!f.get_string(set, "settings", key, &v)) return false;
    s->settings.emplace_back(key, std::move(v));
  }
  return true;
}

// The optional member "selective_thresholds" (Status::thresholds).
bool parse_thresholds(Fields& f, json_t* root, std::vector<double>* out) {
  json_t* t = json_object_get(root, "selective_thresholds");
  if (t == nullptr) return true;
  if (!f.array(t, "selective_thresholds")) return false;
  std::vector<double> v;
  for (std::size_t i = 0; i < json_array_size(t); ++i) {
    json_t* x = json_array_get(t, i);
    if (!json_is_number(x))
      return f.fail("selective_thresholds[" + std::to_string(i) + "]", "must be a number");
    v.push_back(file_precision(json_number_value(x)));
  }
  if (!check_thresholds(v, f.why())) return false;  // "field F: what", as fail() writes it
  *out = std::move(v);
  return true;
}

bool parse_status(const std::string& path, json_t* root, Status* s, std::string* error) {
  std::string why;
  Fields f(&why);
  json_t* h = nullptr;
  json_t* jobs = nullptr;
  const bool ok = f.get_string(root, "", "version", &s->version) &&
                  f.get_string(root, "", "slurm_version", &s->slurm_version) &&
                  f.get_num(root, "", "written", 0, kMaxSeconds, &s->written) &&
                  f.get_string(root, "", "state_file", &s->state_file) &&
                  parse_settings(f, root, s) && parse_cycle(f, root, &s->last) &&
                  parse_totals(f, root, &s->totals) && parse_slowdowns(f, root, &s->slowdowns) &&
                  parse_thresholds(f, root, &s->thresholds) &&
                  (h = f.member(root, "", "history")) != nullptr &&
                  parse_rings(f, h, "history", &s->history) &&
                  (jobs = f.member(root, "", "jobs")) != nullptr && f.array(jobs, "jobs");
  if (ok) {
    s->jobs.reserve(json_array_size(jobs));
    for (std::size_t i = 0; i < json_array_size(jobs); ++i) {
      JobStatus j;
      if (!parse_job(f, json_array_get(jobs, i), "jobs[" + std::to_string(i) + "]", &j)) break;
      s->jobs.push_back(std::move(j));
    }
    if (s->jobs.size() == json_array_size(jobs)) return true;
  }
  *error = path + ": " + why;
  return false;
}

}  // namespace


bool read_json_text(const std::string& path, std::string* text, std::string* error,
                    bool* missing) {
  if (missing) *missing = false;
  try {
    LoadFailure failure = LoadFailure::kNone;
    if (!read_file(path, text, &failure, error)) {
      if (missing) *missing = failure == LoadFailure::kMissing;
      return false;
    }
    if (text->empty()) {
      *error = path + ": empty file";
      return false;
    }
    std::string why;
    if (!precheck(*text, &why)) {
      *error = path + ": " + why;
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    *error = path + ": cannot read: " + e.what();
  }
  return false;
}

bool check_saved_state(const SavedState& s, std::string* why) { return check_state(s, why); }

bool load_state(const std::string& path, SavedState* out, std::string* error,
                LoadFailure* failure) {
  LoadFailure ignored;
  LoadFailure& why = failure ? *failure : ignored;
  why = LoadFailure::kUnreadable;  // until read: an exception is no verdict on the content
  try {
    *out = SavedState{};
    JsonPtr root = load_root(path, SavedState::kFormatVersion, &why, error);
    if (!root) return false;
    SavedState s;
    why = LoadFailure::kCorrupt;
    if (!parse_state(path, root.get(), &s, error)) return false;
    why = LoadFailure::kNone;
    *out = std::move(s);
    return true;
  } catch (const std::exception& e) {
    *out = SavedState{};
    *error = path + ": cannot load: " + e.what();
  } catch (...) {
    *out = SavedState{};
    *error = path + ": cannot load: unknown error";
  }
  return false;
}

bool save_state(const std::string& path, const SavedState& s, std::string* error,
                const FileOwner& owner) {
  try {
    std::string why;
    if (!check_state(s, &why)) {
      *error = path + ": not written: " + why;
      return false;
    }
    const std::string text = state_json(s, Time(::time(nullptr)));
    if (text.empty()) throw std::bad_alloc();
    // Every user's runtimes: SlurmUser and root only, whatever
    // easypp_file_mode says (it opens the status file alone).
    return write_atomic(path, text, mode_t(kStateFileMode), error, owner);
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  } catch (...) {
    *error = path + ": cannot write: unknown error";
  }
  return false;
}

bool write_status(const std::string& path, const Status& s, std::string* error,
                  unsigned mode) {
  try {
    std::string why;
    if (!check_status(s, &why)) {
      *error = path + ": not written: " + why;
      return false;
    }
    const std::string text = status_json(s);
    if (text.empty()) throw std::bad_alloc();
    return write_atomic(path, text, mode_t(mode & 0777), error);
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  } catch (...) {
    *error = path + ": cannot write: unknown error";
  }
  return false;
}

std::string status_to_json(const Status& s, StatusPart part) {
  return dump(status_object(s, part));
}

std::string state_to_json(const SavedState& s, Time written) { return state_json(s, written); }

bool read_status(const std::string& path, Status* out, std::string* error,
                 LoadFailure* failure) {
  LoadFailure ignored;
  LoadFailure& why = failure ? *failure : ignored;
  why = LoadFailure::kUnreadable;
  try {
    *out = Status{};
    JsonPtr root = load_root(path, Status::kFormatVersion, &why, error);
    if (!root) return false;
    Status s;
    why = LoadFailure::kCorrupt;
    if (!parse_status(path, root.get(), &s, error)) return false;
    why = LoadFailure::kNone;
    *out = std::move(s);
    return true;
  } catch (const std::exception& e) {
    *out = Status{};
    *error = path + ": cannot read: " + e.what();
  } catch (...) {
    *out = Status{};
    *error = path + ": cannot read: unknown error";
  }
  return false;
}

std::string move_aside(const std::string& path, std::string* error) {
  for (int i = 0; i < 100; ++i) {
    const std::string bad = path + ".bad" + (i ? "." + std::to_string(i) : std::string());
    if (renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, bad.c_str(), RENAME_NOREPLACE) == 0)
      return bad;
    if (errno == EEXIST) continue;
    if (errno == EINVAL || errno == ENOSYS) {
      // No RENAME_NOREPLACE here (an old kernel or file system): link() never
      // replaces either.
      if (link(path.c_str(), bad.c_str()) == 0) {
        if (unlink(path.c_str()) == 0) return bad;
        const int e = errno;
        unlink(bad.c_str());
        errno = e;
      } else if (errno == EEXIST) {
        continue;
      }
    }
    *error = "cannot rename " + path + " to " + bad + ": " + errno_text(errno);
    return {};
  }
  *error = "cannot move " + path + " aside: " + path + ".bad to .bad.99 all exist";
  return {};
}

bool apply_file_mode(const std::string& path, unsigned mode, std::string* error) {
  return set_file_mode(path, mode, error);
}

}  // namespace easypp::plugin
