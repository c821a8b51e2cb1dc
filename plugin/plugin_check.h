// Will slurmctld load this sched_easypp.so? Slurm's plugin loader
// (src/common/plugin.c, _verify_syms) compares a plugin's exported
// `plugin_version` with its own SLURM_VERSION_NUMBER, major, minor AND micro
// release (mask 0xffffff; only SPANK plugins are compared by major.minor),
// and refuses any other before the plugin's init() runs. So a Slurm upgrade,
// even a point release (22.05.8 -> 22.05.9), needs the plugin rebuilt against
// the new release; `easypp-ctl check` (easypp_ctl.cc) tells before the
// restart. Slurm-free (the ELF file is read directly), unit tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace easypp::plugin {

/// The `plugin_version` (a uint32_t, e.g. 0x160508 for 22.05.8) exported by
/// the Slurm plugin `so` (a 64-bit little-endian ELF shared object, as on
/// x86_64 and aarch64). False with *error (naming the file) if it cannot be
/// read, is not such an object or exports no plugin_version.
bool read_plugin_version(const std::string& so, std::uint32_t* version, std::string* error);

/// "22.05.8" for 0x160508 (Slurm's SLURM_VERSION_NUMBER layout).
std::string slurm_version_text(std::uint32_t number);

/// The first X.Y.Z in `text` ("slurm-wlm 22.05.8", "slurm 24.11.5", "22.05.9",
/// "22.05.8-1+deb12u1") as a SLURM_VERSION_NUMBER; nullopt if there is none
/// or a part is out of range.
std::optional<std::uint32_t> parse_slurm_version(std::string_view text);

/// Does slurmctld of version `slurmctld` load a plugin of version `plugin`?
/// (as _verify_syms decides: all three parts equal)
inline bool slurm_loads(std::uint32_t plugin, std::uint32_t slurmctld) {
  return (plugin & 0xffffff) == (slurmctld & 0xffffff);
}

}  // namespace easypp::plugin
