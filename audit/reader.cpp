#include "audit/reader.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <type_traits>

#include "audit/chain.h"
#include "audit/line_scan.h"
#include "bindings/json.h"
#include "engine/decision_json.h"

namespace warden::audit {
namespace fs = std::filesystem;

namespace {

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `<stem>.<12 digits>-<12 digits><ext>`
bool is_rotated_name(std::string_view name, std::string_view stem, std::string_view ext) {
  if (name.size() != stem.size() + 1 + 12 + 1 + 12 + ext.size()) return false;
  if (name.substr(0, stem.size()) != stem || name[stem.size()] != '.') return false;
  if (name.substr(name.size() - ext.size()) != ext) return false;
  std::string_view range = name.substr(stem.size() + 1, 25);
  return is_digits(range.substr(0, 12)) && range[12] == '-' && is_digits(range.substr(13, 12));
}

}  // namespace

std::vector<std::string> log_files(const std::string& live_path) {
  fs::path live(live_path);
  const std::string stem = live.stem().string(), ext = live.extension().string();
  fs::path dir = live.parent_path();
  std::vector<std::string> rotated;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_rotated_name(name, stem, ext)) rotated.push_back((dir / name).string());
  }
  std::sort(rotated.begin(), rotated.end());
  rotated.push_back(live_path);
  return rotated;
}

std::vector<std::string> expand_log_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : paths) {
    for (auto& f : log_files(p)) {
      std::error_code ec;
      fs::path canonical = fs::weakly_canonical(f, ec);
      if (seen.insert(ec ? f : canonical.string()).second) out.push_back(f);
    }
  }
  return out;
}

bool peek_seq_kind(std::string_view line, std::uint64_t* seq, std::string_view* kind) {
  constexpr std::string_view kSeq = "{\"seq\":";
  if (line.substr(0, kSeq.size()) != kSeq) return false;
  std::size_t at = kSeq.size();
  std::uint64_t value = 0;
  const std::size_t digits_start = at;
  // At most 19 digits: every such number fits in 64 bits (no wrap-around to a small seq).
  while (at < line.size() && line[at] >= '0' && line[at] <= '9' && at - digits_start < 19) {
    value = value * 10 + static_cast<std::uint64_t>(line[at] - '0');
    ++at;
  }
  if (at == digits_start || (at < line.size() && line[at] >= '0' && line[at] <= '9')) return false;
  // ,"prev":"<64 hex>","kind":"
  constexpr std::string_view kPrev = ",\"prev\":\"", kKind = "\",\"kind\":\"";
  if (line.substr(at, kPrev.size()) != kPrev) return false;
  at += kPrev.size() + 64;
  if (at > line.size() || line.substr(at, kKind.size()) != kKind) return false;
  at += kKind.size();
  std::size_t end = line.find('"', at);
  if (end == std::string_view::npos) return false;
  *seq = value;
  *kind = line.substr(at, end - at);
  return true;
}

LogSet::LogSet(LogSet&& other) noexcept
    : paths_(std::move(other.paths_)), maps_(std::move(other.maps_)) {
  other.maps_.clear();
}
LogSet& LogSet::operator=(LogSet&& other) noexcept {
  if (this != &other) {
    release();
    paths_ = std::move(other.paths_);
    maps_ = std::move(other.maps_);
    other.maps_.clear();
  }
  return *this;
}
LogSet::~LogSet() { release(); }

void LogSet::release() {
  for (auto& m : maps_)
    if (m.size) ::munmap(const_cast<char*>(m.data), m.size);
  maps_.clear();
  paths_.clear();
}

