#include "report.h"

#include "safe_file.h"

#include <jansson.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace easypp::report {

namespace {

double pct_change(double x, double base) {
  if (base == 0) return 0;
  return 100.0 * (x - base) / base;
}

std::string fmt(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

std::string signed_pct(double v) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << v << "%";
  return o.str();
}

double jobs_per_second(const RunResult& r) {
  return r.stats.elapsed_seconds > 0 ? double(r.jobs.size()) / r.stats.elapsed_seconds : 0;
}

void print_input(std::ostream& os, const Workload& w, double read_seconds) {
  const WorkloadReport& r = w.report;
  os << "workload: " << w.source << "\n";
  os << "  " << r.jobs << " jobs simulated on " << w.procs << " processors (";
  if (w.source.rfind("synthetic", 0) == 0)
    os << "generated";
  else
    os << "read " << r.records << " records from " << r.lines << " lines";
  os << " in " << fmt(read_seconds, 2) << " s)\n";
  const std::uint64_t dropped = r.dropped_submit + r.dropped_runtime + r.dropped_size + r.dropped_too_wide;
  if (r.malformed || dropped)
    os << "  skipped: " << r.malformed << " malformed lines; dropped: " << r.dropped_submit
       << " submit<0, " << r.dropped_runtime << " runtime<0, " << r.dropped_size << " no size, "
       << r.dropped_too_wide << " wider than the machine\n";
  if (r.estimate_missing)
    os << "  " << r.estimate_missing << " jobs without an estimate got " << r.default_estimate << " s\n";
  if (r.runtime_over_estimate)
    os << "  " << r.runtime_over_estimate << " jobs ran longer than their estimate ("
       << (r.runtime_clipped ? "clipped" : "kept") << ")\n";
  if (r.unsorted) os << "  " << r.unsorted << " records were out of submit order (sorted)\n";
  if (r.made_unknown)
    os << "  " << r.made_unknown << " absurd values in optional fields taken as unknown (jobs kept)\n";
  if (r.load_scale != 1.0)
    os << "  interarrival times x" << fmt(r.load_scale, 4) << " (offered load "
       << fmt(r.offered_load_before, 3) << " before scaling)\n";
  if (r.flurry_jobs)
    os << "  flurries: " << r.flurry_jobs << " jobs of " << r.flurry_users << " users\n";
}

void print_runs(std::ostream& os, const std::vector<Run>& runs, bool flurry_free) {
  const Metrics& base = flurry_free ? runs[0].without_flurries : runs[0].metrics;
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size());
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(10)
     << "wait(min)" << std::setw(9) << "vs first" << std::setw(9) << "bsld" << std::setw(9)
     << "vs first" << std::setw(9) << "maxw(h)" << std::setw(8) << "acc(%)" << std::setw(10) << "corr/job" << std::setw(7)
     << "util" << std::setw(7) << "bf(%)" << std::setw(9) << "run(s)" << std::setw(11)
     << "jobs/s" << "\n";
  for (const Run& r : runs) {
    const Metrics& m = flurry_free ? r.without_flurries : r.metrics;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right
       << std::setw(10) << fmt(m.avg_wait_minutes, 1) << std::setw(9)
       << signed_pct(pct_change(m.avg_wait_minutes, base.avg_wait_minutes)) << std::setw(9)
       << fmt(m.avg_bounded_slowdown, 2) << std::setw(9)
       << signed_pct(pct_change(m.avg_bounded_slowdown, base.avg_bounded_slowdown))
       << std::setw(9) << fmt(m.max_wait_minutes / 60.0, 1) << std::setw(8)
       << fmt(m.avg_accuracy_percent, 1) << std::setw(10)
       << fmt(m.corrections_per_job, 3) << std::setw(7) << fmt(m.utilization, 3) << std::setw(7)
       << fmt(m.backfilled_percent, 1) << std::setw(9) << fmt(r.result->stats.elapsed_seconds, 3)
       << std::setw(11) << std::llround(jobs_per_second(*r.result)) << "\n";
  }
}

