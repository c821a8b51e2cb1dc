// A seeded synthetic workload generator: the project's own default workload
// (the archive's logs may not be shipped). See docs/synthetic-workload.md for
// the model. Same seed and config, same output, on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "easypp/sim/swf.h"
#include "easypp/sim/workload.h"

namespace easypp {

struct GeneratorConfig {
  std::uint64_t seed = 1;
  std::uint32_t jobs = 40000;
  std::int64_t procs = 128;
  std::uint32_t users = 150;
  double load = 0.8;          ///< target offered load
  Time max_estimate = 36 * 3600;  ///< the "partition maximum" time limit

  /// Empty if valid, else a one-line description of what is wrong.
  std::string validate() const;
  /// "synthetic:seed=1,jobs=40000,..." (parseable by parse_generator_spec).
  std::string describe() const;
};

/// Parse "key=value,key=value" (keys: seed, jobs, procs, users, load,
/// max-estimate). On error returns false and sets *error.
bool parse_generator_spec(std::string_view spec, GeneratorConfig& cfg, std::string* error);

/// Generate the records (sorted by submit time, job numbers 1..N) and a header
/// (MaxProcs, MaxRuntime, MaxJobs, a Note naming the generator and its config).
std::vector<swf::Record> generate_records(const GeneratorConfig& cfg, swf::Header* header);

/// Generate and convert in one step.
Workload generate_workload(const GeneratorConfig& cfg, const WorkloadOptions& opt);

}  // namespace easypp
