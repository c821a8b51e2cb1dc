// Fuzz target: the plugin's settings parser (plugin/plugin_config.cc),
// parse_scheduler_parameters() on a SchedulerParameters string.
//
// The input is the string (cut at its first NUL, as slurm.conf gives a C
// string). Checked:
//  - no exception escapes (the plugin calls it from slurmctld's C code);
//  - every setting ends within its documented range, the scheduler
//    configuration is valid and plans with estimates or predictions (never
//    the future runtimes);
//  - the effective settings, written back as easypp_* keys, parse without a
//    warning to the same settings (every value the parser can end with is
//    one it accepts).
// With -DEASYPP_FUZZ_CASE_INSENSITIVE_KEYS, also: keys differing only in
// case give the same settings (issue 10: Slurm's own keys are matched
// case-insensitively; today's parser ignores EASYPP_INTERVAL=5 silently).
#include <cctype>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "plugin_config.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

const char* yes_no(bool b) { return b ? "yes" : "no"; }

// The effective settings as a SchedulerParameters string of easypp_* keys.
std::string as_parameters(const PluginConfig& c) {
  const SchedulerConfig& s = c.sched;
  std::string p;
  p += "easypp_interval=" + std::to_string(c.interval);
  p += ",easypp_max_job_test=" + std::to_string(c.max_job_test);
  p += ",easypp_max_time=" + std::to_string(c.max_time);
  p += ",easypp_yield_interval=" + std::to_string(c.yield_interval_usec);
  p += ",easypp_yield_sleep=" + std::to_string(c.yield_sleep_usec);
  p += std::string(",easypp_state=") + (c.state ? "on" : "off");
  p += std::string(",easypp_plan=") + (s.plan == PlanWith::Estimate ? "estimate" : "prediction");
  p += ",easypp_window=" + std::to_string(s.predictor.window);
  p += std::string(",easypp_metric=") + to_string(s.predictor.metric);
  p += std::string(",easypp_history=") + to_string(s.predictor.type);
  p += std::string(",easypp_fullness=") + to_string(s.predictor.fullness);
  p += std::string(",easypp_fallback=") + to_string(s.predictor.fallback);
  p += std::string(",easypp_propagation=") + yes_no(s.predictor.propagation);
  p += std::string(",easypp_correction=") + to_string(s.correction);
  p += std::string(",easypp_sjbf=") + yes_no(s.policy.backfill == BackfillOrder::ShortestPrediction);
  p += std::string(",easypp_safe=") + yes_no(s.policy.safe);
  p += ",easypp_safe_after=" +
       (s.policy.safe_after < 0 ? std::string("off") : std::to_string(s.policy.safe_after));
  return p;
}

bool same(const PluginConfig& a, const PluginConfig& b) {
  return a.describe() == b.describe() && a.sched.describe() == b.sched.describe();
}

void check_ranges(const PluginConfig& c) {
  FUZZ_CHECK(c.interval >= PluginConfig::kMinInterval && c.interval <= PluginConfig::kMaxInterval);
  FUZZ_CHECK(c.max_job_test >= 1 && c.max_job_test <= 1000000);
  FUZZ_CHECK(c.max_time >= 1 && c.max_time <= 3600);
  FUZZ_CHECK(c.yield_interval_usec >= 1000 && c.yield_interval_usec <= 10000000);
  FUZZ_CHECK(c.yield_sleep_usec >= 1000 && c.yield_sleep_usec <= 10000000);
  FUZZ_CHECK(c.sched.validate().empty());
  FUZZ_CHECK(c.sched.plan == PlanWith::Estimate || c.sched.plan == PlanWith::Prediction);
  FUZZ_CHECK(c.describe().rfind("interval=", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  text = text.c_str();  // a C string ends at the first NUL

  const ParsedConfig p = parse_scheduler_parameters(text.c_str());
  check_ranges(p.config);
  for (const std::string& w : p.warnings) FUZZ_CHECK(!w.empty());

  const std::string again = as_parameters(p.config);
  const ParsedConfig q = parse_scheduler_parameters(again.c_str());
  FUZZ_CHECK(q.warnings.empty());
  FUZZ_CHECK(same(p.config, q.config));

#ifdef EASYPP_FUZZ_CASE_INSENSITIVE_KEYS
  // Every key (the part of each comma-separated item before '=') in lower case.
  std::string lower = text;
  bool in_key = true;
  for (char& ch : lower) {
    if (ch == ',') in_key = true;
    else if (ch == '=') in_key = false;
    else if (in_key) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  }
  FUZZ_CHECK(same(p.config, parse_scheduler_parameters(lower.c_str()).config));
#endif
  return 0;
}