json_t* metrics_json(const Metrics& m) {
  json_t* o = json_object();
  json_object_set_new(o, "jobs_simulated", json_integer(json_int_t(m.jobs_simulated)));
  json_object_set_new(o, "jobs_measured", json_integer(json_int_t(m.jobs_measured)));
  json_object_set_new(o, "jobs_after_last_arrival", json_integer(json_int_t(m.jobs_after_last_arrival)));
  json_object_set_new(o, "max_wait_minutes", json_real(m.max_wait_minutes));
  json_object_set_new(o, "p99_wait_minutes", json_real(m.p99_wait_minutes));
  json_object_set_new(o, "wide_jobs", json_integer(json_int_t(m.wide_jobs)));
  json_object_set_new(o, "wide_avg_wait_minutes", json_real(m.wide_avg_wait_minutes));
  json_object_set_new(o, "wide_max_wait_minutes", json_real(m.wide_max_wait_minutes));
  json_object_set_new(o, "avg_wait_minutes", json_real(m.avg_wait_minutes));
  json_object_set_new(o, "avg_response_minutes", json_real(m.avg_response_minutes));
  json_object_set_new(o, "avg_bounded_slowdown", json_real(m.avg_bounded_slowdown));
  json_object_set_new(o, "avg_accuracy_percent", json_real(m.avg_accuracy_percent));
  json_object_set_new(o, "corrections_per_job", json_real(m.corrections_per_job));
  json_object_set_new(o, "corrections_stddev", json_real(m.corrections_stddev));
  json_object_set_new(o, "backfilled_percent", json_real(m.backfilled_percent));
  json_object_set_new(o, "utilization", json_real(m.utilization));
  json_object_set_new(o, "offered_load", json_real(m.offered_load));
  json_object_set_new(o, "window_start", json_integer(m.window_start));
  json_object_set_new(o, "window_end", json_integer(m.window_end));
  const Predictability& p = m.predictability;
  json_t* pj = json_object();
  json_object_set_new(pj, "reserved_jobs", json_integer(json_int_t(p.reserved_jobs)));
  json_object_set_new(pj, "rate_percent", json_real(p.rate_percent));
  json_object_set_new(pj, "mean_abs_deviation_minutes", json_real(p.mean_abs_dev_minutes));
  json_object_set_new(pj, "median_abs_deviation_minutes", json_real(p.median_abs_dev_minutes));
  json_object_set_new(pj, "stddev_abs_deviation_minutes", json_real(p.stddev_abs_dev_minutes));
  json_object_set_new(pj, "late_jobs", json_integer(json_int_t(p.late_jobs)));
  json_object_set_new(pj, "late_rate_percent", json_real(p.late_rate_percent));
  json_object_set_new(pj, "late_mean_minutes", json_real(p.late_mean_minutes));
  json_object_set_new(pj, "late_median_minutes", json_real(p.late_median_minutes));
  json_object_set_new(o, "predictability", pj);
  json_t* cats = json_array();
  for (const CategoryMetrics& c : m.categories) {
    json_t* cj = json_object();
    json_object_set_new(cj, "category", json_string(c.name.c_str()));
    json_object_set_new(cj, "jobs", json_integer(json_int_t(c.jobs)));
    json_object_set_new(cj, "avg_wait_minutes", json_real(c.avg_wait_minutes));
    json_object_set_new(cj, "avg_bounded_slowdown", json_real(c.avg_bounded_slowdown));
    json_object_set_new(cj, "avg_accuracy_percent", json_real(c.avg_accuracy_percent));
    json_object_set_new(cj, "max_bounded_slowdown", json_real(c.max_bounded_slowdown));
    json_array_append_new(cats, cj);
  }
  json_object_set_new(o, "categories", cats);
  // Srinivasan et al.'s bins: <= 1, 1-1.5, 1.5-2, 2-4, > 4.
  auto bins = [](const double (&h)[5]) {
    json_t* a = json_array();
    for (double v : h) json_array_append_new(a, json_real(v));
    return a;
  };
  json_object_set_new(o, "bsld_histogram_percent", bins(m.bsld_histogram));
  if (m.fairness.computed) {
    const Fairness& f = m.fairness;
    json_t* fj = json_object();
    json_object_set_new(fj, "late_jobs", json_integer(json_int_t(f.late_jobs)));
    json_object_set_new(fj, "late_percent", json_real(f.late_percent));
    json_object_set_new(fj, "late_avg_minutes", json_real(f.late_avg_minutes));
    json_object_set_new(fj, "late_max_minutes", json_real(f.late_max_minutes));
    json_object_set_new(fj, "bsld_over_fair_histogram_percent", bins(f.ratio_histogram));
    json_object_set_new(o, "fairness", fj);
  }
  return o;
}