bool LogSet::open(const std::vector<std::string>& paths, LogSet* out, std::string* error) {
  LogSet set;
  for (const auto& path : paths) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot open " + path + ": " + std::strerror(errno);
      return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      *error = "cannot read " + path + ": " +
               (S_ISREG(st.st_mode) ? std::strerror(errno) : "not a regular file");
      ::close(fd);
      return false;
    }
    Map m;
    m.size = static_cast<std::size_t>(st.st_size);
    if (m.size) {
      void* p = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        *error = "cannot map " + path + ": " + std::strerror(errno);
        ::close(fd);
        return false;
      }
      ::madvise(p, m.size, MADV_SEQUENTIAL);
      m.data = static_cast<const char*>(p);
    }
    ::close(fd);
    set.paths_.push_back(path);
    set.maps_.push_back(m);
  }
  // Order by the first record's seq.
  std::vector<std::size_t> order(set.maps_.size());
  std::vector<std::uint64_t> first(set.maps_.size(), std::numeric_limits<std::uint64_t>::max());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    std::string_view text = set.file(i);
    std::string_view kind;
    std::uint64_t seq = 0;
    if (peek_seq_kind(text.substr(0, text.find('\n')), &seq, &kind)) first[i] = seq;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return first[a] < first[b]; });
  LogSet sorted;
  for (std::size_t i : order) {
    sorted.paths_.push_back(set.paths_[i]);
    sorted.maps_.push_back(set.maps_[i]);
  }
  set.maps_.clear();  // now owned by `sorted`
  *out = std::move(sorted);
  return true;
}

std::uint64_t LogSet::total_bytes() const {
  std::uint64_t total = 0;
  for (const auto& m : maps_) total += m.size;
  return total;
}

std::vector<LogLine> LogSet::lines() const {
  std::vector<LogLine> out;
  for_each_line([&](const LogLine& l) { out.push_back(l); });
  return out;
}

namespace {

bool get_string(const rapidjson::Value& obj, const char* name, std::string* out,
                std::string* error) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) {
    *error = std::string("member \"") + name + "\" is missing or not a string";
    return false;
  }
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

bool bool_or_false(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

// One entry of a record's "effects" (an object).
EffectRecord effect_record(const rapidjson::Value& e) {
  EffectRecord effect;
  decision_json::each_effect_member(effect, [&](const char* name, auto& member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, bool>)
      member = bool_or_false(e, name);
    else
      member = warden::json::string_member(e, name);
    return true;
  });
  return effect;
}

bool parse_outcome_member(const rapidjson::Value& obj, Outcome* out, std::string* error) {
  std::string name;
  if (!get_string(obj, "outcome", &name, error)) return false;
  auto o = parse_outcome(name);
  if (!o) {
    *error = "unknown outcome \"" + name + "\"";
    return false;
  }
  *out = *o;
  return true;
}

}  // namespace

