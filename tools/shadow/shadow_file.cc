#include "shadow/shadow_file.h"

#include <cmath>
#include <ctime>
#include <exception>
#include <memory>
#include <set>

namespace easypp::shadow {

namespace {

constexpr std::int64_t kMaxTime = std::int64_t(1) << 40;
constexpr std::int64_t kMaxUid = 4294967295LL;

struct JsonDeleter {
  void operator()(json_t* j) const { json_decref(j); }
};
using JsonPtr = std::unique_ptr<json_t, JsonDeleter>;

json_t* jint(std::int64_t v) { return json_integer(json_int_t(v)); }
// Names come from the system and need not be UTF-8 (jansson refuses
// anything else): then every byte outside ASCII becomes '?'.
json_t* jstr(const std::string& s);
void put(json_t* o, const char* k, json_t* v) { json_object_set_new(o, k, v); }

}  // namespace

json_t* json_text(const std::string& s) {
  if (json_t* v = json_stringn(s.data(), s.size())) return v;
  std::string a = s;
  for (char& c : a)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\0') c = '?';
  return json_stringn(a.data(), a.size());
}

namespace {

json_t* jstr(const std::string& s) { return json_text(s); }

json_t* view_json(const JobView& v) {
  json_t* o = json_object();
  put(o, "job_id", jint(v.id));
  put(o, "name", jstr(v.name));
  put(o, "uid", jint(v.uid));
  put(o, "user", jstr(v.user));
  put(o, "partition", jstr(v.partition));
  put(o, "state", jstr(v.state));
  put(o, "phase", jint(int(v.phase)));
  put(o, "submit", jint(v.submit));
  put(o, "eligible", jint(v.eligible));
  put(o, "start", jint(v.start));
  put(o, "end", jint(v.end));
  put(o, "suspended", jint(v.suspended));
  put(o, "estimate", jint(v.estimate));
  put(o, "blocked", json_boolean(v.blocked));
  put(o, "had_allocation", json_boolean(v.had_allocation));
  put(o, "het_component", json_boolean(v.het_component));
  put(o, "from_accounting", json_boolean(v.from_accounting));
  return o;
}

json_t* plan_json(const JobPlan& p) {
  json_t* o = json_object();
  put(o, "job_id", jint(p.handle));
  put(o, "user", jint(p.user));
  put(o, "estimate", jint(p.estimate));
  put(o, "prediction", jint(p.prediction));
  put(o, "first_prediction", jint(p.first_prediction));
  put(o, "since", jint(p.since >= kNever ? -1 : p.since));
  put(o, "start", jint(p.start));
  put(o, "corrections", jint(p.corr.count));
  put(o, "beyond", jint(p.corr.beyond));
  put(o, "running", json_boolean(p.running));
  put(o, "from_history", json_boolean(p.from_history));
  return o;
}

json_t* tracked_json(const TrackedJob& t) {
  json_t* o = json_object();
  put(o, "view", view_json(t.view));
  put(o, "arrival", jint(t.arrival));
  put(o, "first_prediction", jint(t.first_prediction));
  put(o, "from_history", json_boolean(t.from_history));
  put(o, "start_prediction", jint(t.start_prediction));
  json_t* seg = json_array();
  for (const auto& [since, p] : t.segments) {
    json_t* pair = json_array();
    json_array_append_new(pair, jint(since));
    json_array_append_new(pair, jint(p));
    json_array_append_new(seg, pair);
  }
  put(o, "segments", seg);
  return o;
}

json_t* counters_json(const Counters& n) {
  json_t* o = json_object();
  put(o, "polls", jint(std::int64_t(n.polls)));
  put(o, "failed_polls", jint(std::int64_t(n.failed_polls)));
  put(o, "cycles", jint(std::int64_t(n.cycles)));
  put(o, "before_start", jint(std::int64_t(n.before_start)));
  put(o, "never_ran", jint(std::int64_t(n.never_ran)));
  put(o, "het_components", jint(std::int64_t(n.het_components)));
  put(o, "unseen", jint(std::int64_t(n.unseen)));
  put(o, "vanished", jint(std::int64_t(n.vanished)));
  put(o, "corrections", jint(std::int64_t(n.corrections)));
  put(o, "learned", jint(std::int64_t(n.learned)));
  return o;
}

json_t* rings_json(const std::vector<Predictor::Ring>& rings) {
  json_t* a = json_array();
  for (const auto& r : rings) {
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
    json_array_append_new(a, o);
  }
  return a;
}

// --- reading ---------------------------------------------------------------------

class Fields {
 public:
  explicit Fields(std::string* why) : why_(why) {}
  bool fail(const std::string& field, const std::string& what) {
    *why_ = "field " + field + ": " + what;
    return false;
  }
  json_t* member(json_t* o, const std::string& parent, const char* key) {
    json_t* v = json_is_object(o) ? json_object_get(o, key) : nullptr;
    if (!v) fail(join(parent, key), "missing");
    return v;
  }
  template <class T>
  bool num(json_t* o, const std::string& parent, const char* key, std::int64_t lo, std::int64_t hi,
           T* out) {
    json_t* v = member(o, parent, key);
    if (!v) return false;
    if (!json_is_integer(v)) return fail(join(parent, key), "must be an integer");
    const json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
      return fail(join(parent, key), "must be " + std::to_string(lo) + ".." + std::to_string(hi) +
                                         ", got " + std::to_string(x));
    *out = T(x);
    return true;
  }
  bool str(json_t* o, const std::string& parent, const char* key, std::string* out) {
    json_t* v = member(o, parent, key);
    if (!v) return false;
    if (!json_is_string(v)) return fail(join(parent, key), "must be a string");
    out->assign(json_string_value(v), json_string_length(v));
    return true;
  }
  bool boolean(json_t* o, const std::string& parent, const char* key, bool* out) {
    json_t* v = member(o, parent, key);
    if (!v) return false;
    if (!json_is_boolean(v)) return fail(join(parent, key), "must be true or false");
    *out = json_is_true(v);
    return true;
  }
  bool real(json_t* o, const std::string& parent, const char* key, double* out) {
    json_t* v = member(o, parent, key);
    if (!v) return false;
    if (!json_is_number(v)) return fail(join(parent, key), "must be a number");
    const double x = json_number_value(v);
    if (!(std::isfinite(x) && x >= 0 && x <= 1)) return fail(join(parent, key), "must be 0..1");
    *out = x;
    return true;
  }
  json_t* array(json_t* o, const std::string& parent, const char* key) {
    json_t* v = member(o, parent, key);
    if (v && !json_is_array(v)) {
      fail(join(parent, key), "must be an array");
      return nullptr;
    }
    return v;
  }
  static std::string join(const std::string& parent, const char* key) {
    return parent.empty() ? std::string(key) : parent + "." + key;
  }
  static std::string at(const std::string& name, std::size_t i) {
    return name + "[" + std::to_string(i) + "]";
  }

