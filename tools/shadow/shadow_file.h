// easypp-shadow's own state file: everything a restart needs to continue
// where it stopped (the history, every job's plan and what the shadow knows
// of it, the judged jobs, the counters). JSON, written atomically with
// mode 0600 (it names users and their jobs) through plugin_state.h's
// write_file_atomic; read back field by field, with the field named in the
// message of anything wrong. Never throws.
#pragma once

#include <jansson.h>

#include <string>

#include "shadow/shadow.h"

namespace easypp::shadow {

bool save_shadow_state(const std::string& path, const ShadowState& s, std::string* error);
/// False with *error ("FILE: field jobs[3].view.start: must be ...") when
/// the file is missing (*missing set), unreadable or wrong; *out untouched.
bool load_shadow_state(const std::string& path, ShadowState* out, std::string* error,
                       bool* missing = nullptr);

/// A JSON string of `s` (bytes outside ASCII become '?' when `s` is not
/// UTF-8: names come from the system). A new reference.
json_t* json_text(const std::string& s);

/// A record as the report and the state file spell it (a new object).
json_t* record_json(const Record& r);

}  // namespace easypp::shadow
