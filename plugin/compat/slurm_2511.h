// Slurm 25.11: the release-specific part of the plugin's Slurm API (included
// by slurm_api.h only; see there).
//
// Against 25.05: deallocate_nodes() returns whether the job is completed
// (sched/backfill ignores it, as the plugin does: nothing to change), and
// from 25.11.2 slurmctld's shutdown waits on check_bf_running_cond while
// slurmctld_diag_stats.bf_active is set, so clearing it is broadcast: a
// point-release condition in compat/slurm_2505.h, which holds everything
// else both releases share.
#pragma once

#include "slurm_2505.h"
