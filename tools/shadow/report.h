// easypp-shadow's report: per finished job the prediction (first, at start,
// final), the time limit and the runtime; in summary, overall, per user and
// per partition: the predictions' accuracy against the limits' (libsim's
// prediction_accuracy: 1 if P = r, r/P if P > r, P/r if P < r; a job's
// predictions time-weighted over its life, as easypp-sim reports it), the
// share of jobs whose limit was over 2x, 5x, 10x their runtime, the
// corrections that would have fired and the jobs they hit, and the share of
// first predictions made from history. As tables, as JSON, and as the data
// of the HTML page easypp-report draws (kind "easypp-shadow").
#pragma once

#include <jansson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "shadow/shadow.h"

namespace easypp::shadow {

struct GroupStats {
  std::string key;         ///< "all", a user name, a partition
  UserId uid = kNoUser;    ///< per user
  std::uint64_t jobs = 0;
  double accuracy = 0;        ///< mean of the jobs' prediction accuracy, 0..1
  double first_accuracy = 0;  ///< mean accuracy of the first predictions alone
  double limit_accuracy = 0;  ///< mean accuracy of the time limits
  std::uint64_t over2 = 0, over5 = 0, over10 = 0;  ///< limit > k x runtime
  std::uint64_t corrections = 0, corrected_jobs = 0;
  std::uint64_t from_history = 0;
};

struct Summary {
  GroupStats all;
  std::vector<GroupStats> users;       ///< most jobs first
  std::vector<GroupStats> partitions;  ///< most jobs first
};

Summary summarize(const std::vector<Record>& records);

/// What the report says besides the records.
struct ReportInfo {
  std::string source;     ///< where the polls read
  std::string command;    ///< the command line (JSON, page)
  std::string version;
  std::vector<std::pair<std::string, std::string>> settings;
  std::string describe;   ///< PluginConfig::describe()
  Time generated = 0;
};

/// The tables (standard output). `top`: rows per user/partition table;
/// `jobs`: also every judged job.
std::string report_text(const Shadow& s, const ReportInfo& info, std::size_t top, bool jobs);
/// The JSON document (a new reference): summary, users, partitions, the
/// jobs not judged and why, the jobs still running, the history, every job.
json_t* report_json(const Shadow& s, const ReportInfo& info);

/// Local time as slurmrestd's and sacct's time arguments take it, and as
/// the report shows it: 2026-11-23T16:05:00.
std::string local_time(Time t);

/// "1:02:03", "2-03:04:05", "45s" for short ones.
std::string fmt_duration(Time seconds);

}  // namespace easypp::shadow
