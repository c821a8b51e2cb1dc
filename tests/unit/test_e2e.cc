// End to end on a real log (KTH SP2, from ../shared/workloads): the
// published effects must show, and results must be deterministic.
#include <cppunit/extensions/HelperMacros.h>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"
#include "sim_fixtures.h"
#include "workloads.h"

using namespace easypp;
using namespace easypp::testing;

class EndToEndTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(EndToEndTest);
  CPPUNIT_TEST(testKthEasyPlusPlusBeatsEasy);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testKthEasyPlusPlusBeatsEasy() {
    const std::string path = workload_path("KTH-SP2-1996-2.1-cln.swf");
    CPPUNIT_ASSERT_MESSAGE("missing " + path + " (set WORKLOADS to the archive logs)", file_exists(path));
    const Workload w = load_workload(path, {});
    CPPUNIT_ASSERT_EQUAL(std::int64_t(100), w.procs);
    CPPUNIT_ASSERT(w.jobs.size() > 28000);

    const Metrics easy = compute_metrics(w, Simulator(w, sched("easy")).run());
    const Metrics epp = compute_metrics(w, Simulator(w, sched("easy++")).run());
    const Metrics pred = compute_metrics(w, Simulator(w, sched("easy-pred")).run());

    // EASY++ is better on both averages.
    CPPUNIT_ASSERT(epp.avg_wait_minutes < 0.95 * easy.avg_wait_minutes);
    CPPUNIT_ASSERT(epp.avg_bounded_slowdown < 0.90 * easy.avg_bounded_slowdown);
    // Predictions are more accurate than estimates, and get corrected.
    CPPUNIT_ASSERT(epp.avg_accuracy_percent > easy.avg_accuracy_percent + 5);
    CPPUNIT_ASSERT(epp.corrections_per_job > 0.1);
    CPPUNIT_ASSERT_EQUAL(0.0, easy.corrections_per_job);
    // Predictions without correction: the failure mode, far worse than EASY.
    CPPUNIT_ASSERT(pred.avg_wait_minutes > 2.0 * easy.avg_wait_minutes);
    CPPUNIT_ASSERT(pred.avg_bounded_slowdown > 2.0 * easy.avg_bounded_slowdown);

    // Deterministic run to run: identical schedules.
    const RunResult a = Simulator(w, sched("easy++")).run();
    const RunResult b = Simulator(w, sched("easy++")).run();
    CPPUNIT_ASSERT(starts(a) == starts(b));
    const Metrics again = compute_metrics(w, a);
    CPPUNIT_ASSERT_EQUAL(epp.avg_wait_minutes, again.avg_wait_minutes);
    CPPUNIT_ASSERT_EQUAL(epp.avg_bounded_slowdown, again.avg_bounded_slowdown);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(EndToEndTest);
