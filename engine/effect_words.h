// Words of a command line as the effects table reads them: expansions, wrappers, URL and
// remote hosts, local sources, the program of a command string, paths the normalizer need not
// touch. Shared by the evaluation of a simple command (effects_eval.cpp) and of a tool call
// (effects_tools.cpp); internal to the engine. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace warden::effect_words {

// Holds an expansion the shell does at run time (`$`, a backtick).
bool has_expansion(std::string_view w);
// Holds an expansion or a glob character: the word's value is known only at run time.
bool has_dynamic_char(std::string_view w);
// sudo, doas, su, pkexec, runuser: a wrapper that runs its command with other privileges.
bool is_privilege_wrapper(std::string_view w);
// ASCII letters to lower case.
void lower_in_place(std::string* s);
// "scheme://…": the length of the scheme, else 0.
std::size_t url_scheme_length(std::string_view w);
// The host part of an authority or of "[user@]host[:rest]": user dropped, port or path
// dropped, IPv6 brackets kept, lower-case, one trailing dot dropped.
std::string host_of_authority(std::string_view a);
// "a.b.c.d" with four decimal parts 0-255 and no leading zeros: URL parsers keep it as is.
bool canonical_ipv4(std::string_view name);
// The host of "scheme://host[:port][/?#…]" when the host is a plain DNS name (letters,
// digits, "-", non-empty labels, a last label that is no number, which URL parsers would
// read as an IPv4 address) or a canonical dotted IPv4 address, and no userinfo precedes it: every
// URL parser reads that host the same way, lower-cased, so the full parser is not needed.
bool simple_url_host(std::string_view rest, std::string* host);
// The host a network word names: a URL's host (as libcurl reads it), or the host of
// "[user@]host[:port|:path][/path]".
std::string host_of(std::string_view w);
// A network word that names a local file: a file: URL (its path, percent-decoded) or a
// path ("/srv/repo.git", "./x", "../x", "~/x", ".", ".."), as `git clone` and `curl` read
// them. Sets *path to the path to read.
bool local_source(std::string_view w, std::string* path);
// scp/rsync: "[user@]host:path", "host::module" or "scheme://…" name a remote side.
bool looks_remote(std::string_view w);
// Basename of the first word of a command line ("/bin/sh -c x" → "sh").
std::string first_program(std::string_view w);
// True when paths::normalize would only join `w` to a clean cwd: no home prefix, no
// expansion, no empty, "." or ".." component, no trailing "/". Such words skip the general
// normalizer (the common case: "src/main.c", "/tmp/x").
bool clean_path(std::string_view w);
// "/" or an absolute clean_path.
bool clean_cwd(std::string_view cwd);

}  // namespace warden::effect_words
