// Selective reservations (libpredict's selective.h, Srinivasan et al.): the
// pass gives a reservation only to starving jobs; Sel-D's categories; the
// knobs and presets; thresholds derived and adaptive; fairness by fair
// start time and the slowdown histograms (libsim's selective_metrics.h).
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "easypp/sim/metrics.h"
#include "easypp/sim/selective_metrics.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The derived thresholds' definition, computed directly: the sum (and *n the
// count) of the bounded slowdowns under `cons` of the measured jobs but every
// `bad`-th (the badly estimated ones of the tests' workloads).
double bsld_sum(const Workload& w, const SchedulerConfig& cons, std::size_t bad, int* n) {
  const RunResult r = Simulator(w, cons).run();
  const MeasuredSet measured(w, r, MetricsOptions{});
  double sum = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (measured(i) && i % bad != 0)
      sum += bounded_slowdown(r.jobs[i].start - w.jobs[i].submit, w.jobs[i].runtime), ++*n;
  return sum;
}

// 10 procs; 0 (6 procs) runs [0,100); 1 (8 procs, 100 s) arrives at 1;
// 2 (4 procs, 1000 s) at 50. Under EASY 1 holds a reservation at 100 that 2
// would delay, so 2 waits until 200. Selective: at 50, 1's expansion
// factor is (49 + 100) / 100 = 1.49; at a threshold above that it has no
// reservation, 2 starts at once and 1 waits until 2 ends at 1050.
Workload three() {
  return workload(10, {{0, 100, 100, 6}, {1, 100, 100, 8}, {50, 1000, 1000, 4}});
}

// The fair start times by their definition, one FCFS replay per arrival
// from scratch (what fair_start_times() computed before it kept its walk):
// the reference the kept walk must match exactly.
std::vector<Time> fair_by_definition(const Workload& w, const RunResult& r) {
  std::vector<Time> fair(w.jobs.size(), -1);
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    const Time t = w.jobs[j].submit;
    std::vector<std::pair<Time, std::int64_t>> releases;  // running at t: (end, size)
    std::int64_t free = w.procs;
    for (std::size_t k = 0; k < w.jobs.size(); ++k) {
      const Time st = r.jobs[k].start;
      if (st < 0 || st >= t) continue;
      const Time end = st + w.jobs[k].runtime;
      if (end <= t) continue;
      releases.emplace_back(end, w.jobs[k].size);
      free -= w.jobs[k].size;
    }
    Time prev = t;
    for (std::size_t k = 0; k <= j; ++k) {  // waiting at t, in arrival order
      if (k < j && (r.jobs[k].start >= 0 && r.jobs[k].start < t)) continue;
      Time s = prev;
      std::sort(releases.begin(), releases.end());
      std::size_t used = 0;
      while (free < w.jobs[k].size && used < releases.size()) {
        s = std::max(s, releases[used].first);
        free += releases[used++].second;
      }
      releases.erase(releases.begin(), releases.begin() + std::ptrdiff_t(used));
      if (k == j) {
        fair[j] = s;
        break;
      }
      releases.emplace_back(s + w.jobs[k].runtime, w.jobs[k].size);
      free -= w.jobs[k].size;
      prev = s;
    }
  }
  return fair;
}

}  // namespace

class SelectiveTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SelectiveTest);
  CPPUNIT_TEST(testThresholdDecidesTheReservation);
  CPPUNIT_TEST(testOneThresholdOfOneIsConservative);
  CPPUNIT_TEST(testPerCategoryThresholds);
  CPPUNIT_TEST(testPredictionIsThePlanningValue);
  CPPUNIT_TEST(testKnobsAndPresets);
  CPPUNIT_TEST(testDerivedThresholds);
  CPPUNIT_TEST(testDerivedFromOwnPlanning);
  CPPUNIT_TEST(testAdaptiveMeans);
  CPPUNIT_TEST(testFairStartTimes);
  CPPUNIT_TEST(testFairStartTimesMatchTheDefinition);
  CPPUNIT_TEST(testHistogramsAndWorstCase);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testThresholdDecidesTheReservation() {
    const Workload w = three();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) == starts(Simulator(w, sched("easy")).run()));
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) ==
                   starts(Simulator(w, sched("easy:selective=1.4")).run()));
    CPPUNIT_ASSERT(std::vector<Time>({0, 1050, 50}) ==
                   starts(Simulator(w, sched("easy:selective=1.6")).run()));
    CPPUNIT_ASSERT(std::vector<Time>({0, 1050, 50}) ==
                   starts(Simulator(w, sched("easy:selective=1000")).run()));
  }
  void testOneThresholdOfOneIsConservative() {
    // Every blocked job starves at once: everybody holds a reservation.
    const Workload w = workload(10, {{0, 100, 100, 6}, {1, 100, 100, 8}, {2, 100, 100, 10},
                                     {3, 500, 500, 2}});
    const RunResult cons = Simulator(w, sched("conservative")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200, 300}) == starts(cons));
    CPPUNIT_ASSERT(starts(cons) == starts(Simulator(w, sched("easy:selective=1")).run()));
    // EASY backfills 3 at 3, which delays 2 until 503.
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 503, 3}) == starts(Simulator(w, sched("easy")).run()));
  }
  void testPerCategoryThresholds() {
    // Job 1 (100 s, 8 procs) is short and, with sel-narrow=4, wide: only
    // the SW threshold (second) matters for it.
    const Workload w = three();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) ==
                   starts(Simulator(w, sched("easy:selective=1000/1.4/1000/1000:sel-narrow=4")).run()));
    CPPUNIT_ASSERT(std::vector<Time>({0, 1050, 50}) ==
                   starts(Simulator(w, sched("easy:selective=1.4/1000/1.4/1.4:sel-narrow=4")).run()));
    // With narrow up to 8, job 1 is SN: the first threshold.
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) ==
                   starts(Simulator(w, sched("easy:selective=1.4/1000/1000/1000")).run()));
    // A long limit below 100 s makes it long-wide: the fourth.
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) ==
                   starts(Simulator(w, sched("easy:selective=1000/1000/1000/1.4:sel-narrow=4:sel-short=60")).run()));
  }
  void testPredictionIsThePlanningValue() {
    // Job 1's estimate is 1000 (runtime 100): judged by the estimate its
    // factor at 50 is 1.049, by a perfect prediction 1.49.
    const Workload w = workload(10, {{0, 100, 100, 6}, {1, 100, 1000, 8}, {50, 1000, 1000, 4}});
    CPPUNIT_ASSERT_EQUAL(Time(50), Simulator(w, sched("easy:selective=1.4")).run().jobs[2].start);
    CPPUNIT_ASSERT_EQUAL(Time(200), Simulator(w, sched("perfect:selective=1.4")).run().jobs[2].start);
  }
  void testKnobsAndPresets() {
    SchedulerConfig c = sched("easy");
    for (const char* bad : {"0.5", "1/2/3", "x", "1/2/3/4/5", "", "2/", "inf", "derive-x"})
      CPPUNIT_ASSERT_MESSAGE(bad, !apply_knob(c, "selective", bad).empty());
    CPPUNIT_ASSERT(!apply_knob(c, "sel-short", "0").empty());
    CPPUNIT_ASSERT(!apply_knob(c, "sel-narrow", "-1").empty());
    CPPUNIT_ASSERT(!apply_knob(c, "sel-scale", "0").empty());
    CPPUNIT_ASSERT(!c.policy.selective.on());  // nothing changed
    for (const char* good : {"2.5", "1/2/3/4", "derive", "derive-d", "adaptive", "adaptive-d", "off"}) {
      CPPUNIT_ASSERT_EQUAL(std::string(), apply_knob(c, "selective", good));
      CPPUNIT_ASSERT_EQUAL(std::string(good), knob_value(c, "selective"));
    }
    std::string err;
    CPPUNIT_ASSERT(!parse_scheduler_spec("site:selective=2", {}, &err));
    CPPUNIT_ASSERT(err.find("guards") != std::string::npos);
    const SchedulerConfig sel = sched("sel"), seld = sched("sel-d++");
    CPPUNIT_ASSERT(sel.policy.selective.mode == Selective::Mode::Derive);
    CPPUNIT_ASSERT(!sel.policy.selective.per_category);
    CPPUNIT_ASSERT(sel.plan == PlanWith::Estimate);
    CPPUNIT_ASSERT(seld.policy.selective.per_category);
    CPPUNIT_ASSERT(seld.plan == PlanWith::Prediction);
    CPPUNIT_ASSERT(seld.policy.backfill == BackfillOrder::ShortestPrediction);
    CPPUNIT_ASSERT(sel.describe().find("selective=derive") != std::string::npos);
    CPPUNIT_ASSERT(sched("easy").describe().find("sel") == std::string::npos);
  }
  void testDerivedThresholds() {
    // 100 narrow short jobs of 100 s, one every 50 s, 2 procs each on a
    // machine of 2, estimates exact: under conservative each waits for the
    // one before (wait 50 k for the k-th): well estimated, the thresholds
    // are their average bsld; a fifth of them badly estimated (x10) are left out.
    std::vector<J> jobs;
    for (int k = 0; k < 100; ++k) jobs.push_back(J{50 * k, 100, k % 5 == 0 ? 1000 : 100, 2});
    const Workload w = workload(2, jobs);
    int n = 0;
    const double sum = bsld_sum(w, sched("conservative"), 5, &n);
    CPPUNIT_ASSERT(n > 10);
    const auto t = derive_selective_thresholds(w, SimOptions{}, 3600, 8);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(sum / n, t[0], 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(sum / n, t[1], 1e-9);  // all are short-narrow
    CPPUNIT_ASSERT_EQUAL(1.0, t[4]);                   // no long-wide job
    std::vector<SchedulerConfig> cfgs = {sched("sel"), sched("sel-d"), sched("easy")};
    resolve_selective_thresholds(w, SimOptions{}, cfgs);
    CPPUNIT_ASSERT(cfgs[0].policy.selective.mode == Selective::Mode::Given);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(t[0], cfgs[0].policy.selective.threshold[3], 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(t[4], cfgs[1].policy.selective.threshold[3], 1e-12);
    CPPUNIT_ASSERT(!cfgs[2].policy.selective.on());
  }
  // sel-derive=own: the conservative replay plans as the scheduler does.
  void testDerivedFromOwnPlanning() {
    // Widths 1-4 on 4 processors, runtimes 50-249 s, every third estimate
    // 10x the runtime: conservative planned with estimates and with runtimes
    // differ.
    std::vector<J> jobs;
    for (int k = 0; k < 200; ++k) {
      const Time run = 50 + (k * 37) % 200;
      jobs.push_back(J{20 * k, run, k % 3 == 0 ? 10 * run : run, 1 + (k * 7) % 4});
    }
    const Workload w = workload(4, jobs);
    // The definition, from a replay of conservative planned with runtimes.
    int n = 0;
    const double sum = bsld_sum(w, sched("conservative:plan=runtime"), 3, &n);
    CPPUNIT_ASSERT(n > 10);
    std::vector<SchedulerConfig> cfgs = {sched("sel"), sched("sel:sel-derive=own"),
                                         sched("easy:plan=runtime:selective=derive"),
                                         sched("easy:plan=runtime:selective=derive:sel-derive=own")};
    resolve_selective_thresholds(w, SimOptions{}, cfgs);
    const double paper = cfgs[0].policy.selective.threshold[0];
    // The paper's planning: own is the conservative preset itself.
    CPPUNIT_ASSERT_EQUAL(paper, cfgs[1].policy.selective.threshold[0]);
    CPPUNIT_ASSERT_EQUAL(paper, cfgs[2].policy.selective.threshold[0]);
    // Planned with runtimes: the definition's value, not the paper's.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(sum / n, cfgs[3].policy.selective.threshold[0], 1e-9);
    CPPUNIT_ASSERT(std::fabs(paper - sum / n) > 0.01);
    // The knob reads back, shows only with derive, and refuses other values.
    CPPUNIT_ASSERT(contains(sched("sel:sel-derive=own").describe(), "sel-derive=own"));
    CPPUNIT_ASSERT(!contains(sched("easy:selective=2:sel-derive=own").describe(), "sel-derive"));
    std::string err;
    CPPUNIT_ASSERT(!parse_scheduler_spec("sel:sel-derive=mine", {}, &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "conservative or own"));
  }
  void testAdaptiveMeans() {
    Selective s;
    s.mode = Selective::Mode::Adaptive;
    s.scale = 2;
    SlowdownMeans m;
    m.apply(s);
    CPPUNIT_ASSERT_EQUAL(2.0, s.threshold[0]);  // nothing finished: 1 x scale
    m.record(90, 10, 1, s);    // SN, bsld 10
    m.record(0, 7200, 64, s);  // LW, bsld 1
    m.apply(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(11.0, s.threshold[0], 1e-12);
    s.per_category = true;
    m.apply(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(20.0, s.threshold[Selective::SN], 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0, s.threshold[Selective::LW], 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0, s.threshold[Selective::SW], 1e-12);
    // In the simulator, before any job has finished, the threshold is the
    // scale (x 1): three() decides at 50, before the first end.
    const Workload w = three();
    CPPUNIT_ASSERT(starts(Simulator(w, sched("easy:selective=adaptive:sel-scale=1.6")).run()) ==
                   starts(Simulator(w, sched("easy:selective=1.6")).run()));
  }
  void testFairStartTimes() {
    // three() under selective=1000: starts {0, 1050, 50}. At 1's arrival
    // (1), 0 runs until 100: FCFS would start 1 at 100. At 2's arrival
    // (50), 1 waits ahead: 1 at 100, then 2 needs 4 of the 2 left until 1
    // ends at 200.
    const Workload w = three();
    const RunResult r = Simulator(w, sched("easy:selective=1000")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200}) == fair_start_times(w, r));
    // Under FCFS without backfilling every job starts at its fair start
    // (what compute_metrics() relies on for fcfs).
    {
      std::vector<J> jobs;
      std::uint64_t x = 7;
      auto rnd = [&](int m) { x = x * 6364136223846793005ULL + 1442695040888963407ULL; return int((x >> 33) % std::uint64_t(m)); };
      for (int k = 0; k < 300; ++k) {
        const Time rt = 1 + rnd(500);
        jobs.push_back(J{Time(k * 40 + rnd(30)), rt, rt + rnd(300), 1 + rnd(16)});
      }
      std::sort(jobs.begin(), jobs.end(), [](const J& a, const J& b) { return a.submit < b.submit; });
      const Workload wf = workload(16, jobs);
      const RunResult rf = Simulator(wf, sched("fcfs")).run();
      CPPUNIT_ASSERT(starts(rf) == fair_start_times(wf, rf));
      // ... and EASY starts some job after it (backfilling delays someone).
      const RunResult re = Simulator(wf, sched("easy")).run();
      const std::vector<Time> fe = fair_start_times(wf, re);
      bool late = false;
      for (std::size_t i = 0; i < fe.size(); ++i) late = late || re.jobs[i].start > fe[i];
      CPPUNIT_ASSERT(late);
    }
    // A job that ends exactly at an arrival has left; one that starts then has not.
    const Workload w2 = workload(4, {{0, 10, 10, 4}, {5, 10, 10, 4}, {10, 10, 10, 2}});
    const RunResult r2 = Simulator(w2, sched("easy")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 10, 20}) == starts(r2));
    CPPUNIT_ASSERT(std::vector<Time>({0, 10, 20}) == fair_start_times(w2, r2));
  }
  void testFairStartTimesMatchTheDefinition() {
    // Overloaded machines with bursts of arrivals at one time (the kept
    // walk continues through them) and gaps without starts or ends (it
    // continues when its first placement lies after the new arrival),
    // under schedulers that start jobs out of order.
    std::uint64_t x = 11;
    auto rnd = [&](int m) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return int((x >> 33) % std::uint64_t(m));
    };
    std::size_t continued_cases = 0;
    for (int round = 0; round < 6; ++round) {
      std::vector<J> jobs;
      Time t = 0;
      for (int k = 0; k < 400; ++k) {
        if (rnd(3) != 0) t += rnd(round % 2 ? 200 : 40);  // else a burst: same time
        const Time rt = 1 + rnd(900);
        jobs.push_back(J{t, rt, rt + rnd(600), 1 + rnd(round < 3 ? 16 : 32)});
      }
      const Workload w = workload(32, jobs);
      for (const char* s : {"easy", "easy++", "conservative"}) {
        const RunResult r = Simulator(w, sched(s)).run();
        const std::vector<Time> want = fair_by_definition(w, r);
        CPPUNIT_ASSERT(want == fair_start_times(w, r));
        for (std::size_t k = 1; k < jobs.size(); ++k)
          continued_cases += jobs[k].submit == jobs[k - 1].submit;
      }
    }
    CPPUNIT_ASSERT(continued_cases > 100);  // bursts were there to continue through
    // A wide machine with hundreds of narrow jobs running at once: the
    // latest starts' releases are merged into the rest every 256 live
    // ones, and their expired ones dropped, between and during walks; a
    // job as wide as the machine now and then waits for every release.
    for (int round = 0; round < 2; ++round) {
      std::vector<J> jobs;
      Time t = 0;
      for (int k = 0; k < 700; ++k) {
        t += rnd(round ? 4 : 2);
        const Time rt = 1 + rnd(round ? 3000 : 1500) + (k % 3 ? 600 : 0);
        jobs.push_back(J{t, rt, rt + rnd(600), k % 100 == 0 ? 1 + rnd(100) : k % 100 == 50 ? 400 : 1});
      }
      const Workload w = workload(400, jobs);
      for (const char* sc : {"easy", "conservative"}) {
        const RunResult r = Simulator(w, sched(sc)).run();
        // (the most jobs running at once: over the 256 of a merge)
        std::vector<std::pair<Time, int>> ev;
        for (std::size_t k = 0; k < jobs.size(); ++k) {
          ev.emplace_back(r.jobs[k].start + jobs[k].runtime, -1);
          ev.emplace_back(r.jobs[k].start, +1);
        }
        std::sort(ev.begin(), ev.end());
        int now_running = 0, most = 0;
        for (const auto& e : ev) most = std::max(most, now_running += e.second);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(most), most > 280);
        CPPUNIT_ASSERT(fair_by_definition(w, r) == fair_start_times(w, r));
      }
    }
  }
  void testHistogramsAndWorstCase() {
    // Many small jobs so that the measured set is not empty; one per 10 s
    // on a machine of 1: each waits for the one before.
    std::vector<J> jobs;
    for (int k = 0; k < 200; ++k) jobs.push_back(J{10 * k, k % 2 ? 20 : 5, 20, 1});
    const Workload w = workload(1, jobs);
    const RunResult r = Simulator(w, sched("easy")).run();
    const Metrics m = compute_metrics(w, r);
    double total = 0;
    for (double h : m.bsld_histogram) total += h;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0, total, 1e-9);
    double worst = 0;
    const MeasuredSet measured(w, r, MetricsOptions{});
    for (std::size_t i = 0; i < w.jobs.size(); ++i)
      if (measured(i)) worst = std::max(worst, bounded_slowdown(r.jobs[i].start - w.jobs[i].submit, w.jobs[i].runtime));
    CPPUNIT_ASSERT_EQUAL(worst, m.categories[0].max_bounded_slowdown);
    CPPUNIT_ASSERT(m.fairness.computed);
    // EASY with exact order on one processor is FCFS: nobody is late.
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), m.fairness.late_jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0, m.fairness.ratio_histogram[0], 1e-9);
    CPPUNIT_ASSERT_EQUAL(0, slowdown_bin(1.0));
    CPPUNIT_ASSERT_EQUAL(1, slowdown_bin(1.5));
    CPPUNIT_ASSERT_EQUAL(3, slowdown_bin(4.0));
    CPPUNIT_ASSERT_EQUAL(4, slowdown_bin(4.01));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SelectiveTest);
