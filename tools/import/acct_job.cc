#include "import/acct_job.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>

namespace easypp::import {

JsonNum json_number(json_t* v, std::int64_t* out) {
  if (v == nullptr || json_is_null(v)) return JsonNum::Unset;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return JsonNum::Value;
  }
  if (json_is_real(v)) {
    const double d = json_real_value(v);
    if (!std::isfinite(d) || d < -9.0e15 || d > 9.0e15) return JsonNum::Bad;
    *out = std::int64_t(d);
    return JsonNum::Value;
  }
  if (json_is_object(v)) {
    json_t* inf = json_object_get(v, "infinite");
    if (json_is_true(inf)) return JsonNum::Infinite;
    json_t* set = json_object_get(v, "set");
    if (set != nullptr && !json_is_true(set)) return JsonNum::Unset;
    return json_number(json_object_get(v, "number"), out);
  }
  return JsonNum::Bad;
}

namespace {

using Num = JsonNum;
Num number(json_t* v, std::int64_t* out) { return json_number(v, out); }

json_t* path(json_t* v, const char* a, const char* b = nullptr) {
  v = json_object_get(v, a);
  if (v != nullptr && b != nullptr) v = json_object_get(v, b);
  return v;
}

std::string text(json_t* v) {
  if (json_is_string(v)) return json_string_value(v);
  return std::string();
}

// A time: 0 when unset/unknown; false (and *why) when impossible.
bool time_field(json_t* v, const char* name, Time* out, std::string* why) {
  std::int64_t t = 0;
  switch (number(v, &t)) {
    case Num::Unset:
    case Num::Infinite: *out = 0; return true;
    case Num::Bad: *why = std::string("time.") + name + " is not a number"; return false;
    case Num::Value: break;
  }
  if (t < 0 || t > kMaxTime) {
    *why = std::string("time.") + name + " " + std::to_string(t) + " is not a possible time";
    return false;
  }
  *out = t;
  return true;
}

bool count_field(json_t* v, const char* name, std::int64_t* out, std::string* why) {
  std::int64_t n = 0;
  switch (number(v, &n)) {
    case Num::Unset:
    case Num::Infinite: return true;  // keep the default
    case Num::Bad: *why = std::string(name) + " is not a number"; return false;
    case Num::Value: break;
  }
  if (n < 0 || n > (std::int64_t(1) << 40)) {
    *why = std::string(name) + " " + std::to_string(n) + " is out of range";
    return false;
  }
  *out = n;
  return true;
}

// tres.<which>[type == kind].count
std::int64_t tres_count(json_t* job, const char* which, const char* kind) {
  json_t* arr = path(job, "tres", which);
  if (!json_is_array(arr)) return -1;
  std::size_t i;
  json_t* t;
  json_array_foreach(arr, i, t) {
    if (text(json_object_get(t, "type")) != kind) continue;
    std::int64_t n = -1;
    if (number(json_object_get(t, "count"), &n) == Num::Value && n >= 0) return n;
  }
  return -1;
}

std::string upper_first_word(std::string s) {
  const auto sp = s.find(' ');
  if (sp != std::string::npos) s.resize(sp);
  while (!s.empty() && s.back() == '+') s.pop_back();
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_base_state(const std::string& s) {
  static const char* const kBase[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED",
                                      "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                                      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};
  for (const char* b : kBase)
    if (s == b) return true;
  return false;
}

// "COMPLETED" (<= v0.0.38) or ["COMPLETED", flags...] (v0.0.39+); a
// requeued earlier run is REQUEUED in both.
std::string state_of(json_t* job) {
  json_t* cur = path(job, "state", "current");
  if (json_is_string(cur)) return upper_first_word(json_string_value(cur));
  if (json_is_array(cur)) {
    std::string first;
    bool requeued = false;
    std::size_t i;
    json_t* s;
    json_array_foreach(cur, i, s) {
      const std::string v = upper_first_word(text(s));
      if (v == "REQUEUED") requeued = true;
      if (first.empty() && is_base_state(v)) first = v;
    }
    if (requeued && (first.empty() || first == "PENDING")) return "REQUEUED";
    if (!first.empty()) return first;
    if (json_array_size(cur) > 0) return upper_first_word(text(json_array_get(cur, 0)));
  }
  json_t* st = json_object_get(job, "state");
  if (json_is_string(st)) return upper_first_word(json_string_value(st));
  return "";
}

}  // namespace

bool parse_job(json_t* job, AcctJob* out, std::string* why) {
  AcctJob j;
  if (!json_is_object(job)) {
    *why = "not a JSON object";
    return false;
  }
  std::int64_t id = -1;
  if (number(json_object_get(job, "job_id"), &id) != Num::Value || id <= 0 ||
      id > 0xffffffffLL) {
    *why = "job_id is missing or not a job number";
    return false;
  }
  j.job_id = std::uint32_t(id);
  std::int64_t v = 0;
  if (number(path(job, "array", "job_id"), &v) == Num::Value && v > 0 && v <= 0xffffffffLL) {
    j.array_job_id = std::uint32_t(v);
    std::int64_t task = -1;
    if (number(path(job, "array", "task_id"), &task) == Num::Value && task >= 0)
      j.array_task_id = task;
  }
  if (number(path(job, "het", "job_id"), &v) == Num::Value && v > 0 && v <= 0xffffffffLL) {
    j.het_job_id = std::uint32_t(v);
    std::int64_t off = -1;
    if (number(path(job, "het", "job_offset"), &off) == Num::Value && off >= 0)
      j.het_offset = off;
  }
  j.cluster = text(json_object_get(job, "cluster"));
  j.user = text(json_object_get(job, "user"));
  if (j.user.empty()) j.user = text(path(job, "association", "user"));
  j.group = text(json_object_get(job, "group"));
  j.partition = text(json_object_get(job, "partition"));
  const auto comma = j.partition.find(',');
  if (comma != std::string::npos) j.partition.resize(comma);
  j.name = text(json_object_get(job, "name"));
  j.state = state_of(job);

  json_t* t = json_object_get(job, "time");
  if (!json_is_object(t)) {
    *why = "no \"time\" object";
    return false;
  }
  if (!time_field(json_object_get(t, "submission"), "submission", &j.submit, why) ||
      !time_field(json_object_get(t, "eligible"), "eligible", &j.eligible, why) ||
      !time_field(json_object_get(t, "start"), "start", &j.start, why) ||
      !time_field(json_object_get(t, "end"), "end", &j.end, why))
    return false;
  if (j.submit == 0) {
    *why = "time.submission is unknown";
    return false;
  }
  if (j.start > 0 && j.end > 0 && j.end < j.start) {
    *why = "time.end " + std::to_string(j.end) + " is before time.start " +
           std::to_string(j.start);
    return false;
  }
  std::int64_t el = -1;
  if (!count_field(json_object_get(t, "elapsed"), "time.elapsed", &el, why)) return false;
  j.elapsed = el;
  std::int64_t sus = 0;
  if (!count_field(json_object_get(t, "suspended"), "time.suspended", &sus, why)) return false;
  j.suspended = sus;
  std::int64_t lim = -1;
  switch (number(json_object_get(t, "limit"), &lim)) {
    case Num::Unset:
    case Num::Infinite: j.unlimited = true; break;
    case Num::Bad: *why = "time.limit is not a number"; return false;
    case Num::Value:
      // NO_VAL / INFINITE as raw 32-bit values (older dumps).
      if (lim == 0xfffffffeLL || lim == 0xffffffffLL) {
        j.unlimited = true;
      } else if (lim < 0 || lim > (std::int64_t(1) << 31)) {
        *why = "time.limit " + std::to_string(lim) + " is out of range";
        return false;
      } else {
        j.limit_min = lim;
      }
  }
  const std::int64_t alloc = tres_count(job, "allocated", "cpu");
  if (alloc > 0) j.alloc_cpus = alloc;
  std::int64_t req = -1;
  if (!count_field(path(job, "required", "CPUs"), "required.CPUs", &req, why)) return false;
  if (req <= 0) req = tres_count(job, "requested", "cpu");
  j.req_cpus = req > 0 ? req : -1;
  const std::int64_t mem = tres_count(job, "requested", "mem");
  j.req_mem_mb = mem > 0 ? mem : -1;
  *out = std::move(j);
  return true;
}

std::string document_errors(json_t* others) {
  json_t* errs = json_object_get(others, "errors");
  std::string out;
  std::size_t i;
  json_t* e;
  if (!json_is_array(errs)) return out;
  json_array_foreach(errs, i, e) {
    json_t* d = json_object_get(e, "description");
    json_t* ec = json_object_get(e, "error");
    if ((json_is_string(ec) && std::strncmp(json_string_value(ec), "Nothing found", 13) == 0) ||
        (json_is_string(d) && std::strncmp(json_string_value(d), "Nothing found", 13) == 0))
      continue;
    std::string s = json_is_string(d) ? json_string_value(d) : "";
    if (json_is_string(ec)) s += std::string(s.empty() ? "" : ": ") + json_string_value(ec);
    if (s.empty()) s = "an error without description";
    out += (out.empty() ? "" : "; ") + s;
  }
  return out;
}

bool read_slurm_conf(const std::string& path, std::map<std::string, std::string>* out) {
  std::ifstream f(path);
  if (!f) return false;
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
  };
  std::string line;
  while (std::getline(f, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    trim(k);
    trim(v);
    if (k.find(' ') != std::string::npos) continue;  // NodeName=... lines have spaces later
    for (char& c : k) c = char(std::tolower(static_cast<unsigned char>(c)));
    (*out)[k] = v;
  }
  return true;
}

}  // namespace easypp::import
