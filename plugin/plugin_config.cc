#include "plugin_config.h"

#include <cstdio>
#include <set>
#include <string>

#include "easypp/parse.h"

namespace easypp::plugin {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One setting: its SchedulerParameters key, how to apply a value (returns
// what was expected on failure, empty on success), how to render the
// current value, and the unit the log line shows after it.
struct Setting {
  const char* key;
  std::string (*apply)(PluginConfig&, std::string_view);
  std::string (*render)(const PluginConfig&);
  const char* unit;
};

// The plugin's integer settings, by member.
template <int PluginConfig::*Field, long long Lo, long long Hi>
std::string apply_int(PluginConfig& c, std::string_view v) {
  long long x = 0;
  if (!parse_int(v, Lo, Hi, &x)) return std::to_string(Lo) + ".." + std::to_string(Hi);
  c.*Field = int(x);
  return {};
}
template <int PluginConfig::*Field>
std::string render_int(const PluginConfig& c) {
  return std::to_string(c.*Field);
}

// A scheduling knob of the core (config.h): apply_knob()'s own message.
template <const char* Knob>
std::string apply_core(PluginConfig& c, std::string_view v) {
  // plan=runtime exists in the simulator only (it needs the future).
  if (std::string_view(Knob) == "plan" && v == "runtime") return "estimate or prediction";
  // Thresholds derived from a conservative replay exist in the harness only
  // (the plugin takes them given); adaptive ones follow the slowdowns of
  // the jobs the plugin saw finish (agent.cc, kept in the state file).
  if (std::string_view(Knob) == "selective" && (v == "derive" || v == "derive-d"))
    return "off, a threshold >= 1, four thresholds SN/SW/LN/LW (derive them with easypp-sim), "
           "adaptive or adaptive-d";
  const std::string err = apply_knob(c.sched, Knob, v);
  if (err.empty()) return {};
  const std::size_t e = err.find("(expected ");
  return e == std::string::npos ? err : err.substr(e + 10, err.size() - e - 11);
}
template <const char* Knob>
std::string render_core(const PluginConfig& c) {
  return knob_value(c.sched, Knob);
}

// easypp_file_mode: octal permission bits, owner read-write, group and others
// at most read (0600, 0640, 0604, 0644).
std::string apply_file_mode(PluginConfig& c, std::string_view v) {
  const char* want = "0600, 0640 or 0644 (octal; the owner reads and writes, others may read)";
  if (v.empty() || v.size() > 4) return want;
  int m = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '7') return want;
    m = m * 8 + (ch - '0');
  }
  if ((m & 0600) != 0600 || (m & ~0644) != 0) return want;
  c.file_mode = m;
  return {};
}
std::string render_file_mode(const PluginConfig& c) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", unsigned(c.file_mode) & 0777u);
  return b;
}

constexpr char kPlan[] = "plan", kPredictor[] = "predictor", kWindow[] = "window",
               kMetric[] = "metric", kEwmaAlpha[] = "ewma-alpha",
               kHistory[] = "history-type", kFullness[] = "fullness", kFallback[] = "fallback",
               kRounding[] = "rounding", kPropagation[] = "propagation",
               kFloor[] = "prediction-floor", kLearn[] = "learn",
               kLearnMin[] = "learn-min-runtime", kCorrection[] = "correction", kSjbf[] = "sjbf",
               kSafe[] = "safe", kSafeAfter[] = "safe-after", kSafeAfterDelay[] = "safe-after-delay",
               kSafeAfterXfactor[] = "safe-after-xfactor", kMaxDelay[] = "max-delay",
               kTtl[] = "history-ttl", kSelective[] = "selective", kSelShort[] = "sel-short", kSelScale[] = "sel-scale",
               kSelNarrow[] = "sel-narrow";

