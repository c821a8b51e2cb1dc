/*
 * sched/easypp: Slurm's plugin ABI for the EASY++ scheduler and its agent
 * thread. Modelled on the structure of Slurm's own sched/backfill (a thin
 * wrapper that starts and stops an agent thread); the scheduling logic lives
 * in the C++ files behind sched_easypp.h.
 *
 * Built against the Slurm source tree matching the installed Slurm exactly;
 * plugin_version makes slurmctld refuse this file if the versions differ
 * (src/common/plugin.c compares major, minor and micro release before init()
 * runs). The constructor below runs earlier, at dlopen(), and says why in
 * one line naming both releases and the fix.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* dladdr(), dl_iterate_phdr() */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>

#include "slurm_api.h"  /* Slurm's headers and EASYPP_SCHED_LOCKS (per release) */
#include "src/common/macros.h"

#include "sched_easypp.h"

const char plugin_name[] = "EASY++ scheduler plugin (predicted runtimes, SJBF)";
const char plugin_type[] = "sched/easypp";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_t agent_thread = 0;
static pthread_mutex_t thread_flag_mutex = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static bool stop_agent = false;
static bool wake_agent = false;

static const slurmctld_lock_t sched_locks = EASYPP_SCHED_LOCKS;

/* ---- the release check at dlopen() ------------------------------------------
 * slurmctld loads its other plugins (select/, auth/, cred/, ...) before the
 * scheduler plugin, and only those whose plugin_version is its own
 * SLURM_VERSION_NUMBER: any of them tells which Slurm this process is. */

#define MAX_PEERS 64

struct peers {
	int n;
	char *names[MAX_PEERS];
};

static int _collect_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct peers *p = arg;
	const char *base;

	(void) size;
	if (!info->dlpi_name || !info->dlpi_name[0] || p->n >= MAX_PEERS)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!strcmp(base, "sched_easypp.so") || !strstr(base, ".so"))
		return 0;
	p->names[p->n] = strdup(info->dlpi_name);
	if (p->names[p->n])
		p->n++;
	return 0;
}

/* The plugin_version of another Slurm plugin loaded in this process, or 0. */
static uint32_t _running_slurm_version(void)
{
	struct peers p = { 0 };
	uint32_t found = 0;

	/* names first, dlopen() after: no loader call inside the iteration */
	dl_iterate_phdr(_collect_object, &p);
	for (int i = 0; i < p.n; i++) {
		void *h = found ? NULL : dlopen(p.names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			const uint32_t *v = dlsym(h, "plugin_version");
			if (v && dlsym(h, "plugin_type") && dlsym(h, "plugin_name"))
				found = *v & 0xffffff;
			dlclose(h);
		}
		free(p.names[i]);
	}
	return found;
}

/* A build for another release: one line naming both releases and the fix,
 * before slurmctld's own refusal. Reads plugin_version from memory (the
 * value slurmctld will compare), not the compile-time constant. */
__attribute__((constructor)) static void _check_release(void)
{
	const uint32_t mine = *(const volatile uint32_t *) &plugin_version;
	const uint32_t running = _running_slurm_version();
	Dl_info self;
	const char *path = "sched_easypp.so";

	if (!running || running == (mine & 0xffffff))
		return;
	if (dladdr((const void *) &plugin_version, &self) && self.dli_fname)
		path = self.dli_fname;
	error("sched/easypp: %s was built for Slurm %u.%02u.%u but this slurmctld is Slurm %u.%02u.%u, and Slurm loads a plugin only into the release it was built for: rebuild it against Slurm %u.%02u.%u and install it (docs/admin-guide.md, \"Upgrading Slurm\"; easypp-ctl check compares them before a restart)",
	      path, SLURM_VERSION_MAJOR(mine), SLURM_VERSION_MINOR(mine),
	      SLURM_VERSION_MICRO(mine), SLURM_VERSION_MAJOR(running),
	      SLURM_VERSION_MINOR(running), SLURM_VERSION_MICRO(running),
	      SLURM_VERSION_MAJOR(running), SLURM_VERSION_MINOR(running),
	      SLURM_VERSION_MICRO(running));
}

void easypp_slurm_lock(void)
{
	lock_slurmctld(sched_locks);
}

void easypp_slurm_unlock(void)
{
	unlock_slurmctld(sched_locks);
}

