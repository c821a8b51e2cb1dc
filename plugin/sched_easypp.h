/*
 * The boundary between the plugin's thin C part (sched_easypp_wrapper.c:
 * Slurm's plugin ABI, the agent thread, the lock set) and its C++ part
 * (agent.cc and the scheduling core). Plain C types only. Every function
 * implemented in C++ catches all exceptions: none crosses this boundary.
 */
#ifndef EASYPP_SCHED_EASYPP_H
#define EASYPP_SCHED_EASYPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- implemented in C++ (agent.cc) ------------------------------------ */

/* Read SchedulerParameters and set up the plugin's state. Called from init()
 * while slurmctld reads its configuration. Writes a one-line description of
 * the effective settings into desc. Returns 0 on success, -1 on failure
 * (then the plugin refuses to load). */
int easypp_core_init(char *desc, size_t desc_len);

/* Release the plugin's state; the agent thread has stopped. */
void easypp_core_fini(void);

/* scontrol reconfigure: re-read SchedulerParameters at the next cycle. Called
 * by slurmctld with its configuration write lock held: must not lock. */
void easypp_core_request_reconfig(void);

/* How long the agent sleeps before the next cycle, in microseconds: until
 * the next periodic cycle (easypp_interval) or the next running job's
 * predicted end (+1 s, the correction timer), whichever comes first. */
int64_t easypp_core_wait_usec(void);

/* True while a reconfigure is pending (the agent ends a pass early). */
bool easypp_core_reload_pending(void);

/* One scheduling cycle. Takes and releases the lock set itself through
 * easypp_slurm_lock()/easypp_slurm_unlock() (so it can yield). */
void easypp_core_cycle(void);

/* ---- implemented in C (sched_easypp_wrapper.c) ------------------------- */

/* The scheduling lock set, the one sched/backfill uses: configuration READ,
 * jobs WRITE, nodes WRITE, partitions READ, federation READ. */
void easypp_slurm_lock(void);
void easypp_slurm_unlock(void);

/* True once fini() asked the agent to stop. */
bool easypp_agent_stopping(void);

/* Sleep up to usec microseconds; returns early when the agent must stop or
 * was woken (reconfigure). Returns the microseconds actually slept. */
int64_t easypp_agent_sleep(int64_t usec);

/* Wake the agent from its sleep (used on reconfigure). */
void easypp_agent_wake(void);

/* Sleep up to usec microseconds while the locks are yielded; returns early
 * only when the agent must stop (a reconfigure does not end it, nor is the
 * wake-up consumed). */
void easypp_agent_nap(int64_t usec);

#ifdef __cplusplus
}
#endif

#endif /* EASYPP_SCHED_EASYPP_H */
