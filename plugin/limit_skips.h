// The jobs an accounting limit holds back, cycle by cycle, without Slurm
// headers (acct_limits.cc asks Slurm; this remembers and decides what to log).
//
// sched/backfill skips a job that a QOS or association limit refuses,
// before node selection (acct_policy_job_runnable_pre_select(), and
// acct_policy_job_runnable_post_select() with its TRES) or after it
// (ESLURM_ACCOUNTING_POLICY from select_nodes()): such a job never gets a
// reservation, so it holds no node. sched/easypp does the same:
//
//   - a job refused before the pass (kPreSelect, kPostSelect) is not queued;
//   - a job refused by select_nodes() during the pass (kSelectNodes: a
//     limit on what the selected nodes bring, e.g. whole nodes' CPUs) is
//     never tested again in that cycle (no reservation: it holds no node),
//     and in the next cycle it is tried "start now only" before the pass
//     (never the head) until select_nodes() no longer refuses it;
//   - a job whose QOS has NoReserve, or whose priority is below its QOS's
//     MinPrioThreshold, gets no reservation (kNoReserve: tried as a backfill
//     candidate only, never the head).
//
// A job is logged once when it becomes skipped (not again while it stays
// skipped cycle after cycle); skipped() and the counts are per cycle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace easypp::plugin {

class LimitSkips {
 public:
  enum class Why { kPreSelect, kPostSelect, kSelectNodes, kNoReserve };

  static const char* name(Why w) {
    switch (w) {
      case Why::kPreSelect: return "before node selection";
      case Why::kPostSelect: return "its TRES";
      case Why::kSelectNodes: return "select_nodes()";
      case Why::kNoReserve: return "no reservation";
    }
    return "?";
  }

  /// A new cycle: this cycle's skips become the last cycle's.
  void begin_cycle() {
    last_.swap(now_);
    now_.clear();
  }

  /// Record job `id` as skipped in this cycle. True when it should be
  /// logged: it was not skipped for the same reason in the last cycle (nor
  /// already in this one).
  bool skip(std::uint32_t id, Why why) {
    auto [it, inserted] = now_.emplace(id, why);
    if (!inserted) {
      if (it->second == why) return false;
      it->second = why;
    }
    auto before = last_.find(id);
    return before == last_.end() || before->second != why;
  }

  /// Skipped in this cycle: never tested again in it (kNoReserve jobs are:
  /// they are only never reserved for).
  bool skipped(std::uint32_t id) const {
    auto it = now_.find(id);
    return it != now_.end() && it->second != Why::kNoReserve;
  }

  /// Refused by select_nodes() in the last cycle: this cycle tries it
  /// "start now only" (never the head).
  bool refused_last_cycle(std::uint32_t id) const {
    auto it = last_.find(id);
    return it != last_.end() && it->second == Why::kSelectNodes;
  }

  /// Jobs skipped in this cycle (every reason, kNoReserve included).
  std::size_t count() const { return now_.size(); }
  std::size_t count(Why why) const {
    std::size_t n = 0;
    for (const auto& kv : now_) n += kv.second == why;
    return n;
  }

 private:
  std::map<std::uint32_t, Why> now_, last_;
};

}  // namespace easypp::plugin
