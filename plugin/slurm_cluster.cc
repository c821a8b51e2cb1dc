// SlurmCluster: NodeAdapter's questions (node_planner.h) answered by
// slurmctld, and the cycle's budget and yield point.
//
//  - prepare: the job's usable nodes now, as sched/backfill computes them
//    (partition nodes that are up and not drained, advanced reservations via
//    job_test_resv(), node owner and MCS filters, the job's --exclude).
//  - fits_now: WILL_RUN with TEST_NOW_ONLY on a node set.
//  - fits_after: one WILL_RUN in which the running jobs ending at or before
//    T end at now + 1 and all others in the far future (WILL_RUN's own 30 s
//    / doubling batches never matter), their end_times set through the
//    planning ledger and put back at once.
//  - start: select_nodes() exactly as sched/backfill's _start_job() does it
//    (the exclusions through a temporarily widened exc_node_bitmap); a
//    failure means "did not fit", except ESLURM_ACCOUNTING_POLICY: the job
//    is then skipped for the rest of the cycle (acct_limits.h).
#include "slurm_cluster.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "acct_limits.h"
#include "sched_easypp.h"

namespace easypp::plugin {

namespace {

// fits_after(): released jobs end here (relative to now) ...
constexpr time_t kReleasedAfter = 1;
// ... the others this far in the future; a start later than kFitHorizon
// means "does not fit once the released jobs are gone".
constexpr time_t kFarFuture = time_t(10) * 365 * 24 * 3600;
constexpr time_t kFitHorizon = time_t(365) * 24 * 3600;

bool is_active(const job_record_t* job) { return IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job); }

// A running job's planned end: start + prediction when the book plans it,
// else its end_time.
Time planned_end(const PredictionBook& book, const job_record_t* r) {
  const JobPlan* p = book.find(r->job_id);
  return p && p->running ? r->start_time + r->tot_sus_time + p->prediction : r->end_time;
}

}  // namespace

void assert_no_planning_values(Ledger& ledger, const char* where) {
  std::uint32_t first = 0;
  const std::size_t left = ledger.leaked(&first);
  if (left == 0) return;
#ifdef EASYPP_DEBUG_CHECKS
  error("sched/easypp: BUG: %zu planning value(s) of end_time left before %s (first JobId=%u); "
        "aborting (--enable-debug-checks)",
        left, where, first);
  std::abort();
#else
  error("sched/easypp: BUG: %zu planning value(s) of end_time left before %s (first JobId=%u); "
        "restoring the true values",
        left, where, first);
  ledger.restore_to(0);
#endif
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

// --- the cycle's budget and yield point -------------------------------------------

namespace {

bool interrupt(CycleEnv& env, const char* why) {
  env.interrupted = true;
  env.interrupt_reason = why;
  return false;
}

// Yield the locks like sched/backfill: true end_times back, check, unlock,
// sleep, lock; give up the pass if anything changed meanwhile.
bool yield_locks(CycleEnv& env) {
  env.swap.restore();
  assert_no_planning_values(env.ledger, "yielding the locks");
  const time_t job_u = last_job_update, node_u = last_node_update, part_u = last_part_update,
               resv_u = last_resv_update, conf_u = slurm_conf.last_update;
  const std::int64_t t0 = steady_usec();
  easypp_slurm_unlock();
  easypp_agent_nap(env.cfg.yield_sleep_usec);
  easypp_slurm_lock();
  env.locked_usec = steady_usec();
  env.slept_usec += env.locked_usec - t0;
  ++env.yields;
  if (easypp_agent_stopping() || easypp_slurmctld_stopping()) return interrupt(env, "stopping");
  if (easypp_core_reload_pending()) return interrupt(env, "reconfigure");
  if (job_u != last_job_update || node_u != last_node_update || part_u != last_part_update ||
      resv_u != last_resv_update || conf_u != slurm_conf.last_update)
    return interrupt(env, "state changed during yield");
  env.swap.apply_later(env.now);
  return true;
}

}  // namespace

bool cycle_may_continue(CycleEnv& env) {
  if (env.interrupted) return false;
  if (env.tested >= std::uint32_t(env.cfg.max_job_test)) return interrupt(env, "max_job_test");
  const std::int64_t t = steady_usec();
  if (t - env.started_usec >= std::int64_t(env.cfg.max_time) * 1000000)
    return interrupt(env, "max_time");
  if (t - env.locked_usec < env.cfg.yield_interval_usec) return true;
  return yield_locks(env);
}

// --- sdiag ----------------------------------------------------------------------

// bf_active as the release's sched/backfill sets it (outside the locks).
void diag_cycle_begin() { easypp_bf_active(true); }
void diag_cycle_idle() { easypp_bf_active(false); }

void diag_cycle_end(const CycleEnv& env, std::uint32_t queue_len, std::uint32_t reservations,
                    std::int64_t cycle_usec) {
  diag_stats_t& d = slurmctld_diag_stats;
  const auto usec = std::uint32_t(std::clamp<std::int64_t>(cycle_usec, 0, UINT32_MAX));
  d.bf_cycle_counter++;
  d.bf_cycle_sum += usec;
  d.bf_cycle_last = usec;
  if (usec > d.bf_cycle_max) d.bf_cycle_max = usec;
  d.bf_last_depth = env.depth;
  d.bf_last_depth_try = env.tested;
  d.bf_depth_sum += env.depth;
  d.bf_depth_try_sum += env.tested;
  d.bf_queue_len = queue_len;
  d.bf_queue_len_sum += queue_len;
  d.bf_table_size = reservations;
  d.bf_table_size_sum += reservations;
  d.bf_when_last_cycle = env.now;
  d.backfilled_jobs += env.started_backfill;
  d.last_backfilled_jobs += env.started_backfill;
  d.backfilled_het_jobs += env.het_components;
  const std::string& why = env.interrupt_reason;
  easypp_count_bf_exit(why.empty()               ? BfExit::kEnd
                       : why == "max_job_test"   ? BfExit::kMaxJobTest
                       : why == "max_time"       ? BfExit::kTimeout
                                                 : BfExit::kStateChanged);
}

std::uint32_t nodes_registering() {
  std::uint32_t n = 0;
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) {
    if (IS_NODE_FUTURE(node) || IS_NODE_POWERED_DOWN(node) || IS_NODE_POWERING_UP(node)) continue;
    if (IS_NODE_UNKNOWN(node) || (IS_NODE_NO_RESPOND(node) && !IS_NODE_DOWN(node))) ++n;
  }
  return n;
}

