#include "cli/version.h"

#include "engine/json_writer.h"
#include "protocol/message.h"
// Last: the CLIPS headers define macros that clash with RapidJSON's names.
#include "bindings/clips.h"

#ifndef WARDEN_VERSION
#error "WARDEN_VERSION is defined by cli/CMakeLists.txt"
#endif

namespace warden::cli {

std::string version_text() {
  return std::string("warden ") + WARDEN_VERSION + "\nCLIPS " + VERSION_STRING + "\nprotocol " +
         protocol::kProtocolVersion;
}

std::string version_json() {
  return "{\"warden\":" + json_string(WARDEN_VERSION) +
         ",\"clips\":" + json_string(VERSION_STRING) +
         ",\"protocol\":" + json_string(protocol::kProtocolVersion) + "}";
}

}  // namespace warden::cli
