// Handles one request of one connection, free of sockets: payload text in, reply text out
// (as in Asio's http/server `request_handler`). Checks the envelope, authentication and the
// role's rights, then answers at once (auth, status, health-check, errors) or hands the work
// to the decision workers or the reloader and answers later from their thread.
// handle() runs on the I/O thread; the handler itself keeps no per-connection state.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/message.h"
#include "server/errors.h"
#include "server/roles.h"
#include "server/server_context.h"

namespace warden::server {

struct Reply {
  std::string json;    // the message (not yet framed)
  bool close = false;  // close the connection once this reply is written
  // An event on the way to the final reply (submit streams the pipeline's events): written
  // as soon as its request is the oldest unanswered one; the request stays open.
  bool partial = false;
};
using ReplyFn = std::function<void(Reply)>;

// Per-connection state the handler reads, owned by the session.
struct SessionAuth {
  std::optional<Identity> identity;  // set once authenticated (or anonymous without auth)
  bool token_checked = false;        // an auth request was answered; one per connection
  // Set by the session when the connection closes: its queued decisions are then dropped
  // unrun (DecideJob::abandoned).
  std::shared_ptr<std::atomic<bool>> closed = std::make_shared<std::atomic<bool>>(false);
  // Set when the peer is gone or has stopped sending (EOF), and when the connection closes:
  // a submit's run stops at its next step (a closed socket shows only as EOF until a write
  // fails, and a run may write nothing for a long while). Replies still go out.
  std::shared_ptr<std::atomic<bool>> hung_up = std::make_shared<std::atomic<bool>>(false);
  // The token that authenticated and the token set that accepted it: when the daemon's
  // token set is replaced (reload), the session re-checks the token against the new set.
  std::optional<TokenHash> token_hash;
  std::weak_ptr<const TokenStore> verified_by;
  // Sends a message outside any request (an approval's result reaching its requester after
  // the request ended): written after the replies already queued. Thread-safe; does nothing
  // once the connection is gone (it does not keep the session alive).
  std::function<void(std::string json)> push;
  // Asked once a token is accepted, before the connection counts as authenticated: "" admits
  // the identity, else the reason it may not hold another connection (E_TOO_MANY_CONNECTIONS,
  // the connection is closed). Unset: every identity is admitted.
  std::function<std::string(const Identity&)> admit;
};

class RequestHandler {
 public:
  explicit RequestHandler(ServerContext& context) : context_(context) {}

  // Returns the reply when it is known now. Otherwise returns nullopt and later() is called
  // exactly once with the final reply, from a worker, the reloader or a pipeline thread —
  // for submit after any number of partial replies (events), all from one thread, in order.
  std::optional<Reply> handle(std::string_view payload, SessionAuth* auth, ReplyFn later);

  // Builds the body of a `status` reply (JSON members, no braces).
  std::string status_fields() const;
  std::string confinement_fields(bool with_warning) const;

 private:
  std::optional<Reply> authenticate(const Request& request, SessionAuth* auth);
  std::optional<Reply> decide(Request& request, const Identity& identity,
                              std::shared_ptr<const std::atomic<bool>> closed, ReplyFn later);
  std::optional<Reply> reload(const Request& request, const Identity& identity, ReplyFn later);
  Reply error(const Request& request, std::string_view code, std::string_view message,
              bool close = false);

  ServerContext& context_;
};

}  // namespace warden::server
