// The daemon's names for the stable error codes. The codes themselves, with their meanings,
// live in one table, `warden::code` in engine/diagnostic.h (documented in docs/PROTOCOL.md);
// `err::` is that same namespace, so server code and tests can keep writing `err::kBusy`.
// Every error reply is built by `error_response` (server/protocol.h). Constants only.
#pragma once

#include "engine/diagnostic.h"

namespace warden::server {

namespace err = ::warden::code;

}  // namespace warden::server
