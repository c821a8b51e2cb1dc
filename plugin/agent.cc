// The C++ side of sched/easypp: configuration, the learned history, and the
// scheduling cycle.
//
// One cycle, under the lock set sched/backfill takes ({conf READ, job WRITE,
// node WRITE, part READ, fed READ}):
//   1. reload the settings if `scontrol reconfigure` asked for it;
//   2. scan job_list: learn finished jobs (once each), track running jobs,
//      correct expired predictions (correct_prediction() until the predicted
//      end lies after now);
//   3. plan with predictions: EndTimeSwap puts start + prediction into the
//      running jobs' end_time (true values back before any unlock, yield or
//      select_nodes());
//   4. build the queue like backfill (build_job_queue(true, true) +
//      sort_job_queue()), group it by partition in Slurm's order, drop what
//      EASY++ must not make its head (limits, licenses, burst buffers,
//      heterogeneous jobs, magnetic reservations), and run libpredict's
//      schedule_pass() for each partition (highest priority first) over the
//      Slurm adapter; then start each pending heterogeneous job, in Slurm's
//      order, whose components all fit now around this cycle's reservations
//      (start_het_job(): all components or none; never a reservation);
//   5. collect the status, put every true end_time back, check, unlock;
//      then write the status file and, if the history changed, the state
//      file (no lock held while doing file I/O).
// The agent sleeps until the next periodic cycle or the next predicted end
// of a running job (+1 s of grace, JobTracker::kGrace): waking there is the
// correction timer, and the cycle that follows is the scheduling pass the
// correction asks for.
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
#include <vector>

#include "easypp/policy.h"
#include "easypp/queue.h"
#include "job_tracker.h"
#include "plugin_config.h"
#include "plugin_state.h"
#include "sched_easypp.h"
#include "slurm_adapter.h"
#include "slurm_api.h"

namespace {

using easypp::kNever;
using easypp::Time;
using easypp::plugin::CycleEnv;
using easypp::plugin::CycleStats;
using easypp::plugin::EndTimeSwap;
using easypp::plugin::HetCandidate;
using easypp::plugin::HetStart;
using easypp::plugin::JobTracker;
using easypp::plugin::ParsedConfig;
using easypp::plugin::PlannedStart;
using easypp::plugin::PluginConfig;
using easypp::plugin::QueuedJob;
using easypp::plugin::SlurmAdapter;

// Estimate of a job without a finite time limit (TimeLimit=UNLIMITED in a
// partition without MaxTime): one year, like sched/backfill's YEAR_MINUTES.
constexpr Time kUnlimitedEstimate = Time(365) * 24 * 3600;

struct State {
  std::mutex mu;  // guards config (read by the agent, written on reload)
  PluginConfig config;
  std::atomic<bool> reload{false};

