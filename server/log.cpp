#include "server/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "bindings/text.h"
#include "protocol/json_text.h"
#include "server/errors.h"

namespace warden::server {

namespace {

// The fields of the line being logged on this thread (log_with), or null.
thread_local const LogFields* t_log_fields = nullptr;

// {"time":"2024-01-01T12:00:00.123Z","level":"info","msg":"…", then log_with's fields}
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    auto since = msg.time.time_since_epoch();
    std::time_t secs = duration_cast<seconds>(since).count();
    auto millis = duration_cast<milliseconds>(since).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(millis));
    std::string line = "{\"time\":\"";
    line += stamp;
    line += "\",\"level\":";
    auto level = spdlog::level::to_string_view(msg.level);
    append_json_string(line, std::string_view(level.data(), level.size()));
    line += ",\"msg\":";
    append_json_string(line, std::string_view(msg.payload.data(), msg.payload.size()));
    if (const LogFields* fields = t_log_fields) {
      for (const auto& [key, value] : fields->items()) {
        line += ',';
        append_json_string(line, key);
        line += ':';
        append_json_string(line, value);
      }
    }
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

// `%*` in the text pattern: log_with's fields as ` key=value`, the value made safe by
// log_text and quoted ("…", with \" and \\) when empty or holding a space, quote, = or \.
class TextFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const LogFields* fields = t_log_fields;
    if (!fields) return;
    std::string out;
    for (const auto& [key, value] : fields->items()) {
      out += ' ';
      out += key;
      out += '=';
      std::string safe = log_text(value);
      if (!safe.empty() && safe.find_first_of(" \"=\\") == std::string::npos) {
        out += safe;
        continue;
      }
      out += '"';
      for (char c : safe) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextFieldsFlag>();
  }
};

}  // namespace

namespace log_detail {

FieldsScope::FieldsScope(const LogFields* fields) : previous_(t_log_fields) {
  t_log_fields = fields;
}
FieldsScope::~FieldsScope() { t_log_fields = previous_; }

}  // namespace log_detail

// Read, never decoded (unlike text::append_json_string): C1 escaped, stray bytes as \xNN.
std::string log_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += "\\x";
          text::append_hex(out, c);
      }
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlong forms, surrogates or values past U+10FFFF).
    std::size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                    : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4
                                             : 0;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    }
    if (ok && n == 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    }
    if (ok && n == 4) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      out += "\\x";
      text::append_hex(out, c);
      ++i;
      continue;
    }
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      // C1 control (U+0080–U+009F): CSI, OSC … for terminals that read them.
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buf;
    } else {
      out.append(text.data() + i, n);
    }
    i += n;
  }
  return out;
}

Logger make_logger(const std::string& level, bool json) {
  return make_logger(level, json, std::make_shared<spdlog::sinks::stderr_sink_mt>());
}

Logger make_logger(const std::string& level, bool json, spdlog::sink_ptr sink) {
  auto logger = std::make_shared<spdlog::logger>("warden", std::move(sink));
  if (json) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    auto text = std::make_unique<spdlog::pattern_formatter>();
    text->add_flag<TextFieldsFlag>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v%*");
    logger->set_formatter(std::move(text));
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  return logger;
}

}  // namespace warden::server