// The scalar metrics, by their JSON names: the "shaken" object summarizes
// each of them over the copies.
struct Field {
  const char* name;
  double (*get)(const Metrics&);
};
const Field kFields[] = {
    {"jobs_measured", [](const Metrics& m) { return double(m.jobs_measured); }},
    {"jobs_after_last_arrival", [](const Metrics& m) { return double(m.jobs_after_last_arrival); }},
    {"max_wait_minutes", [](const Metrics& m) { return m.max_wait_minutes; }},
    {"p99_wait_minutes", [](const Metrics& m) { return m.p99_wait_minutes; }},
    {"wide_jobs", [](const Metrics& m) { return double(m.wide_jobs); }},
    {"wide_avg_wait_minutes", [](const Metrics& m) { return m.wide_avg_wait_minutes; }},
    {"wide_max_wait_minutes", [](const Metrics& m) { return m.wide_max_wait_minutes; }},
    {"avg_wait_minutes", [](const Metrics& m) { return m.avg_wait_minutes; }},
    {"avg_response_minutes", [](const Metrics& m) { return m.avg_response_minutes; }},
    {"avg_bounded_slowdown", [](const Metrics& m) { return m.avg_bounded_slowdown; }},
    {"avg_accuracy_percent", [](const Metrics& m) { return m.avg_accuracy_percent; }},
    {"corrections_per_job", [](const Metrics& m) { return m.corrections_per_job; }},
    {"corrections_stddev", [](const Metrics& m) { return m.corrections_stddev; }},
    {"backfilled_percent", [](const Metrics& m) { return m.backfilled_percent; }},
    {"utilization", [](const Metrics& m) { return m.utilization; }},
    {"offered_load", [](const Metrics& m) { return m.offered_load; }},
};
const Field kPredictabilityFields[] = {
    {"reserved_jobs", [](const Metrics& m) { return double(m.predictability.reserved_jobs); }},
    {"rate_percent", [](const Metrics& m) { return m.predictability.rate_percent; }},
    {"mean_abs_deviation_minutes", [](const Metrics& m) { return m.predictability.mean_abs_dev_minutes; }},
    {"median_abs_deviation_minutes", [](const Metrics& m) { return m.predictability.median_abs_dev_minutes; }},
    {"stddev_abs_deviation_minutes", [](const Metrics& m) { return m.predictability.stddev_abs_dev_minutes; }},
    {"late_jobs", [](const Metrics& m) { return double(m.predictability.late_jobs); }},
    {"late_rate_percent", [](const Metrics& m) { return m.predictability.late_rate_percent; }},
    {"late_mean_minutes", [](const Metrics& m) { return m.predictability.late_mean_minutes; }},
    {"late_median_minutes", [](const Metrics& m) { return m.predictability.late_median_minutes; }},
};
// Copy values kept in the JSON for the spread chart.
const char* const kPerCopy[] = {"avg_wait_minutes", "avg_bounded_slowdown", "max_wait_minutes",
                                "p99_wait_minutes"};

double field(const char* name, const Metrics& m) {
  for (const Field& f : kFields)
    if (std::strcmp(f.name, name) == 0) return f.get(m);
  return 0;
}

std::vector<double> values(const std::vector<Metrics>& ms, double (*get)(const Metrics&)) {
  std::vector<double> v;
  v.reserve(ms.size());
  for (const Metrics& m : ms) v.push_back(get(m));
  return v;
}

// Paired change of scheduler s against the first, in percent, per copy.
std::vector<double> paired_change(const ShakeResult& sr, std::size_t s, double (*get)(const Metrics&)) {
  std::vector<double> v;
  for (std::size_t i = 0; i < sr.metrics[s].size(); ++i)
    v.push_back(pct_change(get(sr.metrics[s][i]), get(sr.metrics[0][i])));
  return v;
}

// Copies in which scheduler s is strictly lower than the first.
std::size_t wins(const ShakeResult& sr, std::size_t s, double (*get)(const Metrics&)) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < sr.metrics[s].size(); ++i)
    if (get(sr.metrics[s][i]) < get(sr.metrics[0][i])) ++n;
  return n;
}

double get_wait(const Metrics& m) { return m.avg_wait_minutes; }
double get_bsld(const Metrics& m) { return m.avg_bounded_slowdown; }

json_t* spread_json(const Spread& sp) {
  json_t* o = json_object();
  json_object_set_new(o, "mean", json_real(sp.mean));
  json_object_set_new(o, "sd", json_real(sp.sd));
  json_object_set_new(o, "min", json_real(sp.min));
  json_object_set_new(o, "max", json_real(sp.max));
  json_t* ci = json_array();
  json_array_append_new(ci, json_real(sp.ci_low));
  json_array_append_new(ci, json_real(sp.ci_high));
  json_object_set_new(o, "ci95", ci);
  return o;
}

json_t* reals(const std::vector<double>& v) {
  json_t* a = json_array();
  for (double x : v) json_array_append_new(a, json_real(x));
  return a;
}

// The "shaken" object of run s.
json_t* shaken_json(const ShakeResult& sr, std::size_t s) {
  const std::vector<Metrics>& ms = sr.metrics[s];
  json_t* o = json_object();
  json_object_set_new(o, "copies", json_integer(json_int_t(ms.size())));
  for (const Field& f : kFields) json_object_set_new(o, f.name, spread_json(spread_of(values(ms, f.get))));
  json_t* pj = json_object();
  for (const Field& f : kPredictabilityFields)
    json_object_set_new(pj, f.name, spread_json(spread_of(values(ms, f.get))));
  json_object_set_new(o, "predictability", pj);
  if (s > 0) {
    json_t* w = json_object();
    json_object_set_new(w, "avg_wait_minutes", json_integer(json_int_t(wins(sr, s, get_wait))));
    json_object_set_new(w, "avg_bounded_slowdown", json_integer(json_int_t(wins(sr, s, get_bsld))));
    json_object_set_new(o, "wins_vs_first", w);
    json_t* ch = json_object();
    json_object_set_new(ch, "avg_wait_minutes", spread_json(spread_of(paired_change(sr, s, get_wait))));
    json_object_set_new(ch, "avg_bounded_slowdown", spread_json(spread_of(paired_change(sr, s, get_bsld))));
    json_object_set_new(o, "percent_change_vs_first", ch);
  }
  json_t* pc = json_object();
  for (const char* name : kPerCopy) {
    json_t* a = json_array();
    for (const Metrics& m : ms) json_array_append_new(a, json_real(field(name, m)));
    json_object_set_new(pc, name, a);
  }
  json_object_set_new(o, "per_copy", pc);
  if (!sr.closed_loop.empty()) json_object_set_new(o, "closed_loop", closed_loop_shaken_json(sr, s));
  return o;
}

