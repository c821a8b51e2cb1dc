// Hand-computed scheduling scenarios (spec section 4): shadow time and extra
// processors, backfilling via (a) and (b), the expired-prediction collapse and
// its repair by correction, SJBF order with the reservation on the FCFS head.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <random>

#include "easypp/policy.h"
#include "easypp/sim/proc_resources.h"
#include "easypp/sim/simulator.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

namespace {

// A minimal adapter over ProcResources recording what the policy did, to
// test schedule_pass() without the simulator.
struct RecordingAdapter {
  ProcResources res;
  Time now;
  std::vector<std::int64_t> sizes;  // by handle
  std::vector<Time> pred;           // by handle
  std::vector<JobHandle> started;
  std::vector<std::pair<JobHandle, Time>> reserved;
  bool start_now(JobHandle h, Time end_bound) {
    if (!res.fits_now(sizes[h])) return false;
    res.start(h, sizes[h], end_bound, now + pred[h]);
    started.push_back(h);
    return true;
  }
  Time reserve(JobHandle h, Time d, bool) {
    const Time s = res.reserve(sizes[h], d);
    reserved.emplace_back(h, s);
    return s;
  }
  bool backfill(JobHandle h, Time bound) {
    if (!res.may_backfill(sizes[h], bound)) return false;
    res.start(h, sizes[h], bound, now + pred[h]);
    started.push_back(h);
    return true;
  }
  bool can_start_more() const { return res.free() > 0; }
  std::int64_t free_width() const { return res.free(); }
  std::int64_t extra_width() const { return res.extra(); }
  bool may_continue() { return true; }
};
static_assert(ResourceAdapter<RecordingAdapter>, "the test adapter answers every question");

// The same, answering the optional start_limits() too (resource_api.h):
// conservative passes then skip and stop with the candidate index.
struct LimitsAdapter : RecordingAdapter {
  StartLimits start_limits() const { return res.start_limits(); }
};
static_assert(resource_api_detail::has_start_limits<LimitsAdapter>::value);
static_assert(!resource_api_detail::has_start_limits<RecordingAdapter>::value);

// The same, for passes that continue each other (policy.h, PassCarry),
// answering free_width() and can_start_more() as ProcAdapter does.
struct CarryingAdapter : LimitsAdapter {
  bool can_start_more() const { return res.start_width() > 0; }
  std::int64_t free_width() const { return res.start_width(); }
  void begin_pass(Time t) {
    now = t;
    res.begin_pass(t);
  }
  bool continue_pass(Time t) {
    if (!res.continue_pass(t)) return false;
    now = t;
    return true;
  }
};

// One pass with and one without start_limits() on the same world:
// `setup(adapter, queue)` builds it, drawing from `rng`, which is reseeded
// alike for both. Checks what the two must agree on: the same starts, the
// reservations with limits a prefix of those without, no more tests.
struct LimitsPasses {
  RecordingAdapter plain;
  LimitsAdapter limits;
  PassResult r1, r2;
  std::size_t left1 = 0, left2 = 0;  // jobs left waiting
};
template <class Setup>
LimitsPasses passes_with_and_without_limits(std::mt19937_64& rng, Time now,
                                            const PolicyConfig& cfg, const Setup& setup,
                                            const std::string& msg) {
  LimitsPasses p;
  WaitQueue q1(cfg.backfill), q2(cfg.backfill);
  const std::uint64_t seed = rng();
  rng.seed(seed);
  setup(p.plain, q1);
  rng.seed(seed);
  setup(p.limits, q2);
  p.r1 = schedule_pass(now, q1, p.plain, cfg);
  p.r2 = schedule_pass(now, q2, p.limits, cfg);
  p.left1 = q1.size();
  p.left2 = q2.size();
  CPPUNIT_ASSERT_MESSAGE(msg, p.plain.started == p.limits.started);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, p.r1.started_in_order, p.r2.started_in_order);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, p.r1.started_backfill, p.r2.started_backfill);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, p.r1.shadow, p.r2.shadow);
  CPPUNIT_ASSERT_MESSAGE(msg, p.limits.reserved.size() <= p.plain.reserved.size());
  CPPUNIT_ASSERT_MESSAGE(msg, std::equal(p.limits.reserved.begin(), p.limits.reserved.end(),
                                         p.plain.reserved.begin()));
  CPPUNIT_ASSERT_MESSAGE(msg, p.r2.tested <= p.r1.tested);
  return p;
}

}  // namespace

class PolicyTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PolicyTest);
  CPPUNIT_TEST(testShadowTimeAndExtra);
  CPPUNIT_TEST(testShadowPastPredictedEnds);
  CPPUNIT_TEST(testBackfillRules);
  CPPUNIT_TEST(testProfileHoldsBackfillUntilItsBound);
  CPPUNIT_TEST(testPassDirect);
  CPPUNIT_TEST(testSimulatedBackfillAB);
  CPPUNIT_TEST(testCollapseWithoutCorrection);
  CPPUNIT_TEST(testSjbfOrderKeepsReservationOnHead);
  CPPUNIT_TEST(testFcfsNoBackfill);
  CPPUNIT_TEST(testSafeBackfill);
  CPPUNIT_TEST(testStarvationGuard);
  CPPUNIT_TEST(testConservativeReservesEveryone);
  CPPUNIT_TEST(testProfileMatchesBruteForce);
  CPPUNIT_TEST(testStartLimitsChangeNoDecision);
  CPPUNIT_TEST(testStartLimitsHonourTheRoom);
  CPPUNIT_TEST(testStartLimitsSeeTheWholeProfile);
  CPPUNIT_TEST(testStartLimitsAfterTheLastReservation);
  CPPUNIT_TEST(testSelectiveStartLimitsChangeNoDecision);
  CPPUNIT_TEST(testReservedSlots);
  CPPUNIT_TEST(testCarriedPassIsFreshPass);
  CPPUNIT_TEST(testCarryRefusals);
  CPPUNIT_TEST(testProfileHoldsEarlyBackfillUntilItsBound);
  CPPUNIT_TEST(testSjfQueueOrder);
  CPPUNIT_TEST(testPerfectAndX2);
  CPPUNIT_TEST(testPresetsAreKnobCombinations);
  CPPUNIT_TEST(testSpecParsing);
  CPPUNIT_TEST(testJobsNeverEndEarly);
  CPPUNIT_TEST_SUITE_END();

 public:
  // 10 processors; A (4 procs) predicted to end at 100, B (4) at 200, 2 free.
  // A 7-processor head fits only when B ends: shadow 200, extra 10 - 7 = 3.
  void testShadowTimeAndExtra() {
    ProcResources r(10);
    r.start(1, 4, 100, 100);
    r.start(2, 4, 200, 200);
    r.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(2), r.free());
    CPPUNIT_ASSERT_EQUAL(Time(200), r.reserve(7, 50));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(3), r.extra());
    // A 6-processor head would fit when A ends: shadow 100, extra 0.
    r.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(Time(100), r.reserve(6, 50));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(0), r.extra());
    // Wider than the machine: never.
    r.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(kNever, r.reserve(11, 50));
  }
  void testShadowPastPredictedEnds() {
    // Predicted ends in the past still count (spec: that is why correction
    // matters): the shadow time is in the past.
    ProcResources r(10);
    r.start(1, 8, 50, 50);
    r.begin_pass(80);
    CPPUNIT_ASSERT_EQUAL(Time(50), r.reserve(10, 10));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(0), r.extra());
    // Nothing can backfill: (a) cannot hold for a shadow in the past and
    // there is no extra.
    CPPUNIT_ASSERT(!r.may_backfill(1, 81));
  }
  void testBackfillRules() {
    ProcResources r(10);
    r.start(1, 4, 100, 100);
    r.start(2, 4, 200, 200);
    r.begin_pass(0);
    r.reserve(7, 50);  // shadow 200, extra 3
    // (a): ends before the shadow time, may use any free processor.
    CPPUNIT_ASSERT(r.may_backfill(2, 200));
    // Does not fit the free processors at all.
    CPPUNIT_ASSERT(!r.may_backfill(3, 10));
    // (b): ends after the shadow but fits the extra processors.
    CPPUNIT_ASSERT(r.may_backfill(2, 500));
    r.start(3, 2, 500, 500);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(1), r.extra());  // (b) shrinks extra
    CPPUNIT_ASSERT_EQUAL(std::int64_t(0), r.free());
  }
  // With several reservations (availability profile) a job backfilled under
  // the safe rule is held until its bound (its estimate), not its prediction:
  // a later reservation in the same pass must not plan on its processors.
  // 10 procs; R (6) predicted to end at 100; head H (10) reserved at 100;
  // B (4) backfills with prediction 50 but bound 90; J (4, 40 s) then fits
  // only after H: 150, not 50.
  void testProfileHoldsBackfillUntilItsBound() {
    ProcResources r(10);
    r.start(1, 6, 100, 100);
    r.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(Time(100), r.reserve(10, 50));
    CPPUNIT_ASSERT_EQUAL(Time(150), r.reserve(10, 50));  // second reservation: profile
    CPPUNIT_ASSERT(r.may_backfill(4, 90));
    r.start(2, 4, /*end_bound=*/90, /*predicted_end=*/50);
    CPPUNIT_ASSERT_EQUAL(Time(200), r.reserve(4, 40));
    // Without the safe rule (bound == prediction) the same job frees its
    // processors at 50.
    ProcResources p(10);
    p.start(1, 6, 100, 100);
    p.begin_pass(0);
    p.reserve(10, 50);
    p.reserve(10, 50);
    p.start(2, 4, 50, 50);
    CPPUNIT_ASSERT_EQUAL(Time(50), p.reserve(4, 40));
  }
  void testPassDirect() {
    // schedule_pass with a recording adapter: 10 procs, job 0 (6 procs) runs
    // until 100. Queue: 1 (8 procs, head), 2 (2 procs, p=500), 3 (1 proc,
    // p=50), 4 (1 proc, p=200).
    RecordingAdapter a{ProcResources(10), 0, {6, 8, 2, 1, 1}, {100, 10, 500, 50, 200}, {}, {}};
    a.res.start(0, 6, 100, 100);
    a.res.begin_pass(0);
    WaitQueue q(BackfillOrder::Queue);
    for (JobHandle h = 1; h <= 4; ++h) q.push(h, {0, h}, a.pred[h], a.pred[h], a.sizes[h]);
    PolicyConfig cfg;
    cfg.backfill = BackfillOrder::Queue;
    const PassResult r = schedule_pass(0, q, a, cfg);
    CPPUNIT_ASSERT(r.head_reserved);
    CPPUNIT_ASSERT_EQUAL(JobHandle(1), r.head);
    CPPUNIT_ASSERT_EQUAL(Time(100), r.shadow);  // extra = 4 + 6 - 8 = 2
    // 2 via (b) using the 2 extra, 3 via (a); 4 neither (extra now 0).
    CPPUNIT_ASSERT(std::vector<JobHandle>({2, 3}) == a.started);
    CPPUNIT_ASSERT_EQUAL(2u, r.started_backfill);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), q.size());
  }
  void testSimulatedBackfillAB() {
    // The same scenario through the simulator, with completions.
    const Workload w = workload(10, {
        {0, 100, 100, 6},   // 0 runs [0,100)
        {0, 10, 10, 8},     // 1 head: blocked, shadow 100, extra 2
        {0, 500, 500, 2},   // 2 (b): uses the 2 extra processors
        {0, 50, 50, 1},     // 3 (a): ends at 50 <= 100
        {0, 200, 200, 1},   // 4 neither: waits
    });
    const RunResult r = Simulator(w, sched("easy")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 0, 0, 110}) == starts(r));
    CPPUNIT_ASSERT(r.jobs[2].backfilled && r.jobs[3].backfilled && !r.jobs[1].backfilled);
    CPPUNIT_ASSERT_EQUAL(Time(100), r.jobs[1].first_reservation);
    // Job 4 became head at t=100 (after 1 started) and fit when 1 ended.
    CPPUNIT_ASSERT_EQUAL(Time(110), r.jobs[4].first_reservation);
  }
  void testCollapseWithoutCorrection() {
    // User 1's two short jobs make the prediction of its long job L 10 s.
    // L is still running at its predicted end (t=30). The wide head H then
    // has a shadow time in the past. Without correction, C (2 procs, 60 s)
    // cannot backfill: the reservation has collapsed to "now" and there is
    // no extra. With correction, L's prediction becomes its estimate at
    // t=30, the shadow moves to 2020, and C backfills at once.
    const Workload w = workload(10, {
        {0, 10, 100, 1, 1},       // a1
        {0, 10, 100, 1, 1},       // a2
        {20, 1000, 2000, 5, 1},   // L: predicted 10, runs 1000
        {25, 100, 100, 10, 2},    // H: needs the whole machine
        {40, 50, 60, 2, 3},       // C
    });
    const RunResult nocorr = Simulator(w, sched("easy-pred")).run();
    const RunResult corr = Simulator(w, sched("easy+")).run();
    const RunResult est = Simulator(w, sched("easy")).run();
    CPPUNIT_ASSERT_EQUAL(Time(10), corr.jobs[2].first_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1020), nocorr.jobs[3].start);
    CPPUNIT_ASSERT_EQUAL(Time(1120), nocorr.jobs[4].start);  // collapse: waits for H
    CPPUNIT_ASSERT_EQUAL(0u, nocorr.jobs[2].corrections);
    CPPUNIT_ASSERT_EQUAL(Time(40), corr.jobs[4].start);      // repaired
    CPPUNIT_ASSERT_EQUAL(1u, corr.jobs[2].corrections);
    CPPUNIT_ASSERT_EQUAL(Time(2000), corr.jobs[2].final_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(40), est.jobs[4].start);
    // H's first reservation: L's predicted end (30) with predictions, its
    // estimated end (2020) with estimates.
    CPPUNIT_ASSERT_EQUAL(Time(30), corr.jobs[3].first_reservation);
    CPPUNIT_ASSERT_EQUAL(Time(2020), est.jobs[3].first_reservation);
  }
  void testSjbfOrderKeepsReservationOnHead() {
    // 10 procs; job 0 (8 procs) runs until 100; head H (10 procs) waits.
    // X (2 procs, 90 s) is ahead of Y (2 procs, 30 s) in the queue; only one
    // fits the 2 free processors.
    // EASY backfills X (queue order); SJBF backfills Y (shorter). The
    // reservation stays on H in both: it starts at 100, not Y or X first.
    const Workload w = workload(10, {
        {0, 100, 100, 8, 1},
        {1, 10, 10, 10, 2},   // H
        {2, 90, 90, 2, 3},    // X
        {2, 30, 30, 2, 4},    // Y
        {2, 20, 20, 3, 5},    // Z: shortest but wider than the 2 free procs
    });
    const RunResult fcfs = Simulator(w, sched("easy")).run();
    const RunResult sjbf = Simulator(w, sched("easy-sjbf")).run();
    CPPUNIT_ASSERT_EQUAL(Time(100), fcfs.jobs[1].start);
    CPPUNIT_ASSERT_EQUAL(Time(100), sjbf.jobs[1].start);
    CPPUNIT_ASSERT_EQUAL(Time(2), fcfs.jobs[2].start);   // X first under EASY
    CPPUNIT_ASSERT(fcfs.jobs[3].start >= 100);           // Y must wait
    CPPUNIT_ASSERT_EQUAL(Time(2), sjbf.jobs[3].start);   // Y first under SJBF
    CPPUNIT_ASSERT(sjbf.jobs[2].start >= 100);           // X waits
    CPPUNIT_ASSERT(sjbf.jobs[4].start >= 100);           // Z never fit
    CPPUNIT_ASSERT_EQUAL(Time(100), sjbf.jobs[1].first_reservation);
  }
  void testFcfsNoBackfill() {
    const Workload w = workload(10, {
        {0, 100, 100, 8},
        {1, 10, 10, 10},
        {2, 5, 5, 1},  // would fit, but FCFS never backfills
    });
    const RunResult r = Simulator(w, sched("fcfs")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 110}) == starts(r));
    CPPUNIT_ASSERT_EQUAL(Time(-1), r.jobs[1].first_reservation);
  }
  void testSafeBackfill() {
    // Candidate C is predicted short (user history) but has a long estimate:
    // plain EASY++ backfills it by (a); "safe" refuses, since running to its
    // estimate it would delay the head.
    const Workload w = workload(10, {
        {0, 5, 1000, 1, 1},
        {0, 5, 1000, 1, 1},
        {10, 100, 100, 9, 2},    // B runs [10,110)
        {11, 10, 10, 10, 3},     // H: shadow 110
        {12, 20, 1000, 1, 1},    // C: predicted 5, estimate 1000
    });
    const RunResult plain = Simulator(w, sched("easy++")).run();
    const RunResult safe = Simulator(w, sched("easy++:safe=yes")).run();
    CPPUNIT_ASSERT_EQUAL(Time(5), plain.jobs[4].first_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(12), plain.jobs[4].start);
    CPPUNIT_ASSERT(safe.jobs[4].start >= 110);
  }
  void testStarvationGuard() {
    // User 1's history predicts 5 s for jobs with a 1000 s limit. The head H
    // (whole machine) waits for R until 1000. C1 (t=20) and C2 (t=200) are
    // such jobs: plain EASY++ backfills both by prediction. With
    // safe-after=100, H has waited 190 s when C2 arrives, so C2 is judged by
    // its limit (it could run past H's reservation) and must wait.
    const Workload w = workload(10, {
        {0, 5, 1000, 1, 1},
        {0, 5, 1000, 1, 1},
        {0, 1000, 1000, 8, 9},   // R
        {10, 10, 10, 10, 2},     // H
        {20, 5, 1000, 1, 1},     // C1
        {200, 5, 1000, 1, 1},    // C2
    });
    const RunResult plain = Simulator(w, sched("easy++")).run();
    const RunResult guard = Simulator(w, sched("easy++:safe-after=100")).run();
    CPPUNIT_ASSERT_EQUAL(Time(20), plain.jobs[4].start);
    CPPUNIT_ASSERT_EQUAL(Time(20), guard.jobs[4].start);  // head not starving yet
    CPPUNIT_ASSERT_EQUAL(Time(200), plain.jobs[5].start);
    CPPUNIT_ASSERT(guard.jobs[5].start >= 1000);           // protected head
    CPPUNIT_ASSERT_EQUAL(Time(1000), guard.jobs[3].start);
    CPPUNIT_ASSERT_EQUAL(Time(1000), plain.jobs[3].start);
  }
  void testConservativeReservesEveryone() {
    // 10 procs; 0 (6 procs) runs [0,100). Head 1 (8 procs) is reserved at
    // 100 with 2 extra. 2 needs the whole machine; 3 (2 procs, 500 s).
    // EASY: 3 backfills into the extra at t=3 (it cannot hurt the head), and
    //   2, which has no reservation, waits until 3 ends at 503.
    // Conservative: 2 also holds a reservation (at 200, the whole machine),
    //   so 3 may not start: it would overlap it. 3 runs after 2.
    const Workload w = workload(10, {
        {0, 100, 100, 6},
        {1, 100, 100, 8},
        {2, 100, 100, 10},
        {3, 500, 500, 2},
    });
    const RunResult easy = Simulator(w, sched("easy")).run();
    const RunResult cons = Simulator(w, sched("conservative")).run();
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 503, 3}) == starts(easy));
    CPPUNIT_ASSERT(std::vector<Time>({0, 100, 200, 300}) == starts(cons));
    // Depth 2 behaves like conservative here (two blocked jobs).
    const RunResult two = Simulator(w, sched("easy:reservations=2")).run();
    CPPUNIT_ASSERT(starts(cons) == starts(two));
  }
  // ProcResources' conservative planning (the profile, its per-pass search
  // hints) against a brute-force model: the free processors at any time are
  // what the running jobs (released at their predicted ends, past ones at
  // once) and this pass's reservations and starts leave, and a reservation
  // goes to the earliest time from which they leave enough for its whole
  // duration. Few job shapes, so a pass meets the same shape many times
  // (the hints' case), and many, so hint slots collide.
  void testProfileMatchesBruteForce() {
    struct Hold {
      Time from, to;  // [from, to)
      std::int64_t size;
    };
    std::mt19937_64 rng(20261124);
    for (int round = 0; round < 300; ++round) {
      const std::int64_t total = 4 + std::int64_t(rng() % 60);
      const int shapes = round % 2 ? 3 : 400;
      auto shape = [&](std::int64_t* size, Time* duration) {
        const std::uint64_t k = rng() % std::uint64_t(shapes);
        *size = 1 + std::int64_t(k * 7919 % std::uint64_t(total + 2));  // some wider than the machine
        *duration = 1 + Time(k * 104729 % 300);
      };
      ProcResources r(total);
      struct Run {
        JobHandle h;
        std::int64_t size;
        Time end;
      };
      std::vector<Run> running;
      JobHandle next = 0;
      Time now = 0;
      for (int pass = 0; pass < 40; ++pass) {
        now += Time(rng() % 50);
        // Some running jobs end; some predicted ends lie in the past.
        for (std::size_t i = 0; i < running.size();) {
          if (rng() % 4 == 0) {
            r.remove_running(running[i].h, running[i].size, running[i].end);
            running.erase(running.begin() + std::ptrdiff_t(i));
          } else {
            ++i;
          }
        }
        r.begin_pass(now);
        std::int64_t free_now = total;  // actual free processors
        for (const Run& x : running) free_now -= x.size;
        CPPUNIT_ASSERT_EQUAL(free_now, r.free());
        // The plan: the pass's start, less this pass's reservations and starts.
        const std::vector<Run> base = running;
        const std::int64_t base_free = free_now;
        std::vector<Hold> holds;
        auto free_at = [&](Time t) {  // t >= now
          std::int64_t f = base_free;
          for (const Run& x : base)
            if (x.end <= t) f += x.size;
          for (const Hold& h : holds)
            if (h.from <= t && t < h.to) f -= h.size;
          return f;
        };
        // Breakpoints: the planned free count only changes at these times.
        auto points = [&] {
          std::vector<Time> ts{now};
          for (const Run& x : base)
            if (x.end > now) ts.push_back(x.end);
          for (const Hold& h : holds) {
            ts.push_back(std::max(h.from, now));
            ts.push_back(h.to);
          }
          std::sort(ts.begin(), ts.end());
          ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
          return ts;
        };
        // Enough over [from, to)? (ts: the breakpoints)
        auto room = [&](Time from, Time to, std::int64_t size, const std::vector<Time>& ts) {
          for (Time t : ts)
            if (t >= from && t < to && free_at(t) < size) return false;
          return free_at(from) >= size;
        };
        auto earliest = [&](std::int64_t size, Time duration) {
          const std::vector<Time> ts = points();
          for (Time t : ts)
            if (room(t, t + duration, size, ts)) return t;
          return kNever;
        };
        // The head, in EASY's shadow/extra form (the profile takes it over).
        std::int64_t hs;
        Time hd;
        shape(&hs, &hd);
        const Time shadow = r.reserve(hs, hd);
        if (shadow < kNever) holds.push_back({std::max(shadow, now), std::max(shadow, now) + hd, hs});
        bool profile = false;
        // start_limits() from every earlier point of the pass: a job that
        // may backfill lies within each (the pass only takes processors
        // away), the shadow/extra form's switch to the profile included.
        std::vector<StartLimits> limits;
        auto within = [](const StartLimits& l, std::int64_t size, Time duration) {
          if (size <= l.extra || (size <= l.free && duration <= l.limit)) return true;
          for (unsigned i = 0; i < l.n_steps; ++i)
            if (size <= l.steps[i].width && duration <= l.steps[i].limit) return true;
          return false;
        };
        for (int k = 0; k < 30; ++k) {
          std::int64_t size;
          Time duration;
          shape(&size, &duration);
          // Until a second reservation builds the profile, EASY's rule.
          const bool fits = size <= free_now && (profile ? room(now, now + duration, size, points())
                                                         : now + duration <= shadow || size <= r.extra());
          CPPUNIT_ASSERT_EQUAL(fits, r.may_backfill(size, now + duration));
          limits.push_back(r.start_limits());
          const StartLimits& l = limits.back();
          CPPUNIT_ASSERT(l.extra <= l.free && l.n_steps <= StartLimits::kMaxSteps);
          for (unsigned i = 0; i < l.n_steps; ++i) {  // the shape the index relies on
            CPPUNIT_ASSERT(l.steps[i].width > l.extra);
            CPPUNIT_ASSERT(l.steps[i].width < (i ? l.steps[i - 1].width : l.free));
            CPPUNIT_ASSERT(l.steps[i].limit > (i ? l.steps[i - 1].limit : l.limit));
          }
          // This job and a few of any size and length (how many the limits
          // let in that cannot start, their tightness, is not asserted).
          for (int j = 0; j < 8; ++j) {
            const std::int64_t sz = j == 0 ? size : 1 + std::int64_t(rng() % std::uint64_t(total));
            const Time d = j == 0 ? duration : 1 + Time(rng() % 320);
            if (r.may_backfill(sz, now + d))
              for (const StartLimits& old : limits) CPPUNIT_ASSERT(within(old, sz, d));
          }
          if (fits && rng() % 2) {
            r.start(next, size, now + duration, now + duration);
            running.push_back({next++, size, now + duration});
            holds.push_back({now, now + duration, size});
            free_now -= size;
            continue;
          }
          profile = true;
          const Time want = earliest(size, duration);
          CPPUNIT_ASSERT_EQUAL(want, r.reserve(size, duration));
          if (want < kNever) holds.push_back({want, want + duration, size});
        }
      }
    }
  }
  // Deeper reservations with start_limits() (the index finds the next job
  // that could start, the jobs before it are only reserved, the pass ends
  // when none is left) start exactly the jobs that asking every job starts:
  // random machines, running jobs (some past their predicted ends) and
  // queues, conservative and two or three reservations (in queue and in
  // SJBF order), with and without safe backfilling; runs of identical jobs
  // (the reservation hints) too.
  void testStartLimitsChangeNoDecision() {
    std::mt19937_64 rng(20261125);
    int stopped_early = 0;
    for (int round = 0; round < 400; ++round) {
      const std::int64_t total = 8 + std::int64_t(rng() % 120);
      const int n = 5 + int(rng() % 150);
      const int running = int(rng() % 20);
      std::vector<std::int64_t> sizes;
      std::vector<Time> pred, est;
      for (int i = 0; i < running + n; ++i) {
        const bool same = i > 0 && rng() % 4 == 0;  // a run of one shape
        sizes.push_back(same ? sizes.back()
                             : 1 + std::int64_t(rng() % 3 ? rng() % 8 : rng() % std::uint64_t(total)));
        pred.push_back(same ? pred.back() : 1 + Time(rng() % 2000));
        est.push_back(pred.back() + Time(rng() % 3 ? 0 : rng() % 3000));
      }
      const Time now = 1000;
      PolicyConfig cfg;
      // (SJBF only with a few reservations: its walk past them uses the limits.)
      const bool sjbf = round % 6 == 3;
      cfg.backfill = sjbf ? BackfillOrder::ShortestPrediction : BackfillOrder::Queue;
      cfg.reservations = round % 3 == 0 ? 2 + int(rng() % 2) : 0;
      cfg.safe = round % 4 == 1;
      if (round % 5 == 2) cfg.max_delay = Time(rng() % 1500);  // a finite room (guard.md)
      auto setup = [&](RecordingAdapter& a, WaitQueue& q) {
        a.res = ProcResources(total);
        a.now = now;
        a.sizes = sizes;
        a.pred = pred;
        std::int64_t used = 0;
        for (int i = 0; i < running && used + sizes[std::size_t(i)] <= total; ++i) {
          used += sizes[std::size_t(i)];
          // Some predicted ends already past (expired predictions).
          a.res.start(JobHandle(i), sizes[std::size_t(i)], 0, now - 200 + Time(rng() % 3000));
        }
        a.res.begin_pass(now);
        for (int i = running; i < running + n; ++i)
          q.push(JobHandle(i), {i, 0}, pred[std::size_t(i)], est[std::size_t(i)],
                 sizes[std::size_t(i)]);
      };
      const LimitsPasses p = passes_with_and_without_limits(
          rng, now, cfg, setup, "round " + std::to_string(round));
      if (p.limits.reserved.size() < p.plain.reserved.size()) ++stopped_early;
    }
    CPPUNIT_ASSERT(stopped_early > 40);  // the shortcut was taken
  }
  // The guard's finite room in the conservative index's probe: a job whose
  // prediction fits before the head's reservation but whose estimate ends
  // past the shadow + room may not start, and the index must not offer it.
  // 10 procs; 0 (6 procs) runs until 100; the head (10 procs) is reserved
  // at 100, leaving 4 procs free for 100 s; twenty jobs of 1 proc predict
  // 50 s but ask 5000 s; max-delay 60 (room 60). None may start, so the
  // pass ends after the first of them without testing the others (a probe
  // by prediction alone would offer three more, each refused and reserved
  // at once on one of the free procs), and starts what the pass without
  // start_limits() starts (nothing).
  void testStartLimitsHonourTheRoom() {
    const Time now = 1000;
    // One pass with and one without start_limits(), on the same world; the
    // job `short_job` (if any) asks 100 s instead of 5000.
    struct Both {
      RecordingAdapter plain;
      LimitsAdapter limits;
      PassResult r1, r2;
    };
    auto both = [&](Time max_delay, JobHandle short_job) {
      PolicyConfig cfg;
      cfg.backfill = BackfillOrder::Queue;
      cfg.reservations = 0;  // conservative
      cfg.max_delay = max_delay;
      auto setup = [&](RecordingAdapter& a, WaitQueue& q) {
        a.res = ProcResources(10);
        a.now = now;
        a.sizes = {6, 10};
        a.pred = {100, 100};
        for (int i = 0; i < 20; ++i) {
          a.sizes.push_back(1);
          a.pred.push_back(50);
        }
        a.res.start(0, 6, now + 100, now + 100);
        a.res.begin_pass(now);
        q.push(1, {1, 0}, 100, 100, 10);
        for (int i = 2; i < 22; ++i)
          q.push(JobHandle(i), {i, 0}, 50, JobHandle(i) == short_job ? 100 : 5000, 1);
      };
      Both b;
      WaitQueue q1(BackfillOrder::Queue), q2(BackfillOrder::Queue);
      setup(b.plain, q1);
      setup(b.limits, q2);
      b.r1 = schedule_pass(now, q1, b.plain, cfg);
      b.r2 = schedule_pass(now, q2, b.limits, cfg);
      return b;
    };
    const JobHandle kNone = 0;  // (the running job: never in the queue)
    const Both a = both(60, kNone);
    CPPUNIT_ASSERT_EQUAL(Time(60), a.r2.head_room);
    CPPUNIT_ASSERT(a.plain.started.empty());
    CPPUNIT_ASSERT(a.limits.started.empty());
    CPPUNIT_ASSERT_EQUAL(20u, unsigned(a.r1.tested));  // asked one by one, all refused
    // The first after the head is asked: until a second reservation builds
    // the profile, start_limits() knows only the free processors
    // (ProcResources::start_limits); with the profile, the probe is exact.
    CPPUNIT_ASSERT_EQUAL(1u, unsigned(a.r2.tested));
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), a.limits.reserved.size());
    // With room for their estimates (max-delay 5000), the first four fit
    // the free procs and start in both.
    const Both b = both(5000, kNone);
    CPPUNIT_ASSERT(std::vector<JobHandle>({2, 3, 4, 5}) == b.plain.started);
    CPPUNIT_ASSERT(b.plain.started == b.limits.started);
    // Room 60 again, and job 7 may start (its estimate is 100 s). 2 is
    // tested and reserved now; the index then finds 7, past 3-6, which are
    // skipped but reserved now by their predictions on the free procs. Once
    // 3-5 hold them, 7 can no longer start: the pass asks the index again
    // after each such reservation and ends at 6 without testing 7.
    const Both c = both(60, 7);
    CPPUNIT_ASSERT(c.plain.started.empty());
    CPPUNIT_ASSERT(c.limits.started.empty());
    CPPUNIT_ASSERT_EQUAL(20u, unsigned(c.r1.tested));
    CPPUNIT_ASSERT_EQUAL(1u, unsigned(c.r2.tested));
    CPPUNIT_ASSERT_EQUAL(std::size_t(5), c.limits.reserved.size());  // the head, 2-5
  }
  // start_limits() walks the whole profile: a drop far out (here past the
  // 300th segment) still bounds how long a narrow job may be. 400 procs;
  // 300 running jobs of 1 proc end at now+10, now+20, ..., now+3000 (100
  // free now, one segment each); the head (400 procs, 100 s) is reserved at
  // now+3000 and leaves nothing free until now+3100. Forty jobs of 1 proc
  // ask 5000 s: each fits the free procs now but meets the head, so none may
  // start. The first is asked (before the profile exists start_limits()
  // knows only the free processors), refused and reserved; the profile's
  // limits then let in no job longer than 3000 s and the pass ends. (Cut
  // off at 256 segments, the walk saw 100 procs free throughout: all forty
  // asked and refused one by one.)
  void testStartLimitsSeeTheWholeProfile() {
    const Time now = 1000;
    auto setup = [&](RecordingAdapter& a, WaitQueue& q) {
      a.res = ProcResources(400);
      a.now = now;
      for (int i = 0; i < 300; ++i) {
        a.sizes.push_back(1);
        a.pred.push_back(10 * (i + 1));
        a.res.start(JobHandle(i), 1, now + 10 * (i + 1), now + 10 * (i + 1));
      }
      a.res.begin_pass(now);
      a.sizes.push_back(400);
      a.pred.push_back(100);
      q.push(300, {300, 0}, 100, 100, 400);
      for (int i = 301; i < 341; ++i) {
        a.sizes.push_back(1);
        a.pred.push_back(5000);
        q.push(JobHandle(i), {i, 0}, 5000, 5000, 1);
      }
    };
    PolicyConfig cfg;
    cfg.backfill = BackfillOrder::Queue;
    cfg.reservations = 0;  // conservative
    RecordingAdapter plain;
    LimitsAdapter limits;
    WaitQueue q1(BackfillOrder::Queue), q2(BackfillOrder::Queue);
    setup(plain, q1);
    setup(limits, q2);
    const PassResult r1 = schedule_pass(now, q1, plain, cfg);
    const PassResult r2 = schedule_pass(now, q2, limits, cfg);
    CPPUNIT_ASSERT_EQUAL(now + 3000, r2.shadow);
    CPPUNIT_ASSERT(plain.started.empty());
    CPPUNIT_ASSERT(limits.started.empty());
    CPPUNIT_ASSERT_EQUAL(40u, unsigned(r1.tested));  // asked one by one, all refused
    CPPUNIT_ASSERT_EQUAL(1u, unsigned(r2.tested));
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), limits.reserved.size());  // the head, 301
    CPPUNIT_ASSERT_EQUAL(now + 3100, limits.reserved[1].second);
    // The limits themselves after those two reservations: 100 procs for up
    // to 3000 s, then nothing (the drop at the 301st segment).
    const StartLimits l = limits.res.start_limits();
    CPPUNIT_ASSERT_EQUAL(std::int64_t(100), l.free);
    CPPUNIT_ASSERT_EQUAL(Time(3000), l.limit);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(0), l.extra);
    CPPUNIT_ASSERT_EQUAL(0u, l.n_steps);
  }
  // Past the last of N reservations (FCFS, reservations=2) the index finds
  // the jobs that could start around them, instead of asking every job.
  // 10 procs; 0 (6 procs) runs until now+100; 1 and 2 (10 procs, 100 s)
  // are reserved at now+100 and now+200; fifty jobs of 1 proc and 500 s
  // cannot start (nothing is free from now+100), job 53 (1 proc, 50 s)
  // can. Both passes start 53; without start_limits() all 51 are asked
  // (and 2 before its reservation), with it 53 alone: in queue order the
  // index finds it; in SJBF order (53 first) the walk stops after it, since
  // nothing is free whatever the length and the rest are longer than every
  // limit.
  // Selective reservations with start_limits() (phase A ends the pass once
  // nothing fits, phase B asks only the jobs within the limits: through
  // the queue-order index under FCFS on long queues, by a filtered walk on
  // short ones and under SJBF) start exactly the jobs that asking every
  // job starts, and reserve the same jobs up to where the pass ended:
  // random machines, running jobs (some past their predicted ends), queues
  // with random waits, one threshold or four, in both backfill orders, with
  // and without safe backfilling.
  void testSelectiveStartLimitsChangeNoDecision() {
    std::mt19937_64 rng(20261128);
    int fewer_tests = 0, stopped_early = 0, several = 0, long_fcfs = 0;
    for (int round = 0; round < 600; ++round) {
      // Some queues long enough for phase B to take the queue-order index
      // (kSelectiveWalkBelow), the others walked.
      const bool long_queue = round % 5 == 4;
      const std::int64_t total = (long_queue ? 100 : 8) + std::int64_t(rng() % 120);
      const int n = long_queue ? int(pass_detail::kSelectiveWalkBelow) + 20 + int(rng() % 400)
                               : 5 + int(rng() % 150);
      const int running = int(rng() % 20);
      std::vector<std::int64_t> sizes;
      std::vector<Time> pred, est, since;
      const Time now = 10000;
      for (int i = 0; i < running + n; ++i) {
        const bool same = i > 0 && rng() % 4 == 0;  // a run of one shape
        // (Long queues: mostly narrow jobs, so that many start in phase B.)
        const std::int64_t narrow = long_queue ? 3 : 8;
        sizes.push_back(same ? sizes.back()
                             : 1 + std::int64_t(rng() % 3 ? rng() % narrow : rng() % std::uint64_t(total)));
        pred.push_back(same ? pred.back() : 1 + Time(rng() % 2000));
        est.push_back(pred.back() + Time(rng() % 3 ? 0 : rng() % 3000));
        since.push_back(now - Time(rng() % 6000));
      }
      PolicyConfig cfg;
      cfg.backfill = round % 2 ? BackfillOrder::ShortestPrediction : BackfillOrder::Queue;
      cfg.reservations = 1;
      cfg.safe = round % 4 == 1;
      Selective& sel = cfg.selective;
      sel.mode = Selective::Mode::Given;
      sel.per_category = round % 3 == 0;
      // (Long queues: few starve, so that phase B meets most of the queue.)
      for (double& t : sel.threshold)
        t = (long_queue ? 40 : 1) + double(rng() % 4000) / 100.0;
      sel.short_limit = 600;
      sel.narrow_width = 4;
      auto setup = [&](RecordingAdapter& a, WaitQueue& q) {
        a.res = ProcResources(total);
        a.now = now;
        a.sizes = sizes;
        a.pred = pred;
        std::int64_t used = 0;
        for (int i = 0; i < running && used + sizes[std::size_t(i)] <= total; ++i) {
          used += sizes[std::size_t(i)];
          a.res.start(JobHandle(i), sizes[std::size_t(i)], 0, now - 200 + Time(rng() % 3000));
        }
        a.res.begin_pass(now);
        for (int i = running; i < running + n; ++i) {
          const auto k = std::size_t(i);
          q.push(JobHandle(i), {since[k], i}, pred[k], est[k], sizes[k], since[k]);
        }
      };
      const std::string msg = "round " + std::to_string(round);
      const LimitsPasses p = passes_with_and_without_limits(rng, now, cfg, setup, msg);
      const PassResult &r1 = p.r1, &r2 = p.r2;
      const RecordingAdapter& plain = p.plain;
      const LimitsAdapter& limits = p.limits;
      CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, r1.head_reserved, r2.head_reserved);
      if (r1.head_reserved) CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, r1.head, r2.head);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, p.left1, p.left2);
      fewer_tests += r2.tested < r1.tested;
      stopped_early += limits.reserved.size() < plain.reserved.size();
      several += plain.reserved.size() >= 2;
      long_fcfs += long_queue && cfg.backfill == BackfillOrder::Queue &&
                   r2.started_backfill > 0;
    }
    // The shortcuts were taken, and the worlds had several reservations.
    CPPUNIT_ASSERT(fewer_tests > 100);
    CPPUNIT_ASSERT(stopped_early > 20);
    CPPUNIT_ASSERT(several > 100);
    CPPUNIT_ASSERT(long_fcfs > 20);
  }
  void testStartLimitsAfterTheLastReservation() {
    for (BackfillOrder order : {BackfillOrder::Queue, BackfillOrder::ShortestPrediction})
      startLimitsAfterTheLastReservation(order);
  }
  void startLimitsAfterTheLastReservation(BackfillOrder order) {
    const Time now = 1000;
    auto setup = [&](RecordingAdapter& a, WaitQueue& q) {
      a.res = ProcResources(10);
      a.now = now;
      a.sizes = {6, 10, 10};
      a.pred = {100, 100, 100};
      a.res.start(0, 6, now + 100, now + 100);
      a.res.begin_pass(now);
      q.push(1, {1, 0}, 100, 100, 10);
      q.push(2, {2, 0}, 100, 100, 10);
      for (int i = 3; i < 54; ++i) {
        a.sizes.push_back(1);
        a.pred.push_back(i == 53 ? 50 : 500);
        q.push(JobHandle(i), {i, 0}, a.pred.back(), a.pred.back(), 1);
      }
    };
    PolicyConfig cfg;
    cfg.backfill = order;
    cfg.reservations = 2;
    RecordingAdapter plain;
    LimitsAdapter limits;
    WaitQueue q1(order), q2(order);
    setup(plain, q1);
    setup(limits, q2);
    const PassResult r1 = schedule_pass(now, q1, plain, cfg);
    const PassResult r2 = schedule_pass(now, q2, limits, cfg);
    CPPUNIT_ASSERT(std::vector<JobHandle>({53}) == plain.started);
    CPPUNIT_ASSERT(plain.started == limits.started);
    CPPUNIT_ASSERT_EQUAL(2u, unsigned(r2.reservations));
    CPPUNIT_ASSERT_EQUAL(now + 200, limits.reserved[1].second);
    CPPUNIT_ASSERT_EQUAL(52u, unsigned(r1.tested));
    // (In SJBF order phase A asks 2 as well: its index is the queue order's.)
    CPPUNIT_ASSERT_EQUAL(order == BackfillOrder::Queue ? 1u : 2u, unsigned(r2.tested));
  }
  // A pass's reserved slots answer contains() alike whether they are few
  // (searched) or many (a table by slot, built at the first question past
  // 16 and kept up to date by later adds), for slots far apart too.
  void testReservedSlots() {
    std::mt19937_64 rng(20261128);
    for (int round = 0; round < 50; ++round) {
      pass_detail::ReservedSlots r;
      std::vector<bool> in(5000, false);
      const int n = 1 + int(rng() % 60);
      for (int k = 0; k < n; ++k) {
        WaitQueue::Slot s;
        do s = WaitQueue::Slot(rng() % (k % 7 == 0 ? 5000 : 64));
        while (in[s]);
        r.add(s);
        in[s] = true;
        if (rng() % 3 == 0) {  // ask now and then, as passes do between adds
          for (WaitQueue::Slot q = 0; q < 5000; q += 1 + WaitQueue::Slot(rng() % 40))
            CPPUNIT_ASSERT_EQUAL(bool(in[q]), r.contains(q));
        }
      }
      for (WaitQueue::Slot q = 0; q < 5000; ++q) CPPUNIT_ASSERT_EQUAL(bool(in[q]), r.contains(q));
      CPPUNIT_ASSERT(!r.contains(WaitQueue::Slot(1u << 30)));
    }
  }
  // A pass that continues the last one (PassCarry) starts the jobs a pass
  // from scratch starts, over several passes of one world: EASY (FCFS and
  // SJBF) and conservative, random machines with running jobs (some past
  // their predicted ends), arrivals between passes, and sometimes what a
  // continued pass must not miss: a waiting job re-predicted (the queue's
  // value_changes()), a job ended (the running set's version), time past a
  // predicted end (the profile's next segment).
  void testCarriedPassIsFreshPass() {
    std::mt19937_64 rng(20261127);
    int continued = 0, refused = 0;
    for (int round = 0; round < 300; ++round) {
      const std::int64_t total = 8 + std::int64_t(rng() % 64);
      const int jobs = 200;
      std::vector<std::int64_t> sizes;
      std::vector<Time> pred;
      for (int i = 0; i < jobs; ++i) {
        const bool same = i > 0 && rng() % 4 == 0;
        sizes.push_back(same ? sizes.back()
                             : 1 + std::int64_t(rng() % 3 ? rng() % 6 : rng() % std::uint64_t(total)));
        pred.push_back(same ? pred.back() : 1 + Time(rng() % 1500));
        if (round % 2) pred.back() = 100 * (1 + pred.back() / 100);  // ends tie
      }
      PolicyConfig cfg;
      cfg.safe = false;
      cfg.reservations = round % 3 == 2 ? 0 : 1;
      cfg.backfill = round % 3 == 1 ? BackfillOrder::ShortestPrediction : BackfillOrder::Queue;
      CarryingAdapter a, b;  // a carries, b starts every pass from scratch
      WaitQueue qa(cfg.backfill), qb(cfg.backfill);
      PassCarry carry;
      std::vector<WaitQueue::Slot> arrived;
      std::vector<std::pair<JobHandle, Time>> ends;  // running: (handle, predicted end)
      Time now = 1000;
      for (CarryingAdapter* x : {&a, &b}) {
        x->res = ProcResources(total);
        x->sizes = sizes;
        x->pred = pred;
        x->now = now;
      }
      int next = 0;
      std::int64_t used = 0;
      for (; next < 15 && used + sizes[std::size_t(next)] <= total; ++next) {
        used += sizes[std::size_t(next)];
        Time end = now - 100 + Time(rng() % 1500);  // some already past
        if (round % 2) end -= end % 100;
        a.res.start(JobHandle(next), sizes[std::size_t(next)], end, end);
        b.res.start(JobHandle(next), sizes[std::size_t(next)], end, end);
        ends.emplace_back(JobHandle(next), end);
      }
      std::vector<WaitQueue::Slot> slot_a(std::size_t(jobs), WaitQueue::kNoSlot),
          slot_b(std::size_t(jobs), WaitQueue::kNoSlot);
      auto arrive = [&](int k) {
        for (int i = 0; i < k && next < jobs; ++i, ++next) {
          const std::size_t h = std::size_t(next);
          slot_a[h] = qa.push(JobHandle(next), {next, 0}, pred[h], pred[h], sizes[h]);
          slot_b[h] = qb.push(JobHandle(next), {next, 0}, pred[h], pred[h], sizes[h]);
          arrived.push_back(slot_a[h]);
        }
      };
      arrive(1 + int(rng() % 40));
      for (int pass = 0; pass < 8; ++pass) {
        const std::size_t sa = a.started.size();
        b.begin_pass(now);
        const PassResult ra = schedule_pass(now, qa, a, cfg, carry, arrived);
        const PassResult rb = schedule_pass(now, qb, b, cfg);
        arrived.clear();
        const std::string msg = "round " + std::to_string(round) + " pass " + std::to_string(pass);
        CPPUNIT_ASSERT_MESSAGE(msg, a.started == b.started);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, rb.shadow, ra.shadow);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, rb.head, ra.head);
        continued += ra.continued;
        for (std::size_t i = sa; i < a.started.size(); ++i) {
          const JobHandle h = a.started[i];
          ends.emplace_back(h, now + pred[h]);
        }
        // Between passes: arrivals, and sometimes one more change.
        now += round % 2 ? 100 : Time(rng() % 60);  // (0: another pass in the same second)
        arrive(int(rng() % 4));
        const int what = int(rng() % 6);
        std::vector<WaitQueue::Slot> waiting;
        for (int h = 0; h < next; ++h)
          if (slot_a[std::size_t(h)] != WaitQueue::kNoSlot &&
              std::find(a.started.begin(), a.started.end(), JobHandle(h)) == a.started.end())
            waiting.push_back(WaitQueue::Slot(h));
        // (re-predicted: one that would fit now made short, or any job)
        std::vector<WaitQueue::Slot> fitting;
        for (const WaitQueue::Slot h : waiting)
          if (sizes[h] <= a.res.free()) fitting.push_back(h);
        if (what == 0 && !waiting.empty()) {
          const bool fit = !fitting.empty() && rng() % 2;
          const std::size_t h = fit ? fitting[rng() % fitting.size()] : waiting[rng() % waiting.size()];
          const Time p = fit ? 1 : 1 + Time(rng() % 1500);
          qa.set_prediction(slot_a[h], p);
          qb.set_prediction(slot_b[h], p);
          a.pred[h] = b.pred[h] = pred[h] = p;
          ++refused;
        } else if (what <= 2 && !ends.empty()) {  // a running job ends
          const std::size_t k = rng() % ends.size();
          const auto [h, end] = ends[k];
          a.res.remove_running(h, sizes[h], end);
          b.res.remove_running(h, sizes[h], end);
          ends.erase(ends.begin() + std::ptrdiff_t(k));
          ++refused;
        } else if (what == 3) {  // past the next predicted end still ahead
          Time t = kNever;
          for (const auto& e : ends)
            if (e.second >= now) t = std::min(t, e.second);
          if (t < kNever) now = t + Time(rng() % 2);
        }
      }
    }
    CPPUNIT_ASSERT(continued > 300);
    CPPUNIT_ASSERT(refused > 300);
  }
  // A pass continues only after arrivals at the end of the queue: not
  // after an erase, a push that sorts before a waiting job, a re-prediction,
  // an end, nor when a value changes during the pass; and the SJBF order
  // never continues. 10 processors, job 0 (8) runs until 100; the head (job
  // 1, 5 processors) waits; jobs 2, 3 (3 processors, 500 s) wait too.
  void testCarryRefusals() {
    PolicyConfig cfg;
    cfg.backfill = BackfillOrder::Queue;
    cfg.reservations = 1;
    cfg.safe = false;
    auto world = [&](CarryingAdapter& a, WaitQueue& q, std::vector<WaitQueue::Slot>& slots) {
      a.res = ProcResources(10);
      a.sizes = {8, 5, 3, 3, 1, 1, 1};
      a.pred = {100, 50, 500, 500, 30, 30, 30};
      a.now = 0;
      a.res.start(0, 8, 100, 100);
      for (int h = 1; h <= 3; ++h)
        slots.push_back(q.push(JobHandle(h), {h, 0}, a.pred[std::size_t(h)], 600, a.sizes[std::size_t(h)]));
    };
    enum What { kArrival, kErase, kEarlyKey, kRepredict, kEnd };
    for (What what : {kArrival, kErase, kEarlyKey, kRepredict, kEnd}) {
      CarryingAdapter a;
      WaitQueue q(BackfillOrder::Queue);
      std::vector<WaitQueue::Slot> slots, arrived;
      world(a, q, slots);
      PassCarry carry;
      const PassResult r0 = schedule_pass(0, q, a, cfg, carry, slots);
      CPPUNIT_ASSERT(r0.head_reserved && !r0.continued && carry.ok);
      switch (what) {
        case kArrival: break;
        case kErase: q.erase(slots[2]); break;
        case kEarlyKey: arrived.push_back(q.push(5, {0, 5}, 30, 30, 1)); break;  // sorts first
        case kRepredict: q.set_prediction(slots[1], 40); break;
        case kEnd: a.res.remove_running(0, 8, 100); break;
      }
      arrived.push_back(q.push(4, {4, 0}, 30, 30, 1));
      const PassResult r1 = schedule_pass(10, q, a, cfg, carry, arrived);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(std::to_string(int(what)), what == kArrival, r1.continued);
    }
    // SJBF never continues.
    {
      PolicyConfig sj = cfg;
      sj.backfill = BackfillOrder::ShortestPrediction;
      CarryingAdapter a;
      WaitQueue q(BackfillOrder::ShortestPrediction);
      std::vector<WaitQueue::Slot> slots, arrived;
      world(a, q, slots);
      PassCarry carry;
      schedule_pass(0, q, a, sj, carry, slots);
      CPPUNIT_ASSERT(!carry.ok);
      arrived.push_back(q.push(4, {4, 0}, 30, 30, 1));
      CPPUNIT_ASSERT(!schedule_pass(10, q, a, sj, carry, arrived).continued);
    }
  }
  // A job backfilled before the profile exists (only the head reserved, in
  // EASY's form) is held until its end bound once a later reservation
  // builds the profile, as one backfilled after it is
  // (testProfileHoldsBackfillUntilItsBound): under the safe rule the bound
  // is the estimate, past the prediction. 10 processors; A (6) predicted to
  // end at 100; the head (8 processors, 50 s) reserved at 100 with 2 extra.
  // B (2 processors, predicted 20 s, bound 300) backfills into the extra.
  // C (4 processors, 50 s) would fit at 20 if B's processors came back at
  // its prediction; held until 300, C waits for the head to end: 150.
  void testProfileHoldsEarlyBackfillUntilItsBound() {
    ProcResources r(10);
    r.start(1, 6, 100, 100);
    r.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(Time(100), r.reserve(8, 50));
    CPPUNIT_ASSERT(r.may_backfill(2, 300));
    r.start(2, 2, 300, 20);
    CPPUNIT_ASSERT_EQUAL(Time(150), r.reserve(4, 50));
    // Without the safe bound (end bound = prediction) C fits at 20.
    ProcResources q(10);
    q.start(1, 6, 100, 100);
    q.begin_pass(0);
    CPPUNIT_ASSERT_EQUAL(Time(100), q.reserve(8, 50));
    q.start(2, 2, 20, 20);
    CPPUNIT_ASSERT_EQUAL(Time(20), q.reserve(4, 50));
  }
  void testSjfQueueOrder() {
    // SJF: the queue itself is sorted by estimate, so the reservation goes
    // to the shortest waiting job.
    const Workload w = workload(10, {
        {0, 100, 100, 10},
        {1, 500, 500, 10},
        {2, 50, 50, 10},
    });
    const RunResult sjf = Simulator(w, sched("sjf")).run();
    const RunResult easy = Simulator(w, sched("easy")).run();
    CPPUNIT_ASSERT_EQUAL(Time(100), sjf.jobs[2].start);
    CPPUNIT_ASSERT_EQUAL(Time(150), sjf.jobs[1].start);
    CPPUNIT_ASSERT_EQUAL(Time(100), easy.jobs[1].start);
    CPPUNIT_ASSERT_EQUAL(Time(600), easy.jobs[2].start);
  }
  void testPerfectAndX2() {
    // 10 procs; 0 (8 procs) runs [0,50) with estimate 1000. Head H (10).
    // Candidate C (2 procs) runs 40, estimate 100.
    const Workload w = workload(10, {
        {0, 50, 1000, 8},
        {1, 10, 10, 10},
        {2, 40, 100, 2},
    });
    // perfect: shadow 50; C would end at 42 <= 50: backfills at 2.
    const RunResult perfect = Simulator(w, sched("perfect")).run();
    CPPUNIT_ASSERT_EQUAL(Time(2), perfect.jobs[2].start);
    CPPUNIT_ASSERT_EQUAL(Time(50), perfect.jobs[1].first_reservation);
    CPPUNIT_ASSERT_EQUAL(100.0, perfect.jobs[0].accuracy * 100.0);
    // x2 plans with 2 x estimates: shadow 2000, C (planned 200) backfills.
    const RunResult x2 = Simulator(w, sched("x2")).run();
    CPPUNIT_ASSERT_EQUAL(Time(200), x2.jobs[2].first_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(2000), x2.jobs[1].first_reservation);
    CPPUNIT_ASSERT_EQUAL(Time(2), x2.jobs[2].start);
  }
  void testPresetsAreKnobCombinations() {
    // Each preset equals its base with knobs applied.
    auto same = [](const std::string& a, const std::string& b) {
      const SchedulerConfig x = sched(a), y = sched(b);
      return x.describe() == y.describe();
    };
    CPPUNIT_ASSERT(same("easy++", "easy:plan=prediction:correction=estimate:backfill=sjbf"));
    CPPUNIT_ASSERT(same("easy+", "easy:plan=prediction:correction=estimate"));
    CPPUNIT_ASSERT(same("easy-sjbf", "easy:backfill=sjbf"));
    CPPUNIT_ASSERT(same("easy-pred", "easy:plan=prediction"));
    CPPUNIT_ASSERT(same("easy-pcor", "easy:correction=estimate"));
    CPPUNIT_ASSERT(same("perfect++", "easy:plan=runtime:backfill=sjbf"));
    CPPUNIT_ASSERT(same("conservative", "easy:reservations=all"));
    CPPUNIT_ASSERT(same("sjf", "easy:queue-order=sjf"));
    CPPUNIT_ASSERT(same("fcfs", "easy:backfill=none"));
    CPPUNIT_ASSERT(same("x2", "easy:estimate-factor=2"));
    CPPUNIT_ASSERT(same("site", "easy++:max-delay=86400:safe-after=345600:learn=completed:"
                                "learn-min-runtime=60:history-ttl=31536000"));
    // The paper's easy++ has no guard and learns everything.
    const SchedulerConfig epp = sched("easy++");
    CPPUNIT_ASSERT_EQUAL(Time(-1), epp.policy.max_delay);
    CPPUNIT_ASSERT_EQUAL(Time(-1), epp.policy.safe_after);
    CPPUNIT_ASSERT(!epp.predictor.learn_completed_only);
    CPPUNIT_ASSERT_EQUAL(Time(0), epp.predictor.learn_min_runtime);
    CPPUNIT_ASSERT(epp.predictor.propagation);  // the authors' convention (issue 12)
    CPPUNIT_ASSERT(!same("easy++", "easy++:safe-after=3600"));
    CPPUNIT_ASSERT(!same("easy", "easy++"));
    // Selective reservations' presets are knob combinations too.
    CPPUNIT_ASSERT(same("sel", "easy:selective=derive"));
    CPPUNIT_ASSERT(same("sel-d++", "easy++:selective=derive-d"));
    CPPUNIT_ASSERT_EQUAL(std::size_t(17), preset_names().size());
    for (const auto& n : preset_names()) CPPUNIT_ASSERT(preset(n).has_value());
  }
  void testSpecParsing() {
    std::string err;
    CPPUNIT_ASSERT(!parse_scheduler_spec("easy+++", {}, &err));
    CPPUNIT_ASSERT(err.find("unknown scheduler") != std::string::npos);
    CPPUNIT_ASSERT(!parse_scheduler_spec("easy++:window=0", {}, &err));
    CPPUNIT_ASSERT(err.find("window") != std::string::npos);
    CPPUNIT_ASSERT(!parse_scheduler_spec("easy++:window", {}, &err));
    CPPUNIT_ASSERT(!parse_scheduler_spec("easy++:colour=red", {}, &err));
    CPPUNIT_ASSERT(err.find("unknown knob") != std::string::npos);
    // Spec knobs override base knobs, which override the preset.
    auto c = parse_scheduler_spec("easy++:window=5", {{"window", "3"}, {"metric", "median"}}, &err);
    CPPUNIT_ASSERT(c.has_value());
    CPPUNIT_ASSERT_EQUAL(5, c->predictor.window);
    CPPUNIT_ASSERT(c->predictor.metric == Metric::Median);
    CPPUNIT_ASSERT_EQUAL(std::string("easy++:window=5"), c->name);
  }
  void testJobsNeverEndEarly() {
    // The simulator's kill-time invariant: whatever the planning values, a
    // job runs exactly its runtime (under-predicted jobs are never cut).
    const Workload w = workload(10, {
        {0, 10, 100, 1, 1},
        {0, 10, 100, 1, 1},
        {20, 1000, 2000, 5, 1},
        {25, 100, 100, 10, 2},
        {40, 50, 60, 2, 3},
    });
    for (const auto& name : preset_names()) {
      const RunResult r = Simulator(w, sched(name)).run();
      for (std::size_t i = 0; i < w.jobs.size(); ++i)
        CPPUNIT_ASSERT_EQUAL(w.jobs[i].runtime, r.jobs[i].end - r.jobs[i].start);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PolicyTest);
