#include "het_jobs.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

namespace easypp::plugin {

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

// One component's choice: the partition it fits in and the nodes WILL_RUN
// chose for it (the partition's queue map holds its priority there; heap
// allocated, so the SlurmPartition's pointer to it stays valid).
struct Choice {
  std::uint32_t job_id = 0;
  QueueMap jobs;
  SlurmPartition part;
  Bitmap selected;
};
using Plan = std::vector<std::unique_ptr<Choice>>;

// A het job is a backfill candidate of every partition it touches: it keeps
// off the nodes every reservation of this cycle holds for its head unless it
// would end before that head's shadow, by the one end bound (its
// prediction; its limit with easypp_safe or when that head starves).
void exclude_reserved(const CycleEnv& env, bitstr_t* avail, const HetCandidate& h) {
  for (const Reservation<Bitmap>& r : env.plan.reservations) {
    if (!r.nodes) continue;
    const Time bound = env.cfg.sched.policy.end_bound(env.now, h.prediction, h.estimate, r.room);
    if (bound > r.shadow) bit_and_not(avail, r.nodes.get());
  }
}

// Phase 1: does every component fit now, each on nodes of its own?
HetStart test_components(CycleEnv& env, SlurmCluster& cluster, const HetCandidate& h, Plan* plan) {
  Bitmap taken(bit_alloc(std::max(node_record_count, 1)));
  bool completing = false;
  for (const HetCandidate::Component& c : h.components) {
    ++env.tested;
    bool fits = false;
    for (const auto& pp : c.parts) {
      auto ch = std::make_unique<Choice>();
      ch->job_id = c.job_id;
      ch->jobs[c.job_id] = QueuedJob{c.job_id, pp.second, 0, kNever};
      ch->part = SlurmPartition{pp.first, pp.first->name ? pp.first->name : "", &ch->jobs};
      job_record_t* job = cluster.pending_job(c.job_id);
      if (job == nullptr) return HetStart::kNoFit;  // no longer pending (or held)
      SlurmCluster::Candidate t;
      if (!cluster.prepare(c.job_id, ch->part, &t)) continue;
      exclude_reserved(env, t.avail.get(), h);
      bit_and_not(t.avail.get(), taken.get());
      Bitmap sel;
      if (cluster.will_run(job, t, t.avail.get(), true, nullptr, &sel) != SLURM_SUCCESS) continue;
      if ((cg_node_bitmap && bit_overlap_any(sel.get(), cg_node_bitmap)) ||
          (rs_node_bitmap && bit_overlap_any(sel.get(), rs_node_bitmap))) {
        completing = true;  // fits, but on nodes still completing a job: not now
        continue;
      }
      bit_or(taken.get(), sel.get());
      ch->selected = std::move(sel);
      plan->push_back(std::move(ch));
      fits = true;
      break;
    }
    if (!fits) {
      if (completing) env.plan.retry_soon = true;
      return completing ? HetStart::kCompleting : HetStart::kNoFit;
    }
  }
  return plan->empty() ? HetStart::kNoFit : HetStart::kStarted;
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
void deallocate(const std::vector<std::uint32_t>& started, std::uint32_t het_id,
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

// Phase 2: all fit, start them in the same order. Each component may use the
// nodes it was tested on, but not those of the components started before it
// nor those chosen for the ones still to come, so a later component still
// finds what its test found.
HetStart start_components(CycleEnv& env, SlurmCluster& cluster, const HetCandidate& h,
                          const Plan& plan, std::vector<std::uint32_t>* started) {
  Bitmap used(bit_alloc(std::max(node_record_count, 1)));
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const Choice& ch = *plan[k];
    job_record_t* job = cluster.pending_job(ch.job_id);
    int rc = ESLURM_NODES_BUSY;
    SlurmCluster::Candidate t;
    if (job == nullptr) {
      rc = ESLURM_INVALID_JOB_ID;
    } else if (cluster.prepare(ch.job_id, ch.part, &t)) {
      exclude_reserved(env, t.avail.get(), h);
      bit_and_not(t.avail.get(), used.get());
      for (std::size_t j = k + 1; j < plan.size(); ++j)
        bit_and_not(t.avail.get(), plan[j]->selected.get());
      if (het_fault_injection() && k > 0 && k + 1 == plan.size()) {
        info("sched/easypp: debug: EASYPP_DEBUG_HET_FAIL: offering %s no node",
             job_str(job).c_str());
        bit_clear_all(t.avail.get());
      }
      rc = cluster.start_job(job, t.avail.get(), true);  // true end_times back for select_nodes()
    }
    if (rc == SLURM_SUCCESS) {
      started->push_back(job->job_id);
      if (job->node_bitmap != nullptr) bit_or(used.get(), job->node_bitmap);
      continue;
    }
    const std::string failed = job ? job_str(job) : "JobId=" + std::to_string(ch.job_id);
    if (started->empty()) {
      debug("sched/easypp: heterogeneous JobId=%u: %s did not start (%s); nothing started",
            h.het_job_id, failed.c_str(), slurm_strerror(rc));
      return HetStart::kNoFit;
    }
    env.swap.restore();
    deallocate(*started, h.het_job_id, failed, rc);
    env.swap.apply_later(env.now);
    ++env.het_undone;
    info("sched/easypp: heterogeneous JobId=%u: start undone (%zu of %zu components had "
         "started)",
         h.het_job_id, started->size(), plan.size());
    return HetStart::kUndone;
  }
  return HetStart::kStarted;
}

}  // namespace

HetStart start_het_job(CycleEnv& env, SlurmCluster& cluster, const HetCandidate& h) {
  Plan plan;
  const HetStart tested = test_components(env, cluster, h, &plan);
  if (tested != HetStart::kStarted) return tested;
  std::vector<std::uint32_t> started;
  const HetStart r = start_components(env, cluster, h, plan, &started);
  if (r != HetStart::kStarted) return r;

  // Phase 3: every component runs: account, start its plan, log.
  for (std::size_t k = 0; k < plan.size(); ++k) {
    job_record_t* job = find_job_record(started[k]);
    if (job == nullptr) continue;
    cluster.account_start(job->job_id, &env.plan.idle);
    env.book.start(job->job_id, job->start_time + job->tot_sus_time);
    ++env.started_backfill;
    const JobPlan* p = env.book.find(job->job_id);
    info("sched/easypp: started %s in %s on %s (heterogeneous, component %zu of %zu, "
         "prediction %ld s, limit %u min)",
         job_str(job).c_str(), plan[k]->part.name.c_str(), job->nodes ? job->nodes : "?", k + 1,
         plan.size(), long(p ? p->prediction : h.prediction), job->time_limit);
  }
  ++env.het_started;
  env.het_components += std::uint32_t(plan.size());
  info("sched/easypp: heterogeneous JobId=%u: all %zu components started (prediction %ld s)",
       h.het_job_id, plan.size(), long(h.prediction));
  return HetStart::kStarted;
}

}  // namespace easypp::plugin
