// Tests of plugin/safe_file.cc, the one way the plugin and the tools write
// files: what a planted link or file, a directory others can write to, or a
// directory of a third user does to a write (nothing but a refusal), and
// that mode and owner are set before the file appears under its name.
// The race itself, with a second process swapping names as another uid, is
// tests/cli/state-race.py.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "safe_file.h"
#include "scratch_files.h"

using namespace easypp::plugin;
using easypp::test::slurp;
using easypp::test::spit;
using easypp::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  CPPUNIT_ASSERT_EQUAL(0, lstat(path.c_str(), &st));
  return st.st_mode & 07777;
}

}  // namespace

class SafeFileTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SafeFileTest);
  CPPUNIT_TEST(testWritesExactModeAndNothingElse);
  CPPUNIT_TEST(testLinkInPlaceIsReplacedNotFollowed);
  CPPUNIT_TEST(testGroupOrWorldWritableDirectoryRefused);
  CPPUNIT_TEST(testThirdUsersDirectoryRefused);
  CPPUNIT_TEST(testOwnerSetBeforeTheFileAppears);
  CPPUNIT_TEST(testSetFileModeLeavesLinksAlone);
  CPPUNIT_TEST(testNotAFileName);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testWritesExactModeAndNothingElse() {
    TempDir d;
    const mode_t old = umask(0);
    std::string err;
    const bool a = write_file_safely(d.file("f"), "one\n", 0640, {}, &err);
    umask(old);
    CPPUNIT_ASSERT_MESSAGE(err, a);
    CPPUNIT_ASSERT_EQUAL(std::string("one\n"), slurp(d.file("f")));
    CPPUNIT_ASSERT_EQUAL(mode_t(0640), mode_of(d.file("f")));
    CPPUNIT_ASSERT_MESSAGE(err, write_file_safely(d.file("f"), "two\n", 0600, {}, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("two\n"), slurp(d.file("f")));
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_of(d.file("f")));
    // No temporary file left, and none under the old predictable name.
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), names(d.path).size());
  }

  void testLinkInPlaceIsReplacedNotFollowed() {
    TempDir d;
    spit(d.file("victim"), "precious\n");
    CPPUNIT_ASSERT_EQUAL(0, chmod(d.file("victim").c_str(), 0644));
    CPPUNIT_ASSERT_EQUAL(0, symlink(d.file("victim").c_str(), d.file("state").c_str()));
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_file_safely(d.file("state"), "new\n", 0600, {}, &err));
    // The link is gone, replaced by a regular file; its target untouched.
    struct stat st;
    CPPUNIT_ASSERT_EQUAL(0, lstat(d.file("state").c_str(), &st));
    CPPUNIT_ASSERT(S_ISREG(st.st_mode));
    CPPUNIT_ASSERT_EQUAL(std::string("new\n"), slurp(d.file("state")));
    CPPUNIT_ASSERT_EQUAL(std::string("precious\n"), slurp(d.file("victim")));
    CPPUNIT_ASSERT_EQUAL(mode_t(0644), mode_of(d.file("victim")));
  }

  void testGroupOrWorldWritableDirectoryRefused() {
    for (const mode_t m : {mode_t(0770), mode_t(0777), mode_t(01777), mode_t(0730)}) {
      TempDir d;
      spit(d.file("f"), "old\n");
      CPPUNIT_ASSERT_EQUAL(0, chmod(d.path.c_str(), m));
      std::string err;
      const bool ok = write_file_safely(d.file("f"), "new\n", 0600, {}, &err);
      std::string why;
      const bool dir_ok = private_directory(d.path, {}, &why);
      chmod(d.path.c_str(), 0700);
      CPPUNIT_ASSERT(!ok);
      CPPUNIT_ASSERT(!dir_ok);
      // The directory is named first, with its mode.
      CPPUNIT_ASSERT_MESSAGE(err, err.rfind(d.path + ": ", 0) == 0);
      CPPUNIT_ASSERT_MESSAGE(err, contains(err, "writable by others"));
      CPPUNIT_ASSERT_EQUAL(err, why);
      CPPUNIT_ASSERT_EQUAL(std::string("old\n"), slurp(d.file("f")));
      CPPUNIT_ASSERT_EQUAL(std::size_t(1), names(d.path).size());
    }
    // 0755 and 0700 are fine.
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT_EQUAL(0, chmod(d.path.c_str(), 0755));
    CPPUNIT_ASSERT_MESSAGE(err, write_file_safely(d.file("f"), "x", 0600, {}, &err));
    CPPUNIT_ASSERT_MESSAGE(err, private_directory(d.path, {}, &err));
  }

  // A directory of a user who is neither root, nor the writer, nor the one
  // the file is for: refused. Needs root to make such a directory.
  void testThirdUsersDirectoryRefused() {
    if (geteuid() != 0) return;  // (CI runs the unit tests as root)
    TempDir d;
    CPPUNIT_ASSERT_EQUAL(0, chown(d.path.c_str(), 4242, 4242));
    std::string err;
    CPPUNIT_ASSERT(!write_file_safely(d.file("f"), "x", 0600, {}, &err));
    CPPUNIT_ASSERT_MESSAGE(err, err.rfind(d.path + ": ", 0) == 0 && contains(err, "uid 4242"));
    CPPUNIT_ASSERT(!write_file_safely(d.file("f"), "x", 0600, FileOwner{true, 4343, 4343}, &err));
    // Written for the directory's owner: allowed.
    CPPUNIT_ASSERT_MESSAGE(err,
                           write_file_safely(d.file("f"), "x", 0600, FileOwner{true, 4242, 4242}, &err));
    CPPUNIT_ASSERT(names(d.path).size() == 1);
  }

  void testOwnerSetBeforeTheFileAppears() {
    if (geteuid() != 0) return;  // only root can give a file away
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err,
                           write_file_safely(d.file("f"), "x", 0600, FileOwner{true, 4242, 4343}, &err));
    struct stat st;
    CPPUNIT_ASSERT_EQUAL(0, lstat(d.file("f").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(uid_t(4242), st.st_uid);
    CPPUNIT_ASSERT_EQUAL(gid_t(4343), st.st_gid);
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_t(st.st_mode & 07777));
    // A link swapped in afterwards is never followed by a later write.
    spit(d.file("victim"), "v");
    CPPUNIT_ASSERT_EQUAL(0, chown(d.file("victim").c_str(), 4444, 4444));
    fs::remove(d.file("f"));
    CPPUNIT_ASSERT_EQUAL(0, symlink(d.file("victim").c_str(), d.file("f").c_str()));
    CPPUNIT_ASSERT_MESSAGE(err,
                           write_file_safely(d.file("f"), "y", 0600, FileOwner{true, 4242, 4343}, &err));
    CPPUNIT_ASSERT_EQUAL(0, lstat(d.file("victim").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(uid_t(4444), st.st_uid);
    CPPUNIT_ASSERT_EQUAL(std::string("v"), slurp(d.file("victim")));
  }

  void testSetFileModeLeavesLinksAlone() {
    TempDir d;
    spit(d.file("victim"), "v");
    CPPUNIT_ASSERT_EQUAL(0, chmod(d.file("victim").c_str(), 0600));
    CPPUNIT_ASSERT_EQUAL(0, symlink(d.file("victim").c_str(), d.file("l").c_str()));
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, set_file_mode(d.file("l"), 0644, &err));
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_of(d.file("victim")));
    CPPUNIT_ASSERT_MESSAGE(err, set_file_mode(d.file("victim"), 0640, &err));
    CPPUNIT_ASSERT_EQUAL(mode_t(0640), mode_of(d.file("victim")));
    CPPUNIT_ASSERT_MESSAGE(err, set_file_mode(d.file("missing"), 0640, &err));
  }

  void testNotAFileName() {
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT(!write_file_safely("", "x", 0600, {}, &err));
    CPPUNIT_ASSERT(!write_file_safely(d.path + "/", "x", 0600, {}, &err));
    CPPUNIT_ASSERT(!write_file_safely(d.file("no/such/f"), "x", 0600, {}, &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, d.file("no/such")));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SafeFileTest);
