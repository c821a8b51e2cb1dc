// Verdict material of issue 12: starvation and per-user metrics, input
// shaking (copies, statistics, parallel determinism) and the figure series.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <numeric>

#include "easypp/sim/generator.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/series.h"
#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

class ShakeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ShakeTest);
  CPPUNIT_TEST(testStarvationMetrics);
  CPPUNIT_TEST(testPerUser);
  CPPUNIT_TEST(testLoadFactors);
  CPPUNIT_TEST(testShakenCopyScalesLoad);
  CPPUNIT_TEST(testJitter);
  CPPUNIT_TEST(testSpread);
  CPPUNIT_TEST(testRunShakenIsPairedAndThreadIndependent);
  CPPUNIT_TEST(testSeries);
  CPPUNIT_TEST_SUITE_END();

  static Workload synthetic(std::uint64_t seed, std::size_t jobs) {
    GeneratorConfig g;
    g.seed = seed;
    g.jobs = std::uint32_t(jobs);
    g.procs = 64;
    g.users = 12;
    return generate_workload(g, WorkloadOptions{});
  }

 public:
  void testStarvationMetrics() {
    // 4 processors, easy: j0 (4 wide) at 0, j1 and j2 wait 90 and 80 s
    // behind it, the others do not wait. Wide: more than 2 processors.
    const Workload w = workload(4, {
        {0, 100, 100, 4},
        {10, 50, 100, 2},
        {20, 30, 60, 2},
        {200, 10, 10, 3},
        {300, 5, 10, 1},
    });
    const Metrics m = compute_metrics(w, Simulator(w, sched("easy")).run());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.5, m.max_wait_minutes, 1e-9);
    // Nearest rank over 5 waits {0, 90, 80, 0, 0}: the 5th smallest.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.5, m.p99_wait_minutes, 1e-9);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), m.wide_jobs);  // j0 and j3
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, m.wide_max_wait_minutes, 1e-9);

    // 200 jobs, one of which waits: the 99th percentile ignores it, the
    // longest wait does not.
    std::vector<J> jobs;
    jobs.push_back({0, 1000, 1000, 4});
    jobs.push_back({1, 10, 10, 4});  // waits 999 s behind j0
    for (int i = 0; i < 198; ++i) jobs.push_back({Time(2000 + 100 * i), 10, 10, 1});
    const Workload w2 = workload(4, jobs);
    const Metrics m2 = compute_metrics(w2, Simulator(w2, sched("easy")).run());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(999.0 / 60.0, m2.max_wait_minutes, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, m2.p99_wait_minutes, 1e-9);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), m2.wide_jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(999.0 / 2 / 60.0, m2.wide_avg_wait_minutes, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(999.0 / 60.0, m2.wide_max_wait_minutes, 1e-9);
  }

  void testPerUser() {
    const Workload w = workload(4, {
        {0, 100, 100, 4, 7},
        {10, 50, 100, 2, 3},
        {20, 30, 60, 2, 7},
        {200, 10, 10, 1, kNoUser},
        {300, 5, 10, 1, 3},
    });
    const RunResult r = Simulator(w, sched("easy")).run();
    const Metrics m = compute_metrics(w, r);
    // Measured: j1 (user 3, 90 s), j2 (user 7, 80 s), j3 (no user).
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), m.users.size());
    CPPUNIT_ASSERT_EQUAL(UserId(3), m.users[0].user);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.users[0].jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.5, m.users[0].avg_wait_minutes, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(140.0 / 50.0, m.users[0].avg_bounded_slowdown, 1e-9);
    CPPUNIT_ASSERT_EQUAL(UserId(7), m.users[1].user);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(80.0 / 60.0, m.users[1].avg_wait_minutes, 1e-9);
    MetricsOptions no_users;
    no_users.per_user = false;
    CPPUNIT_ASSERT(compute_metrics(w, r, no_users).users.empty());
  }

  void testLoadFactors() {
    ShakeOptions o;
    o.copies = 4;
    o.band = 0.01;
    // Midpoints of four equal strata of [0.99, 1.01].
    const double want[] = {0.9925, 0.9975, 1.0025, 1.0075};
    for (unsigned i = 0; i < 4; ++i) CPPUNIT_ASSERT_DOUBLES_EQUAL(want[i], shake_load_factor(o, i), 1e-12);
    o.copies = 3;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, shake_load_factor(o, 1), 1e-12);
  }

  void testShakenCopyScalesLoad() {
    const Workload base = synthetic(3, 3000);
    ShakeOptions o;
    o.copies = 2;
    o.band = 0.05;
    const double l0 = offered_load(base.jobs, base.procs);
    for (unsigned i = 0; i < 2; ++i) {
      const Workload c = shaken_copy(base, o, i);
      CPPUNIT_ASSERT_EQUAL(base.jobs.size(), c.jobs.size());
      CPPUNIT_ASSERT_DOUBLES_EQUAL(l0 * shake_load_factor(o, i), offered_load(c.jobs, c.procs), l0 * 1e-4);
      CPPUNIT_ASSERT_EQUAL(base.jobs.front().submit, c.jobs.front().submit);
    }
  }

  void testJitter() {
    const Workload base = synthetic(3, 2000);
    ShakeOptions o;
    o.copies = 3;
    o.band = 0;
    o.jitter = 30;
    o.seed = 5;
    const Workload a = shaken_copy(base, o, 1), b = shaken_copy(base, o, 1), c = shaken_copy(base, o, 2);
    bool moved = false, differs = false;
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      CPPUNIT_ASSERT_EQUAL(a.jobs[i].submit, b.jobs[i].submit);  // same seed and copy: same
      if (i) CPPUNIT_ASSERT(a.jobs[i - 1].submit <= a.jobs[i].submit);  // still sorted
      differs |= a.jobs[i].submit != c.jobs[i].submit;
    }
    // Every job moved by at most 30 s (match jobs by id).
    std::vector<Time> orig(base.jobs.size() + 1);
    for (const Job& j : base.jobs) orig.at(j.id) = j.submit;
    for (const Job& j : a.jobs) {
      CPPUNIT_ASSERT(std::llabs(j.submit - orig.at(j.id)) <= 30 || (j.submit == 0 && orig.at(j.id) < 30));
      moved |= j.submit != orig.at(j.id);
    }
    CPPUNIT_ASSERT(moved);
    CPPUNIT_ASSERT(differs);
  }

  void testSpread() {
    const Spread s = spread_of({1.0, 2.0, 3.0});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0, s.mean, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, s.sd, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, s.min, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3.0, s.max, 1e-12);
    // t(0.975, 2 df) = 4.302653; half-width t * sd / sqrt(3).
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.302653 / std::sqrt(3.0), s.half_width(), 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0 - 4.302653 / std::sqrt(3.0), s.ci_low, 1e-6);
    // 10 values: t(0.975, 9 df) = 2.262157.
    std::vector<double> v(10);
    std::iota(v.begin(), v.end(), 1.0);
    const Spread t = spread_of(v);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(std::sqrt(110.0 / 12.0), t.sd, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.262157 * t.sd / std::sqrt(10.0), t.half_width(), 1e-5);
    const Spread one = spread_of({4.0});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.0, one.ci_low, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, one.sd, 0);
  }

  void testRunShakenIsPairedAndThreadIndependent() {
    const Workload base = synthetic(2, 1500);
    const std::vector<SchedulerConfig> cfgs = {sched("easy"), sched("easy++")};
    ShakeOptions o;
    o.copies = 3;
    o.band = 0.03;
    o.jitter = 20;
    o.threads = 1;
    const ShakeResult one = run_shaken(base, cfgs, o, MetricsOptions{});
    o.threads = 3;
    const ShakeResult three = run_shaken(base, cfgs, o, MetricsOptions{});
    CPPUNIT_ASSERT_EQUAL(1u, one.threads);
    CPPUNIT_ASSERT_EQUAL(3u, three.threads);
    for (std::size_t s = 0; s < cfgs.size(); ++s)
      for (unsigned i = 0; i < o.copies; ++i) {
        CPPUNIT_ASSERT_EQUAL(one.metrics[s][i].avg_wait_minutes, three.metrics[s][i].avg_wait_minutes);
        CPPUNIT_ASSERT_EQUAL(one.metrics[s][i].max_wait_minutes, three.metrics[s][i].max_wait_minutes);
        CPPUNIT_ASSERT(one.metrics[s][i].users.empty());
      }
    // Copy i is the same workload for every scheduler: replaying it by hand
    // under easy++ gives that scheduler's copy-i metrics.
    const Workload c1 = shaken_copy(base, o, 1);
    const Metrics direct = compute_metrics(c1, Simulator(c1, cfgs[1]).run());
    CPPUNIT_ASSERT_EQUAL(direct.avg_bounded_slowdown, one.metrics[1][1].avg_bounded_slowdown);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(offered_load(c1.jobs, c1.procs), one.offered_loads[1], 1e-12);
    // The copies differ from each other.
    CPPUNIT_ASSERT(one.metrics[0][0].avg_wait_minutes != one.metrics[0][2].avg_wait_minutes);
  }

  void testSeries() {
    const Workload w = synthetic(4, 2500);
    const RunResult r = Simulator(w, sched("easy++")).run();
    const MetricsOptions mo;
    const Metrics m = compute_metrics(w, r, mo);
    SeriesOptions so;
    so.points = 100;
    const RunSeries s = compute_series(w, r, mo, so);
    // The running average ends at the reported average.
    CPPUNIT_ASSERT(!s.running_bsld.empty() && s.running_bsld.size() <= 101);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(m.avg_bounded_slowdown, s.running_bsld.back().y, 1e-9);
    // CDF: 201 points, non-decreasing, the last is the longest measured wait.
    CPPUNIT_ASSERT_EQUAL(std::size_t(201), s.wait_cdf.size());
    for (std::size_t i = 1; i < s.wait_cdf.size(); ++i) CPPUNIT_ASSERT(s.wait_cdf[i - 1].x <= s.wait_cdf[i].x);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, s.wait_cdf.back().y, 0);
    CPPUNIT_ASSERT(s.wait_cdf.back().x <= m.max_wait_minutes + 1e-9);
    // Histogram counts the measured jobs.
    CPPUNIT_ASSERT_EQUAL(m.jobs_measured, std::accumulate(s.accuracy_hist.begin(), s.accuracy_hist.end(),
                                                          std::uint64_t(0)));
    // Queue: the time integral of the waiting jobs is the sum of the waits.
    CPPUNIT_ASSERT_EQUAL(std::size_t(100), s.queue_length.size());
    double integral = 0, waits = 0;
    const double width_days = 2 * s.queue_length.front().x;
    for (const auto& p : s.queue_length) integral += p.y * width_days * 86400.0;
    for (std::size_t i = 0; i < w.jobs.size(); ++i) waits += double(r.jobs[i].start - w.jobs[i].submit);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(waits, integral, waits * 1e-9 + 1e-6);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ShakeTest);
