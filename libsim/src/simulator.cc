#include "easypp/sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <map>

#include "easypp/creasy.h"
#include "easypp/prediction_book.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/proc_adapter.h"
#include "easypp/sim/proc_resources.h"
#include "easypp/sim/session_model.h"

namespace easypp {

namespace {

// A termination (the simulator's own event: only it knows runtimes).
struct Termination {
  Time t;
  JobHandle h;
  bool operator>(const Termination& o) const { return t != o.t ? t > o.t : h > o.h; }
};

// What the simulator keeps per job besides the book's plan: where it waits,
// and the accuracy integral (it knows the runtime, the core does not).
struct SimJob {
  WaitQueue::Slot slot = WaitQueue::kNoSlot;
  Time acc_since = 0;
  AccuracySum acc;
  // Grouped (see Impl::groups): its group, and where the group's changes
  // stood when it joined (the later ones are accounted when it leaves:
  // meanwhile `acc` holds its sum less the group's sums then).
  std::uint32_t group = PredictionBook::kNoGroup;
  std::uint32_t since_change = 0;
};

// A group's re-predictions as accuracy terms (AccuracySum: a = p*dt and
// b = dt/p of each), kept so that, for a runtime r, the a terms of the
// changes whose prediction is <= r and the b terms of the others come
// without visiting each change. Sorted runs of doubling sizes, each with
// its prefix sums (the logarithmic method), and a short unsorted tail: an
// insert appends, merging runs now and then (O(log n) amortized, in
// sequential memory, no allocation per change); a query binary-searches
// each run. The sums are integers modulo 2^128: any order gives the same
// bits. (It replaced a search tree with subtree sums: on RICC under
// easy-pred, 10% of the time went to its inserts and 4% to malloc/free.)
class ChangeSums {
 public:
  void insert(Time p, const AccuracySum& t) {
    all_b_ += t.b;
    tail_.push_back(Item{p, t});
    if (tail_.size() < kTail) return;
    std::sort(tail_.begin(), tail_.end(), [](const Item& x, const Item& y) { return x.p < y.p; });
    carry_.clear();
    carry_.prefix.push_back(AccuracySum{});
    for (const Item& it : tail_) carry_.push(it.p, it.t);
    tail_.clear();
    for (std::size_t i = 0;; ++i) {
      if (i == runs_.size()) runs_.emplace_back();
      if (runs_[i].keys.empty()) {
        std::swap(runs_[i], carry_);
        return;
      }
      merge(runs_[i], carry_, &tmp_);
      runs_[i].clear();
      std::swap(carry_, tmp_);
    }
  }
  // For runtime r: the a terms of the changes with p <= r, the b terms of
  // those with p > r.
  AccuracySum terms_for(Time r) const {
    AccuracySum le;
    for (const Item& it : tail_)
      if (it.p <= r) le += it.t;
    for (const Run& run : runs_) {
      if (run.keys.empty()) continue;
      const std::size_t n =
          std::size_t(std::upper_bound(run.keys.begin(), run.keys.end(), r) - run.keys.begin());
      le += run.prefix[n];
    }
    le.b = all_b_ - le.b;  // the b terms of the others
    return le;
  }
  // (The runs' memory goes back: a group that once saw thousands of
  // changes must not keep it through its next, shorter lives.)
  void clear() {
    tail_.clear();
    runs_ = std::vector<Run>();
    carry_ = Run();
    tmp_ = Run();
    all_b_ = 0;
  }

