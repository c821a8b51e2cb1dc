// The C++ side of sched/easypp: configuration, the learned history, and the
// scheduling cycle, phase by phase (run_cycle() below calls them in order).
//
// One cycle, under the lock set sched/backfill takes ({conf READ, job WRITE,
// node WRITE, part READ, fed READ}):
//   1. reload_settings(): re-read SchedulerParameters if `scontrol
//      reconfigure` asked for it;
//   2. scan_jobs(): job_list into the PredictionBook (JobScan: finished jobs
//      learned once, running jobs tracked, vanished jobs forgotten), then the
//      corrections that fell due (PredictionBook::correct_expired);
//   3. build_queues(): the queue as backfill builds it (build_job_queue +
//      sort_job_queue), grouped by partition in Slurm's order, without what
//      EASY++ must not make its head (limits, licenses, burst buffers,
//      heterogeneous jobs, magnetic reservations); each schedulable job's
//      prediction made or refreshed (PredictionBook::observe_waiting);
//   4. run_passes(): the planning swap on (start + prediction in the running
//      jobs' end_time; true values back before any unlock, yield or
//      select_nodes()), libpredict's schedule_pass() for each partition
//      (highest priority first) over the Slurm adapter; then
//      start_het_jobs(): each pending heterogeneous job, in Slurm's order,
//      whose components all fit now around this cycle's reservations;
//   5. publish_planned() and collect_status(): planned starts for squeue
//      --start, the status snapshot; the true end_times back, checked,
//      unlocked; then, without the lock, write_files() (status, and the
//      history if it changed) and schedule_next() (the next wake-up).
// The agent sleeps until the next periodic cycle or the next predicted end
// of a running job (+1 s of grace): waking there is the correction timer,
// and the cycle that follows is the scheduling pass the correction asks for.
//
// Every extern "C" function catches all exceptions; nothing here calls
// fatal(): a failure is logged and the cycle ends.
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "easypp/policy.h"
#include "easypp/prediction_book.h"
#include "easypp/queue.h"
#include "acct_limits.h"
#include "het_jobs.h"
#include "job_scan.h"
#include "plugin_config.h"
#include "plugin_state.h"
#include "sched_easypp.h"
#include "slurm_api.h"
#include "slurm_cluster.h"

namespace {

using namespace easypp;
using namespace easypp::plugin;

// Estimate of a job without a finite time limit (TimeLimit=UNLIMITED in a
// partition without MaxTime): one year, like sched/backfill's YEAR_MINUTES.
constexpr Time kUnlimitedEstimate = Time(365) * 24 * 3600;

// Corrections go to the log (DebugFlags=Backfill, like every per-cycle line).
class CorrectionLog : public PredictionBook::Listener {
 public:
  void prediction_changed(const JobPlan& p, Time old_p, PlanChange why, Time) override {
    if (why == PlanChange::Corrected)
      log_flag(BACKFILL, "sched/easypp: correction: JobId=%u prediction %ld s -> %ld s (%u)",
               p.handle, long(old_p), long(p.prediction), p.corr.count);
    else
      debug2("sched/easypp: JobId=%u predicted again: %ld s -> %ld s (history changed)",
             p.handle, long(old_p), long(p.prediction));
  }
};

struct State {
  State() : book(PluginConfig().sched, plugin_book_options()) { book.set_listener(&log); }

  std::mutex mu;  // guards config (read by the agent, written on reload)
  PluginConfig config;
  std::atomic<bool> reload{false};

