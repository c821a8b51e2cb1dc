#include "shadow/views.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace easypp::shadow {

namespace {

using import::json_number;
using import::JsonNum;

std::string text(json_t* v) { return json_is_string(v) ? json_string_value(v) : std::string(); }

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A time field: 0 when unset; false when impossible.
bool time_of(json_t* job, const char* key, Time* out, std::string* why) {
  std::int64_t t = 0;
  switch (json_number(json_object_get(job, key), &t)) {
    case JsonNum::Unset:
    case JsonNum::Infinite: *out = 0; return true;
    case JsonNum::Bad: *why = std::string(key) + " is not a number"; return false;
    case JsonNum::Value: break;
  }
  if (t < 0 || t > import::kMaxTime) {
    *why = std::string(key) + " " + std::to_string(t) + " is not a possible time";
    return false;
  }
  *out = t;
  return true;
}

std::int64_t int_of(json_t* job, const char* key, std::int64_t dflt) {
  std::int64_t v = 0;
  return json_number(json_object_get(job, key), &v) == JsonNum::Value ? v : dflt;
}

enum class Kind { Pending, PendingBlocked, Running, Finished, Unknown };

Kind kind_of(const std::string& s) {
  static const std::set<std::string> running = {"RUNNING", "SUSPENDED", "CONFIGURING",
                                                "RESIZING", "SIGNALING", "STOPPED"};
  static const std::set<std::string> finished = {
      "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
      "DEADLINE", "OUT_OF_MEMORY", "COMPLETING", "STAGE_OUT", "REVOKED"};
  static const std::set<std::string> blocked = {"REQUEUE_HOLD", "SPECIAL_EXIT",
                                                "RESV_DEL_HOLD"};
  if (s == "PENDING" || s == "REQUEUED" || s == "REQUEUE_FED") return Kind::Pending;
  if (blocked.count(s)) return Kind::PendingBlocked;
  if (running.count(s)) return Kind::Running;
  if (finished.count(s)) return Kind::Finished;
  return Kind::Unknown;
}

// "PENDING" (<= v0.0.38) or ["PENDING", flags...] (v0.0.39+): the state
// that decides the phase, and the name to show.
Kind state_of(json_t* v, std::string* name) {
  if (json_is_string(v)) {
    *name = upper(json_string_value(v));
    return kind_of(*name);
  }
  if (!json_is_array(v)) return Kind::Unknown;
  Kind base = Kind::Unknown;
  bool completing = false, held = false;
  std::size_t i;
  json_t* e;
  json_array_foreach(v, i, e) {
    const std::string s = upper(text(e));
    if (s == "COMPLETING") completing = true;
    if (s == "REQUEUE_HOLD" || s == "SPECIAL_EXIT" || s == "RESV_DEL_HOLD") held = true;
    const Kind k = kind_of(s);
    if (base == Kind::Unknown && k != Kind::Unknown && s != "COMPLETING") {
      base = k;
      *name = s;
    }
  }
  if (completing && base != Kind::Finished) {
    *name = "COMPLETING";
    return Kind::Finished;
  }
  if (held && base == Kind::Pending) return Kind::PendingBlocked;
  return base;
}

}  // namespace

bool blocking_reason(const std::string& r) {
  static const std::set<std::string> exact = {
      "Dependency", "DependencyNeverSatisfied", "BeginTime", "JobHeldUser", "JobHeldAdmin",
      "PartitionDown", "PartitionInactive", "Licenses", "BurstBufferStageIn",
      "BurstBufferResources", "PartitionTimeLimit",
      "PartitionNodeLimit", "AccountNotAllowed", "QOSNotAllowed", "InvalidAccount", "InvalidQOS"};
  if (exact.count(r)) return true;
  // Association and QOS limits: AssocGrpCpuLimit, QOSMaxJobsPerUserLimit, ...
  return r.rfind("Assoc", 0) == 0 || r.rfind("QOS", 0) == 0;
}

