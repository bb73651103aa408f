// Which MCP methods the gateway (agents/mcp_relay.h) lets through undecided, which it decides,
// and which it refuses: a closed world keyed on the exact method name (bytes compared, no case
// folding or trimming: `Tools/call` and `tools/call ` are unknown methods, refused, because a
// lenient server might still run them). Also reads the URI of resources/read and
// resources/subscribe. Pure functions over constant tables; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::agents::mcp {

// A request from the client (or a notification carrying one of these names).
enum class ClientMethod {
  Pass,       // lifecycle and listing: initialize, ping, resources/list,
              // resources/templates/list, prompts/list, resources/unsubscribe, logging/setLevel
  ToolsList,  // tools/list: passed, its result filtered
  ToolsCall,  // tools/call: decided as a `tool` call
  Decide,     // resources/read, resources/subscribe, prompts/get, completion/complete
  Unknown,    // anything else: refused (-32601), never forwarded
};
ClientMethod client_method(std::string_view method);

// Notifications the client may send: notifications/initialized, cancelled, progress,
// roots/list_changed. Any other is dropped.
bool client_notification_passes(std::string_view method);

// Requests the server may send the client: ping, roots/list, sampling/createMessage,
// elicitation/create (the client asks its user or its model; nothing runs on this machine).
// Any other is answered with -32601 and not forwarded.
bool server_request_passes(std::string_view method);

// Notifications the server may send: notifications/message, progress, cancelled,
// resources/updated, resources/list_changed, tools/list_changed, prompts/list_changed,
// elicitation/complete. Any other is dropped.
bool server_notification_passes(std::string_view method);

// What a resource URI names, as the proposal the gateway decides.
struct ResourceUri {
  enum class Kind {
    File,   // a local file: `path` (absolute, percent-decoded)
    Web,    // http: or https: (scheme compared without case): the server fetches it
    Other,  // any other scheme, or a file: URI that is not plainly a local path (a host other
            // than localhost, a query or fragment, a backslash, a blank or control character, an
            // escape that decodes to "/", ".", "\", "%" or a control character): its effect
            // is not known
  } kind = Kind::Other;
  std::string path;  // File
  std::string why;   // Other: what made it so
};
ResourceUri read_resource_uri(std::string_view uri);

// The proposal action for a decided method other than tools/call and a file or web resource:
// the method with "/" as "." ("prompts.get", "completion.complete", "resources.read").
std::string mcp_action(std::string_view method);

}  // namespace warden::agents::mcp