  // Agent thread only (and init/fini while the agent is not running).
  CorrectionLog log;
  PredictionBook book;
  Ledger ledger;
  std::string state_path;   // StateSaveLocation/easypp_state.json
  std::string status_path;  // StateSaveLocation/easypp_status.json
  Time watermark = 0;       // finished jobs with end_time <= watermark are learned
  // The bounded slowdowns of the finished jobs (recorded as they are learned,
  // whatever easypp_selective says; kept in the state file): with
  // easypp_selective=adaptive(-d), the cycle's thresholds (selective.h).
  SlowdownMeans slowdowns;
  bool slowdowns_changed = false;  // recorded since the last save
  std::uint64_t cycles = 0;
  Totals totals;
  std::map<std::uint32_t, PlannedStart> planned;  // heads' planned starts, last cycle
  std::map<std::uint32_t, PlannedStart> projected;  // projected starts, last cycle
  std::set<std::uint32_t> het_seen;  // het jobs already announced in the log
  LimitSkips limits;  // jobs held back by an accounting limit, this cycle and the last
  Time next_wake = 0;                // Unix time of the next cycle
  std::string next_trigger = "startup";
  std::uint32_t next_job = 0;  // the job whose predicted end is the next wake
  std::string last_status_error, last_state_error;
  // The status file lists every job: at tens of thousands of jobs a write
  // costs hundreds of milliseconds of the agent's time. A write that took
  // at least kStatusSlowUsec defers the next one until kStatusShare times
  // its cost has gone by (steady clock, us); cheaper writes (a few thousand
  // jobs) never defer: the file is rewritten after every cycle.
  std::int64_t status_not_before = 0;
  std::int64_t status_usec = -1;  // the last cycle's write (-1: deferred)
  bool state_blocked = false;  // the state file could not be read at start: never replace it
};

State* g_state = nullptr;  // created in init, deleted in fini (agent stopped)

// Reads slurm_conf: the caller holds the configuration lock (or runs inside
// slurmctld's configuration read, as init() does).
// sched/backfill's keys (backfill_keys()): the honoured ones are read by
// parse_scheduler_parameters(); the others are named here, in one warning
// line, and each harmful one (bf_licenses) in an error line of its own.
PluginConfig load_config() {
  ParsedConfig parsed = parse_scheduler_parameters(slurm_conf.sched_params);
  for (const std::string& w : parsed.warnings) error("sched/easypp: %s", w.c_str());
  const std::vector<const BackfillKey*> bf = backfill_keys_present(slurm_conf.sched_params);
  const std::string ignored = ignored_backfill_keys_line(bf);
  if (!ignored.empty()) error("sched/easypp: warning: %s", ignored.c_str());
  for (const BackfillKey* k : bf)
    if (k->use == BackfillKeyUse::kHarmful)
      error("sched/easypp: %s", harmful_backfill_key_line(*k).c_str());
  return parsed.config;
}

void set_paths(State& s) {
  const std::string dir = slurm_conf.state_save_location ? slurm_conf.state_save_location : ".";
  s.state_path = dir + "/" + kStateFileName;
  s.status_path = dir + "/" + kStatusFileName;
}

PluginConfig current_config(State& s) {
  std::lock_guard<std::mutex> g(s.mu);
  return s.config;
}

// easypp_file_mode on the status file already there (it is rewritten with
// it after the next cycle); the state file is 0600 whatever it says, and
// one an earlier release opened is closed again here.
void apply_mode(State& s, const PluginConfig& cfg) {
  const std::pair<const std::string*, unsigned> files[] = {
      {&s.state_path, kStateFileMode}, {&s.status_path, unsigned(cfg.file_mode)}};
  for (const auto& [path, mode] : files) {
    std::string err;
    if (!apply_file_mode(*path, mode, &err)) error("sched/easypp: %s", err.c_str());
  }
}

// Load the history. A missing file is normal (first start); a corrupt one is
// reported, moved aside (easypp_state.json.bad, never replacing an older
// .bad: .bad.1, ...), and the plugin starts empty; one that cannot be read
// (permissions, I/O, not a regular file: a FIFO would block a plain open) is
// reported and left where it is, for the admin to repair. Never blocks.
void load_history(State& s, const PluginConfig& cfg) {
  SavedState saved;
  std::string err;
  LoadFailure why = LoadFailure::kNone;
  if (!load_state(s.state_path, &saved, &err, &why)) {
    if (why == LoadFailure::kMissing) {
      info("sched/easypp: no state file %s yet, starting with an empty history",
           s.state_path.c_str());
    } else if (why == LoadFailure::kCorrupt) {
      std::string move_err;
      const std::string bad = move_aside(s.state_path, &move_err);
      error("sched/easypp: cannot use the state file: %s; starting with an empty history%s%s%s",
            err.c_str(), bad.empty() ? " (" : " (the file is kept as ",
            bad.empty() ? move_err.c_str() : bad.c_str(), ")");
    } else {
      // Saving now would replace the history it may hold: not until a restart
      // finds it readable (or gone).
      s.state_blocked = true;
      error("sched/easypp: cannot read the state file: %s; starting with an empty history; the "
            "file is left in place and the history is not saved until slurmctld restarts with "
            "it readable or removed",
            err.c_str());
    }
    return;
  }
  s.book.restore_history(saved.rings, time(nullptr));
  s.book.set_learned_total(saved.learned_jobs);
  s.watermark = saved.last_learned_end;
  if (saved.slowdowns) s.slowdowns.restore(*saved.slowdowns);
  const std::string slowdowns =
      saved.slowdowns ? ", with the slowdowns of " + std::to_string(saved.slowdowns->n_all) +
                            " finished jobs"
                      : "";
  info("sched/easypp: history of %zu users (%llu jobs learned so far) loaded from %s%s",
       s.book.predictor().users(), static_cast<unsigned long long>(saved.learned_jobs),
       s.state_path.c_str(), slowdowns.c_str());
  apply_mode(s, cfg);
}

// rings: the predictor's snapshot when the caller already took one.
void save_history(State& s, const PluginConfig& cfg,
                  const std::vector<Predictor::Ring>* rings = nullptr) {
  if (!cfg.state || !(s.book.history_changed() || s.slowdowns_changed) || s.state_blocked) return;
  SavedState saved;
  saved.last_learned_end = s.watermark;
  saved.learned_jobs = s.book.learned_total();
  saved.window = cfg.sched.predictor.window;
  saved.rings = rings ? *rings : s.book.predictor().snapshot();
  saved.slowdowns = s.slowdowns.sums();
  std::string err;
  if (save_state(s.state_path, saved, &err)) {
    s.book.clear_history_changed();
    s.slowdowns_changed = false;
    if (!s.last_state_error.empty()) info("sched/easypp: state file written again");
    s.last_state_error.clear();
  } else if (err != s.last_state_error) {
    error("sched/easypp: cannot save the history: %s (will retry)", err.c_str());
    s.last_state_error = err;
  }
}

// The kill time in seconds (at least 1): the time limit, else the
// partition's maximum, else a year.
Time estimate_of(const job_record_t* job, const part_record_t* part) {
  if (job->time_limit != NO_VAL && job->time_limit != INFINITE)
    return std::max<Time>(Time(job->time_limit) * 60, 1);
  if (part == nullptr) part = job->part_ptr;
  if (part != nullptr && part->max_time != NO_VAL && part->max_time != INFINITE)
    return std::max<Time>(Time(part->max_time) * 60, 1);
  return kUnlimitedEstimate;
}

bool is_active(const job_record_t* job) { return IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job); }

