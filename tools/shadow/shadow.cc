#include "shadow/shadow.h"

#include <algorithm>
#include <set>

#include "easypp/sim/metrics.h"
#include "job_scan.h"

namespace easypp::shadow {

using plugin::JobFacts;

bool facts_at(const JobView& v, Time c, JobFacts* f) {
  if (v.submit > c) return false;
  *f = JobFacts{};
  f->id = v.id;
  f->user = v.uid;
  f->estimate = std::max<Time>(v.estimate, 1);
  f->het_component = v.het_component;
  if (v.phase == JobView::Phase::Finished && v.end > 0 && v.end <= c) {
    f->state = JobFacts::State::Finished;
    f->end = v.end;
    f->runtime = v.start > 0 ? std::max<Time>(v.end - v.start - v.suspended, 0) : 0;
    f->had_allocation = v.had_allocation && v.start > 0 && v.end > v.start;
  } else if (v.phase != JobView::Phase::Pending && v.start > 0 && v.start <= c) {
    f->state = JobFacts::State::Running;
    f->start = v.start + v.suspended;
  } else {
    f->state = JobFacts::State::Pending;
  }
  return true;
}

Time candidate_since(const JobView& v) {
  if (v.eligible <= 0) return 0;
  return v.eligible <= v.submit + kFirstLook ? v.submit : v.eligible;
}

bool candidate_at(const JobView& v, Time c) {
  JobFacts f;
  if (!facts_at(v, c, &f) || f.state != JobFacts::State::Pending) return false;
  if (v.phase == JobView::Phase::Pending && v.blocked) return false;
  const Time since = candidate_since(v);
  return since > 0 && since <= c;
}

double life_accuracy(const std::vector<std::pair<Time, Time>>& segments, Time from, Time end,
                     Time runtime) {
  if (segments.empty()) return 0;
  if (end <= from) return prediction_accuracy(segments.back().second, runtime);
  double sum = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Time a = std::max(segments[i].first, from);
    const Time b = std::min(i + 1 < segments.size() ? segments[i + 1].first : end, end);
    if (b > a) sum += prediction_accuracy(segments[i].second, runtime) * double(b - a);
  }
  return sum / double(end - from);
}

Shadow::Shadow(const plugin::PluginConfig& cfg)
    : cfg_(cfg), book_(cfg.sched, plugin::plugin_book_options()) {
  book_.set_listener(this);
}

void Shadow::configure(const plugin::PluginConfig& cfg) {
  cfg_ = cfg;
  book_.configure(cfg.sched);
}

void Shadow::warm_start(const plugin::SavedState& s, Time now) {
  book_.restore_history(s.rings, now);
  book_.set_learned_total(s.learned_jobs);
  watermark_ = std::max(watermark_, s.last_learned_end);
}

void Shadow::prediction_changed(const JobPlan&, Time, PlanChange why, Time) {
  if (why == PlanChange::Corrected) {
    ++n_.corrections;
    ++poll_corrections_;
  }
}

// The job's plan as the book has it now: its first prediction when it
// arrives, the value it started with, and a new segment when it changed.
void Shadow::note_plan(TrackedJob& t, Time c, PollResult* r) {
  const JobPlan* p = book_.find(t.view.id);
  if (p == nullptr) return;
  if (t.arrival < 0) {
    t.arrival = c;
    t.first_prediction = p->prediction;
    t.from_history = p->from_history;
    t.segments.assign(1, {c, p->prediction});
    ++r->arrived;
  } else if (t.segments.empty() || t.segments.back().second != p->prediction) {
    if (!t.segments.empty() && t.segments.back().first == c) t.segments.back().second = p->prediction;
    else t.segments.emplace_back(c, p->prediction);
  }
  if (p->running && t.start_prediction < 0) t.start_prediction = p->prediction;
}

// A finished job the scan is about to learn (or forget): judged, or counted
// among the jobs that cannot be.
void Shadow::settle(TrackedJob& t, const JobFacts& f, Time c, PollResult* r) {
  const JobPlan* p = book_.find(f.id);
  const bool ran = (p != nullptr && p->running) || (f.had_allocation && f.runtime > 0);
  if (!ran || f.runtime < 1) {
    ++n_.never_ran;
    return;
  }
  if (f.het_component) {
    ++n_.het_components;
    return;
  }
  if (p == nullptr || t.arrival < 0) {
    ++n_.unseen;
    return;
  }
  // Predicted at the first cycle, but it existed before: the plugin would
  // have predicted it earlier, from a history the shadow did not see.
  if (t.arrival <= first_ && t.view.submit < first_) {
    ++n_.before_start;
    return;
  }
  note_plan(t, c, r);
  Record rec;
  rec.id = t.view.id;
  rec.name = t.view.name;
  rec.user = t.view.user;
  rec.uid = t.view.uid;
  rec.partition = t.view.partition;
  rec.state = t.view.state;
  rec.submit = t.view.submit;
  rec.arrival = t.arrival;
  rec.start = t.view.start;
  rec.end = f.end;
  rec.estimate = f.estimate;
  rec.runtime = f.runtime;
  rec.first_prediction = t.first_prediction;
  rec.start_prediction = t.start_prediction >= 0 ? t.start_prediction : p->prediction;
  rec.final_prediction = p->prediction;
  rec.corrections = p->corr.count;
  rec.from_history = t.from_history;
  rec.accuracy = life_accuracy(t.segments, t.arrival, f.end, f.runtime);
  rec.limit_accuracy = prediction_accuracy(f.estimate, f.runtime);
  records_.push_back(std::move(rec));
  ++r->judged;
}

