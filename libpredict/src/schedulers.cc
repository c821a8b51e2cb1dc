// Presets (spec section 4) as combinations of orthogonal knobs.
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "easypp/policy.h"

namespace easypp {

namespace {

const char* plan_name(PlanWith p) {
  switch (p) {
    case PlanWith::Estimate: return "estimate";
    case PlanWith::Prediction: return "prediction";
    case PlanWith::Runtime: return "runtime";
  }
  return "?";
}

const char* order_name(BackfillOrder o) {
  switch (o) {
    case BackfillOrder::None: return "none";
    case BackfillOrder::Queue: return "fcfs";
    case BackfillOrder::ShortestPrediction: return "sjbf";
  }
  return "?";
}

bool parse_int(std::string_view v, long long lo, long long hi, long long* out) {
  if (v.empty() || v.size() > 18) return false;
  std::string s(v);
  char* end = nullptr;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

bool parse_bool(std::string_view v, bool* out) {
  if (v == "yes" || v == "on" || v == "true" || v == "1") {
    *out = true;
    return true;
  }
  if (v == "no" || v == "off" || v == "false" || v == "0") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"fcfs", "easy",     "easy-pred", "easy-pcor", "easy+", "easy-sjbf",
          "easy++", "perfect", "perfect++", "x2",       "sjf",   "conservative"};
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
  } else {
    return std::nullopt;
  }
  return c;
}

std::vector<std::string> knob_names() {
  return {"plan",   "estimate-factor", "correction", "backfill", "queue-order",
          "reservations", "safe", "safe-after", "window", "metric", "history-type",
          "fullness", "fallback", "propagation"};
}

std::string apply_knob(SchedulerConfig& c, std::string_view key, std::string_view v) {
  auto bad = [&](const char* expected) {
    return "bad value '" + std::string(v) + "' for " + std::string(key) + " (expected " +
           expected + ")";
  };
  long long n = 0;
  bool b = false;
  if (key == "plan") {
    if (v == "estimate") c.plan = PlanWith::Estimate;
    else if (v == "prediction") c.plan = PlanWith::Prediction;
    else if (v == "runtime") c.plan = PlanWith::Runtime;
    else return bad("estimate, prediction or runtime");
  } else if (key == "estimate-factor") {
    std::string s(v);
    char* end = nullptr;
    const double f = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(f) || f < 0.01 || f > 1000)
      return bad("a number between 0.01 and 1000");
    c.estimate_factor = f;
  } else if (key == "correction") {
    auto p = parse_correction(v);
    if (!p) return bad("none, estimate, gradual or exponential");
    c.correction = *p;
  } else if (key == "backfill") {
    if (v == "none") c.policy.backfill = BackfillOrder::None;
    else if (v == "fcfs") c.policy.backfill = BackfillOrder::Queue;
    else if (v == "sjbf") c.policy.backfill = BackfillOrder::ShortestPrediction;
    else return bad("none, fcfs or sjbf");
  } else if (key == "queue-order") {
    if (v == "fcfs") c.queue_order = QueueOrder::Arrival;
    else if (v == "sjf") c.queue_order = QueueOrder::Estimate;
    else return bad("fcfs or sjf");
  } else if (key == "reservations") {
    if (v == "all") c.policy.reservations = 0;
    else if (parse_int(v, 1, 1000000, &n)) c.policy.reservations = int(n);
    else return bad("a number >= 1 or 'all'");
  } else if (key == "safe") {
    if (!parse_bool(v, &b)) return bad("yes or no");
    c.policy.safe = b;
  } else if (key == "safe-after") {
    if (v == "off" || v == "never") c.policy.safe_after = -1;
    else if (parse_int(v, 0, 10LL * 365 * 86400, &n)) c.policy.safe_after = n;
    else return bad("seconds >= 0 or 'off'");
  } else if (key == "window") {
    if (!parse_int(v, 1, PredictorConfig::kMaxWindow, &n)) return bad("1..30");
    c.predictor.window = int(n);
  } else if (key == "metric") {
    auto m = parse_metric(v);
    if (!m) return bad("avg, median, min or max");
    c.predictor.metric = *m;
  } else if (key == "history-type") {
    auto t = parse_history_type(v);
    if (!t) return bad("all, immediate or extended");
    c.predictor.type = *t;
  } else if (key == "fullness") {
    auto f = parse_fullness(v);
    if (!f) return bad("full or partial");
    c.predictor.fullness = *f;
  } else if (key == "fallback") {
    auto f = parse_fallback(v);
    if (!f) return bad("estimate or relative");
    c.predictor.fallback = *f;
  } else if (key == "propagation") {
    if (!parse_bool(v, &b)) return bad("yes or no");
    c.predictor.propagation = b;
  } else {
    return "unknown knob '" + std::string(key) + "'";
  }
  return {};
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
  return {};
}

std::string SchedulerConfig::describe() const {
  std::ostringstream o;
  o << "plan=" << plan_name(plan);
  if (estimate_factor != 1.0) o << " estimate-factor=" << estimate_factor;
  o << " correction=" << to_string(correction) << " backfill=" << order_name(policy.backfill)
    << " queue-order=" << (queue_order == QueueOrder::Arrival ? "fcfs" : "sjf")
    << " reservations=";
  if (policy.reservations == 0) o << "all";
  else o << policy.reservations;
  o << " safe=" << (policy.safe ? "yes" : "no");
  if (policy.safe_after >= 0) o << " safe-after=" << policy.safe_after;
  if (plan == PlanWith::Prediction)
    o << " window=" << predictor.window << " metric=" << to_string(predictor.metric)
      << " history-type=" << to_string(predictor.type)
      << " fullness=" << to_string(predictor.fullness)
      << " fallback=" << to_string(predictor.fallback)
      << " propagation=" << (predictor.propagation ? "yes" : "no");
  return o.str();
}

}  // namespace easypp