// In the order describe() and settings() show them (the interval first).
const Setting kSettings[] = {
    {"easypp_interval",
     apply_int<&PluginConfig::interval, PluginConfig::kMinInterval, PluginConfig::kMaxInterval>,
     render_int<&PluginConfig::interval>, "s"},
    {"easypp_plan", apply_core<kPlan>, render_core<kPlan>, ""},
    {"easypp_window", apply_core<kWindow>, render_core<kWindow>, ""},
    {"easypp_metric", apply_core<kMetric>, render_core<kMetric>, ""},
    {"easypp_predictor", apply_core<kPredictor>, render_core<kPredictor>, ""},
    {"easypp_ewma_alpha", apply_core<kEwmaAlpha>, render_core<kEwmaAlpha>, ""},
    {"easypp_history", apply_core<kHistory>, render_core<kHistory>, ""},
    {"easypp_fullness", apply_core<kFullness>, render_core<kFullness>, ""},
    {"easypp_fallback", apply_core<kFallback>, render_core<kFallback>, ""},
    {"easypp_rounding", apply_core<kRounding>, render_core<kRounding>, ""},
    {"easypp_propagation", apply_core<kPropagation>, render_core<kPropagation>, ""},
    {"easypp_prediction_floor", apply_core<kFloor>, render_core<kFloor>, ""},
    {"easypp_learn", apply_core<kLearn>, render_core<kLearn>, ""},
    {"easypp_learn_min_runtime", apply_core<kLearnMin>, render_core<kLearnMin>, ""},
    {"easypp_correction", apply_core<kCorrection>, render_core<kCorrection>, ""},
    {"easypp_sjbf", apply_core<kSjbf>, render_core<kSjbf>, ""},
    {"easypp_safe", apply_core<kSafe>, render_core<kSafe>, ""},
    {"easypp_safe_after", apply_core<kSafeAfter>, render_core<kSafeAfter>, ""},
    {"easypp_safe_after_delay", apply_core<kSafeAfterDelay>, render_core<kSafeAfterDelay>, ""},
    {"easypp_safe_after_xfactor", apply_core<kSafeAfterXfactor>, render_core<kSafeAfterXfactor>,
     ""},
    {"easypp_max_delay", apply_core<kMaxDelay>, render_core<kMaxDelay>, ""},
    {"easypp_history_ttl", apply_core<kTtl>, render_core<kTtl>, ""},
    {"easypp_selective", apply_core<kSelective>, render_core<kSelective>, ""},
    {"easypp_sel_scale", apply_core<kSelScale>, render_core<kSelScale>, ""},
    {"easypp_sel_short", apply_core<kSelShort>, render_core<kSelShort>, "s"},
    {"easypp_sel_narrow", apply_core<kSelNarrow>, render_core<kSelNarrow>, ""},
    {"easypp_max_job_test", apply_int<&PluginConfig::max_job_test, 1, 1000000>,
     render_int<&PluginConfig::max_job_test>, ""},
    {"easypp_max_time", apply_int<&PluginConfig::max_time, 1, 3600>,
     render_int<&PluginConfig::max_time>, "s"},
    {"easypp_max_job_user", apply_int<&PluginConfig::max_job_user, 0, 1000000>,
     render_int<&PluginConfig::max_job_user>, ""},
    {"easypp_max_job_part", apply_int<&PluginConfig::max_job_part, 0, 1000000>,
     render_int<&PluginConfig::max_job_part>, ""},
    {"easypp_max_job_assoc", apply_int<&PluginConfig::max_job_assoc, 0, 1000000>,
     render_int<&PluginConfig::max_job_assoc>, ""},
    {"easypp_max_job_user_part", apply_int<&PluginConfig::max_job_user_part, 0, 1000000>,
     render_int<&PluginConfig::max_job_user_part>, ""},
    {"easypp_publish_starts", apply_int<&PluginConfig::publish_starts, 0, 100000>,
     render_int<&PluginConfig::publish_starts>, ""},
    {"easypp_yield_interval", apply_int<&PluginConfig::yield_interval_usec, 1, 10000000>,
     render_int<&PluginConfig::yield_interval_usec>, "us"},
    {"easypp_yield_sleep", apply_int<&PluginConfig::yield_sleep_usec, 1, 10000000>,
     render_int<&PluginConfig::yield_sleep_usec>, "us"},
    {"easypp_state",
     [](PluginConfig& c, std::string_view v) -> std::string {
       return parse_bool(v, &c.state) ? "" : "on or off";
     },
     [](const PluginConfig& c) -> std::string { return c.state ? "on" : "off"; }, ""},
    {"easypp_file_mode", apply_file_mode, render_file_mode, ""},
};