json_t* shake_json(const ShakeOptions& so, const ShakeResult& sr) {
  json_t* o = json_object();
  json_object_set_new(o, "copies", json_integer(so.copies));
  json_object_set_new(o, "band_percent", json_real(so.band * 100.0));
  json_object_set_new(o, "jitter_seconds", json_integer(so.jitter));
  json_object_set_new(o, "seed", json_integer(json_int_t(so.seed)));
  json_object_set_new(o, "threads", json_integer(sr.threads));
  json_object_set_new(o, "elapsed_seconds", json_real(sr.elapsed_seconds));
  json_object_set_new(o, "load_factors", reals(sr.load_factors));
  json_object_set_new(o, "offered_loads", reals(sr.offered_loads));
  if (!sr.links.empty()) json_object_set_new(o, "links_per_copy", closed_loop_links_json(sr));
  return o;
}

// Per-user rows of run r, with the change against the first run's row.
json_t* users_json(const Metrics& m, const Metrics& first) {
  json_t* a = json_array();
  std::size_t k = 0;  // both sorted by user id
  for (const UserMetrics& u : m.users) {
    while (k < first.users.size() && first.users[k].user < u.user) ++k;
    const UserMetrics* b = (k < first.users.size() && first.users[k].user == u.user) ? &first.users[k] : nullptr;
    json_t* o = json_object();
    json_object_set_new(o, "user", json_integer(u.user));
    json_object_set_new(o, "jobs", json_integer(json_int_t(u.jobs)));
    json_object_set_new(o, "avg_wait_minutes", json_real(u.avg_wait_minutes));
    json_object_set_new(o, "avg_bounded_slowdown", json_real(u.avg_bounded_slowdown));
    json_t* ch = json_object();
    json_object_set_new(ch, "avg_wait_minutes",
                        b && b->avg_wait_minutes > 0 ? json_real(pct_change(u.avg_wait_minutes, b->avg_wait_minutes))
                                                     : (b && u.avg_wait_minutes == 0 ? json_real(0) : json_null()));
    json_object_set_new(ch, "avg_bounded_slowdown",
                        b ? json_real(pct_change(u.avg_bounded_slowdown, b->avg_bounded_slowdown)) : json_null());
    json_object_set_new(o, "percent_change_vs_first", ch);
    json_array_append_new(a, o);
  }
  return a;
}

json_t* input_json(const Workload& w, double read_seconds) {
  const WorkloadReport& r = w.report;
  json_t* o = json_object();
  json_object_set_new(o, "source", json_string(w.source.c_str()));
  json_object_set_new(o, "procs", json_integer(w.procs));
  json_object_set_new(o, "lines", json_integer(json_int_t(r.lines)));
  json_object_set_new(o, "records", json_integer(json_int_t(r.records)));
  json_object_set_new(o, "jobs", json_integer(json_int_t(r.jobs)));
  json_object_set_new(o, "read_seconds", json_real(read_seconds));
  json_t* sk = json_object();
  json_object_set_new(sk, "malformed_lines", json_integer(json_int_t(r.malformed)));
  json_object_set_new(sk, "submit_negative", json_integer(json_int_t(r.dropped_submit)));
  json_object_set_new(sk, "runtime_negative", json_integer(json_int_t(r.dropped_runtime)));
  json_object_set_new(sk, "no_size", json_integer(json_int_t(r.dropped_size)));
  json_object_set_new(sk, "wider_than_machine", json_integer(json_int_t(r.dropped_too_wide)));
  json_object_set_new(o, "dropped", sk);
  json_t* ad = json_object();
  json_object_set_new(ad, "estimate_missing", json_integer(json_int_t(r.estimate_missing)));
  json_object_set_new(ad, "default_estimate", json_integer(r.default_estimate));
  json_object_set_new(ad, "runtime_over_estimate", json_integer(json_int_t(r.runtime_over_estimate)));
  json_object_set_new(ad, "runtime_clipped", json_integer(json_int_t(r.runtime_clipped)));
  json_object_set_new(ad, "unsorted_sorted", json_integer(json_int_t(r.unsorted)));
  json_object_set_new(ad, "absurd_values_made_unknown", json_integer(json_int_t(r.made_unknown)));
  json_object_set_new(o, "adjusted", ad);
  json_object_set_new(o, "load_scale", json_real(r.load_scale));
  json_object_set_new(o, "offered_load_before_scaling", json_real(r.offered_load_before));
  json_t* fl = json_object();
  json_object_set_new(fl, "jobs", json_integer(json_int_t(r.flurry_jobs)));
  json_object_set_new(fl, "users", json_integer(json_int_t(r.flurry_users)));
  json_object_set_new(o, "flurries", fl);
  json_t* msgs = json_array();
  for (const auto& d : w.diagnostics) json_array_append_new(msgs, json_string(d.format().c_str()));
  json_object_set_new(o, "messages", msgs);
  return o;
}

}  // namespace