 private:
  std::string* why_;
};

bool parse_view(Fields& f, json_t* o, const std::string& p, JobView* v) {
  int phase = 0;
  return f.num(o, p, "job_id", 1, kMaxUid, &v->id) && f.str(o, p, "name", &v->name) &&
         f.num(o, p, "uid", kNoUser, kMaxUid, &v->uid) && f.str(o, p, "user", &v->user) &&
         f.str(o, p, "partition", &v->partition) && f.str(o, p, "state", &v->state) &&
         f.num(o, p, "phase", 0, 2, &phase) &&
         (v->phase = JobView::Phase(phase), true) &&
         f.num(o, p, "submit", 0, kMaxTime, &v->submit) &&
         f.num(o, p, "eligible", 0, kMaxTime, &v->eligible) &&
         f.num(o, p, "start", 0, kMaxTime, &v->start) && f.num(o, p, "end", 0, kMaxTime, &v->end) &&
         f.num(o, p, "suspended", 0, kMaxTime, &v->suspended) &&
         f.num(o, p, "estimate", 1, kMaxTime, &v->estimate) &&
         f.boolean(o, p, "blocked", &v->blocked) &&
         f.boolean(o, p, "had_allocation", &v->had_allocation) &&
         f.boolean(o, p, "het_component", &v->het_component) &&
         f.boolean(o, p, "from_accounting", &v->from_accounting);
}

bool parse_plan(Fields& f, json_t* o, const std::string& p, JobPlan* j) {
  Time since = 0;
  if (!(f.num(o, p, "job_id", 1, kMaxUid, &j->handle) &&
        f.num(o, p, "user", kNoUser, kMaxUid, &j->user) &&
        f.num(o, p, "estimate", 1, kMaxTime, &j->estimate) &&
        f.num(o, p, "prediction", 1, kMaxTime, &j->prediction) &&
        f.num(o, p, "first_prediction", 1, kMaxTime, &j->first_prediction) &&
        f.num(o, p, "since", -1, kMaxTime, &since) && f.num(o, p, "start", -1, kMaxTime, &j->start) &&
        f.num(o, p, "corrections", 0, kMaxUid, &j->corr.count) &&
        f.num(o, p, "beyond", 0, kMaxUid, &j->corr.beyond) &&
        f.boolean(o, p, "running", &j->running) &&
        f.boolean(o, p, "from_history", &j->from_history)))
    return false;
  j->since = since < 0 ? kNever : since;
  j->known_end = kNever;
  if (j->running && j->start < 0) return f.fail(p + ".start", "a running job needs a start");
  return true;
}

bool parse_pairs(Fields& f, json_t* a, const std::string& name,
                 std::vector<std::pair<Time, Time>>* out) {
  for (std::size_t i = 0; i < json_array_size(a); ++i) {
    json_t* e = json_array_get(a, i);
    if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(json_array_get(e, 0)) ||
        !json_is_integer(json_array_get(e, 1)))
      return f.fail(Fields::at(name, i), "must be [time, seconds]");
    const Time a0 = json_integer_value(json_array_get(e, 0));
    const Time a1 = json_integer_value(json_array_get(e, 1));
    if (a0 < 0 || a0 > kMaxTime || a1 < 0 || a1 > kMaxTime)
      return f.fail(Fields::at(name, i), "out of range");
    out->emplace_back(a0, a1);
  }
  return true;
}

bool parse_tracked(Fields& f, json_t* o, const std::string& p, TrackedJob* t) {
  json_t* view = f.member(o, p, "view");
  json_t* seg = nullptr;
  return view && parse_view(f, view, p + ".view", &t->view) &&
         f.num(o, p, "arrival", -1, kMaxTime, &t->arrival) &&
         f.num(o, p, "first_prediction", 0, kMaxTime, &t->first_prediction) &&
         f.boolean(o, p, "from_history", &t->from_history) &&
         f.num(o, p, "start_prediction", -1, kMaxTime, &t->start_prediction) &&
         (seg = f.array(o, p, "segments")) != nullptr &&
         parse_pairs(f, seg, p + ".segments", &t->segments);
}

bool parse_record(Fields& f, json_t* o, const std::string& p, Record* r) {
  return f.num(o, p, "job_id", 1, kMaxUid, &r->id) && f.str(o, p, "name", &r->name) &&
         f.str(o, p, "user", &r->user) && f.num(o, p, "uid", kNoUser, kMaxUid, &r->uid) &&
         f.str(o, p, "partition", &r->partition) && f.str(o, p, "state", &r->state) &&
         f.num(o, p, "submit", 0, kMaxTime, &r->submit) &&
         f.num(o, p, "arrival", 0, kMaxTime, &r->arrival) &&
         f.num(o, p, "start", 0, kMaxTime, &r->start) && f.num(o, p, "end", 0, kMaxTime, &r->end) &&
         f.num(o, p, "limit", 1, kMaxTime, &r->estimate) &&
         f.num(o, p, "runtime", 0, kMaxTime, &r->runtime) &&
         f.num(o, p, "first_prediction", 0, kMaxTime, &r->first_prediction) &&
         f.num(o, p, "start_prediction", 0, kMaxTime, &r->start_prediction) &&
         f.num(o, p, "final_prediction", 0, kMaxTime, &r->final_prediction) &&
         f.num(o, p, "corrections", 0, kMaxUid, &r->corrections) &&
         f.boolean(o, p, "from_history", &r->from_history) &&
         f.real(o, p, "accuracy", &r->accuracy) &&
         f.real(o, p, "limit_accuracy", &r->limit_accuracy);
}

bool parse_rings(Fields& f, json_t* a, const std::string& name, std::vector<Predictor::Ring>* out) {
  for (std::size_t i = 0; i < json_array_size(a); ++i) {
    const std::string p = Fields::at(name, i);
    json_t* o = json_array_get(a, i);
    Predictor::Ring r;
    json_t* h = nullptr;
    if (!(f.num(o, p, "user", 0, kMaxUid, &r.user) &&
          f.num(o, p, "estimate_key", -1, kMaxTime, &r.estimate_key) &&
          (h = f.array(o, p, "history")) != nullptr))
      return false;
    std::vector<std::pair<Time, Time>> pairs;
    if (!parse_pairs(f, h, p + ".history", &pairs)) return false;
    for (const auto& [rt, est] : pairs) r.entries.push_back(Predictor::Entry{rt, est});
    out->push_back(std::move(r));
  }
  return true;
}

bool parse_counters(Fields& f, json_t* o, Counters* n) {
  const std::string p = "counters";
  constexpr std::int64_t kMax = INT64_MAX;
  return f.num(o, p, "polls", 0, kMax, &n->polls) &&
         f.num(o, p, "failed_polls", 0, kMax, &n->failed_polls) &&
         f.num(o, p, "cycles", 0, kMax, &n->cycles) &&
         f.num(o, p, "before_start", 0, kMax, &n->before_start) &&
         f.num(o, p, "never_ran", 0, kMax, &n->never_ran) &&
         f.num(o, p, "het_components", 0, kMax, &n->het_components) &&
         f.num(o, p, "unseen", 0, kMax, &n->unseen) && f.num(o, p, "vanished", 0, kMax, &n->vanished) &&
         f.num(o, p, "corrections", 0, kMax, &n->corrections) &&
         f.num(o, p, "learned", 0, kMax, &n->learned);
}

bool parse_state(json_t* root, ShadowState* s, std::string* why) {
  Fields f(why);
  json_t* v = json_object_get(root, "format_version");
  if (!json_is_integer(v) || json_integer_value(v) != ShadowState::kFormatVersion)
    return f.fail("format_version", "not an easypp-shadow state of format " +
                                        std::to_string(ShadowState::kFormatVersion));
  std::string kind;
  if (!f.str(root, "", "kind", &kind)) return false;
  if (kind != "easypp-shadow") return f.fail("kind", "'" + kind + "' is not easypp-shadow");
  json_t* set = f.member(root, "", "settings");
  if (!set) return false;
  if (!json_is_object(set)) return f.fail("settings", "must be an object");
  const char* key;
  json_t* val;
  json_object_foreach(set, key, val) {
    if (!json_is_string(val)) return f.fail(std::string("settings.") + key, "must be a string");
    s->settings.emplace_back(key, json_string_value(val));
  }
  json_t *counters = nullptr, *users = nullptr, *plans = nullptr, *jobs = nullptr,
         *records = nullptr;
  if (!(f.str(root, "", "source", &s->source) &&
        f.str(root, "", "plugin_state", &s->plugin_state) &&
        f.num(root, "", "first", 0, kMaxTime, &s->first) &&
        f.num(root, "", "last", 0, kMaxTime, &s->last) &&
        f.num(root, "", "watermark", 0, kMaxTime, &s->watermark) &&
        f.num(root, "", "learned_total", 0, INT64_MAX, &s->learned_total) &&
        (counters = f.member(root, "", "counters")) != nullptr &&
        parse_counters(f, counters, &s->counters) &&
        (users = f.array(root, "", "users")) != nullptr &&
        parse_rings(f, users, "users", &s->rings) &&
        (plans = f.array(root, "", "plans")) != nullptr &&
        (jobs = f.array(root, "", "jobs")) != nullptr &&
        (records = f.array(root, "", "records")) != nullptr))
    return false;
  for (std::size_t i = 0; i < json_array_size(plans); ++i) {
    JobPlan p;
    if (!parse_plan(f, json_array_get(plans, i), Fields::at("plans", i), &p)) return false;
    s->plans.push_back(p);
  }
  std::set<std::uint32_t> ids;
  for (std::size_t i = 0; i < json_array_size(jobs); ++i) {
    TrackedJob t;
    if (!parse_tracked(f, json_array_get(jobs, i), Fields::at("jobs", i), &t)) return false;
    if (!ids.insert(t.view.id).second)
      return f.fail(Fields::at("jobs", i), "job " + std::to_string(t.view.id) + " twice");
    s->jobs.push_back(std::move(t));
  }
  s->records.reserve(json_array_size(records));
  for (std::size_t i = 0; i < json_array_size(records); ++i) {
    Record r;
    if (!parse_record(f, json_array_get(records, i), Fields::at("records", i), &r)) return false;
    s->records.push_back(std::move(r));
  }
  // The history must be one the plugin would load (save_state's checks).
  plugin::SavedState ps;
  ps.rings = s->rings;
  ps.last_learned_end = s->watermark;
  ps.learned_jobs = s->learned_total;
  if (!plugin::check_saved_state(ps, why)) return false;
  return true;
}

}  // namespace

