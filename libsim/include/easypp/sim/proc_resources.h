// The processor-count resource model used by the SWF simulator: a machine of
// N identical processors, running jobs ordered by predicted end.
//
// It answers the policy's questions (through ProcAdapter, proc_adapter.h):
// does a job fit the free processors, when would the head fit given the
// running jobs' predicted ends (shadow time, extra processors), and may a
// candidate backfill. With one reservation it is the shadow/extra
// computation of the EASY paper, found without walking every running job
// (the running jobs by predicted end in sorted blocks that know their
// processors); with more (conservative) it plans on an availability profile.
#pragma once

#include <cstdint>
#include <vector>

#include "easypp/resource_api.h"
#include "easypp/types.h"

namespace easypp {

class ProcResources {
 public:
  explicit ProcResources(std::int64_t procs = 0) : total_(procs), free_(procs) {}

  std::int64_t total() const { return total_; }
  std::int64_t free() const { return free_; }
  std::size_t running() const { return running_.size(); }

  // --- the running set (maintained by the owner) ---------------------------
  void remove_running(JobHandle h, std::int64_t size, Time predicted_end);
  void move_predicted_end(JobHandle h, std::int64_t size, Time old_end, Time new_end);

  // --- planning within one scheduling pass ---------------------------------
  /// Forget the previous pass's reservations.
  void begin_pass(Time now);
  /// Keep them instead, for a pass at `now` that continues the last one
  /// (policy.h, PassCarry): true if the state is the one a pass at `now`
  /// would rebuild. False, keeping nothing (call begin_pass()), when the
  /// running set changed since the last pass (a job ended or was
  /// re-planned), or, once the profile exists, when a planned end or
  /// reservation lies in (last now, now] or a reservation began at the
  /// last now (a profile built at `now` would hold it from `now`), or when
  /// the head's shadow walk now gives another shadow or extra. (It counts
  /// every start() as the last pass's: jobs start within passes.)
  bool continue_pass(Time now);
  bool fits_now(std::int64_t size) const { return size <= free_; }
  /// Earliest start for `size` processors held `duration` seconds; records
  /// the reservation. See resource_api.h (reserve).
  Time reserve(std::int64_t size, Time duration);
  /// May a job of `size` start now and hold its processors until `end_bound`
  /// without delaying any reservation of this pass? Does not allocate.
  bool may_backfill(std::int64_t size, Time end_bound) const;
  /// Account for a job started now (after fits_now or may_backfill), held
  /// until end_bound for planning; also adds it to the running set.
  void start(JobHandle h, std::int64_t size, Time end_bound, Time predicted_end);

  std::int64_t extra() const { return extra_; }
  /// Upper bound of the width that may still start now in this pass: the
  /// free processors, and once the profile exists (two or more
  /// reservations) what the reservations and starts of this pass left of
  /// its first segment (may_backfill refuses anything wider). Conservative
  /// passes stop once it is below every waiting job's width instead of
  /// reserving for the rest of the queue (reservations that change no
  /// decision of the pass).
  std::int64_t start_width() const {
    if (!profile_) return free_;
    settle();
    return segs_.front().free < free_ ? segs_.front().free : free_;
  }
  /// The limits every job that may_backfill() would still accept in this
  /// pass lies within (resource_api.h, start_limits): the start width, how
  /// long until the profile first holds fewer processors than that, and
  /// what it holds then (one reservation: the head's shadow time and extra
  /// processors). Walks the profile until nothing is free, its steps run
  /// out or the profile ends.
  StartLimits start_limits() const;

 private:
  struct Run {
    Time end;
    JobHandle h;
    std::int64_t size;
    bool operator<(const Run& o) const { return end != o.end ? end < o.end : h < o.h; }
  };
  // The running jobs by predicted end, in sorted blocks of at most
  // 2 * kBlock runs, each block with its processor count: inserting and
  // erasing cost a search and a small move, the shadow time a walk over the
  // blocks' counts and one block.
  class RunsByEnd {
   public:
    void insert(const Run& r);
    bool erase(const Run& r);
    std::size_t size() const { return size_; }
    /// The first run by whose end the runs up to it hold at least `need`
    /// processors (need > 0); false if even all of them hold less.
    bool first_holding(std::int64_t need, Run* run, std::int64_t* held) const;
    template <class F>
    void for_each(F&& f) const {
      for (const Block& b : blocks_)
        for (const Run& r : b.runs) f(r);
    }

