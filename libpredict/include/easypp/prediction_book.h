// The prediction's life, owned in one place: the PredictionBook keeps, for
// every job a scheduler knows, the planning value it schedules with, from
// the job's arrival to its end, and the per-user history those values come
// from. The paper's first two ideas live here:
//
//   arrive()          prediction from the user's history (predictor.h), or
//                     the fallback; the estimate under plan=estimate
//   start()           the job runs: its correction falls due at its
//                     predicted end (+ grace)
//   correct_expired() every running job that outlived its prediction gets
//                     the correction policy's next value (correction.h);
//                     beyond its estimate, the beyond-estimate rule
//   finish()          the runtime is learned; with propagation, the user's
//                     waiting jobs are predicted again
//   next_expiry()     when the next correction falls due (the simulator's
//                     expiry event, the plugin's correction timer)
//   end_bound()       THE backfill bound of a job started now (prediction,
//                     estimate under safe backfill or a guard:
//                     PolicyConfig::end_bound)
//
// The simulator (libsim) and the plugin (plugin/) only translate their
// events into these calls and the book's answers (and Listener calls) into
// their world: processor counts and the wait queue there, end_time planning
// values and the status file here. See docs/architecture.md.
//
// Jobs are named by a JobHandle chosen by the caller (a job index in the
// simulator, a Slurm job id in the plugin). Per-user history stays bounded
// by the predictor's window; users with no job for history_ttl seconds are
// forgotten. Work per event is O(window) plus O(log running) for the
// correction timer; propagation re-predicts only the user's waiting jobs,
// one value per (user, estimate) group of them (see Group), and the
// listener hears each group's change once, with its jobs' handles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "easypp/config.h"
#include "easypp/correction.h"
#include "easypp/predictor.h"
#include "easypp/types.h"

namespace easypp {

/// One job as the book knows it.
struct JobPlan {
  JobHandle handle = 0;
  UserId user = kNoUser;
  Time estimate = 0;          ///< seconds: the user's time limit, the kill time
  Time prediction = 0;        ///< seconds: the planning value in effect
  Time first_prediction = 0;  ///< the value made at arrival
  Time since = kNever;        ///< waiting since (the starvation guard's clock)
  /// When it was first planned to start as the head of the queue (kNever:
  /// never reserved for yet): the delay cap's reference.
  Time first_reservation = kNever;
  Time start = -1;            ///< when it started running (-1: waiting)
  CorrectionState corr;       ///< corrections applied so far
  /// When the job will end, if the caller knows (the simulator does): a
  /// correction falling due at or after it is never scheduled, since the
  /// end comes first. kNever in Slurm.
  Time known_end = kNever;
  bool running = false;
  bool from_history = false;  ///< the prediction came from history, not a fallback

  /// start + prediction: when a running job is planned to end.
  Time planned_end() const { return start + prediction; }
};

enum class PlanChange {
  Repredicted,  ///< a waiting job's user history changed (propagation)
  Corrected,    ///< a running job outlived its prediction
};

class PredictionBook {
 public:
  /// Listener::Changes: no job (a slot of a group left empty).
  static constexpr JobHandle kHole = ~JobHandle(0);
  /// No group (group_of(), Listener::Changes::group).
  static constexpr std::uint32_t kNoGroup = ~std::uint32_t(0);
  /// Told of every change of a planning value after arrival.
  class Listener {
   public:
    virtual ~Listener() = default;
    /// plan.prediction is the new value; old_prediction the one it replaced.
    virtual void prediction_changed(const JobPlan& plan, Time old_prediction, PlanChange why,
                                    Time now) = 0;
    /// One re-prediction of a user's waiting jobs (propagation): each
    /// Changes is jobs[0..count) going from old_prediction to prediction,
    /// as prediction_changed(..., Repredicted, now) would report each
    /// (a handle of kHole is none: skip it). Return false (the default) to
    /// be told job by job through prediction_changed() instead. A user with
    /// thousands of jobs queued has thousands of changes at each of its
    /// finishes: a listener that takes them at once can walk its own
    /// per-job records with prefetching (the simulator's accuracy
    /// accounting and queue index). `jobs` points into the book: valid
    /// until the call returns.
    /// `group`: the group (see group_of()) whose value this is, every job
    /// of it listed; kNoGroup: jobs of no group, each listed alone.
    struct Changes {
      const JobHandle* jobs;
      std::size_t count;
      Time old_prediction;
      Time prediction;
      std::uint32_t group = kNoGroup;
    };
    virtual bool predictions_changed(const std::vector<Changes>& /*changes*/, Time /*now*/) {
      return false;
    }
    /// A waiting job joined `group` after its arrival (it had a value of
    /// its own and now has the group's, which it already held). A
    /// listener that follows groups (group_of() at arrival, Changes::group)
    /// learns here of the joins it cannot see. Called from arrive() too,
    /// before it returns.
    virtual void joined_group(JobHandle /*h*/, std::uint32_t /*group*/) {}
  };

