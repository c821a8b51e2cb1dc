// The closed-loop section of easypp-sim's report (--feedback): kept apart
// from report.cc, which the open replay's figures fill.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "report.h"

namespace easypp::report {

namespace {

std::string fixed(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

std::string change(double v, double base) {
  if (base == 0) return "";
  const double c = 100.0 * (v - base) / base;
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << c << "%";
  return o.str();
}

// Shaken closed-loop copies: one figure of every copy of scheduler s.
using ClosedGet = double (*)(const ClosedLoopMetrics&);
double get_throughput(const ClosedLoopMetrics& m) { return m.throughput_per_hour; }
double get_session_jobs(const ClosedLoopMetrics& m) { return m.avg_session_jobs; }

std::vector<double> closed_values(const ShakeResult& sr, std::size_t s, ClosedGet get) {
  std::vector<double> v;
  for (const ClosedLoopMetrics& m : sr.closed_loop[s]) v.push_back(get(m));
  return v;
}
// Paired change against the first scheduler's same copy, in percent.
std::vector<double> closed_change(const ShakeResult& sr, std::size_t s, ClosedGet get) {
  std::vector<double> v;
  for (std::size_t i = 0; i < sr.closed_loop[s].size(); ++i) {
    const double b = get(sr.closed_loop[0][i]);
    v.push_back(b == 0 ? 0 : 100.0 * (get(sr.closed_loop[s][i]) - b) / b);
  }
  return v;
}
// Copies in which scheduler s has strictly more than the first (more
// throughput, longer sessions: the closed system's "better").
std::size_t closed_more(const ShakeResult& sr, std::size_t s, ClosedGet get) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < sr.closed_loop[s].size(); ++i)
    n += get(sr.closed_loop[s][i]) > get(sr.closed_loop[0][i]);
  return n;
}
std::string pm(const Spread& sp, int prec) {
  return fixed(sp.mean, prec) + " +- " + fixed(sp.half_width(), prec);
}
std::string pm_pct(const Spread& sp) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << sp.mean << std::noshowpos << "% +- "
    << sp.half_width();
  return o.str();
}
json_t* spread_object(const Spread& sp) {
  return json_pack("{s:f, s:f, s:f, s:f, s:[f, f]}", "mean", sp.mean, "sd", sp.sd, "min", sp.min,
                   "max", sp.max, "ci95", sp.ci_low, sp.ci_high);
}

}  // namespace

void print_closed_loop_shaken(std::ostream& os, const std::vector<Run>& runs, const ShakeResult& sr) {
  if (sr.closed_loop.empty() || runs.empty()) return;
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size());
  const std::size_t n = sr.closed_loop[0].size();
  std::uint64_t linked_lo = ~std::uint64_t(0), linked_hi = 0, back_lo = ~std::uint64_t(0), back_hi = 0;
  for (const FeedbackReport& f : sr.links) {
    linked_lo = std::min(linked_lo, f.linked);
    linked_hi = std::max(linked_hi, f.linked);
    back_lo = std::min(back_lo, f.fallbacks());
    back_hi = std::max(back_hi, f.fallbacks());
  }
  auto range = [](std::uint64_t lo, std::uint64_t hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  };
  os << "\nclosed loop, shaken: in each copy " << range(linked_lo, linked_hi)
     << " jobs follow their preceding job, " << range(back_lo, back_hi)
     << " fall back to their logged submit time\n"
     << "more: copies in which the scheduler has more than " << runs[0].result->config.name << "\n";
  auto row = [&](const std::string& name, const std::vector<std::string>& cells) {
    static const int widths[] = {16, 16, 6, 14, 16, 6, 18};
    os << std::left << std::setw(int(namew)) << name << std::right;
    for (std::size_t c = 0; c < cells.size(); ++c) os << ' ' << std::setw(widths[c]) << cells[c];
    os << "\n";
  };
  row("scheduler", {"jobs/h", "vs first", "more", "jobs/session", "vs first", "more", "submitted"});
  for (std::size_t s = 0; s < runs.size() && s < sr.closed_loop.size(); ++s) {
    const std::string total = "/" + std::to_string(n);
    const Spread sub = spread_of(closed_values(
        sr, s, [](const ClosedLoopMetrics& m) { return double(m.jobs_submitted); }));
    row(runs[s].result->config.name,
        {pm(spread_of(closed_values(sr, s, get_throughput)), 2),
         s ? pm_pct(spread_of(closed_change(sr, s, get_throughput))) : "",
         s ? std::to_string(closed_more(sr, s, get_throughput)) + total : "-",
         pm(spread_of(closed_values(sr, s, get_session_jobs)), 2),
         s ? pm_pct(spread_of(closed_change(sr, s, get_session_jobs))) : "",
         s ? std::to_string(closed_more(sr, s, get_session_jobs)) + total : "-", pm(sub, 0)});
  }
}

