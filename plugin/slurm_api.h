// Slurm's internal (slurmctld) headers for the plugin's C++ files. They are C
// headers from the configured Slurm source tree (-I$(SLURM_SRC_DIR)); config.h
// is Slurm's (plugin/Makefile.am uses nostdinc so easypp's own config.h is not
// on the include path). Compiled with -DNDEBUG: Debian's slurmctld does not
// export verify_lock().
#pragma once

extern "C" {
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
}
