#include "easypp/prediction_book.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>

namespace easypp {

namespace {

// A job running far beyond its estimate gets the beyond-estimate increments
// (1 min, 15 min, 30 min, 1 h, ...): 64 of them reach far past any real
// runtime, so a late caller catches up in one call and the loop always ends.
constexpr int kMaxCorrectionsPerCall = 64;

}  // namespace

PredictionBook::PredictionBook(const SchedulerConfig& cfg) : PredictionBook(cfg, Options{}) {}

PredictionBook::PredictionBook(const SchedulerConfig& cfg, Options opt)
    : cfg_(cfg), opt_(opt), predictor_(cfg.predictor) {
  slots_.resize(opt_.dense_handles);
  dense_ = opt_.dense_handles;
}

void PredictionBook::configure(const SchedulerConfig& cfg) {
  const bool rebuild = !cfg_.predictor.same_predictions_as(cfg.predictor);
  cfg_ = cfg;
  if (rebuild) {
    const std::vector<Predictor::Ring> rings = predictor_.snapshot();
    predictor_ = Predictor(cfg_.predictor);
    predictor_.restore(rings);
  }
  rebuild_expiries();  // the correction policy may have changed
  // Propagation or the history's lifetime may have been switched on: follow
  // the users again (a user new to it starts idle from the book's latest
  // event).
  Time latest = 0;
  for_each([&](const JobPlan& p) {
    latest = std::max({latest, p.start, p.since < kNever ? p.since : Time(0)});
  });
  for (const auto& u : users_) latest = std::max(latest, u.second.last);
  rebuild_users(latest);
}

// --- slots ---------------------------------------------------------------------------

PredictionBook::Slot& PredictionBook::make_sparse_slot(JobHandle h) {
  std::uint32_t i;
  if (dense_ > 0) {  // a handle beyond the announced range
    slots_.resize(std::size_t(h) + 1);
    dense_ = slots_.size();
    i = h;
  } else if (!free_slots_.empty()) {
    i = free_slots_.back();
    free_slots_.pop_back();
    index_[h] = i;
  } else {
    i = std::uint32_t(slots_.size());
    slots_.emplace_back();
    index_[h] = i;
  }
  Slot& s = slots_[i];
  s = Slot{};
  s.live = true;
  s.mark = sweep_mark_;
  ++live_;
  return s;
}

void PredictionBook::drop_sparse(JobHandle h) {
  auto it = index_.find(h);
  free_slots_.push_back(it->second);
  index_.erase(it);
}

// --- planning values -------------------------------------------------------------------

Time PredictionBook::plan_value(UserId user, Time estimate, bool* from_history,
                                Time known_runtime) const {
  bool history = false;
  Time p = 0;
  switch (cfg_.plan) {
    case PlanWith::Estimate:
      if (cfg_.estimate_factor == 1.0) p = std::max<Time>(estimate, 1);
      else p = std::max<Time>(Time(std::llround(double(estimate) * cfg_.estimate_factor)), 1);
      break;
    case PlanWith::Prediction:
      p = predictor_.predict(user, estimate, &history);
      break;
    case PlanWith::Runtime:  // the simulator's "perfect": it knows the future
      p = std::max<Time>(known_runtime >= 0 ? known_runtime : estimate, 1);
      break;
  }
  if (from_history) *from_history = history;
  return p;
}

const JobPlan& PredictionBook::arrive(JobHandle h, UserId user, Time estimate, Time since,
                                      Time now, Time known_runtime) {
  if (Slot* old = slot(h)) drop(*old);  // it waits anew
  Slot& s = make_slot(h);
  JobPlan& p = s.plan;
  bool from_history = false;
  const Time value = plan_value(user, estimate, &from_history, known_runtime);
  p = JobPlan{h, user, estimate, value, value, since, kNever, -1, CorrectionState{}, kNever, false,
              from_history};
  if (tracks_users() && user != kNoUser) {
    UserBook& u = follow_user(user, now, +1);
    if (propagates()) join_group(s, u);
    if (cfg_.history_ttl >= 0 && now >= next_eviction_) evict_idle(now);
  }
  return s.plan;
}

void PredictionBook::start_as(JobHandle h, JobHandle as, Time start) {
  if (as == h) return this->start(h, start);
  const Slot* s = slot(h);
  if (s == nullptr) return;
  // An array task split off its meta record, which keeps waiting.
  const JobPlan copy = s->plan;
  forget(as);
  Slot& t = make_slot(as);  // may move the slots: `s` is stale from here
  t.plan = copy;
  t.plan.handle = as;
  touch_user(copy.user, start, +1);
  this->start(as, start);
}

// --- corrections -------------------------------------------------------------------------

void PredictionBook::push_expiry(Time at, JobHandle h) {
  due_.push_back(Due{at, h});
  std::push_heap(due_.begin(), due_.end(), std::greater<Due>());
}


void PredictionBook::rebuild_expiries() {
  due_.clear();
  for_each([&](const JobPlan& p) {
    const Time at = p.start + p.prediction + opt_.grace;
    if (cfg_.correction != CorrectionPolicy::None && p.running && at < p.known_end)
      due_.push_back(Due{at, p.handle});
  });
  std::make_heap(due_.begin(), due_.end(), std::greater<Due>());
}

// Entries of jobs that ended, or whose prediction or start moved since, are
// left in the heap and dropped when they reach its top.
void PredictionBook::drop_stale_expiries() const {
  while (!due_.empty() && !due_valid(due_.front())) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<Due>());
    due_.pop_back();
  }
}