   private:
    static constexpr std::size_t kBlock = 16;
    struct Block {
      std::vector<Run> runs;
      std::int64_t procs = 0;
    };
    std::size_t block_of(const Run& r) const;  // the first block whose last run is >= r
    std::vector<Block> blocks_;
    std::size_t size_ = 0;
  };
  struct Seg {
    Time t;             // segment start
    std::int64_t free;  // processors available on [t, next.t)
  };
  [[gnu::always_inline]] inline void head_fit(std::int64_t size, Time* shadow, std::int64_t* extra);
  void build_profile();
  std::size_t segment_of(Time t) const;  // the segment containing t (t >= now)
  std::size_t split_at(Time t);
  void hold(Time from, Time to, std::int64_t size);  // [from, to) loses size processors

  std::int64_t total_;
  std::int64_t free_;
  RunsByEnd running_;

  Time now_ = 0;
  std::size_t nres_ = 0;
  // continue_pass(): the running set's version when the last pass ended
  // (begin_pass() and start() keep it), and whether a reservation of the
  // profile began at that pass's now.
  std::uint64_t pass_version_ = 0;
  mutable bool at_now_ = false;
  Time shadow_ = kNever;
  std::int64_t extra_ = 0;
  // The running set changes less often than passes run (an arrival alone
  // changes nothing): the head's shadow/extra is reused while the running
  // set, the free count and the head's size are unchanged.
  std::uint64_t version_ = 0;
  std::uint64_t cached_version_ = ~std::uint64_t(0);
  std::int64_t cached_size_ = -1;
  Time cached_shadow_ = kNever;
  std::int64_t cached_extra_ = 0;
  // The head's reservation (the first one), for the profile.
  Time head_shadow_ = kNever;
  std::int64_t head_size_ = 0;
  Time head_duration_ = 0;
  // Availability profile, built when a second reservation is made.
  bool profile_ = false;
  // (mutable: a stacked reservation is applied by the next reader, settle.)
  mutable std::vector<Seg> segs_;
  // The last reservation's window, segments [i, j) (no other change of the
  // profile since): a reservation of the same shape that still fits there
  // (room: the least free over it) goes to the same start (reserve's hint
  // argument: it cannot fit before it), and only adds to `pending`, which
  // the next reader of the profile subtracts over the window (settle).
  // Queues hold long runs of identical jobs (RICC: 82% of conservative's
  // reservations land on the previous one's start).
  struct Stack {
    bool on = false;
    std::int64_t size = 0;
    Time duration = 0;
    std::size_t i = 0, j = 0;
    std::int64_t room = 0;
    std::int64_t pending = 0;
  };
  mutable Stack stack_;
  void settle() const {
    if (stack_.pending == 0) return;
    for (std::size_t k = stack_.i; k < stack_.j; ++k) segs_[k].free -= stack_.pending;
    stack_.pending = 0;
  }
  // Jobs started in this pass before the profile was built whose end bound
  // lies past their predicted end: held until it in the profile.
  struct Held {
    std::int64_t size;
    Time from, to;  // predicted end, end bound
  };
  std::vector<Held> held_;
  // Where this pass's last reservation of each (size, duration) began
  // (kNever: none fits), in a small table overwritten on a collision: a
  // later job of the same shape starts its search there and cannot
  // backfill now if that was later (see reserve). Stamped with the pass.
  struct Hint {
    std::uint64_t pass = 0;
    std::int64_t size = 0;
    Time duration = 0;
    Time start = 0;
    bool is(std::uint64_t p, std::int64_t s, Time d) const {
      return pass == p && size == s && duration == d;
    }
  };
  static constexpr std::size_t kHints = 256;
  static std::size_t hint_slot(std::int64_t size, Time duration) {
    const std::uint64_t h = (std::uint64_t(size) * 0x9E3779B97F4A7C15ull) ^
                            (std::uint64_t(duration) * 0xC2B2AE3D27D4EB4Full);
    return std::size_t(h >> 56) & (kHints - 1);
  }
  std::uint64_t pass_ = 0;
  Hint hints_[kHints];
};

}  // namespace easypp