  struct Options {
    /// A correction falls due this many seconds after the predicted end (the
    /// plugin: 1, since Slurm learns of a job's end a little late and keeps
    /// whole seconds; the simulator: 0, its terminations come first).
    Time grace = 0;
    /// Runtimes shorter than this are not learned (the plugin: 1 s, a job
    /// that never ran; the simulator learns every runtime, as the paper).
    Time min_learned_runtime = 0;
    /// Handles are 0..dense_handles-1 (the simulator's job indexes): stored
    /// by index instead of hashed. 0: any handle (Slurm job ids).
    std::size_t dense_handles = 0;
    /// Learn runtimes even when planning without predictions (plan=estimate):
    /// the plugin does, so its history is ready when predictions are switched
    /// on and easypp-ctl can show them; the simulator has no use for it.
    bool always_learn = true;
  };

  explicit PredictionBook(const SchedulerConfig& cfg = SchedulerConfig());
  PredictionBook(const SchedulerConfig& cfg, Options opt);
  PredictionBook(const PredictionBook&) = delete;
  PredictionBook& operator=(const PredictionBook&) = delete;

  /// New settings. The learned history is kept (rebuilt for a new predictor
  /// configuration); planning values already made stay until the job's next
  /// re-prediction or correction.
  void configure(const SchedulerConfig& cfg);
  const SchedulerConfig& config() const { return cfg_; }
  void set_listener(Listener* l) { listener_ = l; }

  // --- a job's life --------------------------------------------------------------