// The cycle's "now". Not time(): glibc's time() reads the coarse clock, which
// can still show the previous second for a few milliseconds after the agent
// woke at a whole second by gettimeofday() (the correction timer would then
// find nothing due yet).
time_t wall_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec;
}

// The scheduling lock set for the cycle's lifetime; the planning values are
// checked before the unlock (the EndTimeSwap inside the scope has already
// put the true values back by then).
class CycleLocks {
 public:
  explicit CycleLocks(Ledger& l) : ledger_(l) { easypp_slurm_lock(); }
  ~CycleLocks() {
    assert_no_planning_values(ledger_, "unlocking");
    easypp_slurm_unlock();
  }
  CycleLocks(const CycleLocks&) = delete;
  CycleLocks& operator=(const CycleLocks&) = delete;

 private:
  Ledger& ledger_;
};

std::string user_name(const job_record_t* job) {
  if (job->user_name != nullptr) return job->user_name;
  const char* n = uid_to_string_cached(job->user_id);  // slurmctld's cache, not ours to free
  return n ? n : std::to_string(job->user_id);
}

// --- 1. settings ------------------------------------------------------------------

void reload_settings(State& s) {
  if (!s.reload.exchange(false)) return;
  const PluginConfig c = load_config();
  std::string before;
  {
    std::lock_guard<std::mutex> g(s.mu);
    before = s.config.describe();
    s.config = c;
  }
  set_paths(s);
  s.book.configure(c.sched);
  apply_mode(s, c);
  if (c.describe() != before)
    info("sched/easypp: reconfigured (%s)", c.describe().c_str());
  else
    debug("sched/easypp: configuration reread, unchanged (%s)", c.describe().c_str());
}

// --- 2. the job list into the book --------------------------------------------------

JobFacts facts_of(const job_record_t* job) {
  JobFacts f;
  f.id = job->job_id;
  f.user = job->user_id;
  f.estimate = estimate_of(job, nullptr);
  if (IS_JOB_PENDING(job)) {
    f.state = JobFacts::State::Pending;
  } else if (is_active(job)) {
    f.state = JobFacts::State::Running;
    f.start = job->start_time + job->tot_sus_time;
  } else if (IS_JOB_FINISHED(job)) {
    f.state = JobFacts::State::Finished;
    f.start = job->start_time;
    f.end = job->end_time;
    f.submit = job->details != nullptr ? job->details->submit_time : job->start_time;
    f.width = std::max<std::int64_t>(job->total_cpus, 1);
    f.runtime = job->end_time - job->start_time - job->tot_sus_time;
    // A job cancelled while pending has start_time == end_time and no nodes.
    f.had_allocation = job->start_time > 0 && job->end_time > job->start_time &&
                       (job->nodes != nullptr || job->node_bitmap != nullptr);
    f.het_component = job->het_job_id != 0 && job->het_job_id != job->job_id;
    f.completed = IS_JOB_COMPLETE(job);
  }
  return f;
}

void scan_jobs(State& s, time_t now, const Selective& sel, CycleStats* st) {
  JobScan scan(s.book, now, s.watermark);
  scan.record_slowdowns(&s.slowdowns, sel);
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* job;
  while ((job = static_cast<job_record_t*>(list_next(it)))) scan.observe(facts_of(job));
  list_iterator_destroy(it);
  s.watermark = scan.finish();
  if (scan.forgotten() > 0)
    debug("sched/easypp: %zu job(s) gone from the job list forgotten", scan.forgotten());
  st->running = scan.running();
  st->learned = scan.learned();
  if (scan.recorded() > 0) s.slowdowns_changed = true;
  st->corrections = s.book.correct_expired(now);
}

// --- 3. the queue ------------------------------------------------------------------

struct PartQueue {
  SlurmPartition part;
  std::vector<std::uint32_t> order;      // Slurm's order, EASY++ candidates
  std::vector<std::uint32_t> resv_jobs;  // in advanced reservations: start now only
  std::vector<std::uint32_t> now_only;   // refused for a limit lately: start now only
  std::vector<std::uint32_t> no_reserve;  // QOS NoReserve, MinPrioThreshold: backfill only
  QueueMap jobs;
};

struct Queues {
  std::deque<PartQueue> parts;  // stable: each SlurmPartition points to its map
  std::set<std::uint32_t> het_jobs;      // every het job with a component in the queue
  std::vector<std::uint32_t> het_order;  // leaders, in Slurm's order
  std::map<std::uint32_t, HetCandidate::Component> het_components;  // by job id
};

// build_job_queue(true, ...) clears the pending jobs' start times: show last
// cycle's planned and projected starts until this cycle's replace them.
void show_last_planned(const State& s) {
  for (const auto* starts : {&s.planned, &s.projected}) {
    for (const auto& kv : *starts) {
      job_record_t* job = find_job_record(kv.first);
      if (job == nullptr || !IS_JOB_PENDING(job) || job->start_time != 0) continue;
      job->start_time = kv.second.start;
      if (job->sched_nodes == nullptr && !kv.second.nodes.empty())
        job->sched_nodes = xstrdup(kv.second.nodes.c_str());
    }
  }
}

// Can this queue record be an EASY++ candidate (or a het component)?
bool schedulable(const job_queue_rec_t* rec, time_t now) {
  const job_record_t* job = rec->job_ptr;
  const part_record_t* part = rec->part_ptr;
  if (job == nullptr || part == nullptr || part->name == nullptr) return false;
  if (!IS_JOB_PENDING(job) || job->priority == 0 || job->details == nullptr) return false;
  // Magnetic reservations and multi-reservation requests: main scheduler.
  if (rec->resv_ptr != nullptr || job->resv_list != nullptr) return false;
  if (job->burst_buffer != nullptr) return false;  // stage-in: main scheduler
  if (job->preempt_in_progress) return false;
  if (!(part->state_up & PARTITION_SCHED) || part->node_bitmap == nullptr) return false;
  // Licenses unavailable now: not startable, so never the head
  // (sched/backfill skips them too). Accounting limits: limit_verdict().
  return job->license_list == nullptr ||
         license_job_test(const_cast<job_record_t*>(job), now, true) == SLURM_SUCCESS;
}