const Setting* find_setting(std::string_view key) {
  const std::string k = ascii_lower(key);
  for (const Setting& s : kSettings)
    if (k == s.key) return &s;
  return nullptr;
}

// Apply one key=value: a bad value sets the key back to its default.
void apply_one(std::string_view key, std::string_view value, ParsedConfig* r) {
  const Setting* s = find_setting(key);
  if (s == nullptr) {
    r->warnings.push_back("unknown SchedulerParameters key '" + std::string(key) + "', ignored");
    return;
  }
  const std::string expected = s->apply(r->config, value);
  if (expected.empty()) return;
  static const PluginConfig defaults;
  const std::string def = s->render(defaults);
  s->apply(r->config, def);
  r->warnings.push_back("invalid " + std::string(s->key) + "='" + std::string(value) +
                        "' (want " + expected + "), using " + def);
}

// Selective reservations replace the guards (SchedulerConfig::validate()
// refuses both): with easypp_selective on, the guards of the default (the
// site preset's max-delay and safe-after) are turned off without a word, and
// guards the admin set are turned off with a warning.
bool is_guard_key(std::string_view key) {
  const std::string k = ascii_lower(key);
  return k == "easypp_safe_after" || k == "easypp_safe_after_delay" ||
         k == "easypp_safe_after_xfactor" || k == "easypp_max_delay";
}

void settle_selective(ParsedConfig* r, bool guard_given) {
  PolicyConfig& p = r->config.sched.policy;
  if (!p.selective.on() || !p.any_guard()) return;
  if (guard_given)
    r->warnings.push_back(
        "easypp_selective is on: the guards (easypp_max_delay, easypp_safe_after...) are "
        "turned off; a starving job gets a reservation instead");
  for (const char* k : {"safe-after", "safe-after-delay", "safe-after-xfactor", "max-delay"})
    apply_knob(r->config.sched, k, "off");
}

}  // namespace

SchedulerConfig PluginConfig::default_scheduler() {
  // Exactly the preset (the unit tests compare them knob by knob), so that
  // easypp-sim --scheduler site replays what the plugin does by default.
  SchedulerConfig s = *preset("site");
  s.name = "sched/easypp";
  return s;
}

std::string PluginConfig::describe() const {
  std::string d;
  for (const Setting& s : kSettings) {
    d += d.empty() ? "" : " ";
    d += std::string(s.key + 7) + "=" + s.render(*this) + s.unit;
  }
  return d;
}

std::vector<std::pair<std::string, std::string>> PluginConfig::settings() const {
  std::vector<std::pair<std::string, std::string>> v;
  for (const Setting& s : kSettings) v.emplace_back(s.key, s.render(*this));
  return v;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> k;
  for (const Setting& s : kSettings) k.push_back(s.key);
  return k;
}

const std::vector<std::string>& slurm_keys() {
  // grep -rn 'xstrcasestr\|strstr' over sched_params in Slurm 22.05.8's and
  // 24.11.5's src/ (slurmctld, sched/backfill, sched/builtin, select/*,
  // preempt/*, power/*), the union of both.
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
      // 24.11's own
      "bf_allow_magnetic_slot", "bf_topopt_enable", "bf_topopt_iterations=", "defer_batch",
      "extra_constraints", "max_submit_line_size=", "time_min_as_soft_limit",
      // 25.05's sched/backfill (backfill_keys())
      "bf_yield_rpc_cnt=", "bf_yield_rpc_count=",
      // sched/builtin's own key; harmless under sched/easypp (builtin is not
      // loaded), but easypp_interval/easypp_yield_interval contain it, so the
      // check allows exactly this one.
      "interval=",
  };
  return keys;
}

