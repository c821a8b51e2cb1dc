// The Slurm adapter of the EASY++ policy (see slurm_adapter.h).
//
// Exact EASY semantics on Slurm's resources:
//  - start_now / backfill: the job's usable nodes (partition, up and not
//    drained, advanced reservations via job_test_resv(), its --exclude,
//    minus the nodes reserved for heads it could delay), a cheap WILL_RUN
//    with TEST_NOW_ONLY, then select_nodes() exactly as sched/backfill's
//    _start_job() does it (the exclusions through a temporarily widened
//    exc_node_bitmap). A select_nodes() failure means "did not fit".
//  - reserve: the shadow time is the smallest predicted end T such that the
//    head fits once every running job with predicted end <= T is gone,
//    found by binary search over the running jobs' predicted ends; each
//    probe is one WILL_RUN in which those jobs end at now + 1 and all others
//    in the far future (WILL_RUN's own 30 s / doubling batches never matter).
//    The reserved nodes R prefer the nodes those jobs release over nodes
//    free now, so "free now and not in R" is the paper's extra processors
//    when nodes are identical.
//  - heterogeneous jobs (start_het_job): all components or none, each
//    tested like a backfill candidate on nodes of its own; a component
//    failing to start after others did is undone as sched/backfill does.
#include "slurm_adapter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "sched_easypp.h"

namespace easypp::plugin {

namespace {

// --- the ledger ---------------------------------------------------------------

struct LedgerEntry {
  std::uint32_t job_id;
  time_t before;
  time_t written;
};
std::vector<LedgerEntry> g_ledger;  // agent thread only

// WILL_RUN probes: released jobs end here (relative to now) ...
constexpr time_t kReleasedAfter = 1;
// ... the others this far in the future; a start later than kFitHorizon
// means "does not fit once the released jobs are gone".
constexpr time_t kFarFuture = time_t(10) * 365 * 24 * 3600;
constexpr time_t kFitHorizon = time_t(365) * 24 * 3600;

bool is_active(const job_record_t* job) {
  return IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job);
}

}  // namespace

LedgerMark ledger_mark() { return g_ledger.size(); }

void ledger_write(job_record_t* job, time_t value) {
  if (job->end_time == value) return;
  g_ledger.push_back(LedgerEntry{job->job_id, job->end_time, value});
  job->end_time = value;
}

void ledger_restore_to(LedgerMark mark) {
  while (g_ledger.size() > mark) {
    const LedgerEntry e = g_ledger.back();
    g_ledger.pop_back();
    job_record_t* job = find_job_record(e.job_id);
    if (job != nullptr && job->end_time == e.written) job->end_time = e.before;
  }
}

void assert_no_planning_values(const char* where) {
  std::size_t left = 0;
  std::uint32_t first = 0;
  for (const LedgerEntry& e : g_ledger) {
    job_record_t* job = find_job_record(e.job_id);
    if (job != nullptr && job->end_time == e.written) {
      if (left == 0) first = e.job_id;
      ++left;
    }
  }
  if (left == 0) {
    g_ledger.clear();
    return;
  }
#ifdef EASYPP_DEBUG_CHECKS
  error("sched/easypp: BUG: %zu planning value(s) of end_time left before %s (first JobId=%u); "
        "aborting (--enable-debug-checks)",
        left, where, first);
  std::abort();
#else
  error("sched/easypp: BUG: %zu planning value(s) of end_time left before %s (first JobId=%u); "
        "restoring the true values",
        left, where, first);
  ledger_restore_to(0);
#endif
}

void EndTimeSwap::apply(time_t now) {
  if (applied_) restore();
  mark_ = ledger_mark();
  applied_ = true;
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* job;
  while ((job = static_cast<job_record_t*>(list_next(it)))) {
    if (!is_active(job) || job->end_time == 0) continue;
    const TrackedJob* t = tracker_.find(job->job_id);
    if (t == nullptr || !t->running) continue;
    time_t planned = job->start_time + job->tot_sus_time + t->prediction;
    if (planned <= now) planned = now + 1;  // correction=none: still expired
    ledger_write(job, planned);
  }
  list_iterator_destroy(it);
}

