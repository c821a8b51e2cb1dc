// A self-test of the simulator by operational laws (Petrou's thesis, ch.
// 6.1.4: Little's law and the utilization law hold for any ergodic system,
// whatever the service order, so a simulator that breaks them is wrong).
//
// On an open replay of a real log, over the measured window [end of
// warm-up, last arrival] of T seconds:
//
//   Little's law      L = lambda * W: the time-average number of waiting
//                     jobs (integrated from the simulator's own queue, seen
//                     through an observer after every pass) equals the
//                     arrival rate (jobs submitted in the window / T) times
//                     their mean wait;
//   utilization law   U = X * E[S] / P: the busy share of the processors
//                     (integrated from the starts and ends the observer
//                     sees) equals the throughput (jobs ending in the window
//                     / T) times their mean service demand (size * runtime)
//                     over the processor count.
//
// Both hold within 1% (the jobs straddling the window's ends are the only
// difference). The integrals must also agree exactly with what the metrics
// compute from the per-job outcomes: the simulator's queue and processor
// accounting against its own results.
//
// The closed-loop replay (--feedback: a job with a preceding job is
// submitted its think time after that job ends, or when the session model's
// user decides) is checked the same way: the same observer over the closed
// run, with the arrivals the run itself made (RunResult::submitted) and the
// measured window of the workload it made (realized_workload). Both laws
// must hold there too, within 1%, under EASY and CREASY.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include "easypp/config.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/generator.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/session_model.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"
#include "workloads.h"

using namespace easypp;

namespace {

// Integrates the number of waiting jobs and of busy processors over
// [w0, w1] from the simulator's events.
class LawObserver : public SimObserver {
 public:
  LawObserver(Time w0, Time w1) : w0_(w0), w1_(w1) {}

  void after_pass(const SimView& v, Time now, const PassResult&) override {
    // Every change of the queue (an arrival, a start) is followed by a pass
    // at the same instant, so the queue after a pass holds until the next.
    queue_area_ += double(waiting_) * overlap(last_pass_, now);
    waiting_ = v.waiting_jobs().size();
    last_pass_ = now;
  }
  void on_start(const SimView& v, JobHandle h, Time now, bool) override { busy(v, now, +v.workload().jobs[h].size); }
  void on_end(const SimView& v, JobHandle h, Time now) override { busy(v, now, -v.workload().jobs[h].size); }

  void finish(Time end) {
    queue_area_ += double(waiting_) * overlap(last_pass_, end);
    busy_area_ += double(busy_) * overlap(last_busy_, end);
  }
  double queue_area() const { return queue_area_; }  // job-seconds of waiting
  double busy_area() const { return busy_area_; }    // processor-seconds of running

 private:
  double overlap(Time a, Time b) const {
    const Time lo = std::max(a, w0_), hi = std::min(b, w1_);
    return hi > lo ? double(hi - lo) : 0.0;
  }
  void busy(const SimView& v, Time now, std::int64_t delta) {
    busy_area_ += double(busy_) * overlap(last_busy_, now);
    busy_ += delta;
    last_busy_ = now;
    CPPUNIT_ASSERT(busy_ >= 0 && busy_ <= v.total_procs());
  }

  Time w0_, w1_;
  std::size_t waiting_ = 0;
  Time last_pass_ = 0;
  double queue_area_ = 0;
  std::int64_t busy_ = 0;
  Time last_busy_ = 0;
  double busy_area_ = 0;
};

struct LawCheck {
  double L = 0, lambda_w = 0;  // Little
  double U = 0, x_s = 0;       // utilization law
};

}  // namespace

class OperationalLawsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(OperationalLawsTest);
  CPPUNIT_TEST(testOpenReplays);
  CPPUNIT_TEST(testTinyReplayByHand);
  CPPUNIT_TEST(testClosedLoopReplays);
  CPPUNIT_TEST_SUITE_END();

  // Replays w under `spec`, checks the identities, returns both sides of
  // both laws over the measured window.
  static LawCheck check(const Workload& w, const std::string& spec, SimOptions so = {}) {
    std::string err;
    const auto cfg = parse_scheduler_spec(spec, {}, &err);
    CPPUNIT_ASSERT_MESSAGE(err, cfg.has_value());
    // The window comes from a first run (the measured window depends on the
    // schedule only through the end of the warm-up); the observer watches a
    // second, identical run (replays are deterministic).
    const RunResult first = Simulator(w, *cfg, so).run();
    RunResult made;
    const Workload v = realized_workload(w, first, &made);
    const Metrics m = compute_metrics(v, made);
    const Time w0 = m.window_start, w1 = m.window_end;
    CPPUNIT_ASSERT(w1 > w0);
    LawObserver obs(w0, w1);
    const RunResult r = Simulator(w, *cfg, so).run(&obs);
    CPPUNIT_ASSERT(r.submitted == first.submitted);
    Time last_end = 0;
    for (const JobOutcome& o : r.jobs) last_end = std::max(last_end, o.end);
    obs.finish(last_end);
    const double T = double(w1 - w0);

    double waits_in_window = 0, wait_sum = 0, demand_sum = 0;
    std::uint64_t arrivals = 0, completions = 0;
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      const Job& j = w.jobs[i];
      const JobOutcome& o = r.jobs[i];
      CPPUNIT_ASSERT(o.start == first.jobs[i].start);
      const Time submit = r.submitted.empty() ? j.submit : r.submitted[i];
      if (submit < 0) {  // never submitted (past the session model's horizon)
        CPPUNIT_ASSERT(o.start < 0 && o.end < 0);
        continue;
      }
      const Time lo = std::max(submit, w0), hi = std::min(o.start, w1);
      if (hi > lo) waits_in_window += double(hi - lo);
      if (submit >= w0 && submit <= w1) {
        ++arrivals;
        wait_sum += double(o.start - submit);
      }
      if (o.end >= w0 && o.end <= w1) {
        ++completions;
        demand_sum += double(j.size) * double(j.runtime);
      }
    }
    // Identities: the observer's integrals are the per-job outcomes'.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(waits_in_window, obs.queue_area(), 1e-6 * (1 + waits_in_window));
    const double U = obs.busy_area() / (double(w.procs) * T);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(m.utilization, U, 1e-9);

    LawCheck c;
    c.L = obs.queue_area() / T;
    c.lambda_w = (double(arrivals) / T) * (wait_sum / double(arrivals));
    c.U = U;
    c.x_s = (double(completions) / T) * (demand_sum / double(completions)) / double(w.procs);
    return c;
  }

  static void expect_within(const std::string& what, double law, double measured, double rel) {
    std::ostringstream msg;
    msg << what << ": law " << law << ", measured " << measured << " ("
        << 100.0 * (measured - law) / law << "%)";
    CPPUNIT_ASSERT_MESSAGE(msg.str(), std::fabs(measured - law) <= rel * std::fabs(law));
  }

 public:
  void testOpenReplays() {
    const char* logs[] = {"KTH-SP2-1996-2.1-cln.swf", "SDSC-SP2-1998-4.2-cln.swf.gz"};
    for (const char* name : logs) {
      const std::string path = easypp::testing::workload_path(name);
      CPPUNIT_ASSERT_MESSAGE("missing " + path + " (set WORKLOADS to the archive logs)",
                             easypp::testing::file_exists(path));
      const Workload w = load_workload(path, {});
      for (const char* spec : {"easy", "easy++", "easy++:predictor=regression:window=8", "conservative"}) {
        const LawCheck c = check(w, spec);
        const std::string what = std::string(name) + " " + spec;
        expect_within(what + ": Little's law", c.lambda_w, c.L, 0.01);
        expect_within(what + ": utilization law", c.x_s, c.U, 0.01);
      }
    }
  }

  // Closed loops: the synthetic workload's sequential sessions replayed by
  // their links (fields 17, 18), and the session model's site, whose users
  // react to response times; under EASY, EASY++ and CREASY.
  void testClosedLoopReplays() {
    SimOptions so;
    so.feedback = true;
    GeneratorConfig g;
    g.jobs = 6000;
    g.procs = 64;
    g.users = 60;
    const Workload synth = generate_workload(g, {});
    SessionModelConfig sc;
    sc.users = 120;
    sc.days = 21;
    sc.procs = 64;
    const Workload site = generate_session_workload(sc, {});
    for (const Workload* w : {&synth, &site}) {
      for (const char* spec : {"easy", "easy++", "easy:queue-order=creasy"}) {
        // Really closed: jobs follow others, and the schedule moved them.
        const RunResult r = Simulator(*w, *parse_scheduler_spec(spec, {}, nullptr), so).run();
        CPPUNIT_ASSERT(r.feedback.linked > w->jobs.size() / 10);
        CPPUNIT_ASSERT(r.feedback.later > 0);
        const LawCheck c = check(*w, spec, so);
        const std::string what = w->source + " " + spec + " --feedback";
        expect_within(what + ": Little's law", c.lambda_w, c.L, 0.01);
        expect_within(what + ": utilization law", c.x_s, c.U, 0.01);
      }
    }
  }

  // Three jobs on 2 processors, window = the whole run: the laws exactly.
  void testTinyReplayByHand() {
    Workload w;
    w.source = "tiny";
    w.procs = 2;
    auto add = [&](Time submit, Time runtime, std::int64_t size) {
      Job j;
      j.id = w.jobs.size() + 1;
      j.submit = submit;
      j.runtime = runtime;
      j.estimate = runtime;
      j.size = size;
      j.user = 1;
      w.jobs.push_back(j);
    };
    add(0, 100, 2);   // runs 0..100
    add(10, 50, 1);   // waits 90, runs 100..150
    add(20, 30, 2);   // waits 130 (FCFS behind the 2nd), runs 150..180
    const RunResult r = Simulator(w, *preset("fcfs")).run();
    CPPUNIT_ASSERT_EQUAL(Time(100), r.jobs[1].start);
    CPPUNIT_ASSERT_EQUAL(Time(150), r.jobs[2].start);
    LawObserver obs(0, 180);
    Simulator(w, *preset("fcfs")).run(&obs);
    obs.finish(180);
    // L = (90 + 130) / 180; lambda * W = (3 / 180) * (0 + 90 + 130) / 3.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(220.0, obs.queue_area(), 1e-9);
    // U = (2*100 + 1*50 + 2*30) / (2 * 180) = X * E[S] / P, exactly.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(310.0, obs.busy_area(), 1e-9);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(OperationalLawsTest);
