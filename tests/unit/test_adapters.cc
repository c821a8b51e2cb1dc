// One conformance suite for the resource interface (libpredict's
// resource_api.h), run against both adapters:
//
//   - ProcAdapter, the simulator's (libsim/include/easypp/sim/proc_adapter.h);
//   - NodeAdapter, the plugin's (plugin/node_planner.h), over FakeCluster: a
//     Slurm-free cluster of nodes answering the backend's questions the way
//     SlurmCluster does with select_g_job_test (first fit on free nodes).
//
// With one CPU per node the two describe the same machine, so every
// scenario states one expected answer for both; a randomized test runs
// whole scheduling passes through both and requires the same decisions and
// that no start delays the head's reservation.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "easypp/policy.h"
#include "easypp/prediction_book.h"
#include "easypp/sim/proc_adapter.h"
#include "node_planner.h"
#include "plugin_config.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

// --- the plugin's adapter over a fake cluster -------------------------------------------

// Nodes of one CPU each; a job of size k runs on k nodes. Node sets are bit
// vectors ("none" is empty). Planned ends come from the book, as in
// SlurmCluster::runs_on.
class FakeCluster {
 public:
  struct Nodes {
    std::vector<bool> bits;
  };
  struct Partition {
    std::string name;
  };
  struct Candidate {
    Nodes avail;
    std::int64_t cpus = 0;
    std::int64_t whole_nodes = 0;
    std::int64_t min_nodes = 0;
    std::int64_t node_cpus = 0;
  };

  FakeCluster(int nodes, PredictionBook& book) : owner_(std::size_t(nodes), 0), book_(book) {}

  // setup
  void set_now(Time t) { now_ = t; }
  void add_waiting(JobHandle h, int size) { size_[h] = size; }
  void add_running(JobHandle h, int size) {
    size_[h] = size;
    Nodes n = none();
    CPPUNIT_ASSERT(first_free(all(), size, &n));
    take(h, n);
  }
  int free_nodes() const { return int(std::count(owner_.begin(), owner_.end(), 0u)); }
  std::vector<JobHandle> started;
  std::map<JobHandle, Time> published;

  // node sets
  static bool any(const Nodes& n) { return !n.bits.empty(); }
  static bool test(const Nodes& n, int i) { return n.bits[std::size_t(i)]; }
  static void set(Nodes& n, int i) { n.bits[std::size_t(i)] = true; }
  static Nodes copy(const Nodes& n) { return n; }
  static void and_not(Nodes& a, const Nodes& b) {
    for (std::size_t i = 0; i < a.bits.size(); ++i) a.bits[i] = a.bits[i] && !b.bits[i];
  }
  static void and_(Nodes& a, const Nodes& b) {
    for (std::size_t i = 0; i < a.bits.size(); ++i) a.bits[i] = a.bits[i] && b.bits[i];
  }
  static int size(const Nodes& n) { return int(n.bits.size()); }
  static int count(const Nodes& n) { return int(std::count(n.bits.begin(), n.bits.end(), true)); }
  Nodes none() const { return Nodes{std::vector<bool>(owner_.size(), false)}; }

  // the cluster
  Time now() const { return now_; }
  const std::string& name(const Partition& p) const { return p.name; }
  Nodes usable(const Partition&) const { return all(); }
  void idle_cpus(std::vector<std::int64_t>* idle) const {
    idle->assign(owner_.size(), 0);
    for (std::size_t i = 0; i < owner_.size(); ++i) (*idle)[i] = owner_[i] == 0 ? 1 : 0;
  }