// --- the cluster -----------------------------------------------------------------

Bitmap SlurmCluster::usable(const SlurmPartition& p) const {
  Bitmap b = Bitmap::copy_of(p.part->node_bitmap);
  if (b) bit_and(b.get(), avail_node_bitmap);
  return b;
}

// Configured CPUs minus the allocations of running and suspended jobs.
void SlurmCluster::idle_cpus(std::vector<std::int64_t>* idle) const {
  idle->assign(std::size_t(std::max(node_record_count, 0)), 0);
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) (*idle)[std::size_t(i)] = node->cpus;
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* job;
  env_.suspended = false;
  while ((job = static_cast<job_record_t*>(list_next(it)))) {
    if (IS_JOB_SUSPENDED(job)) env_.suspended = true;
    if (is_active(job)) account_start(job->job_id, idle);
  }
  list_iterator_destroy(it);
}

void SlurmCluster::account_start(JobHandle started, std::vector<std::int64_t>* idle) const {
  const job_record_t* job = find_job_record(started);
  job_resources_t* r = job ? job->job_resrcs : nullptr;
  if (r == nullptr || r->node_bitmap == nullptr || r->cpus == nullptr) return;
  const int n = std::min<int>(int(bit_size(r->node_bitmap)), int(idle->size()));
  std::uint32_t k = 0;
  // From the job's first node on (bit_ffs scans words): a job's nodes, not
  // the cluster's, are walked (was: every bit from node 0, R x N a cycle).
  const int first = int(bit_ffs(r->node_bitmap));
  for (int i = std::max(first, 0); first >= 0 && i < n && k < r->nhosts; i++) {
    if (!bit_test(r->node_bitmap, i)) continue;
    std::int64_t& v = (*idle)[std::size_t(i)];
    v = std::max<std::int64_t>(0, v - r->cpus[k]);
    ++k;
  }
}

JobOwner SlurmCluster::job_owner(JobHandle h) const {
  const job_record_t* job = find_job_record(h);
  return job ? JobOwner{job->user_id, job->assoc_id} : JobOwner{};
}

