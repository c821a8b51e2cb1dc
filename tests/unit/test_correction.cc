// Every correction policy's sequence of values (spec section 2).
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "easypp/correction.h"

using namespace easypp;

namespace {

std::vector<Time> sequence(CorrectionPolicy pol, Time p, Time e, int n) {
  CorrectionState st;
  std::vector<Time> out;
  for (int i = 0; i < n; ++i) {
    p = correct_prediction(pol, p, e, st);
    out.push_back(p);
  }
  return out;
}

}  // namespace

class CorrectionTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(CorrectionTest);
  CPPUNIT_TEST(testBeyondIncrements);
  CPPUNIT_TEST(testEstimate);
  CPPUNIT_TEST(testEstimateBeyond);
  CPPUNIT_TEST(testGradual);
  CPPUNIT_TEST(testExponential);
  CPPUNIT_TEST(testNone);
  CPPUNIT_TEST(testCounts);
  CPPUNIT_TEST(testParse);
  CPPUNIT_TEST(testSaturates);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testBeyondIncrements() {
    CPPUNIT_ASSERT_EQUAL(Time(60), beyond_estimate_increment(1));
    CPPUNIT_ASSERT_EQUAL(Time(900), beyond_estimate_increment(2));
    CPPUNIT_ASSERT_EQUAL(Time(1800), beyond_estimate_increment(3));
    CPPUNIT_ASSERT_EQUAL(Time(3600), beyond_estimate_increment(4));
    CPPUNIT_ASSERT_EQUAL(Time(7200), beyond_estimate_increment(5));
  }
  void testEstimate() {
    // Below the estimate: jump to it; then +1 min, +15 min, +30 min, +1 h.
    const std::vector<Time> want{1000, 1060, 1960, 3760, 7360};
    CPPUNIT_ASSERT(want == sequence(CorrectionPolicy::Estimate, 100, 1000, 5));
  }
  void testEstimateBeyond() {
    // Already at the estimate (the job outlived its kill time in the log).
    const std::vector<Time> want{1060, 1960, 3760};
    CPPUNIT_ASSERT(want == sequence(CorrectionPolicy::Estimate, 1000, 1000, 3));
  }
  void testGradual() {
    // +1 min, +15 min capped at the estimate, then +30 min, +1 h past it.
    const std::vector<Time> want{160, 1000, 2800, 6400};
    CPPUNIT_ASSERT(want == sequence(CorrectionPolicy::Gradual, 100, 1000, 4));
  }
  void testExponential() {
    // max(p + 60, ceil(1.2 p)) capped at e, then the beyond-estimate rule.
    const std::vector<Time> want{160, 220, 280, 340, 408, 490, 588, 706, 848, 1000, 1060, 1960};
    CPPUNIT_ASSERT(want == sequence(CorrectionPolicy::Exponential, 100, 1000, 12));
  }
  void testNone() {
    const std::vector<Time> want{100, 100};
    CPPUNIT_ASSERT(want == sequence(CorrectionPolicy::None, 100, 1000, 2));
  }
  void testCounts() {
    CorrectionState st;
    Time p = 100;
    p = correct_prediction(CorrectionPolicy::Estimate, p, 1000, st);
    p = correct_prediction(CorrectionPolicy::Estimate, p, 1000, st);
    p = correct_prediction(CorrectionPolicy::Estimate, p, 1000, st);
    CPPUNIT_ASSERT_EQUAL(3u, st.count);
    CPPUNIT_ASSERT_EQUAL(2u, st.beyond);
    CorrectionState none;
    correct_prediction(CorrectionPolicy::None, 5, 10, none);
    CPPUNIT_ASSERT_EQUAL(0u, none.count);
  }
  void testParse() {
    CPPUNIT_ASSERT(parse_correction("gradual") == CorrectionPolicy::Gradual);
    CPPUNIT_ASSERT(!parse_correction("Gradual"));
    CPPUNIT_ASSERT(!parse_correction(""));
    for (auto p : {CorrectionPolicy::None, CorrectionPolicy::Estimate, CorrectionPolicy::Gradual,
                   CorrectionPolicy::Exponential})
      CPPUNIT_ASSERT(parse_correction(to_string(p)) == p);
  }
  void testSaturates() {
    // Never overflows, always increases.
    CorrectionState st;
    Time p = 10;
    for (int i = 0; i < 200; ++i) {
      const Time q = correct_prediction(CorrectionPolicy::Estimate, p, 10, st);
      CPPUNIT_ASSERT(q > p);
      p = q;
    }
    CPPUNIT_ASSERT(p > 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(CorrectionTest);
