// Presets (spec section 4) as combinations of orthogonal knobs, and the one
// table of knobs every front end parses and renders settings with.
#include "easypp/config.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "easypp/parse.h"

namespace easypp {

namespace {

const char* yesno(bool b) { return b ? "yes" : "no"; }

std::string number_text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// One knob: how to apply a value (returns what was expected on failure,
// empty on success) and how to render the current value.
struct Knob {
  const char* name;
  std::string (*apply)(SchedulerConfig&, std::string_view);
  std::string (*value)(const SchedulerConfig&);
};

// Seconds >= 0, or "off" (stored as -1): the guards.
std::string apply_seconds(std::string_view v, Time* field) {
  long long n = 0;
  if (v == "off" || v == "never") *field = -1;
  else if (parse_int(v, 0, 10LL * 365 * 86400, &n)) *field = n;
  else return "seconds >= 0 or 'off'";
  return {};
}
std::string seconds_text(Time t) { return t < 0 ? "off" : std::to_string(t); }

template <class T>
std::string set_enum(std::optional<T> parsed, T* field, const char* expected) {
  if (!parsed) return expected;
  *field = *parsed;
  return {};
}

const Knob kKnobs[] = {
    {"plan",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "estimate") c.plan = PlanWith::Estimate;
       else if (v == "prediction") c.plan = PlanWith::Prediction;
       else if (v == "runtime") c.plan = PlanWith::Runtime;
       else return "estimate, prediction or runtime";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       switch (c.plan) {
         case PlanWith::Estimate: return "estimate";
         case PlanWith::Prediction: return "prediction";
         case PlanWith::Runtime: return "runtime";
       }
       return "?";
     }},
    {"estimate-factor",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       const std::string s(v);
       char* end = nullptr;
       const double f = std::strtod(s.c_str(), &end);
       if (s.empty() || *end != '\0' || !std::isfinite(f) || f < 0.01 || f > 1000)
         return "a number between 0.01 and 1000";
       c.estimate_factor = f;
       return {};
     },
     [](const SchedulerConfig& c) { return number_text(c.estimate_factor); }},
    {"correction",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_correction(v), &c.correction, "none, estimate, gradual or exponential");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.correction); }},
    {"backfill",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "none") c.policy.backfill = BackfillOrder::None;
       else if (v == "fcfs") c.policy.backfill = BackfillOrder::Queue;
       else if (v == "sjbf") c.policy.backfill = BackfillOrder::ShortestPrediction;
       else return "none, fcfs or sjbf";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       switch (c.policy.backfill) {
         case BackfillOrder::None: return "none";
         case BackfillOrder::Queue: return "fcfs";
         case BackfillOrder::ShortestPrediction: return "sjbf";
       }
       return "?";
     }},
    // The plugin's easypp_sjbf=yes|no: backfill=sjbf or backfill=fcfs.
    {"sjbf",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       bool b = false;
       if (!parse_bool(v, &b)) return "yes or no";
       c.policy.backfill = b ? BackfillOrder::ShortestPrediction : BackfillOrder::Queue;
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return yesno(c.policy.backfill == BackfillOrder::ShortestPrediction);
     }},
    {"queue-order",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "fcfs") c.queue_order = QueueOrder::Arrival;
       else if (v == "sjf") c.queue_order = QueueOrder::Estimate;
       else if (v == "creasy") c.queue_order = QueueOrder::Creasy;
       else return "fcfs, sjf or creasy";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       switch (c.queue_order) {
         case QueueOrder::Arrival: return "fcfs";
         case QueueOrder::Estimate: return "sjf";
         case QueueOrder::Creasy: return "creasy";
       }
       return "?";
     }},
    // CREASY's weight of criticality against seniority (creasy.h).
    {"creasy-alpha",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       const std::string s(v);
       char* end = nullptr;
       const double a = std::strtod(s.c_str(), &end);
       if (s.empty() || *end != '\0' || !std::isfinite(a) || a < 0 || a > 1e9)
         return "a number from 0 to 1e9";
       c.creasy.alpha = a;
       return {};
     },
     [](const SchedulerConfig& c) {
       char buf[32];  // enough digits that the value reads back the same
       std::snprintf(buf, sizeof buf, "%.15g", c.creasy.alpha);
       return std::string(buf);
     }},
    {"reservations",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (v == "all") c.policy.reservations = 0;
       else if (parse_int(v, 1, 1000000, &n)) c.policy.reservations = int(n);
       else return "a number >= 1 or 'all'";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.policy.reservations == 0 ? "all" : std::to_string(c.policy.reservations);
     }},
    {"safe",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       return parse_bool(v, &c.policy.safe) ? "" : "yes or no";
     },
     [](const SchedulerConfig& c) -> std::string { return yesno(c.policy.safe); }},
    {"safe-after",
     [](SchedulerConfig& c, std::string_view v) { return apply_seconds(v, &c.policy.safe_after); },
     [](const SchedulerConfig& c) { return seconds_text(c.policy.safe_after); }},
    {"safe-after-delay",
     [](SchedulerConfig& c, std::string_view v) { return apply_seconds(v, &c.policy.safe_after_delay); },
     [](const SchedulerConfig& c) { return seconds_text(c.policy.safe_after_delay); }},
    {"safe-after-xfactor",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "off") {
         c.policy.safe_after_xfactor = 0;
         return {};
       }
       const std::string s(v);
       char* end = nullptr;
       const double f = std::strtod(s.c_str(), &end);
       if (s.empty() || *end != '\0' || !std::isfinite(f) || f < 1 || f > 1e6)
         return "a number from 1 to 1e6 or 'off'";
       c.policy.safe_after_xfactor = f;
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.policy.safe_after_xfactor <= 0 ? "off" : number_text(c.policy.safe_after_xfactor);
     }},
    {"max-delay",
     [](SchedulerConfig& c, std::string_view v) { return apply_seconds(v, &c.policy.max_delay); },
     [](const SchedulerConfig& c) { return seconds_text(c.policy.max_delay); }},
    // Selective reservations (selective.h): off, one threshold (Sel), four
    // (Sel-D: SN/SW/LN/LW, '/' between them, since the plugin's
    // SchedulerParameters are separated by commas), or how to find them.
    {"selective",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       Selective& s = c.policy.selective;
       const char* want =
           "off, a threshold >= 1, four thresholds SN/SW/LN/LW, derive, derive-d, adaptive or "
           "adaptive-d";
       if (v == "off") {
         s.mode = Selective::Mode::Off;
         return {};
       }
       if (v == "derive" || v == "derive-d" || v == "adaptive" || v == "adaptive-d") {
         s.mode = v[0] == 'd' ? Selective::Mode::Derive : Selective::Mode::Adaptive;
         s.per_category = v.size() > 2 && v.substr(v.size() - 2) == "-d";
         s.threshold = {1, 1, 1, 1};
         return {};
       }
       std::array<double, 4> t = {0, 0, 0, 0};
       std::size_t n = 0;
       std::string_view rest = v;
       while (true) {
         const auto slash = rest.find('/');
         const std::string one(rest.substr(0, slash));
         char* end = nullptr;
         const double f = std::strtod(one.c_str(), &end);
         if (n == 4 || one.empty() || *end != '\0' || !std::isfinite(f) || f < 1 || f > 1e6)
           return want;
         t[n++] = f;
         if (slash == std::string_view::npos) break;
         rest = rest.substr(slash + 1);
       }
       if (n != 1 && n != 4) return want;
       s.mode = Selective::Mode::Given;
       s.per_category = n == 4;
       s.threshold = n == 4 ? t : std::array<double, 4>{t[0], t[0], t[0], t[0]};
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       const Selective& s = c.policy.selective;
       switch (s.mode) {
         case Selective::Mode::Off: return "off";
         case Selective::Mode::Adaptive: return s.per_category ? "adaptive-d" : "adaptive";
         case Selective::Mode::Derive: return s.per_category ? "derive-d" : "derive";
         case Selective::Mode::Given: break;
       }
       if (!s.per_category) return number_text(s.threshold[0]);
       return number_text(s.threshold[0]) + "/" + number_text(s.threshold[1]) + "/" +
              number_text(s.threshold[2]) + "/" + number_text(s.threshold[3]);
     }},
    {"sel-scale",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       const std::string t(v);
       char* end = nullptr;
       const double f = std::strtod(t.c_str(), &end);
       if (t.empty() || *end != '\0' || !std::isfinite(f) || f < 0.01 || f > 1000)
         return "a number between 0.01 and 1000";
       c.policy.selective.scale = f;
       return {};
     },
     [](const SchedulerConfig& c) { return number_text(c.policy.selective.scale); }},
    {"sel-derive",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v != "conservative" && v != "own") return "conservative or own";
       c.policy.selective.derive_own = v == "own";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.policy.selective.derive_own ? "own" : "conservative";
     }},
    {"sel-short",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (!parse_int(v, 1, 10LL * 365 * 86400, &n)) return "seconds >= 1";
       c.policy.selective.short_limit = n;
       return {};
     },
     [](const SchedulerConfig& c) { return std::to_string(c.policy.selective.short_limit); }},
    {"sel-narrow",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (!parse_int(v, 1, 100000000, &n)) return "a width >= 1";
       c.policy.selective.narrow_width = n;
       return {};
     },
     [](const SchedulerConfig& c) { return std::to_string(c.policy.selective.narrow_width); }},
    {"predictor",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_predictor_kind(v), &c.predictor.kind, "history, ewma or regression");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.predictor.kind); }},
    {"window",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (!parse_int(v, 1, PredictorConfig::kMaxWindow, &n)) return "1..30";
       c.predictor.window = int(n);
       return {};
     },
     [](const SchedulerConfig& c) { return std::to_string(c.predictor.window); }},
    {"metric",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_metric(v), &c.predictor.metric, "avg, median, min or max");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.predictor.metric); }},
    {"ewma-alpha",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       const std::string t(v);
       char* end = nullptr;
       const double a = std::strtod(t.c_str(), &end);
       if (t.empty() || *end != '\0' || !std::isfinite(a) || !(a > 0) || a > 1)
         return "a number in (0, 1]";
       c.predictor.ewma_alpha = a;
       return {};
     },
     [](const SchedulerConfig& c) {
       char buf[32];  // enough digits that the value reads back the same
       std::snprintf(buf, sizeof buf, "%.15g", c.predictor.ewma_alpha);
       return std::string(buf);
     }},
    {"history-type",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_history_type(v), &c.predictor.type, "all, immediate or extended");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.predictor.type); }},
    {"fullness",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_fullness(v), &c.predictor.fullness, "full or partial");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.predictor.fullness); }},
    {"fallback",
     [](SchedulerConfig& c, std::string_view v) {
       return set_enum(parse_fallback(v), &c.predictor.fallback, "estimate or relative");
     },
     [](const SchedulerConfig& c) -> std::string { return to_string(c.predictor.fallback); }},
    {"rounding",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "up") c.predictor.round_up = true;
       else if (v == "down") c.predictor.round_up = false;
       else return "up or down";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string { return c.predictor.round_up ? "up" : "down"; }},
    {"propagation",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       return parse_bool(v, &c.predictor.propagation) ? "" : "yes or no";
     },
     [](const SchedulerConfig& c) -> std::string { return yesno(c.predictor.propagation); }},
    {"prediction-floor",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (v == "off") c.predictor.floor = 0;
       else if (parse_int(v, 0, 10LL * 365 * 86400, &n)) c.predictor.floor = n;
       else return "seconds >= 0 or 'off'";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.predictor.floor <= 0 ? "off" : std::to_string(c.predictor.floor);
     }},
    {"learn",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       if (v == "all") c.predictor.learn_completed_only = false;
       else if (v == "completed") c.predictor.learn_completed_only = true;
       else return "all or completed";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.predictor.learn_completed_only ? "completed" : "all";
     }},
    {"learn-min-runtime",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (!parse_int(v, 0, 10LL * 365 * 86400, &n)) return "seconds >= 0";
       c.predictor.learn_min_runtime = n;
       return {};
     },
     [](const SchedulerConfig& c) { return std::to_string(c.predictor.learn_min_runtime); }},
    {"history-ttl",
     [](SchedulerConfig& c, std::string_view v) -> std::string {
       long long n = 0;
       if (v == "off" || v == "never") c.history_ttl = -1;
       else if (parse_int(v, 1, 100LL * 365 * 86400, &n)) c.history_ttl = n;
       else return "seconds >= 1 or 'off'";
       return {};
     },
     [](const SchedulerConfig& c) -> std::string {
       return c.history_ttl < 0 ? "off" : std::to_string(c.history_ttl);
     }},
};