json_t* closed_loop_shaken_json(const ShakeResult& sr, std::size_t s) {
  json_t* o = json_object();
  const struct {
    const char* name;
    ClosedGet get;
  } fields[] = {
      {"jobs_submitted", [](const ClosedLoopMetrics& m) { return double(m.jobs_submitted); }},
      {"jobs_not_submitted", [](const ClosedLoopMetrics& m) { return double(m.jobs_not_submitted); }},
      {"span_hours", [](const ClosedLoopMetrics& m) { return m.span_hours; }},
      {"throughput_per_hour", get_throughput},
      {"sessions", [](const ClosedLoopMetrics& m) { return double(m.sessions); }},
      {"avg_session_jobs", get_session_jobs},
  };
  for (const auto& f : fields) json_object_set_new(o, f.name, spread_object(spread_of(closed_values(sr, s, f.get))));
  json_t* classes = json_array();
  for (int c = 0; c < 3; ++c) {
    auto sp = [&](double (*get)(const RuntimeClassMetrics&)) {
      std::vector<double> v;
      for (const ClosedLoopMetrics& m : sr.closed_loop[s]) v.push_back(get(m.classes[c]));
      return spread_object(spread_of(v));
    };
    json_t* x = json_object();
    json_object_set_new(x, "runtime", json_string(sr.closed_loop[s].empty() ? "" : sr.closed_loop[s][0].classes[c].name));
    json_object_set_new(x, "jobs", sp([](const RuntimeClassMetrics& m) { return double(m.jobs); }));
    json_object_set_new(x, "avg_wait_minutes", sp([](const RuntimeClassMetrics& m) { return m.avg_wait_minutes; }));
    json_object_set_new(x, "avg_response_minutes",
                        sp([](const RuntimeClassMetrics& m) { return m.avg_response_minutes; }));
    json_object_set_new(x, "avg_bounded_slowdown",
                        sp([](const RuntimeClassMetrics& m) { return m.avg_bounded_slowdown; }));
    json_array_append_new(classes, x);
  }
  json_object_set_new(o, "runtime_classes", classes);
  if (s > 0) {
    json_object_set_new(o, "more_than_first",
                        json_pack("{s:I, s:I}", "throughput_per_hour",
                                  json_int_t(closed_more(sr, s, get_throughput)), "avg_session_jobs",
                                  json_int_t(closed_more(sr, s, get_session_jobs))));
    json_object_set_new(o, "percent_change_vs_first",
                        json_pack("{s:o, s:o}", "throughput_per_hour",
                                  spread_object(spread_of(closed_change(sr, s, get_throughput))),
                                  "avg_session_jobs",
                                  spread_object(spread_of(closed_change(sr, s, get_session_jobs)))));
  }
  return o;
}

json_t* closed_loop_links_json(const ShakeResult& sr) {
  json_t* a = json_array();
  for (const FeedbackReport& f : sr.links)
    json_array_append_new(
        a, json_pack("{s:I, s:I, s:I, s:I, s:I}", "linked", json_int_t(f.linked), "independent",
                     json_int_t(f.independent), "fallback_missing", json_int_t(f.missing),
                     "fallback_not_earlier", json_int_t(f.not_earlier), "fallback_no_think",
                     json_int_t(f.no_think)));
  return a;
}

