// easypp-import's pieces that need no Slurm: the incremental reader of a
// slurmdb jobs document (tools/import/json_stream.*) and the normalization of
// one job record across OpenAPI versions (tools/import/acct_job.*).
//
// The job objects here are inputs to the parser (the shapes slurmrestd's
// v0.0.38 of Slurm 22.05 and v0.0.42 of Slurm 24.11 print), not stand-ins for
// slurmrestd: the integration tests read the real one.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <string>
#include <vector>

#include "import/acct_job.h"
#include "import/json_stream.h"

using easypp::import::AcctJob;
using easypp::import::JobStream;
using easypp::import::parse_job;

namespace {

struct Collected {
  std::vector<std::string> jobs;  // each job re-serialized
  JobStream stream;
  Collected()
      : stream([this](json_t* j, std::size_t, std::string*) {
          char* s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
          jobs.push_back(s);
          free(s);
          return true;
        }) {}
};

const char* kDoc =
    "{\n \"meta\": {\"plugin\": {\"type\": \"openapi\\/dbv0.0.38\"}},\n"
    " \"errors\": [],\n"
    " \"jobs\": [\n"
    "  {\"job_id\": 1, \"name\": \"a } ] { [ \\\" , tricky\", \"steps\": [[], {\"x\": [1, {}]}]},\n"
    "  {\"job_id\": 2, \"name\": \"\\u00e9\\\\\"}\n"
    " ],\n"
    " \"warnings\": [ ]\n}\n";

json_t* load(const char* text) {
  json_error_t e;
  json_t* v = json_loads(text, 0, &e);
  CPPUNIT_ASSERT_MESSAGE(e.text, v != nullptr);
  return v;
}

}  // namespace

class ImportTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ImportTest);
  CPPUNIT_TEST(testSplitsJobsWhateverTheChunks);
  CPPUNIT_TEST(testTruncatedAndMalformed);
  CPPUNIT_TEST(testNotAJobsDocument);
  CPPUNIT_TEST(testBytesThatAreNotUtf8);
  CPPUNIT_TEST(testKeptMembersAreBoundedTogether);
  CPPUNIT_TEST(testJob2205);
  CPPUNIT_TEST(testJob2411);
  CPPUNIT_TEST(testImpossibleRecordsRefused);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSplitsJobsWhateverTheChunks() {
    const std::string doc = kDoc;
    Collected whole;
    CPPUNIT_ASSERT(whole.stream.feed(doc.data(), doc.size()));
    CPPUNIT_ASSERT_MESSAGE(whole.stream.error(), whole.stream.finish());
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), whole.jobs.size());
    CPPUNIT_ASSERT(whole.jobs[0].find("a } ] { [ \\\" , tricky") != std::string::npos);
    CPPUNIT_ASSERT(json_is_array(json_object_get(whole.stream.others(), "errors")));
    CPPUNIT_ASSERT(json_object_get(whole.stream.others(), "meta") != nullptr);
    for (std::size_t chunk : {1, 2, 3, 7, 64}) {
      Collected c;
      for (std::size_t i = 0; i < doc.size(); i += chunk)
        CPPUNIT_ASSERT(c.stream.feed(doc.data() + i, std::min(chunk, doc.size() - i)));
      CPPUNIT_ASSERT(c.stream.finish());
      CPPUNIT_ASSERT(c.jobs == whole.jobs);
    }
  }

  void testTruncatedAndMalformed() {
    const std::string doc = kDoc;
    // every proper prefix is incomplete, never accepted
    for (std::size_t n = 0; n + 2 < doc.size(); n += 5) {
      Collected c;
      c.stream.feed(doc.data(), n);
      CPPUNIT_ASSERT_MESSAGE(std::to_string(n), !c.stream.finish());
      CPPUNIT_ASSERT(!c.stream.error().empty());
    }
    Collected t;
    const std::string cut = doc.substr(0, doc.find("\"job_id\": 2") + 4);
    t.stream.feed(cut.data(), cut.size());
    CPPUNIT_ASSERT(!t.stream.finish());
    CPPUNIT_ASSERT(t.stream.error().find("truncated") != std::string::npos);
    CPPUNIT_ASSERT(t.stream.error().find("inside job 2") != std::string::npos);
    CPPUNIT_ASSERT(t.stream.error().find("after 1 job") != std::string::npos);

    for (const char* bad : {"{\"jobs\": [{\"job_id\": 1,,}]}", "{\"jobs\": [1]}",
                            "[{\"job_id\": 1}]", "{\"jobs\": [{}] x}", "{\"jobs\": [{}]} {}",
                            "{\"meta\": tru, \"jobs\": []}", "{\"jobs\": [{}] \"a\": 1}"}) {
      Collected c;
      const bool ok = c.stream.feed(bad, std::strlen(bad)) && c.stream.finish();
      CPPUNIT_ASSERT_MESSAGE(bad, !ok);
    }
  }

  void testNotAJobsDocument() {
    Collected c;
    const char* d = "{\"errors\": [{\"error\": \"Nothing found\"}]}";
    CPPUNIT_ASSERT(c.stream.feed(d, std::strlen(d)));
    CPPUNIT_ASSERT(c.stream.finish());
    CPPUNIT_ASSERT(!c.stream.has_jobs_member());
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), c.jobs.size());
  }

  // A job name of any bytes (sbatch -J $'a\xff\xfeb'; Slurm 22.05 emits it
  // raw) is replaced by U+FFFD, in that job only: the rest of the document
  // and that job's other fields are read (jansson alone refuses it all).
  void testBytesThatAreNotUtf8() {
    const std::string doc =
        "{\"meta\": {\"x\": \"m\xc0\"}, \"jobs\": [{\"job_id\": 1, \"name\": \"a\xff\xfe"
        "b\"}, {\"job_id\": 2, \"name\": \"\xc3\xa9\\u00e9\"}, {\"job_id\": 3, \"name\": "
        "\"\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82\"}]}";
    json_error_t e;
    CPPUNIT_ASSERT(json_loadb(doc.data(), doc.size(), 0, &e) == nullptr);  // jansson alone
    for (std::size_t chunk : {std::size_t(1), std::size_t(3), doc.size()}) {
      Collected c;
      for (std::size_t i = 0; i < doc.size(); i += chunk)
        CPPUNIT_ASSERT(c.stream.feed(doc.data() + i, std::min(chunk, doc.size() - i)));
      CPPUNIT_ASSERT_MESSAGE(c.stream.error(), c.stream.finish());
      CPPUNIT_ASSERT_EQUAL(std::size_t(3), c.jobs.size());
      CPPUNIT_ASSERT_EQUAL(std::string("{\"job_id\":1,\"name\":\"a\xef\xbf\xbd\xef\xbf\xbd"
                                       "b\"}"), c.jobs[0]);
      // valid UTF-8 (and escapes) untouched
      CPPUNIT_ASSERT_EQUAL(std::string("{\"job_id\":2,\"name\":\"\xc3\xa9\xc3\xa9\"}"),
                           c.jobs[1]);
      // a surrogate, a code point over U+10FFFF, a truncated sequence
      CPPUNIT_ASSERT(c.jobs[2].find("\"job_id\":3") != std::string::npos);
      CPPUNIT_ASSERT_EQUAL(std::size_t(3), c.stream.repaired());  // meta, jobs 1 and 3
      const char* m = json_string_value(json_object_get(json_object_get(c.stream.others(),
                                                                         "meta"), "x"));
      CPPUNIT_ASSERT_EQUAL(std::string("m\xef\xbf\xbd"), std::string(m ? m : "(null)"));
    }
  }

  // The members other than "jobs" are kept (errors, meta): 16 members of
  // 60 MiB each held 1.15 GB. They are bounded together, each under 64 MiB.
  void testKeptMembersAreBoundedTogether() {
    Collected c;
    const std::string member(20u << 20, 'x');  // 20 MiB strings: each one fits
    const char* open = "{";
    CPPUNIT_ASSERT(c.stream.feed(open, 1));
    bool ok = true;
    int fed = 0;
    for (int i = 0; i < 5 && ok; ++i, ++fed) {
      const std::string m = (i ? ",\"m" : "\"m") + std::to_string(i) + "\": \"" + member + "\"";
      ok = c.stream.feed(m.data(), m.size());
    }
    CPPUNIT_ASSERT(!ok);
    CPPUNIT_ASSERT_EQUAL(4, fed);  // the fourth member passes 64 MiB together
    CPPUNIT_ASSERT_MESSAGE(c.stream.error(),
                           c.stream.error().find("together (at \"m3\")") != std::string::npos);
  }

  void testJob2205() {
    json_t* j = load(
        "{\"job_id\": 6, \"array\": {\"job_id\": 3, \"task_id\": 1}, \"het\": {\"job_id\": 0,"
        " \"job_offset\": null}, \"cluster\": \"c\", \"user\": \"alice\", \"group\": \"g\","
        " \"partition\": \"batch,debug\", \"name\": \"wrap\", \"state\": {\"current\":"
        " \"CANCELLED by 0\"}, \"time\": {\"elapsed\": 5, \"eligible\": 1700000000, \"end\":"
        " 1700000009, \"start\": 1700000004, \"submission\": 1700000000, \"suspended\": 0,"
        " \"limit\": 3}, \"required\": {\"CPUs\": 2, \"memory\": 0}, \"tres\": {\"allocated\":"
        " [{\"type\": \"cpu\", \"count\": 4}, {\"type\": \"energy\", \"count\": null}],"
        " \"requested\": [{\"type\": \"mem\", \"count\": 1000}]}}");
    AcctJob a;
    std::string why;
    CPPUNIT_ASSERT_MESSAGE(why, parse_job(j, &a, &why));
    json_decref(j);
    CPPUNIT_ASSERT_EQUAL(6u, a.job_id);
    CPPUNIT_ASSERT_EQUAL(3u, a.array_job_id);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(1), a.array_task_id);
    CPPUNIT_ASSERT_EQUAL(0u, a.het_job_id);
    CPPUNIT_ASSERT_EQUAL(std::string("batch"), a.partition);
    CPPUNIT_ASSERT_EQUAL(std::string("CANCELLED"), a.state);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(5), a.elapsed);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(3), a.limit_min);
    CPPUNIT_ASSERT(!a.unlimited);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(4), a.alloc_cpus);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(2), a.req_cpus);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(1000), a.req_mem_mb);

    json_t* u = load("{\"job_id\": 7, \"het\": {\"job_id\": 6, \"job_offset\": 1},"
                     " \"association\": {\"user\": \"bob\"}, \"state\": {\"current\":"
                     " \"COMPLETED\"}, \"time\": {\"submission\": 1, \"limit\": null}}");
    CPPUNIT_ASSERT(parse_job(u, &a, &why));
    json_decref(u);
    CPPUNIT_ASSERT(a.unlimited);
    CPPUNIT_ASSERT(a.het_component());
    CPPUNIT_ASSERT_EQUAL(std::string("bob"), a.user);
  }

  void testJob2411() {
    json_t* j = load(
        "{\"job_id\": 42, \"array\": {\"job_id\": 40, \"task_id\": {\"set\": true,"
        " \"infinite\": false, \"number\": 2}}, \"het\": {\"job_id\": 42, \"job_offset\":"
        " {\"set\": true, \"infinite\": false, \"number\": 0}}, \"user\": \"carol\","
        " \"state\": {\"current\": [\"TIMEOUT\"], \"reason\": \"None\"}, \"time\":"
        " {\"elapsed\": 600, \"eligible\": 1700000000, \"end\": 1700000700, \"start\":"
        " 1700000100, \"submission\": 1700000000, \"suspended\": 0, \"limit\": {\"set\":"
        " true, \"infinite\": false, \"number\": 10}}, \"required\": {\"CPUs\": 8},"
        " \"tres\": {\"allocated\": [{\"type\": \"cpu\", \"count\": 8}]}}");
    AcctJob a;
    std::string why;
    CPPUNIT_ASSERT_MESSAGE(why, parse_job(j, &a, &why));
    json_decref(j);
    CPPUNIT_ASSERT_EQUAL(std::string("TIMEOUT"), a.state);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(2), a.array_task_id);
    CPPUNIT_ASSERT(!a.het_component());  // the leader
    CPPUNIT_ASSERT_EQUAL(std::int64_t(10), a.limit_min);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(8), a.alloc_cpus);

    json_t* inf = load("{\"job_id\": 43, \"state\": {\"current\": [\"PENDING\", \"REQUEUED\"]},"
                       " \"time\": {\"submission\": 5, \"limit\": {\"set\": false,"
                       " \"infinite\": true, \"number\": 0}}}");
    CPPUNIT_ASSERT(parse_job(inf, &a, &why));
    json_decref(inf);
    CPPUNIT_ASSERT(a.unlimited);
    CPPUNIT_ASSERT_EQUAL(std::string("REQUEUED"), a.state);
  }

  void testImpossibleRecordsRefused() {
    const char* bad[] = {
        "{\"time\": {\"submission\": 1}}",                                // no job id
        "{\"job_id\": -4, \"time\": {\"submission\": 1}}",
        "{\"job_id\": 1}",                                                // no time
        "{\"job_id\": 1, \"time\": {\"submission\": 0}}",                 // no submit
        "{\"job_id\": 1, \"time\": {\"submission\": 99999999999999999}}",  // absurd
        "{\"job_id\": 1, \"time\": {\"submission\": 1, \"start\": 100, \"end\": 50}}",
        "{\"job_id\": 1, \"time\": {\"submission\": 1, \"start\": \"soon\"}}",
        "{\"job_id\": 1, \"time\": {\"submission\": 1, \"limit\": -5}}",
    };
    for (const char* b : bad) {
      json_t* j = load(b);
      AcctJob a;
      std::string why;
      CPPUNIT_ASSERT_MESSAGE(b, !parse_job(j, &a, &why));
      CPPUNIT_ASSERT_MESSAGE(b, !why.empty());
      json_decref(j);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ImportTest);
