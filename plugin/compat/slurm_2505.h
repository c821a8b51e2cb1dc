// Slurm 25.05 and 25.11: the release-specific part of the plugin's Slurm
// API (included by slurm_api.h only, through compat/slurm_2511.h for 25.11;
// see there).
//
// Against 24.11 (compat/slurm_2411.h): slurmctld no longer validates the
// advanced reservations by itself: the scheduler does, right after taking
// the scheduling locks (sched/backfill: validate_all_reservations(true,
// false); easypp_cycle_locked()); sched/backfill sets bf_active under
// check_bf_running_lock, outside the slurmctld locks (slurmctld's purge of
// old jobs holds that mutex while it takes the job lock); job_state_set() is
// used (exported by the slurmctld built from SchedMD's tarball);
// reservation_delete_resv_exc_parts() frees the GRES lists too.
// 25.11 differs only in what a point-release condition covers here: from
// 25.11.2 clearing bf_active is broadcast (easypp_bf_active()).
#pragma once

#define operator slurm_operator  // see slurm_api.h
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
#ifdef __cplusplus
extern "C" {
#endif
#include "src/common/job_state_reason.h"
#include "src/interfaces/cred.h"
#include "src/interfaces/mcs.h"
#include "src/interfaces/select.h"
#include "src/slurmctld/proc_req.h"
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

namespace easypp::plugin {

/// What advanced reservations exclude inside the nodes job_test_resv()
/// returns (cores, GRES), owned. out() is job_test_resv()'s output
/// argument, get() select_g_job_test()'s input.
class ResvExc {
 public:
  ResvExc() = default;
  ~ResvExc() { clear(); }
  ResvExc(const ResvExc&) = delete;
  ResvExc& operator=(const ResvExc&) = delete;
  resv_exc_t* out() {
    clear();
    return &r_;
  }
  resv_exc_t* get() const { return &r_; }

 private:
  // Frees the cores and the GRES lists (since 25.05).
  void clear() {
    reservation_delete_resv_exc_parts(&r_);
    r_ = resv_exc_t{};
  }
  mutable resv_exc_t r_{};
};

}  // namespace easypp::plugin

/// select_g_job_test(SELECT_MODE_WILL_RUN) without preemption: the earliest
/// start of job on bitmap (in job->start_time), nodes selected in bitmap.
/// No will_run_data_t: every running job may end (as in 22.05).
inline int easypp_will_run(job_record_t* job, bitstr_t* bitmap, uint32_t min_nodes,
                           uint32_t max_nodes, uint32_t req_nodes, resv_exc_t* resv_exc) {
  return select_g_job_test(job, bitmap, min_nodes, max_nodes, req_nodes, SELECT_MODE_WILL_RUN,
                           nullptr, nullptr, resv_exc, nullptr);
}

/// select_nodes() for a real start (not a test, not at submission).
inline int easypp_select_nodes(job_record_t* job, uint32_t scheduler_type) {
  job_node_select_t sel{};
  sel.job_ptr = job;
  return select_nodes(&sel, false, false, scheduler_type);
}

/// Tell srun (salloc) of the allocation of a started job without a batch script.
inline void easypp_srun_allocate(job_record_t* job) { srun_allocate(job); }

/// Count a job's submission against its association limits again; the
/// association manager lock is not held.
inline void easypp_acct_policy_add_job_submit(job_record_t* job) {
  acct_policy_add_job_submit(job, false);
}

/// No power layer since 23.11.
inline void easypp_power_job_start(job_record_t*) {}

/// The job credential's lifetime in seconds (AuthInfo=cred_expire=, 120 by
/// default).
inline int easypp_cred_expiry_window() { return cred_expiration(); }

/// Set a job's state (and the job state cache): job_state_set().
inline void easypp_job_state_set(job_record_t* job, uint32_t state) { job_state_set(job, state); }

/// The text of a job's state reason (job_state_reason_string() from 23.11).
inline const char* easypp_job_reason_string(uint32_t reason) {
  return job_state_reason_string(static_cast<job_state_reason>(reason));
}

/// sdiag's count of why backfill cycles ended (slurmctld_diag_stats.bf_exit).
inline void easypp_count_bf_exit(easypp::plugin::BfExit why) {
  using easypp::plugin::BfExit;
  slurmctld_diag_stats.bf_exit[why == BfExit::kEnd            ? BF_EXIT_END
                               : why == BfExit::kMaxJobTest   ? BF_EXIT_MAX_JOB_TEST
                               : why == BfExit::kTimeout      ? BF_EXIT_TIMEOUT
                                                              : BF_EXIT_STATE_CHANGED]++;
}

/// A cycle starts (true) or has ended (false): slurmctld_diag_stats.bf_active
/// as sched/backfill sets it, under check_bf_running_lock (old jobs are not
/// purged while it is set; from 25.11.2 slurmctld's shutdown waits on
/// check_bf_running_cond until it is clear, so clearing it is broadcast).
/// Call it WITHOUT the slurmctld locks: the purge holds
/// check_bf_running_lock while it takes the job lock.
inline void easypp_bf_active(bool active) {
  slurm_mutex_lock(&check_bf_running_lock);
  slurmctld_diag_stats.bf_active = active ? 1 : 0;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 2)
  if (!active) slurm_cond_broadcast(&check_bf_running_cond);
#endif
  slurm_mutex_unlock(&check_bf_running_lock);
}

/// slurmctld is shutting down: start no cycle, end a running one at its
/// next yield (sched/backfill does so on slurmctld_config.shutdown_time).
inline bool easypp_slurmctld_stopping() { return slurmctld_config.shutdown_time != 0; }

/// What a scheduler does right after taking the scheduling locks: since
/// 25.05 slurmctld leaves the validation of the reservations to it
/// (sched/backfill: validate_all_reservations(true, false)).
inline void easypp_cycle_locked() { validate_all_reservations(true, false); }

#endif  // __cplusplus
