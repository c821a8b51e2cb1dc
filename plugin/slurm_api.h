// Slurm's internal (slurmctld) headers for the plugin's files (C++, and the
// C wrapper sched_easypp_wrapper.c). They are C headers from the configured
// Slurm source tree (-I$(SLURM_SRC_DIR)); config.h
// is Slurm's (plugin/Makefile.am uses nostdinc so easypp's own config.h is not
// on the include path). Compiled with -DNDEBUG: Debian's slurmctld does not
// export verify_lock().
//
// Every difference between Slurm releases lives in ONE per-release header,
// plugin/compat/slurm_<major><minor>.h, which configure chooses from the
// detected Slurm version (EASYPP_SLURM_COMPAT_H, set in plugin/Makefile.am).
// It includes the headers that moved between releases and defines the
// easypp_* wrappers and the type names the plugin uses; the rest of the
// plugin calls those and never tests a version itself. Supporting a new
// release means adding its compat header (see plugin/compat/README).
//
// Every function used from here must be exported by slurmctld or the
// libraries it links (test_load.PluginBinaryTest checks the built plugin).
#pragma once

#ifndef EASYPP_SLURM_COMPAT_H
#error "EASYPP_SLURM_COMPAT_H is not defined: build the plugin through configure (plugin/Makefile.am)"
#endif

// Slurm's C headers use C++ keywords as identifiers (24.11:
// elem_t::operator in extra_constraints.h); renamed while they are read,
// and never used by the plugin. The compat headers do the same.
#define operator slurm_operator

// Headers present, at these paths, in every supported release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
#ifdef __cplusplus
extern "C" {
#endif
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/uid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/fed_mgr.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/licenses.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/slurmctld.h"
#ifdef __cplusplus
}
#endif
#pragma GCC diagnostic pop
#undef operator

// The release's own headers and the wrappers (EASYPP_SCHED_LOCKS for C and
// C++; easypp_*, list_t, list_itr_t, easypp::plugin::ResvExc for C++).
#include EASYPP_SLURM_COMPAT_H
