// easypp-ctl's escaping of untrusted text for a terminal (plugin/text_escape.h).
#include <cppunit/extensions/HelperMacros.h>
#include <jansson.h>

#include <cstdlib>
#include <string>

#include "text_escape.h"

using easypp::plugin::json_printable;
using easypp::plugin::printable;

class TextEscapeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(TextEscapeTest);
  CPPUNIT_TEST(testPrintableUnchanged);
  CPPUNIT_TEST(testControlCharacters);
  CPPUNIT_TEST(testInvalidUtf8);
  CPPUNIT_TEST(testEveryByteIsSafe);
  CPPUNIT_TEST(testJsonKeepsItsMeaning);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testPrintableUnchanged() {
    CPPUNIT_ASSERT_EQUAL(std::string(""), printable(""));
    CPPUNIT_ASSERT_EQUAL(std::string("alice batch_2 ~{}\\x1b"), printable("alice batch_2 ~{}\\x1b"));
    // UTF-8: 2, 3 and 4 bytes, including U+00A0 (the first after C1).
    const std::string utf8 = "caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac \xf0\x9f\x98\x80";
    CPPUNIT_ASSERT_EQUAL(utf8, printable(utf8));
  }

  void testControlCharacters() {
    CPPUNIT_ASSERT_EQUAL(std::string("a\\x1b[31mb"), printable("a\x1b[31mb"));
    CPPUNIT_ASSERT_EQUAL(std::string("\\x00\\x07\\x09\\x0a\\x0d\\x1f\\x7f"),
                         printable(std::string("\0\a\t\n\r\x1f\x7f", 7)));
    // C1 controls as UTF-8 (U+0080, U+009B CSI, U+009F): every byte shown.
    CPPUNIT_ASSERT_EQUAL(std::string("\\xc2\\x80\\xc2\\x9b6n\\xc2\\x9f"), printable("\xc2\x80\xc2\x9b" "6n\xc2\x9f"));
  }

  void testInvalidUtf8() {
    // A lone C1 byte, a truncated sequence, an overlong encoding of ESC, a
    // surrogate, a code point above U+10FFFF, a stray continuation byte.
    CPPUNIT_ASSERT_EQUAL(std::string("\\x9b"), printable("\x9b"));
    CPPUNIT_ASSERT_EQUAL(std::string("x\\xe2\\x82"), printable("x\xe2\x82"));
    CPPUNIT_ASSERT_EQUAL(std::string("\\xc0\\x9b"), printable("\xc0\x9b"));
    CPPUNIT_ASSERT_EQUAL(std::string("\\xed\\xa0\\x80"), printable("\xed\xa0\x80"));
    CPPUNIT_ASSERT_EQUAL(std::string("\\xf4\\x90\\x80\\x80"), printable("\xf4\x90\x80\x80"));
    CPPUNIT_ASSERT_EQUAL(std::string("\\x80a\\xff"), printable("\x80" "a\xff"));
  }

  void testEveryByteIsSafe() {
    // Every two-byte string: the result has no C0 control, no DEL and no
    // byte that is not ASCII unless it is part of valid UTF-8 above U+009F.
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        const std::string in{char(a), char(b)};
        const std::string out = printable(in);
        for (std::size_t i = 0; i < out.size(); ++i) {
          const unsigned char c = static_cast<unsigned char>(out[i]);
          CPPUNIT_ASSERT(c >= 0x20 && c != 0x7f);
          if (c >= 0x80) CPPUNIT_ASSERT(!(c == 0xc2 && i + 1 < out.size() &&
                                          static_cast<unsigned char>(out[i + 1]) <= 0x9f));
        }
      }
    }
  }

  void testJsonKeepsItsMeaning() {
    // Every code point below U+0100 and a few above, in a string dumped by
    // jansson as easypp-ctl does: DEL and C1 come out as \u escapes, the
    // document reads back to the same string.
    std::string all;
    for (unsigned cp = 1; cp < 0x100; ++cp) {
      if (cp < 0x80) {
        all += char(cp);
      } else {
        all += char(0xc0 | (cp >> 6));
        all += char(0x80 | (cp & 0x3f));
      }
    }
    all += "\xe2\x82\xac\xf0\x9f\x98\x80";
    json_t* j = json_pack("{s:s%}", "name", all.data(), all.size());
    CPPUNIT_ASSERT(j != nullptr);
    char* dumped = json_dumps(j, JSON_INDENT(2));
    json_decref(j);
    const std::string out = json_printable(dumped);
    std::free(dumped);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(out[i]);
      CPPUNIT_ASSERT(c >= 0x20 || c == '\n');
      CPPUNIT_ASSERT(c != 0x7f);
      if (c == 0xc2 && i + 1 < out.size()) CPPUNIT_ASSERT(static_cast<unsigned char>(out[i + 1]) > 0x9f);
    }
    CPPUNIT_ASSERT(out.find("\\u007f") != std::string::npos);
    CPPUNIT_ASSERT(out.find("\\u009b") != std::string::npos);
    CPPUNIT_ASSERT(out.find("\xc3\xa9") != std::string::npos);  // é stays readable
    json_error_t e;
    json_t* back = json_loads(out.c_str(), 0, &e);
    CPPUNIT_ASSERT_MESSAGE(e.text, back != nullptr);
    json_t* name = json_object_get(back, "name");
    CPPUNIT_ASSERT_EQUAL(all, std::string(json_string_value(name), json_string_length(name)));
    json_decref(back);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TextEscapeTest);
