// Every predictor parameter (spec section 3), on hand-computed histories.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "easypp/config.h"
#include "easypp/predictor.h"
#include "easypp/sim/simulator.h"
#include "sim_fixtures.h"

using namespace easypp;

class PredictorTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PredictorTest);
  CPPUNIT_TEST(testDefaultAverageOfLastTwo);
  CPPUNIT_TEST(testFallbackWithoutHistory);
  CPPUNIT_TEST(testCappedAtEstimateAndAtLeastOne);
  CPPUNIT_TEST(testWindow);
  CPPUNIT_TEST(testMetrics);
  CPPUNIT_TEST(testMedianMatchesSort);
  CPPUNIT_TEST(testImmediate);
  CPPUNIT_TEST(testExtended);
  CPPUNIT_TEST(testPartial);
  CPPUNIT_TEST(testRelativeFallback);
  CPPUNIT_TEST(testUsersAreSeparate);
  CPPUNIT_TEST(testSnapshotRestore);
  CPPUNIT_TEST(testBoundedMemory);
  CPPUNIT_TEST(testPropagation);
  CPPUNIT_TEST(testValidate);
  CPPUNIT_TEST(testEwma);
  CPPUNIT_TEST(testEwmaHalfOverTwoIsThePapersAverage);
  CPPUNIT_TEST(testRegression);
  CPPUNIT_TEST(testRegressionClampsTheSlope);
  CPPUNIT_TEST(testNewPredictorsShareTheGating);
  CPPUNIT_TEST(testPredictorKnobs);
  CPPUNIT_TEST(testNewPredictorsFromRestoredRings);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testDefaultAverageOfLastTwo() {
    Predictor p;
    p.record(7, 100, 1000);
    p.record(7, 200, 1000);
    p.record(7, 301, 1000);
    // (200 + 301) / 2 = 250.5, rounded up to whole seconds.
    CPPUNIT_ASSERT_EQUAL(Time(251), p.predict(7, 1000));
  }
  void testFallbackWithoutHistory() {
    Predictor p;
    CPPUNIT_ASSERT_EQUAL(Time(3600), p.predict(7, 3600));
    p.record(7, 100, 1000);  // one job is not enough for a full window of 2
    CPPUNIT_ASSERT_EQUAL(Time(3600), p.predict(7, 3600));
    CPPUNIT_ASSERT(!p.has_history_for(7, 3600));
    p.record(7, 100, 1000);
    CPPUNIT_ASSERT(p.has_history_for(7, 3600));
    // Jobs without a user id share no history.
    p.record(kNoUser, 5, 10);
    p.record(kNoUser, 5, 10);
    CPPUNIT_ASSERT_EQUAL(Time(3600), p.predict(kNoUser, 3600));
  }
  void testCappedAtEstimateAndAtLeastOne() {
    Predictor p;
    p.record(1, 5000, 6000);
    p.record(1, 5000, 6000);
    CPPUNIT_ASSERT_EQUAL(Time(600), p.predict(1, 600));  // never above the estimate
    p.record(1, 0, 6000);
    p.record(1, 0, 6000);
    CPPUNIT_ASSERT_EQUAL(Time(1), p.predict(1, 600));  // at least one second
  }
  void testWindow() {
    PredictorConfig c;
    c.window = 3;
    Predictor p(c);
    for (Time r : {10, 20, 30, 40}) p.record(1, r, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(30), p.predict(1, 1000));  // (20+30+40)/3
    c.window = 1;
    Predictor q(c);
    for (Time r : {10, 20, 30, 40}) q.record(1, r, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(40), q.predict(1, 1000));
    // The history view is bounded by the window, oldest first.
    const auto h = p.history(1);
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), h.size());
    CPPUNIT_ASSERT_EQUAL(Time(20), h[0].runtime);
    CPPUNIT_ASSERT_EQUAL(Time(40), h[2].runtime);
  }
  void testMetrics() {
    auto with = [](Metric m) {
      PredictorConfig c;
      c.window = 4;
      c.metric = m;
      Predictor p(c);
      for (Time r : {10, 100, 40, 70}) p.record(1, r, 1000);
      return p.predict(1, 1000);
    };
    CPPUNIT_ASSERT_EQUAL(Time(55), with(Metric::Avg));     // 220 / 4
    CPPUNIT_ASSERT_EQUAL(Time(55), with(Metric::Median));  // (40 + 70) / 2
    CPPUNIT_ASSERT_EQUAL(Time(10), with(Metric::Min));
    CPPUNIT_ASSERT_EQUAL(Time(100), with(Metric::Max));
    PredictorConfig c;
    c.window = 3;
    c.metric = Metric::Median;
    Predictor p(c);
    for (Time r : {10, 100, 40}) p.record(1, r, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(40), p.predict(1, 1000));
  }
  // The median (kept as a sorted window, one removal and one insertion per
  // record) is the median of the sorted window, and the average, the least
  // and the largest are theirs, after every record, for
  // every window size (odd and even), ties, both roundings, both history
  // types that keep rings, and a predictor restored from a snapshot midway.
  void testMedianMatchesSort() {
    std::mt19937 rng(5);
    for (int round = 0; round < 600; ++round) {
      PredictorConfig c;
      c.window = 1 + int(rng() % PredictorConfig::kMaxWindow);
      // Mostly the median; the others read the ring in place.
      const Metric metrics[] = {Metric::Median, Metric::Median, Metric::Avg, Metric::Min, Metric::Max};
      c.metric = metrics[rng() % 5];
      c.round_up = rng() % 2 == 0;
      c.fullness = rng() % 2 == 0 ? Fullness::Full : Fullness::Partial;
      c.type = round % 4 == 1 ? HistoryType::Extended : HistoryType::All;
      Predictor p(c);
      std::optional<Predictor> restored;
      std::map<Time, std::vector<Time>> last;  // estimate -> runtimes, oldest first
      const int records = 1 + int(rng() % 70);
      const int restore_at = int(rng() % 70);
      for (int i = 0; i < records; ++i) {
        const Time r = 1 + Time(rng() % (round % 3 == 0 ? 5 : 100000));  // ties often
        const Time e = c.type == HistoryType::Extended && rng() % 3 == 0 ? 2000000 : 1000000;
        p.record(1, r, e);
        if (restored) restored->record(1, r, e);
        if (i == restore_at) {
          restored.emplace(c);
          restored->restore(p.snapshot());
        }
        last[e].push_back(r);
        for (const Time est : {Time(1000000), Time(2000000)}) {
          if (c.type == HistoryType::All && est != 1000000) continue;  // (one estimate only)
          const std::vector<Time>& h = last[est];
          if (h.empty() || (c.fullness == Fullness::Full && int(h.size()) < c.window)) continue;
          const std::size_t n = std::min(h.size(), std::size_t(c.window));
          std::vector<Time> w(h.end() - std::ptrdiff_t(n), h.end());
          std::sort(w.begin(), w.end());
          Time want = n % 2 == 1 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2] + (c.round_up ? 1 : 0)) / 2;
          if (c.metric == Metric::Min) want = w.front();
          if (c.metric == Metric::Max) want = w.back();
          if (c.metric == Metric::Avg) {
            Time sum = 0;
            for (Time x : w) sum += x;
            want = (sum + (c.round_up ? Time(n) - 1 : 0)) / Time(n);
          }
          const std::string at = "round " + std::to_string(round) + ", record " + std::to_string(i);
          CPPUNIT_ASSERT_EQUAL_MESSAGE(at + " " + to_string(c.metric), std::min(want, est), p.predict(1, est));
          if (restored) CPPUNIT_ASSERT_EQUAL_MESSAGE(at + " (restored)", std::min(want, est), restored->predict(1, est));
        }
      }
    }
  }
  void testImmediate() {
    PredictorConfig c;
    c.type = HistoryType::Immediate;
    Predictor p(c);
    p.record(1, 100, 1000);
    p.record(1, 200, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(150), p.predict(1, 1000));
    // A job with another estimate: the last two do not match -> fallback.
    CPPUNIT_ASSERT_EQUAL(Time(2000), p.predict(1, 2000));
    p.record(1, 300, 2000);  // now the last two have different estimates
    CPPUNIT_ASSERT_EQUAL(Time(1000), p.predict(1, 1000));
    // ... the newest one's included: matching it alone is not enough.
    CPPUNIT_ASSERT_EQUAL(Time(2000), p.predict(1, 2000));
    p.record(1, 400, 2000);  // the last two match again
    CPPUNIT_ASSERT_EQUAL(Time(350), p.predict(1, 2000));
  }
  void testExtended() {
    PredictorConfig c;
    c.type = HistoryType::Extended;
    Predictor p(c);
    p.record(1, 100, 1000);
    p.record(1, 300, 1000);
    p.record(1, 5, 60);
    p.record(1, 7, 60);
    p.record(1, 9, 60);
    // Same-estimate history, however old.
    CPPUNIT_ASSERT_EQUAL(Time(200), p.predict(1, 1000));
    CPPUNIT_ASSERT_EQUAL(Time(8), p.predict(1, 60));
    CPPUNIT_ASSERT_EQUAL(Time(500), p.predict(1, 500));  // no such estimate yet
  }
  void testPartial() {
    PredictorConfig c;
    c.window = 5;
    c.fullness = Fullness::Partial;
    Predictor p(c);
    CPPUNIT_ASSERT_EQUAL(Time(1000), p.predict(1, 1000));  // nothing at all: fallback
    p.record(1, 100, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(100), p.predict(1, 1000));
    p.record(1, 201, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(151), p.predict(1, 1000));
    c.fullness = Fullness::Full;
    Predictor q(c);
    q.record(1, 100, 1000);
    q.record(1, 200, 1000);
    CPPUNIT_ASSERT_EQUAL(Time(1000), q.predict(1, 1000));
  }
  void testRelativeFallback() {
    PredictorConfig c;
    c.type = HistoryType::Immediate;
    c.fallback = Fallback::Relative;
    Predictor p(c);
    p.record(1, 100, 1000);  // ratio 0.1
    p.record(1, 150, 500);   // ratio 0.3
    // Estimates differ -> immediate falls back; relative: 2000 * 0.2 = 400.
    CPPUNIT_ASSERT_EQUAL(Time(400), p.predict(1, 2000));
    // No history for the user: plain estimate.
    CPPUNIT_ASSERT_EQUAL(Time(2000), p.predict(2, 2000));
    // A runtime absurdly beyond its estimate: capped, no overflow.
    p.record(3, Time(1) << 40, 1);
    CPPUNIT_ASSERT_EQUAL(Time(1) << 40, p.predict(3, Time(1) << 40));
  }
  void testUsersAreSeparate() {
    Predictor p;
    p.record(1, 10, 100);
    p.record(1, 10, 100);
    p.record(2, 50, 100);
    p.record(2, 70, 100);
    CPPUNIT_ASSERT_EQUAL(Time(10), p.predict(1, 100));
    CPPUNIT_ASSERT_EQUAL(Time(60), p.predict(2, 100));
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), p.users());
  }
  void testSnapshotRestore() {
    PredictorConfig c;
    c.type = HistoryType::Extended;
    c.window = 3;
    Predictor p(c);
    for (Time r : {1, 2, 3, 4, 5}) p.record(9, r * 10, 100);
    p.record(9, 77, 200);
    Predictor q(c);
    q.restore(p.snapshot());
    CPPUNIT_ASSERT_EQUAL(p.predict(9, 100), q.predict(9, 100));
    CPPUNIT_ASSERT_EQUAL(p.predict(9, 200), q.predict(9, 200));
    CPPUNIT_ASSERT_EQUAL(Time(40), q.predict(9, 100));  // (30+40+50)/3
    // Restoring into a smaller window keeps the most recent entries.
    c.window = 1;
    Predictor s(c);
    s.restore(p.snapshot());
    CPPUNIT_ASSERT_EQUAL(Time(50), s.predict(9, 100));
  }
  void testBoundedMemory() {
    Predictor p;
    for (int i = 0; i < 10000; ++i) p.record(1, i, 100000);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), p.history(1).size());
    CPPUNIT_ASSERT_EQUAL(Time((9998 + 9999 + 1) / 2), p.predict(1, 100000));
  }
  void testPropagation() {
    // User 1: two short jobs finish at t=10 while a third waits behind a
    // full machine. With propagation its prediction drops to 10 at t=10;
    // without, it keeps the estimate it was given at submission.
    using namespace easypp::testing;
    const Workload w = workload(2, {
        {0, 10, 100, 1, 1},
        {0, 10, 100, 1, 1},
        {1, 10, 500, 2, 1},
    });
    struct Watch : SimObserver {
      Time seen = -1;
      void on_start(const SimView& v, JobHandle h, Time, bool) override {
        if (h == 2) seen = v.prediction(h);
      }
    };
    Watch a, b;
    Simulator(w, sched("easy++:propagation=yes")).run(&a);
    Simulator(w, sched("easy++:propagation=no")).run(&b);
    CPPUNIT_ASSERT_EQUAL(Time(10), a.seen);
    CPPUNIT_ASSERT_EQUAL(Time(500), b.seen);
  }
  void testValidate() {
    PredictorConfig c;
    c.window = 0;
    CPPUNIT_ASSERT(!c.validate().empty());
    c.window = 31;
    CPPUNIT_ASSERT(!c.validate().empty());
    c.window = 30;
    CPPUNIT_ASSERT(c.validate().empty());
  }

  // predictor=ewma: s = r_oldest, then s = a * r + (1 - a) * s, rounded up.
  void testEwma() {
    PredictorConfig c;
    c.kind = PredictorKind::Ewma;
    c.window = 4;
    c.ewma_alpha = 0.25;
    Predictor p(c);
    for (Time r : {1000, 100, 200, 400}) p.record(3, r, 5000);  // 1000 is the oldest
    // 1000 -> 0.25*100 + 0.75*1000 = 775 -> 0.25*200 + 0.75*775 = 631.25
    // -> 0.25*400 + 0.75*631.25 = 573.4375 -> 574
    CPPUNIT_ASSERT_EQUAL(Time(574), p.predict(3, 5000));
    p.record(3, 600, 5000);  // the window slides: 100 200 400 600
    // 100 -> 125 -> 193.75 -> 295.3125 -> 296
    CPPUNIT_ASSERT_EQUAL(Time(296), p.predict(3, 5000));
    // alpha = 1: the last runtime alone; capped at the estimate.
    c.ewma_alpha = 1;
    Predictor q(c);
    for (Time r : {10, 20, 30, 4000}) q.record(3, r, 5000);
    CPPUNIT_ASSERT_EQUAL(Time(4000), q.predict(3, 5000));
    CPPUNIT_ASSERT_EQUAL(Time(3000), q.predict(3, 3000));
  }

  // With alpha 0.5 over a window of two the moving average is the paper's
  // average of the last two, rounding included: same predictions on random
  // histories (and the same replay).
  void testEwmaHalfOverTwoIsThePapersAverage() {
    PredictorConfig e;
    e.kind = PredictorKind::Ewma;
    e.ewma_alpha = 0.5;
    Predictor paper, ewma(e);
    std::uint64_t x = 12345;
    auto next = [&x] { return x = x * 6364136223846793005ULL + 1442695040888963407ULL; };
    for (int i = 0; i < 5000; ++i) {
      const UserId u = UserId(next() >> 60);
      const Time est = 60 + Time(next() >> 44);
      const Time run = Time(next() >> 43);
      CPPUNIT_ASSERT_EQUAL(paper.predict(u, est), ewma.predict(u, est));
      paper.record(u, run, est);
      ewma.record(u, run, est);
    }
  }

  // predictor=regression: runtime = a + b * estimate by least squares over
  // the window, evaluated at the new job's estimate.
  void testRegression() {
    PredictorConfig c;
    c.kind = PredictorKind::Regression;
    c.window = 3;
    Predictor p(c);
    p.record(5, 100, 200);
    p.record(5, 300, 600);
    p.record(5, 500, 1000);  // runtime = estimate / 2 exactly
    CPPUNIT_ASSERT_EQUAL(Time(400), p.predict(5, 800));
    CPPUNIT_ASSERT_EQUAL(Time(1000), p.predict(5, 2000));
    // Below the fitted range the line still holds, and never below 1 s.
    CPPUNIT_ASSERT_EQUAL(Time(50), p.predict(5, 100));
    // One distinct estimate: flat at the mean runtime (here 200).
    Predictor q(c);
    for (Time r : {100, 200, 300}) q.record(6, r, 3600);
    CPPUNIT_ASSERT_EQUAL(Time(200), q.predict(6, 3600));
    CPPUNIT_ASSERT_EQUAL(Time(200), q.predict(6, 7200));
    // A noisy fit: x = 100, 200, 300, y = 50, 40, 120: b = 0.35,
    // a = 70 - 0.35 * 200 = 0 -> 0.35 * 1000 = 350.
    Predictor r(c);
    r.record(7, 50, 100);
    r.record(7, 40, 200);
    r.record(7, 120, 300);
    CPPUNIT_ASSERT_EQUAL(Time(350), r.predict(7, 1000));
  }

  void testRegressionClampsTheSlope() {
    PredictorConfig c;
    c.kind = PredictorKind::Regression;
    c.window = 2;
    // Runtimes falling as estimates grow: slope 0, the mean (150).
    Predictor p(c);
    p.record(1, 200, 1000);
    p.record(1, 100, 2000);
    CPPUNIT_ASSERT_EQUAL(Time(150), p.predict(1, 5000));
    // Runtimes growing faster than estimates (slope 3): clamped to 1, the
    // line through the means (1500, 1500): 1500 + 1 * (3000 - 1500).
    Predictor q(c);
    q.record(1, 0, 1000);
    q.record(1, 3000, 2000);
    CPPUNIT_ASSERT_EQUAL(Time(3000), q.predict(1, 3000));
    // Never above the estimate, never below one second.
    CPPUNIT_ASSERT_EQUAL(Time(1400), q.predict(1, 1400));
    Predictor z(c);
    z.record(1, 0, 100);
    z.record(1, 0, 200);
    CPPUNIT_ASSERT_EQUAL(Time(1), z.predict(1, 50));
  }

  // window, fullness, history type and fallback mean the same for every
  // predictor: which of the user's jobs are used, and when there are enough.
  void testNewPredictorsShareTheGating() {
    for (PredictorKind k : {PredictorKind::Ewma, PredictorKind::Regression}) {
      PredictorConfig c;
      c.kind = k;
      c.window = 3;
      Predictor full(c);
      full.record(1, 100, 1000);
      full.record(1, 100, 1000);
      CPPUNIT_ASSERT(!full.has_history_for(1, 1000));
      CPPUNIT_ASSERT_EQUAL(Time(1000), full.predict(1, 1000));  // the estimate
      full.record(1, 100, 1000);
      CPPUNIT_ASSERT(full.has_history_for(1, 1000));
      CPPUNIT_ASSERT_EQUAL(Time(100), full.predict(1, 1000));
      c.fullness = Fullness::Partial;
      c.fallback = Fallback::Relative;
      Predictor part(c);
      CPPUNIT_ASSERT_EQUAL(Time(900), part.predict(1, 900));
      part.record(1, 100, 1000);
      bool used = false;
      CPPUNIT_ASSERT_EQUAL(Time(100), part.predict(1, 1000, &used));
      CPPUNIT_ASSERT(used);
      c.fullness = Fullness::Full;
      c.type = HistoryType::Extended;
      Predictor ext(c);
      for (int i = 0; i < 3; ++i) ext.record(1, 50, 500);
      for (int i = 0; i < 3; ++i) ext.record(1, 900, 1000);
      CPPUNIT_ASSERT_EQUAL(Time(50), ext.predict(1, 500));
      CPPUNIT_ASSERT_EQUAL(Time(900), ext.predict(1, 1000));
      // Relative fallback with no same-estimate ring: ratio of the user's ring.
      CPPUNIT_ASSERT(!ext.has_history_for(1, 2000));
    }
  }

  void testPredictorKnobs() {
    SchedulerConfig c = *preset("easy++");
    CPPUNIT_ASSERT_EQUAL(std::string("history"), knob_value(c, "predictor"));
    CPPUNIT_ASSERT(apply_knob(c, "predictor", "ewma").empty());
    CPPUNIT_ASSERT(c.predictor.kind == PredictorKind::Ewma);
    CPPUNIT_ASSERT(apply_knob(c, "ewma-alpha", "0.3").empty());
    CPPUNIT_ASSERT_EQUAL(0.3, c.predictor.ewma_alpha);
    CPPUNIT_ASSERT_EQUAL(std::string("0.3"), knob_value(c, "ewma-alpha"));
    for (const char* bad : {"0", "-0.1", "1.01", "x", "", "nan", "inf", "0.5x"})
      CPPUNIT_ASSERT_MESSAGE(bad, !apply_knob(c, "ewma-alpha", bad).empty());
    CPPUNIT_ASSERT_EQUAL(0.3, c.predictor.ewma_alpha);  // unchanged by bad values
    CPPUNIT_ASSERT(!apply_knob(c, "predictor", "lstm").empty());
    CPPUNIT_ASSERT_EQUAL(std::string("bad value 'lstm' for predictor (expected history, ewma or regression)"),
                         apply_knob(c, "predictor", "lstm"));
    // Round trip of every knob's rendering, odd alphas included.
    c.predictor.ewma_alpha = 0.123456789012;
    for (const auto& [k, v] : knob_values(c)) {
      SchedulerConfig d = c;
      CPPUNIT_ASSERT(apply_knob(d, k, v).empty());
      CPPUNIT_ASSERT(d.predictor.same_predictions_as(c.predictor));
    }
    // describe(): the default reads as before; a predictor's own knobs only.
    CPPUNIT_ASSERT(preset("easy++")->describe().find("predictor") == std::string::npos);
    CPPUNIT_ASSERT(preset("easy++")->describe().find("ewma") == std::string::npos);
    const std::string d = c.describe();
    CPPUNIT_ASSERT(d.find("predictor=ewma") != std::string::npos);
    CPPUNIT_ASSERT(d.find("ewma-alpha=0.123456789012") != std::string::npos);
    CPPUNIT_ASSERT(d.find("metric=") == std::string::npos);
    std::string err;
    auto r = parse_scheduler_spec("easy++:predictor=regression:window=8", {}, &err);
    CPPUNIT_ASSERT_MESSAGE(err, r.has_value());
    CPPUNIT_ASSERT(r->predictor.kind == PredictorKind::Regression);
    CPPUNIT_ASSERT(r->describe().find("ewma-alpha") == std::string::npos);
  }

  // The plugin restores rings from its state file: the new predictors are
  // computed from those rings alone, so they predict the same after a restore.
  void testNewPredictorsFromRestoredRings() {
    for (PredictorKind k : {PredictorKind::Ewma, PredictorKind::Regression}) {
      PredictorConfig c;
      c.kind = k;
      c.window = 6;
      c.ewma_alpha = 0.4;
      Predictor p(c);
      for (int i = 0; i < 40; ++i) p.record(UserId(i % 3), 60 + 37 * i, 600 + 600 * (i % 4));
      Predictor q(c);
      q.restore(p.snapshot());
      for (UserId u = 0; u < 4; ++u)
        for (Time e : {600, 1200, 1800, 2400, 5000})
          CPPUNIT_ASSERT_EQUAL(p.predict(u, e), q.predict(u, e));
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PredictorTest);
