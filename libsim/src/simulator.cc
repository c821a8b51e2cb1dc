#include "easypp/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "easypp/sim/metrics.h"
#include "easypp/sim/proc_resources.h"

namespace easypp {

namespace {

struct Event {
  Time t;
  std::uint32_t kind;  // 0 termination, 1 expiry: terminations first
  JobHandle h;
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return h > o.h;
  }
};

struct JobState {
  Time prediction = 0;
  Time start = -1;
  Time acc_since = 0;
  double acc_sum = 0;
  CorrectionState corr;
  WaitQueue::Slot slot = WaitQueue::kNoSlot;
  bool running = false;
};

}  // namespace

struct Simulator::Impl {
  const Workload& w;
  SchedulerConfig cfg;
  Predictor predictor;
  WaitQueue queue;
  ProcResources res;
  std::vector<JobState> st;
  std::vector<JobOutcome> out;
  std::vector<Event> heap;
  std::unordered_map<UserId, std::vector<JobHandle>> waiting_by_user;  // propagation only
  SimObserver* obs = nullptr;
  SimStats stats;
  std::uint32_t terminated = 0;
  Time now = 0;

  Impl(const Workload& wl, SchedulerConfig c)
      : w(wl),
        cfg(std::move(c)),
        predictor(cfg.predictor),
        queue(cfg.policy.backfill),
        res(wl.procs),
        st(wl.jobs.size()),
        out(wl.jobs.size()) {}

  void push_event(Time t, std::uint32_t kind, JobHandle h) {
    heap.push_back(Event{t, kind, h});
    std::push_heap(heap.begin(), heap.end(), std::greater<Event>());
  }

  Time initial_prediction(const Job& j) const {
    switch (cfg.plan) {
      case PlanWith::Estimate:
        if (cfg.estimate_factor == 1.0) return std::max<Time>(j.estimate, 1);
        return std::max<Time>(Time(std::llround(double(j.estimate) * cfg.estimate_factor)), 1);
      case PlanWith::Prediction:
        return predictor.predict(j.user, j.estimate);
      case PlanWith::Runtime:
        return std::max<Time>(j.runtime, 1);
    }
    return j.estimate;
  }

  // Close the accuracy segment of the prediction in effect until `t`.
  void account(JobHandle h, Time t) {
    JobState& s = st[h];
    if (t > s.acc_since) {
      s.acc_sum += prediction_accuracy(s.prediction, w.jobs[h].runtime) * double(t - s.acc_since);
      s.acc_since = t;
    }
  }

  void arrive(JobHandle h) {
    const Job& j = w.jobs[h];
    JobState& s = st[h];
    s.prediction = initial_prediction(j);
    s.acc_since = now;
    out[h].first_prediction = s.prediction;
    const QueueKey key = cfg.queue_order == QueueOrder::Arrival
                             ? QueueKey{j.submit, std::int64_t(h)}
                             : QueueKey{j.estimate, std::int64_t(h)};
    s.slot = queue.push(h, key, s.prediction, j.estimate, j.size, j.submit);
    if (cfg.predictor.propagation && cfg.plan == PlanWith::Prediction)
      waiting_by_user[j.user].push_back(h);
    stats.max_queue = std::max<std::uint64_t>(stats.max_queue, queue.size());
  }

  void start_job(JobHandle h, Time end_bound, bool backfilled) {
    const Job& j = w.jobs[h];
    JobState& s = st[h];
    s.start = now;
    s.running = true;
    s.slot = WaitQueue::kNoSlot;
    out[h].start = now;
    out[h].backfilled = backfilled;
    res.start(h, j.size, end_bound, now + s.prediction);
    push_event(now + j.runtime, 0, h);
    if (cfg.correction != CorrectionPolicy::None && s.prediction < j.runtime)
      push_event(now + s.prediction, 1, h);
    if (backfilled) ++stats.backfilled;
    if (obs) obs->on_start(SimView(*this), h, now, backfilled);
  }

  void terminate(JobHandle h) {
    const Job& j = w.jobs[h];
    JobState& s = st[h];
    account(h, now);
    res.remove_running(h, j.size, s.start + s.prediction);
    s.running = false;
    JobOutcome& o = out[h];
    o.end = now;
    o.final_prediction = s.prediction;
    o.corrections = s.corr.count;
    o.termination_rank = terminated++;
    const Time span = now - j.submit;
    o.accuracy = span > 0 ? s.acc_sum / double(span) : prediction_accuracy(s.prediction, j.runtime);
    if (cfg.plan == PlanWith::Prediction) {
      predictor.record(j.user, j.runtime, j.estimate);
      if (cfg.predictor.propagation) repredict_user(j.user);
    }
    if (obs) obs->on_end(SimView(*this), h, now);
  }