  // job tests
  bool prepare(JobHandle h, const Partition&, Candidate* c) {
    if (!pending(h)) return false;
    c->avail = all();
    c->cpus = std::max<std::int64_t>(0, size_.at(h) + cpus_error);
    c->whole_nodes = whole_nodes ? size_.at(h) : 0;  // one-CPU nodes: its size
    c->min_nodes = size_.at(h);
    c->node_cpus = prefilter ? 1 : 0;
    return true;
  }
  bool fits_now(JobHandle h, Candidate&, const Nodes& on, Nodes* selected) {
    return fits(h, on, {}, selected);
  }
  std::vector<Run> runs_on(const Nodes& on) const {
    std::vector<Run> runs;
    for (const auto& [h, size] : size_) {
      (void)size;
      const JobPlan* p = book_.find(h);
      if (p == nullptr || !p->running) continue;
      bool overlap = false;
      for (std::size_t i = 0; i < owner_.size(); ++i) overlap |= owner_[i] == h + 1 && on.bits[i];
      if (overlap) runs.push_back(Run{p->planned_end(), h, std::int64_t(size)});
    }
    std::sort(runs.begin(), runs.end(),
              [](const Run& a, const Run& b) { return a.end != b.end ? a.end < b.end : a.id < b.id; });
    return runs;
  }
  void add_nodes_of(JobHandle running, Nodes* into) const {
    for (std::size_t i = 0; i < owner_.size(); ++i)
      if (owner_[i] == running + 1) into->bits[i] = true;
  }
  bool fits_after(JobHandle h, Candidate&, const Nodes& on, const std::vector<Run>& runs, Time t,
                  Nodes* selected) {
    ++probes;
    std::set<JobHandle> released;
    for (const Run& r : runs)
      if (r.end <= t) released.insert(r.id);
    return fits(h, on, released, selected);
  }

  // starting
  Started start(JobHandle h, Candidate&, const Nodes& avail, const StartNote&) {
    ++start_tests;
    Started s;
    Nodes n = none();
    if (!pending(h) || !fits(h, avail, {}, &n)) return s;
    take(h, n);
    started.push_back(h);
    s.status = Started::kStarted;
    s.as = h;
    s.start = now_;
    return s;
  }
  bool still_pending(JobHandle h) const { return pending(h); }
  void account_start(JobHandle started_job, std::vector<std::int64_t>* idle) const {
    for (std::size_t i = 0; i < owner_.size(); ++i)
      if (owner_[i] == started_job + 1) (*idle)[i] = 0;
  }

  // the cycle
  bool may_continue() { return budget < 0 || tests < budget; }
  void count_test() { ++tests; }
  JobOwner job_owner(JobHandle h) const {
    auto it = owners.find(h);
    return it != owners.end() ? it->second : JobOwner{1, 0};
  }
  int budget = -1;  ///< tests allowed in the cycle (-1: no limit)
  std::map<JobHandle, JobOwner> owners;
  void publish(JobHandle head, const std::string&, Time shadow, const Nodes&) {
    published[head] = shadow;
  }
  int tests = 0;
  int probes = 0;      ///< fits_after() questions (WILL_RUN probes in slurmctld)
  int cpus_error = 0;  ///< added to a candidate's CPU count (a wrong hint)
  bool whole_nodes = false;  ///< candidates need whole nodes (the node bound is used)
  bool prefilter = true;     ///< give node_cpus (could_fit_now() answers "no" itself)
  int start_tests = 0;       ///< start() calls (the backend's test)

 private:
  Nodes all() const { return Nodes{std::vector<bool>(owner_.size(), true)}; }
  bool pending(JobHandle h) const {
    if (!size_.count(h)) return false;
    const JobPlan* p = book_.find(h);
    return p != nullptr && !p->running;
  }
  // First fit of h's size on the nodes of `on` that are free or held by a
  // released job.
  bool fits(JobHandle h, const Nodes& on, const std::set<JobHandle>& released, Nodes* selected) {
    Nodes n = none();
    int want = size_.at(h);
    for (std::size_t i = 0; i < owner_.size() && want > 0; ++i) {
      const bool usable = on.bits[i] && (owner_[i] == 0 || released.count(owner_[i] - 1));
      if (usable) {
        n.bits[i] = true;
        --want;
      }
    }
    if (want > 0) return false;
    if (selected) *selected = n;
    return true;
  }
  bool first_free(const Nodes& on, int size, Nodes* n) {
    int want = size;
    for (std::size_t i = 0; i < owner_.size() && want > 0; ++i)
      if (on.bits[i] && owner_[i] == 0) n->bits[i] = true, --want;
    return want == 0;
  }
  void take(JobHandle h, const Nodes& n) {
    for (std::size_t i = 0; i < owner_.size(); ++i)
      if (n.bits[i]) owner_[i] = h + 1;
  }

  std::vector<std::uint32_t> owner_;  // job + 1 on each node, 0: free
  std::map<JobHandle, int> size_;
  PredictionBook& book_;
  Time now_ = 0;
};