std::uint32_t PredictionBook::correct_expired(Time now) {
  std::uint32_t n = 0;
  JobHandle h = 0;
  while (next_expiry(&h) <= now) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<Due>());
    due_.pop_back();
    JobPlan& p = slot(h)->plan;
    for (int i = 0; i < kMaxCorrectionsPerCall && p.start + p.prediction + opt_.grace <= now; ++i) {
      const Time old_p = p.prediction;
      const Time np = correct_prediction(cfg_.correction, old_p, p.estimate, p.corr);
      if (np <= old_p) break;  // correction=none: the prediction stays expired
      p.prediction = np;
      ++n;
      if (listener_) listener_->prediction_changed(p, old_p, PlanChange::Corrected, now);
    }
    // Still due after the cap (absurdly late): due again at the next call,
    // not in this one, so every call ends.
    if (p.start + p.prediction + opt_.grace <= now) deferred_.push_back(h);
    else schedule_expiry(p);
  }
  for (JobHandle d : deferred_) schedule_expiry(slot(d)->plan);
  deferred_.clear();
  return n;
}

// --- the end of a job, history and propagation ------------------------------------------

bool PredictionBook::finish(JobHandle h, UserId user, Time estimate, Time runtime, Time now,
                            bool completed) {
  forget(h);
  const PredictorConfig& pc = cfg_.predictor;
  if (runtime < opt_.min_learned_runtime || user == kNoUser) return false;
  if (cfg_.plan != PlanWith::Prediction && !opt_.always_learn) return false;
  if (runtime < pc.learn_min_runtime || (pc.learn_completed_only && !completed)) return false;
  predictor_.record(user, runtime, estimate);
  ++learned_total_;
  history_changed_ = true;
  touch_user(user, now, 0);
  if (propagates()) repredict_waiting(user, now);
  if (cfg_.history_ttl >= 0 && now >= next_eviction_) evict_idle(now);
  return true;
}

void PredictionBook::repredict_waiting(UserId user, Time now) {
  auto it = users_.find(user);
  if (it == users_.end()) return;
  UserBook& u = it->second;
  // The changes are gathered, then told at once when the listener takes
  // them so (Listener::predictions_changed), else one by one. Users keep
  // thousands of jobs queued (RICC): a group's change is one record, and
  // its jobs' slots are not touched here (they take the group's value
  // when next looked at, sync()).
  const bool gather = listener_ != nullptr;
  changes_.clear();
  // The groups with jobs (a user's past estimates are many, its waiting
  // jobs often few): those emptied since are dropped here.
  std::size_t keep = 0;
  for (std::size_t i = 0; i < u.active.size(); ++i) {
    const std::uint32_t id = u.active[i];
    Group& g = groups_[id];
    if (g.size() == 0) {
      g.active = false;
      continue;
    }
    u.active[keep++] = id;
    bool history = false;
    const Time v = plan_value(user, g.estimate, &history);
    if (v == g.value && history == g.history) continue;
    const Time old = g.value;
    g.value = v;
    g.history = history;
    ++g.ver;
    if (v != old && gather) changes_.push_back(Listener::Changes{g.jobs.data(), g.jobs.size(), old, v, id});
  }
  u.active.resize(keep);
  // The loose jobs, one by one, into their groups (whose values are now
  // current: each joins; no group's jobs move meanwhile).
  if (!u.loose.empty()) {
    ++stamp_;
    std::vector<JobHandle> loose;
    loose.swap(u.loose);
    loose_changed_.clear();
    loose_old_.clear();
    Time last_estimate = 0, last_value = 0;
    bool last_history = false, have_last = false;
    for (JobHandle h : loose) {
      Slot* s = raw_slot(h);
      if (s == nullptr || s->plan.running || s->plan.user != user || s->group != kNoGroup ||
          s->stamp == stamp_)
        continue;
      s->stamp = stamp_;  // listed twice (it arrived again): predicted once
      JobPlan& p = s->plan;
      if (!have_last || p.estimate != last_estimate) {
        have_last = true;
        last_estimate = p.estimate;
        last_value = plan_value(user, p.estimate, &last_history);
      }
      p.from_history = last_history;
      const Time old_p = p.prediction;
      p.prediction = last_value;
      if (last_value != old_p && gather) {
        loose_changed_.push_back(h);
        loose_old_.push_back(old_p);
      }
    }
    // Into their groups once told (joining may move a group's jobs).
    for (std::size_t i = 0; i < loose_changed_.size(); ++i) {
      const JobPlan& p = raw_slot(loose_changed_[i])->plan;
      changes_.push_back(
          Listener::Changes{&loose_changed_[i], 1, loose_old_[i], p.prediction, kNoGroup});
    }
    if (gather && !changes_.empty() && !listener_->predictions_changed(changes_, now))
      tell_one_by_one(now);
    changes_.clear();
    for (JobHandle h : loose) {
      Slot* s = raw_slot(h);
      if (s != nullptr && s->stamp == stamp_ && s->group == kNoGroup) join_group(*s, u);
    }
    return;
  }
  if (gather && !changes_.empty() && !listener_->predictions_changed(changes_, now))
    tell_one_by_one(now);
}