  // Agent thread only (and init/fini while the agent is not running).
  JobTracker tracker;
  std::string state_path;   // StateSaveLocation/easypp_state.json
  std::string status_path;  // StateSaveLocation/easypp_status.json
  Time watermark = 0;       // finished jobs with end_time <= watermark are learned
  std::uint64_t cycles = 0;
  easypp::plugin::Totals totals;
  std::map<std::uint32_t, PlannedStart> planned;  // heads' planned starts, last cycle
  std::set<std::uint32_t> het_seen;  // het jobs already announced in the log
  Time next_wake = 0;       // Unix time of the next cycle
  std::string next_trigger = "startup";
  std::uint32_t next_job = 0;  // the job whose predicted end is the next wake
  std::string last_status_error, last_state_error;
};

State* g_state = nullptr;  // created in init, deleted in fini (agent stopped)

// Reads slurm_conf: the caller holds the configuration lock (or runs inside
// slurmctld's configuration read, as init() does).
PluginConfig load_config() {
  ParsedConfig parsed = easypp::plugin::parse_scheduler_parameters(slurm_conf.sched_params);
  for (const std::string& w : parsed.warnings) error("sched/easypp: %s", w.c_str());
  return parsed.config;
}

void set_paths(State& s) {
  const std::string dir = slurm_conf.state_save_location ? slurm_conf.state_save_location : ".";
  s.state_path = dir + "/" + easypp::plugin::kStateFileName;
  s.status_path = dir + "/" + easypp::plugin::kStatusFileName;
}

PluginConfig current_config(State& s) {
  std::lock_guard<std::mutex> g(s.mu);
  return s.config;
}

// Load the history. A missing file is normal (first start); a corrupt one is
// reported, kept aside as <file>.bad, and the plugin starts empty.
void load_history(State& s) {
  struct stat st;
  if (stat(s.state_path.c_str(), &st) != 0 && errno == ENOENT) {
    info("sched/easypp: no state file %s yet, starting with an empty history",
         s.state_path.c_str());
    return;
  }
  easypp::plugin::SavedState saved;
  std::string err;
  if (!easypp::plugin::load_state(s.state_path, &saved, &err)) {
    const std::string bad = s.state_path + ".bad";
    const bool kept = std::rename(s.state_path.c_str(), bad.c_str()) == 0;
    error("sched/easypp: cannot use the state file: %s; starting with an empty history%s%s",
          err.c_str(), kept ? " (the file is kept as " : "", kept ? (bad + ")").c_str() : "");
    return;
  }
  s.tracker.restore_history(saved.rings);
  s.tracker.set_learned_total(saved.learned_jobs);
  s.watermark = saved.last_learned_end;
  info("sched/easypp: history of %zu users (%llu jobs learned so far) loaded from %s",
       s.tracker.predictor().users(), static_cast<unsigned long long>(saved.learned_jobs),
       s.state_path.c_str());
}

// rings: the predictor's snapshot when the caller already took one.
void save_history(State& s, const PluginConfig& cfg,
                  const std::vector<easypp::Predictor::Ring>* rings = nullptr) {
  if (!cfg.state || !s.tracker.dirty()) return;
  easypp::plugin::SavedState saved;
  saved.last_learned_end = s.watermark;
  saved.learned_jobs = s.tracker.learned_total();
  saved.window = cfg.sched.predictor.window;
  saved.rings = rings ? *rings : s.tracker.predictor().snapshot();
  std::string err;
  if (easypp::plugin::save_state(s.state_path, saved, &err)) {
    s.tracker.clear_dirty();
    if (!s.last_state_error.empty()) info("sched/easypp: state file written again");
    s.last_state_error.clear();
  } else if (err != s.last_state_error) {
    error("sched/easypp: cannot save the history: %s (will retry)", err.c_str());
    s.last_state_error = err;
  }
}

Time estimate_of(const job_record_t* job, const part_record_t* part) {
  if (job->time_limit != NO_VAL && job->time_limit != INFINITE) return Time(job->time_limit) * 60;
  if (part == nullptr) part = job->part_ptr;
  if (part != nullptr && part->max_time != NO_VAL && part->max_time != INFINITE)
    return Time(part->max_time) * 60;
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
  CycleLocks() { easypp_slurm_lock(); }
  ~CycleLocks() {
    easypp::plugin::assert_no_planning_values("unlocking");
    easypp_slurm_unlock();
  }
  CycleLocks(const CycleLocks&) = delete;
  CycleLocks& operator=(const CycleLocks&) = delete;
};

struct PartQueue {
  part_record_t* part = nullptr;
  std::string name;
  std::vector<std::uint32_t> order;      // Slurm's order, EASY++ candidates
  std::vector<std::uint32_t> resv_jobs;  // in advanced reservations: start now only
  std::map<std::uint32_t, QueuedJob> jobs;
};

std::string user_name(const job_record_t* job) {
  if (job->user_name != nullptr) return job->user_name;
  const char* n = uid_to_string_cached(job->user_id);  // slurmctld's cache, not ours to free
  return n ? n : std::to_string(job->user_id);
}

void run_cycle(State& s, const std::string& trigger) {
  const std::int64_t t0 = easypp::plugin::steady_usec();
  CycleStats st;
  st.trigger = trigger;
  std::vector<easypp::plugin::CorrectionEvent> corrections;
  easypp::plugin::Status status;
  PluginConfig cfg;
  std::map<std::uint32_t, PlannedStart> planned;
  Time retry_at = 0;  // a start waits for completing nodes, or the pass was cut short
  std::uint32_t het_started = 0, het_undone = 0;  // heterogeneous jobs started / undone
  {
    CycleLocks locks;
    if (s.reload.exchange(false)) {
      const PluginConfig c = load_config();
      std::string before;
      {
        std::lock_guard<std::mutex> g(s.mu);
        before = s.config.describe();
        s.config = c;
      }
      set_paths(s);
      s.tracker.configure(c.sched);
      if (c.describe() != before)
        info("sched/easypp: reconfigured (%s)", c.describe().c_str());
      else
        debug("sched/easypp: configuration reread, unchanged (%s)", c.describe().c_str());
    }
    cfg = current_config(s);
    const time_t now = wall_seconds();
    const std::uint64_t cycle = ++s.cycles;
    st.time = now;

    // --- 2. finished, running and pending jobs -----------------------------------
    {
      list_itr_t* it = list_iterator_create(job_list);
      job_record_t* job;
      while ((job = static_cast<job_record_t*>(list_next(it)))) {
        if (IS_JOB_PENDING(job)) {
          s.tracker.touch(job->job_id, cycle);
          continue;
        }
        if (is_active(job)) {
          ++st.running;
          s.tracker.running(job->job_id, job->user_id, estimate_of(job, nullptr),
                            job->start_time + job->tot_sus_time, cycle);
          continue;
        }
        if (!IS_JOB_FINISHED(job)) continue;
        const Time end = job->end_time;
        if (end <= s.watermark) continue;
        if (end >= now) {  // finished during this second: learned next cycle
          s.tracker.touch(job->job_id, cycle);
          continue;
        }
        // Learn each job once: it ran (the plugin saw it running, or it has
        // an allocation and a positive run time); a job cancelled while
        // pending has start_time == end_time and no allocation.
        const bool ran = s.tracker.seen_running(job->job_id) ||
                         (job->start_time > 0 && end > job->start_time &&
                          (job->nodes != nullptr || job->node_bitmap != nullptr));
        // A heterogeneous job is one run of its user: learned from its
        // leader only (the components end together; learning each would put
        // the same runtime into the history several times).
        const bool het_component = job->het_job_id != 0 && job->het_job_id != job->job_id;
        if (ran && !het_component) {
          const Time runtime = end - job->start_time - job->tot_sus_time;
          if (s.tracker.learn(job->job_id, job->user_id, runtime, estimate_of(job, nullptr)))
            ++st.learned;
        } else {
          s.tracker.forget(job->job_id);
        }
      }
      list_iterator_destroy(it);
      if (now - 1 > s.watermark) s.watermark = now - 1;
    }
    st.corrections = s.tracker.correct_expired(now, &corrections);
    for (const auto& c : corrections)
      info("sched/easypp: correction: JobId=%u prediction %ld s -> %ld s (%u)", c.job_id,
           long(c.old_prediction), long(c.new_prediction), c.count);

    // --- 3./4. plan ------------------------------------------------------------------
    EndTimeSwap swap(s.tracker);
    CycleEnv env(cfg, s.tracker, swap);
    env.now = now;
    env.cycle = cycle;
    env.started_usec = t0;
    env.locked_usec = easypp::plugin::steady_usec();

    struct QueueList {  // the queue is freed on every path, exceptions included
      list_t* l;
      ~QueueList() { FREE_NULL_LIST(l); }
    } queue{build_job_queue(true, true)};
    list_t* job_queue = queue.l;
    sort_job_queue(job_queue);
    // build_job_queue(true, ...) cleared the pending jobs' start times: show
    // last cycle's planned starts until this cycle's passes replace them.
    for (const auto& kv : s.planned) {
      job_record_t* job = find_job_record(kv.first);
      if (job == nullptr || !IS_JOB_PENDING(job) || job->start_time != 0) continue;
      job->start_time = kv.second.start;
      if (job->sched_nodes == nullptr && !kv.second.nodes.empty())
        job->sched_nodes = xstrdup(kv.second.nodes.c_str());
    }

    std::vector<PartQueue> parts;
    std::set<std::uint32_t> het_jobs;  // every het job with a component in the queue
    std::vector<std::uint32_t> het_order;  // leaders, in Slurm's order
    std::map<std::uint32_t, HetCandidate::Component> het_components;  // by job id
    {
      std::map<std::string, std::size_t> index;
      list_itr_t* it = list_iterator_create(job_queue);
      job_queue_rec_t* rec;
      while ((rec = static_cast<job_queue_rec_t*>(list_next(it)))) {
        job_record_t* job = rec->job_ptr;
        part_record_t* part = rec->part_ptr;
        if (job == nullptr || part == nullptr || part->name == nullptr) continue;
        if (!IS_JOB_PENDING(job) || job->priority == 0 || job->details == nullptr) continue;
        if (job->het_job_id != 0) het_jobs.insert(job->het_job_id);
        // Magnetic reservations and multi-reservation requests: main scheduler.
        if (rec->resv_ptr != nullptr || job->resv_list != nullptr) continue;
        if (job->burst_buffer != nullptr) continue;  // stage-in: main scheduler
        if (job->preempt_in_progress) continue;
        if (!(part->state_up & PARTITION_SCHED) || part->node_bitmap == nullptr) continue;
        // Blocked by QOS/association limits, or licenses unavailable now: not
        // startable, so never the head (sched/backfill skips them too).
        if (!acct_policy_job_runnable_pre_select(job, false)) continue;
        if (job->license_list != nullptr && license_job_test(job, now, true) != SLURM_SUCCESS)
          continue;
        if (job->het_job_id != 0) {
          // Never in an EASY++ pass (never the head, never reserved for):
          // started after the passes when all its components fit now.
          HetCandidate::Component& hc = het_components[job->job_id];
          if (hc.job_id == 0) {
            hc.job_id = job->job_id;
            if (job->het_job_id == job->job_id) het_order.push_back(job->job_id);
            s.tracker.pending(job->job_id, job->user_id, estimate_of(job, part), cycle);
          }
          hc.parts.emplace_back(part, rec->priority);
          continue;
        }
        auto pi = index.find(part->name);
        if (pi == index.end()) {
          pi = index.emplace(part->name, parts.size()).first;
          parts.emplace_back();
          parts.back().part = part;
          parts.back().name = part->name;
        }
        PartQueue& pq = parts[pi->second];
        if (pq.jobs.count(job->job_id)) continue;
        const easypp::plugin::TrackedJob& tj =
            s.tracker.pending(job->job_id, job->user_id, estimate_of(job, part), cycle);
        // Waiting since it became eligible (begin_time; Slurm sets it then),
        // for the starvation guard (easypp_safe_after).
        const Time since = job->details->begin_time ? job->details->begin_time
                                                    : job->details->submit_time;
        pq.jobs[job->job_id] = QueuedJob{job->job_id, rec->priority, tj.prediction, tj.estimate,
                                         std::int64_t(job->details->min_cpus), since};
        if (job->resv_ptr != nullptr || job->resv_name != nullptr)
          pq.resv_jobs.push_back(job->job_id);
        else
          pq.order.push_back(job->job_id);
      }
      list_iterator_destroy(it);
    }
    FREE_NULL_LIST(queue.l);
    for (auto it = s.het_seen.begin(); it != s.het_seen.end();)
      it = het_jobs.count(*it) ? std::next(it) : s.het_seen.erase(it);
    for (std::uint32_t h : het_jobs) {
      if (s.het_seen.insert(h).second)
        debug("sched/easypp: heterogeneous JobId=%u pending: started when all its components "
              "fit now, never reserved for",
              h);
    }

    env.compute_idle();
    swap.apply(now);
    std::set<std::string> finished_parts;  // passes that got as far as a reservation
    for (PartQueue& pq : parts) {
      st.pending += std::uint32_t(pq.order.size() + pq.resv_jobs.size());
      ++st.partitions;
      if (env.interrupted) continue;
      SlurmAdapter adapter(env, pq.part, pq.jobs);
      // Jobs in advanced reservations: started when they fit, never the head.
      for (std::uint32_t id : pq.resv_jobs) {
        if (env.tested >= std::uint32_t(cfg.max_job_test)) break;
        const QueuedJob& q = pq.jobs[id];
        adapter.try_start_now(id, now + (cfg.sched.policy.safe ? q.estimate : q.prediction));
      }
      if (pq.order.empty()) {
        finished_parts.insert(pq.name);
        continue;
      }
      easypp::WaitQueue q(cfg.sched.policy.backfill);
      std::int64_t rank = 0;
      for (std::uint32_t id : pq.order) {
        const QueuedJob& qj = pq.jobs[id];
        q.push(id, easypp::QueueKey{rank++, 0}, qj.prediction, qj.estimate, qj.width, qj.since);
      }
      const easypp::PassResult r = easypp::schedule_pass(Time(now), q, adapter, cfg.sched.policy);
      st.reservations += r.reservations;
      if (!r.interrupted && !env.interrupted) finished_parts.insert(pq.name);
    }

    // --- heterogeneous jobs ----------------------------------------------------------
    // After the passes, so that a het job (which has no reservation) is a
    // backfill candidate like any other: it can only use what this cycle's
    // heads leave, and never delays one of them (it keeps off their reserved
    // nodes unless it ends before their shadow). In Slurm's order among
    // themselves. Not when a pass was cut short: the reservations are then
    // incomplete (the next cycle comes at once after a state change).
    for (std::uint32_t hid : het_order) {
      if (env.interrupted) break;
      job_record_t* leader = find_job_record(hid);
      if (leader == nullptr || !IS_JOB_PENDING(leader) || leader->het_job_list == nullptr)
        continue;
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
        auto c = het_components.find(comp->job_id);
        const easypp::plugin::TrackedJob* tj = s.tracker.find(comp->job_id);
        if (c == het_components.end() || c->second.parts.empty() || tj == nullptr) {
          runnable = false;  // a component cannot start now (held, limits, begin time...)
          break;
        }
        h.components.push_back(c->second);
        h.prediction = std::max(h.prediction, tj->prediction);
        h.estimate = std::max(h.estimate, tj->estimate);
      }
      list_iterator_destroy(it);
      if (!runnable || h.components.empty()) continue;
      if (!easypp::plugin::cycle_may_continue(env)) break;  // budget, yield
      const HetStart r = easypp::plugin::start_het_job(env, h);
      if (r == HetStart::kNoFit)
        debug2("sched/easypp: heterogeneous JobId=%u: not every component fits now", hid);
    }

    st.tested = env.tested;
    st.started_in_order = env.started_in_order;
    st.started_backfill = env.started_backfill;
    st.yields = env.yields;
    st.interrupted = env.interrupted;
    het_started = env.het_started;
    het_undone = env.het_undone;

    // Planned starts of last cycle's heads that are heads no more.
    for (const auto& kv : s.planned) {
      if (env.planned.count(kv.first)) continue;
      job_record_t* job = find_job_record(kv.first);
      if (job == nullptr || !IS_JOB_PENDING(job)) continue;
      if (finished_parts.count(kv.second.partition) == 0) {
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
        info("sched/easypp: reservation: JobId=%u partition=%s start=%ld (in %ld s) nodes=%s",
             kv.first, kv.second.partition.c_str(), long(kv.second.start),
             long(kv.second.start - now), kv.second.nodes.c_str());
    }
    planned = env.planned;
    s.planned = env.planned;
    if (env.retry_soon || (env.interrupted && env.interrupt_reason != "max_job_test" &&
                           env.interrupt_reason != "max_time"))
      retry_at = now + 1;

    // --- 5. status, collected under the lock ---------------------------------------
    status.jobs.reserve(s.tracker.jobs().size());
    for (const auto& kv : s.tracker.jobs()) {
      const easypp::plugin::TrackedJob& t = kv.second;
      job_record_t* job = find_job_record(t.job_id);
      if (job == nullptr || !(IS_JOB_PENDING(job) || is_active(job))) continue;
      easypp::plugin::JobStatus js;
      js.job_id = t.job_id;
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
        auto p = env.planned.find(t.job_id);
        if (p != env.planned.end()) {
          js.start = p->second.start;
          js.reserved = true;
        }
      } else {
        js.start = job->start_time;
      }
      status.jobs.push_back(std::move(js));
    }
    swap.restore();
  }  // true end_times back (swap), checked, unlocked (locks)

