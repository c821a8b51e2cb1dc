// Where the archive's logs are: $WORKLOADS, else ../shared/workloads beside
// the repository. The logs are never copied into the repository.
#pragma once

#include <cstdlib>
#include <string>
#include <sys/stat.h>

#ifndef WORKLOADS_DIR
#define WORKLOADS_DIR "../shared/workloads"
#endif

namespace easypp::testing {

inline std::string workload_path(const std::string& name) {
  const char* env = std::getenv("WORKLOADS");
  return std::string(env && *env ? env : WORKLOADS_DIR) + "/" + name;
}

inline bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace easypp::testing