namespace {

std::size_t name_width(const std::vector<Run>& runs) {
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size());
  return namew;
}

void print_starvation(std::ostream& os, const Workload& w, const std::vector<Run>& runs) {
  const int namew = int(name_width(runs));
  os << "\nstarvation (all simulated jobs; wide: more than " << w.procs / 2 << " processors, "
     << runs[0].metrics.wide_jobs << " jobs):\n";
  os << std::left << std::setw(namew) << "scheduler" << std::right << std::setw(9) << "maxw(h)"
     << std::setw(9) << "p99w(h)" << std::setw(16) << "wide wait(min)" << std::setw(14)
     << "wide maxw(h)" << std::setw(20) << "after last arrival" << "\n";
  for (const Run& r : runs) {
    const Metrics& m = r.metrics;
    os << std::left << std::setw(namew) << r.result->config.name << std::right << std::setw(9)
       << fmt(m.max_wait_minutes / 60.0, 1) << std::setw(9) << fmt(m.p99_wait_minutes / 60.0, 1)
       << std::setw(16) << fmt(m.wide_avg_wait_minutes, 1) << std::setw(14)
       << fmt(m.wide_max_wait_minutes / 60.0, 1) << std::setw(20) << m.jobs_after_last_arrival << "\n";
  }
}

const UserMetrics* find_user(const Metrics& m, UserId u) {
  auto it = std::lower_bound(m.users.begin(), m.users.end(), u,
                             [](const UserMetrics& a, UserId b) { return a.user < b; });
  return it != m.users.end() && it->user == u ? &*it : nullptr;
}

void print_users(std::ostream& os, const std::vector<Run>& runs, std::size_t top) {
  const Metrics& m0 = runs[0].metrics;
  if (top == 0 || m0.users.empty()) return;
  std::vector<const UserMetrics*> by_jobs;
  for (const UserMetrics& u : m0.users) by_jobs.push_back(&u);
  std::stable_sort(by_jobs.begin(), by_jobs.end(),
                   [](const UserMetrics* a, const UserMetrics* b) { return a->jobs > b->jobs; });
  if (by_jobs.size() > top) by_jobs.resize(top);
  const std::string& first = runs[0].result->config.name;
  os << "\nper user (the " << by_jobs.size() << " of " << m0.users.size()
     << " users with the most measured jobs under " << first
     << "; wait min / bsld, change against " << first << "; all users: --json):\n";
  const int colw = 34;
  os << std::right << std::setw(8) << "user" << std::setw(8) << "jobs";
  for (const Run& r : runs) os << std::setw(colw) << r.result->config.name;
  os << "\n";
  for (const UserMetrics* u : by_jobs) {
    os << std::setw(8) << u->user << std::setw(8) << u->jobs;
    for (std::size_t s = 0; s < runs.size(); ++s) {
      const UserMetrics* x = find_user(runs[s].metrics, u->user);
      std::string cell = "-";
      if (x) {
        cell = fmt(x->avg_wait_minutes, 1) + " / " + fmt(x->avg_bounded_slowdown, 2);
        if (s > 0)
          cell += " (" + (u->avg_wait_minutes > 0 ? signed_pct(pct_change(x->avg_wait_minutes, u->avg_wait_minutes)) : std::string("n/a")) +
                  " / " + signed_pct(pct_change(x->avg_bounded_slowdown, u->avg_bounded_slowdown)) + ")";
      }
      os << std::setw(colw) << cell;
    }
    os << "\n";
  }
  for (std::size_t s = 1; s < runs.size(); ++s) {
    std::size_t better = 0, worse = 0, both = 0;
    for (const UserMetrics& u : m0.users) {
      const UserMetrics* x = find_user(runs[s].metrics, u.user);
      if (!x) continue;
      ++both;
      if (x->avg_bounded_slowdown < u.avg_bounded_slowdown) ++better;
      else if (x->avg_bounded_slowdown > u.avg_bounded_slowdown) ++worse;
    }
    os << "  " << runs[s].result->config.name << ": " << better << " of " << both
       << " users have a lower bsld than under " << first << ", " << worse << " a higher one\n";
  }
}

// "mean+-half" of the 95% interval.
std::string pm(const Spread& sp, int prec) {
  return fmt(sp.mean, prec) + " +- " + fmt(sp.half_width(), prec);
}

std::string pm_pct(const Spread& sp) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << sp.mean << std::noshowpos << "% +- "
    << sp.half_width();
  return o.str();
}

