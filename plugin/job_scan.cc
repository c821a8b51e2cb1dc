#include "job_scan.h"

namespace easypp::plugin {

// The book's settings in slurmctld (and in easypp-shadow, which must predict
// as it does): a correction falls due 1 s after the predicted end (Slurm
// keeps whole seconds and learns of an end a little late, so a job whose
// runtime equals its prediction is not corrected, as in the simulator, where
// the termination comes first); runtimes of 0 s (jobs that never ran) are
// not learned; job ids are sparse.
PredictionBook::Options plugin_book_options() {
  PredictionBook::Options o;
  o.grace = 1;
  o.min_learned_runtime = 1;
  o.dense_handles = 0;
  o.always_learn = true;
  return o;
}

JobScan::JobScan(PredictionBook& book, Time now, Time watermark)
    : book_(book), now_(now), watermark_(watermark) {
  book_.begin_sweep();
}

void JobScan::observe(const JobFacts& j) {
  switch (j.state) {
    case JobFacts::State::Pending:
    case JobFacts::State::Other:
      book_.keep(j.id);
      return;
    case JobFacts::State::Running:
      ++running_;
      book_.observe_running(j.id, j.user, j.estimate, j.start, now_);
      return;
    case JobFacts::State::Finished:
      break;
  }
  if (j.end <= watermark_) return;  // learned before (or before a restart)
  if (j.end >= now_) {              // ended during this second: learned next cycle
    book_.keep(j.id);
    return;
  }
  // Learn each job once: it ran (the book saw it running, or it has an
  // allocation and a positive run time). A heterogeneous job is one run of
  // its user: learned from its leader only (the components end together).
  const JobPlan* p = book_.find(j.id);
  const bool ran = (p != nullptr && p->running) || (j.had_allocation && j.runtime > 0);
  if (ran && !j.het_component) {
    if (book_.finish(j.id, j.user, j.estimate, j.runtime, now_, j.completed)) ++learned_;
    // Every job that ran counts for the slowdowns (as in the harness), learned
    // or not (learn=completed, learn-min-runtime).
    if (means_ != nullptr && j.start > 0 && j.end > j.start) {
      means_->record(j.start > j.submit ? j.start - j.submit : 0, j.end - j.start, j.width, sel_);
      ++recorded_;
    }
  } else {
    book_.forget(j.id);
  }
}

Time JobScan::finish() {
  forgotten_ = book_.sweep();
  return now_ - 1 > watermark_ ? now_ - 1 : watermark_;
}

}  // namespace easypp::plugin