void print_closed_loop(std::ostream& os, const std::vector<Run>& runs) {
  if (runs.empty() || !runs[0].has_closed_loop) return;
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size() + 2);
  const FeedbackReport& f = runs[0].result->feedback;
  os << "\nclosed loop (--feedback): " << f.linked << " jobs follow their preceding job, "
     << f.independent << " have none";
  if (f.fallbacks() > 0)
    os << ", " << f.fallbacks() << " fall back to their logged submit time (" << f.missing
       << " preceding job not in the workload, " << f.not_earlier << " not earlier in the log, "
       << f.no_think << " think time unknown)";
  os << "\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(11)
     << "submitted" << std::setw(9) << "unsubm." << std::setw(9) << "earlier" << std::setw(9)
     << "later" << std::setw(10) << "jobs/h" << std::setw(9) << "change" << std::setw(10)
     << "sessions" << std::setw(9) << "jobs/s" << std::setw(9) << "change" << "\n";
  const ClosedLoopMetrics& b = runs[0].closed_loop;
  for (const Run& r : runs) {
    const ClosedLoopMetrics& m = r.closed_loop;
    const FeedbackReport& rf = r.result->feedback;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right
       << std::setw(11) << m.jobs_submitted << std::setw(9) << m.jobs_not_submitted
       << std::setw(9) << rf.earlier << std::setw(9) << rf.later << std::setw(10)
       << fixed(m.throughput_per_hour, 2) << std::setw(9)
       << (&r == &runs[0] ? "" : change(m.throughput_per_hour, b.throughput_per_hour))
       << std::setw(10) << m.sessions << std::setw(9) << fixed(m.avg_session_jobs, 2)
       << std::setw(9) << (&r == &runs[0] ? "" : change(m.avg_session_jobs, b.avg_session_jobs))
       << "\n";
  }
  os << "per runtime class (jobs: wait min / response min / bsld):\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const RuntimeClassMetrics& c : b.classes) os << std::setw(30) << (std::string(c.name) + " runtime");
  os << "\n";
  for (const Run& r : runs) {
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (const RuntimeClassMetrics& c : r.closed_loop.classes)
      os << std::setw(30)
         << (std::to_string(c.jobs) + ": " + fixed(c.avg_wait_minutes, 1) + " / " +
             fixed(c.avg_response_minutes, 1) + " / " + fixed(c.avg_bounded_slowdown, 1));
    os << "\n";
  }
}

json_t* closed_loop_json(const Run& r) {
  const ClosedLoopMetrics& m = r.closed_loop;
  const FeedbackReport& f = r.result->feedback;
  json_t* o = json_object();
  json_object_set_new(o, "jobs_submitted", json_integer(json_int_t(m.jobs_submitted)));
  json_object_set_new(o, "jobs_not_submitted", json_integer(json_int_t(m.jobs_not_submitted)));
  json_object_set_new(o, "span_hours", json_real(m.span_hours));
  json_object_set_new(o, "throughput_per_hour", json_real(m.throughput_per_hour));
  json_object_set_new(o, "sessions", json_integer(json_int_t(m.sessions)));
  json_object_set_new(o, "avg_session_jobs", json_real(m.avg_session_jobs));
  json_t* links = json_object();
  json_object_set_new(links, "linked", json_integer(json_int_t(f.linked)));
  json_object_set_new(links, "independent", json_integer(json_int_t(f.independent)));
  json_object_set_new(links, "fallback_missing", json_integer(json_int_t(f.missing)));
  json_object_set_new(links, "fallback_not_earlier", json_integer(json_int_t(f.not_earlier)));
  json_object_set_new(links, "fallback_no_think", json_integer(json_int_t(f.no_think)));
  json_object_set_new(links, "submitted_earlier", json_integer(json_int_t(f.earlier)));
  json_object_set_new(links, "submitted_later", json_integer(json_int_t(f.later)));
  json_object_set_new(o, "links", links);
  json_t* classes = json_array();
  for (const RuntimeClassMetrics& c : m.classes) {
    json_t* x = json_object();
    json_object_set_new(x, "runtime", json_string(c.name));
    json_object_set_new(x, "jobs", json_integer(json_int_t(c.jobs)));
    json_object_set_new(x, "avg_wait_minutes", json_real(c.avg_wait_minutes));
    json_object_set_new(x, "avg_response_minutes", json_real(c.avg_response_minutes));
    json_object_set_new(x, "avg_bounded_slowdown", json_real(c.avg_bounded_slowdown));
    json_array_append_new(classes, x);
  }
  json_object_set_new(o, "runtime_classes", classes);
  return o;
}

}  // namespace easypp::report
