// Slurm's internal (slurmctld) headers for the plugin's C++ files. They are C
// headers from the configured Slurm source tree (-I$(SLURM_SRC_DIR)); config.h
// is Slurm's (plugin/Makefile.am uses nostdinc so easypp's own config.h is not
// on the include path). Compiled with -DNDEBUG: Debian's slurmctld does not
// export verify_lock().
//
// Every function used from here must be exported by slurmctld or the
// libraries it links (test_load.PluginBinaryTest checks the built plugin).
#pragma once

// select.h declares "uint32_t (*plugin_id)" style members: -Wparentheses in C++.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
extern "C" {
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/power.h"
#include "src/common/read_config.h"
#include "src/common/select.h"
#include "src/common/slurm_mcs.h"
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
#include "src/slurmctld/srun_comm.h"
}
#pragma GCC diagnostic pop