static_assert(ResourceAdapter<NodeAdapter<FakeCluster>>, "the plugin's adapter conforms");

// --- one scenario, either adapter -------------------------------------------------------

// Jobs are given by size, start (running) and prediction. The planning
// values are the plans of a PredictionBook planning with estimates, each job
// arriving with its prediction as its estimate, so each job is planned with
// exactly the value the scenario gives it, in both adapters.
struct JobSpec {
  JobHandle h;
  int size;
  Time prediction;
  Time estimate;
  Time start = -1;  // >= 0: running since
};

SchedulerConfig plan_by_estimate() {
  SchedulerConfig c = *preset("easy++");
  c.plan = PlanWith::Estimate;  // the book plans each job with the value given
  return c;
}

// The simulator's adapter over ProcResources.
class ProcWorld {
 public:
  ProcWorld(int procs, const std::vector<JobSpec>& jobs, Time now)
      : book_(plan_by_estimate()), res_(procs), adapter_(res_, hooks_), now_(now) {
    hooks_.w = this;
    for (const JobSpec& j : jobs) {
      size_[j.h] = j.size;
      book_.arrive(j.h, 1, j.prediction, 0, 0);
      if (j.start >= 0) {
        book_.start(j.h, j.start);
        res_.start(j.h, j.size, j.start + j.prediction, j.start + j.prediction);
      }
    }
    adapter_.begin_pass(now);
  }
  struct Hooks {
    ProcWorld* w;
    std::int64_t size(JobHandle h) const { return w->size_.at(h); }
    Time prediction(JobHandle h) const { return w->book_.find(h)->prediction; }
    void started(JobHandle h, Time, bool) {
      w->started.push_back(h);
      w->book_.start(h, w->now_);
    }
    void reserved(JobHandle h, Time t, bool) { w->reserved.emplace_back(h, t); }
  };
  ProcAdapter<Hooks>& adapter() { return adapter_; }
  PredictionBook& book() { return book_; }
  std::vector<JobHandle> started;
  std::vector<std::pair<JobHandle, Time>> reserved;  ///< every reservation, in order

 private:
  Hooks hooks_;
  PredictionBook book_;
  ProcResources res_;
  std::map<JobHandle, std::int64_t> size_;
  ProcAdapter<Hooks> adapter_;
  Time now_;
};

// The plugin's adapter over FakeCluster.
class NodeWorld {
 public:
  NodeWorld(int nodes, const std::vector<JobSpec>& jobs, Time now)
      : book_(plan_by_estimate()), cluster_(nodes, book_) {
    cluster_.set_now(now);
    for (const JobSpec& j : jobs) {
      book_.arrive(j.h, 1, j.prediction, 0, 0);
      if (j.start >= 0) {
        book_.start(j.h, j.start);
        cluster_.add_running(j.h, j.size);
      } else {
        cluster_.add_waiting(j.h, j.size);
      }
    }
    cluster_.idle_cpus(&plan_.idle);
    adapter_ = std::make_unique<NodeAdapter<FakeCluster>>(cluster_, plan_, book_,
                                                          FakeCluster::Partition{"batch"});
  }
  NodeAdapter<FakeCluster>& adapter() { return *adapter_; }
  /// An adapter for another partition of the same nodes, in the same cycle.
  std::unique_ptr<NodeAdapter<FakeCluster>> other_partition() {
    return std::make_unique<NodeAdapter<FakeCluster>>(cluster_, plan_, book_,
                                                      FakeCluster::Partition{"other"});
  }
  PredictionBook& book() { return book_; }
  const std::vector<JobHandle>& started() const { return cluster_.started; }
  FakeCluster& cluster() { return cluster_; }
  CyclePlan<FakeCluster::Nodes>& plan() { return plan_; }

 private:
  PredictionBook book_;
  FakeCluster cluster_;
  CyclePlan<FakeCluster::Nodes> plan_;
  std::unique_ptr<NodeAdapter<FakeCluster>> adapter_;
};

