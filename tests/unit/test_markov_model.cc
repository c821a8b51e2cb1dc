// The fitted Markov workload model (markov_model.h): what fitting counts on
// a hand-made log, the file's round trip and its checks (file, line, field),
// deterministic generation, the chain's transition frequencies, and on a
// real log the distributions and the predictor's accuracy the model gives.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <string>

#include "easypp/sim/markov_model.h"
#include "easypp/sim/model_validation.h"
#include "easypp/sim/workload.h"
#include "sim_fixtures.h"
#include "workloads.h"

using namespace easypp;
using easypp::testing::J;

namespace {

// A small log on 16 processors: users 1 (size 8, repeating), 2 (size 16),
// 3 (size 2, repeating) and 4 (size 4 then 5).
Workload hand_log() {
  Workload w = easypp::testing::workload(16, {
      {0, 600, 3600, 8, 1},    // class 8
      {10, 620, 3600, 8, 1},   // 8 -> 8, repeat (user 1)
      {30, 1800, 7200, 16, 2}, // 8 -> 16
      {40, 50, 900, 2, 3},     // 16 -> 2
      {40, 55, 900, 2, 3},     // 2 -> 2, repeat, interarrival 0
      {100, 610, 3600, 8, 1},  // 2 -> 8, repeat (user 1, two users back)
      {160, 300, 7200, 4, 4},  // 8 -> 4
      {170, 320, 7200, 5, 4},  // 4 -> 4, not a repeat (size 5)
      {200, 4000, 3600, 8, 1}, // 4 -> 8, repeat that ran beyond its estimate
  });
  w.source = "hand.swf";
  return w;
}

std::size_t state_of(const MarkovModel& m, std::int64_t size_class) {
  for (std::size_t i = 0; i < m.states.size(); ++i)
    if (m.states[i].size_class == size_class) return i;
  return SIZE_MAX;
}

const MarkovTransition* transition(const MarkovModel& m, std::int64_t from, std::int64_t to) {
  for (const MarkovTransition& t : m.transitions)
    if (m.states[t.from].size_class == from && m.states[t.to].size_class == to) return &t;
  return nullptr;
}

// The line (1-based) of the first occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) return -1;
  return int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) + 1;
}