void PredictionBook::tell_one_by_one(Time now) {
  for (const Listener::Changes& c : changes_)
    for (std::size_t i = 0; i < c.count; ++i)
      if (c.jobs[i] != kHole)
        listener_->prediction_changed(slot(c.jobs[i])->plan, c.old_prediction,
                                      PlanChange::Repredicted, now);
}

std::uint32_t PredictionBook::group_for(UserBook& u, UserId user, Time estimate) {
  auto found = u.group_of.try_emplace(estimate, 0);
  if (!found.second) return found.first->second;
  std::uint32_t id;
  if (!free_groups_.empty()) {
    id = free_groups_.back();
    free_groups_.pop_back();
  } else {
    id = std::uint32_t(groups_.size());
    groups_.emplace_back();
  }
  Group& g = groups_[id];
  g.user = user;
  g.estimate = estimate;
  g.jobs.clear();
  g.holes = 0;
  g.active = false;
  found.first->second = id;
  return id;
}

void PredictionBook::join_group(Slot& s, UserBook& u) {
  const JobPlan& p = s.plan;
  std::uint32_t id;
  if (u.last_group != kNoGroup && p.estimate == u.last_estimate) {
    id = u.last_group;
  } else {
    id = group_for(u, p.user, p.estimate);
    u.last_estimate = p.estimate;
    u.last_group = id;
  }
  Group& g = groups_[id];
  if (g.size() == 0) {
    g.jobs.clear();
    g.holes = 0;
    g.value = p.prediction;
    g.history = p.from_history;
    if (!g.active) {
      g.active = true;
      u.active.push_back(id);
    }
  } else if (g.value != p.prediction || g.history != p.from_history) {
    u.loose.push_back(p.handle);  // made under another configuration, or adopted
    return;
  }
  s.group = id;
  s.gpos = std::uint32_t(g.jobs.size());
  s.gver = g.ver;
  g.jobs.push_back(p.handle);
  if (listener_ != nullptr) listener_->joined_group(p.handle, id);
}

void PredictionBook::leave_group(Slot& s) {
  if (s.group == kNoGroup) return;
  sync(s);
  Group& g = groups_[s.group];
  s.group = kNoGroup;
  if (s.gpos + 1 == g.jobs.size()) {
    g.jobs.pop_back();
    while (!g.jobs.empty() && g.jobs.back() == kHole) {
      g.jobs.pop_back();
      --g.holes;
    }
    return;
  }
  g.jobs[s.gpos] = kHole;
  ++g.holes;
  if (g.holes < 32 || g.holes * 2 < g.jobs.size()) return;
  std::size_t n = 0;  // compact, keeping the order
  for (JobHandle h : g.jobs)
    if (h != kHole) {
      raw_slot(h)->gpos = std::uint32_t(n);
      g.jobs[n++] = h;
    }
  g.jobs.resize(n);
  g.holes = 0;
}

PredictionBook::UserBook& PredictionBook::follow_user(UserId user, Time now, int delta) {
  UserBook& u = users_[user];
  if (delta < 0 && u.jobs > 0) --u.jobs;
  if (delta > 0) ++u.jobs;
  u.last = std::max(u.last, now);
  return u;
}

