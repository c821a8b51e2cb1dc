// Closed-loop replay (--feedback), the session model and CREASY
// (docs/closed-loop.md).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <string>

#include "easypp/config.h"
#include "easypp/creasy.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/session_model.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

using namespace easypp;

namespace {

swf::Record rec(std::int64_t job, Time submit, Time run, std::int64_t procs, std::int64_t pred = -1,
                Time think = -1, std::int64_t user = 1) {
  swf::Record r;
  r.job = job;
  r.submit = submit;
  r.run = run;
  r.alloc_procs = procs;
  r.req_procs = procs;
  r.req_time = run;
  r.status = 1;
  r.user = user;
  r.preceding = pred;
  r.think = think;
  return r;
}

Workload make(std::vector<swf::Record> rs, std::int64_t procs) {
  swf::Header h;
  h.entries.emplace_back("MaxProcs", std::to_string(procs));
  return make_workload("test", h, std::move(rs), {});
}

SimOptions feedback() {
  SimOptions o;
  o.feedback = true;
  return o;
}

}  // namespace

class ClosedLoopTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ClosedLoopTest);
  CPPUNIT_TEST(testLinksAndFallbacks);
  CPPUNIT_TEST(testSubmittedAfterThePrecedingJobEnds);
  CPPUNIT_TEST(testOpenReplayIgnoresLinks);
  CPPUNIT_TEST(testRealizedWorkloadAndSessions);
  CPPUNIT_TEST(testSessionModel);
  CPPUNIT_TEST(testSessionSpec);
  CPPUNIT_TEST(testCreasyPriority);
  CPPUNIT_TEST(testCreasyKnob);
  CPPUNIT_TEST(testCreasyAlphaZeroIsEasy);
  CPPUNIT_TEST(testCreasyFavoursShortJobsInAClosedSite);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testLinksAndFallbacks() {
    const Workload w = make({rec(1, 0, 10, 1), rec(2, 5, 10, 1, 1, 100), rec(3, 6, 10, 1, 99, 10),
                             rec(4, 7, 10, 1, 5, 10), rec(5, 8, 10, 1, 1, -1)},
                            4);
    const FeedbackLinks l = link_feedback(w);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), l.report.independent);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), l.report.linked);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), l.report.missing);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), l.report.not_earlier);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), l.report.no_think);
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(0), l.pred[1]);
    for (int i : {0, 2, 3, 4}) CPPUNIT_ASSERT_EQUAL(FeedbackLinks::kNone, l.pred[std::size_t(i)]);
  }

  // Job 3 follows job 1 (think 10): job 1 ends at 100, so job 3 is submitted
  // at 110, long before its logged 5000, and waits for job 2 (FCFS behind it).
  void testSubmittedAfterThePrecedingJobEnds() {
    const Workload w = make({rec(1, 0, 100, 2), rec(2, 0, 1000, 2), rec(3, 5000, 50, 2, 1, 10)}, 2);
    const RunResult r = Simulator(w, *preset("easy"), feedback()).run();
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), r.submitted.size());
    CPPUNIT_ASSERT_EQUAL(Time(110), r.submitted[2]);
    CPPUNIT_ASSERT_EQUAL(Time(1100), r.jobs[2].start);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), r.feedback.earlier);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), r.feedback.later);
    // Job 1 runs second if job 2 comes first: job 3 follows it later.
    const Workload v = make({rec(1, 0, 1000, 2), rec(2, 1, 100, 2), rec(3, 50, 50, 2, 2, 10)}, 2);
    const RunResult s = Simulator(v, *preset("easy"), feedback()).run();
    CPPUNIT_ASSERT_EQUAL(Time(1110), s.submitted[2]);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), s.feedback.later);
  }

  void testOpenReplayIgnoresLinks() {
    const Workload w = make({rec(1, 0, 100, 2), rec(2, 0, 1000, 2), rec(3, 5000, 50, 2, 1, 10)}, 2);
    const RunResult r = Simulator(w, *preset("easy")).run();
    CPPUNIT_ASSERT(r.submitted.empty());
    CPPUNIT_ASSERT_EQUAL(Time(5000), r.jobs[2].start);
  }

  void testRealizedWorkloadAndSessions() {
    // User 1: a job, then one 60 s after it ends (same session), then one
    // 2000 s after (a new session). User 2: one job.
    const Workload w = make({rec(1, 0, 100, 1), rec(2, 10, 100, 1, -1, -1, 2),
                             rec(3, 900, 100, 1, 1, 60), rec(4, 9000, 100, 1, 3, 2000)},
                            4);
    const RunResult r = Simulator(w, *preset("easy"), feedback()).run();
    RunResult made;
    const Workload v = realized_workload(w, r, &made);
    CPPUNIT_ASSERT_EQUAL(std::size_t(4), v.jobs.size());
    for (std::size_t i = 1; i < v.jobs.size(); ++i) CPPUNIT_ASSERT(v.jobs[i - 1].submit <= v.jobs[i].submit);
    CPPUNIT_ASSERT_EQUAL(Time(160), v.jobs[2].submit);  // job 3
    CPPUNIT_ASSERT_EQUAL(Time(2260), v.jobs[3].submit);  // job 4: 160 + 100 + 2000
    MetricsOptions mo;
    mo.warmup_fraction = 0;
    const ClosedLoopMetrics m = compute_closed_loop(v, made, 0, mo);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), m.sessions);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.0 / 3.0, m.avg_session_jobs, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.0 / (2260.0 / 3600.0), m.throughput_per_hour, 1e-9);
    CPPUNIT_ASSERT_EQUAL(std::string(">10m"), std::string(m.classes[2].name));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), m.classes[2].jobs);
    CPPUNIT_ASSERT(m.classes[1].jobs > 0);  // 100 s: 1-10 min
  }

  void testSessionModel() {
    SessionModel m;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.8, m.p_continue(0), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.4, m.p_continue(20 * 60), 1e-12);  // 0.8 / (0.05 * 20 + 1)
    m.users.push_back({0, true, true});     // day, weekdays
    m.users.push_back({600, false, false});  // night, weekends, 10 min late
    const Time monday3h = 3 * 3600, day = 86400;
    CPPUNIT_ASSERT_EQUAL(Time(7 * 3600 + 1800), m.next_active(1, monday3h));
    CPPUNIT_ASSERT_EQUAL(Time(12 * 3600), m.next_active(1, 12 * 3600));
    // Friday 18:00 -> Monday 7:30.
    CPPUNIT_ASSERT_EQUAL(Time(7 * day + 7 * 3600 + 1800), m.next_active(1, 4 * day + 18 * 3600));
    // Weekend night user: Saturday 17:40 at the earliest.
    CPPUNIT_ASSERT_EQUAL(Time(5 * day + 17 * 3600 + 2400), m.next_active(2, monday3h));
    // ... and still active on Sunday 3:00 (Saturday's night).
    CPPUNIT_ASSERT_EQUAL(Time(6 * day + 3 * 3600), m.next_active(2, 6 * day + 3 * 3600));

    SessionModelConfig c;
    c.users = 30;
    c.days = 7;
    c.procs = 32;
    const Workload a = generate_session_workload(c, {}), b = generate_session_workload(c, {});
    CPPUNIT_ASSERT(a.sessions != nullptr);
    CPPUNIT_ASSERT(a.jobs.size() > 100);
    CPPUNIT_ASSERT_EQUAL(a.jobs.size(), b.jobs.size());
    CPPUNIT_ASSERT_EQUAL(a.jobs.size(), a.sessions->draws.size());
    const FeedbackLinks l = link_feedback(a);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), l.report.fallbacks());
    // Only the users' first batches follow nothing.
    std::uint64_t first = 0;
    for (const Job& j : a.jobs) first += j.preceding < 0;
    CPPUNIT_ASSERT_EQUAL(first, l.report.independent);
    CPPUNIT_ASSERT(first >= c.users && first < 4 * c.users);
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      CPPUNIT_ASSERT_EQUAL(a.jobs[i].submit, b.jobs[i].submit);
      CPPUNIT_ASSERT(a.jobs[i].submit <= a.sessions->horizon);
      CPPUNIT_ASSERT(a.jobs[i].runtime <= a.jobs[i].estimate);
      const auto& d = a.sessions->draws[i];
      CPPUNIT_ASSERT(d.lead <= i);
      CPPUNIT_ASSERT(d.short_think < kSessionThreshold && d.long_think >= kSessionThreshold);
      if (d.lead != i) CPPUNIT_ASSERT_EQUAL(a.jobs[d.lead].preceding, a.jobs[i].preceding);
    }
  }

  void testSessionSpec() {
    SessionModelConfig c;
    std::string err;
    CPPUNIT_ASSERT(parse_session_spec("sessions:users=7,days=3,seed=9", c, &err));
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(7), c.users);
    SessionModelConfig back;
    CPPUNIT_ASSERT_MESSAGE(err, parse_session_spec(c.describe(), back, &err));
    CPPUNIT_ASSERT_EQUAL(c.describe(), back.describe());
    for (const char* bad : {"sessions:users=0", "sessions:days=x", "sessions:cont-max=2",
                            "sessions:nope=1", "sessions:users", "sessions:users=3,"}) {
      err.clear();
      CPPUNIT_ASSERT_MESSAGE(bad, !parse_session_spec(bad, c, &err));
      CPPUNIT_ASSERT(!err.empty() && err.find('\n') == std::string::npos);
    }
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(7), c.users);  // unchanged on error
  }

  void testCreasyPriority() {
    const CreasyConfig c;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.04, creasy_criticality(0, c), 1e-15);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.01, creasy_criticality(20 * 60, c), 1e-15);  // 0.04 / 2^2
    // 10 min waited, 10 min predicted: 6000 * 0.04 / (0.05 * 20 + 1)^2 + 10.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(6000 * 0.01 + 10, creasy_priority(1200, 600, 600, c), 1e-9);
    // A short fresh job outranks a long one that waited an hour ...
    CPPUNIT_ASSERT(creasy_priority(3600, 3600, 60, c) > creasy_priority(3600, 0, 36000, c));
    // ... but not one that waited long enough (seniority wins in the end).
    CPPUNIT_ASSERT(creasy_priority(300000, 300000, 60, c) < creasy_priority(300000, 0, 36000, c));
  }

  void testCreasyKnob() {
    std::string err;
    auto c = parse_scheduler_spec("easy:queue-order=creasy:creasy-alpha=1500", {}, &err);
    CPPUNIT_ASSERT_MESSAGE(err, c.has_value());
    CPPUNIT_ASSERT(c->queue_order == QueueOrder::Creasy);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1500.0, c->creasy.alpha, 0);
    CPPUNIT_ASSERT(c->describe().find("queue-order=creasy creasy-alpha=1500") != std::string::npos);
    // Not shown where it does not matter (existing reports stay as they were).
    CPPUNIT_ASSERT(preset("easy")->describe().find("creasy") == std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string("6000"), knob_value(*preset("easy"), "creasy-alpha"));
    SchedulerConfig d = *preset("easy");
    CPPUNIT_ASSERT_EQUAL(std::string(), apply_knob(d, "creasy-alpha", "1234567.25"));
    SchedulerConfig e = *preset("easy");
    CPPUNIT_ASSERT_EQUAL(std::string(), apply_knob(e, "creasy-alpha", knob_value(d, "creasy-alpha")));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(d.creasy.alpha, e.creasy.alpha, 0);
    for (const char* bad : {"-1", "x", "", "nan", "1e10"})
      CPPUNIT_ASSERT(!apply_knob(d, "creasy-alpha", bad).empty());
    CPPUNIT_ASSERT(!apply_knob(d, "queue-order", "critical").empty());
  }

  // alpha = 0 is EASY's order (the paper simulated EASY that way).
  void testCreasyAlphaZeroIsEasy() {
    SessionModelConfig c;
    c.users = 80;
    c.days = 7;
    c.procs = 32;
    const Workload w = generate_session_workload(c, {});
    for (const char* base : {"easy", "easy++"}) {
      const RunResult a = Simulator(w, *preset(base), feedback()).run();
      const RunResult b =
          Simulator(w, *parse_scheduler_spec(std::string(base) + ":queue-order=creasy:creasy-alpha=0", {}, nullptr),
                    feedback())
              .run();
      for (std::size_t i = 0; i < w.jobs.size(); ++i) CPPUNIT_ASSERT_EQUAL(a.jobs[i].start, b.jobs[i].start);
      const RunResult x =
          Simulator(w, *parse_scheduler_spec(std::string(base) + ":queue-order=creasy", {}, nullptr), feedback())
              .run();
      bool differs = false;
      for (std::size_t i = 0; i < w.jobs.size() && !differs; ++i) differs = a.jobs[i].start != x.jobs[i].start;
      CPPUNIT_ASSERT(differs);
    }
  }

  // The paper's effect, qualitatively: on a loaded closed site CREASY cuts
  // the short jobs' response and keeps sessions longer than EASY.
  void testCreasyFavoursShortJobsInAClosedSite() {
    SessionModelConfig c;
    c.users = 200;
    c.days = 14;
    c.procs = 64;
    const Workload w = generate_session_workload(c, {});
    ClosedLoopMetrics m[2];
    const char* specs[2] = {"easy", "easy:queue-order=creasy"};
    for (int k = 0; k < 2; ++k) {
      const RunResult r = Simulator(w, *parse_scheduler_spec(specs[k], {}, nullptr), feedback()).run();
      RunResult made;
      const Workload v = realized_workload(w, r, &made);
      m[k] = compute_closed_loop(v, made, r.feedback.not_submitted, {});
    }
    CPPUNIT_ASSERT(m[1].classes[0].avg_response_minutes < m[0].classes[0].avg_response_minutes);
    CPPUNIT_ASSERT(m[1].avg_session_jobs > m[0].avg_session_jobs);
    CPPUNIT_ASSERT(m[1].jobs_submitted >= m[0].jobs_submitted);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClosedLoopTest);