 private:
  struct Item {
    Time p;
    AccuracySum t;
  };
  // keys sorted; prefix[i] the sum of the first i terms (prefix[0] = 0).
  struct Run {
    std::vector<Time> keys;
    std::vector<AccuracySum> prefix;
    void clear() {
      keys.clear();
      prefix.clear();
    }
    void push(Time p, const AccuracySum& t) {
      AccuracySum s = prefix.back();
      s += t;
      keys.push_back(p);
      prefix.push_back(s);
    }
    AccuracySum term(std::size_t i) const {
      AccuracySum t = prefix[i + 1];
      t -= prefix[i];
      return t;
    }
  };
  static void merge(const Run& x, const Run& y, Run* out) {
    out->clear();
    out->keys.reserve(x.keys.size() + y.keys.size());
    out->prefix.reserve(x.keys.size() + y.keys.size() + 1);
    out->prefix.push_back(AccuracySum{});
    std::size_t i = 0, j = 0;
    while (i < x.keys.size() || j < y.keys.size()) {
      if (j == y.keys.size() || (i < x.keys.size() && x.keys[i] <= y.keys[j])) {
        out->push(x.keys[i], x.term(i));
        ++i;
      } else {
        out->push(y.keys[j], y.term(j));
        ++j;
      }
    }
  }
  static constexpr std::size_t kTail = 16;
  std::vector<Item> tail_;
  std::vector<Run> runs_;  // runs_[i]: empty or 2^i * kTail changes
  Run carry_, tmp_;        // (scratch, kept for its capacity)
  AccuracySum::u128 all_b_ = 0;  // the b terms of every change
};

// Corrections fall due exactly at the predicted end (the simulator's
// terminations come first at equal times); every runtime is learned, as in
// the paper, but only when planning with predictions; handles are job
// indexes.
PredictionBook::Options book_options(const Workload& w) {
  PredictionBook::Options o;
  o.grace = 0;
  o.min_learned_runtime = 0;
  o.dense_handles = w.jobs.size();
  o.always_learn = false;
  return o;
}

}  // namespace

struct Simulator::Impl : PredictionBook::Listener {
  const Workload& w;
  SchedulerConfig cfg;
  SimOptions sim;
  PredictionBook book;
  WaitQueue queue;
  ProcResources res;
  std::vector<SimJob> st;
  SlowdownMeans slowdowns;  // adaptive selective thresholds (selective.h)
  std::vector<JobOutcome> out;
  std::vector<Termination> heap;
  SimObserver* obs = nullptr;
  SimStats stats;
  std::uint32_t terminated = 0;
  Time now = 0;

  Impl(const Workload& wl, SchedulerConfig c, SimOptions o)
      : w(wl),
        cfg(std::move(c)),
        sim(o),
        book(cfg, book_options(wl)),
        queue(cfg.policy.backfill),
        res(wl.procs),
        st(wl.jobs.size()),
        out(wl.jobs.size()) {
    book.set_listener(this);
    index_queue();
    if (cfg.policy.selective.mode == Selective::Mode::Adaptive) slowdowns.apply(cfg.policy.selective);
    if (sim.feedback) link();
  }