// Waiting since it became eligible (begin_time; Slurm sets it then), for the
// starvation guard (easypp_safe_after).
Time waiting_since(const job_record_t* job) {
  return job->details->begin_time ? job->details->begin_time : job->details->submit_time;
}

void queue_record(State& s, job_queue_rec_t* rec, LimitVerdict verdict, time_t now, Queues* q,
                  std::map<std::string, std::size_t>* index) {
  job_record_t* job = rec->job_ptr;
  part_record_t* part = rec->part_ptr;
  if (job->het_job_id != 0) {
    // Never in an EASY++ pass (never the head, never reserved for): started
    // after the passes when all its components fit now.
    HetCandidate::Component& hc = q->het_components[job->job_id];
    if (hc.job_id == 0) {
      hc.job_id = job->job_id;
      if (job->het_job_id == job->job_id) q->het_order.push_back(job->job_id);
      s.book.observe_waiting(job->job_id, job->user_id, estimate_of(job, part), waiting_since(job),
                             now);
    }
    hc.parts.emplace_back(part, rec->priority);
    return;
  }
  auto pi = index->find(part->name);
  if (pi == index->end()) {
    pi = index->emplace(part->name, q->parts.size()).first;
    q->parts.emplace_back();
    PartQueue& pq = q->parts.back();
    pq.part = SlurmPartition{part, part->name, &pq.jobs};
  }
  PartQueue& pq = q->parts[pi->second];
  if (pq.jobs.count(job->job_id)) return;
  const Time since = waiting_since(job);
  s.book.observe_waiting(job->job_id, job->user_id, estimate_of(job, part), since, now);
  pq.jobs[job->job_id] =
      QueuedJob{job->job_id, rec->priority, std::int64_t(job->details->min_cpus), since};
  if (job->resv_ptr != nullptr || job->resv_name != nullptr)
    pq.resv_jobs.push_back(job->job_id);
  else if (verdict == LimitVerdict::kNowOnly)
    pq.now_only.push_back(job->job_id);
  else if (verdict == LimitVerdict::kNoReserve)
    pq.no_reserve.push_back(job->job_id);
  else
    pq.order.push_back(job->job_id);
}

// Announce each pending het job once.
void note_het_jobs(State& s, const Queues& q) {
  for (auto it = s.het_seen.begin(); it != s.het_seen.end();)
    it = q.het_jobs.count(*it) ? std::next(it) : s.het_seen.erase(it);
  for (std::uint32_t h : q.het_jobs) {
    if (s.het_seen.insert(h).second)
      debug("sched/easypp: heterogeneous JobId=%u pending: started when all its components "
            "fit now, never reserved for",
            h);
  }
}

Queues build_queues(State& s, time_t now) {
  struct QueueList {  // the queue is freed on every path, exceptions included
    list_t* l;
    ~QueueList() { FREE_NULL_LIST(l); }
  } queue{build_job_queue(true, true)};
  sort_job_queue(queue.l);
  show_last_planned(s);
  Queues q;
  std::map<std::string, std::size_t> index;
  list_itr_t* it = list_iterator_create(queue.l);
  job_queue_rec_t* rec;
  while ((rec = static_cast<job_queue_rec_t*>(list_next(it)))) {
    if (rec->job_ptr != nullptr && rec->job_ptr->het_job_id != 0 && IS_JOB_PENDING(rec->job_ptr))
      q.het_jobs.insert(rec->job_ptr->het_job_id);
    if (!schedulable(rec, now)) continue;
    // Held back by an accounting limit: skipped, as sched/backfill skips it.
    const LimitVerdict v = limit_verdict(rec->job_ptr, rec->part_ptr, rec->priority, &s.limits);
    if (v != LimitVerdict::kSkip) queue_record(s, rec, v, now, &q, &index);
  }
  list_iterator_destroy(it);
  note_het_jobs(s, q);
  return q;
}

// --- 4. the passes -----------------------------------------------------------------

// Jobs started when they fit, never the head, before the pass: those in
// advanced reservations, and those select_nodes() refused for a limit
// lately (acct_limits.h).
void start_now_only(CycleEnv& env, SlurmAdapter& adapter, const std::vector<std::uint32_t>& ids) {
  for (std::uint32_t id : ids) {
    if (env.tested >= std::uint32_t(env.cfg.max_job_test)) break;
    ++env.depth;
    adapter.try_start_now(id);
  }
}

// After the pass: jobs that get no reservation (QOS NoReserve, a priority
// below MinPrioThreshold), tried as backfill candidates around this cycle's
// reservations, in Slurm's order, as sched/backfill tries them.
void backfill_no_reserve(CycleEnv& env, SlurmAdapter& adapter, const PartQueue& pq) {
  for (std::uint32_t id : pq.no_reserve) {
    if (env.interrupted || !adapter.can_start_more() || !adapter.may_continue()) break;
    ++env.depth;
    adapter.backfill(id, env.book.end_bound(id, env.now));
  }
}