// One cycle of the plugin at time c (agent.cc run_cycle: scan_jobs, then
// build_queues' observe_waiting).
void Shadow::cycle(Time c, PollResult* r) {
  ++n_.cycles;
  ++r->cycles;
  const std::uint64_t learned_before = book_.learned_total();
  {
    plugin::JobScan scan(book_, c, watermark_);
    for (auto& [id, t] : jobs_) {
      JobFacts f;
      if (!facts_at(t.view, c, &f)) continue;
      if (f.state == JobFacts::State::Finished && f.end < c && f.end > watermark_)
        settle(t, f, c, r);
      scan.observe(f);
      if (f.state == JobFacts::State::Running) note_plan(t, c, r);
    }
    watermark_ = scan.finish();
  }
  book_.correct_expired(c);
  for (auto& [id, t] : jobs_) {
    if (!candidate_at(t.view, c)) continue;
    book_.observe_waiting(id, t.view.uid, std::max<Time>(t.view.estimate, 1), candidate_since(t.view),
                          c);
  }
  // Corrections and re-predictions change planning values: new segments.
  for (auto& [id, t] : jobs_) note_plan(t, c, r);
  const std::uint64_t learned = book_.learned_total() - learned_before;
  n_.learned += learned;
  r->learned += std::uint32_t(learned);
}

PollResult Shadow::poll(const std::vector<JobView>& views, Time now) {
  PollResult r;
  poll_corrections_ = 0;
  const bool first_poll = first_ == 0;
  if (first_poll) {
    first_ = now;
    last_ = now - 1;
  }
  if (now <= last_) now = last_ + 1;  // the clock went back: keep time moving forward
  ++n_.polls;
  // Merge: the latest view of each job; events inside (last_, now].
  std::set<Time> events;
  auto event = [&](Time t) {
    if (t > last_ && t < now) events.insert(t);
  };
  std::set<std::uint32_t> seen;
  for (const JobView& v : views) {
    if (v.id == 0) continue;
    // Ended and learned (or passed over) before: nothing left to do.
    if (v.phase == JobView::Phase::Finished && v.end > 0 && v.end <= watermark_ &&
        jobs_.count(v.id) == 0)
      continue;
    seen.insert(v.id);
    TrackedJob& t = jobs_[v.id];
    t.view = v;
    event(v.submit);
    event(candidate_since(v));
    if (v.phase != JobView::Phase::Pending) event(v.start);
    if (v.phase == JobView::Phase::Finished && v.end > 0) event(v.end + 1);
  }
  // Gone from slurmctld without an end anywhere: the plugin's sweep forgets
  // them (they are not observed by the next cycle's scan).
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (seen.count(it->first) == 0) {
      ++n_.vanished;
      ++r.vanished;
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  // The cycles: at every event and every correction the timer asks for.
  Time t = last_;
  while (t < now) {
    Time next = now;
    auto e = events.upper_bound(t);
    if (e != events.end() && *e < next) next = *e;
    const Time due = book_.next_expiry();
    if (due > t && due < next) next = due;
    cycle(next, &r);
    t = next;
  }
  last_ = now;
  // Finished jobs whose end the last cycle processed are done.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const JobView& v = it->second.view;
    const bool done = v.phase == JobView::Phase::Finished && v.end > 0 && v.end < now;
    if (done) {
      it = jobs_.erase(it);
      continue;
    }
    JobFacts f;
    if (facts_at(v, now, &f)) {
      if (f.state == JobFacts::State::Running) ++r.running;
      else if (f.state == JobFacts::State::Pending) ++r.pending;
    }
    ++it;
  }
  r.corrections = poll_corrections_;
  return r;
}

plugin::SavedState Shadow::plugin_state() const {
  plugin::SavedState s;
  s.last_learned_end = watermark_;
  s.learned_jobs = book_.learned_total();
  s.window = cfg_.sched.predictor.window;
  s.rings = book_.predictor().snapshot();
  return s;
}

ShadowState Shadow::save() const {
  ShadowState s;
  s.settings = cfg_.settings();
  s.first = first_;
  s.last = last_;
  s.watermark = watermark_;
  s.learned_total = book_.learned_total();
  s.counters = n_;
  s.rings = book_.predictor().snapshot();
  book_.for_each([&](const JobPlan& p) { s.plans.push_back(p); });
  std::sort(s.plans.begin(), s.plans.end(),
            [](const JobPlan& a, const JobPlan& b) { return a.handle < b.handle; });
  for (const auto& kv : jobs_) s.jobs.push_back(kv.second);
  s.records = records_;
  return s;
}

void Shadow::restore(const ShadowState& s, Time now) {
  book_.restore_history(s.rings, now);
  book_.set_learned_total(s.learned_total);
  for (const JobPlan& p : s.plans) book_.adopt(p, now);
  book_.clear_history_changed();
  jobs_.clear();
  for (const TrackedJob& t : s.jobs) jobs_[t.view.id] = t;
  records_ = s.records;
  n_ = s.counters;
  first_ = s.first;
  last_ = s.last;
  watermark_ = s.watermark;
}

}  // namespace easypp::shadow
