// The plugin's first cycle phase without Slurm (plugin/job_scan.cc): the job
// list translated into PredictionBook calls. Above all the "ghost": a job
// that vanishes from slurmctld's job list without being seen to finish (purged
// while the plugin did not look) must not keep driving the correction timer.
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "job_scan.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

// The plugin's own options (job_scan.h), as the plugin and easypp-shadow use them.
PredictionBook::Options plugin_options() { return plugin_book_options(); }

JobFacts running(std::uint32_t id, Time start, Time estimate = 600, UserId user = 100) {
  JobFacts f;
  f.id = id;
  f.user = user;
  f.estimate = estimate;
  f.state = JobFacts::State::Running;
  f.start = start;
  return f;
}

JobFacts finished(std::uint32_t id, Time start, Time end, UserId user = 100) {
  JobFacts f;
  f.id = id;
  f.user = user;
  f.estimate = 600;
  f.state = JobFacts::State::Finished;
  f.end = end;
  f.runtime = end - start;
  f.had_allocation = true;
  return f;
}

// One scan of `jobs` at `now`; returns the new watermark.
Time scan(PredictionBook& b, Time now, Time watermark, const std::vector<JobFacts>& jobs,
          std::uint32_t* learned = nullptr) {
  JobScan s(b, now, watermark);
  for (const JobFacts& j : jobs) s.observe(j);
  const Time w = s.finish();
  if (learned) *learned = s.learned();
  return w;
}

}  // namespace

class JobScanTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobScanTest);
  CPPUNIT_TEST(testVanishedJobNoLongerDrivesCorrections);
  CPPUNIT_TEST(testFinishedJobsLearnedOnce);
  CPPUNIT_TEST(testHetComponentsAndCancelledJobs);
  CPPUNIT_TEST(testPendingJobsKept);
  CPPUNIT_TEST(testPluginBookOptions);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testVanishedJobNoLongerDrivesCorrections() {
    PredictionBook b(*preset("easy++"), plugin_options());
    Time w = scan(b, 100, 0, {running(5, 50, 600), running(6, 60, 3600)});
    JobHandle next = 0;
    CPPUNIT_ASSERT_EQUAL(Time(651), b.next_expiry(&next));
    CPPUNIT_ASSERT_EQUAL(JobHandle(5), next);
    // Job 5 is gone from the list (purged) without being seen to finish.
    w = scan(b, 200, w, {running(6, 60, 3600)});
    CPPUNIT_ASSERT(b.find(5) == nullptr);
    CPPUNIT_ASSERT_EQUAL(Time(3661), b.next_expiry(&next));
    CPPUNIT_ASSERT_EQUAL(JobHandle(6), next);
    // No correction fires for it at its predicted end.
    CPPUNIT_ASSERT_EQUAL(0u, b.correct_expired(700));
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.size());
  }

  void testFinishedJobsLearnedOnce() {
    PredictionBook b(*preset("easy++"), plugin_options());
    std::uint32_t learned = 0;
    Time w = scan(b, 100, 0, {running(1, 10)});
    // Ended during this second: learned next cycle, not now.
    w = scan(b, 200, w, {finished(1, 10, 200)}, &learned);
    CPPUNIT_ASSERT_EQUAL(0u, learned);
    CPPUNIT_ASSERT(b.find(1) != nullptr);
    w = scan(b, 201, w, {finished(1, 10, 200)}, &learned);
    CPPUNIT_ASSERT_EQUAL(1u, learned);
    CPPUNIT_ASSERT(b.find(1) == nullptr);
    // Still in the list next cycle: below the watermark, not learned again.
    w = scan(b, 230, w, {finished(1, 10, 200)}, &learned);
    CPPUNIT_ASSERT_EQUAL(0u, learned);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), b.learned_total());
    CPPUNIT_ASSERT_EQUAL(Time(229), w);
    // A job that finished before the plugin saw it run is learned from its
    // allocation; a restart (the watermark from the state file) forgets nothing.
    scan(b, 300, w, {finished(2, 240, 290)}, &learned);
    CPPUNIT_ASSERT_EQUAL(1u, learned);
    CPPUNIT_ASSERT_EQUAL(Time(120), b.plan_value(100, 600));  // (190 + 50) / 2
  }

  void testHetComponentsAndCancelledJobs() {
    PredictionBook b(*preset("easy++"), plugin_options());
    std::uint32_t learned = 0;
    JobFacts leader = finished(10, 0, 100), comp = finished(11, 0, 100), cancelled = finished(12, 50, 50);
    comp.het_component = true;
    cancelled.had_allocation = false;
    cancelled.runtime = 0;
    scan(b, 200, 0, {leader, comp, cancelled}, &learned);
    CPPUNIT_ASSERT_EQUAL(1u, learned);  // the het job once, from its leader
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.predictor().history(100).size());
  }

  void testPendingJobsKept() {
    PredictionBook b(*preset("easy++"), plugin_options());
    b.observe_waiting(3, 100, 600, 0, 10);  // made by the queue phase
    JobFacts p;
    p.id = 3;
    p.state = JobFacts::State::Pending;
    scan(b, 20, 0, {p});
    CPPUNIT_ASSERT(b.find(3) != nullptr);  // pending (even held): kept
    scan(b, 30, 0, {});
    CPPUNIT_ASSERT(b.find(3) == nullptr);  // gone: forgotten
  }

  void testPluginBookOptions() {
    const PredictionBook::Options o = plugin_book_options();
    CPPUNIT_ASSERT_EQUAL(Time(1), o.grace);
    CPPUNIT_ASSERT_EQUAL(Time(1), o.min_learned_runtime);
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), o.dense_handles);
    CPPUNIT_ASSERT(o.always_learn);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobScanTest);
