// base/url_coding.h: percent-encoding through libcurl.
#include "harness/base/url_coding.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using twinbench::percent_decode;
using twinbench::percent_encode;

TEST(UrlCoding, EveryByteButTheUnreservedIsEscapedInUpperCaseHex) {
  EXPECT_EQ(percent_encode(""), "");
  EXPECT_EQ(percent_encode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(percent_encode("a b/c?d=e&f+g%"), "a%20b%2Fc%3Fd%3De%26f%2Bg%25");
  EXPECT_EQ(percent_encode("feat/<img src=x>"), "feat%2F%3Cimg%20src%3Dx%3E");
  EXPECT_EQ(percent_encode(std::string("\0\xff\xc3\xa9", 4)), "%00%FF%C3%A9");
}

TEST(UrlCoding, DecodingUndoesEncodingAndLeavesAMalformedEscapeAsItIs) {
  for (const std::string text : {std::string("a b/c?d=e&f+g%"), std::string("\0\x01\xff", 3), std::string("é")})
    EXPECT_EQ(percent_decode(percent_encode(text)), text);
  EXPECT_EQ(percent_decode("bot%40ci.example"), "bot@ci.example");
  EXPECT_EQ(percent_decode("a+b"), "a+b") << "a URL's '+' is not a form's space";
  EXPECT_EQ(percent_decode("%41"), "A") << "an escape at the very end";
  EXPECT_EQ(percent_decode("%zz%4"), "%zz%4");
}

}  // namespace