  // Propagation: the user's history changed, so re-predict their waiting jobs.
  void repredict_user(UserId u) {
    auto it = waiting_by_user.find(u);
    if (it == waiting_by_user.end()) return;
    auto& v = it->second;
    std::size_t keep = 0;
    for (JobHandle h : v) {
      JobState& s = st[h];
      if (s.slot == WaitQueue::kNoSlot) continue;  // started meanwhile
      v[keep++] = h;
      const Time p = predictor.predict(u, w.jobs[h].estimate);
      if (p != s.prediction) {
        account(h, now);
        s.prediction = p;
        queue.set_prediction(s.slot, p);
      }
    }
    v.resize(keep);
  }

  void expire(JobHandle h) {
    JobState& s = st[h];
    if (!s.running || s.start + s.prediction != now) return;  // stale
    const Job& j = w.jobs[h];
    const Time old_p = s.prediction;
    const Time p = correct_prediction(cfg.correction, old_p, j.estimate, s.corr);
    if (p == old_p) return;
    account(h, now);
    res.move_predicted_end(h, j.size, s.start + old_p, s.start + p);
    s.prediction = p;
    ++stats.corrections;
    if (s.start + p < s.start + j.runtime) push_event(s.start + p, 1, h);
    if (obs) obs->on_correction(SimView(*this), h, now, old_p, p);
  }

  // The processor-count adapter (see policy.h).
  struct Adapter {
    Impl& s;
    bool start_now(JobHandle h) {
      const Job& j = s.w.jobs[h];
      if (!s.res.fits_now(j.size)) return false;
      s.start_job(h, s.now + s.st[h].prediction, false);
      return true;
    }
    Time reserve(JobHandle h, Time duration, bool is_head) {
      const Time shadow = s.res.reserve(s.w.jobs[h].size, duration);
      if (is_head && s.out[h].first_reservation < 0 && shadow < kNever)
        s.out[h].first_reservation = std::max(shadow, s.now);
      return shadow;
    }
    bool backfill(JobHandle h, Time end_bound) {
      if (!s.res.may_backfill(s.w.jobs[h].size, end_bound)) return false;
      s.start_job(h, end_bound, true);
      return true;
    }
    bool can_start_more() const { return s.res.free() > 0; }
    std::int64_t free_width() const { return s.res.free(); }
    bool room_beyond_shadow() const { return s.res.extra() > 0; }
    bool may_continue() const { return true; }
  };

  RunResult run(SimObserver* o) {
    obs = o;
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = w.jobs.size();
    std::size_t next = 0;
    Adapter adapter{*this};
    while (next < n || !heap.empty()) {
      now = next < n ? w.jobs[next].submit : kNever;
      if (!heap.empty() && heap.front().t < now) now = heap.front().t;
      while (!heap.empty() && heap.front().t == now) {
        const Event e = heap.front();
        std::pop_heap(heap.begin(), heap.end(), std::greater<Event>());
        heap.pop_back();
        ++stats.events;
        if (e.kind == 0) terminate(e.h);
        else expire(e.h);
      }
      while (next < n && w.jobs[next].submit == now) {
        ++stats.events;
        arrive(JobHandle(next++));
      }
      if (queue.empty()) continue;
      if (obs) obs->before_pass(SimView(*this), now);
      res.begin_pass(now);
      ++stats.passes;
      const PassResult pr = schedule_pass(now, queue, adapter, cfg.policy);
      stats.tested += pr.tested;
      if (obs) obs->after_pass(SimView(*this), now, pr);
    }
    stats.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RunResult r;
    r.config = cfg;
    r.jobs = std::move(out);
    r.stats = stats;
    return r;
  }
};

Simulator::Simulator(const Workload& w, SchedulerConfig cfg) : impl_(new Impl(w, std::move(cfg))) {}
Simulator::~Simulator() { delete impl_; }
RunResult Simulator::run(SimObserver* obs) { return impl_->run(obs); }

std::vector<RunResult> run_all(const Workload& w, const std::vector<SchedulerConfig>& cfgs) {
  std::vector<RunResult> out;
  for (const auto& c : cfgs) out.push_back(Simulator(w, c).run());
  return out;
}

// --- SimView ----------------------------------------------------------------
const Workload& SimView::workload() const { return s_.w; }
const SchedulerConfig& SimView::config() const { return s_.cfg; }
Time SimView::prediction(JobHandle h) const { return s_.st[h].prediction; }
Time SimView::start(JobHandle h) const { return s_.st[h].start; }
bool SimView::running(JobHandle h) const { return s_.st[h].running; }
std::int64_t SimView::free_procs() const { return s_.res.free(); }
std::int64_t SimView::total_procs() const { return s_.res.total(); }
std::vector<JobHandle> SimView::running_jobs() const {
  std::vector<JobHandle> v;
  for (JobHandle h = 0; h < s_.st.size(); ++h)
    if (s_.st[h].running) v.push_back(h);
  return v;
}
std::vector<JobHandle> SimView::waiting_jobs() const {
  std::vector<JobHandle> v;
  for (const auto& item : s_.queue.queue_order()) v.push_back(s_.queue.entry(item.slot).handle);
  return v;
}

}  // namespace easypp
