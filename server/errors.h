// Stable error codes of the daemon protocol (docs/PROTOCOL.md). Clients and tests match on
// these codes, never on the wording of a message. Plain constants: safe from any thread.
#pragma once

namespace warden::server::err {

// Framing: the connection is closed after the error response.
inline constexpr const char* kFramePrefix = "E_FRAME_PREFIX";  // length prefix is not 6 hex digits
inline constexpr const char* kFrameTooLarge =
    "E_FRAME_TOO_LARGE";  // declared length over the limit
inline constexpr const char* kFrameTruncated = "E_FRAME_TRUNCATED";  // peer closed inside a frame
// Message level: the connection stays open (frame boundaries are intact).
inline constexpr const char* kBadJson = "E_BAD_JSON";        // not JSON, or not UTF-8
inline constexpr const char* kTooDeep = "E_TOO_DEEP";        // nesting over the limit
inline constexpr const char* kBadRequest = "E_BAD_REQUEST";  // JSON, but not a request envelope
inline constexpr const char* kUnknownAction = "E_UNKNOWN_ACTION";
inline constexpr const char* kNotImplemented =
    "E_NOT_IMPLEMENTED";  // submit, pending, approve, deny
// Authentication and authorization.
inline constexpr const char* kAuthRequired = "E_AUTH_REQUIRED";  // request before auth
inline constexpr const char* kAuthFailed = "E_AUTH_FAILED";  // unknown token (connection closed)
inline constexpr const char* kForbidden = "E_FORBIDDEN";     // role lacks the right
// The connection's token was removed (or its principal or role changed) by a reload (closed).
inline constexpr const char* kAuthRevoked = "E_AUTH_REVOKED";
// A Unix-socket peer whose uid is not in unix.allow_uids (closed).
inline constexpr const char* kPeerNotAllowed = "E_PEER_NOT_ALLOWED";
// Resources and lifecycle.
inline constexpr const char* kAuthTimeout =
    "E_AUTH_TIMEOUT";  // no auth before the deadline (closed)
inline constexpr const char* kIdleTimeout =
    "E_IDLE_TIMEOUT";  // silent past the idle timeout (closed)
inline constexpr const char* kTooManyConnections = "E_TOO_MANY_CONNECTIONS";  // (closed)
inline constexpr const char* kShuttingDown = "E_SHUTTING_DOWN";
inline constexpr const char* kReloadFailed =
    "E_RELOAD_FAILED";  // old rules kept; diagnostics attached
inline constexpr const char* kResponseTooLarge = "E_RESPONSE_TOO_LARGE";
inline constexpr const char* kInternal = "E_INTERNAL";
// Proposal errors are the engine's codes, passed through: E_INPUT_JSON, E_INPUT_SHAPE,
// E_INPUT_TOO_LARGE (engine/diagnostic.h).

}  // namespace warden::server::err
