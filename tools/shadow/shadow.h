// easypp-shadow's engine, without Slurm, libcurl or files: it follows a
// cluster that another scheduler (sched/backfill) runs and keeps, for every
// job, the prediction sched/easypp would have had, through the plugin's own
// pieces: a PredictionBook with the plugin's options (job_scan.h's
// plugin_book_options()) and settings (plugin_config.h), fed by JobScan
// exactly as the plugin's cycle feeds it.
//
// A poll hands over what one look at the cluster showed (slurmctld's job
// list, plus accounting's record of each finished job slurmctld no longer
// lists). The plugin would have run a cycle at every event in between; the
// engine replays those cycles in time order from the previous poll up to
// now, at every submission, eligibility, start, end (+1 s: the plugin learns
// a job in the first cycle after its end) and at every correction the
// book's timer asks for (PredictionBook::next_expiry). Each cycle is the
// plugin's:
//
//   JobScan over every job known (pending: kept; running: observe_running;
//   finished: learned once, from a het job's leader only; gone: swept),
//   then correct_expired(now), then observe_waiting for every pending job
//   that is a scheduling candidate (eligible, not held, not blocked by a
//   dependency or a limit).
//
// So the history, each prediction and each correction are what sched/easypp
// would have had, up to what a poll cannot see: a job's state between two
// polls is rebuilt from its times (a job held or blocked now counts as
// blocked since the previous poll; suspensions are known from accounting
// only).
//
// Each finished job becomes a Record: its first prediction (when it arrived),
// the one it started with, the final one (after corrections), its limit and
// runtime, the time-weighted accuracy of its predictions over its life
// (libsim's prediction_accuracy, the metrics' definition). Jobs that
// arrived before the shadow started following are fed to the book (their
// runtimes are history) but not judged.
//
// The whole engine saves to and restores from a ShadowState (a restart
// continues where it stopped: PredictionBook::adopt puts the plans back),
// and gives the plugin's SavedState (the warm start for the switch).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "easypp/prediction_book.h"
#include "easypp/types.h"
#include "job_scan.h"
#include "plugin_config.h"
#include "plugin_state.h"

namespace easypp::shadow {

/// One job as one poll sees it: slurmctld's job list (REST /slurm/.../jobs or
/// squeue --json), or accounting (/slurmdb/.../jobs or sacct --json) for a
/// job slurmctld no longer lists. Times are Unix seconds; 0: not yet, unknown.
struct JobView {
  enum class Phase { Pending, Running, Finished };
  std::uint32_t id = 0;
  std::string name;       ///< as Slurm shows it: "123", "123_4", "200+1"
  UserId uid = kNoUser;
  std::string user, partition;
  std::string state;      ///< Slurm's state name: PENDING, RUNNING, COMPLETED, TIMEOUT, ...
  Phase phase = Phase::Pending;
  Time submit = 0;
  Time eligible = 0;      ///< when it became eligible (its begin time); 0: not (held, dependency)
  Time start = 0;         ///< Running, Finished: when it started; 0: never
  Time end = 0;           ///< Finished: when it ended
  Time suspended = 0;     ///< seconds spent suspended (known from accounting only)
  Time estimate = 1;      ///< seconds: the time limit, the kill time (>= 1)
  bool blocked = false;   ///< Pending: not a scheduling candidate now (held, dependency, limits)
  bool had_allocation = false;  ///< Finished: it was given nodes
  bool het_component = false;   ///< a heterogeneous job's component other than its leader
  bool from_accounting = false;
};

/// One finished job, judged.
struct Record {
  std::uint32_t id = 0;
  std::string name, user, partition, state;
  UserId uid = kNoUser;
  Time submit = 0, arrival = 0, start = 0, end = 0;
  Time estimate = 0;          ///< seconds: the time limit
  Time runtime = 0;           ///< seconds
  Time first_prediction = 0;  ///< made when it arrived (became a candidate)
  Time start_prediction = 0;  ///< in effect when it started
  Time final_prediction = 0;  ///< in effect when it ended (after corrections)
  std::uint32_t corrections = 0;
  bool from_history = false;  ///< the first prediction came from the user's history
  double accuracy = 0;        ///< its predictions over [arrival, end], time-weighted, 0..1
  double limit_accuracy = 0;  ///< its time limit's, 0..1
};

/// What became of the jobs the shadow saw.
struct Counters {
  std::uint64_t polls = 0;          ///< polls that reached the cluster
  std::uint64_t failed_polls = 0;   ///< polls that did not (logged, retried next interval)
  std::uint64_t cycles = 0;         ///< plugin cycles replayed
  std::uint64_t before_start = 0;   ///< finished, but arrived before the shadow followed: not judged
  std::uint64_t never_ran = 0;      ///< finished without running (cancelled while pending, 0 s)
  std::uint64_t het_components = 0; ///< finished het components (the job is judged by its leader)
  std::uint64_t unseen = 0;         ///< first seen after their end: nothing was predicted
  std::uint64_t vanished = 0;       ///< gone from slurmctld without a record of their end
  std::uint64_t corrections = 0;    ///< every correction that would have fired
  std::uint64_t learned = 0;        ///< runtimes learned by this shadow
};

/// A job the shadow follows (pending, running, or just finished).
struct TrackedJob {
  JobView view;                ///< the latest observation
  Time arrival = -1;           ///< when its prediction was first made (-1: not yet)
  Time first_prediction = 0;
  bool from_history = false;
  Time start_prediction = -1;  ///< the planning value it started with (-1: not started)
  /// The planning values in effect: (since, prediction), in time order.
  std::vector<std::pair<Time, Time>> segments;
};

/// Everything a restart needs (written by shadow_file.h).
struct ShadowState {
  static constexpr int kFormatVersion = 1;
  std::vector<std::pair<std::string, std::string>> settings;  ///< PluginConfig::settings()
  std::string source;            ///< where the polls read (informational)
  std::string plugin_state;      ///< the plugin state file this shadow writes ("" none)
  Time first = 0;                ///< the first poll: jobs that arrived before are not judged
  Time last = 0;                 ///< the last cycle replayed
  Time watermark = 0;            ///< jobs that ended at or before it were learned
  std::uint64_t learned_total = 0;  ///< the book's count (with a warm start's)
  Counters counters;
  std::vector<Predictor::Ring> rings;
  std::vector<JobPlan> plans;
  std::vector<TrackedJob> jobs;
  std::vector<Record> records;
};

/// What one poll did.
struct PollResult {
  std::uint32_t cycles = 0;
  std::uint32_t arrived = 0;      ///< jobs that got their first prediction
  std::uint32_t judged = 0;       ///< records added
  std::uint32_t corrections = 0;
  std::uint32_t learned = 0;
  std::uint32_t vanished = 0;
  std::size_t pending = 0, running = 0;  ///< at the poll
};

class Shadow : private PredictionBook::Listener {
 public:
  explicit Shadow(const plugin::PluginConfig& cfg);
  Shadow(const Shadow&) = delete;
  Shadow& operator=(const Shadow&) = delete;