const Knob* find_knob(std::string_view key) {
  for (const Knob& k : kKnobs)
    if (key == k.name) return &k;
  return nullptr;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"fcfs", "easy",     "easy-pred", "easy-pcor", "easy+", "easy-sjbf",
          "easy++", "perfect", "perfect++", "x2",       "sjf",   "conservative", "site",
          "sel",  "sel-d",    "sel++",     "sel-d++"};
}

std::optional<SchedulerConfig> preset(std::string_view name) {
  SchedulerConfig c;
  c.name = std::string(name);
  c.policy.reservations = 1;
  c.policy.safe = false;
  auto set = [&](PlanWith plan, CorrectionPolicy corr, BackfillOrder order) {
    c.plan = plan;
    c.correction = corr;
    c.policy.backfill = order;
  };
  using CP = CorrectionPolicy;
  using BO = BackfillOrder;
  if (name == "fcfs") set(PlanWith::Estimate, CP::None, BO::None);
  else if (name == "easy") set(PlanWith::Estimate, CP::None, BO::Queue);
  else if (name == "easy-pred") set(PlanWith::Prediction, CP::None, BO::Queue);
  else if (name == "easy-pcor") set(PlanWith::Estimate, CP::Estimate, BO::Queue);
  else if (name == "easy+") set(PlanWith::Prediction, CP::Estimate, BO::Queue);
  else if (name == "easy-sjbf") set(PlanWith::Estimate, CP::None, BO::ShortestPrediction);
  else if (name == "easy++") set(PlanWith::Prediction, CP::Estimate, BO::ShortestPrediction);
  else if (name == "perfect") set(PlanWith::Runtime, CP::None, BO::Queue);
  else if (name == "perfect++") set(PlanWith::Runtime, CP::None, BO::ShortestPrediction);
  else if (name == "x2") {
    set(PlanWith::Estimate, CP::None, BO::Queue);
    c.estimate_factor = 2.0;
  } else if (name == "sjf") {
    set(PlanWith::Estimate, CP::None, BO::Queue);
    c.queue_order = QueueOrder::Estimate;
  } else if (name == "conservative") {
    set(PlanWith::Estimate, CP::None, BO::Queue);
    c.policy.reservations = 0;
  } else if (name == "site") {
    // easy++ with what a production site needs (docs/guard.md): a guard
    // that bounds how far backfilling pushes a head back, a history that
    // tiny or failed jobs cannot talk down, and a bounded memory.
    set(PlanWith::Prediction, CP::Estimate, BO::ShortestPrediction);
    c.policy.max_delay = site::kMaxDelay;
    c.policy.safe_after = site::kSafeAfter;
    c.predictor.learn_completed_only = true;
    c.predictor.learn_min_runtime = site::kLearnMinRuntime;
    c.history_ttl = site::kHistoryTtl;
  } else if (name == "sel" || name == "sel-d") {
    // Srinivasan et al.'s Sel and Sel-D: EASY's planning (estimates, FCFS
    // backfill order) with reservations for starving jobs only, the
    // thresholds derived as in the paper (the harness runs conservative
    // first; the plugin needs them given).
    set(PlanWith::Estimate, CP::None, BO::Queue);
    c.policy.selective.mode = Selective::Mode::Derive;
    c.policy.selective.per_category = name == "sel-d";
    c.policy.selective.threshold = {1, 1, 1, 1};
  } else if (name == "sel++" || name == "sel-d++") {
    // The same with EASY++'s predictions, corrections and SJBF: the
    // expansion factor is judged with the prediction.
    set(PlanWith::Prediction, CP::Estimate, BO::ShortestPrediction);
    c.policy.selective.mode = Selective::Mode::Derive;
    c.policy.selective.per_category = name == "sel-d++";
    c.policy.selective.threshold = {1, 1, 1, 1};
  } else {
    return std::nullopt;
  }
  return c;
}

