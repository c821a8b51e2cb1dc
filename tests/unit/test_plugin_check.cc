// easypp-ctl check's pieces (plugin/plugin_check.cc): Slurm's version
// numbers, the text slurmctld -V prints, Slurm's own load rule, and the ELF
// reader's refusals (the positive case, the built plugin's plugin_version,
// is in the integration tests: test_load.VersionMismatchTest).
#include <cppunit/extensions/HelperMacros.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "plugin_check.h"

using namespace easypp::plugin;

class PluginCheckTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PluginCheckTest);
  CPPUNIT_TEST(testVersionText);
  CPPUNIT_TEST(testParseVersion);
  CPPUNIT_TEST(testLoadRuleIsTheWholeRelease);
  CPPUNIT_TEST(testNotAPlugin);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testVersionText() {
    CPPUNIT_ASSERT_EQUAL(std::string("22.05.8"), slurm_version_text(0x160508));
    CPPUNIT_ASSERT_EQUAL(std::string("24.11.5"), slurm_version_text(0x180b05));
    CPPUNIT_ASSERT_EQUAL(std::string("25.05.10"), slurm_version_text(0x19050a));
  }

  void testParseVersion() {
    CPPUNIT_ASSERT(parse_slurm_version("slurm-wlm 22.05.8\n") == 0x160508u);
    CPPUNIT_ASSERT(parse_slurm_version("slurm 24.11.5") == 0x180b05u);
    CPPUNIT_ASSERT(parse_slurm_version("22.05.9") == 0x160509u);
    CPPUNIT_ASSERT(parse_slurm_version("22.05.8-1+deb12u1") == 0x160508u);
    CPPUNIT_ASSERT(parse_slurm_version("1:24.11.5-2") == 0x180b05u);  // epoch
    for (const char* bad : {"", "slurm", "22.05", "22.5.", "256.1.1", "22.05.x", "1234.1.1",
                            "v22..05.8"})
      CPPUNIT_ASSERT_MESSAGE(bad, !parse_slurm_version(bad));
    CPPUNIT_ASSERT(parse_slurm_version("22.05.8.1x2") == 0x160508u);  // the first X.Y.Z
  }

  // Slurm compares major, minor AND micro release (plugin.c, _verify_syms).
  void testLoadRuleIsTheWholeRelease() {
    CPPUNIT_ASSERT(slurm_loads(0x160508, 0x160508));
    CPPUNIT_ASSERT(!slurm_loads(0x160508, 0x160509));  // a point release
    CPPUNIT_ASSERT(!slurm_loads(0x160508, 0x180b05));
    CPPUNIT_ASSERT(slurm_loads(0x1160508, 0x160508));  // only 24 bits count
  }

  void testNotAPlugin() {
    std::uint32_t v = 7;
    std::string err;
    CPPUNIT_ASSERT(!read_plugin_version("/nonexistent/sched_easypp.so", &v, &err));
    CPPUNIT_ASSERT_MESSAGE(err, err.find("cannot open") != std::string::npos);
    const std::string path = "plugin_check_test.tmp";
    for (const std::string& bytes :
         {std::string("not an ELF file"), std::string("\x7f" "ELF\x02\x01\x01", 7),
          std::string("\x7f" "ELF", 4)}) {
      std::ofstream(path, std::ios::binary) << bytes;
      CPPUNIT_ASSERT(!read_plugin_version(path, &v, &err));
      CPPUNIT_ASSERT_MESSAGE(err, err.rfind(path + ": ", 0) == 0);
    }
    std::remove(path.c_str());
    // An ELF object, but no Slurm plugin.
    CPPUNIT_ASSERT(!read_plugin_version("/bin/true", &v, &err));
    CPPUNIT_ASSERT_MESSAGE(err, err == "/bin/true: exports no plugin_version (not a Slurm plugin?)");
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(7), v);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PluginCheckTest);