// One partition: its start-now-only jobs, then the EASY++ pass, then its
// no-reservation jobs. True if the pass got through.
bool run_pass(CycleEnv& env, SlurmCluster& cluster, PartQueue& pq, CycleStats* st) {
  SlurmAdapter adapter(cluster, env.plan, env.book, pq.part);
  start_now_only(env, adapter, pq.resv_jobs);
  start_now_only(env, adapter, pq.now_only);
  if (pq.order.empty()) {
    backfill_no_reserve(env, adapter, pq);
    return true;  // no reservation to show
  }
  WaitQueue q(env.cfg.sched.policy.backfill);
  std::int64_t rank = 0;
  for (std::uint32_t id : pq.order) {
    const QueuedJob& qj = pq.jobs[id];
    const JobPlan* p = env.book.find(id);
    if (p == nullptr) continue;
    q.push(id, QueueKey{rank++, 0}, p->prediction, p->estimate, qj.width, qj.since,
           p->first_reservation);
  }
  const PassResult r = schedule_pass(Time(env.now), q, adapter, env.cfg.sched.policy);
  if (r.head_reserved && adapter.reservation() != nullptr)
    adapter.reservation()->room = r.head_room;
  st->reservations += r.reservations;
  env.depth += r.tested + r.started_in_order + r.reservations;
  if (!r.interrupted) backfill_no_reserve(env, adapter, pq);
  return !r.interrupted && !env.interrupted;
}

// Passes in Slurm's partition order; returns the partitions whose pass got
// as far as a reservation (their planned starts are current).
std::set<std::string> run_passes(CycleEnv& env, SlurmCluster& cluster, Queues& q, CycleStats* st) {
  cluster.idle_cpus(&env.plan.idle);
  env.swap.apply_later(env.now);  // written by the first probe that plans past now
  std::set<std::string> finished;
  for (PartQueue& pq : q.parts) {
    st->pending += std::uint32_t(pq.order.size() + pq.resv_jobs.size() + pq.now_only.size() +
                                 pq.no_reserve.size());
    ++st->partitions;
    if (env.interrupted) continue;
    if (run_pass(env, cluster, pq, st)) finished.insert(pq.part.name);
  }
  return finished;
}

// After the passes, so that a het job (which has no reservation) is a
// backfill candidate like any other: it can only use what this cycle's heads
// leave, and never delays one of them. In Slurm's order among themselves.
// Not when a pass was cut short: the reservations are then incomplete (the
// next cycle comes at once after a state change).
void start_het_jobs(CycleEnv& env, SlurmCluster& cluster, const Queues& q) {
  for (std::uint32_t hid : q.het_order) {
    if (env.interrupted) break;
    job_record_t* leader = find_job_record(hid);
    if (leader == nullptr || !IS_JOB_PENDING(leader) || leader->het_job_list == nullptr) continue;
    HetCandidate h;
    h.het_job_id = hid;
    bool runnable = true;
    list_itr_t* it = list_iterator_create(leader->het_job_list);
    job_record_t* comp;
    while ((comp = static_cast<job_record_t*>(list_next(it)))) {
      if (comp->het_job_id != hid) {  // a damaged list: leave the job alone
        runnable = false;
        break;
      }
      if (!IS_JOB_PENDING(comp)) continue;  // as backfill: only pending ones start
      auto c = q.het_components.find(comp->job_id);
      const JobPlan* p = env.book.find(comp->job_id);
      if (c == q.het_components.end() || c->second.parts.empty() || p == nullptr) {
        runnable = false;  // a component cannot start now (held, limits, begin time...)
        break;
      }
      h.components.push_back(c->second);
      h.prediction = std::max(h.prediction, p->prediction);
      h.estimate = std::max(h.estimate, p->estimate);
    }
    list_iterator_destroy(it);
    if (!runnable || h.components.empty()) continue;
    if (!cycle_may_continue(env)) break;  // budget, yield
    if (start_het_job(env, cluster, h) == HetStart::kNoFit)
      debug2("sched/easypp: heterogeneous JobId=%u: not every component fits now", hid);
  }
}

// --- 4b. projected starts beyond the heads ------------------------------------------------

// The jobs of the partition holding a reservation of this cycle, held in
// the projection from their shadow time for their prediction.
std::set<std::uint32_t> hold_reservations(const CycleEnv& env, const PartQueue& pq,
                                          StartProjection* proj) {
  std::set<std::uint32_t> held;
  for (const Reservation<Bitmap>& r : env.plan.reservations) {
    if (r.partition != pq.part.name) continue;
    held.insert(r.job);
    auto jq = pq.jobs.find(r.job);
    const JobPlan* p = env.book.find(r.job);
    if (r.shadow < kNever && jq != pq.jobs.end() && p != nullptr)
      proj->hold(r.shadow, r.shadow + p->prediction, jq->second.width);
  }
  return held;
}

// squeue --start beyond the head (easypp_publish_starts=N): the first N
// pending jobs of each partition whose pass got through, in queue order,
// are placed in a CPU-count projection of the partition (start_projection.h)
// with their predictions. Estimates: nothing is reserved, and no decision
// reads them (only pending jobs' start_time is written, after the passes).
void project_starts(CycleEnv& env, SlurmCluster& cluster, Queues& q,
                    const std::set<std::string>& finished) {
  const int n = env.cfg.publish_starts;
  if (n <= 0) return;
  const std::int64_t t0 = steady_usec();
  for (PartQueue& pq : q.parts) {
    if (!finished.count(pq.part.name) || pq.order.empty()) continue;
    StartProjection proj = cluster.projection(pq.part);
    const std::set<std::uint32_t> held = hold_reservations(env, pq, &proj);
    int k = 0;
    for (std::uint32_t id : pq.order) {
      if (k >= n) break;
      if (!cluster.still_pending(id)) continue;  // started in this cycle
      ++k;
      const JobPlan* p = env.book.find(id);
      if (held.count(id) || p == nullptr) continue;  // a reservation is its start
      ++env.projected_tried;
      const Time t = proj.place(pq.jobs[id].width, p->prediction);
      if (t < kNever)
        env.projected[id] = PlannedStart{pq.part.name, std::max<time_t>(time_t(t), env.now + 1), ""};
    }
  }
  env.projection_usec = steady_usec() - t0;
}

