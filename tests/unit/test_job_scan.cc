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
  f.start = start;
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
  CPPUNIT_TEST(testSlowdownsOfFinishedJobs);
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

  // Adaptive selective thresholds (easypp_selective=adaptive): each finished
  // job that ran is recorded once, as it is learned (wait start - submit,
  // runtime end - start, width its CPUs), and the thresholds are scale x the
  // averages, per category for adaptive-d.
  void testSlowdownsOfFinishedJobs() {
    PredictionBook b(*preset("site"), plugin_options());  // learn=completed
    SlowdownMeans m;
    Selective sel;
    sel.mode = Selective::Mode::Adaptive;
    sel.scale = 2;
    sel.short_limit = 3600;
    sel.narrow_width = 8;
    JobFacts a = finished(1, 100, 200);  // SN: (100 + 100) / 100 = 2
    a.width = 4;
    JobFacts w = finished(2, 12000, 16000);  // LW: (12000 + 4000) / 4000 = 4
    w.submit = 0;
    w.width = 16;
    w.completed = false;  // not learned under learn=completed, but recorded
    JobFacts comp = finished(3, 12000, 16000), cancelled = finished(4, 500, 500);
    comp.het_component = true;
    cancelled.had_allocation = false;
    cancelled.runtime = 0;
    const std::vector<JobFacts> jobs = {a, w, comp, cancelled};

    JobScan s1(b, 20000, 0);
    s1.record_slowdowns(&m, sel);
    for (const JobFacts& j : jobs) s1.observe(j);
    const Time wm = s1.finish();
    CPPUNIT_ASSERT_EQUAL(1u, s1.learned());
    CPPUNIT_ASSERT_EQUAL(2u, s1.recorded());
    CPPUNIT_ASSERT_EQUAL(3.0, m.mean());
    CPPUNIT_ASSERT_EQUAL(2.0, m.mean(Selective::SN));
    CPPUNIT_ASSERT_EQUAL(1.0, m.mean(Selective::SW));  // none finished yet
    CPPUNIT_ASSERT_EQUAL(4.0, m.mean(Selective::LW));

    // Still in the job list next cycle: below the watermark, not recorded again.
    JobScan s2(b, 20030, wm);
    s2.record_slowdowns(&m, sel);
    for (const JobFacts& j : jobs) s2.observe(j);
    s2.finish();
    CPPUNIT_ASSERT_EQUAL(0u, s2.recorded());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), m.sums().n_all);

    // Sel: one threshold, scale x the overall average; Sel-D: per category.
    m.apply(sel);
    CPPUNIT_ASSERT_EQUAL(6.0, sel.threshold[0]);
    sel.per_category = true;
    m.apply(sel);
    CPPUNIT_ASSERT_EQUAL(4.0, sel.threshold[Selective::SN]);
    CPPUNIT_ASSERT_EQUAL(2.0, sel.threshold[Selective::SW]);
    CPPUNIT_ASSERT_EQUAL(2.0, sel.threshold[Selective::LN]);
    CPPUNIT_ASSERT_EQUAL(8.0, sel.threshold[Selective::LW]);
    // A short narrow job waiting since 0 with planning value 100 starves once
    // its expansion factor reaches 4 (at 300), not before.
    CPPUNIT_ASSERT(!sel.starving(299, 0, 100, 1));
    CPPUNIT_ASSERT(sel.starving(300, 0, 100, 1));

    // A later job with a long wait raises the thresholds.
    JobFacts late = finished(5, 20900, 21000);  // SN: (20900 + 100) / 100 = 210
    late.width = 1;
    JobScan s3(b, 22000, wm);
    s3.record_slowdowns(&m, sel);
    s3.observe(late);
    s3.finish();
    m.apply(sel);
    CPPUNIT_ASSERT_EQUAL(2.0 * (2 + 210) / 2, sel.threshold[Selective::SN]);
    CPPUNIT_ASSERT_EQUAL(8.0, sel.threshold[Selective::LW]);

    // The sums restore what was recorded (the plugin's state file keeps them).
    SlowdownMeans again;
    again.restore(m.sums());
    CPPUNIT_ASSERT(again.sums() == m.sums());
    Selective sel2 = sel;
    sel2.threshold = {0, 0, 0, 0};
    again.apply(sel2);
    CPPUNIT_ASSERT(sel2.threshold == sel.threshold);

    // Without record_slowdowns nothing is recorded.
    JobScan s4(b, 30000, 0);
    for (const JobFacts& j : jobs) s4.observe(j);
    s4.finish();
    CPPUNIT_ASSERT_EQUAL(0u, s4.recorded());
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
