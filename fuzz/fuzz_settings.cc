// Fuzz target: the plugin's settings parser (plugin/plugin_config.cc),
// parse_scheduler_parameters() on a SchedulerParameters string.
//
// The input is the string (cut at its first NUL, as slurm.conf gives a C
// string). Checked:
//  - no exception escapes (the plugin calls it from slurmctld's C code);
//  - every setting ends within its documented range, the scheduler
//    configuration is valid and plans with estimates or predictions (never
//    the future runtimes);
//  - the effective settings, as settings() renders them (what the status
//    file carries), parse without a warning to the same settings, both as a
//    SchedulerParameters string and through apply_settings() (easypp-ctl);
//  - keys are matched case-insensitively: the input with every key in lower
//    case gives the same settings.
#include <cctype>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "plugin_config.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

// settings() as a SchedulerParameters string.
std::string as_parameters(const PluginConfig& c) {
  std::string p;
  for (const auto& kv : c.settings()) {
    if (!p.empty()) p += ',';
    p += kv.first + "=" + kv.second;
  }
  return p;
}

bool same(const PluginConfig& a, const PluginConfig& b) {
  return a.describe() == b.describe() && a.sched.describe() == b.sched.describe();
}

void check_ranges(const PluginConfig& c) {
  FUZZ_CHECK(c.interval >= PluginConfig::kMinInterval && c.interval <= PluginConfig::kMaxInterval);
  FUZZ_CHECK(c.max_job_test >= 1 && c.max_job_test <= 1000000);
  FUZZ_CHECK(c.max_time >= 1 && c.max_time <= 3600);
  FUZZ_CHECK(c.yield_interval_usec >= 1 && c.yield_interval_usec <= 10000000);  // bf_yield_*'s range
  FUZZ_CHECK(c.yield_sleep_usec >= 1 && c.yield_sleep_usec <= 10000000);
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
  const ParsedConfig r = apply_settings(p.config.settings());
  FUZZ_CHECK(r.warnings.empty());
  FUZZ_CHECK(same(p.config, r.config));

  // Every key (the part of each comma-separated item before '=') in lower case.
  std::string lower = text;
  bool in_key = true;
  for (char& ch : lower) {
    if (ch == ',') in_key = true;
    else if (ch == '=') in_key = false;
    else if (in_key) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  }
  FUZZ_CHECK(same(p.config, parse_scheduler_parameters(lower.c_str()).config));
  return 0;
}
