// The state and status files of sched/easypp (plugin_state.h); formats in
// docs/state-files.md.
//
// Writing: the JSON text is produced here (not by json_dumps) so that the
// layout is fixed: one top-level key per line, one user or job per line,
// keys in a fixed order. Values the reader would refuse are refused before
// anything touches the disk, so a file written here always reads back.
//
// Reading: the whole file is read into memory, checked for raw NUL bytes
// (which jansson's json_loadb silently skips) and for its nesting depth
// before jansson (which recurses) sees it, parsed with json_loadb, then every
// field is checked for presence, type and range. Nothing is stored in *out until all of it is
// valid. No function here throws: allocation failures are caught and
// reported like any other error.
#include "plugin_state.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
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

// JSON string literal. Valid UTF-8 passes through; each byte of an invalid
// sequence becomes U+FFFD, since jansson (rightly) refuses invalid UTF-8.
void put_string(std::string& o, const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  o += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      switch (c) {
        case '\n': o += "\\n"; break;
        case '\t': o += "\\t"; break;
        case '\r': o += "\\r"; break;
        default:
          o += "\\u00";
          o += hex[c >> 4];
          o += hex[c & 15];
      }
      ++i;
    } else if (c < 0x80) {
      o += char(c);
      ++i;
    } else {
      // Length and minimum code point of a multi-byte sequence.
      std::size_t len = 0;
      std::uint32_t cp = 0, min = 0;
      if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
      else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
      else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
      bool ok = len != 0 && i + len <= n;
      for (std::size_t k = 1; ok && k < len; ++k) {
        if ((p[i + k] & 0xc0) != 0x80) ok = false;
        else cp = (cp << 6) | (p[i + k] & 0x3f);
      }
      ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
      if (ok) {
        o.append(s, i, len);
        i += len;
      } else {
        o += "\xef\xbf\xbd";
        ++i;
      }
    }
  }
  o += '"';
}

void put_int(std::string& o, std::int64_t v) { o += std::to_string(v); }

// Seconds with microsecond resolution, independent of the C locale.
void put_seconds(std::string& o, double v) {
  if (!std::isfinite(v) || v < 0) v = 0;
  const long long us = std::llround(v * 1e6);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", us / 1000000, us % 1000000);
  o += buf;
}

// "key": — with a leading comma unless it is the first key of the object.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& o) : o_(o) { o_ += '{'; }
  void key(const char* k) {
    if (!first_) o_ += ", ";
    first_ = false;
    o_ += '"';
    o_ += k;
    o_ += "\": ";
  }
  void end() { o_ += '}'; }

 private:
  std::string& o_;
  bool first_ = true;
};

void put_ring(std::string& o, const Predictor::Ring& r) {
  ObjectWriter w(o);
  w.key("user"); put_int(o, r.user);
  w.key("estimate_key"); put_int(o, r.estimate_key);
  w.key("history");
  o += '[';
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    if (i) o += ", ";
    o += '[';
    put_int(o, r.entries[i].runtime);
    o += ", ";
    put_int(o, r.entries[i].estimate);
    o += ']';
  }
  o += ']';
  w.end();
}