// Per-job improvement factors against the first run (Petrou).
void print_improvement(std::ostream& os, const std::vector<Run>& runs) {
  if (runs.size() < 2) return;
  const std::string first = runs[0].result->config.name;
  os << "\nper-job improvement factor against " << first << " (" << first
     << "'s value / this one's, jobs measured in both; > 1: better):\n";
  const int namew = int(name_width(runs));
  os << std::left << std::setw(namew) << "scheduler" << std::right << std::setw(8) << "jobs"
     << std::setw(11) << "resp geo" << std::setw(9) << "median" << std::setw(10) << "better%"
     << std::setw(9) << "worse%" << std::setw(11) << "bsld geo" << std::setw(9) << "median"
     << std::setw(10) << "better%" << std::setw(9) << "worse%" << "\n";
  auto median = [](const FactorDistribution& d) {
    return d.quantiles.empty() ? 0.0 : d.quantiles[d.quantiles.size() / 2];
  };
  for (std::size_t s = 1; s < runs.size(); ++s) {
    if (!runs[s].has_improvement) continue;
    const Improvement& im = runs[s].improvement;
    os << std::left << std::setw(namew) << runs[s].result->config.name << std::right << std::setw(8)
       << im.jobs << std::setw(11) << fmt(im.response.geometric_mean, 3) << std::setw(9)
       << fmt(median(im.response), 3) << std::setw(10) << fmt(im.response.better_percent, 1)
       << std::setw(9) << fmt(im.response.worse_percent, 1) << std::setw(11)
       << fmt(im.bounded_slowdown.geometric_mean, 3) << std::setw(9)
       << fmt(median(im.bounded_slowdown), 3) << std::setw(10)
       << fmt(im.bounded_slowdown.better_percent, 1) << std::setw(9)
       << fmt(im.bounded_slowdown.worse_percent, 1) << "\n";
  }
}

json_t* factors_json(const FactorDistribution& d) {
  json_t* o = json_object();
  json_object_set_new(o, "mean", json_real(d.mean));
  json_object_set_new(o, "geometric_mean", json_real(d.geometric_mean));
  json_object_set_new(o, "better_percent", json_real(d.better_percent));
  json_object_set_new(o, "same_percent", json_real(d.same_percent));
  json_object_set_new(o, "worse_percent", json_real(d.worse_percent));
  json_t* q = json_array();
  for (double x : d.quantiles) json_array_append_new(q, json_real(x));
  json_object_set_new(o, "quantiles", q);
  return o;
}

json_t* improvement_json(const Improvement& im) {
  json_t* o = json_object();
  json_object_set_new(o, "jobs", json_integer(json_int_t(im.jobs)));
  json_object_set_new(o, "response", factors_json(im.response));
  json_object_set_new(o, "bounded_slowdown", factors_json(im.bounded_slowdown));
  return o;
}

void print_shaken(std::ostream& os, const Report& rep) {
  const ShakeResult& sr = *rep.shaken;
  const ShakeOptions& so = *rep.shake;
  const std::vector<Run>& runs = rep.runs;
  const std::size_t n = sr.load_factors.size();
  const auto [lo, hi] = std::minmax_element(sr.offered_loads.begin(), sr.offered_loads.end());
  os << "\nshaken: " << n << " copies, offered load x" << fmt(sr.load_factors.front(), 4) << " to x"
     << fmt(sr.load_factors.back(), 4) << " (" << fmt(*lo, 3) << " to " << fmt(*hi, 3) << ")";
  if (so.jitter > 0) os << ", submit times jittered by up to +-" << so.jitter << " s (seed " << so.seed << ")";
  os << "; " << n * runs.size() << " replays in " << fmt(sr.elapsed_seconds, 2) << " s on " << sr.threads
     << (sr.threads == 1 ? " thread" : " threads") << "\n";
  os << "mean +- half-width of the 95% confidence interval (Student's t); vs first: paired change;\n"
     << "wins: copies in which the scheduler beats " << runs[0].result->config.name << "\n";
  const int namew = int(name_width(runs));
  // Cells are separated by at least one space, however wide the numbers.
  auto row = [&](const std::string& name, const std::vector<std::string>& cells) {
    static const int widths[] = {16, 16, 6, 16, 16, 6, 15, 14};
    os << std::left << std::setw(namew) << name << std::right;
    for (std::size_t c = 0; c < cells.size(); ++c) os << ' ' << std::setw(widths[c]) << cells[c];
    os << "\n";
  };
  row("scheduler", {"wait(min)", "vs first", "wins", "bsld", "vs first", "wins", "maxw(h)", "p99w(h)"});
  for (std::size_t s = 0; s < runs.size(); ++s) {
    const std::vector<Metrics>& ms = sr.metrics[s];
    auto sp = [&](double (*get)(const Metrics&)) { return spread_of(values(ms, get)); };
    const Spread maxw = sp([](const Metrics& m) { return m.max_wait_minutes / 60.0; });
    const Spread p99 = sp([](const Metrics& m) { return m.p99_wait_minutes / 60.0; });
    const std::string total = "/" + std::to_string(n);
    row(runs[s].result->config.name,
        {pm(sp(get_wait), 1), s ? pm_pct(spread_of(paired_change(sr, s, get_wait))) : "",
         s ? std::to_string(wins(sr, s, get_wait)) + total : "-", pm(sp(get_bsld), 2),
         s ? pm_pct(spread_of(paired_change(sr, s, get_bsld))) : "",
         s ? std::to_string(wins(sr, s, get_bsld)) + total : "-", pm(maxw, 1), pm(p99, 1)});
  }
  print_closed_loop_shaken(os, runs, sr);  // feedback runs only
}

