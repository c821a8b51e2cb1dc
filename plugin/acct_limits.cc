// Accounting limits as sched/backfill applies them (see acct_limits.h).
#include "acct_limits.h"

#include <string>

#include "slurm_cluster.h"

namespace easypp::plugin {

namespace {

void log_skip(const job_record_t* job, LimitSkips::Why why) {
  const char* reason = easypp_job_reason_string(job->state_reason);
  log_flag(BACKFILL, "sched/easypp: %s skipped: held back by an accounting limit (%s: %s)",
           job_str(job).c_str(), LimitSkips::name(why), reason ? reason : "?");
}

// The job's QOS flags and MinPrioThreshold (0: none), as sched/backfill
// reads them (acct_policy_get_prio_thresh(): the job's QOS, else its
// partition's). No lock taken without a QOS (no accounting).
void qos_of(job_record_t* job, std::uint32_t* flags, std::uint32_t* prio_thresh) {
  *flags = *prio_thresh = 0;
  if (job->qos_ptr == nullptr && (job->part_ptr == nullptr || job->part_ptr->qos_ptr == nullptr))
    return;
  assoc_mgr_lock_t qos_read = {NO_LOCK, NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
  assoc_mgr_lock(&qos_read);
  *flags = job->qos_ptr != nullptr ? job->qos_ptr->flags : 0;
  *prio_thresh = acct_policy_get_prio_thresh(job, true);
  assoc_mgr_unlock(&qos_read);
}

// Refused by a limit now, before node selection? (The TRES it requests:
// at least what any selection gives it.)
bool refused_before_selection(job_record_t* job, LimitSkips::Why* why) {
  if (!acct_policy_job_runnable_pre_select(job, false)) {
    *why = LimitSkips::Why::kPreSelect;
    return true;
  }
  if (job->tres_req_cnt != nullptr &&
      !acct_policy_job_runnable_post_select(job, job->tres_req_cnt, false)) {
    *why = LimitSkips::Why::kPostSelect;
    return true;
  }
  return false;
}

}  // namespace

LimitVerdict limit_verdict(job_record_t* job, part_record_t* part, std::uint32_t priority,
                           LimitSkips* skips) {
  job->part_ptr = part;
  LimitSkips::Why why;
  if (refused_before_selection(job, &why)) {
    if (skips->skip(job->job_id, why)) log_skip(job, why);
    return LimitVerdict::kSkip;
  }
  if (skips->start_now_only(job->job_id)) return LimitVerdict::kNowOnly;
  std::uint32_t flags = 0, thresh = 0;
  qos_of(job, &flags, &thresh);
  const bool no_reserve = (flags & QOS_FLAG_NO_RESERVE) != 0;
  if (!no_reserve && (thresh == 0 || priority >= thresh)) return LimitVerdict::kCandidate;
  if (skips->skip(job->job_id, LimitSkips::Why::kNoReserve)) {
    if (no_reserve)
      log_flag(BACKFILL, "sched/easypp: %s gets no reservation (QOS NoReserve)",
               job_str(job).c_str());
    else
      log_flag(BACKFILL, "sched/easypp: %s gets no reservation (priority %u below "
               "MinPrioThreshold %u)", job_str(job).c_str(), priority, thresh);
  }
  return LimitVerdict::kNoReserve;
}

bool note_start_refusal(const job_record_t* job, int rc, LimitSkips* skips) {
  if (rc != ESLURM_ACCOUNTING_POLICY || skips == nullptr) return false;
  if (skips->skip(job->job_id, LimitSkips::Why::kSelectNodes))
    log_skip(job, LimitSkips::Why::kSelectNodes);
  return true;
}

}  // namespace easypp::plugin