// --- 5. planned starts and status ------------------------------------------------------

// Planned starts of last cycle's heads that are heads no more are cleared
// (kept when their partition's pass did not get that far); new or moved
// reservations are logged.
void publish_planned(State& s, CycleEnv& env, const std::set<std::string>& finished) {
  for (const auto& kv : s.planned) {
    if (env.planned.count(kv.first)) continue;
    job_record_t* job = find_job_record(kv.first);
    if (job == nullptr || !IS_JOB_PENDING(job)) continue;
    if (finished.count(kv.second.partition) == 0) {
      env.planned[kv.first] = kv.second;  // pass did not get there: keep showing it
      continue;
    }
    if (job->start_time == kv.second.start) job->start_time = 0;
    xfree(job->sched_nodes);
  }
  for (const auto& kv : env.planned) {
    auto old = s.planned.find(kv.first);
    if (old == s.planned.end() || old->second.start != kv.second.start ||
        old->second.nodes != kv.second.nodes)
      log_flag(BACKFILL, "sched/easypp: reservation: JobId=%u partition=%s start=%ld (in %ld s) "
               "nodes=%s",
               kv.first, kv.second.partition.c_str(), long(kv.second.start),
               long(kv.second.start - env.now), kv.second.nodes.c_str());
  }
  s.planned = env.planned;
}

// The projected starts into the pending jobs' start_time (squeue --start);
// last cycle's kept for partitions whose pass did not get through, cleared
// for the others (a head's own planned start is never touched).
void publish_projected(State& s, CycleEnv& env, const std::set<std::string>& finished) {
  for (const auto& kv : s.projected) {
    if (env.projected.count(kv.first) || env.planned.count(kv.first)) continue;
    job_record_t* job = find_job_record(kv.first);
    if (job == nullptr || !IS_JOB_PENDING(job)) continue;
    if (finished.count(kv.second.partition) == 0)
      env.projected[kv.first] = kv.second;
    else if (job->start_time == kv.second.start)
      job->start_time = 0;
  }
  for (const auto& kv : env.projected) {
    job_record_t* job = find_job_record(kv.first);
    if (job != nullptr && IS_JOB_PENDING(job) && !env.planned.count(kv.first))
      job->start_time = kv.second.start;
  }
  s.projected = env.projected;
}

// DebugFlags=BackfillMap: every reservation of the cycle, changed or not,
// with the nodes it holds and the room the guard leaves around it.
void log_map(const CycleEnv& env) {
  if (!(slurm_conf.debug_flags & DEBUG_FLAG_BACKFILL_MAP)) return;
  for (const Reservation<Bitmap>& r : env.plan.reservations) {
    char* nodes = r.nodes ? bitmap2node_name(r.nodes.get()) : nullptr;
    // The head's room: none (no guard), 0 (a switch fired: safe
    // backfilling), or how far past the shadow an estimate may end.
    const std::string room = r.room >= kNever ? ""
                             : r.room == 0   ? " guarded (safe backfilling)"
                                             : " room=" + std::to_string(long(r.room)) + "s";
    const std::string shadow =
        r.shadow >= kNever ? std::string("never") : std::to_string(long(r.shadow));
    log_flag(BACKFILL_MAP, "sched/easypp: map: partition=%s JobId=%u shadow=%s nodes=%s%s",
             r.partition.c_str(), r.job, shadow.c_str(), nodes ? nodes : "(none)", room.c_str());
    xfree(nodes);
  }
}

JobStatus status_of(const JobPlan& t, const job_record_t* job, const CycleEnv& env) {
  JobStatus js;
  js.job_id = t.handle;
  if (job->array_task_id != NO_VAL)
    js.array = std::to_string(job->array_job_id) + "_" + std::to_string(job->array_task_id);
  js.user = job->user_id;
  js.user_name = user_name(job);
  js.partition = job->part_ptr && job->part_ptr->name ? job->part_ptr->name : "";
  js.state = IS_JOB_PENDING(job) ? "PENDING" : (IS_JOB_SUSPENDED(job) ? "SUSPENDED" : "RUNNING");
  js.submit = job->details ? job->details->submit_time : 0;
  js.estimate = t.estimate;
  js.prediction = t.prediction;
  js.corrections = t.corr.count;
  js.from_history = t.from_history;
  if (IS_JOB_PENDING(job)) {
    auto p = env.planned.find(t.handle);
    if (p != env.planned.end()) {
      js.start = p->second.start;
      js.reserved = true;
    } else if ((p = env.projected.find(t.handle)) != env.projected.end()) {
      js.start = p->second.start;  // a projection (an estimate), not reserved
    }
  } else {
    js.start = job->start_time;
  }
  return js;
}

void collect_status(const CycleEnv& env, Status* status) {
  status->jobs.reserve(env.book.size());
  env.book.for_each([&](const JobPlan& t) {
    const job_record_t* job = find_job_record(t.handle);
    if (job == nullptr || !(IS_JOB_PENDING(job) || is_active(job))) return;
    status->jobs.push_back(status_of(t, job, env));
  });
}

