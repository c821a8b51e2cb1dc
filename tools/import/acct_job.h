// One job record of Slurm accounting, as slurmrestd's /slurmdb/v0.0.NN/jobs
// and `sacct --json` print it, normalized across the OpenAPI versions:
//
//  - v0.0.36-v0.0.38 (Slurm 22.05): plain integers, "state": {"current":
//    "COMPLETED"}, "time": {"limit": minutes or null (UNLIMITED)};
//  - v0.0.39-v0.0.42 (23.02-24.11): numbers may be {"set", "infinite",
//    "number"} objects, "state": {"current": ["COMPLETED", ...flags]}.
//
// parse_job() accepts either form field by field, and refuses a record whose
// values are impossible (negative or absurd times, End before Start, a
// missing job id) with a one-line reason; it never throws.
#pragma once

#include <jansson.h>

#include <cstdint>
#include <map>
#include <string>

namespace easypp::import {

using Time = std::int64_t;

struct AcctJob {
  std::uint32_t job_id = 0;        ///< JobIDRaw
  std::uint32_t array_job_id = 0;  ///< 0: not an array task
  std::int64_t array_task_id = -1;
  std::uint32_t het_job_id = 0;    ///< 0: not part of a heterogeneous job
  std::int64_t het_offset = -1;
  std::string cluster, user, group, partition, name;
  std::string state;               ///< base state, upper case ("COMPLETED")
  Time submit = 0, eligible = 0, start = 0, end = 0;  ///< 0: unknown / not yet
  Time elapsed = -1;               ///< seconds run (suspended time excluded); -1 unknown
  Time suspended = 0;
  std::int64_t limit_min = -1;     ///< time limit in minutes; -1 none
  bool unlimited = false;          ///< UNLIMITED / no limit recorded
  std::int64_t alloc_cpus = 0;     ///< 0: never started
  std::int64_t req_cpus = -1;
  std::int64_t req_mem_mb = -1;    ///< the job's requested memory (TRES mem), MB

  bool het_component() const { return het_job_id != 0 && het_job_id != job_id; }
  bool array_task() const { return array_job_id != 0; }
};

/// An integer field in either encoding of Slurm's OpenAPI versions: 42,
/// 42.0, null, or {"set": true, "infinite": false, "number": 42}.
enum class JsonNum { Unset, Value, Infinite, Bad };
JsonNum json_number(json_t* v, std::int64_t* out);

/// Fill *out from one element of "jobs". False with *why on a record that
/// cannot be used (it is counted and skipped by the caller).
bool parse_job(json_t* job, AcctJob* out, std::string* why);

/// Times above this (2^40 s, year 36812) are refused as absurd.
constexpr Time kMaxTime = Time(1) << 40;

/// The "errors" of a slurmrestd or sacct/squeue document's top level, one
/// line ("" if none): an HTTP 200 answer can still say the query failed.
/// Slurm 22.05 reports an empty accounting window as "Nothing found": not an
/// error.
std::string document_errors(json_t* top_level_others);

/// slurm.conf's `Key=value` lines (comments removed, keys lower-cased, lines
/// whose key has a space, such as NodeName=..., skipped) into *out. False if
/// the file cannot be opened (errno set).
bool read_slurm_conf(const std::string& path, std::map<std::string, std::string>* out);

}  // namespace easypp::import
