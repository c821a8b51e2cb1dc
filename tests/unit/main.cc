// CppUnit test runner. Arguments select tests by name (e.g. "PolicyTest" or
// "PolicyTest::testShadowTime"); none runs everything.
#include <cppunit/BriefTestProgressListener.h>
#include <cppunit/CompilerOutputter.h>
#include <cppunit/TestResult.h>
#include <cppunit/TestResultCollector.h>
#include <cppunit/TestRunner.h>
#include <cppunit/extensions/TestFactoryRegistry.h>

#include <iostream>

int main(int argc, char** argv) {
  CppUnit::TestResult controller;
  CppUnit::TestResultCollector result;
  controller.addListener(&result);
  CppUnit::BriefTestProgressListener progress;
  controller.addListener(&progress);

  CppUnit::TestRunner runner;
  runner.addTest(CppUnit::TestFactoryRegistry::getRegistry().makeTest());
  try {
    if (argc <= 1) {
      runner.run(controller);
    } else {
      for (int i = 1; i < argc; ++i) runner.run(controller, argv[i]);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "unknown test: " << e.what() << "\n";
    return 2;
  }
  CppUnit::CompilerOutputter out(&result, std::cerr);
  out.write();
  return result.wasSuccessful() ? 0 : 1;
}
