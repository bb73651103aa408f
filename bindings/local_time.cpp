// Local time through Howard Hinnant's date/tz library (the proposal that became C++20's
// <chrono> time zones, which this standard library does not have yet), built by Debian to
// read the system tz database (/usr/share/zoneinfo). Its database is loaded once and each
// zone's rules on first use, both under the library's own once-flags: safe from every
// decision thread.
#include "bindings/local_time.h"

#include <date/date.h>
#include <date/tz.h>

#include <chrono>
#include <cstdio>
#include <exception>

namespace warden::local_time {
namespace {

using std::chrono::seconds;
using sys_seconds = std::chrono::time_point<std::chrono::system_clock, seconds>;

// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the years a date's four digits can show.
constexpr std::int64_t kFirstSecond = -62135596800;
constexpr std::int64_t kLastSecond = 253402300799;

const date::time_zone* find_zone(std::string_view zone, std::string* error) {
  if (zone == "localtime") {
    *error =
        "time zone \"localtime\" is this machine's own zone: name the zone (\"Europe/Berlin\", "
        "\"UTC\")";
    return nullptr;
  }
  // The database's names are ASCII letters, digits and "/_-+"; anything else is not one of
  // them, and is reported without being looked up.
  bool plain = !zone.empty() && zone.size() <= 64;
  for (char c : zone)
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '/' || c == '_' || c == '-' || c == '+');
  try {
    if (plain) return date::locate_zone(zone);
  } catch (const std::exception&) {
    // not in the database
  }
  std::string shown(zone.substr(0, 64));
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\' ||
        static_cast<unsigned char>(c) >= 0x7f)
      c = '?';
  *error =
      "unknown time zone \"" + shown + "\" (an IANA name such as \"Europe/Berlin\" or \"UTC\")";
  return nullptr;
}

bool digits(std::string_view s, std::size_t at, std::size_t n, unsigned* out) {
  if (at + n > s.size()) return false;
  unsigned v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string zone_error(std::string_view zone) {
  std::string error;
  find_zone(zone, &error);
  return error;
}

std::optional<Fields> in_zone(std::string_view zone, std::int64_t secs, std::string* error) {
  const date::time_zone* tz = find_zone(zone, error);
  if (!tz) return std::nullopt;
  if (secs < kFirstSecond || secs > kLastSecond) {
    *error = "time " + std::to_string(secs) + " is outside the years 1 to 9999";
    return std::nullopt;
  }
  try {
    const sys_seconds at{seconds{secs}};
    const auto local = tz->to_local(at);
    const auto day = date::floor<date::days>(local);
    const date::year_month_day ymd{day};
    const date::hh_mm_ss<seconds> hms{local - day};
    Fields f;
    f.year = static_cast<int>(ymd.year());
    f.month = static_cast<unsigned>(ymd.month());
    f.day = static_cast<unsigned>(ymd.day());
    f.hour = static_cast<unsigned>(hms.hours().count());
    f.minute = static_cast<unsigned>(hms.minutes().count());
    f.second = static_cast<unsigned>(hms.seconds().count());
    f.weekday = date::weekday{day}.c_encoding();
    return f;
  } catch (const std::exception& e) {
    *error = std::string("time zone \"") + std::string(zone) + "\": " + e.what();
    return std::nullopt;
  }
}

std::string_view weekday_name(unsigned weekday) {
  static constexpr std::string_view kNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  return kNames[weekday % 7];
}

std::string date_text(const Fields& f) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02u", f.year, f.month, f.day);
  return buffer;
}

std::optional<std::int64_t> parse_rfc3339(std::string_view s, std::string* error) {
  auto bad = [&](const std::string& why) {
    *error = why;
    return std::nullopt;
  };
  const std::string_view kForm =
      " (RFC 3339 with an offset, such as 2026-03-29T01:30:00+01:00 or 2026-03-29T00:30:00Z)";
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(s, 0, 4, &year) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, &month) ||
      s[7] != '-' || !digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !digits(s, 11, 2, &hour) || s[13] != ':' || !digits(s, 14, 2, &minute) || s[16] != ':' ||
      !digits(s, 17, 2, &second))
    return bad("not a date and time" + std::string(kForm));
  std::size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    std::size_t first = ++at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == first) return bad("a '.' without digits of a second" + std::string(kForm));
  }
  if (at >= s.size()) return bad("no offset: add Z or +HH:MM" + std::string(kForm));
  int offset = 0;  // seconds east of UTC
  if (s[at] == 'Z' || s[at] == 'z') {
    ++at;
  } else if (s[at] == '+' || s[at] == '-') {
    unsigned oh = 0, om = 0;
    if (!digits(s, at + 1, 2, &oh) || at + 3 >= s.size() || s[at + 3] != ':' ||
        !digits(s, at + 4, 2, &om))
      return bad("the offset must be Z or +HH:MM / -HH:MM" + std::string(kForm));
    if (oh > 23 || om > 59) return bad("the offset is out of range");
    offset = (s[at] == '-' ? -1 : 1) * static_cast<int>(oh * 3600 + om * 60);
    at += 6;
  } else {
    return bad("the offset must be Z or +HH:MM / -HH:MM" + std::string(kForm));
  }
  if (at != s.size()) return bad("text after the offset" + std::string(kForm));
  const date::year_month_day ymd{date::year{static_cast<int>(year)}, date::month{month},
                                 date::day{day}};
  if (!ymd.ok() || year == 0) return bad("no such date");
  if (hour > 23 || minute > 59) return bad("no such time of day");
  if (second > 59) return bad("seconds must be 00 to 59 (a leap second cannot be given)");
  const std::int64_t days = date::sys_days{ymd}.time_since_epoch().count();
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

std::string format_utc(std::int64_t secs) {
  const std::int64_t day_count = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  const std::int64_t rest = secs - day_count * 86400;
  const date::year_month_day ymd{date::sys_days{date::days{day_count}}};
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(rest / 3600),
                static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
  return buffer;
}

}  // namespace warden::local_time
