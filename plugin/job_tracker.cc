#include "job_tracker.h"

#include <algorithm>

namespace easypp::plugin {

namespace {

// A job running far beyond its estimate gets the beyond-estimate increments
// (1 min, 15 min, 30 min, 1 h, ...): 64 of them reach far past any real
// runtime, so the loop below always ends.
constexpr int kMaxCorrectionsPerCycle = 64;

bool same_predictor(const PredictorConfig& a, const PredictorConfig& b) {
  return a.window == b.window && a.metric == b.metric && a.type == b.type &&
         a.fullness == b.fullness && a.fallback == b.fallback;
}

}  // namespace

JobTracker::JobTracker(const SchedulerConfig& cfg) : cfg_(cfg), predictor_(cfg.predictor) {}

void JobTracker::configure(const SchedulerConfig& cfg) {
  const bool rebuild = !same_predictor(cfg_.predictor, cfg.predictor);
  cfg_ = cfg;
  if (rebuild) {
    const std::vector<Predictor::Ring> rings = predictor_.snapshot();
    predictor_ = Predictor(cfg_.predictor);
    predictor_.restore(rings);
  }
}

Time JobTracker::plan_value(UserId user, Time estimate, bool* from_history) const {
  estimate = std::max<Time>(estimate, 1);
  if (cfg_.plan == PlanWith::Estimate) {
    if (from_history) *from_history = false;
    return estimate;
  }
  if (from_history) *from_history = predictor_.has_history_for(user, estimate);
  return predictor_.predict(user, estimate);
}

Time JobTracker::fresh(TrackedJob& j) {
  auto v = history_version_.find(j.user);
  j.history_version = v == history_version_.end() ? 0 : v->second;
  j.prediction = plan_value(j.user, j.estimate, &j.from_history);
  return j.prediction;
}

TrackedJob JobTracker::first_sight(std::uint32_t id, UserId user, Time estimate) {
  TrackedJob j;
  j.job_id = id;
  j.user = user;
  j.estimate = estimate;
  fresh(j);
  j.first_prediction = j.prediction;
  return j;
}

TrackedJob& JobTracker::pending(std::uint32_t id, UserId user, Time estimate,
                                std::uint64_t cycle) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.running || it->second.user != user ||
      it->second.estimate != estimate) {
    // First sight, back to pending after a requeue, or the time limit was
    // changed (scontrol update): a new job as far as planning goes.
    TrackedJob j = first_sight(id, user, estimate);
    j.seen = cycle;
    auto& slot = jobs_[id];
    slot = j;
    return slot;
  }
  TrackedJob& j = it->second;
  j.seen = cycle;
  if (cfg_.predictor.propagation && cfg_.plan == PlanWith::Prediction) {
    auto v = history_version_.find(user);
    const std::uint64_t now_v = v == history_version_.end() ? 0 : v->second;
    if (now_v != j.history_version) fresh(j);
  }
  return j;
}

void JobTracker::touch(std::uint32_t id, std::uint64_t cycle) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) it->second.seen = cycle;
}

TrackedJob& JobTracker::running(std::uint32_t id, UserId user, Time estimate, Time start,
                                std::uint64_t cycle) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    it = jobs_.emplace(id, first_sight(id, user, estimate)).first;
  }
  TrackedJob& j = it->second;
  if (j.estimate != estimate) {
    // The time limit of a running job was changed: the kill time moved, the
    // prediction stays (a correction may now use the new estimate).
    j.estimate = estimate;
  }
  j.running = true;
  j.seen_running = true;
  j.start = start;
  j.seen = cycle;
  return j;
}

void JobTracker::started(std::uint32_t pending_id, std::uint32_t running_id, Time start,
                         std::uint64_t cycle) {
  auto it = jobs_.find(pending_id);
  if (it == jobs_.end()) return;
  TrackedJob j = it->second;  // copy: the meta record of an array stays pending
  j.job_id = running_id;
  j.running = true;
  j.seen_running = true;
  j.start = start;
  j.seen = cycle;
  jobs_[running_id] = j;
}

std::uint32_t JobTracker::correct_expired(Time now, std::vector<CorrectionEvent>* out) {
  std::uint32_t n = 0;
  for (auto& kv : jobs_) {
    TrackedJob& j = kv.second;
    if (!j.running) continue;
    for (int i = 0; i < kMaxCorrectionsPerCycle && j.start + j.prediction + kGrace <= now; ++i) {
      const Time old_p = j.prediction;
      const Time p = correct_prediction(cfg_.correction, old_p, j.estimate, j.corr);
      if (p <= old_p) break;  // correction=none: the prediction stays expired
      j.prediction = p;
      ++n;
      if (out) out->push_back(CorrectionEvent{j.job_id, old_p, p, j.corr.count});
    }
  }
  return n;
}

Time JobTracker::next_expiry(std::uint32_t* job) const {
  Time best = kNever;
  if (cfg_.correction == CorrectionPolicy::None) return best;
  for (const auto& kv : jobs_) {
    const TrackedJob& j = kv.second;
    if (!j.running) continue;
    const Time end = j.start + j.prediction + kGrace;
    if (end < best) {
      best = end;
      if (job) *job = j.job_id;
    }
  }
  return best;
}

bool JobTracker::learn(std::uint32_t id, UserId user, Time runtime, Time estimate) {
  jobs_.erase(id);
  if (runtime <= 0) return false;
  predictor_.record(user, runtime, std::max<Time>(estimate, 1));
  ++history_version_[user];
  ++learned_total_;
  dirty_ = true;
  return true;
}

bool JobTracker::seen_running(std::uint32_t id) const {
  auto it = jobs_.find(id);
  return it != jobs_.end() && it->second.seen_running;
}

std::size_t JobTracker::sweep(std::uint64_t cycle) {
  std::size_t n = 0;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.seen != cycle) {
      it = jobs_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

const TrackedJob* JobTracker::find(std::uint32_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void JobTracker::restore_history(const std::vector<Predictor::Ring>& rings) {
  predictor_.restore(rings);
  for (const auto& r : rings) ++history_version_[r.user];
}

}  // namespace easypp::plugin
