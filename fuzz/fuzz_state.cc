// Fuzz target: the plugin's state and status files (plugin/plugin_state.cc).
//
// The input is one file, read both as a state file (load_state) and as a
// status file (read_status). Checked:
//  - a refused file gives a message naming it and leaves the output empty;
//  - what is read is written back (save_state / write_status succeed: the
//    writer accepts everything the reader does) and reads back the same (the
//    optional slowdowns of adaptive selective thresholds included), and
//    a second write gives the very same bytes (the format is stable);
//  - the history restored into the predictor, as the plugin does at start,
//    predicts within [1, estimate] for every user in it.
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "easypp/predictor.h"
#include "fuzz_util.h"
#include "plugin_state.h"

using namespace easypp;
using namespace easypp::plugin;
using easypp::fuzz::TempDir;

namespace {

bool same_rings(const std::vector<Predictor::Ring>& a, const std::vector<Predictor::Ring>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].user != b[i].user || a[i].estimate_key != b[i].estimate_key ||
        a[i].entries.size() != b[i].entries.size())
      return false;
    for (std::size_t k = 0; k < a[i].entries.size(); ++k)
      if (a[i].entries[k].runtime != b[i].entries[k].runtime ||
          a[i].entries[k].estimate != b[i].entries[k].estimate)
        return false;
  }
  return true;
}

bool same_state(const SavedState& a, const SavedState& b) {
  return a.last_learned_end == b.last_learned_end && a.learned_jobs == b.learned_jobs &&
         a.window == b.window && same_rings(a.rings, b.rings) &&
         a.slowdowns.has_value() == b.slowdowns.has_value() &&
         (!a.slowdowns || *a.slowdowns == *b.slowdowns);
}

// Seconds are written with microsecond resolution: compare at that.
bool same_seconds(double a, double b) { return std::fabs(a - b) <= 1e-6 * (1 + std::fabs(a)); }

bool same_status(const Status& a, const Status& b, bool exact) {
  auto sec = [exact](double x, double y) { return exact ? x == y : same_seconds(x, y); };
  const CycleStats &c = a.last, &d = b.last;
  const Totals &t = a.totals, &u = b.totals;
  if (a.version != b.version || a.slurm_version != b.slurm_version || a.written != b.written ||
      a.settings != b.settings || a.state_file != b.state_file)
    return false;
  if (c.time != d.time || !sec(c.seconds, d.seconds) || c.partitions != d.partitions ||
      c.pending != d.pending || c.running != d.running || c.tested != d.tested ||
      c.started_in_order != d.started_in_order || c.started_backfill != d.started_backfill ||
      c.reservations != d.reservations || c.corrections != d.corrections ||
      c.learned != d.learned || c.yields != d.yields || c.het_started != d.het_started ||
      c.het_undone != d.het_undone || c.interrupted != d.interrupted ||
      c.trigger != d.trigger)
    return false;
  if (t.cycles != u.cycles || t.tested != u.tested || t.started_in_order != u.started_in_order ||
      t.started_backfill != u.started_backfill || t.corrections != u.corrections ||
      t.learned != u.learned || !sec(t.seconds, u.seconds) || !sec(t.max_seconds, u.max_seconds))
    return false;
  if (a.slowdowns.has_value() != b.slowdowns.has_value() ||
      (a.slowdowns && *a.slowdowns != *b.slowdowns) || a.thresholds != b.thresholds)
    return false;
  if (!same_rings(a.history, b.history) || a.jobs.size() != b.jobs.size()) return false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const JobStatus &j = a.jobs[i], &k = b.jobs[i];
    if (j.job_id != k.job_id || j.array != k.array || j.user != k.user ||
        j.user_name != k.user_name || j.partition != k.partition || j.state != k.state ||
        j.submit != k.submit || j.start != k.start || j.estimate != k.estimate ||
        j.prediction != k.prediction || j.corrections != k.corrections ||
        j.reserved != k.reserved || j.from_history != k.from_history)
      return false;
  }
  return true;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The plugin restores the history into its predictor at start.
void check_predictions(const std::vector<Predictor::Ring>& rings, int window) {
  PredictorConfig cfg;
  cfg.window = window;
  for (HistoryType type : {HistoryType::All, HistoryType::Extended}) {
    cfg.type = type;
    Predictor p(cfg);
    p.restore(rings);
    for (const Predictor::Ring& r : rings) {
      for (Time est : {Time(1), Time(3600), r.estimate_key > 0 ? r.estimate_key : Time(60),
                       Time(1) << 40}) {
        const Time pred = p.predict(r.user, est);
        FUZZ_CHECK(pred >= 1 && pred <= est);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static TempDir dir("state");
  const std::string in = dir.write("input.json", data, size);

  // As a state file.
  {
    SavedState s;
    s.window = 7;  // must be reset on failure
    std::string err;
    LoadFailure failure = LoadFailure::kNone;
    if (!load_state(in, &s, &err, &failure)) {
      FUZZ_CHECK(err.rfind(in + ": ", 0) == 0);
      // the file exists and is readable: only its content can be refused
      FUZZ_CHECK(failure == LoadFailure::kCorrupt);
      FUZZ_CHECK(same_state(s, SavedState{}));
    } else {
      check_predictions(s.rings, s.window);
      const std::string out = dir.file("easypp_state.json");
      FUZZ_CHECK(save_state(out, s, &err));
      struct stat st;
      FUZZ_CHECK(stat(out.c_str(), &st) == 0 && (st.st_mode & 0777) == 0600);
      SavedState again;
      FUZZ_CHECK(load_state(out, &again, &err));
      FUZZ_CHECK(same_state(s, again));
    }
  }

  // As a status file.
  {
    Status s;
    std::string err;
    if (!read_status(in, &s, &err)) {
      FUZZ_CHECK(err.rfind(in + ": ", 0) == 0);
      FUZZ_CHECK(s.jobs.empty() && s.history.empty() && s.version.empty());
    } else {
      const std::string out = dir.file("easypp_status.json");
      FUZZ_CHECK(write_status(out, s, &err));
      Status again;
      FUZZ_CHECK(read_status(out, &again, &err));
      FUZZ_CHECK(same_status(s, again, false));
      // Written twice, the same bytes; read a third time, the same values.
      const std::string first = slurp(out);
      FUZZ_CHECK(write_status(out, again, &err));
      FUZZ_CHECK(slurp(out) == first);
      Status third;
      FUZZ_CHECK(read_status(out, &third, &err));
      FUZZ_CHECK(same_status(again, third, true));
    }
  }
  return 0;
}