StartProjection SlurmCluster::projection(const SlurmPartition& p) const {
  const Bitmap use = usable(p);
  std::int64_t capacity = 0, free = 0;
  node_record_t* node;
  for (int i = 0; use && (node = next_node(&i)); i++) {
    if (!bit_test(use.get(), i)) continue;
    capacity += node->cpus;
    if (std::size_t(i) < env_.plan.idle.size()) free += env_.plan.idle[std::size_t(i)];
  }
  StartProjection proj(env_.now, capacity, free);
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* job;
  while (use && (job = static_cast<job_record_t*>(list_next(it)))) {
    const job_resources_t* r = job->job_resrcs;
    if (!is_active(job) || r == nullptr || r->node_bitmap == nullptr || r->cpus == nullptr)
      continue;
    std::int64_t cpus = 0;
    const int n = std::min<int>(int(bit_size(r->node_bitmap)), int(bit_size(use.get())));
    std::uint32_t k = 0;
    if (!bit_overlap_any(r->node_bitmap, use.get())) continue;  // word-wise
    const int first = int(bit_ffs(r->node_bitmap));
    for (int i = std::max(first, 0); first >= 0 && i < n && k < r->nhosts; i++) {
      if (!bit_test(r->node_bitmap, i)) continue;
      if (bit_test(use.get(), i)) cpus += r->cpus[k];
      ++k;
    }
    if (cpus > 0) proj.release(planned_end(env_.book, job), cpus);
  }
  list_iterator_destroy(it);
  return proj;
}

job_record_t* SlurmCluster::pending_job(JobHandle h) const {
  job_record_t* job = find_job_record(h);
  if (job == nullptr || !IS_JOB_PENDING(job) || IS_JOB_COMPLETING(job) || job->priority == 0 ||
      job->details == nullptr || IS_JOB_REVOKED(job))
    return nullptr;
  return job;
}

bool SlurmCluster::prepare(JobHandle h, const SlurmPartition& p, Candidate* c) {
  part_ = &p;
  job_record_t* job = pending_job(h);
  if (job == nullptr || p.part == nullptr) return false;
  if (env_.limits != nullptr && env_.limits->skipped(h)) return false;  // no test, no nodes
  job->part_ptr = p.part;
  if (p.jobs != nullptr) {
    auto q = p.jobs->find(h);
    // Not over a priority set directly (scontrol update) during a yield:
    // sched/backfill checks direct_set_prio too (26.05).
    if (q != p.jobs->end() && !job->direct_set_prio) job->priority = q->second.priority;
  }
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
  if (get_node_cnts(job, qos_flags, p.part, &c->min_nodes, &c->req_nodes, &c->max_nodes) !=
      SLURM_SUCCESS)
    return false;
  c->cpus = std::int64_t(job->details->min_cpus);
  const bool whole = (job->details->whole_node & WHOLE_NODE_REQUIRED) || p.part->max_share == 0 ||
                     (p.part->max_cpu_cnt > 0 && job->details->pn_min_cpus >= p.part->max_cpu_cnt);
  c->whole_nodes = whole ? std::int64_t(std::max<std::uint32_t>(c->min_nodes, 1)) : 0;
  c->node_cpus = idle_is_exact(p.part)
                     ? std::int64_t(std::max<std::uint32_t>(job->details->pn_min_cpus, 1))
                     : 0;
  time_t start_res = env_.now;
  bool overlap = false;
  if (job_test_resv(job, &start_res, true, c->avail.out(), c->exc_core.out(), &overlap, false) !=
      SLURM_SUCCESS)
    return false;
  if (start_res > env_.now) return false;  // an advanced reservation holds the nodes now
  if (!c->avail || p.part->node_bitmap == nullptr) return false;
  bit_and(c->avail.get(), p.part->node_bitmap);
  bit_and(c->avail.get(), avail_node_bitmap);  // up and not drained
  filter_by_node_owner(job, c->avail.get());
  filter_by_node_mcs(job, slurm_mcs_get_select(job), c->avail.get());
  if (job->details->exc_node_bitmap != nullptr)
    bit_and_not(c->avail.get(), job->details->exc_node_bitmap);
  if (job->details->req_node_bitmap != nullptr &&
      !bit_super_set(job->details->req_node_bitmap, c->avail.get()))
    return false;
  return bit_set_count(c->avail.get()) >= int(std::max<std::uint32_t>(c->min_nodes, 1));
}