std::string error_of(const std::string& text) {
  try {
    parse_markov_model(text, "m.json");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  CPPUNIT_ASSERT_MESSAGE("fixture has " + from, at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

class MarkovModelTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MarkovModelTest);
  CPPUNIT_TEST(testQuantiles);
  CPPUNIT_TEST(testFitCountsByHand);
  CPPUNIT_TEST(testJsonRoundTrip);
  CPPUNIT_TEST(testBadFilesNameLineAndField);
  CPPUNIT_TEST(testMutationsNeverCrash);
  CPPUNIT_TEST(testWriteIsAtomic);
  CPPUNIT_TEST(testGenerationIsDeterministicAndSane);
  CPPUNIT_TEST(testChainFollowsTheTransitionMatrix);
  CPPUNIT_TEST(testModelSpec);
  CPPUNIT_TEST(testKsDistance);
  CPPUNIT_TEST(testFittedToKth);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testQuantiles() {
    Quantiles q{{0, 10, 20, 100}};
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, q.at(0), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0, q.at(1), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(15.0, q.at(0.5), 1e-12);        // between 10 and 20
    CPPUNIT_ASSERT_DOUBLES_EQUAL(60.0, q.at(5.0 / 6.0), 1e-12);  // halfway 20..100
    CPPUNIT_ASSERT_DOUBLES_EQUAL(7.0, Quantiles{{7}}.at(0.3), 1e-12);
  }

  void testFitCountsByHand() {
    const MarkovModel m = fit_markov_model(hand_log());
    // States: the classes 2, 4, 8, 16 (5 is in class 4).
    CPPUNIT_ASSERT_EQUAL(std::size_t(4), m.states.size());
    const MarkovState& c4 = m.states[state_of(m, 4)];
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), c4.jobs);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), c4.sizes.size());
    CPPUNIT_ASSERT_EQUAL(std::int64_t(5), c4.sizes[1].first);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(4), m.states[state_of(m, 8)].jobs);
    // Transitions: 8->8, 8->16, 16->2, 2->2, 2->8, 8->4, 4->4, 4->8.
    CPPUNIT_ASSERT_EQUAL(std::size_t(8), m.transitions.size());
    const MarkovTransition* t22 = transition(m, 2, 2);
    CPPUNIT_ASSERT(t22 && t22->jobs == 1 && t22->repeats == 1);
    CPPUNIT_ASSERT(std::vector<double>{0} == t22->interarrival.values);  // same submit time
    CPPUNIT_ASSERT(std::vector<double>{55} == t22->runtime.values);
    CPPUNIT_ASSERT(std::vector<double>{845} == t22->estimate_delta.values);
    const MarkovTransition* t48 = transition(m, 4, 8);
    CPPUNIT_ASSERT(t48 && t48->repeats == 1);
    CPPUNIT_ASSERT(std::vector<double>{-400} == t48->estimate_delta.values);  // 3600 - 4000
    CPPUNIT_ASSERT(transition(m, 4, 4)->repeats == 0);  // size 4 then 5: not a repeat
    CPPUNIT_ASSERT(transition(m, 16, 8) == nullptr);
    // The pooled distribution of state 8: the three jobs entering it.
    CPPUNIT_ASSERT((std::vector<double>{610, 620, 4000} == m.states[state_of(m, 8)].runtime.values));
    // Users: 4 of them; 5 non-repeats of which 4 were first jobs; 4 repeats,
    // one beyond its estimate.
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(4), m.users.users);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.0 / 5.0, m.users.new_user_share, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0 / 4.0, m.users.overrun_share, 1e-12);
    // The one known user's non-repeat (user 4's size-5 job) had rank 0.
    CPPUNIT_ASSERT(std::vector<std::uint64_t>{1} == m.users.recency_ranks);
    CPPUNIT_ASSERT(std::vector<double>{0.0931} == m.users.fresh_ratio.values);  // log2(320/300)
    // Repeats' ratios against the user's level: 620/600, 55/50, 610/610
    // (the average of 600 and 620), 4000/615 (of 620 and 610, rounded up).
    const std::vector<double> want = {0.0, 0.0473, 0.1375, 2.7013};
    CPPUNIT_ASSERT_EQUAL(want.size(), m.users.repeat_ratio.values.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      CPPUNIT_ASSERT_DOUBLES_EQUAL(want[i], m.users.repeat_ratio.values[i], 1e-4);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(16), m.procs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(9), m.jobs);
  }

  void testJsonRoundTrip() {
    MarkovModel m = fit_markov_model(hand_log());
    m.fitted_by = "test";
    const std::string text = markov_model_json(m);
    const MarkovModel back = parse_markov_model(text, "m.json");
    CPPUNIT_ASSERT_EQUAL(text, markov_model_json(back));
    // And with a real log's worth of quantiles.
    const std::string kth = easypp::testing::workload_path("KTH-SP2-1996-2.1-cln.swf");
    CPPUNIT_ASSERT_MESSAGE("missing " + kth, easypp::testing::file_exists(kth));
    const MarkovModel k = fit_markov_model(load_workload(kth, {}));
    const std::string kt = markov_model_json(k);
    CPPUNIT_ASSERT_EQUAL(kt, markov_model_json(parse_markov_model(kt, "k.json")));
    CPPUNIT_ASSERT(k.transitions.front().runtime.values.size() == 201);
  }

  void testBadFilesNameLineAndField() {
    MarkovModel m = fit_markov_model(hand_log());
    m.fitted_by = "test";
    const std::string ok = markov_model_json(m);
    CPPUNIT_ASSERT(error_of(ok).empty());
    struct Case {
      std::string from, to, field, problem;
      std::string at = "";  // the line of this text (default: of `to`)
    };
    const std::vector<Case> cases = {
        {"\"thin\": 1", "\"thin\": 0", "generation.thin", "out of range"},
        {"\"format_version\": 1", "\"format_version\": 2", "format_version", "unsupported version"},
        {"\"format\": \"easypp-markov-model\"", "\"format\": \"other\"", "format", "not an easypp Markov model"},
        {"\"procs\": 16", "\"procs\": \"16\"", "machine.procs", "expected an integer"},
        {"\"size_class\": 4", "\"size_class\": 3", "states[1].size_class", "not a power of two"},
        {"\"new_user_share\": 0.8", "\"new_user_share\": 1.5", "users.new_user_share", "out of range"},
        // A missing field: the line of the object that lacks it.
        {"\"match_window\": 64", "\"match_windoe\": 64", "generation", "missing field 'match_window'",
         "\"generation\""},
    };
    for (const Case& c : cases) {
      const std::string bad = replace_once(ok, c.from, c.to);
      const std::string e = error_of(bad);
      const int line = line_of(bad, c.at.empty() ? c.to : c.at);
      const std::string want_prefix = "m.json:" + std::to_string(line) + ": field " + c.field + ": ";
      CPPUNIT_ASSERT_MESSAGE(c.to + " -> " + e, e.rfind(want_prefix, 0) == 0);
      CPPUNIT_ASSERT_MESSAGE(c.to + " -> " + e, e.find(c.problem) != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(e, e.find('\n') == std::string::npos);
    }
    // A decreasing quantile: the line of that very value.
    {
      std::string bad = ok;
      const auto rt = bad.find("\"runtime\": [");
      const auto first = bad.find_first_of("0123456789", rt + 12);
      const auto end = bad.find_first_not_of("0123456789", first);
      bad.replace(first, end - first, "999999");  // the first value now exceeds the next
      const std::string e = error_of(bad);
      CPPUNIT_ASSERT_MESSAGE(e, e.find("quantiles must not decrease") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(e, e.find("m.json:" + std::to_string(line_of(bad, "999999") + 1) + ": field states[0].runtime[1]") == 0);
    }
    // A transition to a class no state has.
    {
      const auto at = ok.find("\"to\": ");
      std::string bad = ok;
      const auto end = bad.find_first_of(",\n", at);
      bad.replace(at, end - at, "\"to\": 1");  // no job of size 1 in the log
      const std::string e = error_of(bad);
      CPPUNIT_ASSERT_MESSAGE(e, e.find("field transitions[0].to: no state has size class 1") != std::string::npos);
    }
    // Not JSON: jansson's line. Truncated: an error, never a partial model.
    const std::string broken = replace_once(ok, "\"jobs\": 9,", "\"jobs\": 9,,");
    CPPUNIT_ASSERT(error_of(broken).rfind("m.json:" + std::to_string(line_of(broken, ",,")) + ": not valid JSON", 0) == 0);
    CPPUNIT_ASSERT(!error_of(ok.substr(0, ok.size() / 2)).empty());
    CPPUNIT_ASSERT(error_of(replace_once(ok, "\"burn_in\"", "\"thin\": 1, \"burn_in\"")).find("not valid JSON") != std::string::npos);  // duplicate key
    CPPUNIT_ASSERT(error_of("[]").find("expected a JSON object") != std::string::npos);
  }

  void testMutationsNeverCrash() {
    MarkovModel m = fit_markov_model(hand_log());
    const std::string ok = markov_model_json(m);
    std::mt19937 rng(5);
    const std::string alphabet = "0123456789-.,:[]{}\" eE";
    std::size_t refused = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string t = ok;
      for (int k = 0; k < 1 + int(rng() % 3); ++k) t[rng() % t.size()] = alphabet[rng() % alphabet.size()];
      try {
        const MarkovModel x = parse_markov_model(t, "x.json");
        ModelGenConfig g;
        g.jobs = 200;
        const auto recs = generate_from_model(x, g, nullptr);  // a valid model generates
        CPPUNIT_ASSERT_EQUAL(std::size_t(200), recs.size());
      } catch (const ModelError& e) {
        ++refused;
        CPPUNIT_ASSERT(std::string(e.what()).rfind("x.json:", 0) == 0);
      }
    }
    CPPUNIT_ASSERT(refused > 1000);
  }

  void testWriteIsAtomic() {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/easypp-model-XXXXXX";
    CPPUNIT_ASSERT(::mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    const MarkovModel m = fit_markov_model(hand_log());
    write_markov_model(dir + "/m.json", m);
    CPPUNIT_ASSERT_EQUAL(markov_model_json(m), markov_model_json(read_markov_model(dir + "/m.json")));
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), files);  // no temporary left
    // An unwritable place: an error, and nothing there.
    bool threw = false;
    try {
      write_markov_model(dir + "/no/such/dir/m.json", m);
    } catch (const ModelWriteError& e) {
      threw = !e.created;
    }
    CPPUNIT_ASSERT(threw);
    CPPUNIT_ASSERT(!fs::exists(dir + "/no"));
    bool missing = false;
    try {
      read_markov_model(dir + "/none.json");
    } catch (const ModelError& e) {
      missing = std::string(e.what()).find("none.json: cannot read") != std::string::npos;
    }
    CPPUNIT_ASSERT(missing);
    fs::remove_all(dir);
  }

  void testGenerationIsDeterministicAndSane() {
    const MarkovModel m = fit_markov_model(hand_log());
    ModelGenConfig g;
    g.seed = 3;
    g.jobs = 5000;
    swf::Header h;
    const auto a = generate_from_model(m, g, &h);
    const auto b = generate_from_model(m, g, nullptr);
    CPPUNIT_ASSERT_EQUAL(std::size_t(5000), a.size());
    std::size_t differ = 0;
    g.seed = 4;
    const auto c = generate_from_model(m, g, nullptr);
    for (std::size_t i = 0; i < a.size(); ++i) {
      CPPUNIT_ASSERT(swf::format_record(a[i]) == swf::format_record(b[i]));
      differ += swf::format_record(a[i]) != swf::format_record(c[i]);
      CPPUNIT_ASSERT_EQUAL(std::int64_t(i) + 1, a[i].job);
      if (i) CPPUNIT_ASSERT(a[i].submit >= a[i - 1].submit);
      CPPUNIT_ASSERT(a[i].alloc_procs >= 1 && a[i].alloc_procs <= 16);
      CPPUNIT_ASSERT(a[i].run >= 0 && a[i].req_time > 0);
      CPPUNIT_ASSERT(a[i].user >= 1);
      CPPUNIT_ASSERT_EQUAL(a[i].run > a[i].req_time ? std::int64_t(0) : std::int64_t(1), a[i].status);
    }
    CPPUNIT_ASSERT(differ > 4000);
    // Only the logged sizes: 2, 4, 5, 8, 16.
    for (const auto& r : a) {
      const auto s = r.alloc_procs;
      CPPUNIT_ASSERT(s == 2 || s == 4 || s == 5 || s == 8 || s == 16);
    }
    bool procs = false;
    for (const auto& [k, v] : h.entries) procs |= k == "MaxProcs" && v == "16";
    CPPUNIT_ASSERT(procs);
    // The workload conversion keeps every job.
    const Workload w = generate_model_workload(m, g, "model:test", {});
    CPPUNIT_ASSERT_EQUAL(std::size_t(5000), w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::int64_t(16), w.procs);
  }

  // The generated sequence of size classes follows the fitted matrix: the
  // empirical transition frequencies of a long run are within 0.02 of it.
  void testChainFollowsTheTransitionMatrix() {
    const std::string kth = easypp::testing::workload_path("KTH-SP2-1996-2.1-cln.swf");
    CPPUNIT_ASSERT_MESSAGE("missing " + kth, easypp::testing::file_exists(kth));
    const MarkovModel m = fit_markov_model(load_workload(kth, {}));
    ModelGenConfig g;
    g.jobs = 300000;
    const auto recs = generate_from_model(m, g, nullptr);
    auto cls = [](std::int64_t s) {
      std::int64_t c = 1;
      while (c * 2 <= s) c *= 2;
      return c;
    };
    std::map<std::pair<std::int64_t, std::int64_t>, double> seen;
    std::map<std::int64_t, double> from;
    for (std::size_t i = 1; i < recs.size(); ++i) {
      const auto a = cls(recs[i - 1].alloc_procs), b = cls(recs[i].alloc_procs);
      seen[{a, b}] += 1;
      from[a] += 1;
    }
    std::map<std::int64_t, double> row;
    for (const MarkovTransition& t : m.transitions) row[m.states[t.from].size_class] += double(t.jobs);
    for (const MarkovTransition& t : m.transitions) {
      const auto a = m.states[t.from].size_class, b = m.states[t.to].size_class;
      const double want = double(t.jobs) / row[a];
      const double got = seen[{a, b}] / from[a];
      CPPUNIT_ASSERT_MESSAGE(std::to_string(a) + "->" + std::to_string(b) + ": " + std::to_string(got) +
                                 " vs " + std::to_string(want),
                             std::fabs(got - want) < 0.02);
    }
  }

  void testModelSpec() {
    std::string path, err;
    ModelGenConfig g;
    CPPUNIT_ASSERT(parse_model_spec("m.json", &path, g, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("m.json"), path);
    CPPUNIT_ASSERT(parse_model_spec("dir/m.json:seed=7,jobs=100,thin=10", &path, g, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("dir/m.json"), path);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(7), g.seed);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(100), g.jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(10), g.thin);
    // A ':' in the file name stays in it.
    ModelGenConfig h;
    CPPUNIT_ASSERT(parse_model_spec("a:b.json", &path, h, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("a:b.json"), path);
    CPPUNIT_ASSERT(parse_model_spec("a:b.json:seed=2", &path, h, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("a:b.json"), path);
    CPPUNIT_ASSERT(!parse_model_spec("m.json:seed=-1", &path, h, &err));
    CPPUNIT_ASSERT(err.find("bad value '-1' for seed") != std::string::npos);
    CPPUNIT_ASSERT(!parse_model_spec("m.json:jobs=0", &path, h, &err));
    CPPUNIT_ASSERT(!parse_model_spec("m.json:thin=1001", &path, h, &err));
    CPPUNIT_ASSERT(!parse_model_spec("", &path, h, &err));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), h.seed);  // unchanged by the failures
  }

  void testKsDistance() {
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, ks_distance({1, 2, 3}, {1, 2, 3}), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, ks_distance({1, 2}, {3, 4}), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, ks_distance({1, 2, 3, 4}, {3, 4, 5, 6}), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, ks_distance({1, 1, 2, 2}, {1, 1, 1, 1}), 1e-12);
  }

  // On a real log: the drawn workloads' distributions are the log's (KS
  // distances under 0.03), load and users close, and the paper's predictor
  // nearly as accurate as on the log (the user layer's purpose).
  void testFittedToKth() {
    const std::string kth = easypp::testing::workload_path("KTH-SP2-1996-2.1-cln.swf");
    CPPUNIT_ASSERT_MESSAGE("missing " + kth, easypp::testing::file_exists(kth));
    const Workload log = load_workload(kth, {});
    const MarkovModel m = fit_markov_model(log);
    ValidationOptions vo;
    vo.seeds = 2;
    vo.schedulers = {"easy++"};
    const Validation v = validate_model(m, "kth", log, vo);
    auto row = [&](const std::string& group, const std::string& name) -> const ValidationRow& {
      for (const ValidationRow& r : v.rows)
        if (r.group == group && r.name == name) return r;
      CPPUNIT_FAIL("no row " + group + " " + name);
      return v.rows.front();
    };
    for (const char* d : {"size", "runtime", "interarrival"})
      for (double x : row("KS distance", d).model) CPPUNIT_ASSERT_MESSAGE(d, x < 0.03);
    for (double x : row("workload", "offered load").model) CPPUNIT_ASSERT(std::fabs(x / row("workload", "offered load").log - 1) < 0.1);
    for (double x : row("users", "users").model) CPPUNIT_ASSERT(std::fabs(x / row("users", "users").log - 1) < 0.15);
    const ValidationRow& acc = row("users", "paper's predictor accuracy, offline (%)");
    for (double x : acc.model) CPPUNIT_ASSERT_MESSAGE(std::to_string(x) + " vs " + std::to_string(acc.log), std::fabs(x - acc.log) < 5);
    const ValidationRow& in_easypp = row("easy++", "accuracy (%)");
    for (double x : in_easypp.model) CPPUNIT_ASSERT(std::fabs(x - in_easypp.log) < 5);
    // Without the user layer the same jobs would be far less predictable:
    // the estimates alone are 47% accurate on KTH, the predictor ~59%.
    CPPUNIT_ASSERT(acc.log > 55);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MarkovModelTest);