bool parse_decision(std::string_view line, DecisionRecord* out, std::string* error) {
  // rapidjson keeps string lengths in 32 bits: a longer line would be misread, so it is refused
  // before a byte of it is read.
  if (line.size() >= kMaxParsedLine) {
    *error = "the line is " + std::to_string(line.size()) +
             " bytes long, more than a record can be read with (4 GiB)";
    return false;
  }
  // In-situ parsing needs a writable, NUL-terminated copy; one buffer per thread.
  thread_local std::string buffer;
  buffer.assign(line.data(), line.size());
  // The values and the parser's stack in per-thread buffers: no allocation for a usual record.
  thread_local std::vector<char> value_space(1 << 16), stack_space(1 << 12);
  rapidjson::MemoryPoolAllocator<> values(value_space.data(), value_space.size());
  rapidjson::MemoryPoolAllocator<> stack(stack_space.data(), stack_space.size());
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>,
                             rapidjson::MemoryPoolAllocator<>>
      doc(&values, 1024, &stack);
  // The daemon's own line, read as parse_stored reads (bindings/json.h).
  if (json::parse_insitu<json::kStoredFlags>(&buffer, &doc, json::Limits::any_depth()) ||
      !doc.IsObject()) {
    *error = "not a JSON object";
    return false;
  }
  std::string kind;
  if (!get_string(doc, "kind", &kind, error)) return false;
  if (kind != "decision") {
    *error = "not a decision record (kind \"" + kind + "\")";
    return false;
  }
  DecisionRecord r;
  auto seq = doc.FindMember("seq");
  if (seq == doc.MemberEnd() || !seq->value.IsUint64()) {
    *error = "member \"seq\" is missing or not a number";
    return false;
  }
  r.seq = seq->value.GetUint64();
  std::string time;
  if (!get_string(doc, "time", &time, error)) return false;
  if (!parse_time(time, &r.time_us)) {
    *error = "member \"time\" is not a UTC time: \"" + time + "\"";
    return false;
  }
  if (!get_string(doc, "daemon", &r.daemon, error) ||
      !get_string(doc, "decision_id", &r.decision_id, error) ||
      !get_string(doc, "rules_digest", &r.rules_digest, error) ||
      !get_string(doc, "principal", &r.principal, error) ||
      !get_string(doc, "session", &r.session, error) ||
      !get_string(doc, "reason", &r.reason, error) || !parse_outcome_member(doc, &r.outcome, error))
    return false;
  r.error_code = warden::json::string_member(doc, "error_code");
  r.defaulted = bool_or_false(doc, "defaulted");
  auto input = doc.FindMember("input");
  if (input != doc.MemberEnd() && input->value.IsString()) {
    // What the client sent was not JSON: the record holds its text.
    r.proposal_json.assign(input->value.GetString(), input->value.GetStringLength());
  } else if (input != doc.MemberEnd() && input->value.IsObject()) {
    r.proposal_json = warden::json::to_text(input->value);
  } else {
    *error = "member \"input\" is missing or not an object";
    return false;
  }
  auto action = doc.FindMember("action");
  if (action != doc.MemberEnd() && action->value.IsObject())
    r.action_json = warden::json::to_text(action->value);
  auto groups = doc.FindMember("groups");
  if (groups != doc.MemberEnd() && groups->value.IsArray())
    for (const auto& g : groups->value.GetArray())
      if (g.IsString()) r.groups.emplace_back(g.GetString(), g.GetStringLength());
  auto rules = doc.FindMember("rules");
  if (rules != doc.MemberEnd() && rules->value.IsArray()) {
    for (const auto& f : rules->value.GetArray()) {
      if (!f.IsObject()) continue;
      FiredRule fired;
      fired.rule = warden::json::string_member(f, "rule");
      fired.reason = warden::json::string_member(f, "reason");
      fired.monitor = warden::json::string_member(f, "mode") == "monitor";
      if (!parse_outcome_member(f, &fired.outcome, error)) {
        *error = "rule \"" + fired.rule + "\": " + *error;
        return false;
      }
      r.rules.push_back(std::move(fired));
    }
  }
  auto effects = doc.FindMember("effects");
  if (effects != doc.MemberEnd() && effects->value.IsArray()) {
    for (const auto& e : effects->value.GetArray()) {
      if (!e.IsObject()) continue;
      r.effects.push_back(effect_record(e));
    }
  }
  auto elapsed = doc.FindMember("elapsed_us");
  if (elapsed != doc.MemberEnd() && elapsed->value.IsInt64())
    r.elapsed_us = elapsed->value.GetInt64();
  auto masks = doc.FindMember("masks");
  r.masked = masks != doc.MemberEnd() && masks->value.IsArray() && !masks->value.Empty();
  *out = std::move(r);
  return true;
}

