// The MCP gateway's method tables and resource URIs (agents/mcp_methods.h).
#include "agents/mcp_methods.h"

#include <array>

#include "bindings/text.h"

namespace warden::agents::mcp {

namespace {

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& names) {
  for (std::string_view n : names)
    if (s == n) return true;
  return false;
}

// The MCP specification's client requests (2025-11-25), each given its treatment. tasks/*
// are not here: the gateway forwards tools/call without a `task` member, so no task exists
// through it.
constexpr std::array<std::string_view, 7> kPassRequests = {
    "initialize",      "ping",
    "resources/list",  "resources/templates/list",
    "prompts/list",    "resources/unsubscribe",
    "logging/setLevel"};
constexpr std::array<std::string_view, 4> kDecidedRequests = {
    "resources/read", "resources/subscribe", "prompts/get", "completion/complete"};

constexpr std::array<std::string_view, 4> kClientNotifications = {
    "notifications/initialized", "notifications/cancelled", "notifications/progress",
    "notifications/roots/list_changed"};
constexpr std::array<std::string_view, 4> kServerRequests = {
    "ping", "roots/list", "sampling/createMessage", "elicitation/create"};
constexpr std::array<std::string_view, 8> kServerNotifications = {
    "notifications/message",
    "notifications/progress",
    "notifications/cancelled",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete"};

bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

ResourceUri other(std::string why) {
  ResourceUri r;
  r.kind = ResourceUri::Kind::Other;
  r.why = std::move(why);
  return r;
}

}  // namespace

ClientMethod client_method(std::string_view method) {
  if (method == "tools/call") return ClientMethod::ToolsCall;
  if (method == "tools/list") return ClientMethod::ToolsList;
  if (one_of(method, kPassRequests)) return ClientMethod::Pass;
  if (one_of(method, kDecidedRequests)) return ClientMethod::Decide;
  return ClientMethod::Unknown;
}

bool client_notification_passes(std::string_view method) {
  return one_of(method, kClientNotifications);
}

bool server_request_passes(std::string_view method) { return one_of(method, kServerRequests); }

bool server_notification_passes(std::string_view method) {
  return one_of(method, kServerNotifications);
}

ResourceUri read_resource_uri(std::string_view uri) {
  const std::size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) return other("no URI scheme");
  const std::string_view scheme = uri.substr(0, colon);
  for (char c : scheme) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '-' || c == '.';
    if (!ok) return other("no URI scheme");
  }
  if (ascii_iequal(scheme, "http") || ascii_iequal(scheme, "https")) {
    ResourceUri r;
    r.kind = ResourceUri::Kind::Web;
    return r;
  }
  if (!ascii_iequal(scheme, "file")) return other("a " + std::string(scheme) + ": URI");

  std::string_view rest = uri.substr(colon + 1);
  for (unsigned char c : rest) {
    // URL parsers drop or keep blanks and tabs differently ("…/.env " reads .env in Node).
    if (c <= 0x20 || c == 0x7f) return other("a file: URI with a blank or control character");
    if (c == '\\') return other("a file: URI with a backslash (read as \"/\" by some parsers)");
    if (c == '?' || c == '#') return other("a file: URI with a query or fragment");
  }
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    const std::size_t slash = rest.find('/');
    const std::string_view host = rest.substr(0, slash);
    if (!host.empty() && !ascii_iequal(host, "localhost"))
      return other("a file: URI naming host \"" + std::string(host) + "\"");
    if (slash == std::string_view::npos) return other("a file: URI without a path");
    rest.remove_prefix(slash);
  }
  if (rest.empty() || rest[0] != '/') return other("a file: URI without an absolute path");

  std::string path;
  path.reserve(rest.size());
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      path += rest[i];
      continue;
    }
    const int hi = i + 2 < rest.size() ? text::hex_value(rest[i + 1]) : -1;
    const int lo = i + 2 < rest.size() ? text::hex_value(rest[i + 2]) : -1;
    if (hi < 0 || lo < 0) return other("a file: URI with a malformed %-escape");
    const auto c = static_cast<unsigned char>(hi * 16 + lo);
    // One reading only: a server that decodes and one that does not must see the same
    // directories and dot segments.
    if (c < 0x20 || c == 0x7f || c == '/' || c == '.' || c == '\\' || c == '%')
      return other("a file: URI with an escaped separator, dot, % or control character");
    path += static_cast<char>(c);
    i += 2;
  }
  ResourceUri r;
  r.kind = ResourceUri::Kind::File;
  r.path = std::move(path);
  return r;
}

std::string mcp_action(std::string_view method) {
  std::string action(method);
  for (char& c : action)
    if (c == '/') c = '.';
  return action;
}

}  // namespace warden::agents::mcp