// 10 processors; A (4) planned to end at 100, B (4) at 200; 2 free at 0.
std::vector<JobSpec> two_running() {
  return {{1, 4, 100, 100, 0}, {2, 4, 200, 200, 0}, {3, 7, 50, 50}, {4, 2, 300, 300},
          {5, 3, 50, 50},      {6, 2, 100, 100},    {7, 1, 50, 50}};
}

template <class World>
void contract_start_now() {
  World w(10, two_running(), 0);
  auto& a = w.adapter();
  CPPUNIT_ASSERT(a.can_start_more());
  CPPUNIT_ASSERT_EQUAL(std::int64_t(2), a.free_width());
  CPPUNIT_ASSERT(!a.start_now(5, 50));  // 3 processors: does not fit
  CPPUNIT_ASSERT(a.start_now(4, 300));  // 2: fits
  CPPUNIT_ASSERT_EQUAL(std::int64_t(0), a.free_width());
  CPPUNIT_ASSERT(!a.can_start_more());
  CPPUNIT_ASSERT(!a.start_now(7, 50));
}

template <class World>
void contract_shadow_and_extra() {
  World w(10, two_running(), 0);
  auto& a = w.adapter();
  // A 7-processor head fits when B ends: shadow 200 (extra room remains).
  CPPUNIT_ASSERT_EQUAL(Time(200), a.reserve(3, 50, true));
  CPPUNIT_ASSERT_EQUAL(std::int64_t(2), std::min(a.free_width(), a.extra_width()));
  // Case (b): ending after the shadow, but outside the head's need (room
  // beyond the shadow may remain as an upper bound; nothing is free now).
  CPPUNIT_ASSERT(a.backfill(4, 300));
  CPPUNIT_ASSERT(!a.can_start_more());
  CPPUNIT_ASSERT(!a.backfill(7, 300));
}

template <class World>
void contract_case_a_and_b() {
  // 10 processors, A (8) until 100: a 10-wide head needs everything at 100.
  std::vector<JobSpec> jobs = {{1, 8, 100, 100, 0}, {2, 10, 50, 50}, {3, 2, 200, 200},
                               {4, 2, 80, 80}};
  World w(10, jobs, 0);
  auto& a = w.adapter();
  CPPUNIT_ASSERT_EQUAL(Time(100), a.reserve(2, 50, true));
  CPPUNIT_ASSERT_EQUAL(std::int64_t(0), a.extra_width());
  CPPUNIT_ASSERT(!a.backfill(3, 200));  // would delay the head: refused
  CPPUNIT_ASSERT(a.backfill(4, 80));    // case (a): ends before the shadow
  CPPUNIT_ASSERT(!a.can_start_more());
}

template <class World>
void contract_expired_and_never() {
  // A's prediction expired (planned end 100 < now 150): it still counts, the
  // shadow lies in the past (the correction is what repairs it).
  std::vector<JobSpec> jobs = {{1, 8, 100, 100, 0}, {2, 4, 50, 50}, {3, 11, 50, 50}};
  World w(10, jobs, 150);
  auto& a = w.adapter();
  CPPUNIT_ASSERT_EQUAL(Time(100), a.reserve(2, 50, true));
  World v(10, jobs, 150);
  CPPUNIT_ASSERT_EQUAL(kNever, v.adapter().reserve(3, 50, true));  // wider than the machine
}

// A random state and a whole pass through each adapter: the same decisions,
// and nothing started may hold processors the head needs before its shadow.
int g_prefiltered = 0;  // backend tests the prefilter saved over the random passes