  /// New settings (a restart with changed SchedulerParameters): the book
  /// keeps its history (PredictionBook::configure).
  void configure(const plugin::PluginConfig& cfg);
  const plugin::PluginConfig& config() const { return cfg_; }

  /// Start from the plugin's history (its state file, or easypp-import
  /// --state's): as the plugin loads it at start (agent.cc load_history).
  void warm_start(const plugin::SavedState& s, Time now);

  /// One look at the cluster at `now`: every job slurmctld lists, and
  /// accounting's finished jobs it no longer lists (one view per job id; a
  /// later view of an id replaces an earlier one). Replays the plugin's
  /// cycles from the previous poll to `now`.
  PollResult poll(const std::vector<JobView>& jobs, Time now);
  /// A poll that could not reach the cluster (counted, nothing replayed).
  void poll_failed() { ++n_.failed_polls; }

  const std::vector<Record>& records() const { return records_; }
  const Counters& counters() const { return n_; }
  const PredictionBook& book() const { return book_; }
  const std::map<std::uint32_t, TrackedJob>& jobs() const { return jobs_; }
  Time first() const { return first_; }
  Time last() const { return last_; }
  Time watermark() const { return watermark_; }

  /// The plugin's state file content: the learned history, the watermark,
  /// as agent.cc's save_history writes it.
  plugin::SavedState plugin_state() const;
  /// The history changed since clear_history_changed().
  bool history_changed() const { return book_.history_changed(); }
  void clear_history_changed() { book_.clear_history_changed(); }

  ShadowState save() const;
  /// Continue from a saved state (the settings are this Shadow's, not the
  /// saved ones). `now`: users restored count as active from it.
  void restore(const ShadowState& s, Time now);

 private:
  void prediction_changed(const JobPlan& plan, Time old_prediction, PlanChange why,
                          Time now) override;
  void cycle(Time c, PollResult* r);
  void note_plan(TrackedJob& t, Time c, PollResult* r);
  void settle(TrackedJob& t, const plugin::JobFacts& f, Time c, PollResult* r);

  plugin::PluginConfig cfg_;
  PredictionBook book_;
  std::map<std::uint32_t, TrackedJob> jobs_;
  std::vector<Record> records_;
  Counters n_;
  Time first_ = 0;
  Time last_ = 0;
  Time watermark_ = 0;
  std::uint32_t poll_corrections_ = 0;
};

/// The JobFacts of view `v` at time `c` (what slurmctld's job list said
/// then), as agent.cc's facts_of() fills them; false if the job did not
/// exist yet at `c`.
bool facts_at(const JobView& v, Time c, plugin::JobFacts* f);
/// When the job became a scheduling candidate. Slurm stamps a job's begin
/// time when a scheduler first looks at it, which under load can be seconds
/// after its submission, and the moment differs from one poll to the next:
/// an eligible time within kFirstLook seconds of the submission is that
/// first look, and the job is a candidate from its submission (as under
/// sched/easypp, whose cycle a submission wakes). A later one is a real
/// delay (--begin, a hold released, a dependency satisfied).
constexpr Time kFirstLook = 5;
Time candidate_since(const JobView& v);
/// Was the job a scheduling candidate at `c` (the plugin's build_queues()
/// would have made or refreshed its prediction)?
bool candidate_at(const JobView& v, Time c);
/// Accuracy of the predictions in effect over [from, end] for `runtime`
/// (segments as in TrackedJob), time-weighted; libsim's definition.
double life_accuracy(const std::vector<std::pair<Time, Time>>& segments, Time from, Time end,
                     Time runtime);

}  // namespace easypp::shadow