// A top-level array, one element per line.
template <class T, class F>
void put_lines(std::string& o, const std::vector<T>& v, F put) {
  if (v.empty()) {
    o += "[]";
    return;
  }
  o += "[\n";
  for (std::size_t i = 0; i < v.size(); ++i) {
    o += "  ";
    put(o, v[i]);
    o += i + 1 < v.size() ? ",\n" : "\n";
  }
  o += " ]";
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

bool check_state(const SavedState& s, std::string* why) {
  return check_int(s.last_learned_end, 0, kMaxSeconds, "last_learned_end", why) &&
         check_count(s.learned_jobs, "learned_jobs", why) &&
         check_int(s.window, 1, PredictorConfig::kMaxWindow, "window", why) &&
         check_rings(s.rings, "users", why);
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
      !check_rings(s.history, "history", why))
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

std::string state_json(const SavedState& s, Time written) {
  std::string o;
  o.reserve(256 + s.rings.size() * 64);
  o += "{\n \"format_version\": ";
  put_int(o, SavedState::kFormatVersion);
  o += ",\n \"written\": ";
  put_int(o, written);
  o += ",\n \"last_learned_end\": ";
  put_int(o, s.last_learned_end);
  o += ",\n \"learned_jobs\": ";
  put_int(o, std::int64_t(s.learned_jobs));
  o += ",\n \"window\": ";
  put_int(o, s.window);
  o += ",\n \"users\": ";
  put_lines(o, s.rings, put_ring);
  o += "\n}\n";
  return o;
}

void put_job(std::string& o, const JobStatus& j) {
  ObjectWriter w(o);
  w.key("job_id"); put_int(o, j.job_id);
  w.key("array"); put_string(o, j.array);
  w.key("user"); put_int(o, j.user);
  w.key("user_name"); put_string(o, j.user_name);
  w.key("partition"); put_string(o, j.partition);
  w.key("state"); put_string(o, j.state);
  w.key("submit"); put_int(o, j.submit);
  w.key("start"); put_int(o, j.start);
  w.key("estimate"); put_int(o, j.estimate);
  w.key("prediction"); put_int(o, j.prediction);
  w.key("corrections"); put_int(o, j.corrections);
  w.key("reserved"); o += j.reserved ? "true" : "false";
  w.key("from_history"); o += j.from_history ? "true" : "false";
  w.end();
}

std::string status_json(const Status& s) {
  std::string o;
  o.reserve(1024 + s.history.size() * 64 + s.jobs.size() * 256);
  o += "{\n \"format_version\": ";
  put_int(o, Status::kFormatVersion);
  o += ",\n \"version\": ";
  put_string(o, s.version);
  o += ",\n \"slurm_version\": ";
  put_string(o, s.slurm_version);
  o += ",\n \"written\": ";
  put_int(o, s.written);
  o += ",\n \"settings\": ";
  put_string(o, s.settings);
  o += ",\n \"state_file\": ";
  put_string(o, s.state_file);
  o += ",\n \"last_cycle\": ";
  {
    const CycleStats& c = s.last;
    ObjectWriter w(o);
    w.key("time"); put_int(o, c.time);
    w.key("seconds"); put_seconds(o, c.seconds);
    w.key("partitions"); put_int(o, c.partitions);
    w.key("pending"); put_int(o, c.pending);
    w.key("running"); put_int(o, c.running);
    w.key("tested"); put_int(o, c.tested);
    w.key("started_in_order"); put_int(o, c.started_in_order);
    w.key("started_backfill"); put_int(o, c.started_backfill);
    w.key("reservations"); put_int(o, c.reservations);
    w.key("corrections"); put_int(o, c.corrections);
    w.key("learned"); put_int(o, c.learned);
    w.key("yields"); put_int(o, c.yields);
    w.key("interrupted"); o += c.interrupted ? "true" : "false";
    w.key("trigger"); put_string(o, c.trigger);
    w.end();
  }
  o += ",\n \"totals\": ";
  {
    const Totals& t = s.totals;
    ObjectWriter w(o);
    w.key("cycles"); put_int(o, std::int64_t(t.cycles));
    w.key("tested"); put_int(o, std::int64_t(t.tested));
    w.key("started_in_order"); put_int(o, std::int64_t(t.started_in_order));
    w.key("started_backfill"); put_int(o, std::int64_t(t.started_backfill));
    w.key("corrections"); put_int(o, std::int64_t(t.corrections));
    w.key("learned"); put_int(o, std::int64_t(t.learned));
    w.key("seconds"); put_seconds(o, t.seconds);
    w.key("max_seconds"); put_seconds(o, t.max_seconds);
    w.end();
  }
  o += ",\n \"history\": ";
  put_lines(o, s.history, put_ring);
  o += ",\n \"jobs\": ";
  put_lines(o, s.jobs, put_job);
  o += "\n}\n";
  return o;
}

// --- the atomic write ------------------------------------------------------------

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Temporary file, write, fsync, close, rename, fsync of the directory. On
// failure before the rename the temporary file is removed and `path` is
// untouched.
bool write_atomic(const std::string& path, const std::string& data, mode_t mode,
                  std::string* error) {
  const std::string tmp = path + ".tmp." + std::to_string(long(getpid()));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    *error = path + ": cannot create temporary file " + tmp + ": " + errno_text(errno);
    return false;
  }
  auto fail = [&](const char* what) {
    const int e = errno;
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    *error = path + ": " + what + " " + tmp + ": " + errno_text(e);
    return false;
  };
  // Exactly `mode`, whatever the umask (the status file is for every admin).
  if (fchmod(fd, mode) != 0) return fail("cannot set the mode of");
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    if (n == 0) {
      errno = EIO;
      return fail("cannot write");
    }
    p += n;
    left -= std::size_t(n);
  }
  if (fsync(fd) != 0) return fail("cannot fsync");
  const int c = close(fd);
  fd = -1;
  if (c != 0) return fail("cannot close");
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename over it");

  // The new file is in place; make the rename itself durable.
  const std::string dir = dir_of(path);
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    *error = path + ": written, but cannot open its directory " + dir + " to fsync it: " +
             errno_text(errno);
    return false;
  }
  if (fsync(dfd) != 0 && errno != EINVAL && errno != ENOTSUP) {
    const int e = errno;
    close(dfd);
    *error = path + ": written, but fsync of its directory " + dir + " failed: " + errno_text(e);
    return false;
  }
  close(dfd);
  return true;
}

