// Reports of easypp-sim: the comparison table and the JSON document.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <jansson.h>

#include "easypp/sim/feedback.h"
#include "easypp/sim/improvement.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/series.h"
#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp::report {

struct Run {
  const RunResult* result;
  Metrics metrics;
  bool has_without_flurries = false;
  Metrics without_flurries;
  /// Per-job factors against the first run (every run but the first).
  bool has_improvement = false;
  Improvement improvement;
  /// A feedback replay's figures (closed_loop_report.cc).
  bool has_closed_loop = false;
  ClosedLoopMetrics closed_loop;
};

/// Everything one easypp-sim call reports.
struct Report {
  const Workload* workload = nullptr;
  double read_seconds = 0;
  std::vector<Run> runs;
  const ShakeOptions* shake = nullptr;   ///< with the shaken copies, else null
  const ShakeResult* shaken = nullptr;   ///< metrics[s] belongs to runs[s]
  std::size_t top_users = 10;            ///< rows of the per-user table
  const SimOptions* sim = nullptr;       ///< the event loop's conventions (null: defaults)
};

/// Human-readable: input summary, comparison table, starvation, categories,
/// predictability, per-user view, and the shaken comparison.
void print_text(std::ostream& os, const Report& rep);

/// The closed-loop section (feedback runs): throughput, session length,
/// per runtime class, and what became of the links of fields 17 and 18.
void print_closed_loop(std::ostream& os, const std::vector<Run>& runs);
json_t* closed_loop_json(const Run& r);
/// Shaken feedback runs (ShakeResult::closed_loop): the spread of the
/// closed-loop figures over the copies, in the table and in "shaken".
void print_closed_loop_shaken(std::ostream& os, const std::vector<Run>& runs, const ShakeResult& sr);
json_t* closed_loop_shaken_json(const ShakeResult& sr, std::size_t s);
/// The links of each shaken copy (the "shake" object's links_per_copy).
json_t* closed_loop_links_json(const ShakeResult& sr);

/// The JSON document (jansson; the caller owns it).
json_t* build_json(const Report& rep);

/// Prints build_json. Returns false if writing failed.
bool print_json(std::ostream& os, const Report& rep);

/// The figure data of one run, as JSON (for --report).
json_t* series_json(const RunSeries& s);

/// Write the simulated schedule as SWF (records from the workload, wait
/// times filled in). Throws std::runtime_error on I/O failure.
void write_swf(const std::string& path, const Workload& w, const RunResult& r);

}  // namespace easypp::report
