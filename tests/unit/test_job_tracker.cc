// sched/easypp's per-job bookkeeping (plugin/job_tracker.cc), Slurm-free:
// predictions made at first sight, propagation, array tasks inheriting the
// meta record's prediction, corrections of expired predictions (with the
// 1 s grace), the correction timer, learning and forgetting.
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "job_tracker.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

SchedulerConfig easypp_cfg() {
  SchedulerConfig c = *preset("easy++");
  return c;
}

}  // namespace

class JobTrackerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobTrackerTest);
  CPPUNIT_TEST(testPredictionAtFirstSight);
  CPPUNIT_TEST(testPropagation);
  CPPUNIT_TEST(testPlanWithEstimate);
  CPPUNIT_TEST(testStartedInheritsPrediction);
  CPPUNIT_TEST(testCorrectionWithGrace);
  CPPUNIT_TEST(testBeyondEstimate);
  CPPUNIT_TEST(testCorrectionNone);
  CPPUNIT_TEST(testNextExpiry);
  CPPUNIT_TEST(testLearnAndSweep);
  CPPUNIT_TEST(testRequeueAndLimitChange);
  CPPUNIT_TEST(testConfigureKeepsHistory);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testPredictionAtFirstSight() {
    JobTracker t(easypp_cfg());
    // No history: the estimate (fallback).
    const TrackedJob& a = t.pending(1, 100, 600, 1);
    CPPUNIT_ASSERT_EQUAL(Time(600), a.prediction);
    CPPUNIT_ASSERT(!a.from_history);
    t.learn(50, 100, 10, 600);
    t.learn(51, 100, 30, 600);
    // An existing entry keeps its prediction (no propagation) ...
    CPPUNIT_ASSERT_EQUAL(Time(600), t.pending(1, 100, 600, 2).prediction);
    // ... a new job gets the average of the last two runtimes.
    const TrackedJob& b = t.pending(2, 100, 600, 2);
    CPPUNIT_ASSERT_EQUAL(Time(20), b.prediction);
    CPPUNIT_ASSERT(b.from_history);
    CPPUNIT_ASSERT_EQUAL(Time(20), b.first_prediction);
    // Another user has no history.
    CPPUNIT_ASSERT_EQUAL(Time(120), t.pending(3, 101, 120, 2).prediction);
  }

  void testPropagation() {
    SchedulerConfig c = easypp_cfg();
    c.predictor.propagation = true;
    JobTracker t(c);
    CPPUNIT_ASSERT_EQUAL(Time(600), t.pending(1, 100, 600, 1).prediction);
    t.learn(50, 100, 10, 600);
    t.learn(51, 100, 30, 600);
    const TrackedJob& j = t.pending(1, 100, 600, 2);
    CPPUNIT_ASSERT_EQUAL(Time(20), j.prediction);
    CPPUNIT_ASSERT_EQUAL(Time(600), j.first_prediction);
  }

  void testPlanWithEstimate() {
    SchedulerConfig c = easypp_cfg();
    c.plan = PlanWith::Estimate;
    JobTracker t(c);
    t.learn(50, 100, 10, 600);
    t.learn(51, 100, 30, 600);
    CPPUNIT_ASSERT_EQUAL(Time(600), t.pending(1, 100, 600, 1).prediction);
  }

  void testStartedInheritsPrediction() {
    JobTracker t(easypp_cfg());
    t.learn(50, 100, 40, 600);
    t.learn(51, 100, 40, 600);
    t.pending(7, 100, 600, 1);  // an array's meta record
    t.started(7, 9, 1000, 1);   // a task split off as job 9
    const TrackedJob* task = t.find(9);
    CPPUNIT_ASSERT(task != nullptr);
    CPPUNIT_ASSERT(task->running && task->seen_running);
    CPPUNIT_ASSERT_EQUAL(Time(40), task->prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1000), task->start);
    CPPUNIT_ASSERT(!t.find(7)->running);  // the meta record stays pending
    CPPUNIT_ASSERT(t.seen_running(9));
    CPPUNIT_ASSERT(!t.seen_running(7));
  }

  void testCorrectionWithGrace() {
    JobTracker t(easypp_cfg());
    t.learn(50, 100, 20, 600);
    t.learn(51, 100, 20, 600);
    t.pending(1, 100, 600, 1);
    t.started(1, 1, 1000, 1);  // predicted end 1020
    std::vector<CorrectionEvent> ev;
    // At the predicted end and within the grace second: not yet expired.
    CPPUNIT_ASSERT_EQUAL(0u, t.correct_expired(1020, &ev));
    CPPUNIT_ASSERT_EQUAL(Time(1020 + JobTracker::kGrace), t.next_expiry());
    // Still running one second later: corrected to the estimate, once.
    CPPUNIT_ASSERT_EQUAL(1u, t.correct_expired(1021, &ev));
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), ev.size());
    CPPUNIT_ASSERT_EQUAL(1u, ev[0].job_id);
    CPPUNIT_ASSERT_EQUAL(Time(20), ev[0].old_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(600), ev[0].new_prediction);
    CPPUNIT_ASSERT_EQUAL(1u, ev[0].count);
    CPPUNIT_ASSERT_EQUAL(Time(600), t.find(1)->prediction);
    CPPUNIT_ASSERT_EQUAL(0u, t.correct_expired(1021, &ev));
  }

  void testBeyondEstimate() {
    JobTracker t(easypp_cfg());
    t.running(1, 100, 60, 0, 1);  // no history: prediction = estimate = 60
    std::vector<CorrectionEvent> ev;
    // Far past its estimate (the kill came late): corrected until the
    // predicted end lies in the future: 60 -> 120 (+1 min) -> 1020 (+15 min).
    CPPUNIT_ASSERT_EQUAL(2u, t.correct_expired(500, &ev));
    CPPUNIT_ASSERT_EQUAL(Time(120), ev[0].new_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1020), ev[1].new_prediction);
    CPPUNIT_ASSERT_EQUAL(2u, ev[1].count);
    CPPUNIT_ASSERT(t.find(1)->start + t.find(1)->prediction + JobTracker::kGrace > 500);
  }

  void testCorrectionNone() {
    SchedulerConfig c = easypp_cfg();
    c.correction = CorrectionPolicy::None;
    JobTracker t(c);
    t.learn(50, 100, 20, 600);
    t.learn(51, 100, 20, 600);
    t.running(1, 100, 600, 0, 1);
    std::vector<CorrectionEvent> ev;
    CPPUNIT_ASSERT_EQUAL(0u, t.correct_expired(5000, &ev));  // terminates, stays expired
    CPPUNIT_ASSERT_EQUAL(Time(20), t.find(1)->prediction);
    CPPUNIT_ASSERT_EQUAL(kNever, t.next_expiry());
  }

  void testNextExpiry() {
    JobTracker t(easypp_cfg());
    CPPUNIT_ASSERT_EQUAL(kNever, t.next_expiry());
    t.running(1, 100, 300, 100, 1);  // predicted end 400
    t.running(2, 101, 120, 200, 1);  // predicted end 320
    t.pending(3, 102, 10, 1);        // pending: no timer
    std::uint32_t job = 0;
    CPPUNIT_ASSERT_EQUAL(Time(321), t.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(2u, job);
    // Still due until corrected (a lagging clock must not lose the timer).
    std::vector<CorrectionEvent> ev;
    CPPUNIT_ASSERT_EQUAL(0u, t.correct_expired(320, &ev));
    CPPUNIT_ASSERT_EQUAL(Time(321), t.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(1u, t.correct_expired(321, &ev));  // 120 -> 180 (beyond estimate)
    CPPUNIT_ASSERT_EQUAL(Time(381), t.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(2u, job);
  }

  void testLearnAndSweep() {
    JobTracker t(easypp_cfg());
    CPPUNIT_ASSERT(!t.dirty());
    t.running(1, 100, 600, 0, 1);
    CPPUNIT_ASSERT(t.learn(1, 100, 30, 600));
    CPPUNIT_ASSERT(t.find(1) == nullptr);
    CPPUNIT_ASSERT(t.dirty());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), t.learned_total());
    CPPUNIT_ASSERT(!t.learn(2, 100, 0, 600));  // no runtime: nothing learned
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), t.learned_total());
    t.clear_dirty();
    CPPUNIT_ASSERT(!t.dirty());
    t.pending(3, 100, 600, 5);
    t.pending(4, 100, 600, 5);
    t.touch(4, 6);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), t.sweep(6));
    CPPUNIT_ASSERT(t.find(3) == nullptr);
    CPPUNIT_ASSERT(t.find(4) != nullptr);
  }

  void testRequeueAndLimitChange() {
    JobTracker t(easypp_cfg());
    t.learn(50, 100, 20, 600);
    t.learn(51, 100, 20, 600);
    t.running(1, 100, 600, 0, 1);
    std::vector<CorrectionEvent> ev;
    t.correct_expired(100, &ev);
    CPPUNIT_ASSERT_EQUAL(Time(600), t.find(1)->prediction);
    // Requeued: pending again, a fresh prediction and no corrections.
    const TrackedJob& j = t.pending(1, 100, 600, 2);
    CPPUNIT_ASSERT_EQUAL(Time(20), j.prediction);
    CPPUNIT_ASSERT_EQUAL(0u, j.corr.count);
    CPPUNIT_ASSERT(!j.running);
    // A new time limit while pending: predicted again with it.
    CPPUNIT_ASSERT_EQUAL(Time(20), t.pending(1, 100, 1200, 3).prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1200), t.find(1)->estimate);
  }

  void testConfigureKeepsHistory() {
    JobTracker t(easypp_cfg());
    t.learn(50, 100, 10, 600);
    t.learn(51, 100, 20, 600);
    t.learn(52, 100, 60, 600);
    CPPUNIT_ASSERT_EQUAL(Time(40), t.plan_value(100, 600, nullptr));
    SchedulerConfig c = easypp_cfg();
    c.predictor.window = 3;
    t.configure(c);
    // The window-2 rings kept two entries; window 3 needs three: fallback.
    CPPUNIT_ASSERT_EQUAL(Time(600), t.plan_value(100, 600, nullptr));
    t.learn(53, 100, 30, 600);
    CPPUNIT_ASSERT_EQUAL(Time(37), t.plan_value(100, 600, nullptr));  // ceil((20+60+30)/3)
    c.predictor.metric = Metric::Max;
    t.configure(c);
    CPPUNIT_ASSERT_EQUAL(Time(60), t.plan_value(100, 600, nullptr));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobTrackerTest);
