#include "plugin_config.h"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace easypp::plugin {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whole-string integer in [lo, hi]; false if malformed or out of range.
bool parse_int(std::string_view v, long lo, long hi, long* out) {
  if (v.empty() || v.size() > 20) return false;
  const std::string s(v);
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

bool parse_onoff(std::string_view v, bool* out) {
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

// Integer settings: key, field, range, unit for messages.
struct IntKey {
  const char* key;
  int PluginConfig::*field;
  long lo, hi;
  const char* unit;
};
const IntKey kIntKeys[] = {
    {"easypp_interval", &PluginConfig::interval, PluginConfig::kMinInterval,
     PluginConfig::kMaxInterval, "seconds"},
    {"easypp_max_job_test", &PluginConfig::max_job_test, 1, 1000000, "jobs"},
    {"easypp_max_time", &PluginConfig::max_time, 1, 3600, "seconds"},
    {"easypp_yield_interval", &PluginConfig::yield_interval_usec, 1000, 10000000,
     "microseconds"},
    {"easypp_yield_sleep", &PluginConfig::yield_sleep_usec, 1000, 10000000, "microseconds"},
};

// Scheduling knobs handed to the core's apply_knob(): easypp key -> knob.
struct KnobKey {
  const char* key;
  const char* knob;
};
const KnobKey kKnobKeys[] = {
    {"easypp_window", "window"},         {"easypp_metric", "metric"},
    {"easypp_history", "history-type"},  {"easypp_fullness", "fullness"},
    {"easypp_fallback", "fallback"},     {"easypp_propagation", "propagation"},
    {"easypp_correction", "correction"}, {"easypp_safe", "safe"},
    {"easypp_plan", "plan"},             {"easypp_safe_after", "safe-after"},
};

const char* yesno(bool b) { return b ? "yes" : "no"; }

// The current value of a knob, as apply_knob() accepts it (for resetting a
// key to its default after a bad value).
std::string knob_value(const SchedulerConfig& c, std::string_view knob) {
  if (knob == "window") return std::to_string(c.predictor.window);
  if (knob == "metric") return to_string(c.predictor.metric);
  if (knob == "history-type") return to_string(c.predictor.type);
  if (knob == "fullness") return to_string(c.predictor.fullness);
  if (knob == "fallback") return to_string(c.predictor.fallback);
  if (knob == "propagation") return yesno(c.predictor.propagation);
  if (knob == "correction") return to_string(c.correction);
  if (knob == "safe") return yesno(c.policy.safe);
  if (knob == "plan") return c.plan == PlanWith::Estimate ? "estimate" : "prediction";
  if (knob == "safe-after")
    return c.policy.safe_after < 0 ? "off" : std::to_string(c.policy.safe_after);
  return {};
}

}  // namespace

SchedulerConfig PluginConfig::default_scheduler() {
  // preset() knows "easy++"; the fallback keeps the struct defaults (which
  // are easy++ too) should the name ever change.
  std::optional<SchedulerConfig> c = preset("easy++");
  return c ? *c : SchedulerConfig();
}

std::string PluginConfig::describe() const {
  const SchedulerConfig& s = sched;
  std::string d = "interval=" + std::to_string(interval) + "s";
  d += " plan=" + knob_value(s, "plan");
  d += " window=" + std::to_string(s.predictor.window);
  d += " metric=" + knob_value(s, "metric");
  d += " history=" + knob_value(s, "history-type");
  d += " fullness=" + knob_value(s, "fullness");
  d += " fallback=" + knob_value(s, "fallback");
  d += " propagation=" + knob_value(s, "propagation");
  d += " correction=" + knob_value(s, "correction");
  d += std::string(" sjbf=") + yesno(s.policy.backfill == BackfillOrder::ShortestPrediction);
  d += " safe=" + knob_value(s, "safe");
  d += " safe_after=" + knob_value(s, "safe-after");
  d += " max_job_test=" + std::to_string(max_job_test);
  d += " max_time=" + std::to_string(max_time) + "s";
  d += " yield_interval=" + std::to_string(yield_interval_usec) + "us";
  d += " yield_sleep=" + std::to_string(yield_sleep_usec) + "us";
  d += std::string(" state=") + (state ? "on" : "off");
  return d;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> k;
  for (const IntKey& i : kIntKeys) k.push_back(i.key);
  for (const KnobKey& i : kKnobKeys) k.push_back(i.key);
  k.push_back("easypp_sjbf");
  k.push_back("easypp_state");
  return k;
}

const std::vector<std::string>& slurm_keys() {
  // grep -rn 'xstrcasestr\|strstr' over sched_params in Slurm 22.05.8's src/
  // (slurmctld, sched/backfill, sched/builtin, select/*, preempt/*, power/*).
  static const std::vector<std::string> keys = {
      "allow_zero_lic", "assoc_limit_stop", "balance_interval=", "batch_sched_delay=",
      "bb_array_stage_cnt=", "bf_busy_nodes", "bf_continue", "bf_hetjob_immediate",
      "bf_hetjob_prio=", "bf_interval=", "bf_job_part_count_reserve=", "bf_licenses",
      "bf_max_job_array_resv=", "bf_max_job_assoc=", "bf_max_job_part=",
      "bf_max_job_start=", "bf_max_job_test=", "bf_max_job_user=", "bf_max_job_user_part=",
      "bf_max_time=", "bf_min_age_reserve=", "bf_min_prio_reserve=", "bf_node_space_size=",
      "bf_one_resv_per_job", "bf_resolution=", "bf_running_job_reserve", "bf_window=",
      "bf_window_linear=", "bf_yield_interval=", "bf_yield_sleep=", "build_queue_timeout=",
      "cap_watts=", "capmc_path=", "correspond_after_task_cnt=", "decrease_rate=",
      "default_queue_depth=", "defer", "delay_boot=", "disable_hetero_steps",
      "disable_hetjob_steps", "disable_job_shrink", "enable_user_top", "get_timeout=",
      "Ignore_NUMA", "increase_rate=", "job_level", "job_no_level", "lower_threshold=",
      "max_array_tasks=", "max_depend_depth=", "max_job_bf=", "max_rpc_cnt=",
      "max_rpc_count=", "max_sched_time=", "max_script_size=", "max_switch_wait=",
      "nohold_on_prolog_fail", "pack_serial_at_end", "partition_job_depth=",
      "preempt_reorder_count=", "preempt_strict_order", "preempt_youngest_first",
      "recent_job=", "salloc_wait_nodes", "sbatch_wait_nodes", "sched_interval=",
      "sched_max_job_start=", "sched_min_interval=", "set_timeout=", "set_watts=",
      "spec_cores_first", "step_retry_count=", "step_retry_time=", "upper_threshold=",
      "whole_hetjob", "whole_pack",
      // sched/builtin's own key; harmless under sched/easypp (builtin is not
      // loaded), but easypp_interval/easypp_yield_interval contain it, so the
      // check allows exactly this one.
      "interval=",
  };
  return keys;
}

ParsedConfig parse_scheduler_parameters(const char* params) {
  ParsedConfig r;
  if (params == nullptr) return r;
  const PluginConfig defaults;
  std::string_view rest(params);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.rfind("easypp_", 0) != 0) continue;  // Slurm's own keys

    const std::size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));
    bool known = false;

    for (const IntKey& k : kIntKeys) {
      if (key != k.key) continue;
      known = true;
      long v = 0;
      if (parse_int(value, k.lo, k.hi, &v)) {
        r.config.*(k.field) = int(v);
      } else {
        r.config.*(k.field) = defaults.*(k.field);
        r.warnings.push_back("invalid " + std::string(k.key) + "='" + std::string(value) +
                             "' (want " + std::to_string(k.lo) + ".." + std::to_string(k.hi) +
                             " " + k.unit + "), using " + std::to_string(defaults.*(k.field)));
      }
    }
    for (const KnobKey& k : kKnobKeys) {
      if (key != k.key) continue;
      known = true;
      // "plan=runtime" exists in the simulator only (it needs the future).
      std::string err;
      if (std::string_view(k.knob) == "plan" && value == "runtime")
        err = "bad value 'runtime' for plan (expected estimate or prediction)";
      else
        err = apply_knob(r.config.sched, k.knob, value);
      if (!err.empty()) {
        const std::string def = knob_value(defaults.sched, k.knob);
        apply_knob(r.config.sched, k.knob, def);
        r.warnings.push_back("invalid " + std::string(k.key) + "='" + std::string(value) +
                             "': " + err + ", using " + def);
      }
    }
    if (key == "easypp_sjbf") {
      known = true;
      bool b = false;
      if (parse_onoff(value, &b)) {
        r.config.sched.policy.backfill =
            b ? BackfillOrder::ShortestPrediction : BackfillOrder::Queue;
      } else {
        r.config.sched.policy.backfill = defaults.sched.policy.backfill;
        r.warnings.push_back("invalid easypp_sjbf='" + std::string(value) +
                             "' (want yes or no), using yes");
      }
    } else if (key == "easypp_state") {
      known = true;
      bool b = false;
      if (parse_onoff(value, &b)) {
        r.config.state = b;
      } else {
        r.config.state = defaults.state;
        r.warnings.push_back("invalid easypp_state='" + std::string(value) +
                             "' (want on or off), using on");
      }
    }
    if (!known)
      r.warnings.push_back("unknown SchedulerParameters key '" + std::string(key) + "', ignored");
  }
  return r;
}

}  // namespace easypp::plugin