  // --- after unlocking: files, statistics, next wake-up ------------------------------
  st.seconds = double(easypp::plugin::steady_usec() - t0) / 1e6;
  easypp::plugin::Totals& tot = s.totals;
  ++tot.cycles;
  tot.tested += st.tested;
  tot.started_in_order += st.started_in_order;
  tot.started_backfill += st.started_backfill;
  tot.corrections += st.corrections;
  tot.learned += st.learned;
  tot.seconds += st.seconds;
  if (st.seconds > tot.max_seconds) tot.max_seconds = st.seconds;

  status.history = s.tracker.predictor().snapshot();
  save_history(s, cfg, &status.history);

  status.version = EASYPP_VERSION;
  status.slurm_version = SLURM_VERSION_STRING;
  status.written = time(nullptr);
  status.settings = cfg.describe();
  status.state_file = cfg.state ? s.state_path : std::string();
  status.last = st;
  status.totals = tot;
  std::string err;
  if (!easypp::plugin::write_status(s.status_path, status, &err)) {
    if (err != s.last_status_error) error("sched/easypp: cannot write the status file: %s", err.c_str());
    s.last_status_error = err;
  } else {
    s.last_status_error.clear();
  }

  const time_t tnow = wall_seconds();
  Time next = tnow + cfg.interval;
  std::string why = "interval";
  std::uint32_t jid = 0;
  const Time expiry = s.tracker.next_expiry(&jid);  // may be due already: run at once
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

