// The cycle's first phase, without Slurm headers: what slurmctld's job list
// says about each job, translated into calls on the PredictionBook (the
// owner of every job's prediction, libpredict's prediction_book.h).
//
//   running or suspended  -> observe_running (a job started before the
//                            plugin saw it gets its prediction now)
//   pending               -> keep (its prediction is made or refreshed when
//                            the queue phase finds it schedulable)
//   finished              -> learned once (if it ran; a heterogeneous job
//                            from its leader only; under learn=completed
//                            only if it completed, and only runtimes of
//                            learn-min-runtime or more), then forgotten
//                            and, if it ran, its bounded slowdown recorded
//                            (adaptive selective thresholds, selective.h)
//   gone from the list    -> forgotten by the sweep at the end of the scan,
//                            so it no longer drives the correction timer
//
// agent.cc fills a JobFacts from each job_record_t; the unit tests fill them
// by hand (tests/unit/test_job_scan.cc).
#pragma once

#include <cstdint>

#include "easypp/prediction_book.h"
#include "easypp/selective.h"
#include "easypp/types.h"

namespace easypp::plugin {

/// The book's options in slurmctld: a correction falls due 1 s after the
/// predicted end (Slurm keeps whole seconds and learns of an end a little
/// late), runtimes of 0 s (jobs that never ran) are not learned, job ids are
/// sparse, and runtimes are learned even under plan=estimate. Whatever
/// follows a cluster as the plugin would (easypp-shadow) uses exactly these.
PredictionBook::Options plugin_book_options();

/// What the scan needs to know about one job of slurmctld's job list.
struct JobFacts {
  enum class State { Pending, Running, Finished, Other };
  std::uint32_t id = 0;
  UserId user = kNoUser;
  Time estimate = 1;   ///< seconds: the time limit (>= 1)
  State state = State::Other;
  Time start = 0;      ///< running: start_time + tot_sus_time; finished: start_time
  Time end = 0;        ///< finished: end_time
  Time submit = 0;     ///< finished: submit_time (its wait is start - submit)
  std::int64_t width = 1;  ///< finished: CPUs allocated
  Time runtime = 0;    ///< finished: end - start - suspended time
  /// Finished: it had an allocation and ran (a job cancelled while pending
  /// has start == end and no nodes).
  bool had_allocation = false;
  /// Finished: it ended normally (Slurm's COMPLETED, exit code 0), not
  /// failed, timed out or cancelled (learn=completed learns only these).
  bool completed = true;
  /// A heterogeneous job's component other than its leader.
  bool het_component = false;
};

/// One scan of the job list.
class JobScan {
 public:
  /// `watermark`: jobs that ended at or before it were learned already (it
  /// survives restarts in the state file).
  JobScan(PredictionBook& book, Time now, Time watermark);

  /// Also record the bounded slowdown of every finished job that ran (once,
  /// as it is learned: wait start - submit, runtime end - start, width its
  /// CPUs) into `means`, in `s`'s categories (sel-short, sel-narrow).
  void record_slowdowns(SlowdownMeans* means, const Selective& s) {
    means_ = means;
    sel_ = s;
  }

  void observe(const JobFacts& job);
  /// Forget every job the scan did not see; returns the new watermark.
  Time finish();

  std::uint32_t running() const { return running_; }
  std::uint32_t learned() const { return learned_; }
  std::size_t forgotten() const { return forgotten_; }
  /// Finished jobs whose slowdown was recorded in this scan.
  std::uint32_t recorded() const { return recorded_; }

 private:
  PredictionBook& book_;
  Time now_;
  Time watermark_;
  std::uint32_t running_ = 0;
  std::uint32_t learned_ = 0;
  std::size_t forgotten_ = 0;
  SlowdownMeans* means_ = nullptr;
  Selective sel_;
  std::uint32_t recorded_ = 0;
};

}  // namespace easypp::plugin
