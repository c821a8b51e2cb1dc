// The Markov model's file: JSON through jansson, one format version, every
// field checked on reading. An error names the file, the line of the value
// at fault and the field's path ("model.json:1234: field
// transitions[3].runtime[7]: quantiles must not decrease (got 12 after 40)").
// jansson keeps no positions for values, so the line is found afterwards by
// walking the text to that path (only when there is an error to report).
#include <jansson.h>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include "easypp/sim/markov_model.h"

namespace easypp {

namespace {

constexpr const char* kFormatName = "easypp-markov-model";
constexpr std::size_t kMaxFileBytes = std::size_t(256) << 20;
constexpr std::int64_t kMaxProcs = 100000000;
constexpr double kMaxTime = 100.0 * 365 * 86400;  // seconds: a century

// --- writing ----------------------------------------------------------------------------

json_t* quantiles_json(const Quantiles& q, bool whole) {
  json_t* a = json_array();
  for (double v : q.values)
    json_array_append_new(a, whole ? json_integer(json_int_t(v)) : json_real(v));
  return a;
}

void put_distributions(json_t* o, const Quantiles& ia, const Quantiles& run, const Quantiles& delta) {
  json_object_set_new(o, "interarrival", quantiles_json(ia, true));
  json_object_set_new(o, "runtime", quantiles_json(run, true));
  json_object_set_new(o, "estimate_delta", quantiles_json(delta, true));
}

json_t* uint_json(std::uint64_t v) { return json_integer(json_int_t(v)); }

// --- where a value is in the text --------------------------------------------------------

using PathItem = std::variant<std::string, std::size_t>;

/// The line (1-based) of the value at `path` in valid JSON text, or of its
/// deepest ancestor present.
class Locator {
 public:
  explicit Locator(const std::string& text) : t_(text) {}
  int line_of(const std::vector<PathItem>& path) {
    p_ = 0;
    line_ = 1;
    return find(path, 0);
  }

 private:
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) {
      if (t_[p_] == '\n') ++line_;
      ++p_;
    }
  }
  std::string string() {  // at '"'; raw content (escapes kept)
    std::string s;
    ++p_;
    while (p_ < t_.size() && t_[p_] != '"') {
      if (t_[p_] == '\\' && p_ + 1 < t_.size()) s += t_[p_++];
      s += t_[p_++];
    }
    ++p_;
    return s;
  }
  void skip() {
    ws();
    if (p_ >= t_.size()) return;
    const char c = t_[p_];
    if (c == '"') {
      string();
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++p_;
      ws();
      if (p_ < t_.size() && t_[p_] == close) {
        ++p_;
        return;
      }
      while (p_ < t_.size()) {
        if (c == '{') {
          ws();
          string();
          ws();
          ++p_;  // ':'
        }
        skip();
        ws();
        if (p_ < t_.size() && t_[p_] == ',') {
          ++p_;
          continue;
        }
        ++p_;  // close
        return;
      }
    } else {
      while (p_ < t_.size() && t_[p_] != ',' && t_[p_] != '}' && t_[p_] != ']' && t_[p_] != '\n') ++p_;
    }
  }
  int find(const std::vector<PathItem>& path, std::size_t depth) {
    ws();
    const int here = line_;
    if (depth == path.size() || p_ >= t_.size()) return here;
    const char c = t_[p_];
    if (c == '{' && std::holds_alternative<std::string>(path[depth])) {
      ++p_;
      while (p_ < t_.size()) {
        ws();
        if (t_[p_] == '}') return here;
        const std::string key = string();
        ws();
        ++p_;  // ':'
        if (key == std::get<std::string>(path[depth])) return find(path, depth + 1);
        skip();
        ws();
        if (p_ < t_.size() && t_[p_] == ',') ++p_;
        else return here;
      }
    } else if (c == '[' && std::holds_alternative<std::size_t>(path[depth])) {
      ++p_;
      for (std::size_t i = 0; p_ < t_.size(); ++i) {
        ws();
        if (t_[p_] == ']') return here;
        if (i == std::get<std::size_t>(path[depth])) return find(path, depth + 1);
        skip();
        ws();
        if (p_ < t_.size() && t_[p_] == ',') ++p_;
        else return here;
      }
    }
    return here;
  }