void EndTimeSwap::restore() {
  if (!applied_) return;
  ledger_restore_to(mark_);
  applied_ = false;
}

void Bitmap::reset() {
  if (b_ != nullptr) {
    bit_free(b_);
    b_ = nullptr;
  }
}

std::string job_str(const job_record_t* job) {
  char buf[64];
  if (job == nullptr) return "JobId=?";
  if (job->array_recs != nullptr && job->array_task_id == NO_VAL)
    std::snprintf(buf, sizeof buf, "JobId=%u_*", job->array_job_id);
  else if (job->array_task_id != NO_VAL)
    std::snprintf(buf, sizeof buf, "JobId=%u_%u(%u)", job->array_job_id, job->array_task_id,
                  job->job_id);
  else if (job->het_job_id != 0)
    std::snprintf(buf, sizeof buf, "JobId=%u+%u(%u)", job->het_job_id, job->het_job_offset,
                  job->job_id);
  else
    std::snprintf(buf, sizeof buf, "JobId=%u", job->job_id);
  return buf;
}

std::int64_t steady_usec() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// --- CycleEnv -------------------------------------------------------------------

void CycleEnv::compute_idle() {
  idle.assign(std::size_t(std::max(node_record_count, 0)), 0);
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) idle[std::size_t(i)] = node->cpus;
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* job;
  while ((job = static_cast<job_record_t*>(list_next(it)))) {
    if (is_active(job)) account_start(job);
  }
  list_iterator_destroy(it);
}

void CycleEnv::account_start(job_record_t* job) {
  job_resources_t* r = job->job_resrcs;
  if (r == nullptr || r->node_bitmap == nullptr || r->cpus == nullptr) return;
  const int n = std::min<int>(int(bit_size(r->node_bitmap)), int(idle.size()));
  std::uint32_t k = 0;
  for (int i = 0; i < n && k < r->nhosts; i++) {
    if (!bit_test(r->node_bitmap, i)) continue;
    idle[std::size_t(i)] = std::max<std::int64_t>(0, idle[std::size_t(i)] - r->cpus[k]);
    ++k;
  }
}

const PartReservation* CycleEnv::reservation_of(const std::string& part) const {
  for (const PartReservation& r : reservations)
    if (r.partition == part) return &r;
  return nullptr;
}

// --- SlurmAdapter -----------------------------------------------------------------

// Everything one test of one job needs besides the candidate node set.
struct SlurmAdapter::Test {
  Bitmap avail;     // usable nodes for this job (before reservation exclusions)
  ResvExc exc_core;  // cores (and GRES) reserved by advanced reservations
  std::uint32_t min_nodes = 0, req_nodes = 0, max_nodes = 0;
};

SlurmAdapter::SlurmAdapter(CycleEnv& env, part_record_t* part,
                           const std::map<std::uint32_t, QueuedJob>& jobs)
    : env_(env), part_(part), part_name_(part->name ? part->name : ""), jobs_(jobs) {
  usable_ = Bitmap::copy_of(part->node_bitmap);
  if (usable_) bit_and(usable_.get(), avail_node_bitmap);
  recount();
}

void SlurmAdapter::recount() {
  part_idle_ = 0;
  outside_idle_ = 0;
  if (!usable_) return;
  const int n = std::min<int>(int(bit_size(usable_.get())), int(env_.idle.size()));
  for (int i = 0; i < n; i++) {
    if (!bit_test(usable_.get(), i)) continue;
    part_idle_ += env_.idle[std::size_t(i)];
    if (res_ == nullptr || !res_->nodes || !bit_test(res_->nodes.get(), i))
      outside_idle_ += env_.idle[std::size_t(i)];
  }
}

bool SlurmAdapter::room_beyond_shadow() const { return outside_idle_ > 0; }

job_record_t* SlurmAdapter::pending_job(std::uint32_t id) const {
  job_record_t* job = find_job_record(id);
  if (job == nullptr || !IS_JOB_PENDING(job) || IS_JOB_COMPLETING(job) || job->priority == 0 ||
      job->details == nullptr || IS_JOB_REVOKED(job))
    return nullptr;
  return job;
}