  // --- closed loop (--feedback) -------------------------------------------------
  bool fb = false;
  FeedbackLinks links;
  std::vector<std::uint32_t> child_begin, children;  // CSR: the jobs following each job
  std::vector<Time> sub;      // submit time in this replay (-1: not yet, or never)
  std::vector<Time> planned;  // when a released job will be submitted
  std::vector<Termination> released;  // min-heap of (submit time, job)
  std::uint64_t not_submitted = 0;
  void link() {
    fb = true;
    links = link_feedback(w);
    const std::size_t n = w.jobs.size();
    child_begin.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (links.pred[i] != FeedbackLinks::kNone) ++child_begin[links.pred[i] + 1];
    for (std::size_t i = 0; i < n; ++i) child_begin[i + 1] += child_begin[i];
    children.resize(child_begin[n]);
    std::vector<std::uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)  // ascending: a batch's lead first
      if (links.pred[i] != FeedbackLinks::kNone) children[fill[links.pred[i]]++] = std::uint32_t(i);
    sub.assign(n, -1);
    planned.assign(n, -1);
  }
  Time submit_of(JobHandle h) const { return fb ? sub[h] : w.jobs[h].submit; }
  // Job h ended now: the jobs that follow it get their submit times.
  void release_children(JobHandle h) {
    const SessionModel* m = w.sessions.get();
    for (std::uint32_t k = child_begin[h]; k < child_begin[h + 1]; ++k) {
      const std::uint32_t c = children[k];
      Time t;
      if (m == nullptr) {
        t = now + w.jobs[c].think;
      } else if (m->draws[c].lead == c) {
        t = m->submit_after(c, w.jobs[c].user, sub[h], now);
      } else {
        const std::uint32_t lead = m->draws[c].lead;
        t = planned[lead] >= 0 ? planned[lead] + m->draws[c].offset : kNever;
      }
      if (m != nullptr && t > m->horizon) {
        mark_never(c);
        continue;
      }
      planned[c] = t;
      released.push_back(Termination{t, c});
      std::push_heap(released.begin(), released.end(), std::greater<Termination>());
    }
  }
  // A job the session model will never submit, nor the jobs that follow it.
  // (A user's chain can be long: no recursion.)
  void mark_never(std::uint32_t c) {
    std::vector<std::uint32_t> todo{c};
    while (!todo.empty()) {
      const std::uint32_t x = todo.back();
      todo.pop_back();
      ++not_submitted;
      for (std::uint32_t k = child_begin[x]; k < child_begin[x + 1]; ++k) todo.push_back(children[k]);
    }
  }
  std::size_t skip_linked(std::size_t next) const {
    while (next < w.jobs.size() && links.pred[next] != FeedbackLinks::kNone) ++next;
    return next;
  }

