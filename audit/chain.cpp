// The audit line format and its SHA-256 chain: building (seal) and reading (parse_head) the
// fixed-shape envelope without a JSON parser, and the strict UTC time stamps.
#include "audit/chain.h"

#include <charconv>
#include <cstring>
#include <stdexcept>

#include "bindings/digest.h"
#include "bindings/text.h"

namespace warden::audit {
namespace {

constexpr std::string_view kHashSuffixStart = ",\"hash\":\"";  // then 64 hex, then "}
constexpr std::size_t kHashSuffixLength = kHashSuffixStart.size() + 64 + 2;
constexpr std::string_view kSigStart = ",\"sig\":\"";  // then 128 hex, then "
constexpr std::size_t kSigSuffixLength = kSigStart.size() + 128 + 1 + kHashSuffixLength;

void append_u64(std::string& out, std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm) and back.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<std::int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

void put_digits(char* p, unsigned v, int n) {
  for (int i = n - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

bool get_digits(std::string_view s, std::size_t pos, int n, unsigned* v) {
  unsigned r = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    r = r * 10 + static_cast<unsigned>(c - '0');
  }
  *v = r;
  return true;
}

// Reads `"name":"` at *pos then a string value up to the next '"' (values in the envelope never
// hold quotes or backslashes), leaving *pos after the closing quote.
bool take_string(std::string_view line, std::size_t* pos, std::string_view member,
                 std::string_view* value, std::string* error) {
  const std::size_t p = *pos;
  if (line.substr(p, member.size()) != member) {
    *error = "expected " + std::string(member.substr(1)) + " at byte " + std::to_string(p);
    return false;
  }
  const std::size_t begin = p + member.size();
  const std::size_t end = line.find('"', begin);
  if (end == std::string_view::npos) {
    *error = "unterminated " + std::string(member.substr(1, member.size() - 3)) + " value";
    return false;
  }
  *value = line.substr(begin, end - begin);
  *pos = end + 1;
  return true;
}

}  // namespace

bool is_lower_hex(std::string_view text, std::size_t length) {
  if (text.size() != length) return false;
  // Branch-free (verify calls this twice per line): the loop vectorizes.
  bool ok = true;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    ok &= (static_cast<unsigned char>(u - '0') < 10) | (static_cast<unsigned char>(u - 'a') < 6);
  }
  return ok;
}

namespace {
// format_time into p[0..27).
void format_time_to(std::int64_t time_us, char* p) {
  std::int64_t secs = time_us / 1000000;
  std::int64_t frac = time_us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(days, &y, &m, &d);
  // "YYYY-MM-DDTHH:MM:SS.ffffffZ"; years outside 0..9999 are clamped to 4 digits' worth of
  // meaning by refusing to print them wrongly: they cannot come from a real clock.
  if (y < 0 || y > 9999) throw std::runtime_error("time outside the years 0000-9999");
  put_digits(p, static_cast<unsigned>(y), 4);
  p[4] = '-';
  put_digits(p + 5, m, 2);
  p[7] = '-';
  put_digits(p + 8, d, 2);
  p[10] = 'T';
  put_digits(p + 11, static_cast<unsigned>(rem / 3600), 2);
  p[13] = ':';
  put_digits(p + 14, static_cast<unsigned>(rem / 60 % 60), 2);
  p[16] = ':';
  put_digits(p + 17, static_cast<unsigned>(rem % 60), 2);
  p[19] = '.';
  put_digits(p + 20, static_cast<unsigned>(frac), 6);
  p[26] = 'Z';
}
}  // namespace

std::string format_time(std::int64_t time_us) {
  std::string out(27, '\0');
  format_time_to(time_us, out.data());
  return out;
}

bool parse_time(std::string_view s, std::int64_t* time_us) {
  if (s.size() != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s[19] != '.' || s[26] != 'Z') {
    return false;
  }
  unsigned y, mo, d, h, mi, se, us;
  if (!get_digits(s, 0, 4, &y) || !get_digits(s, 5, 2, &mo) || !get_digits(s, 8, 2, &d) ||
      !get_digits(s, 11, 2, &h) || !get_digits(s, 14, 2, &mi) || !get_digits(s, 17, 2, &se) ||
      !get_digits(s, 20, 6, &us)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59) {
    return false;
  }
  const std::int64_t days = days_from_civil(y, mo, d);
  *time_us = ((days * 86400 + h * 3600 + mi * 60 + se) * 1000000) + us;
  return true;
}

bool valid_daemon_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool valid_kind(std::string_view kind) {
  if (kind.empty() || kind.size() > 32 || kind[0] < 'a' || kind[0] > 'z') return false;
  for (char c : kind) {
    if (!((c >= 'a' && c <= 'z') || c == '_' || c == '-')) return false;
  }
  return true;
}

void seal_append(std::string* out, std::uint64_t seq, std::string_view prev, std::string_view kind,
                 std::int64_t time_us, std::string_view daemon, std::string_view fields,
                 char hash_out[64]) {
  std::string& line = *out;
  const std::size_t start = line.size();
  char time[27];
  format_time_to(time_us, time);
  line.reserve(start + 160 + kind.size() + daemon.size() + fields.size());
  line.append("{\"seq\":");
  append_u64(line, seq);
  line.append(",\"prev\":\"").append(prev);
  line.append("\",\"kind\":\"").append(kind);
  line.append("\",\"time\":\"").append(time, sizeof time);
  line.append("\",\"daemon\":\"").append(daemon).push_back('"');
  if (!fields.empty()) line.append(",").append(fields);
  const digest::Sha256 md = digest::sha256(std::string_view(line).substr(start));
  line.append(kHashSuffixStart);
  const std::size_t h = line.size();
  text::append_hex(line, md.data(), md.size());
  if (hash_out) std::memcpy(hash_out, line.data() + h, 64);
  line.append("\"}\n");
}

std::string seal(const Envelope& e, std::string_view fields, std::string* hash_out) {
  std::string line;
  char hash[64];
  seal_append(&line, e.seq, e.prev, e.kind, e.time_us, e.daemon, fields, hash);
  if (hash_out) hash_out->assign(hash, sizeof hash);
  return line;
}

bool parse_head(std::string_view line, Head* head, std::string* error) {
  constexpr std::string_view kOpen = "{\"seq\":";
  if (!line.starts_with(kOpen)) {
    *error = "the line does not begin with {\"seq\":";
    return false;
  }
  std::size_t pos = kOpen.size();
  const std::size_t digits_begin = pos;
  while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') ++pos;
  const std::string_view digits = line.substr(digits_begin, pos - digits_begin);
  if (digits.empty() || digits.size() > 19 || (digits.size() > 1 && digits[0] == '0')) {
    *error = "\"seq\" is not a decimal number without leading zeros";
    return false;
  }
  std::uint64_t seq = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (seq == 0) {
    *error = "\"seq\" is 0 (records count from 1)";
    return false;
  }
  Head h;
  h.seq = seq;
  if (!take_string(line, &pos, ",\"prev\":\"", &h.prev, error)) return false;
  if (!is_lower_hex(h.prev, 64)) {
    *error = "\"prev\" is not 64 lowercase hex digits";
    return false;
  }
  if (!take_string(line, &pos, ",\"kind\":\"", &h.kind, error)) return false;
  if (!valid_kind(h.kind)) {
    *error = "\"kind\" is not a kind name ([a-z][a-z_-]{0,31})";
    return false;
  }
  if (!take_string(line, &pos, ",\"time\":\"", &h.time, error)) return false;
  std::int64_t t = 0;
  if (!parse_time(h.time, &t)) {
    *error = "\"time\" is not YYYY-MM-DDTHH:MM:SS.ffffffZ";
    return false;
  }
  if (!take_string(line, &pos, ",\"daemon\":\"", &h.daemon, error)) return false;
  if (!valid_daemon_id(h.daemon)) {
    *error = "\"daemon\" is not a daemon id ([A-Za-z0-9._:-]{1,64})";
    return false;
  }
  if (line.size() < pos + kHashSuffixLength) {
    *error = "the line does not end with ,\"hash\":\"<64 hex>\"}";
    return false;
  }
  const std::size_t suffix = line.size() - kHashSuffixLength;
  if (line.substr(suffix, kHashSuffixStart.size()) != kHashSuffixStart ||
      line.substr(line.size() - 2) != "\"}") {
    *error = "the line does not end with ,\"hash\":\"<64 hex>\"}";
    return false;
  }
  h.hash = line.substr(suffix + kHashSuffixStart.size(), 64);
  if (!is_lower_hex(h.hash, 64)) {
    *error = "\"hash\" is not 64 lowercase hex digits";
    return false;
  }
  h.sealed = line.substr(0, suffix);
  if (suffix > pos) {
    if (line[pos] != ',' || suffix == pos + 1) {
      *error = "unexpected bytes after \"daemon\" at byte " + std::to_string(pos);
      return false;
    }
    h.fields = line.substr(pos + 1, suffix - pos - 1);
  } else if (suffix < pos) {
    *error = "the line does not end with ,\"hash\":\"<64 hex>\"}";
    return false;
  }
  *head = h;
  return true;
}

bool hash_matches(const Head& head) {
  const digest::Sha256 md = digest::sha256(head.sealed);
  return head.hash == text::hex(md.data(), md.size());
}

bool split_signature(std::string_view line, std::string_view* signed_bytes,
                     std::string_view* sig_hex) {
  if (line.size() < kSigSuffixLength) return false;
  const std::size_t at = line.size() - kSigSuffixLength;
  if (line.substr(at, kSigStart.size()) != kSigStart) return false;
  const std::string_view sig = line.substr(at + kSigStart.size(), 128);
  const std::size_t after = at + kSigStart.size() + 128;
  if (!is_lower_hex(sig, 128) || line[after] != '"' ||
      line.substr(after + 1, kHashSuffixStart.size()) != kHashSuffixStart) {
    return false;
  }
  *signed_bytes = line.substr(0, at);
  *sig_hex = sig;
  return true;
}

}  // namespace warden::audit