const QueuedJob* SlurmAdapter::queued(std::uint32_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

// The job's usable nodes now, like sched/backfill's per-job node set:
// advanced reservations (job_test_resv), this partition's nodes that are up
// and not drained, node owner/MCS filters, the job's --exclude.
bool SlurmAdapter::prepare(job_record_t* job, Test* t) const {
  job->part_ptr = part_;
  if (const QueuedJob* q = queued(job->job_id)) job->priority = q->priority;
  job->last_sched_eval = env_.now;
  if (job->array_recs != nullptr || job->array_task_id != NO_VAL) {
    if (!job_array_start_test(job)) return false;  // %N: max running tasks reached
  }
  std::uint32_t qos_flags = 0;
  {
    assoc_mgr_lock_t qos_read = {NO_LOCK, NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
    assoc_mgr_lock(&qos_read);
    if (job->qos_ptr != nullptr) qos_flags = job->qos_ptr->flags;
    assoc_mgr_unlock(&qos_read);
  }
  if (get_node_cnts(job, qos_flags, part_, &t->min_nodes, &t->req_nodes, &t->max_nodes) !=
      SLURM_SUCCESS)
    return false;
  time_t start_res = env_.now;
  bool overlap = false;
  if (job_test_resv(job, &start_res, true, t->avail.out(), t->exc_core.out(), &overlap, false) !=
      SLURM_SUCCESS)
    return false;
  if (start_res > env_.now) return false;  // an advanced reservation holds the nodes now
  if (!t->avail || !usable_) return false;
  bit_and(t->avail.get(), usable_.get());
  filter_by_node_owner(job, t->avail.get());
  filter_by_node_mcs(job, slurm_mcs_get_select(job), t->avail.get());
  if (job->details->exc_node_bitmap != nullptr)
    bit_and_not(t->avail.get(), job->details->exc_node_bitmap);
  if (job->details->req_node_bitmap != nullptr &&
      !bit_super_set(job->details->req_node_bitmap, t->avail.get()))
    return false;
  return bit_set_count(t->avail.get()) >= int(std::max<std::uint32_t>(t->min_nodes, 1));
}

// Remove from avail the nodes reserved for other partitions' heads whose
// shadow time lies before end_bound (the job would still hold its nodes
// then), and, with include_own, this partition's reserved nodes.
void SlurmAdapter::exclude_reserved(bitstr_t* avail, Time end_bound, bool include_own) const {
  for (const PartReservation& r : env_.reservations) {
    if (!r.nodes) continue;
    const bool own = r.partition == part_name_;
    if (own ? include_own : end_bound > r.shadow) bit_and_not(avail, r.nodes.get());
  }
}

int SlurmAdapter::will_run(job_record_t* job, const Test& t, bitstr_t* avail, bool now_only,
                           time_t* start, Bitmap* selected) {
  Bitmap bm = Bitmap::copy_of(avail);
  job_details_t* d = job->details;
  d->features_use = d->features;
  d->feature_list_use = d->feature_list;
  if (d->feature_list_use != nullptr && job_req_node_filter(job, bm.get(), true) != SLURM_SUCCESS)
    return ESLURM_NODES_BUSY;
  if (bit_set_count(bm.get()) < int(std::max<std::uint32_t>(t.min_nodes, 1)))
    return ESLURM_NODES_BUSY;
  const time_t saved_start = job->start_time;
  const std::uint64_t saved_flags = job->bit_flags;
  job->bit_flags |= BACKFILL_TEST;
  if (now_only) job->bit_flags |= TEST_NOW_ONLY;
  ++env_.probes;
  const int rc =
      easypp_will_run(job, bm.get(), t.min_nodes, t.max_nodes, t.req_nodes, t.exc_core.get());
  job->bit_flags = saved_flags;
  if (start) *start = job->start_time;
  job->start_time = saved_start;
  if (rc == SLURM_SUCCESS && selected) *selected = std::move(bm);
  return rc;
}

// select_nodes() as sched/backfill's _start_job(): the true end_times back,
// every node outside avail excluded through a temporarily widened
// exc_node_bitmap (also put back on an array's meta record), then launch.
int SlurmAdapter::start_job(job_record_t* job, bitstr_t* avail) {
  env_.swap.restore();
  Bitmap resv = Bitmap::copy_of(avail);
  bit_not(resv.get());
  job_details_t* d = job->details;
  bitstr_t* orig_exc = nullptr;
  if (d->exc_node_bitmap != nullptr) {
    orig_exc = bit_copy(d->exc_node_bitmap);
    bit_or(d->exc_node_bitmap, resv.get());
  } else {
    d->exc_node_bitmap = bit_copy(resv.get());
  }
  const bool array_meta = job->array_recs != nullptr;
  const std::uint32_t array_job_id = job->array_job_id;
  int rc = fed_mgr_job_lock(job);
  if (rc == SLURM_SUCCESS) {
    rc = easypp_select_nodes(job, SLURMDB_JOB_FLAG_BACKFILL);
    if (rc == SLURM_SUCCESS)
      fed_mgr_job_start(job, job->start_time);
    else
      fed_mgr_job_unlock(job);
  }
  if (array_meta) {
    job_record_t* meta = find_job_record(array_job_id);
    if (meta != nullptr && meta != job && meta->array_recs != nullptr && meta->details) {
      FREE_NULL_BITMAP(meta->details->exc_node_bitmap);
      if (orig_exc != nullptr) meta->details->exc_node_bitmap = bit_copy(orig_exc);
    }
  }
  if (job->details != nullptr) {
    FREE_NULL_BITMAP(job->details->exc_node_bitmap);
    job->details->exc_node_bitmap = orig_exc;
  } else {
    FREE_NULL_BITMAP(orig_exc);
  }
  if (rc == SLURM_SUCCESS) {
    last_job_update = time(nullptr);
    easypp_power_job_start(job);
    if (job->batch_flag == 0)
      srun_allocate(job);
    else if (!IS_JOB_CONFIGURING(job))
      launch_job(job);
  } else {
    debug2("sched/easypp: select_nodes() for %s: %s", job_str(job).c_str(), slurm_strerror(rc));
  }
  env_.swap.apply(env_.now);
  return rc;
}

bool SlurmAdapter::test_and_start(std::uint32_t id, Time end_bound, bool include_own,
                                  bool backfilled) {
  ++env_.tested;
  job_record_t* job = pending_job(id);
  if (job == nullptr) return false;
  const QueuedJob* q = queued(id);
  const Time prediction = q ? q->prediction : 0;
  bool any = false;
  // An array's meta record starts task after task while they fit.
  for (int task = 0; job != nullptr && task < 1000; ++task) {
    Test t;
    if (!prepare(job, &t)) break;
    exclude_reserved(t.avail.get(), end_bound, include_own);
    Bitmap selected;
    time_t start = 0;
    if (will_run(job, t, t.avail.get(), true, &start, &selected) != SLURM_SUCCESS) break;
    if ((cg_node_bitmap && bit_overlap_any(selected.get(), cg_node_bitmap)) ||
        (rs_node_bitmap && bit_overlap_any(selected.get(), rs_node_bitmap))) {
      // Fits, but on nodes still completing a job: wait (like backfill).
      env_.retry_soon = true;
      break;
    }
    const bool meta = job->array_recs != nullptr;
    if (start_job(job, t.avail.get()) != SLURM_SUCCESS) break;
    any = true;
    if (backfilled)
      ++env_.started_backfill;
    else
      ++env_.started_in_order;
    env_.account_start(job);
    recount();
    env_.tracker.started(id, job->job_id, job->start_time + job->tot_sus_time, env_.cycle);
    info("sched/easypp: started %s in %s on %s (%s, prediction %ld s, limit %u min)",
         job_str(job).c_str(), part_name_.c_str(), job->nodes ? job->nodes : "?",
         backfilled ? (end_bound > (res_ ? res_->shadow : kNever) ? "backfill, beyond shadow"
                                                                   : "backfill")
                    : "in order",
         long(prediction), job->time_limit);
    if (!meta || job->job_id == id) break;  // not an array, or its last task
    job = pending_job(id);                  // the meta record, if tasks remain
  }
  return pending_job(id) == nullptr && any;
}

bool SlurmAdapter::start_now(JobHandle h) {
  const QueuedJob* q = queued(h);
  const Time bound =
      env_.now + (q ? (env_.cfg.sched.policy.safe ? q->estimate : q->prediction) : 0);
  return test_and_start(h, bound, false, false);
}

bool SlurmAdapter::try_start_now(std::uint32_t id, Time end_bound) {
  return test_and_start(id, end_bound, false, false);
}

bool SlurmAdapter::backfill(JobHandle h, Time end_bound) {
  const bool beyond = res_ != nullptr && end_bound > res_->shadow;
  return test_and_start(h, end_bound, beyond, true);
}

Time SlurmAdapter::reserve(JobHandle h, Time duration, bool is_head) {
  (void)duration;
  job_record_t* job = pending_job(h);
  Time shadow = kNever;
  Bitmap chosen;
  if (job != nullptr) {
    Test t;
    if (prepare(job, &t)) {
      // Other partitions' heads keep their nodes (highest priority first).
      exclude_reserved(t.avail.get(), kNever, false);
      bitstr_t* avail = t.avail.get();
      time_t start = 0;
      Bitmap sel;
      if (will_run(job, t, avail, true, &start, &sel) == SLURM_SUCCESS) {
        shadow = env_.now;  // fits now (e.g. only on nodes still completing)
        chosen = std::move(sel);
      } else {
        // The running jobs on these nodes, by predicted end.
        struct Run {
          Time end;
          std::uint32_t id;
        };
        std::vector<Run> runs;
        list_itr_t* it = list_iterator_create(job_list);
        job_record_t* r;
        while ((r = static_cast<job_record_t*>(list_next(it)))) {
          if (!is_active(r) || r->node_bitmap == nullptr || r->end_time == 0) continue;
          if (!bit_overlap_any(r->node_bitmap, avail)) continue;
          const TrackedJob* tj = env_.tracker.find(r->job_id);
          const Time end = tj ? r->start_time + r->tot_sus_time + tj->prediction : r->end_time;
          runs.push_back(Run{end, r->job_id});
        }
        list_iterator_destroy(it);
        std::sort(runs.begin(), runs.end(),
                  [](const Run& a, const Run& b) { return a.end != b.end ? a.end < b.end : a.id < b.id; });
        // One probe: does the head fit on `nodes` once the jobs ending at or
        // before T are gone?
        auto probe = [&](Time T, bitstr_t* nodes, Bitmap* out) -> bool {
          ProbeScope scope;
          for (const Run& run : runs) {
            job_record_t* rj = find_job_record(run.id);
            if (rj == nullptr) continue;
            scope.set(rj, run.end <= T ? env_.now + kReleasedAfter : env_.now + kFarFuture);
          }
          time_t s = 0;
          Bitmap o;
          const bool ok = will_run(job, t, nodes, false, &s, &o) == SLURM_SUCCESS &&
                          s < env_.now + kFitHorizon;
          if (ok && out) *out = std::move(o);
          return ok;
        };
        if (!runs.empty() && probe(runs.back().end, avail, nullptr)) {
          std::size_t lo = 0, hi = runs.size() - 1;  // smallest index that fits
          while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (probe(runs[mid].end, avail, nullptr))
              hi = mid;
            else
              lo = mid + 1;
          }
          shadow = runs[lo].end;
          // R: the released nodes first, then as few other nodes as needed.
          Bitmap released(bit_alloc(bit_size(avail)));
          for (const Run& run : runs) {
            if (run.end > shadow) break;
            job_record_t* rj = find_job_record(run.id);
            if (rj && rj->node_bitmap) bit_or(released.get(), rj->node_bitmap);
          }
          bit_and(released.get(), avail);
          if (!probe(shadow, released.get(), &chosen)) {
            std::vector<int> others;
            const int n = int(bit_size(avail));
            for (int i = 0; i < n; i++)
              if (bit_test(avail, i) && !bit_test(released.get(), i)) others.push_back(i);
            auto with_others = [&](std::size_t c) {
              Bitmap cand = Bitmap::copy_of(released.get());
              for (std::size_t k = 0; k < c && k < others.size(); ++k) bit_set(cand.get(), others[k]);
              return cand;
            };
            // Smallest c such that the released nodes plus the first c other
            // nodes suffice (c = all of them is the shadow probe itself).
            std::size_t lo = 1, hi = others.size();
            while (lo < hi) {
              const std::size_t mid = lo + (hi - lo) / 2;
              Bitmap cand = with_others(mid);
              if (probe(shadow, cand.get(), nullptr))
                hi = mid;
              else
                lo = mid + 1;
            }
            Bitmap cand = with_others(lo);
            if (others.empty() || !probe(shadow, cand.get(), &chosen))
              probe(shadow, avail, &chosen);
          }
        }
      }
    }
  }
  // Record the reservation (kNever: no nodes held, everything may backfill).
  env_.reservations.push_back(PartReservation{});
  PartReservation& pr = env_.reservations.back();
  pr.partition = part_name_;
  pr.job_id = h;
  pr.shadow = shadow;
  if (shadow < kNever) pr.nodes = std::move(chosen);
  res_ = &pr;
  recount();
  if (job != nullptr && is_head && shadow < kNever) {
    const time_t planned = std::max<time_t>(time_t(shadow), env_.now + 1);
    char* names = pr.nodes ? bitmap2node_name(pr.nodes.get()) : nullptr;
    if (job->start_time != planned) last_job_update = env_.now;
    job->start_time = planned;
    xfree(job->sched_nodes);
    job->sched_nodes = names;  // xmalloc'd by bitmap2node_name: slurmctld frees it
    env_.planned[h] = PlannedStart{part_name_, planned, names ? names : ""};
  }
  return shadow;
}

// --- heterogeneous jobs -------------------------------------------------------------

bool het_fault_injection() {
#ifdef EASYPP_DEBUG_CHECKS
  static const bool on = [] {
    const char* v = std::getenv("EASYPP_DEBUG_HET_FAIL");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
#else
  return false;
#endif
}

namespace {

// The head of reservation r has waited past easypp_safe_after (the policy's
// starvation guard): whatever backfills around it must end before its
// shadow even at its limit.
bool starving_head(const CycleEnv& env, const PartReservation& r) {
  const Time after = env.cfg.sched.policy.safe_after;
  if (after < 0) return false;
  const job_record_t* head = find_job_record(r.job_id);
  if (head == nullptr || head->details == nullptr) return false;
  const time_t since =
      head->details->begin_time ? head->details->begin_time : head->details->submit_time;
  return since > 0 && Time(env.now) - Time(since) >= after;
}

// A het job is a backfill candidate of every partition it touches: it keeps
// off the nodes every reservation of this cycle holds for its head, unless
// it would end before that head's shadow (case (a)), by its prediction, or
// by its limit with easypp_safe or when the head starves.
void exclude_reserved_for_het(const CycleEnv& env, bitstr_t* avail, const HetCandidate& h) {
  for (const PartReservation& r : env.reservations) {
    if (!r.nodes) continue;
    const bool safe = env.cfg.sched.policy.safe || starving_head(env, r);
    const Time bound = Time(env.now) + (safe ? h.estimate : h.prediction);
    if (bound > r.shadow) bit_and_not(avail, r.nodes.get());
  }
}

// Undo a partial start: every started component goes back to pending as
// sched/backfill's _het_job_kill_now() leaves it (written from its
// description, docs/plugin-internals.md 5.2): eligible again only after the
// job credential's lifetime (the credentials already issued must expire
// first), end_time = now, PENDING|COMPLETING, its completion logged and its
// nodes deallocated (slurmd kills anything a prolog started), its submission
// counted again by the association limits, and requeue bookkeeping finished
// at once when no node is left completing. The caller has restored the true
// end_times.
void deallocate_het_components(const std::vector<std::uint32_t>& started, std::uint32_t het_id,
                               const std::string& failed, int failed_rc) {
  const time_t now = time(nullptr);
  // The credential expiration window (120 s unless AuthInfo=cred_expire=).
  const int cred_lifetime = easypp_cred_expiry_window();
  for (std::uint32_t id : started) {
    job_record_t* job = find_job_record(id);
    if (job == nullptr || IS_JOB_PENDING(job) || job->details == nullptr) continue;
    info("sched/easypp: heterogeneous JobId=%u: deallocating %s on %s: %s did not start (%s); "
         "eligible again in %d s",
         het_id, job_str(job).c_str(), job->nodes ? job->nodes : "?", failed.c_str(),
         slurm_strerror(failed_rc), cred_lifetime + 1);
    job->details->begin_time = now + cred_lifetime + 1;
    job->end_time = now;
    easypp_job_state_set(job, JOB_PENDING | JOB_COMPLETING);
    last_job_update = now;
    build_cg_bitmap(job);
    job_completion_logger(job, false);
    deallocate_nodes(job, false, false, false);
    // job_completion_logger() took the submission off the association
    // limits: count it again (no burst buffer stage-out: JOB_KILL_HURRY).
    const std::uint64_t saved_flags = job->bit_flags;
    job->bit_flags |= JOB_KILL_HURRY;
    easypp_acct_policy_add_job_submit(job);
    job->bit_flags = saved_flags;
    if (job->node_bitmap_cg == nullptr || bit_set_count(job->node_bitmap_cg) == 0)
      batch_requeue_fini(job);
  }
}

}  // namespace

HetStart start_het_job(CycleEnv& env, const HetCandidate& h) {
  // One component's choice: the partition it fits in (its adapter; the
  // adapter keeps a reference to `jobs`, hence the stable heap address) and
  // the nodes WILL_RUN chose for it.
  struct Choice {
    std::uint32_t job_id = 0;
    std::map<std::uint32_t, QueuedJob> jobs;
    std::unique_ptr<SlurmAdapter> adapter;
    Bitmap selected;
  };
  std::vector<std::unique_ptr<Choice>> plan;
  const int nodes = std::max(node_record_count, 1);
  Bitmap taken(bit_alloc(nodes));  // nodes chosen for the components tested so far
  bool completing = false;

  // 1. Test: does every component fit now, each on nodes of its own?
  for (const HetCandidate::Component& c : h.components) {
    ++env.tested;
    bool fits = false;
    for (const auto& pp : c.parts) {
      auto ch = std::make_unique<Choice>();
      ch->job_id = c.job_id;
      ch->jobs[c.job_id] = QueuedJob{c.job_id, pp.second, h.prediction, h.estimate};
      ch->adapter = std::make_unique<SlurmAdapter>(env, pp.first, ch->jobs);
      job_record_t* job = ch->adapter->pending_job(c.job_id);
      if (job == nullptr) return HetStart::kNoFit;  // no longer pending (or held)
      SlurmAdapter::Test t;
      if (!ch->adapter->prepare(job, &t)) continue;
      exclude_reserved_for_het(env, t.avail.get(), h);
      bit_and_not(t.avail.get(), taken.get());
      Bitmap sel;
      if (ch->adapter->will_run(job, t, t.avail.get(), true, nullptr, &sel) != SLURM_SUCCESS)
        continue;
      if ((cg_node_bitmap && bit_overlap_any(sel.get(), cg_node_bitmap)) ||
          (rs_node_bitmap && bit_overlap_any(sel.get(), rs_node_bitmap))) {
        completing = true;  // fits, but on nodes still completing a job: not now
        continue;
      }
      bit_or(taken.get(), sel.get());
      ch->selected = std::move(sel);
      plan.push_back(std::move(ch));
      fits = true;
      break;
    }
    if (!fits) {
      if (completing) env.retry_soon = true;
      return completing ? HetStart::kCompleting : HetStart::kNoFit;
    }
  }
  if (plan.empty()) return HetStart::kNoFit;

  // 2. All fit: start them in the same order. Each component may use the
  // nodes it was tested on, but not those of the components started before
  // it nor those chosen for the ones still to come, so a later component
  // still finds what its test found.
  Bitmap used(bit_alloc(nodes));
  std::vector<std::uint32_t> started;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    Choice& ch = *plan[k];
    SlurmAdapter& a = *ch.adapter;
    job_record_t* job = a.pending_job(ch.job_id);
    int rc = ESLURM_NODES_BUSY;
    SlurmAdapter::Test t;
    if (job == nullptr) {
      rc = ESLURM_INVALID_JOB_ID;
    } else if (a.prepare(job, &t)) {
      exclude_reserved_for_het(env, t.avail.get(), h);
      bit_and_not(t.avail.get(), used.get());
      for (std::size_t j = k + 1; j < plan.size(); ++j)
        bit_and_not(t.avail.get(), plan[j]->selected.get());
      if (het_fault_injection() && k > 0 && k + 1 == plan.size()) {
        info("sched/easypp: debug: EASYPP_DEBUG_HET_FAIL: offering %s no node",
             job_str(job).c_str());
        bit_clear_all(t.avail.get());
      }
      rc = a.start_job(job, t.avail.get());  // true end_times back for select_nodes()
    }
    if (rc != SLURM_SUCCESS) {
      const std::string failed = job ? job_str(job) : "JobId=" + std::to_string(ch.job_id);
      if (started.empty()) {
        debug("sched/easypp: heterogeneous JobId=%u: %s did not start (%s); nothing started",
              h.het_job_id, failed.c_str(), slurm_strerror(rc));
        return HetStart::kNoFit;
      }
      env.swap.restore();
      deallocate_het_components(started, h.het_job_id, failed, rc);
      env.swap.apply(env.now);
      ++env.het_undone;
      info("sched/easypp: heterogeneous JobId=%u: start undone (%zu of %zu components had "
           "started)",
           h.het_job_id, started.size(), plan.size());
      return HetStart::kUndone;
    }
    started.push_back(job->job_id);
    if (job->node_bitmap != nullptr) bit_or(used.get(), job->node_bitmap);
  }

  // 3. Every component runs: account, track, log.
  for (std::size_t k = 0; k < plan.size(); ++k) {
    job_record_t* job = find_job_record(started[k]);
    if (job == nullptr) continue;
    env.account_start(job);
    env.tracker.started(job->job_id, job->job_id, job->start_time + job->tot_sus_time, env.cycle);
    ++env.started_backfill;
    const TrackedJob* tj = env.tracker.find(job->job_id);
    info("sched/easypp: started %s in %s on %s (heterogeneous, component %zu of %zu, "
         "prediction %ld s, limit %u min)",
         job_str(job).c_str(), plan[k]->adapter->part_name_.c_str(),
         job->nodes ? job->nodes : "?", k + 1, plan.size(),
         long(tj ? tj->prediction : h.prediction), job->time_limit);
  }
  ++env.het_started;
  info("sched/easypp: heterogeneous JobId=%u: all %zu components started (prediction %ld s)",
       h.het_job_id, plan.size(), long(h.prediction));
  return HetStart::kStarted;
}

bool SlurmAdapter::may_continue() { return cycle_may_continue(env_); }

bool cycle_may_continue(CycleEnv& env) {
  if (env.interrupted) return false;
  if (env.tested >= std::uint32_t(env.cfg.max_job_test)) {
    env.interrupted = true;
    env.interrupt_reason = "max_job_test";
    return false;
  }
  const std::int64_t t = steady_usec();
  if (t - env.started_usec >= std::int64_t(env.cfg.max_time) * 1000000) {
    env.interrupted = true;
    env.interrupt_reason = "max_time";
    return false;
  }
  if (t - env.locked_usec < env.cfg.yield_interval_usec) return true;

  // Yield the locks like sched/backfill: true end_times back, check, unlock,
  // sleep, lock; give up the pass if anything changed meanwhile.
  env.swap.restore();
  assert_no_planning_values("yielding the locks");
  const time_t job_u = last_job_update, node_u = last_node_update, part_u = last_part_update,
               resv_u = last_resv_update, conf_u = slurm_conf.last_update;
  easypp_slurm_unlock();
  easypp_agent_nap(env.cfg.yield_sleep_usec);
  easypp_slurm_lock();
  env.locked_usec = steady_usec();
  ++env.yields;
  if (easypp_agent_stopping()) {
    env.interrupted = true;
    env.interrupt_reason = "stopping";
    return false;
  }
  if (easypp_core_reload_pending()) {
    env.interrupted = true;
    env.interrupt_reason = "reconfigure";
    return false;
  }
  if (job_u != last_job_update || node_u != last_node_update || part_u != last_part_update ||
      resv_u != last_resv_update || conf_u != slurm_conf.last_update) {
    env.interrupted = true;
    env.interrupt_reason = "state changed during yield";
    return false;
  }
  env.swap.apply(env.now);
  return true;
}

}  // namespace easypp::plugin
