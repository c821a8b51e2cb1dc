// Every predictor parameter (spec section 3), on hand-computed histories.
#include <cppunit/extensions/HelperMacros.h>

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
  CPPUNIT_TEST(testImmediate);
  CPPUNIT_TEST(testExtended);
  CPPUNIT_TEST(testPartial);
  CPPUNIT_TEST(testRelativeFallback);
  CPPUNIT_TEST(testUsersAreSeparate);
  CPPUNIT_TEST(testSnapshotRestore);
  CPPUNIT_TEST(testBoundedMemory);
  CPPUNIT_TEST(testPropagation);
  CPPUNIT_TEST(testValidate);
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
};

CPPUNIT_TEST_SUITE_REGISTRATION(PredictorTest);
