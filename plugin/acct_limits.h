// Accounting limits (QOS and association limits) as sched/backfill applies
// them, for sched/easypp's queue and starts. What is remembered from cycle
// to cycle and what is logged is LimitSkips' (limit_skips.h); this asks
// slurmctld:
//
//   - limit_verdict(), for each queued job before the passes: refused by
//     acct_policy_job_runnable_pre_select(), or by
//     acct_policy_job_runnable_post_select() with the TRES it requests
//     (job->tres_req_cnt: MaxTRESPerUser, GrpTRES, MaxTRESPerJob... are
//     judged there): skipped, never queued; QOS NoReserve, or a priority
//     below the QOS's MinPrioThreshold: queued without a reservation;
//     refused by select_nodes() in the last LimitSkips::kCarrySeconds:
//     start now only;
//   - note_start_refusal(), after select_nodes(): ESLURM_ACCOUNTING_POLICY
//     (a limit on what the selected nodes bring) skips the job for the rest
//     of the cycle (SlurmCluster::prepare() then refuses it: no reservation,
//     no node held).
// Each skip is logged once, when it begins (DebugFlags=Backfill):
//   sched/easypp: JobId=N skipped: held back by an accounting limit (WHERE: REASON)
//   sched/easypp: JobId=N gets no reservation (QOS NoReserve | priority P below MinPrioThreshold T)
//
// assoc_limit_stop is not honoured here (jobs held by a limit are always
// skipped); Slurm's main scheduler still applies it.
#pragma once

#include <cstdint>

#include "limit_skips.h"
#include "slurm_api.h"

namespace easypp::plugin {

enum class LimitVerdict {
  kCandidate,  ///< an EASY++ candidate like any other
  kSkip,       ///< held back by a limit now: not queued in this cycle
  kNoReserve,  ///< may start now (backfill), never reserved for
  kNowOnly,    ///< refused by select_nodes() lately: start now only, never the head
};

/// What job (queued in `part` at `priority`) is in this cycle's passes.
/// Sets job->part_ptr to `part` (as sched/backfill and prepare() do).
/// Scheduling locks held; the association manager lock not held.
LimitVerdict limit_verdict(job_record_t* job, part_record_t* part, std::uint32_t priority,
                           LimitSkips* skips);

/// After select_nodes() returned rc for job: ESLURM_ACCOUNTING_POLICY
/// records (and logs) the job as skipped for the rest of the cycle. True if
/// it did.
bool note_start_refusal(const job_record_t* job, int rc, LimitSkips* skips);

}  // namespace easypp::plugin
