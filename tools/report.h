// Reports of easypp-sim: the comparison table and the JSON document.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp::report {

struct Run {
  const RunResult* result;
  Metrics metrics;
  bool has_without_flurries = false;
  Metrics without_flurries;
};

/// Human-readable: input summary, comparison table, categories, predictability.
void print_text(std::ostream& os, const Workload& w, double read_seconds,
                const std::vector<Run>& runs);

/// One JSON document (jansson). Returns false if writing failed.
bool print_json(std::ostream& os, const Workload& w, double read_seconds,
                const std::vector<Run>& runs);

/// Write the simulated schedule as SWF (records from the workload, wait
/// times filled in). Throws std::runtime_error on I/O failure.
void write_swf(const std::string& path, const Workload& w, const RunResult& r);

}  // namespace easypp::report
