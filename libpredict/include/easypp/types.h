// Basic types shared by every part of the scheduling core.
#pragma once

#include <cstdint>
#include <limits>

namespace easypp {

/// Seconds. Simulated time in the harness, Unix time inside Slurm.
using Time = std::int64_t;

/// "Never": the shadow time of a job that cannot fit even when every running
/// job has ended (wider than its partition, say).
constexpr Time kNever = std::numeric_limits<Time>::max() / 4;

/// Opaque job handle chosen by the adapter: an index into the simulator's job
/// table, a Slurm job id in the plugin.
using JobHandle = std::uint32_t;

/// User identity (SWF field 12, Slurm uid). Negative SWF users map to kNoUser.
using UserId = std::int64_t;
constexpr UserId kNoUser = -1;

}  // namespace easypp