  /// A job starts waiting (or waits anew: requeued, or its limit changed):
  /// its planning value is made now, corrections start from zero.
  /// `known_runtime` is for plan=runtime (the simulator's "perfect"), -1
  /// when unknown (then the estimate is used).
  const JobPlan& arrive(JobHandle h, UserId user, Time estimate, Time since, Time now,
                        Time known_runtime = -1);
  /// Waiting job h started at `start` (as job `as`: an array task split off
  /// its still-waiting meta record h, which keeps waiting; default: h).
  /// `known_end`: see JobPlan::known_end.
  void start(JobHandle h, Time start, Time known_end = kNever) {
    Slot* s = slot(h);
    if (s == nullptr) return;
    s->mark = sweep_mark_;
    leave_group(*s);
    s->plan.known_end = known_end;
    s->plan.running = true;
    s->plan.start = start;
    schedule_expiry(s->plan);
  }
  void start_as(JobHandle h, JobHandle as, Time start);
  /// Waiting job h got a reservation at `shadow` as the head of the queue
  /// in a pass at `now`: the first one is kept (max(shadow, now); a shadow
  /// of kNever is no reservation). Returns the first reservation.
  Time reserved_as_head(JobHandle h, Time shadow, Time now) {
    Slot* s = slot(h);
    if (s == nullptr) return kNever;
    Time& first = s->plan.first_reservation;
    if (first == kNever && shadow < kNever) first = std::max(shadow, now);
    return first;
  }
  /// Apply every correction due at `now` (start + prediction + grace <=
  /// now), repeatedly for a job until it is no longer due (a late cycle).
  /// Returns the number of corrections; the listener hears each.
  std::uint32_t correct_expired(Time now);
  /// When the next correction falls due (kNever: none; correction=none
  /// never corrects). May lie before the last correct_expired() time when
  /// the caller's clock lagged. Its job in *h if not null.
  Time next_expiry(JobHandle* h = nullptr) const {
    if (!due_.empty() && !due_valid(due_.front())) drop_stale_expiries();
    if (due_.empty()) return kNever;
    if (h) *h = due_.front().h;
    return due_.front().at;
  }
  /// A job ended after running `runtime` seconds (`completed`: it ended
  /// normally, SWF status 1 or Slurm's COMPLETED): learn it, unless the
  /// configuration learns completed jobs only or longer runtimes only
  /// (PredictorConfig::learn_*; and never below Options::min_learned_runtime;
  /// the job need not be known: the plugin learns jobs that finished while
  /// it was not looking), and forget the job. With propagation, the user's
  /// waiting jobs are predicted again. Returns whether the runtime was
  /// learned.
  bool finish(JobHandle h, UserId user, Time estimate, Time runtime, Time now,
              bool completed = true);
  /// Forget a job without learning anything (cancelled while waiting, gone).
  void forget(JobHandle h) {
    if (Slot* s = slot(h)) drop(*s);
  }

  // --- observation (the plugin's per-cycle scan) ---------------------------------

  /// A waiting job seen now: arrives if new, back from running (requeued),
  /// or its user or estimate changed; else its waiting clock is updated.
  const JobPlan& observe_waiting(JobHandle h, UserId user, Time estimate, Time since, Time now);
  /// A running job seen now: arrives and starts if unknown, starts if it was
  /// waiting (another scheduler started it); a changed start (suspension)
  /// moves its correction, a changed estimate (its limit was raised) moves
  /// its kill time and keeps its prediction.
  const JobPlan& observe_running(JobHandle h, UserId user, Time estimate, Time start, Time now);

  /// Put back a job exactly as an earlier book had it (its planning value,
  /// first value, corrections, start): a follower that saved its plans
  /// continues after a restart as if it had not stopped (easypp-shadow).
  /// Replaces a job of the same handle; its correction falls due as
  /// start() would schedule it.
  const JobPlan& adopt(const JobPlan& plan, Time now);

  /// Sweep: begin_sweep(), then keep() (or any call above) for every job
  /// still there, then sweep() forgets the others: a job that vanished
  /// without being seen to end no longer drives corrections.
  void begin_sweep() { ++sweep_mark_; }
  void keep(JobHandle h);
  std::size_t sweep();

  // --- answers --------------------------------------------------------------------

