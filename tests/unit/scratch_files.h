// Scratch files for the unit tests of the plugin's files: a private
// directory (mkdtemp: 0700, as safe_file.h wants), removed whatever its
// modes at the end, and whole-file reads and writes.
#pragma once

#include <cppunit/extensions/HelperMacros.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace easypp::test {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/easypp_unit_files.XXXXXX";
    const char* p = mkdtemp(tmpl);
    CPPUNIT_ASSERT_MESSAGE("mkdtemp", p != nullptr);
    path = p;
  }
  ~TempDir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path + "/" + name; }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

inline void spit(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

}  // namespace easypp::test
