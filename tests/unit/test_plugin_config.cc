// sched/easypp's SchedulerParameters parsing (plugin/plugin_config.cc):
// defaults, every key, bad values replaced by their default with a warning,
// the scheduling knobs going through the core's apply_knob(), and no easypp
// key containing a key Slurm itself searches for.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plugin_config.h"

using namespace easypp;
using namespace easypp::plugin;

class PluginConfigTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PluginConfigTest);
  CPPUNIT_TEST(testDefaults);
  CPPUNIT_TEST(testDefaultsArePresetSite);
  CPPUNIT_TEST(testEveryKey);
  CPPUNIT_TEST(testBadValuesFallBackToDefaults);
  CPPUNIT_TEST(testYieldRangeIsSlurms);
  CPPUNIT_TEST(testFileModeNeverOpensWriting);
  CPPUNIT_TEST(testLaterKeyWinsAndSlurmKeysIgnored);
  CPPUNIT_TEST(testUnknownKeyWarns);
  CPPUNIT_TEST(testNoKeyContainsASlurmKey);
  CPPUNIT_TEST(testDescribeStartsWithInterval);
  CPPUNIT_TEST(testKeysAreCaseInsensitive);
  CPPUNIT_TEST(testSettingsRoundTrip);
  CPPUNIT_TEST(testSelectiveTurnsTheGuardsOff);
  CPPUNIT_TEST(testAdaptiveSelective);
  CPPUNIT_TEST(testBackfillKeysAreFallbacks);
  CPPUNIT_TEST(testBadBackfillValueWarnsUnderItsName);
  CPPUNIT_TEST(testBackfillAssocBeatsUser);
  CPPUNIT_TEST(testBackfillKeysPresentAndWarningLine);
  CPPUNIT_TEST(testEverySlurmBackfillKeyIsInTheTable);
  CPPUNIT_TEST(testAdminGuideHasTheTable);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testDefaults() {
    ParsedConfig p = parse_scheduler_parameters(nullptr);
    CPPUNIT_ASSERT(p.warnings.empty());
    const PluginConfig& c = p.config;
    CPPUNIT_ASSERT_EQUAL(30, c.interval);
    CPPUNIT_ASSERT_EQUAL(500, c.max_job_test);
    CPPUNIT_ASSERT_EQUAL(30, c.max_time);
    CPPUNIT_ASSERT_EQUAL(2000000, c.yield_interval_usec);
    CPPUNIT_ASSERT_EQUAL(500000, c.yield_sleep_usec);
    CPPUNIT_ASSERT(c.state);
    CPPUNIT_ASSERT_EQUAL(0600, c.file_mode);  // SlurmUser and root only
    CPPUNIT_ASSERT_EQUAL(0, c.max_job_user);  // no fairness cap
    CPPUNIT_ASSERT_EQUAL(0, c.max_job_part);
    CPPUNIT_ASSERT_EQUAL(0, c.max_job_assoc);
    CPPUNIT_ASSERT_EQUAL(0, c.max_job_user_part);
    CPPUNIT_ASSERT_EQUAL(100, c.publish_starts);
    // the site preset: easy++ (predictions, correction to the estimate,
    // SJBF, EASY, propagation) with the guard and the guarded history
    CPPUNIT_ASSERT(c.sched.plan == PlanWith::Prediction);
    CPPUNIT_ASSERT(c.sched.predictor.propagation);
    CPPUNIT_ASSERT_EQUAL(Time(86400), c.sched.policy.max_delay);
    CPPUNIT_ASSERT_EQUAL(Time(4 * 86400), c.sched.policy.safe_after);
    CPPUNIT_ASSERT(c.sched.predictor.learn_completed_only);
    CPPUNIT_ASSERT_EQUAL(Time(60), c.sched.predictor.learn_min_runtime);
    CPPUNIT_ASSERT(c.sched.correction == CorrectionPolicy::Estimate);
    CPPUNIT_ASSERT(c.sched.policy.backfill == BackfillOrder::ShortestPrediction);
    CPPUNIT_ASSERT_EQUAL(1, c.sched.policy.reservations);
    CPPUNIT_ASSERT(!c.sched.policy.safe);
    CPPUNIT_ASSERT_EQUAL(2, c.sched.predictor.window);
    CPPUNIT_ASSERT(c.sched.predictor.metric == Metric::Avg);
    CPPUNIT_ASSERT(parse_scheduler_parameters("").warnings.empty());
  }

  // The plugin's defaults are exactly the preset `site`, knob by knob, so
  // that easypp-sim --scheduler site replays what the plugin does.
  void testDefaultsArePresetSite() {
    const SchedulerConfig site = *preset("site");
    const SchedulerConfig plugin = parse_scheduler_parameters(nullptr).config.sched;
    CPPUNIT_ASSERT_EQUAL(std::string("sched/easypp"), plugin.name);
    CPPUNIT_ASSERT_EQUAL(std::string("sched/easypp"), PluginConfig::default_scheduler().name);
    const std::vector<std::string> names = knob_names();
    CPPUNIT_ASSERT(std::find(names.begin(), names.end(), "history-ttl") != names.end());
    for (const std::string& k : names) {
      CPPUNIT_ASSERT_EQUAL_MESSAGE(k, knob_value(site, k), knob_value(plugin, k));
      CPPUNIT_ASSERT_EQUAL_MESSAGE(k, knob_value(site, k),
                                   knob_value(PluginConfig::default_scheduler(), k));
    }
    CPPUNIT_ASSERT_EQUAL(std::string("31536000"), knob_value(plugin, "history-ttl"));
    CPPUNIT_ASSERT_EQUAL(std::string("86400"), knob_value(plugin, "max-delay"));
    // Every core knob the plugin has a key for renders as the preset does.
    for (const auto& [key, value] : PluginConfig().settings()) {
      if (key == "easypp_sjbf") continue;  // backfill's other spelling
      std::string knob = key.substr(7);
      for (char& ch : knob)
        if (ch == '_') ch = '-';
      if (knob == "history") knob = "history-type";
      const std::string v = knob_value(site, knob);
      if (!v.empty()) CPPUNIT_ASSERT_EQUAL_MESSAGE(key, v, value);
    }
  }

  void testEveryKey() {
    ParsedConfig p = parse_scheduler_parameters(
        "bf_interval=5,easypp_interval=7,easypp_window=5,easypp_metric=median,"
        "easypp_history=extended,easypp_fullness=partial,easypp_fallback=relative,"
        "easypp_propagation=yes,easypp_correction=gradual,easypp_sjbf=no,easypp_safe=yes,"
        "easypp_plan=estimate,easypp_max_job_test=42,easypp_max_time=9,"
        "easypp_yield_interval=150000,easypp_yield_sleep=20000,easypp_state=off,"
        "easypp_safe_after=86400,easypp_rounding=down,easypp_prediction_floor=30,"
        "easypp_learn=all,easypp_learn_min_runtime=5,easypp_safe_after_delay=7200,"
        "easypp_safe_after_xfactor=10,easypp_max_delay=off,easypp_predictor=regression,"
        "easypp_ewma_alpha=0.75,easypp_file_mode=0644,easypp_max_job_user=5,"
        "easypp_max_job_part=6,easypp_max_job_assoc=7,easypp_max_job_user_part=8,"
        "easypp_publish_starts=0");
    CPPUNIT_ASSERT_MESSAGE(p.warnings.empty() ? "" : p.warnings[0], p.warnings.empty());
    const PluginConfig& c = p.config;
    CPPUNIT_ASSERT_EQUAL(0644, c.file_mode);
    CPPUNIT_ASSERT_EQUAL(5, c.max_job_user);
    CPPUNIT_ASSERT_EQUAL(6, c.max_job_part);
    CPPUNIT_ASSERT_EQUAL(7, c.max_job_assoc);
    CPPUNIT_ASSERT_EQUAL(8, c.max_job_user_part);
    CPPUNIT_ASSERT_EQUAL(0, c.publish_starts);
    CPPUNIT_ASSERT_EQUAL(0640, parse_scheduler_parameters("easypp_file_mode=640").config.file_mode);
    CPPUNIT_ASSERT_EQUAL(7, c.interval);
    CPPUNIT_ASSERT(c.sched.predictor.kind == PredictorKind::Regression);
    CPPUNIT_ASSERT_EQUAL(0.75, c.sched.predictor.ewma_alpha);
    CPPUNIT_ASSERT_EQUAL(5, c.sched.predictor.window);
    CPPUNIT_ASSERT(c.sched.predictor.metric == Metric::Median);
    CPPUNIT_ASSERT(c.sched.predictor.type == HistoryType::Extended);
    CPPUNIT_ASSERT(c.sched.predictor.fullness == Fullness::Partial);
    CPPUNIT_ASSERT(c.sched.predictor.fallback == Fallback::Relative);
    CPPUNIT_ASSERT(c.sched.predictor.propagation);
    CPPUNIT_ASSERT(c.sched.correction == CorrectionPolicy::Gradual);
    CPPUNIT_ASSERT(c.sched.policy.backfill == BackfillOrder::Queue);
    CPPUNIT_ASSERT(c.sched.policy.safe);
    CPPUNIT_ASSERT(c.sched.plan == PlanWith::Estimate);
    CPPUNIT_ASSERT_EQUAL(42, c.max_job_test);
    CPPUNIT_ASSERT_EQUAL(9, c.max_time);
    CPPUNIT_ASSERT_EQUAL(150000, c.yield_interval_usec);
    CPPUNIT_ASSERT_EQUAL(20000, c.yield_sleep_usec);
    CPPUNIT_ASSERT(!c.state);
    CPPUNIT_ASSERT_EQUAL(Time(86400), c.sched.policy.safe_after);
    CPPUNIT_ASSERT_EQUAL(Time(-1), parse_scheduler_parameters("easypp_safe_after=off")
                                       .config.sched.policy.safe_after);
    CPPUNIT_ASSERT(!c.sched.predictor.round_up);
    CPPUNIT_ASSERT_EQUAL(Time(30), c.sched.predictor.floor);
    CPPUNIT_ASSERT(!c.sched.predictor.learn_completed_only);
    CPPUNIT_ASSERT_EQUAL(Time(5), c.sched.predictor.learn_min_runtime);
    CPPUNIT_ASSERT_EQUAL(Time(7200), c.sched.policy.safe_after_delay);
    CPPUNIT_ASSERT_EQUAL(10.0, c.sched.policy.safe_after_xfactor);
    CPPUNIT_ASSERT_EQUAL(Time(-1), c.sched.policy.max_delay);
  }

  // easypp_yield_interval and easypp_yield_sleep take bf_yield_interval's
  // and bf_yield_sleep's range: 1 to 10,000,000 microseconds.
  void testYieldRangeIsSlurms() {
    ParsedConfig p = parse_scheduler_parameters("easypp_yield_interval=1,easypp_yield_sleep=1");
    CPPUNIT_ASSERT(p.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(1, p.config.yield_interval_usec);
    CPPUNIT_ASSERT_EQUAL(1, p.config.yield_sleep_usec);
    p = parse_scheduler_parameters("easypp_yield_interval=0,easypp_yield_sleep=10000001");
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), p.warnings.size());
    const PluginConfig d;
    CPPUNIT_ASSERT_EQUAL(d.yield_interval_usec, p.config.yield_interval_usec);
    CPPUNIT_ASSERT_EQUAL(d.yield_sleep_usec, p.config.yield_sleep_usec);
  }

  void testBadValuesFallBackToDefaults() {
    // Each bad value: one warning naming the key, and the default kept.
    ParsedConfig p = parse_scheduler_parameters(
        "easypp_interval=0,easypp_window=31,easypp_metric=mode,easypp_correction=later,"
        "easypp_sjbf=maybe,easypp_state=sometimes,easypp_max_job_test=-1,"
        "easypp_plan=runtime,easypp_yield_sleep=abc,easypp_safe_after=-5,"
        "easypp_max_delay=soon,easypp_learn=some,easypp_learn_min_runtime=-1,"
        "easypp_rounding=sideways,easypp_safe_after_xfactor=0.5,"
        "easypp_predictor=neural,easypp_ewma_alpha=0");
    CPPUNIT_ASSERT_EQUAL(std::size_t(17), p.warnings.size());
    const PluginConfig d;
    const PluginConfig& c = p.config;
    CPPUNIT_ASSERT_EQUAL(d.interval, c.interval);
    CPPUNIT_ASSERT_EQUAL(d.sched.predictor.window, c.sched.predictor.window);
    CPPUNIT_ASSERT(c.sched.predictor.metric == d.sched.predictor.metric);
    CPPUNIT_ASSERT(c.sched.correction == d.sched.correction);
    CPPUNIT_ASSERT(c.sched.policy.backfill == d.sched.policy.backfill);
    CPPUNIT_ASSERT_EQUAL(d.state, c.state);
    CPPUNIT_ASSERT_EQUAL(d.max_job_test, c.max_job_test);
    CPPUNIT_ASSERT(c.sched.plan == PlanWith::Prediction);
    CPPUNIT_ASSERT_EQUAL(d.yield_sleep_usec, c.yield_sleep_usec);
    CPPUNIT_ASSERT_EQUAL(d.sched.policy.safe_after, c.sched.policy.safe_after);
    CPPUNIT_ASSERT_EQUAL(d.sched.policy.max_delay, c.sched.policy.max_delay);
    CPPUNIT_ASSERT_EQUAL(d.sched.predictor.learn_completed_only,
                         c.sched.predictor.learn_completed_only);
    CPPUNIT_ASSERT_EQUAL(d.sched.predictor.learn_min_runtime, c.sched.predictor.learn_min_runtime);
    CPPUNIT_ASSERT(c.sched.predictor.round_up);
    CPPUNIT_ASSERT_EQUAL(0.0, c.sched.policy.safe_after_xfactor);
    CPPUNIT_ASSERT(p.warnings[10].find("easypp_max_delay='soon'") != std::string::npos);
    CPPUNIT_ASSERT(p.warnings[10].find("using 86400") != std::string::npos);
    CPPUNIT_ASSERT(c.sched.predictor.kind == PredictorKind::History);
    CPPUNIT_ASSERT_EQUAL(0.5, c.sched.predictor.ewma_alpha);
    CPPUNIT_ASSERT(p.warnings[15].find("easypp_predictor='neural' (want history, ewma or regression)") !=
                   std::string::npos);
    CPPUNIT_ASSERT(p.warnings[0].find("easypp_interval='0'") != std::string::npos);
    CPPUNIT_ASSERT(p.warnings[0].find("using 30") != std::string::npos);
    CPPUNIT_ASSERT(p.warnings[2].find("easypp_metric='mode'") != std::string::npos);

    // A bad value after a good one goes back to the default, not the good one.
    ParsedConfig q = parse_scheduler_parameters("easypp_window=4,easypp_window=x");
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), q.warnings.size());
    CPPUNIT_ASSERT_EQUAL(2, q.config.sched.predictor.window);
  }

  // The files hold what users ran: never writable or executable by others,
  // always readable and writable by SlurmUser.
  void testFileModeNeverOpensWriting() {
    for (const char* bad : {"0666", "0602", "0620", "0700", "0400", "0755", "0611", "rw", "",
                            "06000", "0800", "-600"}) {
      ParsedConfig p = parse_scheduler_parameters((std::string("easypp_file_mode=") + bad).c_str());
      CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, std::size_t(1), p.warnings.size());
      CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, 0600, p.config.file_mode);
      CPPUNIT_ASSERT_MESSAGE(p.warnings[0], p.warnings[0].find("using 0600") != std::string::npos);
    }
    for (const char* good : {"0600", "0640", "0604", "0644", "600"})
      CPPUNIT_ASSERT_MESSAGE(
          good, parse_scheduler_parameters((std::string("easypp_file_mode=") + good).c_str())
                    .warnings.empty());
  }

  void testLaterKeyWinsAndSlurmKeysIgnored() {
    ParsedConfig p = parse_scheduler_parameters(
        " sched_interval=5 , easypp_interval=3,bf_continue,easypp_interval = 4 ");
    CPPUNIT_ASSERT(p.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(4, p.config.interval);
  }

  void testUnknownKeyWarns() {
    ParsedConfig p = parse_scheduler_parameters("easypp_bogus=1,easypp_interval=2");
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), p.warnings.size());
    CPPUNIT_ASSERT(p.warnings[0].find("unknown SchedulerParameters key 'easypp_bogus'") !=
                   std::string::npos);
    CPPUNIT_ASSERT_EQUAL(2, p.config.interval);
  }

  // Slurm finds its keys with xstrcasestr() anywhere in the string: an easypp
  // key containing one would set Slurm's setting too. "interval=" is
  // sched/builtin's key and is only read when sched/builtin is loaded.
  void testNoKeyContainsASlurmKey() {
    auto lower = [](std::string s) {
      for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    };
    CPPUNIT_ASSERT(slurm_keys().size() > 50);
    for (const std::string& key : known_keys()) {
      const std::string item = lower(key + "=1");
      for (const std::string& sk : slurm_keys()) {
        if (sk == "interval=") continue;
        CPPUNIT_ASSERT_MESSAGE(key + " contains Slurm's key " + sk,
                               item.find(lower(sk)) == std::string::npos);
      }
    }
    CPPUNIT_ASSERT_EQUAL(std::size_t(37), known_keys().size());
  }

  // Slurm matches its own keys case-insensitively; so does the plugin.
  void testKeysAreCaseInsensitive() {
    ParsedConfig p = parse_scheduler_parameters("EASYPP_INTERVAL=5,Easypp_Window=4,EASYPP_SJBF=NO");
    CPPUNIT_ASSERT_MESSAGE(p.warnings.empty() ? "" : p.warnings[0], p.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(5, p.config.interval);
    CPPUNIT_ASSERT_EQUAL(4, p.config.sched.predictor.window);
    CPPUNIT_ASSERT(p.config.sched.policy.backfill == BackfillOrder::Queue);
    ParsedConfig q = parse_scheduler_parameters("EASYPP_BOGUS=1");
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), q.warnings.size());
    CPPUNIT_ASSERT(q.warnings[0].find("EASYPP_BOGUS") != std::string::npos);
  }

  // The status file's settings parse back to the same configuration (easypp-ctl).
  void testSettingsRoundTrip() {
    ParsedConfig p = parse_scheduler_parameters(
        "easypp_interval=7,easypp_plan=estimate,easypp_window=5,easypp_metric=median,"
        "easypp_sjbf=no,easypp_safe_after=600,easypp_history_ttl=off,easypp_state=off,"
        "easypp_predictor=ewma,easypp_ewma_alpha=0.25");
    CPPUNIT_ASSERT(p.warnings.empty());
    ParsedConfig q = apply_settings(p.config.settings());
    CPPUNIT_ASSERT(q.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(p.config.describe(), q.config.describe());
    CPPUNIT_ASSERT(q.config.sched.plan == PlanWith::Estimate);
    CPPUNIT_ASSERT(q.config.sched.predictor.kind == PredictorKind::Ewma);
    CPPUNIT_ASSERT_EQUAL(0.25, q.config.sched.predictor.ewma_alpha);
    CPPUNIT_ASSERT_EQUAL(Time(-1), q.config.sched.history_ttl);
    CPPUNIT_ASSERT_EQUAL(PluginConfig::kDefaultHistoryTtl, PluginConfig().sched.history_ttl);
    CPPUNIT_ASSERT_EQUAL(known_keys().size(), p.config.settings().size());
  }

  void testDescribeStartsWithInterval() {
    const std::string d = parse_scheduler_parameters("easypp_interval=3").config.describe();
    CPPUNIT_ASSERT_EQUAL(std::string("interval=3s "), d.substr(0, 12));
    CPPUNIT_ASSERT(d.find("sjbf=yes") != std::string::npos);
    CPPUNIT_ASSERT(d.find("correction=estimate") != std::string::npos);
  }

  // Selective reservations do not combine with the guards (validate()); the
  // default's guards (site preset) go without a word, a guard the admin set
  // with a warning. The fuzzer found easypp_selective=15 alone left an
  // invalid configuration (the default guards still on).
  void testSelectiveTurnsTheGuardsOff() {
    for (const char* params : {"easypp_selective=15", "EASYPP_SELECTIVE=2/3/4/5"}) {
      ParsedConfig p = parse_scheduler_parameters(params);
      CPPUNIT_ASSERT_MESSAGE(params, p.warnings.empty());
      CPPUNIT_ASSERT_EQUAL(std::string(), p.config.sched.validate());
      CPPUNIT_ASSERT(p.config.sched.policy.selective.on());
      CPPUNIT_ASSERT(!p.config.sched.policy.any_guard());
    }
    ParsedConfig p = parse_scheduler_parameters("easypp_max_delay=600,easypp_selective=3");
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), p.warnings.size());
    CPPUNIT_ASSERT(p.warnings[0].find("guards") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string(), p.config.sched.validate());
    CPPUNIT_ASSERT(!p.config.sched.policy.any_guard());
    // what the status file carries reads back the same, without a warning
    ParsedConfig q = apply_settings(p.config.settings());
    CPPUNIT_ASSERT(q.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(p.config.describe(), q.config.describe());
    // off again: the default guards are the preset's
    ParsedConfig r = parse_scheduler_parameters("easypp_selective=off");
    CPPUNIT_ASSERT(r.config.sched.policy.any_guard());
  }

  // Adaptive thresholds (the agent applies the finished jobs' slowdowns each
  // cycle) are accepted, with easypp_sel_scale; derived ones stay refused
  // (they need a conservative replay: easypp-sim).
  void testAdaptiveSelective() {
    ParsedConfig p = parse_scheduler_parameters("easypp_selective=adaptive");
    CPPUNIT_ASSERT_MESSAGE(p.warnings.empty() ? "" : p.warnings[0], p.warnings.empty());
    const Selective& s = p.config.sched.policy.selective;
    CPPUNIT_ASSERT(s.mode == Selective::Mode::Adaptive);
    CPPUNIT_ASSERT(!s.per_category);
    CPPUNIT_ASSERT_EQUAL(std::string(), p.config.sched.validate());
    CPPUNIT_ASSERT(!p.config.sched.policy.any_guard());
    // the default scale is the core's (sel-scale)
    CPPUNIT_ASSERT_EQUAL(SchedulerConfig().policy.selective.scale, s.scale);
    CPPUNIT_ASSERT_EQUAL(knob_value(SchedulerConfig(), "sel-scale"),
                         knob_value(p.config.sched, "sel-scale"));
    CPPUNIT_ASSERT(p.config.describe().find("selective=adaptive sel_scale=1 ") !=
                   std::string::npos);

    ParsedConfig d = parse_scheduler_parameters("EASYPP_SELECTIVE=adaptive-d,easypp_sel_scale=2.5");
    CPPUNIT_ASSERT_MESSAGE(d.warnings.empty() ? "" : d.warnings[0], d.warnings.empty());
    CPPUNIT_ASSERT(d.config.sched.policy.selective.mode == Selective::Mode::Adaptive);
    CPPUNIT_ASSERT(d.config.sched.policy.selective.per_category);
    CPPUNIT_ASSERT_EQUAL(2.5, d.config.sched.policy.selective.scale);
    // what the status file carries reads back the same, without a warning
    ParsedConfig q = apply_settings(d.config.settings());
    CPPUNIT_ASSERT(q.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(d.config.describe(), q.config.describe());
    CPPUNIT_ASSERT(q.config.sched.policy.selective.mode == Selective::Mode::Adaptive);

    // bad scales: one warning each, the default kept
    for (const char* bad : {"0", "0.001", "1001", "abc", "", "nan", "inf", "-1", "2x"}) {
      ParsedConfig b = parse_scheduler_parameters(
          (std::string("easypp_selective=adaptive,easypp_sel_scale=") + bad).c_str());
      CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, std::size_t(1), b.warnings.size());
      CPPUNIT_ASSERT_MESSAGE(b.warnings[0],
                             b.warnings[0].find(std::string("invalid easypp_sel_scale='") + bad +
                                                "' (want a number between 0.01 and 1000), "
                                                "using 1") != std::string::npos);
      CPPUNIT_ASSERT_EQUAL(1.0, b.config.sched.policy.selective.scale);
      CPPUNIT_ASSERT(b.config.sched.policy.selective.mode == Selective::Mode::Adaptive);
    }
    // bad thresholds and the harness-only derived ones: refused, off kept
    for (const char* bad : {"derive", "derive-d", "adaptive-x", "adaptively", "0.5", "1/2/3"}) {
      ParsedConfig b =
          parse_scheduler_parameters((std::string("easypp_selective=") + bad).c_str());
      CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, std::size_t(1), b.warnings.size());
      CPPUNIT_ASSERT_MESSAGE(b.warnings[0],
                             b.warnings[0].find(std::string("invalid easypp_selective='") + bad +
                                                "'") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(b.warnings[0], b.warnings[0].find("using off") != std::string::npos);
      CPPUNIT_ASSERT(!b.config.sched.policy.selective.on());
    }
    ParsedConfig dr = parse_scheduler_parameters("easypp_selective=derive");
    CPPUNIT_ASSERT(dr.warnings[0].find("derive them with easypp-sim") != std::string::npos);
    CPPUNIT_ASSERT(dr.warnings[0].find("adaptive or adaptive-d") != std::string::npos);
  }

  // sched/backfill's keys of the same meaning are read when the easypp_*
  // key is not given; the easypp_* key wins wherever it stands.
  void testBackfillKeysAreFallbacks() {
    ParsedConfig p = parse_scheduler_parameters(
        "bf_interval=60,bf_max_job_test=100,bf_max_time=20,bf_yield_interval=1000,"
        "bf_yield_sleep=2000,bf_max_job_part=3,bf_max_job_user_part=4,bf_max_job_user=5");
    CPPUNIT_ASSERT(p.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(60, p.config.interval);
    CPPUNIT_ASSERT_EQUAL(100, p.config.max_job_test);
    CPPUNIT_ASSERT_EQUAL(20, p.config.max_time);
    CPPUNIT_ASSERT_EQUAL(1000, p.config.yield_interval_usec);
    CPPUNIT_ASSERT_EQUAL(2000, p.config.yield_sleep_usec);
    CPPUNIT_ASSERT_EQUAL(3, p.config.max_job_part);
    CPPUNIT_ASSERT_EQUAL(4, p.config.max_job_user_part);
    CPPUNIT_ASSERT_EQUAL(5, p.config.max_job_user);
    CPPUNIT_ASSERT_EQUAL(0, p.config.max_job_assoc);
    CPPUNIT_ASSERT_EQUAL(10, parse_scheduler_parameters("easypp_interval=10,bf_interval=60")
                                 .config.interval);
    CPPUNIT_ASSERT_EQUAL(10, parse_scheduler_parameters("BF_Interval=60,easypp_interval=10")
                                 .config.interval);
    CPPUNIT_ASSERT_EQUAL(7, parse_scheduler_parameters("BF_MAX_JOB_ASSOC=7").config.max_job_assoc);
    // Not a fallback: sched/backfill's keys that the plugin does not honour
    // change nothing.
    const PluginConfig d;
    ParsedConfig q = parse_scheduler_parameters("bf_window=2880,bf_continue,max_rpc_cnt=150");
    CPPUNIT_ASSERT(q.warnings.empty());
    CPPUNIT_ASSERT_EQUAL(d.describe(), q.config.describe());
  }

  void testBadBackfillValueWarnsUnderItsName() {
    // bf_interval=-1 (no backfill) and values past easypp_interval's range.
    for (const char* v : {"-1", "7200", "x"}) {
      ParsedConfig p = parse_scheduler_parameters((std::string("bf_interval=") + v).c_str());
      CPPUNIT_ASSERT_EQUAL(30, p.config.interval);
      CPPUNIT_ASSERT_EQUAL(std::size_t(1), p.warnings.size());
      CPPUNIT_ASSERT_EQUAL("invalid bf_interval='" + std::string(v) +
                               "' (want 1..3600 for easypp_interval), using 30",
                           p.warnings[0]);
    }
  }

  void testBackfillAssocBeatsUser() {
    ParsedConfig p = parse_scheduler_parameters("bf_max_job_user=5,bf_max_job_assoc=3");
    CPPUNIT_ASSERT_EQUAL(0, p.config.max_job_user);
    CPPUNIT_ASSERT_EQUAL(3, p.config.max_job_assoc);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), p.warnings.size());
    // The plugin's own keys may combine both.
    ParsedConfig q = parse_scheduler_parameters("easypp_max_job_user=5,bf_max_job_assoc=3");
    CPPUNIT_ASSERT_EQUAL(5, q.config.max_job_user);
    CPPUNIT_ASSERT_EQUAL(3, q.config.max_job_assoc);
    CPPUNIT_ASSERT(q.warnings.empty());
  }

  void testBackfillKeysPresentAndWarningLine() {
    const char* params =
        "sched_interval=5,bf_window=2880, BF_Continue ,bf_licenses,bf_interval=30,"
        "bf_window_linear=60,bf_continue,easypp_interval=20,max_rpc_cnt=150";
    std::vector<std::string> keys;
    for (const BackfillKey* k : backfill_keys_present(params)) keys.push_back(k->key);
    const std::vector<std::string> want = {"bf_interval", "bf_window_linear", "bf_window",
                                           "bf_continue", "max_rpc_cnt", "bf_licenses"};
    CPPUNIT_ASSERT(keys == want);  // the table's order, each once
    const std::string line = ignored_backfill_keys_line(backfill_keys_present(params));
    CPPUNIT_ASSERT_EQUAL(
        std::string("SchedulerParameters keys of sched/backfill that sched/easypp does not "
                    "honour: bf_window (no window: planning looks at every running job's "
                    "predicted end, however far); bf_continue (a cycle interrupted by a change "
                    "during a lock yield is followed 1 s later by a new cycle from the top of "
                    "the queue); max_rpc_cnt (cycles run and yield by easypp_yield_interval "
                    "whatever the RPC load, and Slurm's main scheduler still defers)"),
        line);
    CPPUNIT_ASSERT(ignored_backfill_keys_line(backfill_keys_present("bf_interval=5")).empty());
    CPPUNIT_ASSERT(ignored_backfill_keys_line(backfill_keys_present(nullptr)).empty());
    const BackfillKey* lic = backfill_keys_present("bf_licenses").at(0);
    CPPUNIT_ASSERT(lic->use == BackfillKeyUse::kHarmful);
    CPPUNIT_ASSERT(harmful_backfill_key_line(*lic).find(
                       "SchedulerParameters=bf_licenses is harmful under sched/easypp (") == 0);
  }

  // Every bf_* key (and max_rpc_cnt) Slurm searches for is a row of the
  // table, once; honoured ones name an easypp_* key that exists.
  void testEverySlurmBackfillKeyIsInTheTable() {
    std::set<std::string> rows;
    for (const BackfillKey& k : backfill_keys()) {
      CPPUNIT_ASSERT_MESSAGE(k.key, rows.insert(k.key).second);
      CPPUNIT_ASSERT_MESSAGE(k.key, *k.backfill && *k.easypp && *k.releases);
      const std::vector<std::string> known = known_keys();
      const bool honoured = k.use == BackfillKeyUse::kHonoured;
      CPPUNIT_ASSERT_MESSAGE(k.key, honoured == (*k.easypp_key != 0));
      if (honoured)
        CPPUNIT_ASSERT_MESSAGE(k.key, std::find(known.begin(), known.end(),
                                                std::string(k.easypp_key)) != known.end());
    }
    for (std::string sk : slurm_keys()) {
      if (!sk.empty() && sk.back() == '=') sk.pop_back();
      if (sk.rfind("bf_", 0) == 0 || sk.rfind("max_rpc_", 0) == 0)
        CPPUNIT_ASSERT_MESSAGE(sk + " is not in backfill_keys()", rows.count(sk) == 1);
    }
    for (const std::string& r : rows) {
      const bool listed = std::find(slurm_keys().begin(), slurm_keys().end(), r) !=
                              slurm_keys().end() ||
                          std::find(slurm_keys().begin(), slurm_keys().end(), r + "=") !=
                              slurm_keys().end();
      CPPUNIT_ASSERT_MESSAGE(r + " is not in slurm_keys()", listed);
    }
    CPPUNIT_ASSERT(rows.count("bf_licenses") && rows.count("bf_window"));
  }

  // docs/admin-guide.md holds backfill_keys_markdown() verbatim, between
  // its markers (the docs are checked against the code's table).
  void testAdminGuideHasTheTable() {
    const std::string path = std::string(TEST_DATA_DIR) + "/../../docs/admin-guide.md";
    std::ifstream in(path);
    CPPUNIT_ASSERT_MESSAGE(path, in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    const std::string begin = "<!-- backfill-keys: generated from backfill_keys() -->\n";
    const std::string end = "<!-- backfill-keys end -->";
    const std::size_t b = doc.find(begin), e = doc.find(end);
    CPPUNIT_ASSERT_MESSAGE("markers missing in " + path,
                           b != std::string::npos && e != std::string::npos && b < e);
    const std::string table = doc.substr(b + begin.size(), e - b - begin.size());
    CPPUNIT_ASSERT_MESSAGE("docs/admin-guide.md's table differs from backfill_keys(); it should "
                           "read:\n" + backfill_keys_markdown(),
                           table == backfill_keys_markdown());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PluginConfigTest);