bool read_decision_lean(std::string_view line, DecisionRecord* r) {
  std::size_t spans[12][2] = {};
  static const std::string_view names[12] = {"seq",         "kind",         "time",      "daemon",
                                             "decision_id", "rules_digest", "principal", "groups",
                                             "session",     "input",        "outcome",   "masks"};
  std::size_t effects_b = 0, effects_e = 0, error_b = 0, error_e = 0;
  unsigned seen = 0;
  bool plain_keys = true;
  bool ok = scan::for_each_member(line, 0, [&](std::string_view key, std::size_t b, std::size_t e) {
    // An escaped key ("se\u0071") is a name of its own here but "seq" to a JSON parser.
    if (key.find('\\') != std::string_view::npos) plain_keys = false;
    for (int i = 0; i < 12; ++i) {
      if (key == names[i]) {
        if (!(seen >> i & 1)) spans[i][0] = b, spans[i][1] = e;
        seen |= 1u << i;
        return;
      }
    }
    if (key == "effects" && !effects_e) effects_b = b, effects_e = e;
    if (key == "error_code" && !error_e) error_b = b, error_e = e;
  });
  if (!ok || !plain_keys || seen != 0xfff || !error_e) return false;
  std::string_view v;
  // seq
  std::string_view seq = line.substr(spans[0][0], spans[0][1] - spans[0][0]);
  if (seq.empty() || seq.size() > 19) return false;
  std::uint64_t n = 0;
  for (char c : seq) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  r->seq = n;
  if (!scan::plain_string(line, spans[1][0], spans[1][1], &v) || v != "decision") return false;
  if (!scan::plain_string(line, spans[2][0], spans[2][1], &v) || !parse_time(v, &r->time_us))
    return false;
  if (!scan::plain_string(line, spans[3][0], spans[3][1], &v)) return false;
  r->daemon.assign(v);
  if (!scan::plain_string(line, spans[4][0], spans[4][1], &v)) return false;
  r->decision_id.assign(v);
  if (!scan::plain_string(line, spans[5][0], spans[5][1], &v)) return false;
  r->rules_digest.assign(v);
  if (!scan::plain_string(line, spans[6][0], spans[6][1], &v)) return false;
  r->principal.assign(v);
  if (!scan::plain_string(line, spans[8][0], spans[8][1], &v)) return false;
  r->session.assign(v);
  if (!scan::plain_string(line, spans[10][0], spans[10][1], &v)) return false;
  auto outcome = parse_outcome(v);
  if (!outcome) return false;
  r->outcome = *outcome;
  if (!scan::plain_string(line, error_b, error_e, &v)) return false;
  r->error_code.assign(v);
  // groups: ["a","b"] with no escapes
  std::string_view groups = line.substr(spans[7][0], spans[7][1] - spans[7][0]);
  if (groups.size() < 2 || groups.front() != '[' || groups.back() != ']' ||
      groups.find('\\') != std::string_view::npos)
    return false;
  r->groups.clear();
  for (std::size_t at = 1; at + 1 < groups.size();) {
    if (groups[at] != '"') return false;
    std::size_t end = groups.find('"', at + 1);
    if (end == std::string_view::npos) return false;
    r->groups.emplace_back(groups.substr(at + 1, end - at - 1));
    at = end + 1;
    if (at < groups.size() - 1) {
      if (groups[at] != ',') return false;
      ++at;
    }
  }
  if (line[spans[9][0]] != '{') return false;
  r->proposal_json.assign(line.substr(spans[9][0], spans[9][1] - spans[9][0]));
  std::string_view masks = line.substr(spans[11][0], spans[11][1] - spans[11][0]);
  // parse_decision's reading: a non-empty array ("[ ]" is empty; a string or object is not masked).
  if (masks.empty() || masks.front() != '[') return false;
  r->masked = scan::skip_ws(masks, 1) + 1 < masks.size();
  r->effects.clear();
  if (r->outcome == Outcome::Approve && r->error_code.empty() && !r->session.empty() &&
      effects_e > effects_b + 2) {
    thread_local std::string buffer;
    buffer.assign(line.substr(effects_b, effects_e - effects_b));
    rapidjson::Document doc;  // read as parse_decision reads the line
    if (json::parse_insitu<json::kStoredFlags>(&buffer, &doc, json::Limits::any_depth()) ||
        !doc.IsArray())
      return false;
    for (const auto& e : doc.GetArray()) {
      if (!e.IsObject()) continue;
      r->effects.push_back(effect_record(e));
    }
  }
  return true;
}

}  // namespace warden::audit