const std::vector<BackfillKey>& backfill_keys() {
  using U = BackfillKeyUse;
  // From Slurm's source, 22.05.8 to 26.05.3: backfill.c _load_config(),
  // job_scheduler.c (main scheduler), select/cons_tres (cons_common in
  // 22.05). "What sched/easypp does" must stay true of agent.cc and
  // slurm_cluster.cc; the admin guide's table is checked against this one.
  static const std::vector<BackfillKey> keys = {
      {"bf_interval", "22.05+", "seconds between backfill cycles (-1: none)", U::kHonoured,
       "easypp_interval",
       "read as easypp_interval (1..3600 s); a cycle also runs at each running job's predicted "
       "end"},
      {"bf_max_time", "22.05+", "time budget of one cycle, lock yields included", U::kHonoured,
       "easypp_max_time", "read as easypp_max_time (1..3600 s; default 30, not bf_interval)"},
      {"bf_max_job_test", "22.05+", "jobs tested per cycle", U::kHonoured, "easypp_max_job_test",
       "read as easypp_max_job_test"},
      {"bf_yield_interval", "22.05+", "hold the locks at most this long (us)", U::kHonoured,
       "easypp_yield_interval", "read as easypp_yield_interval"},
      {"bf_yield_sleep", "22.05+", "then release them this long (us)", U::kHonoured,
       "easypp_yield_sleep", "read as easypp_yield_sleep"},
      {"bf_max_job_user", "22.05+", "jobs tried per user per cycle", U::kHonoured,
       "easypp_max_job_user",
       "read as easypp_max_job_user (0 when bf_max_job_assoc is set too, as in sched/backfill)"},
      {"bf_max_job_part", "22.05+", "jobs tried per partition per cycle", U::kHonoured,
       "easypp_max_job_part", "read as easypp_max_job_part"},
      {"bf_max_job_assoc", "22.05+", "jobs tried per association per cycle", U::kHonoured,
       "easypp_max_job_assoc", "read as easypp_max_job_assoc"},
      {"bf_max_job_user_part", "22.05+", "jobs tried per user and partition per cycle",
       U::kHonoured, "easypp_max_job_user_part", "read as easypp_max_job_user_part"},
      {"bf_busy_nodes", "22.05+", "reserve busy nodes first", U::kSlurm, "",
       "applies: the select plugin reads it and picks the nodes of the plugin's reservations"},
      {"bf_hetjob_prio", "22.05+", "het job priority from its components (min, max, avg)",
       U::kSlurm, "", "applies: Slurm's queue sort reads it, and the plugin uses that order"},
      {"bf_window_linear", "22.05+", "linear instead of doubling end-time steps in will-run tests",
       U::kSlurm, "",
       "read by the select plugin; no effect on planning: the plugin's will-run tests end every "
       "job due by the tested time at once"},
      {"bf_window", "22.05+", "how far ahead to plan (minutes, default 1 day)", U::kIgnored, "",
       "no window: planning looks at every running job's predicted end, however far"},
      {"bf_resolution", "22.05+", "time resolution of the plan (s)", U::kIgnored, "",
       "no resolution: planned starts are the running jobs' predicted ends, to the second"},
      {"bf_node_space_size", "22.05+", "size of the plan's time table", U::kIgnored, "",
       "no node-space table: nothing to size"},
      {"bf_continue", "22.05+", "resume an interrupted cycle where it stopped", U::kIgnored, "",
       "a cycle interrupted by a change during a lock yield is followed 1 s later by a new "
       "cycle from the top of the queue"},
      {"bf_max_job_start", "22.05+", "jobs started per cycle", U::kIgnored, "",
       "no cap on starts; easypp_max_job_test bounds the jobs tested"},
      {"bf_max_job_array_resv", "22.05+", "array tasks reserved for", U::kIgnored, "",
       "an array is one queue entry: at most its partition's one reservation"},
      {"bf_job_part_count_reserve", "22.05+", "jobs reserved for per partition (0: all)",
       U::kIgnored, "",
       "one reservation per partition, its head, plus starving jobs under easypp_selective"},
      {"bf_min_age_reserve", "22.05+", "no reservation for jobs pending less than this",
       U::kIgnored, "",
       "any blocked job of any age can be the head, and Slurm's main scheduler still reads it"},
      {"bf_min_prio_reserve", "22.05+", "no reservation for jobs below this priority",
       U::kIgnored, "",
       "any blocked job can be the head unless below its QOS's MinPrioThreshold, and Slurm's "
       "main scheduler still reads it"},
      {"bf_one_resv_per_job", "22.05+", "one reservation per job over all its partitions",
       U::kIgnored, "", "a job in several partitions can be the head of each"},
      {"bf_running_job_reserve", "22.05+", "plan running jobs on whole nodes as reservations",
       U::kIgnored, "",
       "no such step: running jobs enter planning through the select plugin's will-run tests"},
      {"bf_hetjob_immediate", "22.05+", "start a het job as soon as all components can",
       U::kIgnored, "",
       "het jobs are tried after every partition's pass, when all components fit now, and its "
       "implied bf_hetjob_prio=min still orders the queue"},
      {"max_rpc_cnt", "22.05+", "no cycle, and a yield, while this many RPCs are active",
       U::kIgnored, "",
       "cycles run and yield by easypp_yield_interval whatever the RPC load, and Slurm's main "
       "scheduler still defers"},
      {"max_rpc_count", "22.05+", "max_rpc_cnt's other spelling", U::kIgnored, "",
       "as max_rpc_cnt: cycles run and yield by easypp_yield_interval whatever the RPC load"},
      {"bf_yield_rpc_cnt", "25.05+", "after a max_rpc_cnt yield, resume below this many RPCs",
       U::kIgnored, "", "no yield for RPC load: yields by easypp_yield_interval only"},
      {"bf_yield_rpc_count", "25.05+", "bf_yield_rpc_cnt's other spelling", U::kIgnored, "",
       "no yield for RPC load: yields by easypp_yield_interval only"},
      {"bf_allow_magnetic_slot", "24.11+", "plan jobs eligible for magnetic reservations",
       U::kIgnored, "", "jobs in magnetic reservations are left to Slurm's main scheduler"},
      {"bf_topopt_enable", "24.11+", "experimental placement hook (oracle.c)", U::kIgnored, "",
       "no placement hook: reservations take the select plugin's nodes"},
      {"bf_topopt_iterations", "24.11+", "slots a job may be delayed for placement",
       U::kIgnored, "", "no placement hook: reservations take the select plugin's nodes"},
      {"bf_licenses", "22.05+", "plan licenses in backfill", U::kHarmful, "",
       "no license planning: a job whose licenses are not free now is skipped, and with "
       "bf_licenses Slurm's main scheduler stops its whole pass at the first job blocked on "
       "licenses, leaving it to the license planning sched/easypp does not do: remove it"},
  };
  return keys;
}

