#include "shadow/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "easypp/sim/metrics.h"
#include "shadow/shadow_file.h"

namespace easypp::shadow {

namespace {

struct Acc {
  GroupStats g;
  double acc = 0, first = 0, limit = 0;
  void add(const Record& r) {
    ++g.jobs;
    acc += r.accuracy;
    first += prediction_accuracy(r.first_prediction, r.runtime);
    limit += r.limit_accuracy;
    if (r.estimate > 2 * r.runtime) ++g.over2;
    if (r.estimate > 5 * r.runtime) ++g.over5;
    if (r.estimate > 10 * r.runtime) ++g.over10;
    g.corrections += r.corrections;
    if (r.corrections > 0) ++g.corrected_jobs;
    if (r.from_history) ++g.from_history;
  }
  GroupStats done() const {
    GroupStats o = g;
    if (g.jobs > 0) {
      o.accuracy = acc / double(g.jobs);
      o.first_accuracy = first / double(g.jobs);
      o.limit_accuracy = limit / double(g.jobs);
    }
    return o;
  }
};

std::vector<GroupStats> sorted(const std::map<std::string, Acc>& m) {
  std::vector<GroupStats> v;
  for (const auto& kv : m) v.push_back(kv.second.done());
  std::stable_sort(v.begin(), v.end(),
                   [](const GroupStats& a, const GroupStats& b) { return a.jobs > b.jobs; });
  return v;
}

double pct(std::uint64_t n, std::uint64_t of) { return of ? 100.0 * double(n) / double(of) : 0.0; }

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string pad(std::string s, std::size_t w, bool right) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

// One row of the summary tables.
std::string row(const std::string& label, const GroupStats& g, std::size_t lw) {
  std::string r = pad(label, lw, false);
  r += pad(std::to_string(g.jobs), 7, true);
  r += pad(fmt("%.1f", 100 * g.accuracy), 11, true);
  r += pad(fmt("%.1f", 100 * g.limit_accuracy), 8, true);
  r += pad(fmt("%.1f", pct(g.over2, g.jobs)), 8, true);
  r += pad(fmt("%.1f", pct(g.over5, g.jobs)), 7, true);
  r += pad(fmt("%.1f", pct(g.over10, g.jobs)), 7, true);
  r += pad(std::to_string(g.corrections), 7, true);
  r += pad(fmt("%.1f", pct(g.corrected_jobs, g.jobs)), 11, true);
  r += pad(fmt("%.1f", pct(g.from_history, g.jobs)), 9, true);
  return r + "\n";
}

std::string header(std::size_t lw) {
  return pad("", lw, false) +
         "   jobs  prediction  limit  limit > runtime x   corr-  corrected  from\n" +
         pad("", lw, false) +
         "        accuracy %  acc. %     2 %    5 %   10 %  ections    jobs %  hist. %\n";
}

json_t* group_json(const GroupStats& g, const char* key_name) {
  json_t* o = json_object();
  if (key_name) json_object_set_new(o, key_name, json_text(g.key));
  if (g.uid != kNoUser) json_object_set_new(o, "uid", json_integer(g.uid));
  auto real = [&](const char* k, double v) {
    json_object_set_new(o, k, json_real(std::round(v * 1000) / 1000));
  };
  json_object_set_new(o, "jobs", json_integer(json_int_t(g.jobs)));
  real("prediction_accuracy_percent", 100 * g.accuracy);
  real("first_prediction_accuracy_percent", 100 * g.first_accuracy);
  real("limit_accuracy_percent", 100 * g.limit_accuracy);
  real("limit_over_2x_runtime_percent", pct(g.over2, g.jobs));
  real("limit_over_5x_runtime_percent", pct(g.over5, g.jobs));
  real("limit_over_10x_runtime_percent", pct(g.over10, g.jobs));
  json_object_set_new(o, "corrections", json_integer(json_int_t(g.corrections)));
  json_object_set_new(o, "corrected_jobs", json_integer(json_int_t(g.corrected_jobs)));
  real("corrected_jobs_percent", pct(g.corrected_jobs, g.jobs));
  real("from_history_percent", pct(g.from_history, g.jobs));
  return o;
}

struct Live {
  std::size_t pending = 0, running = 0;
  std::uint64_t corrections = 0;
};

Live live(const Shadow& s) {
  Live l;
  for (const auto& kv : s.jobs()) {
    plugin::JobFacts f;
    if (!facts_at(kv.second.view, s.last(), &f)) continue;
    if (f.state == plugin::JobFacts::State::Running) {
      ++l.running;
      if (const JobPlan* p = s.book().find(kv.first)) l.corrections += p->corr.count;
    } else if (f.state == plugin::JobFacts::State::Pending) {
      ++l.pending;
    }
  }
  return l;
}

}  // namespace

std::string local_time(Time t) {
  const time_t tt = time_t(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  return b;
}

std::string fmt_duration(Time s) {
  if (s < 0) return "-";
  if (s < 60) return std::to_string(s) + "s";
  char b[48];
  const Time d = s / 86400, h = (s / 3600) % 24, m = (s / 60) % 60, sec = s % 60;
  if (d > 0)
    std::snprintf(b, sizeof b, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h,
                  (long long)m, (long long)sec);
  else
    std::snprintf(b, sizeof b, "%lld:%02lld:%02lld", (long long)h, (long long)m, (long long)sec);
  return b;
}

Summary summarize(const std::vector<Record>& records) {
  Acc all;
  std::map<std::string, Acc> users, parts;
  for (const Record& r : records) {
    all.add(r);
    Acc& u = users[r.user.empty() ? "(unknown)" : r.user];
    u.g.key = r.user.empty() ? "(unknown)" : r.user;
    u.g.uid = r.uid;
    u.add(r);
    Acc& p = parts[r.partition.empty() ? "(none)" : r.partition];
    p.g.key = r.partition.empty() ? "(none)" : r.partition;
    p.add(r);
  }
  Summary s;
  all.g.key = "all";
  s.all = all.done();
  s.users = sorted(users);
  s.partitions = sorted(parts);
  return s;
}

std::string report_text(const Shadow& s, const ReportInfo& info, std::size_t top, bool jobs) {
  const Summary sum = summarize(s.records());
  const Counters& n = s.counters();
  std::string o;
  o += "easypp-shadow: what sched/easypp would have predicted on this cluster\n";
  if (s.first() > 0)
    o += "  followed " + local_time(s.first()) + " .. " + local_time(s.last()) + " (" +
         fmt_duration(s.last() - s.first()) + "), " + std::to_string(n.polls) + " polls" +
         (n.failed_polls ? " (" + std::to_string(n.failed_polls) + " failed)" : "") + ", " +
         std::to_string(n.cycles) + " plugin cycles replayed\n";
  else
    o += "  no poll has reached the cluster yet\n";
  if (!info.source.empty()) o += "  source: " + info.source + "\n";
  o += "  settings: " + info.describe + "\n";
  o += "  history: " + std::to_string(s.book().predictor().users()) + " users, " +
       std::to_string(s.book().learned_total()) + " runtimes learned (" +
       std::to_string(n.learned) + " by this shadow)\n\n";
  std::size_t lw = 14;
  for (std::size_t i = 0; i < sum.users.size() && i < top; ++i)
    lw = std::max(lw, sum.users[i].key.size() + 2);
  for (std::size_t i = 0; i < sum.partitions.size() && i < top; ++i)
    lw = std::max(lw, sum.partitions[i].key.size() + 2);
  lw = std::min<std::size_t>(lw, 32);
  o += "finished jobs judged\n" + header(lw) + row("all", sum.all, lw);
  if (!sum.users.empty()) {
    o += "\nper user" + std::string(sum.users.size() > top ? " (the " + std::to_string(top) +
                                                                 " with the most jobs)"
                                                           : "") + "\n";
    for (std::size_t i = 0; i < sum.users.size() && i < top; ++i)
      o += row(sum.users[i].key, sum.users[i], lw);
  }
  if (!sum.partitions.empty()) {
    o += "\nper partition" +
         std::string(sum.partitions.size() > top ? " (the " + std::to_string(top) +
                                                       " with the most jobs)"
                                                 : "") + "\n";
    for (std::size_t i = 0; i < sum.partitions.size() && i < top; ++i)
      o += row(sum.partitions[i].key, sum.partitions[i], lw);
  }
  o += "\nnot judged: " + std::to_string(n.before_start) +
       " waiting or running before the shadow started, " + std::to_string(n.never_ran) +
       " never ran, " + std::to_string(n.het_components) +
       " heterogeneous job components (judged by their leader), " + std::to_string(n.unseen) +
       " seen only after their end, " + std::to_string(n.vanished) +
       " gone from slurmctld without an end\n";
  const Live l = live(s);
  o += "now: " + std::to_string(l.pending) + " pending, " + std::to_string(l.running) +
       " running (" + std::to_string(l.corrections) + " corrections so far); " +
       std::to_string(n.corrections) + " corrections would have fired in all\n";
  if (jobs && !s.records().empty()) {
    o += "\njobs\n";
    o += pad("job", 14, false) + pad("user", 14, false) + pad("partition", 12, false) +
         pad("state", 11, false) + pad("limit", 12, true) + pad("runtime", 12, true) +
         pad("first pred", 12, true) + pad("at start", 12, true) + pad("final", 12, true) +
         pad("corr", 6, true) + pad("acc %", 7, true) + pad("limit acc %", 12, true) + "\n";
    for (const Record& r : s.records())
      o += pad(r.name, 14, false) + pad(r.user, 14, false) + pad(r.partition, 12, false) +
           pad(r.state, 11, false) + pad(fmt_duration(r.estimate), 12, true) +
           pad(fmt_duration(r.runtime), 12, true) + pad(fmt_duration(r.first_prediction), 12, true) +
           pad(fmt_duration(r.start_prediction), 12, true) +
           pad(fmt_duration(r.final_prediction), 12, true) +
           pad(std::to_string(r.corrections), 6, true) + pad(fmt("%.1f", 100 * r.accuracy), 7, true) +
           pad(fmt("%.1f", 100 * r.limit_accuracy), 12, true) + "\n";
  }
  return o;
}

json_t* report_json(const Shadow& s, const ReportInfo& info) {
  const Summary sum = summarize(s.records());
  const Counters& n = s.counters();
  json_t* o = json_object();
  auto put = [&](json_t* obj, const char* k, json_t* v) { json_object_set_new(obj, k, v); };
  auto jint = [](std::int64_t v) { return json_integer(json_int_t(v)); };
  put(o, "kind", json_string("easypp-shadow"));
  put(o, "version", json_text(info.version));
  put(o, "generated", jint(info.generated));
  put(o, "command", json_text(info.command));
  put(o, "source", json_text(info.source));
  json_t* set = json_object();
  for (const auto& [k, v] : info.settings) put(set, k.c_str(), json_text(v));
  put(o, "settings", set);
  json_t* fo = json_object();
  put(fo, "since", jint(s.first()));
  put(fo, "until", jint(s.last()));
  put(fo, "polls", jint(std::int64_t(n.polls)));
  put(fo, "failed_polls", jint(std::int64_t(n.failed_polls)));
  put(fo, "cycles", jint(std::int64_t(n.cycles)));
  put(o, "following", fo);
  put(o, "summary", group_json(sum.all, nullptr));
  json_t* a = json_array();
  for (const GroupStats& g : sum.users) json_array_append_new(a, group_json(g, "user"));
  put(o, "users", a);
  a = json_array();
  for (const GroupStats& g : sum.partitions) json_array_append_new(a, group_json(g, "partition"));
  put(o, "partitions", a);
  json_t* nj = json_object();
  put(nj, "before_start", jint(std::int64_t(n.before_start)));
  put(nj, "never_ran", jint(std::int64_t(n.never_ran)));
  put(nj, "het_components", jint(std::int64_t(n.het_components)));
  put(nj, "seen_after_end", jint(std::int64_t(n.unseen)));
  put(nj, "vanished", jint(std::int64_t(n.vanished)));
  put(o, "not_judged", nj);
  const Live l = live(s);
  json_t* now = json_object();
  put(now, "pending", jint(std::int64_t(l.pending)));
  put(now, "running", jint(std::int64_t(l.running)));
  put(now, "corrections_so_far", jint(std::int64_t(l.corrections)));
  put(o, "now", now);
  put(o, "corrections", jint(std::int64_t(n.corrections)));
  json_t* h = json_object();
  put(h, "users", jint(std::int64_t(s.book().predictor().users())));
  put(h, "learned_jobs", jint(std::int64_t(s.book().learned_total())));
  put(h, "learned_by_shadow", jint(std::int64_t(n.learned)));
  put(h, "last_learned_end", jint(s.watermark()));
  put(o, "history", h);
  a = json_array();
  for (const Record& r : s.records()) json_array_append_new(a, record_json(r));
  put(o, "jobs", a);
  return o;
}

}  // namespace easypp::shadow
