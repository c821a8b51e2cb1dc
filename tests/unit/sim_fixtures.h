// Small helpers for building hand-written workloads in tests.
#pragma once

#include <string>
#include <vector>

#include "easypp/policy.h"
#include "easypp/sim/generator.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp::testing {

struct J {
  Time submit;
  Time runtime;
  Time estimate;
  std::int64_t size;
  UserId user = 1;
  bool completed = true;  ///< SWF status 1 (false: failed or cancelled)
};

inline Workload workload(std::int64_t procs, const std::vector<J>& jobs) {
  Workload w;
  w.source = "test";
  w.procs = procs;
  std::uint64_t id = 1;
  for (const J& j : jobs) {
    Job x;
    x.id = id++;
    x.submit = j.submit;
    x.runtime = j.runtime;
    x.estimate = j.estimate;
    x.size = j.size;
    x.user = j.user;
    x.completed = j.completed;
    w.jobs.push_back(x);
  }
  w.report.jobs = w.jobs.size();
  return w;
}

/// The built-in synthetic generator's workload.
inline Workload synthetic(std::uint64_t seed, std::uint32_t jobs, std::int64_t procs,
                          std::uint32_t users, double load) {
  GeneratorConfig g;
  g.seed = seed;
  g.jobs = jobs;
  g.procs = procs;
  g.users = users;
  g.load = load;
  return generate_workload(g, WorkloadOptions{});
}

inline SchedulerConfig sched(const std::string& spec) {
  std::string err;
  auto c = parse_scheduler_spec(spec, {}, &err);
  if (!c) throw std::runtime_error(err);
  return *c;
}

inline std::vector<Time> starts(const RunResult& r) {
  std::vector<Time> s;
  for (const auto& o : r.jobs) s.push_back(o.start);
  return s;
}

}  // namespace easypp::testing