std::vector<std::string> knob_names() {
  std::vector<std::string> v;
  for (const Knob& k : kKnobs) v.push_back(k.name);
  return v;
}

std::string apply_knob(SchedulerConfig& c, std::string_view key, std::string_view v) {
  const Knob* k = find_knob(key);
  if (k == nullptr) return "unknown knob '" + std::string(key) + "'";
  SchedulerConfig changed = c;
  const std::string expected = k->apply(changed, v);
  if (!expected.empty())
    return "bad value '" + std::string(v) + "' for " + std::string(key) + " (expected " + expected +
           ")";
  c = std::move(changed);
  return {};
}

std::string knob_value(const SchedulerConfig& c, std::string_view key) {
  const Knob* k = find_knob(key);
  return k ? k->value(c) : std::string();
}

KnobList knob_values(const SchedulerConfig& c) {
  KnobList l;
  for (const Knob& k : kKnobs) l.emplace_back(k.name, k.value(c));
  return l;
}

std::optional<SchedulerConfig> parse_scheduler_spec(std::string_view spec,
                                                    const KnobList& base_knobs,
                                                    std::string* error) {
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  auto c = preset(name);
  if (!c) {
    std::string all;
    for (const auto& p : preset_names()) all += (all.empty() ? "" : ", ") + p;
    if (error) *error = "unknown scheduler '" + std::string(name) + "' (known: " + all + ")";
    return std::nullopt;
  }
  c->name = std::string(spec);
  for (const auto& [k, v] : base_knobs) {
    std::string e = apply_knob(*c, k, v);
    if (!e.empty()) {
      if (error) *error = e;
      return std::nullopt;
    }
  }
  std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  while (!rest.empty()) {
    const auto next = rest.find(':');
    const std::string_view kv = rest.substr(0, next);
    rest = next == std::string_view::npos ? "" : rest.substr(next + 1);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) {
      if (error)
        *error = "expected knob=value in scheduler '" + std::string(spec) + "', got '" +
                 std::string(kv) + "'";
      return std::nullopt;
    }
    std::string e = apply_knob(*c, kv.substr(0, eq), kv.substr(eq + 1));
    if (!e.empty()) {
      if (error) *error = "scheduler '" + std::string(spec) + "': " + e;
      return std::nullopt;
    }
  }
  std::string v = c->validate();
  if (!v.empty()) {
    if (error) *error = "scheduler '" + std::string(spec) + "': " + v;
    return std::nullopt;
  }
  return c;
}