// --- reading ------------------------------------------------------------------

// Reads the whole file. `missing` is set for ENOENT.
bool read_file(const std::string& path, std::string* data, bool* missing, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT && missing) *missing = true;
    *error = path + ": " + (e == ENOENT ? "no such file" : "cannot open") + " (" +
             errno_text(e) + ")";
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
  if (std::uint64_t(st.st_size) > kMaxFileBytes) {
    close(fd);
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
      *error = path + ": larger than the " + std::to_string(kMaxFileBytes >> 20) + " MiB limit";
      return false;
    }
    data->append(buf, std::size_t(n));
  }
  close(fd);
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
// format_version `version`. *why gets the part of the message after the path.
JsonPtr load_root(const std::string& path, int version, bool* missing, std::string* error) {
  std::string text;
  if (!read_file(path, &text, missing, error)) return nullptr;
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
  return root;
}

bool parse_state(const std::string& path, json_t* root, SavedState* s, std::string* error) {
  std::string why;
  Fields f(&why);
  std::int64_t written = 0, learned = 0;
  json_t* users = nullptr;
  const bool ok =
      f.get_int(root, "", "written", 0, kMaxSeconds, &written) &&
      f.get_num(root, "", "last_learned_end", 0, kMaxSeconds, &s->last_learned_end) &&
      f.get_int(root, "", "learned_jobs", 0, kMaxCount, &learned) &&
      f.get_num(root, "", "window", 1, PredictorConfig::kMaxWindow, &s->window) &&
      (users = f.member(root, "", "users")) != nullptr && parse_rings(f, users, "users", &s->rings);
  if (!ok) {
    *error = path + ": " + why;
    return false;
  }
  s->learned_jobs = std::uint64_t(learned);
  return true;
}

