// Reports of easypp-sim: the comparison table and the JSON document.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <jansson.h>

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
};

/// Everything one easypp-sim call reports.
struct Report {
  const Workload* workload = nullptr;
  double read_seconds = 0;
  std::vector<Run> runs;
  const ShakeOptions* shake = nullptr;   ///< with the shaken copies, else null
  const ShakeResult* shaken = nullptr;   ///< metrics[s] belongs to runs[s]
  std::size_t top_users = 10;            ///< rows of the per-user table
};

/// Human-readable: input summary, comparison table, starvation, categories,
/// predictability, per-user view, and the shaken comparison.
void print_text(std::ostream& os, const Report& rep);

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