// --- after unlocking -----------------------------------------------------------------

constexpr std::int64_t kStatusShare = 20;  // a slow status file: at most 5% of the agent's time
constexpr std::int64_t kStatusSlowUsec = 50000;

void write_files(State& s, const PluginConfig& cfg, const CycleStats& st, Status* status,
                 bool with_status) {
  Totals& tot = s.totals;
  ++tot.cycles;
  tot.tested += st.tested;
  tot.started_in_order += st.started_in_order;
  tot.started_backfill += st.started_backfill;
  tot.corrections += st.corrections;
  tot.learned += st.learned;
  tot.seconds += st.seconds;
  if (st.seconds > tot.max_seconds) tot.max_seconds = st.seconds;

  status->history = s.book.predictor().snapshot();
  save_history(s, cfg, &status->history);
  s.status_usec = -1;
  if (!with_status) return;
  const std::int64_t t0 = steady_usec();
  status->version = EASYPP_VERSION;
  status->slurm_version = SLURM_VERSION_STRING;
  status->written = time(nullptr);
  status->settings = cfg.settings();
  status->state_file = cfg.state ? s.state_path : std::string();
  status->last = st;
  status->totals = tot;
  std::string err;
  if (!write_status(s.status_path, *status, &err, unsigned(cfg.file_mode))) {
    if (err != s.last_status_error)
      error("sched/easypp: cannot write the status file: %s", err.c_str());
    s.last_status_error = err;
  } else {
    s.last_status_error.clear();
  }
  s.status_usec = steady_usec() - t0;
  s.status_not_before = s.status_usec >= kStatusSlowUsec ? t0 + kStatusShare * s.status_usec : 0;
}

// The next wake-up: the periodic cycle, the next correction (which may be
// due already: run at once), or a retry.
void schedule_next(State& s, const PluginConfig& cfg, Time retry_at) {
  Time next = wall_seconds() + cfg.interval;
  std::string why = "interval";
  JobHandle jid = 0;
  const Time expiry = s.book.next_expiry(&jid);
  if (expiry < kNever && expiry < next) {
    next = expiry;
    why = "correction";
  }
  if (retry_at != 0 && retry_at < next) {
    next = retry_at;
    why = "retry";
  }
  s.next_wake = next;
  s.next_trigger = why;
  s.next_job = why == "correction" ? jid : 0;
}

// --- the cycle ---------------------------------------------------------------------------

// Phases 1-5 under the locks; the statistics of the cycle in *st, the status
// snapshot in *status. Returns when to retry (0: no retry needed).
Time locked_phases(State& s, std::int64_t t0, PluginConfig* cfg, CycleStats* st, Status* status,
                   bool with_status) {
  // bf_active (sdiag: a cycle is running; no purge of old jobs) is set
  // before the locks are taken and cleared after they are released, as
  // sched/backfill does: slurmctld's purge holds check_bf_running_lock while
  // it takes the job lock.
  const DiagActive diag;
  CycleLocks locks(s.ledger);
  easypp_cycle_locked();  // 25.05+: validate the reservations, as sched/backfill does
  const std::int64_t locked = steady_usec();
  reload_settings(s);
  *cfg = current_config(s);
  const time_t now = wall_seconds();
  ++s.cycles;
  st->time = now;
  scan_jobs(s, now, cfg->sched.policy.selective, st);
  // Adaptive selective thresholds: scale x the slowdowns so far, for this
  // cycle's passes (cfg is the cycle's copy; its settings stay "adaptive").
  const Selective& sel = cfg->sched.policy.selective;
  if (sel.mode == Selective::Mode::Adaptive) s.slowdowns.apply(cfg->sched.policy.selective);
  status->slowdowns = s.slowdowns.sums();
  if (sel.on())
    status->thresholds.assign(sel.threshold.begin(), sel.per_category ? sel.threshold.end()
                                                                      : sel.threshold.begin() + 1);

  SlurmSwap swap(s.ledger, s.book);
  CycleEnv env(*cfg, s.book, s.ledger, swap);
  env.now = now;
  env.started_usec = t0;
  env.locked_usec = steady_usec();
  env.plan.caps = FairCaps{cfg->max_job_user, cfg->max_job_part, cfg->max_job_assoc,
                           cfg->max_job_user_part};
  s.limits.begin_cycle(now);
  env.limits = &s.limits;
  SlurmCluster cluster(env);
  Queues q = build_queues(s, now);
  const std::set<std::string> finished = run_passes(env, cluster, q, st);
  start_het_jobs(env, cluster, q);
  project_starts(env, cluster, q, finished);

  st->tested = env.tested;
  st->started_in_order = env.started_in_order;
  st->started_backfill = env.started_backfill;
  st->yields = env.yields;
  st->probes = env.probes;
  st->interrupted = env.interrupted;
  st->het_started = env.het_started;
  st->het_undone = env.het_undone;
  st->capped = env.plan.tried.skipped;
  st->limited = std::uint32_t(s.limits.count());
  st->projected = std::uint32_t(env.projected.size());
  st->projection_usec = env.projection_usec;
  publish_planned(s, env, finished);
  publish_projected(s, env, finished);
  log_map(env);
  if (with_status) collect_status(env, status);  // every job: only when it is written
  st->locked_usec = steady_usec() - locked - env.slept_usec;
  diag_cycle_end(env, st->pending, st->reservations, st->locked_usec);
  swap.restore();
  const bool budget = env.interrupt_reason == "max_job_test" || env.interrupt_reason == "max_time";
  // Nodes still registering (slurmctld just started or, 23.11+, reconfigured):
  // plan again in a second rather than at the next interval.
  st->registering = st->pending > 0 ? nodes_registering() : 0;
  return env.plan.retry_soon || (env.interrupted && !budget) || st->registering > 0 ? now + 1
                                                                                    : 0;
}  // true end_times back (swap), checked, unlocked (locks)

