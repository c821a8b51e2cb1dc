// Where easypp-shadow looks at the cluster, read-only:
//
//  - slurmrestd (libcurl, import/rest_client.h): GET /slurm/v0.0.NN/jobs
//    (slurmctld's job list: pending, running and recently ended jobs) and
//    GET /slurmdb/v0.0.NN/jobs?start_time=..&end_time=..&skip_steps=true
//    (accounting: the jobs that ended since the previous poll, for those
//    slurmctld no longer lists). The versions are the highest that
//    /openapi/v3 lists and this tool knows, or --api's;
//  - or the commands `squeue --json` and `sacct --json --allusers -S .. -E ..`.
//
// Both answers are read one job at a time (import/json_stream.h). A fault
// (refused, timed out, HTTP 5xx, cut short) is retried with backoff (1 s,
// 2 s, 4 s, ...); what remains is one message naming the URL or command and
// the cause, and whether it is a configuration error (401/403/404, an
// OpenAPI version slurmrestd does not serve, a URL that cannot work, a
// command that is not installed) that waiting will not fix.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "import/rest_client.h"
#include "shadow/shadow.h"

namespace easypp::shadow {

struct SourceOptions {
  std::string url;           ///< slurmrestd; empty: the commands
  std::string user;          ///< X-SLURM-USER-NAME (default: the caller)
  std::string token_file;    ///< read at every poll (a rotated token is picked up)
  std::string api = "auto";  ///< "v0.0.38" ... or auto
  long timeout = 60;         ///< seconds for one answer
  int retries = 3;
  std::string squeue = "squeue", sacct = "sacct";
};

struct Fetched {
  std::vector<JobView> views;  ///< slurmctld's jobs, then accounting's it does not list
  Time now = 0;                ///< when slurmctld's list was asked for
  std::uint64_t ctld_jobs = 0, acct_jobs = 0;  ///< records read
  std::uint64_t refused = 0;   ///< records that could not be used
  std::string refused_example;
  std::uint64_t requests = 0, retries = 0, bytes = 0;
};

struct SourceError {
  std::string what;     ///< "URL: cause" or "COMMAND: cause"
  bool config = false;  ///< waiting will not fix it
};

class Source {
 public:
  /// `log` gets one line per retry ("URL: cause; trying again (1 of 3)").
  Source(SourceOptions o, std::function<void(const std::string&)> log);

  /// One look: slurmctld's job list, and accounting's jobs that ended (or
  /// ran) after `acct_since`. False with *err on failure (after retries).
  bool fetch(Time acct_since, Fetched* out, SourceError* err);

  /// "slurmrestd http://..:6820 /slurm/v0.0.38/jobs + /slurmdb/v0.0.38/jobs"
  /// or "squeue --json + sacct --json" (once known).
  std::string describe() const;

 private:
  bool fetch_rest(Time acct_since, Fetched* out, SourceError* err);
  bool fetch_commands(Time acct_since, Fetched* out, SourceError* err);
  bool detect(SourceError* err, Fetched* out);
  bool get(const std::string& path, bool ctld, Fetched* out, SourceError* err);
  bool run(const std::string& cmd, bool ctld, Fetched* out, SourceError* err);
  bool token(SourceError* err);

  SourceOptions o_;
  std::function<void(const std::string&)> log_;
  import::RestEndpoint ep_;
  std::string slurm_api_, slurmdb_api_;  // "v0.0.38"
  std::vector<JobView> acct_;            // scratch of one fetch
};

}  // namespace easypp::shadow