namespace {

const BackfillKey* find_backfill_key(std::string_view key) {
  const std::string k = ascii_lower(key);
  for (const BackfillKey& b : backfill_keys())
    if (k == b.key) return &b;
  return nullptr;
}

// Each "key" or "key=value" item of a SchedulerParameters string.
template <class F>
void for_each_item(const char* params, F f) {
  if (params == nullptr) return;
  std::string_view rest(params);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));
    if (!key.empty()) f(key, value);
  }
}

}  // namespace

std::vector<const BackfillKey*> backfill_keys_present(const char* params) {
  std::vector<bool> seen(backfill_keys().size(), false);
  for_each_item(params, [&](std::string_view key, std::string_view) {
    if (const BackfillKey* b = find_backfill_key(key)) seen[std::size_t(b - &backfill_keys()[0])] = true;
  });
  std::vector<const BackfillKey*> v;
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i]) v.push_back(&backfill_keys()[i]);
  return v;
}

std::string ignored_backfill_keys_line(const std::vector<const BackfillKey*>& present) {
  std::string keys;
  for (const BackfillKey* b : present) {
    if (b->use != BackfillKeyUse::kIgnored) continue;
    keys += keys.empty() ? "" : "; ";
    keys += std::string(b->key) + " (" + b->easypp + ")";
  }
  if (keys.empty()) return {};
  return "SchedulerParameters keys of sched/backfill that sched/easypp does not honour: " + keys;
}