  const JobPlan* find(JobHandle h) const {
    const Slot* s = slot(h);
    return s ? &s->plan : nullptr;
  }
  /// Propagation: the group of waiting job h (a user's waiting jobs of one
  /// estimate, sharing one planning value: their re-predictions come as one
  /// Listener::Changes of that group), or kNoGroup. Group numbers are
  /// small and reused once a group is empty.
  std::uint32_t group_of(JobHandle h) const {
    const Slot* s = raw_slot(h);
    return s ? s->group : kNoGroup;
  }
  /// The backfill bound of job h started at `now` (PolicyConfig::end_bound
  /// with its prediction and estimate); `room`: the head it could delay
  /// has this room (PolicyConfig::head_room; kNever: no guard; 0: safe).
  Time end_bound(JobHandle h, Time now, Time room = kNever) const;
  /// Visit every job: f(const JobPlan&).
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.live) {
        sync(s);
        f(s.plan);
      }
  }
  std::size_t size() const { return live_; }

  // --- history --------------------------------------------------------------------

  const Predictor& predictor() const { return predictor_; }
  /// The planning value a new job of `user` with `estimate` would get now.
  Time plan_value(UserId user, Time estimate, bool* from_history = nullptr,
                  Time known_runtime = -1) const;
  /// Replace the history (the plugin's state file). Users restored count as
  /// active at `now` for history_ttl.
  void restore_history(const std::vector<Predictor::Ring>& rings, Time now);
  /// Forget users with no job for history_ttl seconds (also done by the
  /// book itself as time passes). Returns how many were forgotten.
  std::size_t evict_idle(Time now);
  std::uint64_t learned_total() const { return learned_total_; }
  void set_learned_total(std::uint64_t n) { learned_total_ = n; }
  /// The history changed since clear_history_changed() (persist it).
  bool history_changed() const { return history_changed_; }
  void clear_history_changed() { history_changed_ = false; }

 private:
  struct Slot {
    JobPlan plan;
    bool live = false;
    std::uint32_t mark = 0;   // sweep generation last seen in
    std::uint32_t stamp = 0;  // de-duplication in a user's loose list
    // Propagation: the job's group (kNoGroup: none), its index in the
    // group's jobs, and the group version its plan was last synced to.
    std::uint32_t group = kNoGroup;
    std::uint32_t gpos = 0;
    std::uint32_t gver = 0;
  };
  // Propagation: a user's waiting jobs of one estimate share one planning
  // value (it depends on the user and the estimate only), kept here once.
  // A re-prediction changes the group's value and version; a job's plan
  // takes it when the job is next looked at (sync), so the book's part of
  // a re-prediction costs O(groups), not O(waiting jobs). Invariant: a
  // job in a group waits, is live, and its planning value is the group's
  // (its plan holds it once synced).
  struct Group {
    UserId user = kNoUser;
    Time estimate = 0;
    Time value = 0;
    bool history = false;  // JobPlan::from_history of the value
    bool active = false;   // in its user's `active` list
    std::uint32_t ver = 0;
    // In joining order, kHole where a job left (compacted when holes are
    // many): a re-prediction tells the jobs in queue order (mostly), the
    // order their records lie in.
    std::vector<JobHandle> jobs;
    std::uint32_t holes = 0;
    std::size_t size() const { return jobs.size() - holes; }
  };
  struct UserBook {
    // Propagation: the user's groups by estimate (ids into groups_); those
    // with jobs (and some emptied since: dropped by the next re-prediction);
    // and the waiting jobs whose value was not their group's when they
    // arrived (a configuration change, an adopted plan): each re-prediction
    // predicts them one by one and moves them into their group. May hold
    // stale handles.
    std::unordered_map<Time, std::uint32_t> group_of;
    std::vector<std::uint32_t> active;
    std::vector<JobHandle> loose;
    Time last_estimate = 0;  // the group joined last (most arrivals repeat it)
    std::uint32_t last_group = kNoGroup;  // kNoGroup: none yet
    std::uint32_t jobs = 0;  // jobs of the user in the book
    Time last = 0;           // last arrival or end
  };
  struct Due {
    Time at;
    JobHandle h;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : h > o.h; }
  };

  // slot(): the job's slot with its plan synced to its group; raw_slot():
  // as stored (the group's value may be newer).
  Slot* slot(JobHandle h) { return const_cast<Slot*>(std::as_const(*this).slot(h)); }
  const Slot* slot(JobHandle h) const {
    const Slot* s = raw_slot(h);
    if (s != nullptr) sync(*s);
    return s;
  }
  Slot* raw_slot(JobHandle h) const {
    if (dense_ > 0) return h < dense_ && slots_[h].live ? &slots_[h] : nullptr;
    auto it = index_.find(h);
    return it == index_.end() ? nullptr : &slots_[it->second];
  }
  void sync(const Slot& s) const {
    if (s.group == kNoGroup) return;
    const Group& g = groups_[s.group];
    if (s.gver == g.ver) return;
    Slot& m = const_cast<Slot&>(s);  // slots_ is mutable: a cache of the group's value
    m.plan.prediction = g.value;
    m.plan.from_history = g.history;
    m.gver = g.ver;
  }
  void join_group(Slot& s, UserBook& u);  // a waiting job of followed user u (propagation)
  std::uint32_t group_for(UserBook& u, UserId user, Time estimate);  // made if new
  void leave_group(Slot& s);  // it starts, ends or waits anew: its plan synced first
  // The hot paths of the simulator (one call per job each) are inline.
  Slot& make_slot(JobHandle h) {
    if (h < dense_) {
      Slot& s = slots_[h];
      s.live = true;
      s.mark = sweep_mark_;
      s.stamp = 0;
      s.group = kNoGroup;
      ++live_;
      return s;
    }
    return make_sparse_slot(h);
  }
  Slot& make_sparse_slot(JobHandle h);
  void drop(Slot& s) {
    leave_group(s);
    touch_user(s.plan.user, 0, -1);
    --live_;
    s.live = false;
    if (dense_ == 0) drop_sparse(s.plan.handle);
  }
  void drop_sparse(JobHandle h);
  void schedule_expiry(const JobPlan& p) {
    if (cfg_.correction == CorrectionPolicy::None || !p.running) return;
    const Time at = p.start + p.prediction + opt_.grace;
    if (at >= p.known_end) return;  // it ends first (ends come before expiries)
    push_expiry(at, p.handle);
  }
  void push_expiry(Time at, JobHandle h);
  bool due_valid(const Due& d) const {
    const Slot* s = slot(d.h);
    return s != nullptr && s->plan.running &&
           s->plan.start + s->plan.prediction + opt_.grace == d.at;
  }
  void drop_stale_expiries() const;
  void rebuild_expiries();
  void rebuild_users(Time now);
  void repredict_waiting(UserId user, Time now);
  void tell_one_by_one(Time now);  // changes_ through prediction_changed()
  void touch_user(UserId user, Time now, int delta) {
    if (tracks_users() && user != kNoUser) follow_user(user, now, delta);
  }
  UserBook& follow_user(UserId user, Time now, int delta);
  bool tracks_users() const { return propagates() || cfg_.history_ttl >= 0; }
  bool propagates() const { return cfg_.predictor.propagation && cfg_.plan == PlanWith::Prediction; }

  SchedulerConfig cfg_;
  Options opt_;
  Predictor predictor_;
  Listener* listener_ = nullptr;

  mutable std::vector<Slot> slots_;  // mutable: sync() from const accessors
  std::size_t dense_ = 0;  // handles below it are slot indexes (dense_handles)
  std::unordered_map<JobHandle, std::uint32_t> index_;  // sparse handles -> slot
  std::vector<std::uint32_t> free_slots_;
  std::size_t live_ = 0;
  std::uint32_t sweep_mark_ = 0;
  std::uint32_t stamp_ = 0;

  mutable std::vector<Due> due_;  // min-heap, stale entries dropped lazily
  std::vector<JobHandle> deferred_;  // correct_expired()'s scratch
  std::vector<Listener::Changes> changes_;  // repredict_waiting()'s scratch
  std::vector<JobHandle> loose_changed_;    // the loose jobs it changed
  std::vector<Time> loose_old_;
  std::unordered_map<UserId, UserBook> users_;
  std::vector<Group> groups_;  // propagation (see Group)
  std::vector<std::uint32_t> free_groups_;
  Time next_eviction_ = 0;
  std::uint64_t learned_total_ = 0;
  bool history_changed_ = false;
};

}  // namespace easypp
