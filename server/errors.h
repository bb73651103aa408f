// The daemon's names for the protocol. The stable error codes, with their meanings, live in
// one table, `warden::code` in engine/diagnostic.h (documented in docs/PROTOCOL.md); `err::`
// is that same namespace, so server code and tests can keep writing `err::kBusy`. The wire
// pieces the daemon shares with its clients (frames, messages, JSON text: protocol/) are
// named in warden::server as they are in warden::protocol. Every error reply is built by
// `error_response` (protocol/message.h). Names only.
#pragma once

#include "engine/diagnostic.h"

namespace warden::protocol {}

namespace warden::server {

namespace err = ::warden::code;
using namespace ::warden::protocol;

}  // namespace warden::server