std::string harmful_backfill_key_line(const BackfillKey& k) {
  return "SchedulerParameters=" + std::string(k.key) + " is harmful under sched/easypp (" +
         k.easypp + ")";
}

const char* backfill_key_use_name(BackfillKeyUse u) {
  switch (u) {
    case BackfillKeyUse::kHonoured: return "honoured";
    case BackfillKeyUse::kSlurm: return "applies (Slurm)";
    case BackfillKeyUse::kIgnored: return "not honoured: warning";
    case BackfillKeyUse::kHarmful: return "harmful: error";
  }
  return "";
}

std::string backfill_keys_markdown() {
  std::string t =
      "| key | Slurm | under sched/backfill | sched/easypp | what sched/easypp does |\n"
      "|---|---|---|---|---|\n";
  for (const BackfillKey& k : backfill_keys())
    t += std::string("| `") + k.key + "` | " + k.releases + " | " + k.backfill + " | " +
         backfill_key_use_name(k.use) + " | " + k.easypp + " |\n";
  return t;
}

ParsedConfig parse_scheduler_parameters(const char* params) {
  ParsedConfig r;
  if (params == nullptr) return r;
  bool guard_given = false;
  // sched/backfill's keys of the same meaning first (backfill_keys(),
  // kHonoured), each only if its easypp_* key is not given: the easypp_*
  // keys below then win. A bad value warns under the bf_* key's name.
  std::set<std::string> given;
  for_each_item(params, [&](std::string_view key, std::string_view) { given.insert(ascii_lower(key)); });
  bool bf_user = false, bf_assoc = false;
  for_each_item(params, [&](std::string_view key, std::string_view value) {
    const BackfillKey* b = find_backfill_key(key);
    if (b == nullptr || b->use != BackfillKeyUse::kHonoured || given.count(b->easypp_key)) return;
    const Setting* s = find_setting(b->easypp_key);
    const std::string expected = s->apply(r.config, value);
    if (expected.empty()) {
      bf_user = bf_user || std::string_view(b->key) == "bf_max_job_user";
      bf_assoc = bf_assoc || std::string_view(b->key) == "bf_max_job_assoc";
      return;
    }
    static const PluginConfig defaults;
    const std::string def = s->render(defaults);
    s->apply(r.config, def);
    r.warnings.push_back("invalid " + std::string(b->key) + "='" + std::string(value) +
                         "' (want " + expected + " for " + b->easypp_key + "), using " + def);
  });
  // As sched/backfill: bf_max_job_assoc takes precedence over bf_max_job_user.
  if (bf_user && bf_assoc && r.config.max_job_user > 0 && r.config.max_job_assoc > 0) {
    r.config.max_job_user = 0;
    r.warnings.push_back(
        "both bf_max_job_user and bf_max_job_assoc are set: bf_max_job_assoc taking precedence "
        "(as sched/backfill)");
  }
  std::string_view rest(params);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (ascii_lower(item.substr(0, 7)) != "easypp_") continue;  // Slurm's own keys
    const std::size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));
    apply_one(key, value, &r);
    guard_given = guard_given || is_guard_key(key);
  }
  settle_selective(&r, guard_given);
  return r;
}

ParsedConfig apply_settings(const std::vector<std::pair<std::string, std::string>>& settings) {
  ParsedConfig r;
  bool guard_given = false;
  for (const auto& [k, v] : settings) {
    apply_one(k, v, &r);
    guard_given = guard_given || is_guard_key(k);
  }
  settle_selective(&r, guard_given);
  return r;
}

}  // namespace easypp::plugin
