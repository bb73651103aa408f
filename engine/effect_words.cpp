#include "engine/effect_words.h"

#include <cctype>

#include "bindings/paths.h"
#include "bindings/text.h"
#include "bindings/urls.h"

namespace warden::effect_words {

bool has_expansion(std::string_view w) { return w.find_first_of("$`") != std::string_view::npos; }
bool has_dynamic_char(std::string_view w) {
  return w.find_first_of("$`*?[") != std::string_view::npos;
}

bool is_privilege_wrapper(std::string_view w) {
  return w == "sudo" || w == "doas" || w == "su" || w == "pkexec" || w == "runuser";
}

void lower_in_place(std::string* s) {
  for (char& c : *s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

// "scheme://…": the length of the scheme, else 0.
std::size_t url_scheme_length(std::string_view w) {
  if (w.empty() || !((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z'))) return 0;
  std::size_t i = 1;
  while (i < w.size() && (std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '+' ||
                          w[i] == '-' || w[i] == '.'))
    ++i;
  if (w.substr(i).starts_with("://")) return i;
  return 0;
}

// The host part of an authority or of "[user@]host[:rest]": user dropped, port or path
// dropped, IPv6 brackets kept, lower-case, one trailing dot dropped.
std::string host_of_authority(std::string_view a) {
  if (std::size_t at = a.rfind('@'); at != std::string_view::npos) a.remove_prefix(at + 1);
  std::string_view host;
  if (!a.empty() && a[0] == '[') {
    std::size_t close = a.find(']');
    host = close == std::string_view::npos ? a : a.substr(0, close + 1);
  } else {
    host = a.substr(0, a.find(':'));
  }
  std::string out(host);
  lower_in_place(&out);
  if (out.size() > 1 && out.back() == '.') out.pop_back();
  return out;
}

// "a.b.c.d" with four decimal parts 0-255 and no leading zeros: URL parsers keep it as is.
bool canonical_ipv4(std::string_view name) {
  int parts = 0;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    int value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
    ++parts;
    start = end + 1;
  }
  return parts == 4;
}

// The host of "scheme://host[:port][/?#…]" when the host is a plain DNS name (letters,
// digits, "-", non-empty labels, a last label that is no number, which URL parsers would
// read as an IPv4 address) or a canonical dotted IPv4 address, and no userinfo precedes it: every
// URL parser reads that host the same way, lower-cased, so the full parser is not needed.
bool simple_url_host(std::string_view rest, std::string* host) {
  std::size_t end = 0;
  std::size_t label_start = 0;
  while (end < rest.size()) {
    const char c = rest[end];
    if (c == '.') {
      if (end == label_start) return false;
      label_start = end + 1;
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
      break;
    }
    ++end;
  }
  if (end == 0) return false;
  std::string_view name = rest.substr(0, end);
  std::string_view after = rest.substr(end);
  if (!after.empty() && after[0] == ':') {
    std::size_t k = 1;
    while (k < after.size() && after[k] >= '0' && after[k] <= '9') ++k;
    if (k == 1) return false;
    after.remove_prefix(k);
  }
  if (!after.empty() && after[0] != '/' && after[0] != '?' && after[0] != '#') return false;
  if (name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.back() == '.') return false;
  std::string_view last =
      name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  const bool digits = last.find_first_not_of("0123456789") == std::string_view::npos;
  const bool hex = last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
                   last.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos;
  if (hex) return false;
  if (digits && !canonical_ipv4(name)) return false;
  host->assign(name);
  lower_in_place(host);
  return true;
}

// The host a network word names: a URL's host (as libcurl reads it), or the host of
// "[user@]host[:port|:path][/path]".
std::string host_of(std::string_view w) {
  if (std::size_t scheme = url_scheme_length(w); scheme != 0) {
    if (std::string host; simple_url_host(w.substr(scheme + 3), &host)) return host;
    urls::Url u = urls::parse(w);
    if (u.valid) return u.host;
    std::string_view rest = w.substr(scheme + 3);
    return host_of_authority(rest.substr(0, rest.find_first_of("/?#\\")));
  }
  // user@host:path: the first ":" or "/" after the user ends the host.
  std::string_view a = w;
  std::size_t at = a.find('@');
  std::size_t slash = a.find('/');
  if (at != std::string_view::npos && (slash == std::string_view::npos || at < slash))
    a.remove_prefix(at + 1);
  if (!a.empty() && a[0] == '[') return host_of_authority(a);
  return host_of_authority(a.substr(0, a.find_first_of(":/")));
}

// A network word that names a local file: a file: URL (its path, percent-decoded) or a
// path ("/srv/repo.git", "./x", "../x", "~/x", ".", ".."), as `git clone` and `curl` read
// them. Sets *path to the path to read.
bool local_source(std::string_view w, std::string* path) {
  if (std::size_t scheme = url_scheme_length(w); scheme == 4) {
    std::string_view s = w.substr(0, 4);
    if (!((s[0] | 0x20) == 'f' && (s[1] | 0x20) == 'i' && (s[2] | 0x20) == 'l' &&
          (s[3] | 0x20) == 'e'))
      return false;
    std::string_view rest = w.substr(7);
    std::size_t slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    rest = rest.substr(0, rest.find_first_of("?#"));
    *path = text::percent_decode(rest);
    return true;
  }
  if (w == "." || w == ".." || w.starts_with("/") || w.starts_with("./") || w.starts_with("../") ||
      w.starts_with("~/") || w == "~") {
    path->assign(w);
    return true;
  }
  return false;
}

// scp/rsync: "[user@]host:path", "host::module" or "scheme://…" name a remote side.
bool looks_remote(std::string_view w) {
  if (url_scheme_length(w) != 0) return true;
  if (!w.empty() && w[0] == '[') {
    std::size_t close = w.find(']');
    return close != std::string_view::npos && close + 1 < w.size() && w[close + 1] == ':';
  }
  std::size_t colon = w.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::size_t slash = w.find('/');
  if (slash != std::string_view::npos && slash < colon) return false;
  std::string_view host = w.substr(0, colon);
  if (std::size_t at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  return !host.empty();
}

// Basename of the first word of a command line ("/bin/sh -c x" → "sh").
std::string first_program(std::string_view w) {
  std::size_t b = w.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return std::string();
  w.remove_prefix(b);
  w = w.substr(0, w.find_first_of(" \t\n"));
  if (std::size_t slash = w.rfind('/'); slash != std::string_view::npos && slash + 1 < w.size()) {
    w.remove_prefix(slash + 1);
  }
  return std::string(w);
}

// True when paths::normalize would only join `w` to a clean cwd: no home prefix, no
// expansion, no empty, "." or ".." component, no trailing "/". Such words skip the general
// normalizer (the common case: "src/main.c", "/tmp/x").
bool clean_path(std::string_view w) {
  if (w.empty() || w[0] == '~' || w.back() == '/') return false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= w.size(); ++i) {
    if (i == w.size() || w[i] == '/') {
      const std::size_t len = i - start;
      if (len == 0 && i != 0) return false;
      if (len == 1 && w[start] == '.') return false;
      if (len == 2 && w[start] == '.' && w[start + 1] == '.') return false;
      start = i + 1;
    } else if (w[i] == '$' || w[i] == '`' || w[i] == '\0') {
      return false;
    }
  }
  return true;
}

bool clean_cwd(std::string_view cwd) {
  return cwd == "/" || (!cwd.empty() && cwd[0] == '/' && clean_path(cwd));
}

}  // namespace warden::effect_words
