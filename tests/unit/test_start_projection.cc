// Projected starts beyond the head (plugin/start_projection.h): the CPU pool
// over time, placement in queue order, reservations and expired predictions.
#include <cppunit/extensions/HelperMacros.h>

#include <random>
#include <vector>

#include "start_projection.h"

using namespace easypp;
using namespace easypp::plugin;

class StartProjectionTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StartProjectionTest);
  CPPUNIT_TEST(testFreeNowStartsNow);
  CPPUNIT_TEST(testWaitsForReleases);
  CPPUNIT_TEST(testQueuesBehindEarlierJobsAndTheHead);
  CPPUNIT_TEST(testFillsAHoleBeforeAHold);
  CPPUNIT_TEST(testExpiredPredictionReleasesJustAfterNow);
  CPPUNIT_TEST(testTooWideIsNever);
  CPPUNIT_TEST(testRandomAgainstBruteForce);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testFreeNowStartsNow() {
    StartProjection p(1000, 8, 3);
    CPPUNIT_ASSERT_EQUAL(Time(1000), p.place(3, 60));
    CPPUNIT_ASSERT_EQUAL(Time(1060), p.earliest(1, 10));  // nothing else comes back
  }

  void testWaitsForReleases() {
    StartProjection p(0, 8, 2);
    p.release(100, 4);
    p.release(50, 2);
    CPPUNIT_ASSERT_EQUAL(Time(0), p.earliest(2, 1000));
    CPPUNIT_ASSERT_EQUAL(Time(50), p.earliest(4, 1000));
    CPPUNIT_ASSERT_EQUAL(Time(100), p.earliest(8, 10));
  }

  void testQueuesBehindEarlierJobsAndTheHead() {
    // 8 CPUs, 6 busy until 100; the head (8) reserved at 100 for 50 s.
    StartProjection p(0, 8, 2);
    p.release(100, 6);
    p.hold(100, 150, 8);
    CPPUNIT_ASSERT_EQUAL(Time(150), p.place(4, 30));   // after the head
    CPPUNIT_ASSERT_EQUAL(Time(150), p.place(4, 30));   // beside it
    CPPUNIT_ASSERT_EQUAL(Time(180), p.place(6, 10));   // behind both
  }

  void testFillsAHoleBeforeAHold() {
    StartProjection p(0, 8, 2);
    p.release(100, 6);
    p.hold(100, 150, 8);
    CPPUNIT_ASSERT_EQUAL(Time(0), p.place(2, 100));    // ends as the head starts
    CPPUNIT_ASSERT_EQUAL(Time(150), p.place(1, 101));  // would overlap the head
  }

  void testExpiredPredictionReleasesJustAfterNow() {
    StartProjection p(500, 4, 0);
    p.release(400, 4);  // planned end in the past, still running
    CPPUNIT_ASSERT_EQUAL(Time(501), p.earliest(4, 10));
  }

  void testTooWideIsNever() {
    StartProjection p(0, 4, 4);
    CPPUNIT_ASSERT_EQUAL(kNever, p.place(5, 10));
    CPPUNIT_ASSERT_EQUAL(Time(0), p.place(4, 10));  // nothing was held by the refusal
  }

  // earliest() against a second-by-second simulation of the same profile.
  void testRandomAgainstBruteForce() {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
      const int cap = 1 + int(rng() % 16), horizon = 400;
      const int busy = int(rng() % (cap + 1));
      StartProjection p(0, cap, cap - busy);
      std::vector<std::int64_t> free(horizon * 4, cap - busy);
      int left = busy;
      while (left > 0) {
        const int n = 1 + int(rng() % left), at = 1 + int(rng() % horizon);
        p.release(at, n);
        for (std::size_t t = std::size_t(at); t < free.size(); ++t) free[t] += n;
        left -= n;
      }
      for (int k = 0; k < 8; ++k) {
        const int cpus = 1 + int(rng() % cap), dur = 1 + int(rng() % 100);
        Time want = kNever;
        for (int t = 0; t + dur < int(free.size()) && want == kNever; ++t) {
          bool ok = true;
          for (int u = t; u < t + dur && ok; ++u) ok = free[std::size_t(u)] >= cpus;
          if (ok) want = t;
        }
        const Time got = p.place(cpus, dur);
        CPPUNIT_ASSERT_EQUAL_MESSAGE("round " + std::to_string(round), want, got);
        for (int u = int(got); u < int(got) + dur; ++u) free[std::size_t(u)] -= cpus;
      }
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StartProjectionTest);