bool parse_status(const std::string& path, json_t* root, Status* s, std::string* error) {
  std::string why;
  Fields f(&why);
  auto fail = [&] {
    *error = path + ": " + why;
    return false;
  };
  if (!f.get_string(root, "", "version", &s->version) ||
      !f.get_string(root, "", "slurm_version", &s->slurm_version) ||
      !f.get_num(root, "", "written", 0, kMaxSeconds, &s->written) ||
      !f.get_string(root, "", "settings", &s->settings) ||
      !f.get_string(root, "", "state_file", &s->state_file))
    return fail();

  json_t* c = f.member(root, "", "last_cycle");
  if (!c || !f.object(c, "last_cycle")) return fail();
  CycleStats& l = s->last;
  const std::string lc = "last_cycle";
  constexpr std::int64_t u32 = 4294967295LL;
  if (!f.get_num(c, lc, "time", 0, kMaxSeconds, &l.time) ||
      !f.get_real(c, lc, "seconds", &l.seconds) ||
      !f.get_num(c, lc, "partitions", 0, u32, &l.partitions) ||
      !f.get_num(c, lc, "pending", 0, u32, &l.pending) ||
      !f.get_num(c, lc, "running", 0, u32, &l.running) ||
      !f.get_num(c, lc, "tested", 0, u32, &l.tested) ||
      !f.get_num(c, lc, "started_in_order", 0, u32, &l.started_in_order) ||
      !f.get_num(c, lc, "started_backfill", 0, u32, &l.started_backfill) ||
      !f.get_num(c, lc, "reservations", 0, u32, &l.reservations) ||
      !f.get_num(c, lc, "corrections", 0, u32, &l.corrections) ||
      !f.get_num(c, lc, "learned", 0, u32, &l.learned) ||
      !f.get_num(c, lc, "yields", 0, u32, &l.yields) ||
      !f.get_bool(c, lc, "interrupted", &l.interrupted) ||
      !f.get_string(c, lc, "trigger", &l.trigger))
    return fail();

  json_t* t = f.member(root, "", "totals");
  if (!t || !f.object(t, "totals")) return fail();
  Totals& tt = s->totals;
  const std::string tn = "totals";
  if (!f.get_num(t, tn, "cycles", 0, kMaxCount, &tt.cycles) ||
      !f.get_num(t, tn, "tested", 0, kMaxCount, &tt.tested) ||
      !f.get_num(t, tn, "started_in_order", 0, kMaxCount, &tt.started_in_order) ||
      !f.get_num(t, tn, "started_backfill", 0, kMaxCount, &tt.started_backfill) ||
      !f.get_num(t, tn, "corrections", 0, kMaxCount, &tt.corrections) ||
      !f.get_num(t, tn, "learned", 0, kMaxCount, &tt.learned) ||
      !f.get_real(t, tn, "seconds", &tt.seconds) ||
      !f.get_real(t, tn, "max_seconds", &tt.max_seconds))
    return fail();

  json_t* h = f.member(root, "", "history");
  if (!h || !parse_rings(f, h, "history", &s->history)) return fail();

  json_t* jobs = f.member(root, "", "jobs");
  if (!jobs || !f.array(jobs, "jobs")) return fail();
  s->jobs.reserve(json_array_size(jobs));
  for (std::size_t i = 0; i < json_array_size(jobs); ++i) {
    const std::string jf = "jobs[" + std::to_string(i) + "]";
    json_t* o = json_array_get(jobs, i);
    if (!f.object(o, jf)) return fail();
    JobStatus j;
    if (!f.get_num(o, jf, "job_id", 0, kMaxJobId, &j.job_id) ||
        !f.get_string(o, jf, "array", &j.array) ||
        !f.get_num(o, jf, "user", kNoUser, kMaxUid, &j.user) ||
        !f.get_string(o, jf, "user_name", &j.user_name) ||
        !f.get_string(o, jf, "partition", &j.partition) ||
        !f.get_string(o, jf, "state", &j.state) ||
        !f.get_num(o, jf, "submit", 0, kMaxSeconds, &j.submit) ||
        !f.get_num(o, jf, "start", 0, kMaxSeconds, &j.start) ||
        !f.get_num(o, jf, "estimate", 0, kMaxSeconds, &j.estimate) ||
        !f.get_num(o, jf, "prediction", 0, kMaxSeconds, &j.prediction) ||
        !f.get_num(o, jf, "corrections", 0, u32, &j.corrections) ||
        !f.get_bool(o, jf, "reserved", &j.reserved) ||
        !f.get_bool(o, jf, "from_history", &j.from_history))
      return fail();
    s->jobs.push_back(std::move(j));
  }
  return true;
}

}  // namespace

bool load_state(const std::string& path, SavedState* out, std::string* error, bool* missing) {
  if (missing) *missing = false;
  try {
    *out = SavedState{};
    JsonPtr root = load_root(path, SavedState::kFormatVersion, missing, error);
    if (!root) return false;
    SavedState s;
    if (!parse_state(path, root.get(), &s, error)) return false;
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

bool save_state(const std::string& path, const SavedState& s, std::string* error) {
  try {
    std::string why;
    if (!check_state(s, &why)) {
      *error = path + ": not written: " + why;
      return false;
    }
    return write_atomic(path, state_json(s, Time(::time(nullptr))), 0600, error);
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  } catch (...) {
    *error = path + ": cannot write: unknown error";
  }
  return false;
}

bool write_status(const std::string& path, const Status& s, std::string* error) {
  try {
    std::string why;
    if (!check_status(s, &why)) {
      *error = path + ": not written: " + why;
      return false;
    }
    return write_atomic(path, status_json(s), 0644, error);
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  } catch (...) {
    *error = path + ": cannot write: unknown error";
  }
  return false;
}

bool read_status(const std::string& path, Status* out, std::string* error, bool* missing) {
  if (missing) *missing = false;
  try {
    *out = Status{};
    JsonPtr root = load_root(path, Status::kFormatVersion, missing, error);
    if (!root) return false;
    Status s;
    if (!parse_status(path, root.get(), &s, error)) return false;
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

}  // namespace easypp::plugin
