// The fitted Markov workload model: fitting and generation (see
// markov_model.h and docs/markov-model.md). The file format is in
// markov_model_io.cc.
//
// Generation depends only on the model and the configuration, byte for
// byte, on every platform: the random numbers and logarithms are random.h's.
#include "easypp/sim/markov_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <system_error>
#include <unordered_map>

#include "easypp/sim/random.h"

namespace easypp {

using namespace detrand;

double Quantiles::at(double u) const {
  if (values.empty()) return 0;
  const std::size_t m = values.size();
  if (m == 1) return values[0];
  const double x = std::clamp(u, 0.0, 1.0) * double(m - 1);
  const std::size_t i = std::min(std::size_t(x), m - 2);
  const double f = x - double(i);
  return values[i] + f * (values[i + 1] - values[i]);
}

namespace {

// --- shared by fitting and generation ------------------------------------------------

int size_class_log(std::int64_t size) {
  int k = 0;
  while (k < 62 && (std::int64_t(1) << (k + 1)) <= size) ++k;
  return k;
}

/// What the paper's predictor would say: the last runtime, or the rounded-up
/// average of the last two; at least 1 s.
struct History {
  Time last = 0, before = 0;
  int n = 0;
  void add(Time r) {
    before = last;
    last = r;
    if (n < 2) ++n;
  }
  Time level() const {
    const Time v = n >= 2 ? (last + before + 1) / 2 : last;
    return std::max<Time>(v, 1);
  }
};

double log2_ratio(Time run, Time level) {
  return det_log(double(std::max<Time>(run, 1)) / double(std::max<Time>(level, 1))) / kLn2;
}

/// Quantile table of samples (sorted here): all of them if there are at most
/// `points`, else the quantiles at k / (points - 1), linear between order
/// statistics. Rounded to whole units when `whole` (times), else to 1e-4.
Quantiles quantiles_of(std::vector<double>& v, std::size_t points, bool whole) {
  Quantiles q;
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  auto rounded = [whole](double x) {
    return whole ? std::floor(x + 0.5) : std::floor(x * 1e4 + 0.5) / 1e4;
  };
  if (v.size() <= points) {
    for (double x : v) q.values.push_back(rounded(x));
    return q;
  }
  const double n1 = double(v.size() - 1);
  for (std::size_t k = 0; k < points; ++k) {
    const double h = n1 * double(k) / double(points - 1);
    const std::size_t lo = std::min(std::size_t(h), v.size() - 2);
    q.values.push_back(rounded(v[lo] + (h - double(lo)) * (v[lo + 1] - v[lo])));
  }
  return q;
}

struct Samples {
  std::vector<double> interarrival, runtime, delta;
  void add(Time ia, Time run, Time est) {
    interarrival.push_back(double(ia));
    runtime.push_back(double(run));
    delta.push_back(double(est - run));
  }
};

}  // namespace

// --- fitting --------------------------------------------------------------------------

MarkovModel fit_markov_model(const Workload& w, const MarkovFitOptions& opt) {
  const std::vector<Job>& jobs = w.jobs;
  if (jobs.size() < 2) throw std::invalid_argument("a Markov model needs at least two jobs");
  MarkovModel m;
  m.source = w.source;
  m.source_jobs = jobs.size();
  m.procs = w.procs;
  m.jobs = jobs.size();
  m.min_samples = opt.min_samples;
  m.match_window = opt.match_window;
  Time max_est = 0;
  for (const Job& j : jobs) max_est = std::max({max_est, j.estimate, j.runtime});
  m.max_runtime = max_est;

  // States: the size classes that occur, ascending.
  std::map<int, std::size_t> index;
  for (const Job& j : jobs) index.emplace(size_class_log(j.size), 0);
  for (auto& [k, i] : index) {
    i = m.states.size();
    MarkovState s;
    s.size_class = std::int64_t(1) << k;
    m.states.push_back(s);
  }
  const std::size_t S = m.states.size();
  std::vector<std::size_t> state(jobs.size());
  std::vector<std::map<std::int64_t, std::uint64_t>> sizes(S);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    state[i] = index[size_class_log(jobs[i].size)];
    ++m.states[state[i]].jobs;
    ++sizes[state[i]][jobs[i].size];
  }
  for (std::size_t s = 0; s < S; ++s)
    m.states[s].sizes.assign(sizes[s].begin(), sizes[s].end());

