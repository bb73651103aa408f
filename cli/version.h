// What `warden --version` and `warden version` print: Warden's version, the CLIPS version the
// engine is built with, and the daemon protocol version. Called from main.cpp; pure.
#pragma once

#include <string>

namespace warden::cli {

std::string version_text();  // "warden 0.1.0\nCLIPS 6.30\nprotocol 1" (no trailing newline)
std::string version_json();  // {"warden":"0.1.0","clips":"6.30","protocol":"1"}

}  // namespace warden::cli