  // The candidate index of queue order (queue.h): width classes fitted to
  // this workload, and under SJF (queue order by estimate) each job's rank
  // in that order as its stable queue position.
  std::vector<std::uint32_t> sjf_rank;
  void index_queue() {
    if (cfg.policy.backfill != BackfillOrder::Queue) return;
    std::map<std::int64_t, std::uint64_t> hist;
    for (const Job& j : w.jobs) ++hist[j.size];
    queue.set_width_classes(
        WaitQueue::width_classes_for({hist.begin(), hist.end()}));
    if (cfg.queue_order != QueueOrder::Estimate) return;
    std::vector<std::uint32_t> order(w.jobs.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Time ea = w.jobs[a].estimate, eb = w.jobs[b].estimate;
      return ea != eb ? ea < eb : a < b;
    });
    sjf_rank.resize(order.size());
    for (std::uint32_t r = 0; r < order.size(); ++r) sjf_rank[order[r]] = r;
  }

  // --- groups: a user's waiting jobs of one estimate -------------------------------
  // With propagation the book keeps one planning value per group and
  // reports one change per group (PredictionBook::Listener::Changes). The
  // wait queue holds the groups too (WaitQueue::set_group): a change costs
  // the index leaves of its jobs (queue order) or its runs (SJBF), not the
  // jobs. Their accuracy is accounted when they leave the group (start),
  // from the sums of the group's changes since they joined (AccuracySum:
  // integers, so the same sums as one change at a time). (Passes that
  // walk the SJBF order as a set, deeper or selective reservations, and
  // CREASY keep a value per job: there a change still visits each job.)
  // Change k's terms are those of the value it replaced over the time
  // since change k-1 (group-wide; a job's first change after it joined
  // counts from the job's own start of segment instead, see leave()).
  struct GroupLog {
    std::vector<std::pair<Time, Time>> changes;  // (when, the value it replaced)
    ChangeSums terms;
    std::uint32_t jobs = 0;  // its jobs in the queue
    Time span(std::size_t k) const { return k == 0 ? 0 : changes[k].first - changes[k - 1].first; }
    void clear() {
      changes.clear();
      terms.clear();
    }
  };
  // Only the book calls the simulator makes (arrive, start, finish,
  // correct_expired) move jobs between groups as join()/leave() follow:
  // configure(), restore_history() or drop() mid-run would need the book to
  // report departures too.
  const bool grouped =
      sim.group_values && cfg.queue_order != QueueOrder::Creasy &&
      (cfg.policy.backfill == BackfillOrder::Queue ||
       (cfg.policy.backfill == BackfillOrder::ShortestPrediction && cfg.policy.reservations == 1 &&
        !cfg.policy.selective.on()));
  std::vector<GroupLog> groups;
  void join(JobHandle h, std::uint32_t g, Time value) {
    assert(st[h].group == PredictionBook::kNoGroup);
    if (g >= groups.size()) groups.resize(std::size_t(g) + 1);
    GroupLog& l = groups[g];
    if (l.jobs++ == 0) l.clear();
    st[h].group = g;
    st[h].since_change = std::uint32_t(l.changes.size());
    const Time r = w.jobs[h].runtime;
    if (r > 0) {  // (leave() adds the sums then)
      const AccuracySum t0 = l.terms.terms_for(r);
      st[h].acc -= t0;
    }
    queue.set_group_prediction(g, value);
    queue.set_group(st[h].slot, g);
  }
  void leave(JobHandle h) {
    SimJob& s = st[h];
    GroupLog& l = groups[s.group];
    // What account() would add for each change since it joined (a job
    // waits through thousands of changes on RICC: a billion additions in
    // all), from the sums: those of the group now less those when it
    // joined, with its first changes' group-wide spans replaced by its own
    // (from acc_since, changes at or before it adding nothing).
    const Time r = w.jobs[h].runtime;
    const std::size_t b = l.changes.size();
    std::size_t k = s.since_change;
    Time since = s.acc_since;
    if (r <= 0) {
      for (; k < b; ++k) {
        const Time t = l.changes[k].first;
        if (t > since) {
          s.acc.add(l.changes[k].second, r, t - since);
          since = t;
        }
      }
    } else {
      // (acc holds its sum less the group's sums when it joined, join().)
      const AccuracySum now = l.terms.terms_for(r);
      s.acc += now;
      for (; k < b && l.changes[k].first <= since; ++k) s.acc.sub(l.changes[k].second, r, l.span(k));
      if (k < b) {
        s.acc.sub(l.changes[k].second, r, l.span(k));
        s.acc.add(l.changes[k].second, r, l.changes[k].first - since);
        since = l.changes[b - 1].first;
      }
    }
    s.acc_since = since;
    if (--l.jobs == 0) l.clear();
    s.group = PredictionBook::kNoGroup;
  }
  // A job that had a value of its own joined its group (not at arrival:
  // arrive() joins those, once the job is in the queue).
  void joined_group(JobHandle h, std::uint32_t g) override {
    if (!grouped || st[h].slot == WaitQueue::kNoSlot) return;
    join(h, g, book.find(h)->prediction);
  }

  // Close the accuracy segment of prediction `p`, in effect until `t`.
  void account(JobHandle h, Time p, Time t) {
    SimJob& s = st[h];
    if (t > s.acc_since) {
      s.acc.add(p, w.jobs[h].runtime, t - s.acc_since);
      s.acc_since = t;
    }
  }

  // --- events -> the book ---------------------------------------------------------

  void arrive(JobHandle h) {
    const Job& j = w.jobs[h];
    if (fb) sub[h] = now;
    const Time submit = submit_of(h);
    const JobPlan& p = book.arrive(h, j.user, j.estimate, submit, now, j.runtime);
    st[h].acc_since = now;
    out[h].first_prediction = p.prediction;
    const QueueKey key = cfg.queue_order == QueueOrder::Creasy
                             ? QueueKey{std::int64_t(creasy_seq++), 0}
                         : cfg.queue_order == QueueOrder::Arrival
                             ? QueueKey{submit, std::int64_t(h)}
                             : QueueKey{j.estimate, std::int64_t(h)};
    const Time value = p.prediction;  // (p: the book's, maybe moved by the next call)
    // A grouped job goes into its group as it is pushed (join()'s
    // set_group() then finds it there).
    const std::uint32_t g = grouped ? book.group_of(h) : PredictionBook::kNoGroup;
    if (g != PredictionBook::kNoGroup) queue.set_group_prediction(g, value);
    st[h].slot = queue.push(h, key, value, j.estimate, j.size, p.since, kNever,
                            sjf_rank.empty() ? WaitQueue::kAutoPosition : sjf_rank[h], g);
    if (carrying) arrived.push_back(st[h].slot);
    if (g != PredictionBook::kNoGroup) join(h, g, value);
    stats.max_queue = std::max<std::uint64_t>(stats.max_queue, queue.size());
  }

  void terminate(JobHandle h) {
    const Job& j = w.jobs[h];
    const JobPlan& p = *book.find(h);
    account(h, p.prediction, now);
    res.remove_running(h, j.size, p.planned_end());
    JobOutcome& o = out[h];
    o.end = now;
    o.final_prediction = p.prediction;
    o.corrections = p.corr.count;
    o.termination_rank = terminated++;
    const Time span = now - submit_of(h);
    o.accuracy = span > 0 ? st[h].acc.integral(j.runtime) / double(span)
                          : prediction_accuracy(p.prediction, j.runtime);
    book.finish(h, j.user, j.estimate, j.runtime, now, j.completed);
    if (cfg.policy.selective.mode == Selective::Mode::Adaptive) {
      slowdowns.record(o.start - submit_of(h), j.runtime, j.size, cfg.policy.selective);
      slowdowns.apply(cfg.policy.selective);
    }
    if (fb) release_children(h);
    if (obs) obs->on_end(SimView(*this), h, now);
  }

  // --- the book's answers -> this world ---------------------------------------------

  void prediction_changed(const JobPlan& p, Time old_p, PlanChange why, Time t) override {
    const JobHandle h = p.handle;
    // A job in a group is told with its group (predictions_changed(), which
    // takes every change: the book calls this one for the others only).
    assert(st[h].group == PredictionBook::kNoGroup);
    if (st[h].group != PredictionBook::kNoGroup) leave(h);
    account(h, old_p, t);
    if (why == PlanChange::Repredicted) {
      queue.set_prediction(st[h].slot, p.prediction);
      return;
    }
    res.move_predicted_end(h, w.jobs[h].size, p.start + old_p, p.planned_end());
    ++stats.corrections;
    if (obs) obs->on_correction(SimView(*this), h, t, old_p, p.prediction);
  }

  // A user's re-predicted waiting jobs at once (propagation): the same
  // accounting and queue updates as prediction_changed(), with each job's
  // records asked for ahead (they lie apart: a user with thousands of
  // queued jobs costs a cache miss per record otherwise).
  bool predictions_changed(const std::vector<Changes>& cs, Time t) override {
    constexpr std::size_t kFar = 16, kMid = 8, kNear = 4;
    for (const Changes& c : cs) {
      if (grouped && c.group != PredictionBook::kNoGroup) {
        if (c.group >= groups.size()) groups.resize(std::size_t(c.group) + 1);
        GroupLog& l = groups[c.group];
        const std::uint32_t k = std::uint32_t(l.changes.size());
        // (leave() takes the spans between changes: times never go back.)
        assert(l.changes.empty() || t >= l.changes.back().first);
        l.changes.emplace_back(t, c.old_prediction);
        const Time dt = l.span(k);
        if (dt > 0) {  // (nothing to add otherwise)
          AccuracySum terms;  // both: which counts depends on each job's runtime
          terms.a = AccuracySum::a_term(c.old_prediction, dt);
          terms.b = AccuracySum::b_term(c.old_prediction, dt);
          l.terms.insert(c.old_prediction, terms);
        }
        queue.set_group_prediction(c.group, c.prediction);
        continue;
      }
      const JobHandle* hs = c.jobs;
      const std::size_t n = c.count;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kFar < n && hs[i + kFar] != PredictionBook::kHole) {
          const JobHandle f = hs[i + kFar];
          __builtin_prefetch(&st[f], 1);
          __builtin_prefetch(&w.jobs[f].runtime);
        }
        if (i + kMid < n && hs[i + kMid] != PredictionBook::kHole)
          queue.prefetch_entry(st[hs[i + kMid]].slot);
        if (i + kNear < n && hs[i + kNear] != PredictionBook::kHole)
          queue.prefetch_index(st[hs[i + kNear]].slot);
        const JobHandle h = hs[i];
        if (h == PredictionBook::kHole) continue;
        account(h, c.old_prediction, t);
        queue.set_prediction(st[h].slot, c.prediction);
      }
    }
    return true;
  }

  // --- the adapter's view of the jobs (ProcAdapter's Jobs) ----------------------------

  std::int64_t size(JobHandle h) const { return w.jobs[h].size; }
  Time prediction(JobHandle h) const { return book.find(h)->prediction; }
  void started(JobHandle h, Time /*end_bound*/, bool backfilled) {
    st[h].slot = WaitQueue::kNoSlot;
    if (st[h].group != PredictionBook::kNoGroup) leave(h);
    book.start(h, now, now + w.jobs[h].runtime);
    out[h].start = now;
    out[h].backfilled = backfilled;
    heap.push_back(Termination{now + w.jobs[h].runtime, h});
    std::push_heap(heap.begin(), heap.end(), std::greater<Termination>());
    if (backfilled) ++stats.backfilled;
    if (obs) obs->on_start(SimView(*this), h, now, backfilled);
  }
  void reserved(JobHandle h, Time shadow, bool is_head) {
    // out[h] mirrors the book's first reservation (for the metrics): the
    // cheap test of every pass.
    if (!is_head || shadow >= kNever || out[h].first_reservation >= 0) return;
    const Time first = book.reserved_as_head(h, shadow, now);
    queue.set_first_reservation(st[h].slot, first);
    out[h].first_reservation = first;
  }

  // CREASY (queue-order=creasy): the queue re-sorted by priority before
  // each pass (the priority grows with the wait: the order changes with
  // time, not only with events).
  std::uint64_t creasy_seq = 0;
  void creasy_order() {
    if (queue.size() < 2) return;
    creasy_reorder(queue, now, cfg.creasy, [&](JobHandle) { return std::uint64_t(creasy_seq++); },
                   [&](JobHandle h, WaitQueue::Slot s) { st[h].slot = s; });
  }

  // Passes continue the last one while only arrivals came between them
  // (policy.h, PassCarry; SimOptions::continue_passes): FCFS queue order,
  // where an arrival joins the end of the queue (not SJF or CREASY, nor the
  // closed loop, whose released jobs may sort before a job logged at the
  // same second), and a policy that may (continuable(): the others take
  // the plain pass, without the carry's bookkeeping). What else may come
  // between passes (ends, corrections, re-predictions) the adapter and the
  // queue tell the pass themselves.
  bool carrying = false;
  PassCarry carry;
  std::vector<WaitQueue::Slot> arrived;  // pushed since the last pass, in queue order

  RunResult run(SimObserver* o) {
    obs = o;
    carrying = sim.continue_passes && cfg.queue_order == QueueOrder::Arrival && !fb &&
               continuable(cfg.policy);
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = w.jobs.size();
    std::size_t next = 0;
    ProcAdapter<Impl> adapter(res, *this);
    auto pass = [&]() __attribute__((always_inline)) {
      if (queue.empty()) return;
      if (cfg.queue_order == QueueOrder::Creasy) creasy_order();
      if (obs) obs->before_pass(SimView(*this), now);
      ++stats.passes;
      PassResult pr;
      if (carrying) {
        pr = schedule_pass(now, queue, adapter, cfg.policy, carry, arrived);
        arrived.clear();
      } else {
        adapter.begin_pass(now);
        pr = schedule_pass(now, queue, adapter, cfg.policy);
      }
      stats.tested += pr.tested;
      stats.continued += pr.continued;
      if (obs) obs->after_pass(SimView(*this), now, pr);
    };
    const bool each = sim.pass_per_event;
    if (fb) next = skip_linked(next);
    while (next < n || !heap.empty() || !released.empty()) {
      now = next < n ? w.jobs[next].submit : kNever;
      if (!released.empty() && released.front().t < now) now = released.front().t;
      if (!heap.empty() && heap.front().t < now) now = heap.front().t;
      const Time due = book.next_expiry();
      if (due < now) now = due;
      bool other = false;  // an arrival or a termination at this time
      while (!heap.empty() && heap.front().t == now) {
        const JobHandle h = heap.front().h;
        std::pop_heap(heap.begin(), heap.end(), std::greater<Termination>());
        heap.pop_back();
        ++stats.events;
        terminate(h);
        other = true;
        if (each) pass();
      }
      if (due == now) {
        const std::uint32_t c = book.correct_expired(now);
        stats.events += c;
        if (each && c > 0 && sim.pass_after_correction) pass();
      }
      while (!fb && next < n && w.jobs[next].submit == now) {
        ++stats.events;
        arrive(JobHandle(next++));
        other = true;
        if (each) pass();
      }
      while (fb) {  // the logged arrivals and the released ones, by job index
        const bool logged = next < n && w.jobs[next].submit == now;
        const bool rel = !released.empty() && released.front().t == now;
        if (!logged && !rel) break;
        JobHandle h;
        if (rel && (!logged || released.front().h < next)) {
          h = released.front().h;
          std::pop_heap(released.begin(), released.end(), std::greater<Termination>());
          released.pop_back();
        } else {
          h = JobHandle(next);
          next = skip_linked(next + 1);
        }
        ++stats.events;
        arrive(h);
        other = true;
        if (each) pass();
      }
      if (!each && (other || sim.pass_after_correction)) pass();
    }
    stats.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RunResult r;
    r.config = cfg;
    r.jobs = std::move(out);
    r.stats = stats;
    if (fb) {
      r.feedback = links.report;
      r.feedback.not_submitted = not_submitted;
      for (std::size_t i = 0; i < n; ++i) {
        if (sub[i] < 0) continue;
        r.feedback.earlier += sub[i] < w.jobs[i].submit;
        r.feedback.later += sub[i] > w.jobs[i].submit;
      }
      r.submitted = std::move(sub);
    }
    return r;
  }
};

