// A workload model fitted to a log: Krampe, Lepping and Sieben's hybrid
// Markov chain ("A Hybrid Markov Chain Modeling Architecture for Workload on
// Parallel Computers", TU Dortmund CI-246/08, 2008), plus a user layer so
// that per-user history predicts as it does on the log (their model has no
// users; EASY++ lives on them). See docs/markov-model.md.
//
// The paper's part:
//   - states: the size class 2^floor(log2 size) of each job;
//   - the transition matrix over consecutive jobs (relative frequencies);
//   - for every transition h -> i, the empirical distributions of the
//     interarrival time, the runtime and the estimate difference
//     (estimate - runtime) of the job arriving in state i, sampled
//     independently given the transition; estimate = runtime + difference,
//     redrawn while it is not positive. Transitions seen fewer than
//     min_samples times use the distributions pooled over all transitions
//     into i. Within a class, the size is drawn from the class's sizes as
//     logged (the paper keeps 2^k itself).
// The user layer (not in the paper), every choice a fitted frequency:
//   - a job *repeats* its user's previous job when it has the same size and
//     estimate; the repeat share per transition is fitted;
//   - a repeat goes to one of the users whose last job is in the job's
//     class (the most recent match_window of them), the one whose "level"
//     (the average of its last two runtimes, what the paper's predictor
//     would say) is nearest the drawn runtime divided by 2^rho, rho drawn
//     from the log's repeats; it keeps that user's size and estimate
//     (runtime beyond the estimate only as often as in the log's repeats);
//   - any other job goes to a new user as often as in the log, else to a
//     user chosen by recency: a rank drawn from the log's recency ranks,
//     then the best level match (rho of the log's non-repeats) within the
//     match_window users around that rank.
// Runtimes, sizes classes and interarrival times are always the chain's
// draws: the user layer only decides who submits a job (and, for repeats,
// its size within the class and its estimate).
//
// The model file is JSON (jansson), versioned, and validated on reading
// with file, line and field in every message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "easypp/sim/swf.h"
#include "easypp/sim/workload.h"
#include "easypp/types.h"

namespace easypp {

/// An empirical distribution as its quantile function: values[k] is the
/// quantile at probability k / (values.size() - 1) (non-decreasing); a draw
/// interpolates linearly between them. A single value is a constant.
struct Quantiles {
  std::vector<double> values;
  /// The quantile at u in [0, 1].
  double at(double u) const;
};

struct MarkovState {
  std::int64_t size_class = 1;  ///< 2^k: sizes size_class .. 2*size_class-1
  std::uint64_t jobs = 0;       ///< jobs in this state
  std::uint64_t repeats = 0;    ///< of which repeats of their user's previous job
  /// Sizes logged in this class and how many jobs had each.
  std::vector<std::pair<std::int64_t, std::uint64_t>> sizes;
  /// Pooled over all transitions into this state.
  Quantiles interarrival, runtime, estimate_delta;
};

struct MarkovTransition {
  std::size_t from = 0, to = 0;  ///< state indexes
  std::uint64_t jobs = 0;        ///< times seen
  std::uint64_t repeats = 0;     ///< of which the job repeated its user's previous one
  Quantiles interarrival, runtime, estimate_delta;
};

struct MarkovUsers {
  std::uint64_t users = 0;      ///< distinct users in the log
  double new_user_share = 0;    ///< non-repeats that were a user's first job
  double overrun_share = 0;     ///< repeats that ran beyond their estimate
  /// log2(runtime / level) of repeats and of the other jobs of known users,
  /// level = the user's last runtime, or the rounded-up average of the last
  /// two (at least 1 s).
  Quantiles repeat_ratio, fresh_ratio;
  /// Non-repeats of known users: how many had rank r in the recency order
  /// of all users (0: the user of the job just before).
  std::vector<std::uint64_t> recency_ranks;
};

struct MarkovModel {
  static constexpr int kFormatVersion = 1;
  // where it came from
  std::string source;            ///< the log's file name
  std::uint64_t source_jobs = 0;
  std::string fitted_by;         ///< "easypp-gen VERSION"
  // the machine
  std::int64_t procs = 0;
  Time max_runtime = 0;          ///< SWF MaxRuntime of the generated logs
  // generation parameters
  std::uint64_t jobs = 0;            ///< default number of jobs to generate
  std::uint64_t burn_in = 100000;    ///< chain steps discarded first (the paper's)
  std::uint32_t thin = 1;            ///< keep every thin-th state (the paper: 10)
  std::uint64_t min_samples = 20;    ///< fewer: the target state's pooled distributions
  std::uint32_t match_window = 64;   ///< users compared when choosing one
  std::vector<MarkovState> states;   ///< by size class, ascending
  std::vector<MarkovTransition> transitions;  ///< by (from, to)
  MarkovUsers users;
};

struct MarkovFitOptions {
  std::size_t quantile_points = 201;  ///< stored per distribution (all values if fewer)
  std::uint64_t min_samples = 20;
  std::uint32_t match_window = 64;
};

/// Fit to a workload (jobs in submit order). Throws std::invalid_argument
/// for fewer than two jobs.
MarkovModel fit_markov_model(const Workload& w, const MarkovFitOptions& opt = {});

/// Bad model file: what() is one line, "FILE:LINE: field PATH: problem"
/// (or "FILE: problem" when there is no line).
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The model as its JSON document (ends with a newline).
std::string markov_model_json(const MarkovModel& m);
/// Parse and validate a model document; `name` names it in errors.
MarkovModel parse_markov_model(const std::string& text, const std::string& name);
/// Read a model file (at most 256 MB). Throws ModelError.
MarkovModel read_markov_model(const std::string& path);
/// A model file could not be written; `created`: the failure came after the
/// file was created (a write error), not from creating it.
struct ModelWriteError : std::runtime_error {
  ModelWriteError(const std::string& what, bool created) : std::runtime_error(what), created(created) {}
  bool created;
};
/// Write a model file: a temporary file beside it, then a rename (nothing
/// half-written is ever left under `path`); "-" is standard output. Throws
/// ModelWriteError.
void write_markov_model(const std::string& path, const MarkovModel& m);

struct ModelGenConfig {
  std::uint64_t seed = 1;
  std::uint64_t jobs = 0;   ///< 0: the model's
  std::uint32_t thin = 0;   ///< 0: the model's
};

/// "FILE[:key=value,...]" (keys seed, jobs, thin): the form easypp-sim's
/// --workload model:... takes after "model:". The options part is the text
/// after the last ':' when it consists of key=value items with known keys.
bool parse_model_spec(std::string_view spec, std::string* path, ModelGenConfig& cfg,
                      std::string* error);

/// Generate records (sorted by submit time, numbered 1..N) and a header.
std::vector<swf::Record> generate_from_model(const MarkovModel& m, const ModelGenConfig& cfg,
                                             swf::Header* header);

/// Generate and convert; `source` names the workload ("model:FILE:seed=1").
Workload generate_model_workload(const MarkovModel& m, const ModelGenConfig& cfg,
                                 const std::string& source, const WorkloadOptions& opt);

}  // namespace easypp
