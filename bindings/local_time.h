// Local time in a named IANA time zone (the system tz database, daylight saving included),
// and RFC 3339 timestamps: what the rule functions local-weekday, local-hour, local-minute
// and local-date compute, and how test cases and `dry-run --now` give a decision its time.
// Pure functions; thread-safe (the tz database is read once, under the library's own lock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace warden::local_time {

// A moment as a wall clock in some zone shows it.
struct Fields {
  int year = 1970;
  unsigned month = 1;    // 1..12
  unsigned day = 1;      // 1..31
  unsigned hour = 0;     // 0..23
  unsigned minute = 0;   // 0..59
  unsigned second = 0;   // 0..59
  unsigned weekday = 4;  // 0 = Sunday … 6 = Saturday
};

// Why `zone` is not a time zone rules may name, or "" when it is: a name of the system tz
// database ("Europe/Berlin", "UTC", "America/New_York"), exactly as spelt there. "localtime"
// (the host's own zone, which differs between the machine that decides and the one that
// replays) is refused.
std::string zone_error(std::string_view zone);

// `seconds` since the epoch as the wall clock of `zone` shows it; nullopt (with *error) for a
// zone zone_error refuses or a moment the tz database cannot convert.
std::optional<Fields> in_zone(std::string_view zone, std::int64_t seconds, std::string* error);

// "mon" … "sun".
std::string_view weekday_name(unsigned weekday);
// "YYYY-MM-DD".
std::string date_text(const Fields& f);

// An RFC 3339 date-time with its offset ("2026-03-29T01:30:00+01:00", "2026-03-29T00:30:00Z",
// a fraction of a second allowed and dropped) as seconds since the epoch; nullopt (with
// *error) for anything else: no offset, a date that does not exist, a leap second.
std::optional<std::int64_t> parse_rfc3339(std::string_view text, std::string* error);
// Seconds since the epoch as "YYYY-MM-DDTHH:MM:SSZ".
std::string format_utc(std::int64_t seconds);

}  // namespace warden::local_time