// Do the cycle's idle CPU counts bound what cons_tres can give a job of
// partition p (the prefilter's "no" exact)? Not when CPUs may be shared:
// OverSubscribe=YES or FORCE; gang scheduling; a suspended job (scontrol
// suspend gives its cores back); or a partition of a lower PriorityTier on
// some of p's nodes (cons_tres lets a higher tier's job have the cores of a
// lower tier's jobs, suspending or preempting them).
bool SlurmCluster::idle_is_exact(const part_record_t* p) {
  auto known = idle_exact_.find(p);
  if (known != idle_exact_.end()) return known->second;
  bool exact = p != nullptr && !env_.suspended &&
               !(slurm_conf.preempt_mode & PREEMPT_MODE_GANG) && !(p->max_share & SHARED_FORCE) &&
               (p->max_share & ~SHARED_FORCE) <= 1 && p->node_bitmap != nullptr;
  if (exact) {
    list_itr_t* it = list_iterator_create(part_list);
    part_record_t* q;
    while ((q = static_cast<part_record_t*>(list_next(it)))) {
      if (q != p && q->priority_tier < p->priority_tier && q->node_bitmap != nullptr &&
          bit_overlap_any(q->node_bitmap, p->node_bitmap)) {
        exact = false;
        break;
      }
    }
    list_iterator_destroy(it);
  }
  idle_exact_[p] = exact;
  return exact;
}

int SlurmCluster::will_run(job_record_t* job, const Candidate& c, bitstr_t* on, bool now_only,
                           time_t* start, Bitmap* selected) {
  Bitmap bm = Bitmap::copy_of(on);
  job_details_t* d = job->details;
  if (!now_only) ++env_.probes;
  d->features_use = d->features;
  d->feature_list_use = d->feature_list;
  if (d->feature_list_use != nullptr && job_req_node_filter(job, bm.get(), true) != SLURM_SUCCESS)
    return ESLURM_NODES_BUSY;
  if (bit_set_count(bm.get()) < int(std::max<std::uint32_t>(c.min_nodes, 1)))
    return ESLURM_NODES_BUSY;
  const time_t saved_start = job->start_time;
  const std::uint64_t saved_flags = job->bit_flags;
  const auto saved_whole = d->whole_node;
  job->bit_flags |= BACKFILL_TEST;
  if (now_only) job->bit_flags |= TEST_NOW_ONLY;
  // OverSubscribe=EXCLUSIVE: whole nodes for the test, as sched/backfill
  // does (25.11+), so the start it projects is one the partition allows.
  if (job->part_ptr != nullptr && job->part_ptr->max_share == 0)
    d->whole_node |= WHOLE_NODE_REQUIRED;
  const int rc =
      easypp_will_run(job, bm.get(), c.min_nodes, c.max_nodes, c.req_nodes, c.exc_core.get());
  d->whole_node = saved_whole;
  job->bit_flags = saved_flags;
  if (start) *start = job->start_time;
  job->start_time = saved_start;
  if (rc == SLURM_SUCCESS && selected) *selected = std::move(bm);
  return rc;
}

bool SlurmCluster::fits_now(JobHandle h, Candidate& c, const Bitmap& on, Bitmap* selected) {
  job_record_t* job = pending_job(h);
  return job != nullptr && will_run(job, c, on.get(), true, nullptr, selected) == SLURM_SUCCESS;
}

std::vector<Run> SlurmCluster::runs_on(const Bitmap& on) const {
  std::vector<Run> runs;
  list_itr_t* it = list_iterator_create(job_list);
  job_record_t* r;
  while ((r = static_cast<job_record_t*>(list_next(it)))) {
    if (!is_active(r) || r->node_bitmap == nullptr || r->end_time == 0) continue;
    if (!bit_overlap_any(r->node_bitmap, on.get())) continue;
    runs.push_back(Run{planned_end(env_.book, r), r->job_id, std::int64_t(r->total_cpus)});
  }
  list_iterator_destroy(it);
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.end != b.end ? a.end < b.end : a.id < b.id; });
  return runs;
}

void SlurmCluster::add_nodes_of(JobHandle running, Bitmap* into) const {
  const job_record_t* job = find_job_record(running);
  if (job != nullptr && job->node_bitmap != nullptr) bit_or(into->get(), job->node_bitmap);
}

