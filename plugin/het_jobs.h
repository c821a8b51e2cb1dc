// Heterogeneous jobs under sched/easypp: never in an EASY++ pass (never the
// head, never reserved for); after the passes, a pending het job is started
// when all its components fit now around this cycle's reservations, all of
// them or none, as sched/backfill does (docs/plugin-internals.md 5.2).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "slurm_cluster.h"

namespace easypp::plugin {

/// A pending heterogeneous job as the cycle found it in Slurm's queue.
struct HetCandidate {
  struct Component {
    std::uint32_t job_id = 0;
    /// The partitions it is queued in, in Slurm's order, with its priority
    /// there. Valid for the cycle: a yield during which partitions changed
    /// ends it (cycle_may_continue()).
    std::vector<std::pair<part_record_t*, std::uint32_t>> parts;
  };
  std::uint32_t het_job_id = 0;       ///< the leader's job id
  std::vector<Component> components;  ///< the pending components, leader first
  Time prediction = 0;  ///< the het job's prediction: the max over its components
  Time estimate = 0;    ///< the max of the components' time limits
};

enum class HetStart {
  kStarted,     ///< every component started
  kNoFit,       ///< some component does not fit now: nothing was started
  kCompleting,  ///< fits only on nodes still completing: nothing started, retry soon
  kUndone,      ///< a component failed to start after others had: those were deallocated
};

/// Test every pending component of `h` with WILL_RUN + TEST_NOW_ONLY on its
/// usable nodes, minus the nodes of this cycle's reservations it could
/// delay (its end bound, by the one rule, PolicyConfig::end_bound, past a
/// head's shadow), minus the nodes chosen for the components tested before
/// it (components go on distinct nodes, as under sched/backfill). If and
/// only if all fit, start them in that order. A component failing to start
/// after others started: the started ones are deallocated and put back to
/// pending exactly as sched/backfill's _het_job_kill_now() does (eligible
/// again after the credential lifetime).
HetStart start_het_job(CycleEnv& env, SlurmCluster& cluster, const HetCandidate& h);

/// Builds with --enable-debug-checks only: slurmctld's environment has
/// EASYPP_DEBUG_HET_FAIL set, so the last component of every het job is
/// offered no node when it is started (select_nodes() really fails) and the
/// partial start is undone. For the integration test of the undo path;
/// always false in other builds.
bool het_fault_injection();

}  // namespace easypp::plugin