// Srinivasan et al.'s figures: worst-case bsld per category, the bsld
// histogram, and fairness by fair start time.
void print_selective_figures(std::ostream& os, const std::vector<Run>& runs) {
  const std::size_t namew = name_width(runs);
  const Metrics& m0 = runs[0].metrics;
  os << "\nper category, worst bsld:\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const auto& c : m0.categories) os << std::setw(14) << c.name;
  os << "\n";
  for (const Run& r : runs) {
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (const auto& c : r.metrics.categories) os << std::setw(14) << fmt(c.max_bounded_slowdown, 1);
    os << "\n";
  }
  const char* bins[5] = {"<=1", "1-1.5", "1.5-2", "2-4", ">4"};
  const bool fair = m0.fairness.computed;
  if (fair)
    os << "\nbsld histogram (% of measured jobs) | bsld / fair bsld (%), fair start: FCFS without "
          "backfilling from the job's arrival\n";
  else
    os << "\nbsld histogram (% of measured jobs; fairness by fair start time: --fairness)\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const char* b : bins) os << std::setw(7) << b;
  if (fair) {
    os << "  |";
    for (const char* b : bins) os << std::setw(7) << b;
    os << std::setw(9) << "late(%)" << std::setw(11) << "late mean" << std::setw(10) << "late max";
  }
  os << "\n";
  for (const Run& r : runs) {
    const Metrics& m = r.metrics;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (double v : m.bsld_histogram) os << std::setw(7) << fmt(v, 1);
    if (!fair) {
      os << "\n";
      continue;
    }
    os << "  |";
    for (double v : m.fairness.ratio_histogram) os << std::setw(7) << fmt(v, 1);
    os << std::setw(9) << fmt(m.fairness.late_percent, 1) << std::setw(11)
       << fmt(m.fairness.late_avg_minutes, 1) << std::setw(10) << fmt(m.fairness.late_max_minutes, 1)
       << "\n";
  }
}

}  // namespace

void print_text(std::ostream& os, const Report& rep) {
  const Workload& w = *rep.workload;
  const std::vector<Run>& runs = rep.runs;
  print_input(os, w, rep.read_seconds);
  if (rep.sim && rep.sim->pass_per_event) os << "  a scheduling pass after each event (--pass-per-event)\n";
  if (rep.sim && !rep.sim->pass_after_correction)
    os << "  no pass after corrections alone (--no-correction-pass)\n";
  if (runs.empty()) return;
  const Metrics& m0 = runs[0].metrics;
  os << "  measured " << m0.jobs_measured << " jobs; offered load " << fmt(m0.offered_load, 3)
     << " over the measured window\n\n";
  print_runs(os, runs, false);
  if (runs[0].has_closed_loop) print_closed_loop(os, runs);
  if (runs[0].has_without_flurries) {
    os << "\nwithout flurry jobs (" << runs[0].without_flurries.jobs_measured << " measured):\n";
    print_runs(os, runs, true);
  }
  print_starvation(os, w, runs);
  os << "\nper category (wait min / bsld / acc%):\n";
  const std::size_t namew = name_width(runs);
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const auto& c : m0.categories) os << std::setw(24) << (c.name + " (" + std::to_string(c.jobs) + ")");
  os << "\n";
  for (const Run& r : runs) {
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (const auto& c : r.metrics.categories)
      os << std::setw(24)
         << (fmt(c.avg_wait_minutes, 1) + " / " + fmt(c.avg_bounded_slowdown, 1) + " / " +
             fmt(c.avg_accuracy_percent, 0));
    os << "\n";
  }
  print_selective_figures(os, runs);
  os << "\npredictability (head reservations vs actual start, minutes):\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(9) << "rate(%)"
     << std::setw(10) << "mean|dev|" << std::setw(10) << "median" << std::setw(9) << "stddev"
     << std::setw(9) << "late(%)" << std::setw(11) << "late mean" << std::setw(12) << "late median" << "\n";
  for (const Run& r : runs) {
    const Predictability& p = r.metrics.predictability;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right << std::setw(9)
       << fmt(p.rate_percent, 1) << std::setw(10) << fmt(p.mean_abs_dev_minutes, 1) << std::setw(10)
       << fmt(p.median_abs_dev_minutes, 1) << std::setw(9) << fmt(p.stddev_abs_dev_minutes, 1)
       << std::setw(9) << fmt(p.late_rate_percent, 1) << std::setw(11) << fmt(p.late_mean_minutes, 1)
       << std::setw(12) << fmt(p.late_median_minutes, 1) << "\n";
  }
  print_users(os, runs, rep.top_users);
  print_improvement(os, runs);
  if (rep.shaken) print_shaken(os, rep);
}