json_t* record_json(const Record& r) {
  json_t* o = json_object();
  put(o, "job_id", jint(r.id));
  put(o, "name", jstr(r.name));
  put(o, "user", jstr(r.user));
  put(o, "uid", jint(r.uid));
  put(o, "partition", jstr(r.partition));
  put(o, "state", jstr(r.state));
  put(o, "submit", jint(r.submit));
  put(o, "arrival", jint(r.arrival));
  put(o, "start", jint(r.start));
  put(o, "end", jint(r.end));
  put(o, "limit", jint(r.estimate));
  put(o, "runtime", jint(r.runtime));
  put(o, "first_prediction", jint(r.first_prediction));
  put(o, "start_prediction", jint(r.start_prediction));
  put(o, "final_prediction", jint(r.final_prediction));
  put(o, "corrections", jint(r.corrections));
  put(o, "from_history", json_boolean(r.from_history));
  put(o, "accuracy", json_real(std::round(r.accuracy * 1e6) / 1e6));
  put(o, "limit_accuracy", json_real(std::round(r.limit_accuracy * 1e6) / 1e6));
  return o;
}

bool save_shadow_state(const std::string& path, const ShadowState& s, std::string* error) {
  try {
    JsonPtr root(json_object());
    json_t* o = root.get();
    put(o, "format_version", jint(ShadowState::kFormatVersion));
    put(o, "kind", jstr("easypp-shadow"));
    put(o, "written", jint(std::time(nullptr)));
    json_t* set = json_object();
    for (const auto& [k, v] : s.settings) put(set, k.c_str(), jstr(v));
    put(o, "settings", set);
    put(o, "source", jstr(s.source));
    put(o, "plugin_state", jstr(s.plugin_state));
    put(o, "first", jint(s.first));
    put(o, "last", jint(s.last));
    put(o, "watermark", jint(s.watermark));
    put(o, "learned_total", jint(std::int64_t(s.learned_total)));
    put(o, "counters", counters_json(s.counters));
    put(o, "users", rings_json(s.rings));
    json_t* a = json_array();
    for (const JobPlan& p : s.plans) json_array_append_new(a, plan_json(p));
    put(o, "plans", a);
    a = json_array();
    for (const TrackedJob& t : s.jobs) json_array_append_new(a, tracked_json(t));
    put(o, "jobs", a);
    a = json_array();
    for (const Record& r : s.records) json_array_append_new(a, record_json(r));
    put(o, "records", a);
    char* text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (text == nullptr) {
      *error = path + ": cannot build the document (out of memory)";
      return false;
    }
    std::string data(text);
    std::free(text);
    data += '\n';
    return plugin::write_file_safely(path, data, 0600, {}, error);
  } catch (const std::exception& e) {
    *error = path + ": cannot write: " + e.what();
  }
  return false;
}

bool load_shadow_state(const std::string& path, ShadowState* out, std::string* error,
                       bool* missing) {
  try {
    std::string text;
    if (!plugin::read_json_text(path, &text, error, missing)) return false;
    json_error_t jerr;
    JsonPtr root(json_loadb(text.data(), text.size(), JSON_REJECT_DUPLICATES, &jerr));
    if (!root) {
      *error = path + ": not valid JSON at line " + std::to_string(jerr.line) + ", column " +
               std::to_string(jerr.column) + ": " + jerr.text;
      return false;
    }
    if (!json_is_object(root.get())) {
      *error = path + ": not an easypp-shadow state (the JSON is not an object)";
      return false;
    }
    ShadowState s;
    std::string why;
    if (!parse_state(root.get(), &s, &why)) {
      *error = path + ": " + why;
      return false;
    }
    *out = std::move(s);
    return true;
  } catch (const std::exception& e) {
    *error = path + ": cannot read: " + e.what();
  }
  return false;
}

}  // namespace easypp::shadow
