// Closed-loop replays shaken and batched (--feedback with --shake and --csv;
// docs/closed-loop.md): every copy or setting is replayed closed-loop and
// measured on the workload it made.
#include <cppunit/extensions/HelperMacros.h>

#include <string>
#include <vector>

#include "easypp/config.h"
#include "easypp/sim/batch.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/generator.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/session_model.h"
#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

using namespace easypp;

namespace {

SimOptions closed() {
  SimOptions o;
  o.feedback = true;
  return o;
}

// A session site small enough for a unit test, its jobs linked.
Workload small_site() {
  SessionModelConfig g;
  g.users = 12;
  g.days = 3;
  g.procs = 32;
  return generate_session_workload(g, {});
}

}  // namespace

class ClosedLoopShakeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ClosedLoopShakeTest);
  CPPUNIT_TEST(testShakenCopiesAreClosedRuns);
  CPPUNIT_TEST(testOpenShakeHasNoClosedLoop);
  CPPUNIT_TEST(testJitterCountsReorderedLinks);
  CPPUNIT_TEST(testBatchFeedback);
  CPPUNIT_TEST_SUITE_END();

 public:
  // Copy i's figures are those of a feedback replay of shaken_copy(i),
  // measured on the workload it made; its links are its own.
  void testShakenCopiesAreClosedRuns() {
    const Workload w = small_site();
    CPPUNIT_ASSERT(w.sessions != nullptr);
    const std::vector<SchedulerConfig> cfgs = {*preset("easy"), *preset("easy++")};
    ShakeOptions so;
    so.copies = 3;
    so.band = 0.05;
    so.threads = 2;
    MetricsOptions mo;
    const ShakeResult sr = run_shaken(w, cfgs, so, mo, closed());
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), sr.closed_loop.size());
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), sr.links.size());
    mo.per_user = false;
    mo.fairness = false;
    for (std::size_t s = 0; s < cfgs.size(); ++s)
      for (unsigned i = 0; i < so.copies; ++i) {
        const Workload c = shaken_copy(w, so, i);
        CPPUNIT_ASSERT(c.sessions == w.sessions);  // the copy keeps its users' model
        const RunResult r = Simulator(c, cfgs[s], closed()).run();
        RunResult rr;
        const Workload made = realized_workload(c, r, &rr);
        const Metrics m = compute_metrics(made, rr, mo);
        const ClosedLoopMetrics cl = compute_closed_loop(made, rr, r.feedback.not_submitted, mo);
        CPPUNIT_ASSERT_EQUAL(m.jobs_measured, sr.metrics[s][i].jobs_measured);
        CPPUNIT_ASSERT_EQUAL(m.avg_bounded_slowdown, sr.metrics[s][i].avg_bounded_slowdown);
        CPPUNIT_ASSERT_EQUAL(cl.jobs_submitted, sr.closed_loop[s][i].jobs_submitted);
        CPPUNIT_ASSERT_EQUAL(cl.throughput_per_hour, sr.closed_loop[s][i].throughput_per_hour);
        CPPUNIT_ASSERT_EQUAL(cl.sessions, sr.closed_loop[s][i].sessions);
        CPPUNIT_ASSERT(sr.closed_loop[s][i].jobs_submitted < w.jobs.size());  // a prefix of each chain
        if (s == 0) {
          CPPUNIT_ASSERT_EQUAL(r.feedback.linked, sr.links[i].linked);
          CPPUNIT_ASSERT(sr.links[i].linked > 0);
          CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sr.links[i].fallbacks());
        }
      }
    // The band moved the users' first jobs: the copies differ.
    CPPUNIT_ASSERT(sr.closed_loop[0][0].throughput_per_hour != sr.closed_loop[0][2].throughput_per_hour ||
                   sr.closed_loop[0][0].jobs_submitted != sr.closed_loop[0][2].jobs_submitted);
  }

  void testOpenShakeHasNoClosedLoop() {
    const Workload w = small_site();
    ShakeOptions so;
    so.copies = 2;
    const ShakeResult sr = run_shaken(w, {*preset("easy")}, so, {});
    CPPUNIT_ASSERT(sr.closed_loop.empty());
    CPPUNIT_ASSERT(sr.links.empty());
    // Open: every job of the copy is replayed and measured at its logged time.
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(w.jobs.size()), sr.metrics[0][0].jobs_simulated);
  }

  // A jitter that moves a job before its preceding job makes the link fall
  // back (not earlier); every job is still linked, independent or fallen back.
  void testJitterCountsReorderedLinks() {
    GeneratorConfig g;
    g.jobs = 1500;
    const Workload w = generate_workload(g, {});
    ShakeOptions so;
    so.copies = 2;
    so.jitter = 7200;
    so.threads = 1;
    const ShakeResult sr = run_shaken(w, {*preset("easy")}, so, {}, closed());
    const FeedbackLinks base = link_feedback(w);
    CPPUNIT_ASSERT(base.report.linked > 0);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), base.report.not_earlier);
    for (const FeedbackReport& f : sr.links) {
      CPPUNIT_ASSERT(f.not_earlier > 0);
      CPPUNIT_ASSERT_EQUAL(std::uint64_t(w.jobs.size()), f.linked + f.independent + f.fallbacks());
    }
  }

  // run_batch (--csv) with feedback: the figures of the workload each run made.
  void testBatchFeedback() {
    const Workload w = small_site();
    const std::vector<SchedulerConfig> cfgs = {*preset("easy"), *preset("easy++"), *preset("easy")};
    MetricsOptions mo;
    std::vector<BatchFigures> got(cfgs.size());
    run_batch(w, cfgs, 2, mo, [&](std::size_t i, const BatchFigures& f) { got[i] = f; }, closed());
    mo.per_user = false;
    mo.fairness = false;
    for (std::size_t i = 0; i < 2; ++i) {
      const RunResult r = Simulator(w, cfgs[i], closed()).run();
      RunResult rr;
      const Workload made = realized_workload(w, r, &rr);
      CPPUNIT_ASSERT(got[i].has_closed_loop);
      CPPUNIT_ASSERT_EQUAL(compute_metrics(made, rr, mo).avg_wait_minutes, got[i].metrics.avg_wait_minutes);
      CPPUNIT_ASSERT_EQUAL(compute_closed_loop(made, rr, r.feedback.not_submitted, mo).throughput_per_hour,
                           got[i].closed_loop.throughput_per_hour);
    }
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), got[2].same_as);
    CPPUNIT_ASSERT_EQUAL(got[0].closed_loop.jobs_submitted, got[2].closed_loop.jobs_submitted);
    // Without feedback: open figures, no closed-loop part.
    BatchFigures open;
    run_batch(w, {cfgs[0]}, 1, mo, [&](std::size_t, const BatchFigures& f) { open = f; });
    CPPUNIT_ASSERT(!open.has_closed_loop);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(w.jobs.size()), open.metrics.jobs_simulated);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClosedLoopShakeTest);