json_t* build_json(const Report& rep) {
  const std::vector<Run>& runs = rep.runs;
  json_t* root = json_object();
  json_object_set_new(root, "input", input_json(*rep.workload, rep.read_seconds));
  const SimOptions sim = rep.sim ? *rep.sim : SimOptions();
  json_object_set_new(root, "simulator",
                      json_pack("{s:b, s:b}", "pass_per_event", int(sim.pass_per_event),
                                "pass_after_correction", int(sim.pass_after_correction)));
  if (rep.shaken) json_object_set_new(root, "shake", shake_json(*rep.shake, *rep.shaken));
  json_t* arr = json_array();
  for (std::size_t s = 0; s < runs.size(); ++s) {
    const Run& r = runs[s];
    json_t* o = metrics_json(r.metrics);
    json_object_set_new(o, "scheduler", json_string(r.result->config.name.c_str()));
    json_object_set_new(o, "knobs", json_string(r.result->config.describe().c_str()));
    json_object_set_new(o, "elapsed_seconds", json_real(r.result->stats.elapsed_seconds));
    json_object_set_new(o, "jobs_per_second", json_real(jobs_per_second(*r.result)));
    json_object_set_new(o, "scheduling_passes", json_integer(json_int_t(r.result->stats.passes)));
    json_object_set_new(o, "max_queue_length", json_integer(json_int_t(r.result->stats.max_queue)));
    json_object_set_new(o, "candidates_tested", json_integer(json_int_t(r.result->stats.tested)));
    json_object_set_new(o, "passes_continued", json_integer(json_int_t(r.result->stats.continued)));
    json_object_set_new(o, "corrections", json_integer(json_int_t(r.result->stats.corrections)));
    const Metrics& b = runs[0].metrics;
    json_t* ch = json_object();
    json_object_set_new(ch, "avg_wait_minutes", json_real(pct_change(r.metrics.avg_wait_minutes, b.avg_wait_minutes)));
    json_object_set_new(ch, "avg_bounded_slowdown", json_real(pct_change(r.metrics.avg_bounded_slowdown, b.avg_bounded_slowdown)));
    json_object_set_new(o, "percent_change_vs_first", ch);
    json_object_set_new(o, "users", users_json(r.metrics, b));
    if (r.has_without_flurries) json_object_set_new(o, "without_flurries", metrics_json(r.without_flurries));
    if (rep.shaken) json_object_set_new(o, "shaken", shaken_json(*rep.shaken, s));
    if (r.has_improvement) json_object_set_new(o, "improvement_vs_first", improvement_json(r.improvement));
    if (r.has_closed_loop) json_object_set_new(o, "closed_loop", closed_loop_json(r));
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "runs", arr);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  json_object_set_new(root, "peak_rss_mb", json_real(double(ru.ru_maxrss) / 1024.0));
  // The process's CPU time so far (every thread: the gzip reader's too).
  const double cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  json_object_set_new(root, "cpu_seconds", json_real(cpu));
  return root;
}

bool print_json(std::ostream& os, const Report& rep) {
  json_t* root = build_json(rep);
  char* s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!s) return false;
  os << s << "\n";
  std::free(s);
  return bool(os);
}

json_t* series_json(const RunSeries& s) {
  auto points = [](const std::vector<SeriesPoint>& v) {
    json_t* xs = json_array();
    json_t* ys = json_array();
    for (const SeriesPoint& p : v) {
      json_array_append_new(xs, json_real(p.x));
      json_array_append_new(ys, json_real(p.y));
    }
    json_t* o = json_object();
    json_object_set_new(o, "x", xs);
    json_object_set_new(o, "y", ys);
    return o;
  };
  json_t* o = json_object();
  json_object_set_new(o, "running_bsld", points(s.running_bsld));
  json_object_set_new(o, "wait_cdf", points(s.wait_cdf));
  json_object_set_new(o, "queue_length", points(s.queue_length));
  json_t* h = json_array();
  for (std::uint64_t c : s.accuracy_hist) json_array_append_new(h, json_integer(json_int_t(c)));
  json_object_set_new(o, "accuracy_hist", h);
  return o;
}

// The schedule is built whole, then written by safe_file.h's protocol: a
// full disk or a crash leaves the old file, never a truncated one; mode
// 0666 less the umask, as any file the user creates.
void write_swf(const std::string& path, const Workload& w, const RunResult& r) {
  std::string text = swf::format_header(w.header);
  text += "; Note: simulated by easypp-sim, scheduler " + r.config.name + " (" + r.config.describe() + ")\n";
  // In job-number order, as the input.
  std::vector<std::size_t> order(w.jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return w.jobs[a].record < w.jobs[b].record;
  });
  for (std::size_t i : order) {
    const Job& j = w.jobs[i];
    swf::Record rec;
    if (j.record < w.records.size()) rec = w.records[j.record];
    rec.job = std::int64_t(j.id);
    rec.submit = j.submit;
    rec.wait = r.jobs[i].start - j.submit;
    rec.run = j.runtime;
    rec.alloc_procs = j.size;
    rec.req_time = j.estimate;
    rec.user = j.user;
    text += swf::format_record(rec);
    text += '\n';
  }
  if (path == "-") {
    const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() &&
                    std::fflush(stdout) == 0;
    if (!ok) throw std::runtime_error("cannot write the schedule to standard output: " +
                                      std::string(std::strerror(errno)));
    return;
  }
  std::string err;
  if (!plugin::write_file_safely(path, text, plugin::kModeFromUmask, {}, &err,
                                 plugin::DirCheck::kWhenRoot))
    throw std::runtime_error(err);
}

}  // namespace easypp::report
