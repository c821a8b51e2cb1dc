// The C++ side of sched/easypp: configuration and the scheduling cycle.
//
// Phase 1 (this file): the cycle only takes and releases the scheduling lock
// set and reloads the configuration after `scontrol reconfigure`. The EASY++
// pass (libpredict's schedule_pass over a Slurm adapter) comes next.
//
// Every extern "C" function catches all exceptions; the lock set is released
// by an RAII guard on every path.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#include "plugin_config.h"
#include "sched_easypp.h"
#include "slurm_api.h"

namespace {

using easypp::plugin::ParsedConfig;
using easypp::plugin::PluginConfig;

struct State {
  std::mutex mu;  // guards config (read by the agent, written on reload)
  PluginConfig config;
  std::atomic<bool> reload{false};
  std::atomic<std::int64_t> interval_usec{10 * 1000000LL};
  std::uint64_t cycles = 0;  // agent thread only
};

State* g_state = nullptr;  // created in init, deleted in fini (agent stopped)

// Holds slurmctld's scheduling lock set for its lifetime.
class SchedLocks {
 public:
  SchedLocks() { easypp_slurm_lock(); }
  ~SchedLocks() { easypp_slurm_unlock(); }
  SchedLocks(const SchedLocks&) = delete;
  SchedLocks& operator=(const SchedLocks&) = delete;
};

// Reads slurm_conf.sched_params: the caller holds the configuration lock (or
// runs inside slurmctld's configuration read, as init() does).
PluginConfig load_config() {
  ParsedConfig parsed = easypp::plugin::parse_scheduler_parameters(slurm_conf.sched_params);
  for (const std::string& w : parsed.warnings) error("sched/easypp: %s", w.c_str());
  return parsed.config;
}

void apply_config(State& s, const PluginConfig& c) {
  std::lock_guard<std::mutex> g(s.mu);
  s.config = c;
  s.interval_usec.store(std::int64_t(c.interval) * 1000000LL);
}

}  // namespace

extern "C" int easypp_core_init(char* desc, size_t desc_len) {
  try {
    if (g_state == nullptr) g_state = new State();
    const PluginConfig c = load_config();
    apply_config(*g_state, c);
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

extern "C" int64_t easypp_core_wait_usec(void) {
  if (g_state == nullptr) return 10 * 1000000LL;
  return g_state->interval_usec.load();
}

extern "C" void easypp_core_cycle(void) {
  if (g_state == nullptr) return;
  State& s = *g_state;
  try {
    SchedLocks locks;
    if (s.reload.exchange(false)) {
      const PluginConfig c = load_config();
      std::string before;
      {
        std::lock_guard<std::mutex> g(s.mu);
        before = s.config.describe();
      }
      apply_config(s, c);
      if (c.describe() != before)
        info("sched/easypp: reconfigured (%s)", c.describe().c_str());
      else
        debug("sched/easypp: configuration reread, unchanged (%s)", c.describe().c_str());
    }
    ++s.cycles;
    if (s.cycles == 1)
      info("sched/easypp: agent running, first cycle done under the scheduling locks");
    else
      debug2("sched/easypp: cycle %llu", static_cast<unsigned long long>(s.cycles));
  } catch (const std::exception& e) {
    error("sched/easypp: cycle: %s", e.what());
  } catch (...) {
    error("sched/easypp: cycle: unknown exception");
  }
}