  debug("sched/easypp: cycle: trigger=%s partitions=%u pending=%u running=%u tested=%u "
        "started=%u(backfill %u) het=%u(undone %u) reservations=%u corrections=%u learned=%u "
        "yields=%u time=%ldus%s",
        st.trigger.c_str(), st.partitions, st.pending, st.running, st.tested,
        st.started_in_order + st.started_backfill, st.started_backfill, het_started, het_undone,
        st.reservations, st.corrections, st.learned, st.yields, long(st.seconds * 1e6),
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
    s.tracker.configure(c.sched);
    set_paths(s);
    if (c.state) load_history(s);
    if (easypp::plugin::het_fault_injection())
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
    std::string trigger = s.reload.load() ? "reconfigure" : s.next_trigger;
    if (trigger == "correction" && s.next_job != 0)
      debug("sched/easypp: woke at the predicted end of JobId=%u", s.next_job);
    // Should the cycle fail half-way, the next one still waits an interval.
    s.next_wake = time(nullptr) + current_config(s).interval;
    s.next_trigger = "interval";
    run_cycle(s, trigger);
    if (s.cycles == 1)
      info("sched/easypp: agent running, first cycle done under the scheduling locks");
  } catch (const std::exception& e) {
    error("sched/easypp: cycle: %s", e.what());
  } catch (...) {
    error("sched/easypp: cycle: unknown exception");
  }
}
