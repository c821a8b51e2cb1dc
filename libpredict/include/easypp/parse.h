// The few value parsers every settings path of the project shares: the
// harness's knobs (--scheduler easy++:window=3), the plugin's
// SchedulerParameters (easypp_window=3) and easypp-ctl's reading of the
// status file go through these, so a value means the same everywhere.
#pragma once

#include <string>
#include <string_view>

namespace easypp {

/// A whole-string decimal integer in [lo, hi] (optional leading '-'; no
/// spaces, no '+', no exponent). False if malformed, overflowing or out of
/// range; *out is untouched then.
bool parse_int(std::string_view v, long long lo, long long hi, long long* out);

/// yes/no, on/off, true/false, 1/0 (case-insensitive). False otherwise.
bool parse_bool(std::string_view v, bool* out);

/// ASCII lower case (settings keys are matched case-insensitively, as Slurm
/// matches its own SchedulerParameters keys).
std::string ascii_lower(std::string_view s);

}  // namespace easypp
