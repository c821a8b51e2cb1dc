// Planning with predictions inside slurmctld without any other part of it
// ever seeing them (no Slurm header here: unit and property tested with a
// fake job table, tests/unit/test_planning_ledger.cc).
//
// select_g_job_test(WILL_RUN) plans from the running jobs' end_time
// (normally start + time limit, the kill time). The plugin writes planning
// values (start + prediction) into end_time while it holds the job write
// lock, and puts the true values back before it releases or yields the locks
// and before every select_nodes(). Every write goes through one ledger (a
// stack: EndTimeSwap and probe scopes push, restore_to() pops), so leaked(),
// checked before every unlock and yield, can prove that nothing is left
// behind. time_limit is never written.
//
// `Jobs` is the job table: slurmctld's (SlurmJobs in slurm_cluster.h) or a
// test's. It provides
//   Record* find(std::uint32_t id) const;    // nullptr once the job is gone
// and Record has a `time_t end_time` and a `std::uint32_t job_id`.
#pragma once

#include <ctime>
#include <cstdint>
#include <vector>

#include "easypp/prediction_book.h"

namespace easypp::plugin {

template <class Jobs>
class PlanningLedger {
 public:
  using Record = std::remove_pointer_t<decltype(std::declval<const Jobs&>().find(0u))>;
  /// Position in the ledger: restore_to(mark) undoes every write after it.
  using Mark = std::size_t;

  explicit PlanningLedger(Jobs jobs = Jobs()) : jobs_(jobs) {}
  const Jobs& jobs() const { return jobs_; }

  Mark mark() const { return entries_.size(); }

  /// Write `value` into the job's end_time, remembering the previous value.
  void write(Record* job, time_t value) {
    if (job->end_time == value) return;
    entries_.push_back(Entry{job->job_id, job->end_time, value});
    job->end_time = value;
  }

  /// Undo writes after `mark`, newest first. A value that no longer equals
  /// what the plugin wrote (slurmctld changed it meanwhile) is left alone.
  void restore_to(Mark mark) {
    while (entries_.size() > mark) {
      const Entry e = entries_.back();
      entries_.pop_back();
      Record* job = jobs_.find(e.job_id);
      if (job != nullptr && job->end_time == e.written) job->end_time = e.before;
    }
  }

  /// How many planning values are still in job records (each job whose
  /// end_time equals a value the plugin wrote); the first one's id in
  /// *first. When none is left the ledger is emptied.
  std::size_t leaked(std::uint32_t* first = nullptr) {
    std::size_t left = 0;
    for (const Entry& e : entries_) {
      const Record* job = jobs_.find(e.job_id);
      if (job != nullptr && job->end_time == e.written) {
        if (left++ == 0 && first) *first = e.job_id;
      }
    }
    if (left == 0) entries_.clear();
    return left;
  }

 private:
  struct Entry {
    std::uint32_t job_id;
    time_t before;
    time_t written;
  };
  Jobs jobs_;
  std::vector<Entry> entries_;
};

/// The planning swap: apply() sets end_time := start + prediction for every
/// running job the book knows (start is the job's own start_time plus its
/// suspended time; predictions are corrected first, so this lies after now;
/// it is clamped to now + 1 when correction=none leaves it expired);
/// restore() and the destructor put the true values back.
/// `Jobs` also provides, for a Record: `static bool active(const Record&)`
/// (running or suspended, with an end_time) and
/// `static time_t start_of(const Record&)` (start_time + tot_sus_time).
template <class Jobs>
class EndTimeSwap {
 public:
  EndTimeSwap(PlanningLedger<Jobs>& ledger, const PredictionBook& book)
      : ledger_(ledger), book_(book) {}
  ~EndTimeSwap() { restore(); }
  EndTimeSwap(const EndTimeSwap&) = delete;
  EndTimeSwap& operator=(const EndTimeSwap&) = delete;

  void apply(time_t now) {
    if (applied_) restore();
    deferred_ = false;
    mark_ = ledger_.mark();
    applied_ = true;
    book_.for_each([&](const JobPlan& p) {
      if (!p.running) return;
      auto* job = ledger_.jobs().find(p.handle);
      if (job == nullptr || !Jobs::active(*job)) return;
      time_t planned = Jobs::start_of(*job) + time_t(p.prediction);
      if (planned <= now) planned = now + 1;  // correction=none: still expired
      ledger_.write(job, planned);
    });
  }
  /// apply(now) deferred to the next ensure(): after a start or a lock
  /// yield the planning values are needed again only by the next WILL_RUN
  /// probe that plans past now, not by the "fits now" tests in between, so
  /// a pass of S starts costs one re-application per probe sequence instead
  /// of S walks of the book.
  void apply_later(time_t now) {
    restore();
    deferred_ = true;
    deferred_now_ = now;
  }
  /// Apply now what apply_later() deferred (nothing if nothing is pending).
  /// Call before any ProbeScope is opened: the swap's writes must lie below
  /// the probe's mark in the ledger.
  void ensure() {
    if (deferred_) apply(deferred_now_);
  }
  void restore() {
    deferred_ = false;
    if (!applied_) return;
    ledger_.restore_to(mark_);
    applied_ = false;
  }
  bool applied() const { return applied_; }
  bool deferred() const { return deferred_; }

 private:
  PlanningLedger<Jobs>& ledger_;
  const PredictionBook& book_;
  typename PlanningLedger<Jobs>::Mark mark_ = 0;
  bool applied_ = false;
  bool deferred_ = false;
  time_t deferred_now_ = 0;
};

/// Temporary end_time values for one WILL_RUN probe, undone on destruction.
template <class Jobs>
class ProbeScope {
 public:
  explicit ProbeScope(PlanningLedger<Jobs>& l) : ledger_(l), mark_(l.mark()) {}
  ~ProbeScope() { ledger_.restore_to(mark_); }
  ProbeScope(const ProbeScope&) = delete;
  ProbeScope& operator=(const ProbeScope&) = delete;
  void set(typename PlanningLedger<Jobs>::Record* job, time_t value) { ledger_.write(job, value); }

 private:
  PlanningLedger<Jobs>& ledger_;
  typename PlanningLedger<Jobs>::Mark mark_;
};

}  // namespace easypp::plugin