  // Transitions and their attribute samples; pooled per target state.
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> tindex;
  std::vector<Samples> tsamples, ssamples(S);
  std::vector<std::size_t> tr(jobs.size(), SIZE_MAX);
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    const auto key = std::make_pair(state[i - 1], state[i]);
    auto it = tindex.find(key);
    if (it == tindex.end()) {
      it = tindex.emplace(key, m.transitions.size()).first;
      MarkovTransition t;
      t.from = key.first;
      t.to = key.second;
      m.transitions.push_back(t);
      tsamples.emplace_back();
    }
    tr[i] = it->second;
    ++m.transitions[it->second].jobs;
    const Job& j = jobs[i];
    const Time ia = j.submit - jobs[i - 1].submit;
    tsamples[it->second].add(ia, j.runtime, j.estimate);
    ssamples[state[i]].add(ia, j.runtime, j.estimate);
  }

  // The user layer: repeats, level ratios, recency ranks.
  std::vector<double> rep_ratio, fresh_ratio;
  std::vector<std::uint64_t> ranks;
  std::uint64_t fresh = 0, fresh_new = 0, repeats = 0, overruns = 0;
  struct Last {
    std::int64_t size = 0;
    Time estimate = 0;
    History hist;
  };
  std::unordered_map<UserId, Last> last;
  std::vector<UserId> recency;  // most recent at the back
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (j.user == kNoUser) continue;  // shares no history: not in the user layer
    auto it = last.find(j.user);
    const bool known = it != last.end();
    const bool repeat = known && it->second.size == j.size && it->second.estimate == j.estimate;
    if (repeat) {
      ++repeats;
      ++m.states[state[i]].repeats;
      if (tr[i] != SIZE_MAX) ++m.transitions[tr[i]].repeats;
      rep_ratio.push_back(log2_ratio(j.runtime, it->second.hist.level()));
      overruns += j.runtime > j.estimate;
    } else {
      ++fresh;
      if (known) {
        const auto pos = std::find(recency.rbegin(), recency.rend(), j.user);
        const auto rank = std::size_t(pos - recency.rbegin());
        if (ranks.size() <= rank) ranks.resize(rank + 1, 0);
        ++ranks[rank];
        fresh_ratio.push_back(log2_ratio(j.runtime, it->second.hist.level()));
      } else {
        ++fresh_new;
      }
    }
    if (known) recency.erase(std::find(recency.rbegin(), recency.rend(), j.user).base() - 1);
    recency.push_back(j.user);
    Last& l = last[j.user];
    l.size = j.size;
    l.estimate = j.estimate;
    l.hist.add(j.runtime);
  }
  MarkovUsers& u = m.users;
  u.users = last.size();
  u.new_user_share = fresh ? double(fresh_new) / double(fresh) : 1.0;
  u.overrun_share = repeats ? double(overruns) / double(repeats) : 0.0;
  u.repeat_ratio = quantiles_of(rep_ratio, opt.quantile_points, false);
  u.fresh_ratio = quantiles_of(fresh_ratio, opt.quantile_points, false);
  u.recency_ranks = ranks;

  for (std::size_t s = 0; s < S; ++s) {
    MarkovState& st = m.states[s];
    st.interarrival = quantiles_of(ssamples[s].interarrival, opt.quantile_points, true);
    st.runtime = quantiles_of(ssamples[s].runtime, opt.quantile_points, true);
    st.estimate_delta = quantiles_of(ssamples[s].delta, opt.quantile_points, true);
  }
  for (std::size_t t = 0; t < m.transitions.size(); ++t) {
    MarkovTransition& x = m.transitions[t];
    x.interarrival = quantiles_of(tsamples[t].interarrival, opt.quantile_points, true);
    x.runtime = quantiles_of(tsamples[t].runtime, opt.quantile_points, true);
    x.estimate_delta = quantiles_of(tsamples[t].delta, opt.quantile_points, true);
  }
  // A state entered only by the first job has no pooled samples: it takes
  // those of all jobs (it is then only ever left, never entered again).
  for (std::size_t s = 0; s < S; ++s) {
    MarkovState& st = m.states[s];
    if (!st.runtime.values.empty()) continue;
    Samples all;
    for (std::size_t i = 1; i < jobs.size(); ++i)
      all.add(jobs[i].submit - jobs[i - 1].submit, jobs[i].runtime, jobs[i].estimate);
    st.interarrival = quantiles_of(all.interarrival, opt.quantile_points, true);
    st.runtime = quantiles_of(all.runtime, opt.quantile_points, true);
    st.estimate_delta = quantiles_of(all.delta, opt.quantile_points, true);
  }
  std::sort(m.transitions.begin(), m.transitions.end(), [](const MarkovTransition& a, const MarkovTransition& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  return m;
}

// --- generation -----------------------------------------------------------------------

namespace {

constexpr std::uint64_t kStreamChain = 11;
constexpr std::uint64_t kStreamJobs = 12;
constexpr std::uint64_t kStreamUsers = 13;

/// Draw an index with probability proportional to counts (cumulative sums,
/// binary search: the same index on every platform).
class Discrete {
 public:
  Discrete() = default;
  explicit Discrete(const std::vector<double>& weights) {
    double c = 0;
    for (double x : weights) cum_.push_back(c += x);
  }
  bool empty() const { return cum_.empty() || cum_.back() <= 0; }
  std::size_t draw(Rng& g) const {
    const double x = g.uniform() * cum_.back();
    const auto it = std::upper_bound(cum_.begin(), cum_.end(), x);
    return std::min(std::size_t(it - cum_.begin()), cum_.size() - 1);
  }

 private:
  std::vector<double> cum_;
};

Time draw_time(const Quantiles& q, Rng& g) {
  return Time(std::floor(q.at(g.uniform()) + 0.5));
}

struct GenUser {
  std::int64_t size = 0;
  Time estimate = 0;
  std::size_t state = 0;  // class of the last job
  History hist;
};

}  // namespace

std::vector<swf::Record> generate_from_model(const MarkovModel& m, const ModelGenConfig& cfg,
                                             swf::Header* header) {
  const std::size_t S = m.states.size();
  if (S == 0) throw std::invalid_argument("the model has no state");
  const std::uint64_t n = cfg.jobs ? cfg.jobs : m.jobs;
  const std::uint32_t thin = cfg.thin ? cfg.thin : m.thin;

  // The chain: per state, its outgoing transitions by count; a state never
  // left in the log moves by the states' overall frequencies.
  std::vector<std::vector<std::size_t>> out(S);
  std::vector<Discrete> step(S);
  std::vector<std::vector<double>> weights(S);
  for (std::size_t t = 0; t < m.transitions.size(); ++t) {
    out[m.transitions[t].from].push_back(t);
    weights[m.transitions[t].from].push_back(double(m.transitions[t].jobs));
  }
  std::vector<double> marginal;
  for (const MarkovState& s : m.states) marginal.push_back(double(s.jobs));
  const Discrete by_frequency(marginal);
  for (std::size_t s = 0; s < S; ++s) step[s] = Discrete(weights[s]);
  std::vector<Discrete> size_of(S);
  for (std::size_t s = 0; s < S; ++s) {
    std::vector<double> c;
    for (const auto& p : m.states[s].sizes) c.push_back(double(p.second));
    size_of[s] = Discrete(c);
  }
  std::vector<double> rank_w(m.users.recency_ranks.begin(), m.users.recency_ranks.end());
  const Discrete rank_of(rank_w);

  Rng chain(cfg.seed, kStreamChain), jg(cfg.seed, kStreamJobs), ug(cfg.seed, kStreamUsers);
  // Moves the chain one kept step from s: the next state, and the transition
  // that led there (SIZE_MAX: none of the log's, a never-left state).
  auto next_state = [&](std::size_t s, std::size_t* via) {
    for (std::uint32_t k = 0; k < thin; ++k) {
      if (step[s].empty()) {
        s = by_frequency.draw(chain);
        *via = SIZE_MAX;
      } else {
        const std::size_t t = out[s][step[s].draw(chain)];
        *via = t;
        s = m.transitions[t].to;
      }
    }
    return s;
  };
  std::size_t s = by_frequency.draw(chain), via = SIZE_MAX;
  for (std::uint64_t k = 0; k < m.burn_in; ++k) s = next_state(s, &via);

  std::vector<GenUser> users;       // user id = index + 1
  std::vector<std::uint32_t> recency;  // user indexes, most recent at the back
  std::vector<swf::Record> records;
  records.reserve(n);
  Time now = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t prev = s;
    s = next_state(s, &via);
    // The attributes' distributions: the transition's, or the state's pooled.
    const MarkovTransition* t = nullptr;
    if (via != SIZE_MAX && (thin == 1 || m.transitions[via].from == prev) &&
        m.transitions[via].jobs >= m.min_samples)
      t = &m.transitions[via];
    const MarkovState& st = m.states[s];
    const Quantiles& q_ia = t ? t->interarrival : st.interarrival;
    const Quantiles& q_run = t ? t->runtime : st.runtime;
    const Quantiles& q_delta = t ? t->estimate_delta : st.estimate_delta;
    now += std::max<Time>(0, draw_time(q_ia, jg));
    const Time run = std::max<Time>(0, draw_time(q_run, jg));
    const double p_repeat = t ? double(t->repeats) / double(t->jobs)
                              : (st.jobs ? double(st.repeats) / double(st.jobs) : 0.0);

    std::size_t who = SIZE_MAX;  // index into users
    std::int64_t size = 0;
    Time estimate = 0;
    const std::size_t window = std::max<std::uint32_t>(m.match_window, 1);
    // A repeat: a user whose last job is in this class, best level match.
    if (ug.uniform() < p_repeat && !m.users.repeat_ratio.values.empty()) {
      const bool over = ug.uniform() < m.users.overrun_share;
      const double rho = m.users.repeat_ratio.at(ug.uniform());
      double best = std::numeric_limits<double>::infinity();
      std::size_t seen = 0;
      for (auto it = recency.rbegin(); it != recency.rend() && seen < window; ++it) {
        const GenUser& c = users[*it];
        if (c.state != s) continue;
        ++seen;
        if ((run > c.estimate) != over) continue;
        const double d = std::fabs(log2_ratio(run, c.hist.level()) - rho);
        if (d < best) {
          best = d;
          who = *it;
        }
      }
      if (who != SIZE_MAX) {
        size = users[who].size;
        estimate = users[who].estimate;
      }
    }
    if (who == SIZE_MAX) {  // not a repeat: the paper's job, then its user
      size = st.sizes[size_of[s].draw(jg)].first;
      estimate = run + draw_time(q_delta, jg);
      for (int k = 0; k < 100 && estimate <= 0; ++k) estimate = run + draw_time(q_delta, jg);
      if (estimate <= 0) estimate = std::max<Time>(run, 1);
      const double coin = ug.uniform();
      if (recency.empty() || rank_of.empty() || m.users.fresh_ratio.values.empty() ||
          coin < m.users.new_user_share) {
        who = users.size();
        users.emplace_back();
      } else {
        const std::size_t L = recency.size();
        const std::size_t rank = rank_of.draw(ug);
        const double rho = m.users.fresh_ratio.at(ug.uniform());
        const std::size_t k = std::min(window, L);
        std::size_t lo = rank > k / 2 ? rank - k / 2 : 0;
        lo = std::min(lo, L - k);
        double best = std::numeric_limits<double>::infinity();
        for (std::size_t r = lo; r < lo + k; ++r) {
          const std::uint32_t c = recency[L - 1 - r];
          const double d = std::fabs(log2_ratio(run, users[c].hist.level()) - rho);
          if (d < best) {
            best = d;
            who = c;
          }
        }
      }
    }
    GenUser& u = users[who];
    u.size = size;
    u.estimate = estimate;
    u.state = s;
    u.hist.add(run);
    const auto pos = std::find(recency.rbegin(), recency.rend(), std::uint32_t(who));
    if (pos != recency.rend()) recency.erase(pos.base() - 1);
    recency.push_back(std::uint32_t(who));

    swf::Record r;
    r.job = std::int64_t(i) + 1;
    r.submit = now;
    r.wait = -1;
    r.run = run;
    r.alloc_procs = size;
    r.req_procs = size;
    r.req_time = estimate;
    r.status = run > estimate ? 0 : 1;
    r.user = std::int64_t(who) + 1;
    r.queue = 1;
    r.partition = 1;
    r.line = 0;
    records.push_back(r);
  }

  if (header) {
    swf::Header h;
    auto add = [&h](const char* k, std::string v) { h.entries.emplace_back(k, std::move(v)); };
    add("Version", "2.2");
    add("Computer", "Markov model of " + m.source + " (" + std::to_string(m.procs) + " processors)");
    add("Installation", "easypp fitted Markov workload model (Krampe, Lepping and Sieben 2008, with users)");
    add("Information", "docs/markov-model.md in the easypp sources");
    add("Conversion", "generated by easypp-gen from a model of format " + std::to_string(MarkovModel::kFormatVersion));
    add("MaxJobs", std::to_string(records.size()));
    add("MaxRecords", std::to_string(records.size()));
    add("Preemption", "No");
    add("MaxNodes", std::to_string(m.procs));
    add("MaxProcs", std::to_string(m.procs));
    add("MaxRuntime", std::to_string(m.max_runtime));
    add("MaxQueues", "1");
    add("MaxPartitions", "1");
    add("Note", "seed=" + std::to_string(cfg.seed) + ",jobs=" + std::to_string(n) + ",thin=" +
                    std::to_string(thin) + "; model fitted to " + m.source + " (" +
                    std::to_string(m.source_jobs) + " jobs)");
    *header = std::move(h);
  }
  return records;
}

