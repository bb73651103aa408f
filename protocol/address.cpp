// Daemon addresses and the clients' defaults (protocol/address.h).
#include "protocol/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <filesystem>

namespace warden::protocol {

bool split_host_port(std::string_view address, std::string* host, std::uint16_t* port) {
  std::string_view h;
  std::string_view p;
  if (!address.empty() && address.front() == '[') {
    std::size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return false;
    }
    h = address.substr(1, close - 1);
    p = address.substr(close + 2);
  } else {
    std::size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return false;
    h = address.substr(0, colon);
    p = address.substr(colon + 1);
    if (h.find(':') != std::string_view::npos) return false;  // bare IPv6 needs brackets
  }
  if (h.empty() || p.empty() || p.size() > 5) return false;
  unsigned value = 0;
  for (char ch : p) {
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + static_cast<unsigned>(ch - '0');
  }
  if (value > 65535) return false;
  *host = std::string(h);
  *port = static_cast<std::uint16_t>(value);
  return true;
}

bool is_loopback_ip(std::string_view ip) {
  std::string text(ip);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::string default_state_dir() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg == '/') return (std::filesystem::path(xdg) / "warden").string();
  if (home && *home == '/') {
    return (std::filesystem::path(home) / ".local" / "state" / "warden").string();
  }
  return "";
}

std::string default_socket_path() {
  const std::string dir = default_state_dir();
  return dir.empty() ? dir : (std::filesystem::path(dir) / "warden.sock").string();
}

}  // namespace warden::protocol