  const std::string& t_;
  std::size_t p_ = 0;
  int line_ = 1;
};

// --- reading and checking ----------------------------------------------------------------

class Reader {
 public:
  Reader(const std::string& text, std::string name) : text_(text), name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    std::string field;
    for (const PathItem& it : path_) {
      if (std::holds_alternative<std::string>(it))
        field += (field.empty() ? "" : ".") + std::get<std::string>(it);
      else
        field += "[" + std::to_string(std::get<std::size_t>(it)) + "]";
    }
    Locator loc(text_);
    const int line = loc.line_of(path_);
    throw ModelError(name_ + ":" + std::to_string(line) + ": " +
                     (field.empty() ? "" : "field " + field + ": ") + problem);
  }

  // A path component for the duration of a scope.
  class At {
   public:
    At(Reader& r, PathItem item) : r_(r) { r_.path_.push_back(std::move(item)); }
    ~At() { r_.path_.pop_back(); }
    At(const At&) = delete;
    At& operator=(const At&) = delete;

   private:
    Reader& r_;
  };

  json_t* member(json_t* obj, const char* key, const char* kind) {
    json_t* v = json_object_get(obj, key);
    if (!v) fail(std::string("missing ") + kind + " '" + key + "'");
    return v;
  }
  std::int64_t integer(json_t* v, std::int64_t lo, std::int64_t hi) {
    if (!json_is_integer(v)) fail("expected an integer");
    const std::int64_t x = json_integer_value(v);
    if (x < lo || x > hi)
      fail("out of range (got " + std::to_string(x) + ", expected " + std::to_string(lo) + ".." +
           std::to_string(hi) + ")");
    return x;
  }
  std::int64_t int_field(json_t* obj, const char* key, std::int64_t lo, std::int64_t hi) {
    json_t* v = member(obj, key, "field");
    At at(*this, std::string(key));
    return integer(v, lo, hi);
  }
  double number(json_t* v, double lo, double hi) {
    if (!json_is_number(v)) fail("expected a number");
    const double x = json_number_value(v);
    if (!std::isfinite(x) || x < lo || x > hi) {
      std::ostringstream o;
      o << "out of range (got " << x << ", expected " << lo << ".." << hi << ")";
      fail(o.str());
    }
    return x;
  }
  double real_field(json_t* obj, const char* key, double lo, double hi) {
    json_t* v = member(obj, key, "field");
    At at(*this, std::string(key));
    return number(v, lo, hi);
  }
  std::string string_field(json_t* obj, const char* key) {
    json_t* v = member(obj, key, "field");
    At at(*this, std::string(key));
    if (!json_is_string(v)) fail("expected a string");
    return json_string_value(v);
  }
  json_t* object_field(json_t* obj, const char* key) {
    json_t* v = member(obj, key, "object");
    if (!json_is_object(v)) {
      At at(*this, std::string(key));
      fail("expected an object");
    }
    return v;
  }
  json_t* array_field(json_t* obj, const char* key, std::size_t min_size) {
    json_t* v = member(obj, key, "array");
    At at(*this, std::string(key));
    if (!json_is_array(v)) fail("expected an array");
    if (json_array_size(v) < min_size)
      fail("needs at least " + std::to_string(min_size) + " element" + (min_size == 1 ? "" : "s"));
    return v;
  }
  /// A quantile table: numbers in [lo, hi], not decreasing.
  Quantiles quantiles(json_t* obj, const char* key, double lo, double hi, bool whole) {
    json_t* a = array_field(obj, key, 1);
    At at(*this, std::string(key));
    Quantiles q;
    for (std::size_t i = 0; i < json_array_size(a); ++i) {
      At ai(*this, i);
      json_t* v = json_array_get(a, i);
      const double x = whole ? double(integer(v, std::int64_t(lo), std::int64_t(hi))) : number(v, lo, hi);
      if (!q.values.empty() && x < q.values.back()) {
        std::ostringstream o;
        o << "quantiles must not decrease (got " << x << " after " << q.values.back() << ")";
        fail(o.str());
      }
      q.values.push_back(x);
    }
    return q;
  }
  void distributions(json_t* o, Quantiles* ia, Quantiles* run, Quantiles* delta) {
    *ia = quantiles(o, "interarrival", 0, kMaxTime, true);
    *run = quantiles(o, "runtime", 0, kMaxTime, true);
    *delta = quantiles(o, "estimate_delta", -kMaxTime, kMaxTime, true);
  }

 private:
  const std::string& text_;
  std::string name_;
  std::vector<PathItem> path_;
};