Workload generate_model_workload(const MarkovModel& m, const ModelGenConfig& cfg,
                                 const std::string& source, const WorkloadOptions& opt) {
  swf::Header header;
  std::vector<swf::Record> records = generate_from_model(m, cfg, &header);
  WorkloadOptions o = opt;
  if (o.machine_procs <= 0) o.machine_procs = m.procs;
  return make_workload(source, std::move(header), std::move(records), o);
}

// --- "FILE[:seed=N,jobs=N,thin=N]" -----------------------------------------------------

namespace {

bool parse_u64(std::string_view s, std::uint64_t lo, std::uint64_t hi, std::uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool known_key(std::string_view k) { return k == "seed" || k == "jobs" || k == "thin"; }

}  // namespace

bool parse_model_spec(std::string_view spec, std::string* path, ModelGenConfig& cfg,
                      std::string* error) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  std::string_view file = spec, opts;
  const auto colon = spec.rfind(':');
  if (colon != std::string_view::npos) {
    // Options only if every item after the last ':' is key=value with a
    // known key; otherwise the ':' belongs to the file name.
    const std::string_view tail = spec.substr(colon + 1);
    bool all = !tail.empty();
    std::string_view rest = tail;
    while (all && !rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      const auto eq = item.find('=');
      all = eq != std::string_view::npos && known_key(item.substr(0, eq));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (all) {
      file = spec.substr(0, colon);
      opts = tail;
    }
  }
  if (file.empty()) return fail("no model file name");
  ModelGenConfig c = cfg;
  while (!opts.empty()) {
    const auto comma = opts.find(',');
    const std::string_view item = opts.substr(0, comma);
    opts = comma == std::string_view::npos ? std::string_view() : opts.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::string bad = "bad value '" + std::string(value) + "' for " + std::string(key);
    std::uint64_t v = 0;
    if (key == "seed") {
      if (!parse_u64(value, 0, std::numeric_limits<std::uint64_t>::max(), &v))
        return fail(bad + " (expected an integer 0.." +
                    std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")");
      c.seed = v;
    } else if (key == "jobs") {
      if (!parse_u64(value, 1, 10000000, &v)) return fail(bad + " (expected an integer 1..10000000)");
      c.jobs = v;
    } else {
      if (!parse_u64(value, 1, 1000, &v)) return fail(bad + " (expected an integer 1..1000)");
      c.thin = std::uint32_t(v);
    }
  }
  *path = std::string(file);
  cfg = c;
  return true;
}

}  // namespace easypp
