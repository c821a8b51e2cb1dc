// The owner of every job's prediction (libpredict's PredictionBook), as the
// plugin uses it (1 s grace, sparse Slurm job ids) and as the simulator does
// (no grace, dense handles): predictions made at arrival, propagation,
// array tasks inheriting the meta record's prediction, corrections of
// expired predictions, the correction timer, learning, forgetting, the
// sweep, the history's lifetime, and the one backfill bound.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "easypp/prediction_book.h"

using namespace easypp;

namespace {

SchedulerConfig easypp_cfg() { return *preset("easy++"); }

// The plugin's options (agent.cc): a correction falls due 1 s late; 0 s
// runtimes are not learned; any job id.
PredictionBook::Options plugin_options() {
  PredictionBook::Options o;
  o.grace = 1;
  o.min_learned_runtime = 1;
  return o;
}

struct Heard : PredictionBook::Listener {
  struct Event {
    JobHandle h;
    Time old_p, new_p;
    PlanChange why;
    std::uint32_t count;
  };
  std::vector<Event> events;
  void prediction_changed(const JobPlan& p, Time old_p, PlanChange why, Time) override {
    events.push_back(Event{p.handle, old_p, p.prediction, why, p.corr.count});
  }
};

// Two finished jobs of user 100 (runtimes a and b, limit 600 s).
void learn_two(PredictionBook& b, Time a, Time c) {
  b.finish(50, 100, 600, a, 10);
  b.finish(51, 100, 600, c, 11);
}

}  // namespace

class PredictionBookTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PredictionBookTest);
  CPPUNIT_TEST(testPredictionAtArrival);
  CPPUNIT_TEST(testPropagation);
  CPPUNIT_TEST(testPlanWithEstimate);
  CPPUNIT_TEST(testStartedTaskInheritsPrediction);
  CPPUNIT_TEST(testCorrectionWithGrace);
  CPPUNIT_TEST(testBeyondEstimate);
  CPPUNIT_TEST(testCorrectionNone);
  CPPUNIT_TEST(testNextExpiry);
  CPPUNIT_TEST(testLearnForgetAndSweep);
  CPPUNIT_TEST(testRequeueAndLimitChange);
  CPPUNIT_TEST(testConfigureKeepsHistory);
  CPPUNIT_TEST(testConfigureSwitchesCorrectionOn);
  CPPUNIT_TEST(testSimulatorOptions);
  CPPUNIT_TEST(testHistoryTtl);
  CPPUNIT_TEST(testEndBound);
  CPPUNIT_TEST(testAdoptContinuesAsBefore);
  CPPUNIT_TEST(testGroupsMatchPerJobPropagation);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testPredictionAtArrival() {
    SchedulerConfig cfg = easypp_cfg();
    cfg.predictor.propagation = false;  // the value made at arrival stays
    PredictionBook b(cfg, plugin_options());
    // No history: the estimate (fallback).
    const JobPlan& a = b.observe_waiting(1, 100, 600, 5, 100);
    CPPUNIT_ASSERT_EQUAL(Time(600), a.prediction);
    CPPUNIT_ASSERT(!a.from_history);
    learn_two(b, 10, 30);
    // Without propagation an existing entry keeps its prediction ...
    CPPUNIT_ASSERT_EQUAL(Time(600), b.observe_waiting(1, 100, 600, 5, 200).prediction);
    // ... a new job gets the average of the last two runtimes.
    const JobPlan& c = b.observe_waiting(2, 100, 600, 5, 200);
    CPPUNIT_ASSERT_EQUAL(Time(20), c.prediction);
    CPPUNIT_ASSERT(c.from_history);
    CPPUNIT_ASSERT_EQUAL(Time(20), c.first_prediction);
    // Another user has no history.
    CPPUNIT_ASSERT_EQUAL(Time(120), b.observe_waiting(3, 101, 120, 5, 200).prediction);
  }

  void testPropagation() {
    SchedulerConfig c = easypp_cfg();
    CPPUNIT_ASSERT(c.predictor.propagation);  // the default: the authors' convention
    PredictionBook b(c, plugin_options());
    Heard heard;
    b.set_listener(&heard);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.arrive(1, 100, 600, 5, 5).prediction);
    b.arrive(2, 101, 600, 5, 5);  // another user's job: untouched
    b.finish(50, 100, 600, 10, 10);
    CPPUNIT_ASSERT(heard.events.empty());  // one runtime: still the fallback
    b.finish(51, 100, 600, 30, 11);
    // The user's waiting job is predicted again at once, and heard of.
    CPPUNIT_ASSERT_EQUAL(Time(20), b.find(1)->prediction);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.find(1)->first_prediction);
    CPPUNIT_ASSERT(b.find(1)->from_history);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), heard.events.size());
    CPPUNIT_ASSERT(heard.events[0].why == PlanChange::Repredicted);
    CPPUNIT_ASSERT_EQUAL(Time(600), heard.events[0].old_p);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.find(2)->prediction);
    // A running job is not predicted again.
    b.start(1, 100);
    b.finish(52, 100, 600, 50, 12);
    CPPUNIT_ASSERT_EQUAL(Time(20), b.find(1)->prediction);
  }

  void testPlanWithEstimate() {
    SchedulerConfig c = easypp_cfg();
    c.plan = PlanWith::Estimate;
    PredictionBook b(c, plugin_options());
    learn_two(b, 10, 30);  // learned all the same (the plugin keeps history)
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), b.learned_total());
    CPPUNIT_ASSERT_EQUAL(Time(600), b.arrive(1, 100, 600, 5, 20).prediction);
    CPPUNIT_ASSERT(!b.find(1)->from_history);
  }

  void testStartedTaskInheritsPrediction() {
    PredictionBook b(easypp_cfg(), plugin_options());
    learn_two(b, 40, 40);
    b.observe_waiting(7, 100, 600, 5, 20);  // an array's meta record
    b.start_as(7, 9, 1000);                 // a task split off as job 9
    const JobPlan* task = b.find(9);
    CPPUNIT_ASSERT(task != nullptr);
    CPPUNIT_ASSERT(task->running);
    CPPUNIT_ASSERT_EQUAL(Time(40), task->prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1000), task->start);
    CPPUNIT_ASSERT(!b.find(7)->running);  // the meta record stays waiting
    CPPUNIT_ASSERT_EQUAL(Time(1041), b.next_expiry());
  }

  void testCorrectionWithGrace() {
    PredictionBook b(easypp_cfg(), plugin_options());
    Heard heard;
    b.set_listener(&heard);
    learn_two(b, 20, 20);
    b.observe_waiting(1, 100, 600, 5, 20);
    b.start(1, 1000);  // predicted end 1020
    // At the predicted end and within the grace second: not yet expired.
    CPPUNIT_ASSERT_EQUAL(0u, b.correct_expired(1020));
    CPPUNIT_ASSERT_EQUAL(Time(1021), b.next_expiry());
    // Still running one second later: corrected to the estimate, once.
    CPPUNIT_ASSERT_EQUAL(1u, b.correct_expired(1021));
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), heard.events.size());
    CPPUNIT_ASSERT_EQUAL(JobHandle(1), heard.events[0].h);
    CPPUNIT_ASSERT_EQUAL(Time(20), heard.events[0].old_p);
    CPPUNIT_ASSERT_EQUAL(Time(600), heard.events[0].new_p);
    CPPUNIT_ASSERT(heard.events[0].why == PlanChange::Corrected);
    CPPUNIT_ASSERT_EQUAL(1u, heard.events[0].count);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.find(1)->prediction);
    CPPUNIT_ASSERT_EQUAL(0u, b.correct_expired(1021));
    CPPUNIT_ASSERT_EQUAL(Time(1601), b.next_expiry());
  }

  void testBeyondEstimate() {
    PredictionBook b(easypp_cfg(), plugin_options());
    Heard heard;
    b.set_listener(&heard);
    b.observe_running(1, 100, 60, 0, 1);  // no history: prediction = estimate = 60
    // Far past its estimate (the kill came late): corrected until the
    // predicted end lies in the future: 60 -> 120 (+1 min) -> 1020 (+15 min).
    CPPUNIT_ASSERT_EQUAL(2u, b.correct_expired(500));
    CPPUNIT_ASSERT_EQUAL(Time(120), heard.events[0].new_p);
    CPPUNIT_ASSERT_EQUAL(Time(1020), heard.events[1].new_p);
    CPPUNIT_ASSERT_EQUAL(2u, heard.events[1].count);
    CPPUNIT_ASSERT(b.find(1)->planned_end() + 1 > 500);
    CPPUNIT_ASSERT_EQUAL(Time(1021), b.next_expiry());
  }

  void testCorrectionNone() {
    SchedulerConfig c = easypp_cfg();
    c.correction = CorrectionPolicy::None;
    PredictionBook b(c, plugin_options());
    learn_two(b, 20, 20);
    b.observe_running(1, 100, 600, 0, 1);
    CPPUNIT_ASSERT_EQUAL(kNever, b.next_expiry());
    CPPUNIT_ASSERT_EQUAL(0u, b.correct_expired(5000));  // stays expired
    CPPUNIT_ASSERT_EQUAL(Time(20), b.find(1)->prediction);
  }

  void testNextExpiry() {
    PredictionBook b(easypp_cfg(), plugin_options());
    CPPUNIT_ASSERT_EQUAL(kNever, b.next_expiry());
    b.observe_running(1, 100, 300, 100, 1);  // predicted end 400
    b.observe_running(2, 101, 120, 200, 1);  // predicted end 320
    b.observe_waiting(3, 102, 10, 1, 1);     // waiting: no timer
    JobHandle job = 0;
    CPPUNIT_ASSERT_EQUAL(Time(321), b.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(JobHandle(2), job);
    // Still due until corrected (a lagging clock must not lose the timer).
    CPPUNIT_ASSERT_EQUAL(0u, b.correct_expired(320));
    CPPUNIT_ASSERT_EQUAL(Time(321), b.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(1u, b.correct_expired(321));  // 120 -> 180 (beyond estimate)
    CPPUNIT_ASSERT_EQUAL(Time(381), b.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(JobHandle(2), job);
    // A job that ends no longer drives the timer.
    b.finish(2, 101, 120, 150, 330);
    CPPUNIT_ASSERT_EQUAL(Time(401), b.next_expiry(&job));
    CPPUNIT_ASSERT_EQUAL(JobHandle(1), job);
    // A suspended job's start moves: so does its correction.
    b.observe_running(1, 100, 300, 160, 340);
    CPPUNIT_ASSERT_EQUAL(Time(461), b.next_expiry(&job));
  }

  void testLearnForgetAndSweep() {
    PredictionBook b(easypp_cfg(), plugin_options());
    CPPUNIT_ASSERT(!b.history_changed());
    b.observe_running(1, 100, 600, 0, 1);
    CPPUNIT_ASSERT(b.finish(1, 100, 600, 30, 40));
    CPPUNIT_ASSERT(b.find(1) == nullptr);
    CPPUNIT_ASSERT(b.history_changed());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), b.learned_total());
    CPPUNIT_ASSERT(!b.finish(2, 100, 600, 0, 41));  // no runtime: nothing learned
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), b.learned_total());
    b.clear_history_changed();
    CPPUNIT_ASSERT(!b.history_changed());
    // The sweep forgets what was not seen since begin_sweep().
    b.observe_waiting(3, 100, 600, 5, 50);
    b.observe_running(4, 100, 600, 45, 50);
    b.begin_sweep();
    b.keep(4);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.sweep());
    CPPUNIT_ASSERT(b.find(3) == nullptr);
    CPPUNIT_ASSERT(b.find(4) != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.size());
  }

  void testRequeueAndLimitChange() {
    PredictionBook b(easypp_cfg(), plugin_options());
    learn_two(b, 20, 20);
    b.observe_running(1, 100, 600, 0, 1);
    b.correct_expired(100);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.find(1)->prediction);
    // Requeued: waiting again, a fresh prediction and no corrections.
    const JobPlan& j = b.observe_waiting(1, 100, 600, 150, 200);
    CPPUNIT_ASSERT_EQUAL(Time(20), j.prediction);
    CPPUNIT_ASSERT_EQUAL(0u, j.corr.count);
    CPPUNIT_ASSERT(!j.running);
    CPPUNIT_ASSERT_EQUAL(kNever, b.next_expiry());  // its old timer is gone
    // A new time limit while waiting: predicted again with it.
    CPPUNIT_ASSERT_EQUAL(Time(20), b.observe_waiting(1, 100, 1200, 150, 300).prediction);
    CPPUNIT_ASSERT_EQUAL(Time(1200), b.find(1)->estimate);
    // A running job's limit raised: the kill time moves, the prediction stays.
    b.start(1, 400);
    CPPUNIT_ASSERT_EQUAL(Time(20), b.observe_running(1, 100, 2400, 400, 410).prediction);
    CPPUNIT_ASSERT_EQUAL(Time(2400), b.find(1)->estimate);
  }

  void testConfigureKeepsHistory() {
    PredictionBook b(easypp_cfg(), plugin_options());
    b.finish(50, 100, 600, 10, 1);
    b.finish(51, 100, 600, 20, 2);
    b.finish(52, 100, 600, 60, 3);
    CPPUNIT_ASSERT_EQUAL(Time(40), b.plan_value(100, 600));
    SchedulerConfig c = easypp_cfg();
    c.predictor.window = 3;
    b.configure(c);
    // The window-2 rings kept two entries; window 3 needs three: fallback.
    CPPUNIT_ASSERT_EQUAL(Time(600), b.plan_value(100, 600));
    b.finish(53, 100, 600, 30, 4);
    CPPUNIT_ASSERT_EQUAL(Time(37), b.plan_value(100, 600));  // ceil((20+60+30)/3)
    c.predictor.metric = Metric::Max;
    b.configure(c);
    CPPUNIT_ASSERT_EQUAL(Time(60), b.plan_value(100, 600));
  }

  void testConfigureSwitchesCorrectionOn() {
    SchedulerConfig c = easypp_cfg();
    c.correction = CorrectionPolicy::None;
    PredictionBook b(c, plugin_options());
    b.observe_running(1, 100, 300, 100, 1);
    CPPUNIT_ASSERT_EQUAL(kNever, b.next_expiry());
    c.correction = CorrectionPolicy::Estimate;
    b.configure(c);  // running jobs get their timers
    CPPUNIT_ASSERT_EQUAL(Time(401), b.next_expiry());
  }

  // The simulator: dense handles, no grace (its terminations come first at
  // equal times), every runtime learned, a known end that no correction
  // can precede.
  void testSimulatorOptions() {
    PredictionBook::Options o;
    o.dense_handles = 4;
    o.always_learn = false;
    PredictionBook b(easypp_cfg(), o);
    b.arrive(0, 1, 100, 0, 0);
    b.arrive(1, 1, 100, 0, 0);
    b.start(0, 0, 50);   // ends at 50, before its prediction: no timer
    b.start(1, 0, 500);  // runs past its prediction of 100
    CPPUNIT_ASSERT_EQUAL(Time(100), b.next_expiry());
    CPPUNIT_ASSERT(b.finish(0, 1, 100, 0, 50));  // a 0 s runtime is learned here
    CPPUNIT_ASSERT_EQUAL(1u, b.correct_expired(100));
    CPPUNIT_ASSERT_EQUAL(Time(160), b.find(1)->prediction);  // beyond its estimate: +1 min
    SchedulerConfig easy = *preset("easy");
    PredictionBook e(easy, o);
    CPPUNIT_ASSERT(!e.finish(0, 1, 100, 40, 1));  // no use for history under plan=estimate
  }

  void testHistoryTtl() {
    SchedulerConfig c = easypp_cfg();
    c.history_ttl = 1000;
    c.predictor.fullness = Fullness::Partial;  // one runtime predicts
    PredictionBook b(c, plugin_options());
    learn_two(b, 20, 20);  // user 100, last seen at 11
    CPPUNIT_ASSERT_EQUAL(Time(20), b.plan_value(100, 600));
    b.finish(60, 200, 600, 30, 500);
    b.arrive(7, 300, 600, 400, 400);  // user 300 has a job waiting
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), b.predictor().users());  // 300 has none yet
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.evict_idle(1011));  // user 100 only
    CPPUNIT_ASSERT_EQUAL(Time(600), b.plan_value(100, 600));
    CPPUNIT_ASSERT_EQUAL(Time(30), b.plan_value(200, 600, nullptr));
    // A user with a job in the book is never forgotten, however long it runs.
    b.finish(61, 300, 600, 30, 401);
    b.start(7, 450);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), b.evict_idle(5000));  // user 200
    CPPUNIT_ASSERT_EQUAL(Time(30), b.plan_value(300, 600, nullptr));
    // The book evicts by itself as time passes.
    b.finish(7, 300, 600, 30, 6000);
    b.arrive(8, 400, 600, 9000, 9000);
    CPPUNIT_ASSERT_EQUAL(Time(600), b.plan_value(300, 600, nullptr));
  }

  void testEndBound() {
    SchedulerConfig c = easypp_cfg();
    PredictionBook b(c, plugin_options());
    learn_two(b, 20, 20);
    b.arrive(1, 100, 600, 0, 0);
    CPPUNIT_ASSERT_EQUAL(Time(1020), b.end_bound(1, 1000));      // its prediction
    CPPUNIT_ASSERT_EQUAL(Time(1600), b.end_bound(1, 1000, 0));   // a guard's switch: its limit
    // max-delay: its limit less the head's room, never below its prediction
    CPPUNIT_ASSERT_EQUAL(Time(1400), b.end_bound(1, 1000, 200));
    CPPUNIT_ASSERT_EQUAL(Time(1020), b.end_bound(1, 1000, 5000));
    c.policy.safe = true;
    b.configure(c);
    CPPUNIT_ASSERT_EQUAL(Time(1600), b.end_bound(1, 1000));  // safe backfill
  }

  // A follower saves its plans and a new book adopts them: the same
  // corrections fall due at the same times, and a waiting job keeps its
  // value (without propagation, later history does not change it).
  void testAdoptContinuesAsBefore() {
    PredictionBook a(easypp_cfg(), plugin_options());
    learn_two(a, 20, 40);  // user 100: prediction 30
    a.arrive(1, 100, 600, 50, 50);
    a.start(1, 60);        // due at 60 + 30 + 1
    a.arrive(2, 100, 900, 55, 55);
    CPPUNIT_ASSERT_EQUAL(1u, a.correct_expired(91));
    std::vector<JobPlan> saved;
    a.for_each([&](const JobPlan& p) { saved.push_back(p); });

    PredictionBook b(easypp_cfg(), plugin_options());
    b.restore_history(a.predictor().snapshot(), 92);
    b.finish(60, 100, 600, 500, 92);  // newer history: not for the adopted jobs
    for (const JobPlan& p : saved) b.adopt(p, 92);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), b.size());
    const JobPlan* one = b.find(1);
    CPPUNIT_ASSERT(one != nullptr && one->running);
    CPPUNIT_ASSERT_EQUAL(Time(600), one->prediction);  // corrected to its limit
    CPPUNIT_ASSERT_EQUAL(Time(30), one->first_prediction);
    CPPUNIT_ASSERT_EQUAL(1u, one->corr.count);
    CPPUNIT_ASSERT_EQUAL(Time(30), b.find(2)->prediction);
    // the next correction (beyond the limit) falls due where a's does
    CPPUNIT_ASSERT_EQUAL(a.next_expiry(), b.next_expiry());
    CPPUNIT_ASSERT_EQUAL(Time(60 + 600 + 1), b.next_expiry());
    CPPUNIT_ASSERT_EQUAL(a.correct_expired(700), b.correct_expired(700));
    CPPUNIT_ASSERT_EQUAL(a.find(1)->prediction, b.find(1)->prediction);
    // adopting again replaces, never duplicates
    b.adopt(saved[0], 93);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), b.size());
  }

  // The book keeps a user's waiting jobs of one estimate as a group with
  // one value (propagation). Against a model that re-predicts job by job
  // (what the book did before the groups): random arrivals (handles
  // reused: jobs that wait anew), starts, array tasks, Slurm's views,
  // forgets, finishes, configuration changes (values made before stay
  // until the next re-prediction), adopted plans with other values,
  // restored history and forgotten idle users; the plugin's book (sparse
  // ids, told job by job) and the simulator's (dense, told at once). After
  // every step each job's value and origin are the model's, and the
  // changes heard are exactly the model's.
  void testGroupsMatchPerJobPropagation() {
    struct Batch : PredictionBook::Listener {
      bool take = true;
      std::vector<std::tuple<JobHandle, Time, Time>> heard;
      void prediction_changed(const JobPlan& p, Time old_p, PlanChange why, Time) override {
        if (why == PlanChange::Repredicted) heard.emplace_back(p.handle, old_p, p.prediction);
      }
      bool predictions_changed(const std::vector<Changes>& c, Time) override {
        if (!take) return false;
        for (const Changes& x : c)
          for (std::size_t i = 0; i < x.count; ++i)
            if (x.jobs[i] != PredictionBook::kHole)
              heard.emplace_back(x.jobs[i], x.old_prediction, x.prediction);
        return true;
      }
    };
    struct Model {
      UserId user;
      Time estimate, prediction;
      bool history, running;
    };
    // Variants 4 and 5: 600 jobs of two users, groups of a hundred jobs
    // (their holes are compacted).
    for (int variant = 0; variant < 6; ++variant) {
      const bool dense = variant % 2 == 1;
      const bool big = variant >= 4;
      SchedulerConfig cfg = easypp_cfg();
      cfg.correction = CorrectionPolicy::None;
      const bool ttl = variant >= 2 && !big;
      if (ttl) cfg.history_ttl = 400;
      PredictionBook::Options opt = dense ? PredictionBook::Options{} : plugin_options();
      const JobHandle kHandles = big ? 600 : 60;
      if (dense) opt.dense_handles = kHandles;
      PredictionBook b(cfg, opt);
      Batch listener;
      listener.take = dense;
      b.set_listener(&listener);
      std::map<JobHandle, Model> m;
      std::uint64_t rng = 12345 + variant;
      auto next = [&](std::uint64_t n) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        return (rng >> 33) % n;
      };
      const Time estimates[] = {600, 900, 3600};
      Time now = 0;
      std::uint64_t repredicted = 0, loose_made = 0;
      bool prop = true;
      std::size_t evicted = 0;
      for (int step = 0; step < (big ? 8000 : 6000); ++step) {
        now += Time(next(3));
        listener.heard.clear();
        std::vector<std::tuple<JobHandle, Time, Time>> want;
        // every waiting job of `u` takes its value now, as the model says
        auto repredict = [&](UserId u) {
          for (auto& [h, j] : m) {
            if (j.running || j.user != u) continue;
            bool hist = false;
            const Time v = b.plan_value(u, j.estimate, &hist);
            if (v != j.prediction) want.emplace_back(h, j.prediction, v);
            j.prediction = v;
            j.history = hist;
          }
        };
        const JobHandle h = JobHandle(next(kHandles));
        // (the history's lifetime: many users, some idle long enough)
        const UserId u = UserId(100 + next(big ? 2 : ttl ? 12 : 4));
        const Time e = estimates[next(3)];
        unsigned op = unsigned(next(100));
        // (big: the groups are rarely made anew, so holes pile up)
        if (big && op >= 88 && op < 97 && next(20) != 0) op = 60;
        if (op < 35) {  // arrives (or waits anew)
          const JobPlan& p = b.arrive(h, u, e, now, now);
          bool hist = false;
          m[h] = Model{u, e, b.plan_value(u, e, &hist), hist, false};
          CPPUNIT_ASSERT_EQUAL(m[h].prediction, p.prediction);
        } else if (op < 50) {  // starts, sometimes as an array task
          auto it = m.find(h);
          if (it == m.end() || it->second.running) continue;
          if (next(4) == 0) {
            const JobHandle as = JobHandle(next(kHandles));
            if (as == h) continue;
            b.start_as(h, as, now);
            Model t = it->second;  // h keeps waiting
            t.running = true;
            m[as] = t;
          } else if (next(2) == 0) {
            b.start(h, now);
            it->second.running = true;
          } else {  // Slurm shows it running (another scheduler started it)
            b.observe_running(h, it->second.user, it->second.estimate, now, now);
            it->second.running = true;
          }
        } else if (op < 60) {  // cancelled or gone
          b.forget(h);
          m.erase(h);
        } else if (op < 74) {  // a job of u ends and is learned
          const bool learned = b.finish(1000 + h, u, e, Time(10 + next(5000)), now);
          m.erase(1000 + h);
          if (learned && prop) repredict(u);
        } else if (op < 88) {  // job h ends (running or not) and is learned
          auto it = m.find(h);
          if (it == m.end()) continue;
          const Model j = it->second;
          m.erase(it);
          if (b.finish(h, j.user, j.estimate, Time(10 + next(5000)), now) && prop) repredict(j.user);
        } else if (op < 92) {  // new settings: values made stay
          SchedulerConfig c = cfg;
          c.predictor.window = 1 + unsigned(next(3));
          c.predictor.metric = next(2) ? Metric::Avg : Metric::Max;
          if (next(4) == 0) prop = !prop;  // propagation off, and on again later
          c.predictor.propagation = prop;
          b.configure(c);
        } else if (op < 95) {  // a plan adopted with another value
          JobPlan p;
          p.handle = h;
          p.user = u;
          p.estimate = e;
          p.prediction = p.first_prediction = Time(1 + next(700));
          p.since = now;
          b.adopt(p, now);
          m[h] = Model{u, e, p.prediction, false, false};
          ++loose_made;
        } else if (op < 97) {  // the history restored from a state file
          b.restore_history(b.predictor().snapshot(), now);
          if (prop)
            for (UserId x = 100; x < 112; ++x) repredict(x);
        } else {  // time passes: idle users may be forgotten (their groups reused)
          now += ttl ? 500 : 200;
          evicted += b.evict_idle(now);
        }
        repredicted += want.size();
        auto sorted = [](std::vector<std::tuple<JobHandle, Time, Time>> v) {
          std::sort(v.begin(), v.end());
          return v;
        };
        CPPUNIT_ASSERT(sorted(want) == sorted(listener.heard));
        CPPUNIT_ASSERT_EQUAL(m.size(), b.size());
        if (big && step % 16 != 0) continue;
        for (const auto& [jh, j] : m) {
          const JobPlan* p = b.find(jh);
          CPPUNIT_ASSERT(p != nullptr);
          CPPUNIT_ASSERT_EQUAL(j.prediction, p->prediction);
          CPPUNIT_ASSERT_EQUAL(j.running, p->running);
          if (!j.running) CPPUNIT_ASSERT_EQUAL(j.history, p->from_history);
        }
        std::size_t seen = 0;
        b.for_each([&](const JobPlan& p) {
          ++seen;
          CPPUNIT_ASSERT_EQUAL(m.at(p.handle).prediction, p.prediction);
        });
        CPPUNIT_ASSERT_EQUAL(m.size(), seen);
      }
      CPPUNIT_ASSERT(repredicted > 300);  // the walk was exercised
      CPPUNIT_ASSERT(loose_made > (big ? 5u : 50u));
      if (variant == 2 || variant == 3) CPPUNIT_ASSERT(evicted > 10);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PredictionBookTest);