std::string SchedulerConfig::validate() const {
  std::string p = predictor.validate();
  if (!p.empty()) return p;
  if (!(estimate_factor > 0)) return "estimate-factor must be positive";
  if (policy.reservations < 0) return "reservations must be >= 1 or all";
  if (policy.selective.on() && policy.any_guard())
    return "selective reservations do not combine with the guards (max-delay, safe-after, "
           "safe-after-delay, safe-after-xfactor)";
  return {};
}

std::string SchedulerConfig::describe() const {
  // The knobs that matter here: estimate-factor only when not 1, the guard
  // and the history's lifetime only when on, the predictor's knobs only when
  // planning with predictions; sjbf is backfill's other spelling.
  std::string d;
  for (const auto& [k, v] : knob_values(*this)) {
    if (k == "sjbf") continue;
    if (k == "creasy-alpha" && queue_order != QueueOrder::Creasy) continue;
    if (k == "estimate-factor" && estimate_factor == 1.0) continue;
    if ((k == "safe-after" || k == "safe-after-delay" || k == "safe-after-xfactor" ||
         k == "max-delay" || k == "history-ttl" || k == "prediction-floor") &&
        v == "off")
      continue;
    if (k == "selective" && v == "off") continue;
    if ((k == "sel-scale" || k == "sel-derive" || k == "sel-short" || k == "sel-narrow") &&
        !policy.selective.on())
      continue;
    if (k == "sel-scale" && policy.selective.mode != Selective::Mode::Adaptive) continue;
    if (k == "sel-derive" && policy.selective.mode != Selective::Mode::Derive) continue;
    if (k == "reservations" && policy.selective.on()) continue;
    if ((k == "rounding" && v == "up") ||
        (k == "learn" && v == "all") || (k == "learn-min-runtime" && v == "0"))
      continue;
    const bool predictor_knob = k == "predictor" || k == "window" || k == "metric" ||
                                k == "ewma-alpha" || k == "history-type" || k == "fullness" ||
                                k == "fallback" || k == "propagation" || k == "rounding" ||
                                k == "prediction-floor" || k == "learn" ||
                                k == "learn-min-runtime";
    if (predictor_knob && plan != PlanWith::Prediction) continue;
    // Each predictor's own parameters only (the paper's family: no
    // "predictor=" at all, so the default reads as it always has).
    const PredictorKind kind = predictor.kind;
    if (k == "predictor" && kind == PredictorKind::History) continue;
    if (k == "metric" && kind != PredictorKind::History) continue;
    if (k == "ewma-alpha" && kind != PredictorKind::Ewma) continue;
    d += (d.empty() ? "" : " ") + k + "=" + v;
  }
  return d;
}

}  // namespace easypp
