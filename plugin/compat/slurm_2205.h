// Slurm 22.05: the release-specific part of the plugin's Slurm API (included
// by slurm_api.h only; see there). The plugin is written against the newest
// supported release's names; this header maps them onto 22.05.
#pragma once

#define operator slurm_operator  // see slurm_api.h
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
#ifdef __cplusplus
extern "C" {
#endif
#include "src/common/power.h"
#include "src/common/select.h"
#include "src/common/slurm_cred.h"
#include "src/common/slurm_mcs.h"
#include "src/slurmctld/srun_comm.h"
#ifdef __cplusplus
}
#endif
#pragma GCC diagnostic pop
#undef operator

/* The scheduling lock set, sched/backfill's: configuration READ, jobs WRITE,
 * nodes WRITE, partitions READ, federation READ. */
#define EASYPP_SCHED_LOCKS \
  { .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK }

/* Start the agent thread (joinable) and join it. */
#define EASYPP_THREAD_CREATE(id, func, arg) slurm_thread_create((id), func, (arg))
#define EASYPP_THREAD_JOIN(id) pthread_join((id), NULL)

#ifdef __cplusplus

// List types: 22.05 has only the pointer typedefs List and ListIterator;
// later releases name the structs (list_t, list_itr_t) and drop the typedefs.
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
// 22.05 names the job details struct only as `struct job_details`.
typedef struct job_details job_details_t;

namespace easypp::plugin {

/// What advanced reservations exclude inside the nodes job_test_resv()
/// returns, owned: in 22.05 a core bitmap. out() is job_test_resv()'s
/// output argument, get() select_g_job_test()'s input.
class ResvExc {
 public:
  ResvExc() = default;
  ~ResvExc() { FREE_NULL_BITMAP(core_); }
  ResvExc(const ResvExc&) = delete;
  ResvExc& operator=(const ResvExc&) = delete;
  bitstr_t** out() {
    FREE_NULL_BITMAP(core_);
    return &core_;
  }
  bitstr_t* get() const { return core_; }

 private:
  bitstr_t* core_ = nullptr;
};

}  // namespace easypp::plugin

/// select_g_job_test(SELECT_MODE_WILL_RUN) without preemption: the earliest
/// start of job on bitmap (in job->start_time), nodes selected in bitmap.
inline int easypp_will_run(job_record_t* job, bitstr_t* bitmap, uint32_t min_nodes,
                           uint32_t max_nodes, uint32_t req_nodes, bitstr_t* resv_exc) {
  return select_g_job_test(job, bitmap, min_nodes, max_nodes, req_nodes, SELECT_MODE_WILL_RUN,
                           nullptr, nullptr, resv_exc);
}

/// select_nodes() for a real start (not a test, not at submission).
inline int easypp_select_nodes(job_record_t* job, uint32_t scheduler_type) {
  return select_nodes(job, false, nullptr, nullptr, false, scheduler_type);
}

/// Count a job's submission against its association limits again; the
/// association manager lock is not held.
inline void easypp_acct_policy_add_job_submit(job_record_t* job) {
  acct_policy_add_job_submit(job);
}

/// The power plugin's notice of a job start (the power layer exists up to 23.02).
inline void easypp_power_job_start(job_record_t* job) { power_g_job_start(job); }

/// The job credential's lifetime in seconds (AuthInfo=cred_expire=, 120 by
/// default); 1200 if it cannot be read, as in Slurm.
inline int easypp_cred_expiry_window() {
  int window = 1200;
  (void)slurm_cred_ctx_get(slurmctld_config.cred_ctx, SLURM_CRED_OPT_EXPIRY_WINDOW, &window);
  return window;
}

/// Set a job's state (22.05 has no job_state_set()).
inline void easypp_job_state_set(job_record_t* job, uint32_t state) { job->job_state = state; }

/// The text of a job's state reason (job_reason_string() until 23.11).
inline const char* easypp_job_reason_string(uint32_t reason) {
  return job_reason_string(static_cast<job_state_reason>(reason));
}

/// sdiag's count of why backfill cycles ended: 22.05 has none.
inline void easypp_count_bf_exit(easypp::plugin::BfExit) {}

/// A cycle starts (true) or has ended (false): sdiag's bf_active, set
/// without a lock as this plugin always did on this release (not under
/// check_bf_running_lock as 25.05+ do). Called without the slurmctld locks.
inline void easypp_bf_active(bool active) { slurmctld_diag_stats.bf_active = active ? 1 : 0; }

/// slurmctld is shutting down: start no cycle, end a running one at its
/// next yield.
inline bool easypp_slurmctld_stopping() { return slurmctld_config.shutdown_time != 0; }

/// Nothing to do right after taking the scheduling locks (slurmctld
/// validates the reservations itself before 25.05).
inline void easypp_cycle_locked() {}

/// Tell srun (salloc) of the allocation of a started job without a batch script.
inline void easypp_srun_allocate(job_record_t* job) { srun_allocate(job); }

#endif  // __cplusplus
