// Command-line options of easypp-sim.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "easypp/sim/generator.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"
#include "easypp/policy.h"
#include "easypp/sim/workload.h"

namespace easypp::cli {

struct Options {
  std::string workload;                  ///< FILE, "-" or "synthetic[:k=v,...]"
  std::vector<std::string> schedulers{"easy", "easy++"};
  bool schedulers_given = false;         ///< --scheduler was given
  KnobList knobs;  ///< global knob overrides
  WorkloadOptions wl;
  SimOptions sim;  ///< the event loop's conventions (--pass-per-event, ...)
  MetricsOptions metrics;
  /// --fairness (1) / --no-fairness (0); -1: when a scheduler compared uses
  /// selective reservations (fairness_wanted()).
  int fairness = -1;
  bool flurries = false;                 ///< report with and without flurry jobs
  bool json = false;
  bool quiet = false;
  std::string output_swf;
  ShakeOptions shake;        ///< shake.copies == 0: no shaking
  std::string report_dir;    ///< --report DIR ("" : none)
  std::size_t top_users = 10;  ///< per-user rows in the table
  bool parse_only = false;     ///< --parse-only: read the workload, replay nothing
  bool csv = false;            ///< --csv: one row of figures per scheduler
  std::string scheduler_file;  ///< --scheduler-file: more specs, one a line
  unsigned threads = 0;        ///< --threads (0: the cores available)
};

/// Parse argv. On --help/--version prints and exits 0; on a bad option or
/// value prints one line "easypp-sim: ..." to stderr and exits 2.
Options parse(int argc, char** argv);

/// The scheduler configurations: preset, then global knobs, then the spec's
/// own knobs. Exits 2 on error.
std::vector<SchedulerConfig> schedulers(const Options& o);

/// Whether the report computes the fair-start fairness measure for the
/// configurations `cfgs`: as --fairness / --no-fairness say, else when one of
/// them uses selective reservations (the measure is that paper's, and it
/// costs a FCFS replay of the queue ahead of every arrival).
bool fairness_wanted(const Options& o, const std::vector<SchedulerConfig>& cfgs);

[[noreturn]] void usage_error(const std::string& msg);

}  // namespace easypp::cli