void random_pass(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int procs = 4 + int(rng() % 29);
  const Time now = 1000;
  std::vector<JobSpec> jobs;
  int used = 0;
  JobHandle h = 1;
  while (true) {  // running jobs until the machine is mostly full
    const int size = 1 + int(rng() % std::max(1, procs / 3));
    if (used + size > procs || rng() % 8 == 0) break;
    used += size;
    const Time start = now - Time(rng() % 500);
    jobs.push_back({h++, size, Time(1 + rng() % 900), 0, start});
    jobs.back().estimate = jobs.back().prediction;
  }
  const int waiting = 1 + int(rng() % 12);
  for (int i = 0; i < waiting; ++i) {
    const int size = 1 + int(rng() % procs);
    const Time p = Time(1 + rng() % 1200);
    jobs.push_back({h++, size, p, p});
  }
  PolicyConfig cfg;  // EASY with SJBF
  auto run = [&](auto& world) {
    WaitQueue q(cfg.backfill);
    std::int64_t rank = 0;
    for (const JobSpec& j : jobs)
      if (j.start < 0) q.push(j.h, QueueKey{rank++, 0}, j.prediction, j.estimate, j.size, 0);
    return schedule_pass(now, q, world.adapter(), cfg);
  };
  ProcWorld pw(procs, jobs, now);
  NodeWorld nw(procs, jobs, now);
  NodeWorld every_test(procs, jobs, now);  // no prefilter: every candidate tested by the backend
  every_test.cluster().prefilter = false;
  const PassResult a = run(pw), b = run(nw), c = run(every_test);
  const std::string msg = "seed " + std::to_string(seed);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, a.shadow, b.shadow);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, a.started_in_order, b.started_in_order);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, a.started_backfill, b.started_backfill);
  CPPUNIT_ASSERT_MESSAGE(msg, pw.started == nw.started());
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, b.shadow, c.shadow);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, b.tested, c.tested);
  CPPUNIT_ASSERT_MESSAGE(msg, nw.started() == every_test.started());
  CPPUNIT_ASSERT_MESSAGE(msg, nw.cluster().start_tests <= every_test.cluster().start_tests);
  g_prefiltered += every_test.cluster().start_tests - nw.cluster().start_tests;
  if (!a.head_reserved || a.shadow >= kNever) return;
  // The head's size fits at max(shadow, now) with every started job held
  // until its end bound (its prediction here) and every running job until
  // its planned end: no start delayed the reservation.
  std::int64_t head = 0;
  for (const JobSpec& j : jobs)
    if (j.h == a.head) head = j.size;
  const Time at = std::max(a.shadow, now);
  std::int64_t busy = 0;
  for (const JobSpec& j : jobs) {
    if (j.start >= 0 && j.start + j.prediction > at) busy += j.size;
    const bool started = std::find(pw.started.begin(), pw.started.end(), j.h) != pw.started.end();
    if (started && now + j.prediction > at) busy += j.size;
  }
  CPPUNIT_ASSERT_MESSAGE(msg + ": the head no longer fits at its shadow", procs - busy >= head);
}

}  // namespace

static std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

class AdapterConformanceTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(AdapterConformanceTest);
  CPPUNIT_TEST(testStartNow);
  CPPUNIT_TEST(testShadowAndExtra);
  CPPUNIT_TEST(testCaseAAndB);
  CPPUNIT_TEST(testExpiredAndNever);
  CPPUNIT_TEST(testPublishedPlannedStart);
  CPPUNIT_TEST(testOtherPartitionsKeepOff);
  CPPUNIT_TEST(testRandomPassesAgree);
  CPPUNIT_TEST(testFairnessCapsLetOthersThrough);
  CPPUNIT_TEST(testSelectiveFromPluginSettings);
  CPPUNIT_TEST(testFirstFitting);
  CPPUNIT_TEST(testShadowProbesFromCpuCounts);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testStartNow() {
    contract_start_now<ProcWorld>();
    contract_start_now<NodeWorld>();
  }
  void testShadowAndExtra() {
    contract_shadow_and_extra<ProcWorld>();
    contract_shadow_and_extra<NodeWorld>();
  }
  void testCaseAAndB() {
    contract_case_a_and_b<ProcWorld>();
    contract_case_a_and_b<NodeWorld>();
  }
  void testExpiredAndNever() {
    contract_expired_and_never<ProcWorld>();
    contract_expired_and_never<NodeWorld>();
  }
  // The plugin's adapter publishes the head's planned start (squeue
  // --start) and records the reservation's nodes R: the released nodes
  // first, then as few others as needed.
  void testPublishedPlannedStart() {
    NodeWorld w(10, two_running(), 0);
    CPPUNIT_ASSERT_EQUAL(Time(200), w.adapter().reserve(3, 50, true));
    CPPUNIT_ASSERT_EQUAL(Time(200), w.cluster().published.at(3));
    const auto* r = w.adapter().reservation();
    CPPUNIT_ASSERT(r != nullptr);
    int reserved = 0, reserved_free = 0;
    for (std::size_t i = 0; i < r->nodes.bits.size(); ++i) {
      reserved += r->nodes.bits[i];
      reserved_free += r->nodes.bits[i] && i >= 8;  // nodes 8 and 9 are free now
    }
    CPPUNIT_ASSERT_EQUAL(7, reserved);
    CPPUNIT_ASSERT_EQUAL(0, reserved_free);  // released nodes are enough
  }

  // Another partition's job keeps off a head's nodes when it would still
  // hold them at that head's shadow (by the one end bound), not otherwise.
  void testOtherPartitionsKeepOff() {
    // 10 nodes, A (4) until 100, 6 free: a 10-wide head needs all at 100.
    std::vector<JobSpec> jobs = {{1, 4, 100, 100, 0}, {2, 10, 50, 50}, {3, 2, 300, 300},
                                 {4, 2, 50, 50}};
    NodeWorld w(10, jobs, 0);
    CPPUNIT_ASSERT_EQUAL(Time(100), w.adapter().reserve(2, 50, true));
    auto other = w.other_partition();
    CPPUNIT_ASSERT(!other->start_now(3, 300));  // would still run at 100
    CPPUNIT_ASSERT(other->start_now(4, 50));    // ends before the head needs its nodes
  }

  // One user's candidates come first and cannot start (they would delay the
  // head); with a test budget of 3 they use it up and user 2's job, which
  // fits, is never tried. easypp_max_job_user=2 skips the flood's third and
  // later jobs untested, and user 2's job is backfilled. Per partition, per
  // association and per user in a partition alike.
  void testFairnessCapsLetOthersThrough() {
    // 4 nodes; A (3) until 100; H (4) the head; user 1's F1..F5 (1 node, 500
    // s: beyond the shadow, on the head's nodes); user 2's B (1 node, 50 s).
    const std::vector<JobSpec> jobs = {{1, 3, 100, 100, 0}, {2, 4, 50, 50}, {10, 1, 500, 500},
                                       {11, 1, 500, 500},   {12, 1, 500, 500}, {13, 1, 500, 500},
                                       {14, 1, 500, 500},   {20, 1, 50, 50}};
    auto run = [&](FairCaps caps, std::uint32_t b_assoc = 0) {
      NodeWorld w(4, jobs, 0);
      w.cluster().budget = 4;  // the head's test, then 3 candidates
      for (JobHandle f = 10; f <= 14; ++f) w.cluster().owners[f] = JobOwner{1, 7};
      w.cluster().owners[20] = JobOwner{2, b_assoc};
      w.plan().caps = caps;
      PolicyConfig cfg;
      cfg.backfill = BackfillOrder::Queue;  // the flood first, in queue order
      WaitQueue q(cfg.backfill);
      std::int64_t rank = 0;
      // The flood's widths are unknown to the queue (0: a width is only a
      // lower bound, as the plugin's are): the candidate index cannot rule
      // them out, and only the adapter's node test refuses them.
      for (const JobSpec& j : jobs)
        if (j.start < 0)
          q.push(j.h, QueueKey{rank++, 0}, j.prediction, j.estimate,
                 j.h >= 10 && j.h <= 14 ? 0 : j.size, 0);
      const PassResult r = schedule_pass(0, q, w.adapter(), cfg);
      return "backfilled " + std::to_string(r.started_backfill) + ", skipped " +
             std::to_string(w.plan().tried.skipped);
    };
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 0, skipped 0"), run(FairCaps{}));  // B never tried
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 1, skipped 3"), run(FairCaps{2, 0, 0, 0}));
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 1, skipped 3"), run(FairCaps{0, 0, 2, 0}, 8));
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 1, skipped 3"), run(FairCaps{0, 0, 0, 2}));
    // One cap per partition: the whole partition, B included, stops at 2.
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 0, skipped 4"), run(FairCaps{0, 2, 0, 0}));
    // B in the flood's association is capped with it; a job without an
    // association (no accounting) is never counted by the association cap.
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 0, skipped 4"), run(FairCaps{0, 0, 2, 0}, 7));
    CPPUNIT_ASSERT_EQUAL(std::string("backfilled 1, skipped 3"), run(FairCaps{0, 0, 2, 0}, 0));
  }

  // easypp_selective (selective reservations) reaches the plugin's pass
  // through its settings table and decides there as in the simulator: 10
  // nodes, A (6) runs until 100; at 50 the head H (8 nodes, 100 s, waiting
  // since 0: expansion factor 1.5) and C (4 nodes, 1000 s). H starves at a
  // threshold of 1.4 and gets a reservation at 100 that C would delay; at 2
  // it does not, nothing is reserved and C starts.
  void testSelectiveFromPluginSettings() {
    const std::vector<JobSpec> jobs = {{1, 6, 100, 100, 0}, {2, 8, 100, 100}, {3, 4, 1000, 1000}};
    auto run = [&](const char* params, auto& world) {
      const ParsedConfig parsed = parse_scheduler_parameters(params);
      // The plugin's defaults have guards, which selective reservations
      // replace: turned off without a word (none was set here).
      CPPUNIT_ASSERT(parsed.warnings.empty());
      CPPUNIT_ASSERT(!parsed.config.sched.policy.any_guard());
      PolicyConfig cfg = parsed.config.sched.policy;
      cfg.backfill = BackfillOrder::Queue;
      WaitQueue q(cfg.backfill);
      std::int64_t rank = 0;
      for (const JobSpec& j : jobs)
        if (j.start < 0) q.push(j.h, QueueKey{rank++, 0}, j.prediction, j.estimate, j.size, 0);
      return schedule_pass(50, q, world.adapter(), cfg);
    };
    for (const char* params : {"easypp_selective=1.4", "easypp_selective=2"}) {
      ProcWorld pw(10, jobs, 50);
      NodeWorld nw(10, jobs, 50);
      const PassResult a = run(params, pw), b = run(params, nw);
      const bool starving = std::string(params) == "easypp_selective=1.4";
      CPPUNIT_ASSERT_EQUAL_MESSAGE(params, starving, a.head_reserved);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(params, starving, b.head_reserved);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(params, starving ? Time(100) : kNever, b.shadow);
      CPPUNIT_ASSERT_MESSAGE(params, pw.started == nw.started());
      CPPUNIT_ASSERT_MESSAGE(params, nw.started() == (starving ? std::vector<JobHandle>{}
                                                               : std::vector<JobHandle>{3}));
    }
    // Two starving jobs, two reservations in one partition: H1 (8 nodes) at
    // 100, H2 (10) after it; C (2 nodes, 500 s) fits now and would not delay
    // H1 (2 nodes left over at 100) but would delay H2: refused by both (at
    // a threshold of 1 it starves too and is reserved behind them).
    {
      const std::vector<JobSpec> two = {{1, 6, 100, 100, 0}, {2, 8, 100, 100}, {3, 10, 100, 100},
                                        {4, 2, 500, 500}};
      auto pass = [&](auto& world) {
        PolicyConfig cfg = parse_scheduler_parameters("easypp_selective=1").config.sched.policy;
        cfg.backfill = BackfillOrder::Queue;
        WaitQueue q(cfg.backfill);
        std::int64_t rank = 0;
        for (const JobSpec& j : two)
          if (j.start < 0) q.push(j.h, QueueKey{rank++, 0}, j.prediction, j.estimate, j.size, 0);
        return schedule_pass(50, q, world.adapter(), cfg);
      };
      ProcWorld pw(10, two, 50);
      NodeWorld nw(10, two, 50);
      const PassResult a = pass(pw), b = pass(nw);
      CPPUNIT_ASSERT_EQUAL(std::uint32_t(3), a.reservations);
      CPPUNIT_ASSERT_EQUAL(std::uint32_t(3), b.reservations);
      CPPUNIT_ASSERT_EQUAL(Time(100), b.shadow);
      CPPUNIT_ASSERT(pw.started.empty());
      CPPUNIT_ASSERT(nw.started().empty());
      // Each later reservation waits for the nodes the earlier ones hold
      // until their planned ends: H1 8 nodes 100-200, H2 all 10 at 200,
      // C at 300 (the plugin planned H2 at 100 before, on H1's nodes).
      const std::vector<std::pair<JobHandle, Time>> want = {{2, 100}, {3, 200}, {4, 300}};
      CPPUNIT_ASSERT(pw.reserved == want);
      std::vector<std::pair<JobHandle, Time>> got;
      for (const auto& r : nw.plan().reservations) got.emplace_back(r.job, r.shadow);
      CPPUNIT_ASSERT(got == want);
    }
    // The plugin takes thresholds given: derive is the harness's.
    const ParsedConfig d = parse_scheduler_parameters("easypp_selective=derive");
    CPPUNIT_ASSERT(!d.config.sched.policy.selective.on());
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), d.warnings.size());
    const ParsedConfig four = parse_scheduler_parameters("easypp_selective=2/3/4/5,easypp_sel_narrow=16");
    CPPUNIT_ASSERT(four.config.sched.policy.selective.per_category);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(16), four.config.sched.policy.selective.narrow_width);
  }

  void testRandomPassesAgree() {
    g_prefiltered = 0;
    for (std::uint32_t seed = 1; seed <= 400; ++seed) random_pass(seed);
    CPPUNIT_ASSERT(g_prefiltered > 100);  // the prefilter did answer "no" itself, often
  }

  // first_fitting() against every threshold and every hint: always the
  // first fitting index; two questions when the hint is right; never more
  // than 2 log2(n) + 3.
  void testFirstFitting() {
    for (std::size_t n = 0; n <= 40; ++n) {
      for (std::size_t t = 0; t <= n; ++t) {  // t == n: nothing fits
        for (std::size_t hint = 0; hint <= n + 2; ++hint) {
          int asked = 0;
          const std::size_t got = first_fitting(n, hint, [&](std::size_t k) {
            CPPUNIT_ASSERT(k < n);
            ++asked;
            return k >= t;
          });
          const std::string msg = "n=" + std::to_string(n) + " t=" + std::to_string(t) +
                                  " hint=" + std::to_string(hint);
          CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, t, got);
          if (hint == t && t < n) CPPUNIT_ASSERT_MESSAGE(msg, asked <= 2);
          int log2n = 0;
          while ((std::size_t(1) << log2n) < n) ++log2n;
          CPPUNIT_ASSERT_MESSAGE(msg + " asked " + std::to_string(asked), asked <= 2 * log2n + 3);
        }
      }
    }
  }

  // The head's shadow from the CPU counts: 64 one-node jobs ending one
  // after the other, a head of 10 nodes with 2 free: the shadow is the 8th
  // end, found with two probes; then its nodes: the 8 released nodes (one
  // probe: not enough) and the first others that make it fit (two probes).
  // A wrong CPU count (too high or too low) still gives the same shadow
  // and the same nodes, with more probes.
  void testShadowProbesFromCpuCounts() {
    std::vector<JobSpec> jobs;
    for (JobHandle h = 1; h <= 64; ++h) jobs.push_back({h, 1, Time(10 * h), Time(10 * h), 0});
    jobs.push_back({100, 10, 50, 50});
    for (int error : {0, 5, -5, 40, -10}) {
     for (bool whole : {false, true}) {
      NodeWorld w(66, jobs, 0);
      w.cluster().cpus_error = error;
      w.cluster().whole_nodes = whole;
      CPPUNIT_ASSERT_EQUAL(Time(80), w.adapter().reserve(100, 50, true));
      const int probes = w.cluster().probes;
      // Right: the CPU count, or (too low) the whole-node count.
      if (error == 0 || (whole && error < 0)) CPPUNIT_ASSERT_EQUAL(5, probes);
      CPPUNIT_ASSERT_MESSAGE("probes " + std::to_string(probes), probes <= 2 * (2 * 6 + 3) + 2);
      // R: the 8 released nodes (0-7) and the two free ones (64, 65).
      const auto* r = w.adapter().reservation();
      CPPUNIT_ASSERT(r != nullptr);
      std::vector<int> held;
      for (std::size_t i = 0; i < r->nodes.bits.size(); ++i)
        if (r->nodes.bits[i]) held.push_back(int(i));
      CPPUNIT_ASSERT_EQUAL(std::string("0 1 2 3 4 5 6 7 64 65"), join(held));
     }
    }
    // Nothing ever frees enough: no shadow.
    std::vector<JobSpec> wide = jobs;
    wide.back().size = 70;
    NodeWorld w(66, wide, 0);
    CPPUNIT_ASSERT_EQUAL(kNever, w.adapter().reserve(100, 50, true));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(AdapterConformanceTest);