// Users the book follows: every user with history or a job. A user known
// before keeps its idle clock; a new one starts it at `now`.
void PredictionBook::rebuild_users(Time now) {
  std::unordered_map<UserId, UserBook> old;
  old.swap(users_);
  // Every job out of its group, its plan synced: the groups are made anew.
  for (Slot& s : slots_)
    if (s.live && s.group != kNoGroup) {
      sync(s);
      s.group = kNoGroup;
    }
  groups_.clear();
  free_groups_.clear();
  if (!tracks_users()) return;
  auto follow = [&](UserId user) -> UserBook& {
    auto it = users_.find(user);
    if (it != users_.end()) return it->second;
    auto o = old.find(user);
    UserBook& u = users_[user];
    u.last = o != old.end() ? o->second.last : now;
    return u;
  };
  for (const Predictor::Ring& r : predictor_.snapshot())
    if (r.user != kNoUser) follow(r.user);
  for (Slot& s : slots_) {
    if (!s.live || s.plan.user == kNoUser) continue;
    UserBook& u = follow(s.plan.user);
    ++u.jobs;
    if (propagates() && !s.plan.running) join_group(s, u);
  }
}

std::size_t PredictionBook::evict_idle(Time now) {
  if (cfg_.history_ttl < 0) return 0;
  next_eviction_ = now + std::max<Time>(cfg_.history_ttl / 8, 60);
  std::size_t n = 0;
  for (auto it = users_.begin(); it != users_.end();) {
    if (it->second.jobs == 0 && now - it->second.last >= cfg_.history_ttl) {
      for (const auto& e : it->second.group_of) {  // empty: the user has no job
        assert(groups_[e.second].size() == 0);
        groups_[e.second].jobs.clear();
        groups_[e.second].holes = 0;
        free_groups_.push_back(e.second);
      }
      predictor_.forget_user(it->first);
      it = users_.erase(it);
      ++n;
      history_changed_ = true;
    } else {
      ++it;
    }
  }
  return n;
}

void PredictionBook::restore_history(const std::vector<Predictor::Ring>& rings, Time now) {
  predictor_.restore(rings);
  rebuild_users(now);
  // With propagation, waiting jobs are predicted from the restored history.
  if (propagates())
    for (const auto& u : users_) repredict_waiting(u.first, now);
}

// --- observation ---------------------------------------------------------------------------

const JobPlan& PredictionBook::observe_waiting(JobHandle h, UserId user, Time estimate, Time since,
                                               Time now) {
  Slot* s = slot(h);
  if (s == nullptr || s->plan.running || s->plan.user != user || s->plan.estimate != estimate)
    return arrive(h, user, estimate, since, now);  // new, requeued, or its limit changed
  s->mark = sweep_mark_;
  s->plan.since = since;
  return s->plan;
}

const JobPlan& PredictionBook::observe_running(JobHandle h, UserId user, Time estimate,
                                               Time start, Time now) {
  if (slot(h) == nullptr) arrive(h, user, estimate, kNever, now);  // started before we saw it
  Slot* s = slot(h);
  s->mark = sweep_mark_;
  if (!s->plan.running) leave_group(*s);
  JobPlan& p = s->plan;
  p.estimate = estimate;  // a raised limit moves the kill time; the prediction stays
  if (!p.running || p.start != start) {
    p.running = true;
    p.start = start;
    schedule_expiry(p);
  }
  return p;
}

const JobPlan& PredictionBook::adopt(const JobPlan& plan, Time now) {
  if (Slot* old = slot(plan.handle)) drop(*old);
  Slot& s = make_slot(plan.handle);
  s.plan = plan;
  if (tracks_users() && plan.user != kNoUser) {
    UserBook& u = follow_user(plan.user, now, +1);
    if (propagates() && !plan.running) join_group(s, u);
  }
  schedule_expiry(s.plan);
  return s.plan;
}

void PredictionBook::keep(JobHandle h) {
  if (Slot* s = slot(h)) s->mark = sweep_mark_;
}

std::size_t PredictionBook::sweep() {
  std::vector<JobHandle> gone;
  for_each([&](const JobPlan& p) {
    if (slot(p.handle)->mark != sweep_mark_) gone.push_back(p.handle);
  });
  for (JobHandle h : gone) forget(h);
  return gone.size();
}

Time PredictionBook::end_bound(JobHandle h, Time now, Time room) const {
  const Slot* s = slot(h);
  if (s == nullptr) return now;
  return cfg_.policy.end_bound(now, s->plan.prediction, s->plan.estimate, room);
}

}  // namespace easypp