void run_cycle(State& s, const std::string& trigger, std::int64_t late_usec) {
  const std::int64_t t0 = steady_usec();
  CycleStats st;
  st.trigger = trigger;
  st.late_usec = late_usec;
  Status status;
  PluginConfig cfg;
  const bool with_status = t0 >= s.status_not_before;
  const Time retry_at = locked_phases(s, t0, &cfg, &st, &status, with_status);
  st.seconds = double(steady_usec() - t0) / 1e6;
  write_files(s, cfg, st, &status, with_status);
  schedule_next(s, cfg, retry_at);
  log_flag(BACKFILL,
           "sched/easypp: cycle: trigger=%s partitions=%u pending=%u running=%u tested=%u "
           "started=%u(backfill %u) het=%u(undone %u) reservations=%u corrections=%u learned=%u "
           "capped=%u limited=%u projected=%u(%ldus) registering=%u yields=%u probes=%u "
           "locked=%ldus late=%ldus time=%ldus status=%s%s",
           st.trigger.c_str(), st.partitions, st.pending, st.running, st.tested,
           st.started_in_order + st.started_backfill, st.started_backfill, st.het_started,
           st.het_undone, st.reservations, st.corrections, st.learned, st.capped, st.limited,
           st.projected, long(st.projection_usec), st.registering, st.yields, st.probes, long(st.locked_usec),
           long(st.late_usec), long(st.seconds * 1e6),
           s.status_usec < 0 ? "deferred" : (std::to_string(s.status_usec) + "us").c_str(),
           st.interrupted ? " (interrupted)" : "");
}

}  // namespace

extern "C" int easypp_core_init(char* desc, size_t desc_len) {
  try {
    if (g_state == nullptr) g_state = new State();
    State& s = *g_state;
    const PluginConfig c = load_config();
    {
      std::lock_guard<std::mutex> g(s.mu);
      s.config = c;
    }
    s.book.configure(c.sched);
    set_paths(s);
    if (c.state) load_history(s, c);
    if (het_fault_injection())
      info("sched/easypp: debug: EASYPP_DEBUG_HET_FAIL is set: the last component of every "
           "heterogeneous job will fail to start (tests the undo of partial starts)");
    s.next_wake = time(nullptr) + 1;
    s.next_trigger = "startup";
    if (desc != nullptr && desc_len > 0) {
      std::snprintf(desc, desc_len, "easypp %s, Slurm %s, %s", EASYPP_VERSION,
                    SLURM_VERSION_STRING, c.describe().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    error("sched/easypp: init: %s", e.what());
  } catch (...) {
    error("sched/easypp: init: unknown exception");
  }
  return -1;
}

extern "C" void easypp_core_fini(void) {
  try {
    if (g_state != nullptr) {
      // The agent has stopped: save what was learned since the last save.
      save_history(*g_state, current_config(*g_state));
      info("sched/easypp: stopped after %llu cycles",
           static_cast<unsigned long long>(g_state->cycles));
    }
    delete g_state;
    g_state = nullptr;
  } catch (...) {
    // nothing sensible to do while slurmctld unloads the plugin
  }
}

extern "C" void easypp_core_request_reconfig(void) {
  if (g_state != nullptr) g_state->reload.store(true);
}

extern "C" bool easypp_core_reload_pending(void) {
  return g_state != nullptr && g_state->reload.load();
}

extern "C" int64_t easypp_core_wait_usec(void) {
  if (g_state == nullptr) return 1000000LL;
  if (g_state->reload.load()) return 0;
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  const std::int64_t now_us = std::int64_t(tv.tv_sec) * 1000000 + tv.tv_usec;
  const std::int64_t wake_us = std::int64_t(g_state->next_wake) * 1000000;
  return wake_us > now_us ? wake_us - now_us : 0;
}

extern "C" void easypp_core_cycle(void) {
  if (g_state == nullptr) return;
  State& s = *g_state;
  try {
    // slurmctld is shutting down (and, from 25.11.2, waits for bf_active to
    // clear): no new cycle.
    if (easypp_slurmctld_stopping()) return;
    std::string trigger = s.reload.load() ? "reconfigure" : s.next_trigger;
    // How long after the prediction's expiry this correction cycle begins
    // (the benchmark adds the cycle's time: expiry to re-planned reservation).
    std::int64_t late_usec = -1;
    if (trigger == "correction") {
      struct timeval tv;
      gettimeofday(&tv, nullptr);
      late_usec = std::int64_t(tv.tv_sec) * 1000000 + tv.tv_usec -
                  std::int64_t(s.next_wake) * 1000000;
    }
    if (trigger == "correction" && s.next_job != 0)
      log_flag(BACKFILL, "sched/easypp: woke at the predicted end of JobId=%u", s.next_job);
    // Should the cycle fail half-way, the next one still waits an interval.
    s.next_wake = time(nullptr) + current_config(s).interval;
    s.next_trigger = "interval";
    run_cycle(s, trigger, late_usec);
    if (s.cycles == 1)
      info("sched/easypp: agent running, first cycle done under the scheduling locks");
  } catch (const std::exception& e) {
    error("sched/easypp: cycle: %s", e.what());
  } catch (...) {
    error("sched/easypp: cycle: unknown exception");
  }
}