struct JsonFree {
  void operator()(json_t* j) const { json_decref(j); }
};

}  // namespace

std::string markov_model_json(const MarkovModel& m) {
  json_t* root = json_object();
  json_object_set_new(root, "format", json_string(kFormatName));
  json_object_set_new(root, "format_version", json_integer(MarkovModel::kFormatVersion));
  json_t* src = json_object();
  json_object_set_new(src, "file", json_string(m.source.c_str()));
  json_object_set_new(src, "jobs", uint_json(m.source_jobs));
  json_object_set_new(src, "fitted_by", json_string(m.fitted_by.c_str()));
  json_object_set_new(root, "source", src);
  json_t* mach = json_object();
  json_object_set_new(mach, "procs", json_integer(json_int_t(m.procs)));
  json_object_set_new(mach, "max_runtime", json_integer(json_int_t(m.max_runtime)));
  json_object_set_new(root, "machine", mach);
  json_t* gen = json_object();
  json_object_set_new(gen, "jobs", uint_json(m.jobs));
  json_object_set_new(gen, "burn_in", uint_json(m.burn_in));
  json_object_set_new(gen, "thin", uint_json(m.thin));
  json_object_set_new(gen, "min_samples", uint_json(m.min_samples));
  json_object_set_new(gen, "match_window", uint_json(m.match_window));
  json_object_set_new(root, "generation", gen);
  json_t* states = json_array();
  for (const MarkovState& s : m.states) {
    json_t* o = json_object();
    json_object_set_new(o, "size_class", json_integer(json_int_t(s.size_class)));
    json_object_set_new(o, "jobs", uint_json(s.jobs));
    json_object_set_new(o, "repeats", uint_json(s.repeats));
    json_t* sz = json_array();
    for (const auto& [size, count] : s.sizes) {
      json_t* pair = json_array();
      json_array_append_new(pair, json_integer(json_int_t(size)));
      json_array_append_new(pair, uint_json(count));
      json_array_append_new(sz, pair);
    }
    json_object_set_new(o, "sizes", sz);
    put_distributions(o, s.interarrival, s.runtime, s.estimate_delta);
    json_array_append_new(states, o);
  }
  json_object_set_new(root, "states", states);
  json_t* trs = json_array();
  for (const MarkovTransition& t : m.transitions) {
    json_t* o = json_object();
    json_object_set_new(o, "from", json_integer(json_int_t(m.states[t.from].size_class)));
    json_object_set_new(o, "to", json_integer(json_int_t(m.states[t.to].size_class)));
    json_object_set_new(o, "jobs", uint_json(t.jobs));
    json_object_set_new(o, "repeats", uint_json(t.repeats));
    put_distributions(o, t.interarrival, t.runtime, t.estimate_delta);
    json_array_append_new(trs, o);
  }
  json_object_set_new(root, "transitions", trs);
  json_t* u = json_object();
  json_object_set_new(u, "users", uint_json(m.users.users));
  json_object_set_new(u, "new_user_share", json_real(m.users.new_user_share));
  json_object_set_new(u, "overrun_share", json_real(m.users.overrun_share));
  json_object_set_new(u, "repeat_ratio", quantiles_json(m.users.repeat_ratio, false));
  json_object_set_new(u, "fresh_ratio", quantiles_json(m.users.fresh_ratio, false));
  json_t* ranks = json_array();
  for (std::uint64_t c : m.users.recency_ranks) json_array_append_new(ranks, uint_json(c));
  json_object_set_new(u, "recency_ranks", ranks);
  json_object_set_new(root, "users", u);

  char* text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
  json_decref(root);
  if (!text) throw std::runtime_error("cannot format the model as JSON");
  std::string out(text);
  std::free(text);
  out += '\n';
  return out;
}