Simulator::Simulator(const Workload& w, SchedulerConfig cfg, SimOptions opt)
    : impl_(new Impl(w, std::move(cfg), opt)) {}
Simulator::~Simulator() { delete impl_; }
RunResult Simulator::run(SimObserver* obs) { return impl_->run(obs); }

// --- SimView ----------------------------------------------------------------
const Workload& SimView::workload() const { return s_.w; }
const SchedulerConfig& SimView::config() const { return s_.cfg; }
Time SimView::prediction(JobHandle h) const {
  const JobPlan* p = s_.book.find(h);
  return p ? p->prediction : s_.out[h].final_prediction;
}
Time SimView::start(JobHandle h) const { return s_.out[h].start; }
bool SimView::running(JobHandle h) const { return s_.out[h].start >= 0 && s_.out[h].end < 0; }
std::int64_t SimView::free_procs() const { return s_.res.free(); }
std::int64_t SimView::total_procs() const { return s_.res.total(); }
std::vector<JobHandle> SimView::running_jobs() const {
  std::vector<JobHandle> v;
  for (JobHandle h = 0; h < s_.out.size(); ++h)
    if (running(h)) v.push_back(h);
  return v;
}
std::vector<JobHandle> SimView::waiting_jobs() const {
  std::vector<JobHandle> v;
  for (const WaitQueue::Item item : s_.queue.queue_order()) v.push_back(s_.queue.entry(item.slot).handle);
  return v;
}

}  // namespace easypp
