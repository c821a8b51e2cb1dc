// The jobs an accounting limit holds back, cycle by cycle (plugin/limit_skips.h):
// what is skipped in a cycle, what is tried "start now only" in the next ones,
// and when a skip is logged (once, when it begins).
#include <cppunit/extensions/HelperMacros.h>

#include <string>

#include "limit_skips.h"

using easypp::plugin::LimitSkips;
using Why = LimitSkips::Why;

class LimitSkipsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LimitSkipsTest);
  CPPUNIT_TEST(testSkippedInItsCycleOnly);
  CPPUNIT_TEST(testLoggedOnceWhileItStaysSkipped);
  CPPUNIT_TEST(testLoggedAgainAfterAGap);
  CPPUNIT_TEST(testAnotherReasonIsLogged);
  CPPUNIT_TEST(testNoReserveIsNotSkipped);
  CPPUNIT_TEST(testSelectNodesRefusalIsStartNowOnlyNextCycles);
  CPPUNIT_TEST(testCounts);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSkippedInItsCycleOnly() {
    LimitSkips s;
    s.begin_cycle();
    CPPUNIT_ASSERT(!s.skipped(7));
    s.skip(7, Why::kPostSelect);
    CPPUNIT_ASSERT(s.skipped(7));
    CPPUNIT_ASSERT(!s.skipped(8));
    s.begin_cycle();  // limits are asked again in every cycle
    CPPUNIT_ASSERT(!s.skipped(7));
  }

  void testLoggedOnceWhileItStaysSkipped() {
    LimitSkips s;
    s.begin_cycle();
    CPPUNIT_ASSERT(s.skip(7, Why::kPostSelect));
    CPPUNIT_ASSERT(!s.skip(7, Why::kPostSelect));  // a second partition, same cycle
    for (int cycle = 0; cycle < 3; ++cycle) {
      s.begin_cycle();
      CPPUNIT_ASSERT(!s.skip(7, Why::kPostSelect));
    }
  }

  void testLoggedAgainAfterAGap() {
    LimitSkips s;
    s.begin_cycle();
    CPPUNIT_ASSERT(s.skip(7, Why::kPreSelect));
    s.begin_cycle();  // not skipped in this one (the limit let it through)
    s.begin_cycle();
    CPPUNIT_ASSERT(s.skip(7, Why::kPreSelect));
  }

  void testAnotherReasonIsLogged() {
    LimitSkips s;
    s.begin_cycle();
    CPPUNIT_ASSERT(s.skip(7, Why::kPreSelect));
    s.begin_cycle();
    CPPUNIT_ASSERT(s.skip(7, Why::kPostSelect));
    // Within a cycle: no reservation, then refused by select_nodes().
    CPPUNIT_ASSERT(s.skip(8, Why::kNoReserve));
    CPPUNIT_ASSERT(s.skip(8, Why::kSelectNodes));
    CPPUNIT_ASSERT(s.skipped(8));
  }

  void testNoReserveIsNotSkipped() {
    LimitSkips s;
    s.begin_cycle(100);
    s.skip(9, Why::kNoReserve);
    CPPUNIT_ASSERT(!s.skipped(9));  // still tested as a backfill candidate
    s.begin_cycle(101);
    CPPUNIT_ASSERT(!s.start_now_only(9));
  }

  void testSelectNodesRefusalIsStartNowOnlyNextCycles() {
    LimitSkips s;
    s.begin_cycle(100);
    CPPUNIT_ASSERT(s.skip(5, Why::kSelectNodes));
    CPPUNIT_ASSERT(s.skipped(5));
    s.skip(6, Why::kPostSelect);
    s.begin_cycle(101);
    CPPUNIT_ASSERT(s.start_now_only(5));
    CPPUNIT_ASSERT(!s.start_now_only(6));  // refused before the pass: asked again
    CPPUNIT_ASSERT(!s.skipped(5));         // tried (start now only) in this cycle
    // It did not fit now (select_nodes() not asked): still start now only.
    s.begin_cycle(102);
    CPPUNIT_ASSERT(s.start_now_only(5));
    // Refused again: not logged again (the same episode), and renewed.
    CPPUNIT_ASSERT(!s.skip(5, Why::kSelectNodes));
    s.begin_cycle(102 + LimitSkips::kCarrySeconds - 1);
    CPPUNIT_ASSERT(s.start_now_only(5));
    // Not refused again for kCarrySeconds: an ordinary candidate again.
    s.begin_cycle(102 + LimitSkips::kCarrySeconds);
    CPPUNIT_ASSERT(!s.start_now_only(5));
    // A new refusal is a new episode: logged.
    CPPUNIT_ASSERT(s.skip(5, Why::kSelectNodes));
  }

  void testCounts() {
    LimitSkips s;
    s.begin_cycle();
    s.skip(1, Why::kPreSelect);
    s.skip(2, Why::kPostSelect);
    s.skip(3, Why::kPostSelect);
    s.skip(4, Why::kNoReserve);
    s.skip(2, Why::kPostSelect);
    CPPUNIT_ASSERT_EQUAL(std::size_t(4), s.count());
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), s.count(Why::kPostSelect));
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), s.count(Why::kSelectNodes));
    CPPUNIT_ASSERT(std::string(LimitSkips::name(Why::kSelectNodes)) == "select_nodes()");
    s.begin_cycle();
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), s.count());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LimitSkipsTest);