MarkovModel parse_markov_model(const std::string& text, const std::string& name) {
  json_error_t err;
  std::unique_ptr<json_t, JsonFree> doc(
      json_loadb(text.data(), text.size(), JSON_REJECT_DUPLICATES, &err));
  if (!doc)
    throw ModelError(name + ":" + std::to_string(err.line > 0 ? err.line : 1) + ": not valid JSON: " + err.text);
  Reader r(text, name);
  json_t* root = doc.get();
  if (!json_is_object(root)) r.fail("expected a JSON object (an easypp Markov model)");
  if (r.string_field(root, "format") != kFormatName) {
    Reader::At at(r, std::string("format"));
    r.fail(std::string("not an easypp Markov model (expected \"") + kFormatName + "\")");
  }
  {
    json_t* v = r.member(root, "format_version", "field");
    Reader::At at(r, std::string("format_version"));
    if (!json_is_integer(v) || json_integer_value(v) != MarkovModel::kFormatVersion)
      r.fail("unsupported version (this easypp reads " + std::to_string(MarkovModel::kFormatVersion) + ")");
  }
  MarkovModel m;
  {
    json_t* src = r.object_field(root, "source");
    Reader::At at(r, std::string("source"));
    m.source = r.string_field(src, "file");
    m.source_jobs = std::uint64_t(r.int_field(src, "jobs", 0, std::numeric_limits<std::int64_t>::max()));
    m.fitted_by = r.string_field(src, "fitted_by");
  }
  {
    json_t* mach = r.object_field(root, "machine");
    Reader::At at(r, std::string("machine"));
    m.procs = r.int_field(mach, "procs", 1, kMaxProcs);
    m.max_runtime = r.int_field(mach, "max_runtime", 1, std::int64_t(kMaxTime));
  }
  {
    json_t* g = r.object_field(root, "generation");
    Reader::At at(r, std::string("generation"));
    m.jobs = std::uint64_t(r.int_field(g, "jobs", 1, 10000000));
    m.burn_in = std::uint64_t(r.int_field(g, "burn_in", 0, 100000000));
    m.thin = std::uint32_t(r.int_field(g, "thin", 1, 1000));
    m.min_samples = std::uint64_t(r.int_field(g, "min_samples", 1, 1000000000));
    m.match_window = std::uint32_t(r.int_field(g, "match_window", 1, 100000));
  }
  std::map<std::int64_t, std::size_t> by_class;
  {
    json_t* states = r.array_field(root, "states", 1);
    Reader::At at(r, std::string("states"));
    for (std::size_t i = 0; i < json_array_size(states); ++i) {
      Reader::At ai(r, i);
      json_t* o = json_array_get(states, i);
      if (!json_is_object(o)) r.fail("expected an object");
      MarkovState s;
      s.size_class = r.int_field(o, "size_class", 1, m.procs);
      if ((s.size_class & (s.size_class - 1)) != 0) {
        Reader::At a2(r, std::string("size_class"));
        r.fail("not a power of two (got " + std::to_string(s.size_class) + ")");
      }
      if (!by_class.emplace(s.size_class, i).second) {
        Reader::At a2(r, std::string("size_class"));
        r.fail("size class " + std::to_string(s.size_class) + " appears twice");
      }
      if (i > 0 && s.size_class < m.states.back().size_class) {
        Reader::At a2(r, std::string("size_class"));
        r.fail("states must be in ascending size class");
      }
      s.jobs = std::uint64_t(r.int_field(o, "jobs", 1, std::numeric_limits<std::int64_t>::max()));
      s.repeats = std::uint64_t(r.int_field(o, "repeats", 0, std::int64_t(s.jobs)));
      json_t* sz = r.array_field(o, "sizes", 1);
      {
        Reader::At a2(r, std::string("sizes"));
        for (std::size_t k = 0; k < json_array_size(sz); ++k) {
          Reader::At a3(r, k);
          json_t* pair = json_array_get(sz, k);
          if (!json_is_array(pair) || json_array_size(pair) != 2) r.fail("expected [size, jobs]");
          std::int64_t size;
          {
            Reader::At a4(r, std::size_t(0));
            size = r.integer(json_array_get(pair, 0), s.size_class,
                             std::min(2 * s.size_class - 1, m.procs));
            if (!s.sizes.empty() && size <= s.sizes.back().first) r.fail("sizes must be ascending");
          }
          Reader::At a4(r, std::size_t(1));
          const auto count = std::uint64_t(r.integer(json_array_get(pair, 1), 1, std::numeric_limits<std::int64_t>::max()));
          s.sizes.emplace_back(size, count);
        }
      }
      r.distributions(o, &s.interarrival, &s.runtime, &s.estimate_delta);
      m.states.push_back(std::move(s));
    }
  }
  {
    json_t* trs = r.array_field(root, "transitions", 0);
    Reader::At at(r, std::string("transitions"));
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (std::size_t i = 0; i < json_array_size(trs); ++i) {
      Reader::At ai(r, i);
      json_t* o = json_array_get(trs, i);
      if (!json_is_object(o)) r.fail("expected an object");
      MarkovTransition t;
      for (const char* end : {"from", "to"}) {
        const std::int64_t c = r.int_field(o, end, 1, m.procs);
        const auto it = by_class.find(c);
        if (it == by_class.end()) {
          Reader::At a2(r, std::string(end));
          r.fail("no state has size class " + std::to_string(c));
        }
        (std::strcmp(end, "from") == 0 ? t.from : t.to) = it->second;
      }
      if (!seen.emplace(t.from, t.to).second) r.fail("transition listed twice");
      t.jobs = std::uint64_t(r.int_field(o, "jobs", 1, std::numeric_limits<std::int64_t>::max()));
      t.repeats = std::uint64_t(r.int_field(o, "repeats", 0, std::int64_t(t.jobs)));
      r.distributions(o, &t.interarrival, &t.runtime, &t.estimate_delta);
      m.transitions.push_back(std::move(t));
    }
  }
  {
    json_t* u = r.object_field(root, "users");
    Reader::At at(r, std::string("users"));
    m.users.users = std::uint64_t(r.int_field(u, "users", 0, std::numeric_limits<std::int64_t>::max()));
    m.users.new_user_share = r.real_field(u, "new_user_share", 0, 1);
    m.users.overrun_share = r.real_field(u, "overrun_share", 0, 1);
    // Empty tables are allowed here: a log without users, or without repeats.
    for (const char* key : {"repeat_ratio", "fresh_ratio"}) {
      json_t* a = r.array_field(u, key, 0);
      Quantiles q = json_array_size(a) ? r.quantiles(u, key, -64, 64, false) : Quantiles{};
      (std::strcmp(key, "repeat_ratio") == 0 ? m.users.repeat_ratio : m.users.fresh_ratio) = q;
    }
    json_t* ranks = r.array_field(u, "recency_ranks", 0);
    Reader::At a2(r, std::string("recency_ranks"));
    for (std::size_t i = 0; i < json_array_size(ranks); ++i) {
      Reader::At ai(r, i);
      m.users.recency_ranks.push_back(
          std::uint64_t(r.integer(json_array_get(ranks, i), 0, std::numeric_limits<std::int64_t>::max())));
    }
  }
  return m;
}

MarkovModel read_markov_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ModelError(path + ": cannot read: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    text.append(buf, std::size_t(f.gcount()));
    if (text.size() > kMaxFileBytes) throw ModelError(path + ": larger than 256 MB: not a model file");
  }
  if (f.bad()) throw ModelError(path + ": cannot read: " + std::strerror(errno));
  return parse_markov_model(text, path);
}

void write_markov_model(const std::string& path, const MarkovModel& m) {
  const std::string text = markov_model_json(m);
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw ModelWriteError(std::string("cannot write standard output: ") + std::strerror(errno), true);
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wx");
  if (!f) throw ModelWriteError("cannot write " + path + ": " + std::strerror(errno), false);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(fileno(f)) == 0 && ok;
  const int saved = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : saved;
    std::remove(tmp.c_str());
    throw ModelWriteError("cannot write " + path + ": " + std::strerror(e ? e : EIO), true);
  }
}

}  // namespace easypp
