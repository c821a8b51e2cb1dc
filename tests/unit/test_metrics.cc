// The metrics of spec section 5, on hand-computed schedules.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

class MetricsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MetricsTest);
  CPPUNIT_TEST(testBoundedSlowdown);
  CPPUNIT_TEST(testAccuracy);
  CPPUNIT_TEST(testAccuracySum);
  CPPUNIT_TEST(testHandComputedRun);
  CPPUNIT_TEST(testCategoryThresholds);
  CPPUNIT_TEST(testTimeWeightedAccuracyAndCorrections);
  CPPUNIT_TEST(testPredictabilityLate);
  CPPUNIT_TEST(testFlurryExclusion);
  CPPUNIT_TEST_SUITE_END();

  // 4 processors, easy. Starts: 0, 100, 100, 200, 300.
  // j0 terminates first (warm-up, 1% of 5 rounds up to 1 job); j4 ends after
  // the last arrival (cool-down). Measured: j1, j2, j3.
  static Workload small() {
    return workload(4, {
        {0, 100, 100, 4},
        {10, 50, 100, 2},
        {20, 30, 60, 2},
        {200, 10, 10, 1},
        {300, 5, 10, 1},
    });
  }

 public:
  void testBoundedSlowdown() {
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3.0, bounded_slowdown(100, 50), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, bounded_slowdown(0, 50), 1e-12);
    // Short jobs are bounded by 10 s.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.1, bounded_slowdown(20, 1), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, bounded_slowdown(2, 1), 1e-12);
  }
  // The accuracy integral in integers: the same in any order, and the
  // integral of prediction_accuracy() to within rounding.
  void testAccuracySum() {
    std::uint64_t x = 88172645463325252ull;
    auto next = [&] {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x;
    };
    for (const Time r : {Time(1), Time(37), Time(3600), Time(400000), Time(0)}) {
      std::vector<std::pair<Time, Time>> seg;  // (p, dt)
      for (int i = 0; i < 2000; ++i)
        seg.push_back({Time(next() % 800000) - 5, Time(next() % 100000)});
      AccuracySum fwd, rev;
      double plain = 0;
      for (const auto& [p, dt] : seg) {
        fwd.add(p, r, dt);
        plain += prediction_accuracy(p, r) * double(dt);
      }
      for (auto it = seg.rbegin(); it != seg.rend(); ++it) rev.add(it->first, r, it->second);
      CPPUNIT_ASSERT(fwd.a == rev.a && fwd.b == rev.b);
      CPPUNIT_ASSERT_EQUAL(fwd.integral(r), rev.integral(r));
      CPPUNIT_ASSERT_DOUBLES_EQUAL(plain, fwd.integral(r), 1e-9 * std::max(1.0, plain));
      // A sum taken out first and added back later (the simulator's groups).
      AccuracySum out;
      out.a -= fwd.a;
      out.b -= fwd.b;
      out.a += fwd.a;
      out.b += fwd.b;
      CPPUNIT_ASSERT(out.a == 0 && out.b == 0);
    }
    AccuracySum z;  // r = 0: only p == 0 counts
    z.add(0, 0, 10);
    z.add(5, 0, 30);
    CPPUNIT_ASSERT_EQUAL(10.0, z.integral(0));
  }
  void testAccuracy() {
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, prediction_accuracy(50, 50), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, prediction_accuracy(100, 50), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25, prediction_accuracy(25, 100), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, prediction_accuracy(10, 0), 1e-12);
    // Edges: a zero runtime predicted as zero is exact; a non-positive
    // value otherwise scores 0.
    CPPUNIT_ASSERT_EQUAL(1.0, prediction_accuracy(0, 0));
    CPPUNIT_ASSERT_EQUAL(0.0, prediction_accuracy(0, 10));
    CPPUNIT_ASSERT_EQUAL(0.0, prediction_accuracy(-5, 10));
    // Bit for bit the quotient of the smaller by the larger (the reports
    // and the accounting's sums depend on it to the last digit).
    for (Time p : {1, 3, 7, 59, 600, 3601, 86399, 1234567})
      for (Time r : {1, 2, 7, 60, 601, 3600, 86400, 7654321}) {
        const double want = p > r ? double(r) / double(p) : double(p) / double(r);
        CPPUNIT_ASSERT_EQUAL(want, prediction_accuracy(p, r));
      }
  }
  void testHandComputedRun() {
    const Workload w = small();
    const RunResult r = Simulator(w, sched("easy")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 100, 200, 300}) == starts(r));
    const Metrics m = compute_metrics(w, r);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(5), m.jobs_simulated);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), m.jobs_measured);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.jobs_after_last_arrival);  // j4
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.5, m.max_wait_minutes, 1e-9);         // j1, 90 s
    CPPUNIT_ASSERT_DOUBLES_EQUAL(170.0 / 3.0 / 60.0, m.avg_wait_minutes, 1e-9);  // (90+80+0)/3 s
    CPPUNIT_ASSERT_DOUBLES_EQUAL((140.0 / 50.0 + 110.0 / 30.0 + 1.0) / 3.0, m.avg_bounded_slowdown, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(200.0 / 3.0, m.avg_accuracy_percent, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL((140.0 + 110.0 + 10.0) / 3.0 / 60.0, m.avg_response_minutes, 1e-9);
    CPPUNIT_ASSERT_EQUAL(Time(100), m.window_start);
    CPPUNIT_ASSERT_EQUAL(Time(300), m.window_end);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(170.0 / 800.0, m.utilization, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(10.0 / 800.0, m.offered_load, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, m.corrections_per_job, 1e-12);
    // Only j1 waited as the head with a reservation (at 100, started at 100).
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.predictability.reserved_jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0 / 3.0, m.predictability.rate_percent, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, m.predictability.mean_abs_dev_minutes, 1e-12);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), m.predictability.late_jobs);
    CPPUNIT_ASSERT_EQUAL(std::size_t(4), m.categories.size());
    CPPUNIT_ASSERT_EQUAL(std::string("short-narrow"), m.categories[0].name);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), m.categories[0].jobs);
  }
  void testCategoryThresholds() {
    const Workload w = small();
    const RunResult r = Simulator(w, sched("easy")).run();
    MetricsOptions o;
    o.narrow_threshold = 1;
    o.short_threshold = 40;
    const Metrics m = compute_metrics(w, r, o);
    // j1: 50 s, 2 procs -> long-wide; j2: 30 s, 2 -> short-wide; j3: 10 s, 1 -> short-narrow.
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.categories[0].jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.categories[1].jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), m.categories[2].jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.categories[3].jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(90.0 / 60.0, m.categories[3].avg_wait_minutes, 1e-9);
  }
  void testTimeWeightedAccuracyAndCorrections() {
    // L is predicted 10 s, runs 1000 s, corrected to its estimate 2000 at
    // t=30: accuracy 0.01 for 10 s then 0.5 for 990 s.
    const Workload w = workload(10, {
        {0, 10, 100, 1, 1},
        {0, 10, 100, 1, 1},
        {20, 1000, 2000, 5, 1},
    });
    const RunResult r = Simulator(w, sched("easy++")).run();
    CPPUNIT_ASSERT_DOUBLES_EQUAL((0.01 * 10 + 0.5 * 990) / 1000.0, r.jobs[2].accuracy, 1e-12);
    CPPUNIT_ASSERT_EQUAL(1u, r.jobs[2].corrections);
    // Waiting time counts too: from submission to termination.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.1, r.jobs[0].accuracy, 1e-12);
    MetricsOptions o;
    o.warmup_fraction = 0;
    const Workload w2 = workload(10, {
        {0, 10, 100, 1, 1},
        {0, 10, 100, 1, 1},
        {20, 1000, 2000, 5, 1},
        {5000, 0, 1, 1, 2},
    });
    const Metrics m = compute_metrics(w2, Simulator(w2, sched("easy++")).run(), o);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(4), m.jobs_measured);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25, m.corrections_per_job, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(std::sqrt(0.25 - 0.0625), m.corrections_stddev, 1e-12);
  }
  void testPredictabilityLate() {
    // With predictions, the head's first reservation is L's predicted end
    // (30), but it really starts at 1020: late by 990 s = 16.5 min.
    const Workload w = workload(10, {
        {0, 10, 100, 1, 1},
        {0, 10, 100, 1, 1},
        {20, 1000, 2000, 5, 1},
        {25, 100, 100, 10, 2},
        {40, 50, 60, 2, 3},
        {100000, 1, 1, 1, 4},
    });
    MetricsOptions o;
    o.warmup_fraction = 0;
    const RunResult r = Simulator(w, sched("easy++")).run();
    const Metrics m = compute_metrics(w, r, o);
    CPPUNIT_ASSERT_EQUAL(Time(30), r.jobs[3].first_reservation);
    CPPUNIT_ASSERT_EQUAL(Time(1020), r.jobs[3].start);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.predictability.reserved_jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), m.predictability.late_jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(16.5, m.predictability.late_mean_minutes, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(16.5, m.predictability.median_abs_dev_minutes, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0, m.predictability.late_rate_percent, 1e-9);
  }
  void testFlurryExclusion() {
    Workload w = small();
    w.jobs[1].flurry = true;
    const RunResult r = Simulator(w, sched("easy")).run();
    MetricsOptions o;
    o.exclude_flurries = true;
    const Metrics m = compute_metrics(w, r, o);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), m.jobs_measured);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(40.0 / 60.0, m.avg_wait_minutes, 1e-9);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MetricsTest);
