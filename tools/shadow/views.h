// Jobs as Slurm's JSON shows them, turned into the shadow's JobViews:
//
//  - slurmctld's job list: an element of "jobs" in slurmrestd's
//    /slurm/v0.0.NN/jobs answer or in `squeue --json` (the same document).
//    v0.0.36-v0.0.38 (Slurm 22.05): plain numbers, "job_state": "PENDING",
//    "time_limit": minutes or null; v0.0.39+: numbers may be {"set",
//    "infinite", "number"} objects and "job_state" an array of a base state
//    and flags;
//  - accounting (/slurmdb/v0.0.NN/jobs, `sacct --json`): import/acct_job.h
//    parses the record; acct_view() keeps finished jobs only (slurmctld's
//    list is the authority on live jobs).
//
// Never throws; a record that cannot be used is refused with a reason.
#pragma once

#include <jansson.h>

#include <functional>
#include <string>

#include "import/acct_job.h"
#include "shadow/shadow.h"

namespace easypp::shadow {

/// The plugin's estimate for a job without a time limit (agent.cc): a year.
constexpr Time kUnlimitedEstimate = Time(365) * 24 * 3600;

/// Fill *out from one element of slurmctld's "jobs". False with *why for a
/// record without a job id or with impossible times.
bool ctld_view(json_t* job, JobView* out, std::string* why);

/// A uid for a user name (accounting names users, slurmctld numbers them).
using UidOf = std::function<UserId(const std::string& user)>;

/// Accounting's record of a finished job as a view; false if it is not
/// finished (pending, running: slurmctld's list says more) or its user has
/// no uid.
bool acct_view(const import::AcctJob& j, const UidOf& uid_of, JobView* out);

/// Is a pending job with this state reason (Slurm's state_reason) kept out
/// of the plugin's candidates (held, a dependency or begin time, an
/// association or QOS limit, a down partition, licenses)?
bool blocking_reason(const std::string& reason);

}  // namespace easypp::shadow