bool SlurmCluster::fits_after(JobHandle h, Candidate& c, const Bitmap& on,
                              const std::vector<Run>& runs, Time t, Bitmap* selected) {
  job_record_t* job = pending_job(h);
  if (job == nullptr) return false;
  env_.swap.ensure();  // below the probe's mark
  ProbeScope<SlurmJobs> scope(env_.ledger);
  for (const Run& run : runs) {
    job_record_t* rj = find_job_record(run.id);
    if (rj == nullptr) continue;
    scope.set(rj, run.end <= t ? env_.now + kReleasedAfter : env_.now + kFarFuture);
  }
  time_t s = 0;
  Bitmap o;
  const bool ok = will_run(job, c, on.get(), false, &s, &o) == SLURM_SUCCESS &&
                  s < env_.now + kFitHorizon;
  if (ok && selected) *selected = std::move(o);
  return ok;
}

// select_nodes() as sched/backfill's _start_job(): the true end_times back,
// every node outside avail excluded through a temporarily widened
// exc_node_bitmap (also put back on an array's meta record), then launch.
int SlurmCluster::start_job(job_record_t* job, bitstr_t* avail, bool backfilled) {
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
    // Scheduler=Backfill in scontrol show job (BACKFILL_SCHED, which Slurm's
    // main scheduler clears on pending jobs), SchedBackfill in sacct.
    if (backfilled) job->bit_flags |= BACKFILL_SCHED;
    else job->bit_flags &= ~std::uint64_t(BACKFILL_SCHED);
    rc = easypp_select_nodes(job, backfilled ? SLURMDB_JOB_FLAG_BACKFILL : SLURMDB_JOB_FLAG_SCHED);
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
      easypp_srun_allocate(job);
    else if (!IS_JOB_CONFIGURING(job))
      launch_job(job);
  } else {
    debug2("sched/easypp: select_nodes() for %s: %s", job_str(job).c_str(), slurm_strerror(rc));
  }
  env_.swap.apply_later(env_.now);
  return rc;
}

Started SlurmCluster::start(JobHandle h, Candidate& c, const Bitmap& avail,
                            const StartNote& note) {
  Started s;
  job_record_t* job = pending_job(h);
  if (job == nullptr) return s;
  Bitmap selected;
  if (will_run(job, c, avail.get(), true, nullptr, &selected) != SLURM_SUCCESS) return s;
  if ((cg_node_bitmap && bit_overlap_any(selected.get(), cg_node_bitmap)) ||
      (rs_node_bitmap && bit_overlap_any(selected.get(), rs_node_bitmap))) {
    s.status = Started::kCompleting;  // fits, but on nodes still completing a job: wait
    return s;
  }
  const bool meta = job->array_recs != nullptr;
  const int rc = start_job(job, avail.get(), note.backfilled);
  if (rc != SLURM_SUCCESS) {
    note_start_refusal(job, rc, env_.limits);  // a limit: skipped for the rest of the cycle
    return s;
  }
  if (note.backfilled) ++env_.started_backfill;
  else ++env_.started_in_order;
  info("sched/easypp: started %s in %s on %s (%s, prediction %ld s, limit %u min)",
       job_str(job).c_str(), part_ ? part_->name.c_str() : "?", job->nodes ? job->nodes : "?",
       note.backfilled ? (note.beyond_shadow ? "backfill, beyond shadow" : "backfill")
                       : "in order",
       long(note.prediction), job->time_limit);
  s.status = Started::kStarted;
  s.as = job->job_id;
  s.start = job->start_time + job->tot_sus_time;
  s.more = meta && job->job_id != h;  // an array task split off: tasks may remain
  return s;
}

void SlurmCluster::publish(JobHandle head, const std::string& partition, Time shadow,
                           const Bitmap& reserved) {
  job_record_t* job = pending_job(head);
  if (job == nullptr) return;
  const time_t planned = std::max<time_t>(time_t(shadow), env_.now + 1);
  char* names = reserved ? bitmap2node_name(reserved.get()) : nullptr;
  if (job->start_time != planned) last_job_update = env_.now;
  job->start_time = planned;
  xfree(job->sched_nodes);
  job->sched_nodes = names;  // xmalloc'd by bitmap2node_name: slurmctld frees it
  env_.planned[head] = PlannedStart{partition, planned, names ? names : ""};
}

}  // namespace easypp::plugin