bool easypp_agent_stopping(void)
{
	bool stop;

	slurm_mutex_lock(&term_lock);
	stop = stop_agent;
	slurm_mutex_unlock(&term_lock);
	return stop;
}

static int64_t _usec_since(const struct timeval *t0)
{
	struct timeval t1;

	gettimeofday(&t1, NULL);
	return (int64_t) (t1.tv_sec - t0->tv_sec) * 1000000 +
	       (t1.tv_usec - t0->tv_usec);
}

/*
 * Wait on term_cond for up to usec microseconds or until the agent is
 * stopped; with `wakeable`, also until easypp_agent_wake() (whose flag it
 * consumes). Returns the microseconds actually waited.
 */
static int64_t _timed_wait(int64_t usec, bool wakeable)
{
	struct timeval t0;
	struct timespec until;
	int64_t nsec;

	if (usec < 0)
		usec = 0;
	gettimeofday(&t0, NULL);
	nsec = ((int64_t) t0.tv_usec + usec) * 1000;
	until.tv_sec = t0.tv_sec + nsec / 1000000000;
	until.tv_nsec = nsec % 1000000000;

	slurm_mutex_lock(&term_lock);
	while (!stop_agent && !(wakeable && wake_agent)) {
		int err = pthread_cond_timedwait(&term_cond, &term_lock,
						 &until);
		if (err == ETIMEDOUT)
			break;
		if (err) {
			errno = err;
			error("sched/easypp: pthread_cond_timedwait(): %m");
			break;
		}
	}
	if (wakeable)
		wake_agent = false;
	slurm_mutex_unlock(&term_lock);
	return _usec_since(&t0);
}

int64_t easypp_agent_sleep(int64_t usec)
{
	return _timed_wait(usec, true);
}

void easypp_agent_nap(int64_t usec)
{
	if (usec > 0)
		(void) _timed_wait(usec, false);
}

void easypp_agent_wake(void)
{
	slurm_mutex_lock(&term_lock);
	wake_agent = true;
	slurm_cond_broadcast(&term_cond);
	slurm_mutex_unlock(&term_lock);
}

static void _stop_agent(void)
{
	slurm_mutex_lock(&term_lock);
	stop_agent = true;
	slurm_cond_broadcast(&term_cond);
	slurm_mutex_unlock(&term_lock);
}

static void *_agent(void *arg)
{
	(void) arg;
	if (prctl(PR_SET_NAME, "easypp", NULL, NULL, NULL) < 0)
		error("sched/easypp: cannot set the agent thread's name: %m");

	while (!easypp_agent_stopping()) {
		easypp_agent_sleep(easypp_core_wait_usec());
		if (easypp_agent_stopping())
			break;
		if (slurmctld_config.scheduling_disabled)
			continue;
		easypp_core_cycle();
	}
	return NULL;
}

extern int init(void)
{
	char desc[2048] = "";  /* every setting: 33 keys, about 700 characters */

	if (slurmctld_config.scheduling_disabled)
		return SLURM_SUCCESS;

	slurm_mutex_lock(&thread_flag_mutex);
	if (agent_thread) {
		debug2("sched/easypp: agent thread already running, not starting another");
		slurm_mutex_unlock(&thread_flag_mutex);
		return SLURM_ERROR;
	}
	if (easypp_core_init(desc, sizeof(desc)) != 0) {
		error("sched/easypp: initialization failed");
		slurm_mutex_unlock(&thread_flag_mutex);
		return SLURM_ERROR;
	}
	info("sched/easypp: loaded (%s)", desc);

	slurm_mutex_lock(&term_lock);
	stop_agent = false;
	wake_agent = false;
	slurm_mutex_unlock(&term_lock);
	/* joined in fini(), so not detached */
	EASYPP_THREAD_CREATE(&agent_thread, _agent, NULL);
	slurm_mutex_unlock(&thread_flag_mutex);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&thread_flag_mutex);
	if (agent_thread) {
		verbose("sched/easypp: shutting down");
		_stop_agent();
		EASYPP_THREAD_JOIN(agent_thread);
		agent_thread = 0;
		easypp_core_fini();
	}
	slurm_mutex_unlock(&thread_flag_mutex);
}

extern int sched_p_reconfig(void)
{
	easypp_core_request_reconfig();
	easypp_agent_wake();
	return SLURM_SUCCESS;
}
