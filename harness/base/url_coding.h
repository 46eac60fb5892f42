// Percent-encoding (RFC 3986), through libcurl: the one encoder of the
// server's links, the secrets' URL-encoded forms and the one decoder of a
// notification target's URL. (The server's own request parser,
// cli/serve/target.cpp, decodes strictly: a malformed escape or a control
// byte is a 400 there, which no library decoder refuses.)
#pragma once

#include <string>
#include <string_view>

namespace twinbench {

// Every byte but the unreserved ones (A-Z a-z 0-9 - . _ ~) as %XX.
std::string percent_encode(std::string_view text);
// %XX escapes decoded ('+' stays '+': a URL's user or query value, not a
// form); an escape that is not two hex digits stays as it is.
std::string percent_decode(std::string_view text);

}  // namespace twinbench