bool ctld_view(json_t* job, JobView* out, std::string* why) {
  if (!json_is_object(job)) {
    *why = "not a JSON object";
    return false;
  }
  JobView v;
  std::int64_t id = -1;
  if (json_number(json_object_get(job, "job_id"), &id) != JsonNum::Value || id <= 0 ||
      id > 0xffffffffLL) {
    *why = "job_id is missing or not a job number";
    return false;
  }
  v.id = std::uint32_t(id);
  const std::int64_t uid = int_of(job, "user_id", -1);
  v.uid = uid >= 0 && uid <= 0xffffffffLL ? UserId(uid) : kNoUser;
  v.user = text(json_object_get(job, "user_name"));
  if (v.user.empty() && v.uid != kNoUser) v.user = std::to_string(v.uid);
  v.partition = text(json_object_get(job, "partition"));
  // A job pending in several partitions lists them all; it is judged in the
  // first (a running one names the partition it runs in).
  if (v.partition.find(',') != std::string::npos) v.partition.resize(v.partition.find(','));
  const Kind kind = state_of(json_object_get(job, "job_state"), &v.state);
  if (kind == Kind::Unknown) {
    *why = "job_state '" + v.state + "' is not a state this tool knows";
    return false;
  }
  Time submit = 0, eligible = 0, start = 0, end = 0;
  if (!time_of(job, "submit_time", &submit, why) || !time_of(job, "eligible_time", &eligible, why) ||
      !time_of(job, "start_time", &start, why) || !time_of(job, "end_time", &end, why))
    return false;
  if (submit == 0) {
    *why = "submit_time is unknown";
    return false;
  }
  v.submit = submit;
  v.eligible = eligible;
  std::int64_t limit = 0;
  switch (json_number(json_object_get(job, "time_limit"), &limit)) {
    case JsonNum::Value:
      // NO_VAL / INFINITE as raw 32-bit values
      v.estimate = limit >= 0 && limit < 0xfffffffeLL ? std::max<Time>(Time(limit) * 60, 1)
                                                       : kUnlimitedEstimate;
      break;
    case JsonNum::Bad: *why = "time_limit is not a number"; return false;
    default: v.estimate = kUnlimitedEstimate;
  }
  switch (kind) {
    case Kind::Pending:
    case Kind::PendingBlocked: {
      v.phase = JobView::Phase::Pending;
      const std::int64_t prio = int_of(job, "priority", 1);
      v.blocked = kind == Kind::PendingBlocked || prio == 0 ||
                  blocking_reason(text(json_object_get(job, "state_reason")));
      // Slurm sets the begin time when a scheduler first looks at the job
      // (job_independent()); the plugin's next cycle would: from submit on.
      if (!v.blocked && v.eligible == 0) v.eligible = v.submit;
      if (v.eligible == 0) v.blocked = true;
      break;
    }
    case Kind::Running:
      if (start == 0) {
        *why = "a " + v.state + " job without start_time";
        return false;
      }
      v.phase = JobView::Phase::Running;
      v.start = start;
      break;
    case Kind::Finished:
      v.phase = JobView::Phase::Finished;
      if (end == 0) {
        *why = "a " + v.state + " job without end_time";
        return false;
      }
      if (start > 0 && end < start) {
        *why = "end_time " + std::to_string(end) + " is before start_time " + std::to_string(start);
        return false;
      }
      v.start = start;
      v.end = end;
      // A job cancelled while pending has start == end and no nodes.
      v.had_allocation = start > 0 && end > start &&
                         (json_object_get(job, "nodes") == nullptr ||
                          !text(json_object_get(job, "nodes")).empty());
      break;
    case Kind::Unknown: break;
  }
  if (v.phase != JobView::Phase::Pending && v.eligible == 0) v.eligible = v.submit;
  const std::int64_t het = int_of(job, "het_job_id", 0);
  const std::int64_t off = int_of(job, "het_job_offset", 0);
  v.het_component = het > 0 && het != id;
  const std::int64_t array = int_of(job, "array_job_id", 0);
  const std::int64_t task = int_of(job, "array_task_id", -1);
  if (het > 0) {
    v.name = std::to_string(het) + "+" + std::to_string(off);
  } else if (array > 0 && task >= 0) {
    v.name = std::to_string(array) + "_" + std::to_string(task);
  } else if (array > 0) {
    const std::string tasks = text(json_object_get(job, "array_task_string"));
    v.name = std::to_string(array) + (tasks.empty() ? "" : "_[" + tasks + "]");
  } else {
    v.name = std::to_string(id);
  }
  *out = std::move(v);
  return true;
}

bool acct_view(const import::AcctJob& j, const UidOf& uid_of, JobView* out) {
  static const std::set<std::string> unfinished = {
      "PENDING", "RUNNING", "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED", "REQUEUED", "RESIZING",
      "SPECIAL_EXIT", "STOPPED", "SIGNALING", "STAGE_OUT", "COMPLETING", "CONFIGURING",
      "RESV_DEL_HOLD", ""};
  if (j.end == 0 || unfinished.count(j.state)) return false;
  JobView v;
  v.id = j.job_id;
  v.user = j.user;
  v.uid = j.user.empty() ? kNoUser : uid_of(j.user);
  v.partition = j.partition;
  v.state = j.state;
  v.phase = JobView::Phase::Finished;
  v.submit = j.submit;
  v.eligible = j.eligible > 0 ? j.eligible : j.submit;
  v.start = j.start;
  v.end = j.end;
  v.suspended = j.suspended;
  v.estimate = j.limit_min > 0 ? j.limit_min * 60 : j.limit_min == 0 ? 1 : kUnlimitedEstimate;
  v.had_allocation = j.alloc_cpus > 0 && j.start > 0;
  v.het_component = j.het_component();
  v.from_accounting = true;
  if (j.het_job_id != 0)
    v.name = std::to_string(j.het_job_id) + "+" + std::to_string(j.het_offset < 0 ? 0 : j.het_offset);
  else if (j.array_task())
    v.name = std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
  else
    v.name = std::to_string(j.job_id);
  *out = std::move(v);
  return true;
}

}  // namespace easypp::shadow
