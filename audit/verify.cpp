#include "audit/verify.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <thread>

#include "audit/chain.h"

namespace warden::audit {

std::string_view finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::Edited:
      return "edited";
    case FindingKind::Deleted:
      return "deleted";
    case FindingKind::Reordered:
      return "reordered";
    case FindingKind::Truncated:
      return "truncated";
    case FindingKind::Torn:
      return "torn";
    case FindingKind::BadSignature:
      return "bad-signature";
    case FindingKind::MissingCheckpoint:
      return "missing-checkpoint";
    case FindingKind::Malformed:
      return "malformed";
    case FindingKind::Unreadable:
      return "unreadable";
  }
  return "malformed";
}

namespace {

// A checkpoint may follow up to this many records beyond every_records: the writer counts
// decisions, and a stop or rotate record can come between the count and its checkpoint.
constexpr std::uint64_t kRecordSlack = 2;

enum class LineState : std::uint8_t { Record, Torn, Malformed };
enum class Signature : std::int8_t { NotChecked, Valid, Invalid, OtherKey, Missing };
enum class Kind : std::uint8_t { Other, Decision, Checkpoint, Start, Rotate };

// What the hashing threads learn about one line: all the linking pass needs, so that pass
// does not touch the mapped file again (except for the rare checkpoint and rotate fields).
struct LineInfo {
  std::uint64_t seq = 0;  // also set (when readable) for torn and malformed lines
  std::uint64_t line = 0;
  std::int64_t time_us = 0;
  // The line and its FIELDS may be longer than 4 GiB: their sizes are 64-bit. prev_at,
  // fields_at and daemon_at lie in the envelope (parse_head bounds it to a few hundred bytes).
  std::uint64_t size = 0;  // bytes of the line without '\n'
  std::uint64_t fields_size = 0;
  const char* text = nullptr;
  std::uint32_t file = 0;
  std::uint16_t prev_at = 0, fields_at = 0, daemon_at = 0;
  std::uint8_t daemon_size = 0;  // daemon ids are 1..64 characters
  bool links_previous = false;   // a record whose prev is the hash of the record on the line before
  bool same_daemon_previous =
      false;  // a record with the daemon id of the record on the line before
  Kind kind = Kind::Other;
  LineState state = LineState::Record;
  bool hash_ok = false;
  Signature signature = Signature::NotChecked;
  std::unique_ptr<std::string> error;  // malformed: why

  // Views into the mapped file (records only).
  std::string_view prev_hex() const { return {text + prev_at, 64}; }
  std::string_view hash_hex() const { return {text + size - 66, 64}; }
  std::string_view fields() const { return {text + fields_at, fields_size}; }
  std::string_view daemon() const { return {text + daemon_at, daemon_size}; }
};

// Whether `before` and `next` are records of the same daemon id (compared while the lines are
// in cache, so that the linking pass need not read them).
bool same_daemon(const LineInfo& before, const LineInfo& next) {
  return before.state == LineState::Record && next.state == LineState::Record &&
         before.daemon() == next.daemon();
}

// Whether `next`'s prev is `before`'s hash, both records.
bool links(const LineInfo& before, const LineInfo& next) {
  return before.state == LineState::Record && next.state == LineState::Record &&
         next.prev_hex() == before.hash_hex();
}

Kind kind_of(std::string_view kind) {
  if (kind == "decision") return Kind::Decision;
  if (kind == "checkpoint") return Kind::Checkpoint;
  if (kind == "start") return Kind::Start;
  if (kind == "rotate") return Kind::Rotate;
  return Kind::Other;
}

// The value of member `name` in daemon-written FIELDS (no escapes in these values). A match
// must start the FIELDS or follow a ',' so text inside a string value never matches.
std::string_view field_raw(std::string_view fields, std::string_view name) {
  std::string key = "\"" + std::string(name) + "\":";
  for (std::size_t at = fields.find(key); at != std::string_view::npos;
       at = fields.find(key, at + 1)) {
    if (at != 0 && fields[at - 1] != ',') continue;
    std::size_t v = at + key.size();
    if (v < fields.size() && fields[v] == '"') {
      std::size_t end = fields.find('"', v + 1);
      return end == std::string_view::npos ? std::string_view() : fields.substr(v + 1, end - v - 1);
    }
    std::size_t end = v;
    while (end < fields.size() && fields[end] != ',' && fields[end] != '}') ++end;
    return fields.substr(v, end - v);
  }
  return {};
}

bool field_uint(std::string_view fields, std::string_view name, std::uint64_t* out) {
  std::string_view raw = field_raw(fields, name);
  if (raw.empty()) return false;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), *out);
  return ec == std::errc() && p == raw.data() + raw.size();
}

void inspect(std::string_view text, bool terminated, const std::vector<const VerifyKey*>& keys,
             LineInfo* info) {
  info->size = text.size();
  info->text = text.data();
  std::string_view kind;
  if (!terminated) {
    info->state = LineState::Torn;
    peek_seq_kind(text, &info->seq, &kind);
    return;
  }
  Head head;
  std::string error;
  if (!parse_head(text, &head, &error)) {
    info->state = LineState::Malformed;
    info->error = std::make_unique<std::string>(std::move(error));
    // Name the seq when the line still begins with one.
    std::string_view rest = text.substr(0, 28);
    if (rest.starts_with("{\"seq\":"))
      std::from_chars(rest.data() + 7, rest.data() + rest.size(), info->seq);
    return;
  }
  info->seq = head.seq;
  info->kind = kind_of(head.kind);
  info->prev_at = static_cast<std::uint16_t>(head.prev.data() - text.data());
  info->fields_at = static_cast<std::uint16_t>(head.fields.data() - text.data());
  info->fields_size = head.fields.size();
  info->daemon_at = static_cast<std::uint16_t>(head.daemon.data() - text.data());
  info->daemon_size = static_cast<std::uint8_t>(head.daemon.size());
  parse_time(head.time, &info->time_us);
  info->hash_ok = hash_matches(head);
  if (info->kind == Kind::Checkpoint && !keys.empty()) {
    std::string_view signed_bytes, sig;
    const std::string_view key_id = field_raw(head.fields, "key_id");
    const VerifyKey* key = nullptr;
    for (const VerifyKey* k : keys)
      if (k->key_id() == key_id) key = k;
    if (!split_signature(text, &signed_bytes, &sig)) {
      info->signature = Signature::Missing;
    } else if (!key) {
      info->signature = Signature::OtherKey;
    } else {
      info->signature = key->verify_hex(signed_bytes, sig) ? Signature::Valid : Signature::Invalid;
    }
  }
}

// The inspected lines, piece by piece, indexed as one sequence.
class LineTable {
 public:
  std::vector<std::vector<LineInfo>> pieces;
  std::vector<std::size_t> starts;  // global index of each piece's first line

  std::size_t size() const { return total_; }
  const LineInfo& operator[](std::size_t i) const {
    if (i < starts[cached_] || i >= starts[cached_] + pieces[cached_].size())
      cached_ = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), i) -
                                         starts.begin()) -
                1;
    return pieces[cached_][i - starts[cached_]];
  }
  void index() {
    starts.clear();
    total_ = 0;
    for (const auto& p : pieces) {
      starts.push_back(total_);
      total_ += p.size();
    }
  }

 private:
  std::size_t total_ = 0;
  mutable std::size_t cached_ = 0;
};

// Splits every file into pieces of about kPiece bytes ending at a line end; the threads split
// the pieces into lines and inspect them; then the lines are numbered per file and each
// piece's first line linked to the line before it.
LineTable inspect_all(const LogSet& set, const VerifyOptions& options) {
  std::vector<const VerifyKey*> keys;
  if (options.key) keys.push_back(options.key);
  for (const VerifyKey* k : options.other_keys)
    if (k) keys.push_back(k);
  constexpr std::size_t kPiece = 4 << 20;
  struct Piece {
    std::uint32_t file;
    std::string_view bytes;
  };
  std::vector<Piece> pieces;
  for (std::size_t f = 0; f < set.files().size(); ++f) {
    std::string_view rest = set.file(f);
    while (!rest.empty()) {
      std::size_t cut = rest.size() <= kPiece ? std::string_view::npos : rest.find('\n', kPiece);
      std::size_t take = cut == std::string_view::npos ? rest.size() : cut + 1;
      pieces.push_back({static_cast<std::uint32_t>(f), rest.substr(0, take)});
      rest.remove_prefix(take);
    }
  }
  LineTable table;
  table.pieces.resize(pieces.size());
  unsigned threads =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(threads, pieces.size())));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t p; (p = next.fetch_add(1)) < pieces.size();) {
      std::vector<LineInfo>& infos = table.pieces[p];
      infos.reserve(pieces[p].bytes.size() / 256 + 16);
      std::string_view rest = pieces[p].bytes;
      while (!rest.empty()) {
        std::size_t nl = rest.find('\n');
        const bool terminated = nl != std::string_view::npos;
        LineInfo& info = infos.emplace_back();
        info.file = pieces[p].file;
        info.line = infos.size();  // within the piece until numbered below
        inspect(rest.substr(0, nl), terminated, keys, &info);
        if (infos.size() > 1) {
          info.links_previous = links(infos[infos.size() - 2], info);
          info.same_daemon_previous = same_daemon(infos[infos.size() - 2], info);
        }
        rest = terminated ? rest.substr(nl + 1) : std::string_view();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<std::uint64_t> numbers(set.files().size(), 0);
  const LineInfo* before = nullptr;
  for (auto& infos : table.pieces) {
    if (infos.empty()) continue;
    const std::uint64_t offset = numbers[infos.front().file];
    for (auto& info : infos) info.line += offset;
    numbers[infos.front().file] += infos.size();
    if (before) {
      infos.front().links_previous = links(*before, infos.front());
      infos.front().same_daemon_previous = same_daemon(*before, infos.front());
    }
    before = &infos.back();
  }
  table.index();
  return table;
}

std::string range_text(std::uint64_t from, std::uint64_t to) {
  return from == to ? "seq " + std::to_string(from)
                    : "seqs " + std::to_string(from) + ".." + std::to_string(to);
}

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Links the inspected lines in order: seq continuity, prev = the previous hash, file
// boundaries, checkpoints and their cadence.
class Linker {
 public:
  Linker(const LogSet& set, const LineTable& infos, const VerifyOptions& options,
         VerifyReport* report)
      : set_(set), infos_(infos), options_(options), report_(report) {}

  void run() {
    // The last checkpoint whose signature verified (any checkpoint without a key): what comes
    // before it is signed, what follows is the unsigned tail.
    for (std::size_t i = infos_.size(); i-- > 0;) {
      if (trusted_checkpoint(infos_[i])) {
        last_trusted_index_ = i;
        have_trusted_ = true;
        break;
      }
    }
    if (!have_trusted_) enter_tail();
    for (std::size_t i = 0; i < infos_.size(); ++i) {
      if (i == 0 || infos_[i].file != infos_[i - 1].file) enter_file(i);
      const LineInfo& info = infos_[i];
      switch (info.state) {
        case LineState::Torn:
          add(FindingKind::Torn, info.seq, i,
              "the line has no '\\n' (" + std::to_string(info.size) +
                  " bytes of an interrupted write" +
                  (info.seq ? ", seq " + std::to_string(info.seq) : "") + ")");
          break;
        case LineState::Malformed:
          add(FindingKind::Malformed, info.seq, i, "not an audit record: " + *info.error);
          link_unknown_ = true;
          break;
        case LineState::Record:
          record(i);
          break;
      }
      file_last_line_[infos_[i].file] = i;
    }
    finish();
  }

 private:
  void add(FindingKind kind, std::uint64_t seq, std::size_t file, std::uint64_t line,
           std::string message) {
    ++report_->findings_total;
    if (report_->findings.size() < options_.max_findings)
      report_->findings.push_back({kind, seq, set_.files()[file], line, std::move(message)});
  }
  void add(FindingKind kind, std::uint64_t seq, std::size_t index, std::string message) {
    add(kind, seq, infos_[index].file, infos_[index].line, std::move(message));
  }

  void enter_file(std::size_t i) {
    boundary_ = i != 0;
    previous_file_checkpointed_ = false;
    if (boundary_) {
      // The file before must end with its rotation (or stop) checkpoint.
      const LineInfo& end = infos_[i - 1];
      previous_file_checkpointed_ = end.state == LineState::Record &&
                                    end.kind == Kind::Checkpoint &&
                                    (field_raw(end.fields(), "reason") == "rotate" ||
                                     field_raw(end.fields(), "reason") == "stop");
    }
  }

  void record(std::size_t i) {
    const LineInfo& info = infos_[i];
    ++report_->records;
    if (!report_->first_seq) report_->first_seq = info.seq;
    if (!info.hash_ok) {
      add(FindingKind::Edited, info.seq, i,
          "the record's bytes do not match its hash: it was changed after it was written");
      edited_.insert(info.seq);
    }
    bool adopt = true;
    if (!have_last_) {
      if (info.seq != 1 && options_.partial) {
        // The older files are gone: the first record's prev is taken as given.
      } else if (info.seq != 1) {
        add(FindingKind::Deleted, 1, i,
            "the log begins at seq " + std::to_string(info.seq) + ": " +
                range_text(1, info.seq - 1) +
                " are missing (--partial accepts a log whose older files were removed)");
      } else if (info.prev_hex() != kGenesis) {
        add(FindingKind::Edited, 1, i, "seq 1's prev is not the genesis value (64 zeros)");
      }
    } else if (link_unknown_) {
      if (info.seq <= last_seq_) {
        add(FindingKind::Reordered, info.seq, i,
            "seq " + std::to_string(info.seq) + " comes after seq " + std::to_string(last_seq_));
        adopt = false;
      }
    } else {
      const std::uint64_t expected = last_seq_ + 1;
      if (info.seq == expected) {
        const bool linked =
            last_index_ + 1 == i ? info.links_previous : links(infos_[last_index_], info);
        if (!linked && !edited_.count(last_seq_)) {
          add(FindingKind::Edited, last_seq_, last_index_,
              "record " + std::to_string(last_seq_) +
                  " was changed and its hash recomputed: the prev of seq " +
                  std::to_string(info.seq) + " (" + set_.files()[infos_[i].file] + " line " +
                  std::to_string(infos_[i].line) + ") does not match it");
          edited_.insert(last_seq_);
        }
      } else if (info.seq > expected) {
        gap(i, expected);
      } else if (!reordered_.count(info.seq)) {
        add(FindingKind::Reordered, info.seq, i,
            "seq " + std::to_string(info.seq) + " comes after seq " + std::to_string(last_seq_));
        reordered_.insert(info.seq);
        adopt = false;
      } else {
        adopt = false;
      }
    }
    if (boundary_ && !previous_file_checkpointed_ && (!have_last_ || info.seq == last_seq_ + 1)) {
      const std::size_t prev_file = infos_[i].file - 1;
      add(FindingKind::MissingCheckpoint, last_seq_, prev_file,
          infos_[file_last_line_[prev_file]].line,
          base_name(set_.files()[prev_file]) + " does not end with a rotation checkpoint");
    }
    boundary_ = false;
    if (!adopt) return;
    // A daemon's records carry its id; it changes only where another daemon starts.
    // One finding per run: the records of a spliced run all differ.
    // (The usual case, a record on the line after the last one with its daemon id, is known
    // from the hashing pass; the others compare the bytes.)
    if (info.kind == Kind::Start || !have_last_) {
      run_index_ = i;
      daemon_matches_ = true;
      daemon_reported_ = false;
    } else {
      if (!(last_index_ + 1 == i && info.same_daemon_previous))
        daemon_matches_ = info.daemon() == infos_[run_index_].daemon();
      if (!daemon_matches_ && !daemon_reported_ && !edited_.count(info.seq)) {
        add(FindingKind::Edited, info.seq, i,
            "the daemon id changes from " + std::string(infos_[run_index_].daemon()) + " to " +
                std::string(info.daemon()) +
                " without a start record: records of another daemon were spliced in, or this "
                "one was edited");
        edited_.insert(info.seq);
        daemon_reported_ = true;
      }
    }
    have_last_ = true;
    link_unknown_ = false;
    last_seq_ = info.seq;
    last_index_ = i;
    report_->last_seq = info.seq;
    if (info.kind == Kind::Checkpoint) {
      checkpoint(i);
    } else {
      if (info.kind == Kind::Start) {
        // A start's bounds count once a later valid checkpoint signs them; in the unsigned
        // tail they may only tighten the signed ones.
        if (have_trusted_ && i < last_trusted_index_) {
          signed_bounds(info.fields());
        } else {
          tighten(info.fields());
        }
        restart_clock();
        run_start_seq_ = info.seq;
      }
      cadence(i);
    }
  }

  // seq jumped from expected-1 to info.seq: records moved, deleted, or a file's tail lost.
  void gap(std::size_t i, std::uint64_t expected) {
    const LineInfo& info = infos_[i];
    for (std::size_t j = i + 1; j < infos_.size() && j <= i + 1024; ++j) {
      if (infos_[j].state == LineState::Record && infos_[j].seq >= expected &&
          infos_[j].seq < info.seq) {
        add(FindingKind::Reordered, info.seq, i,
            "seq " + std::to_string(info.seq) + " comes before seq " +
                std::to_string(infos_[j].seq) + " (" + set_.files()[infos_[j].file] + " line " +
                std::to_string(infos_[j].line) + ")");
        reordered_.insert(info.seq);
        for (std::size_t k = i + 1; k <= j; ++k)
          if (infos_[k].seq < info.seq) reordered_.insert(infos_[k].seq);
        return;
      }
    }
    const std::string missing = range_text(expected, info.seq - 1);
    // The missing records may have held a checkpoint: the cadence counts afresh from here.
    unsigned_count_ = 0;
    restart_cadence();
    if (!boundary_) {
      add(FindingKind::Deleted, expected, i,
          missing + (expected == info.seq - 1 ? " is" : " are") + " missing before seq " +
              std::to_string(info.seq));
      return;
    }
    const std::size_t prev_file = infos_[i].file - 1;
    const std::string prev_name = base_name(set_.files()[prev_file]);
    const std::uint64_t prev_last_line = infos_[file_last_line_[prev_file]].line;
    if (previous_file_checkpointed_) {
      std::string named = std::string(field_raw(info.fields(), "previous_file"));
      add(FindingKind::Deleted, expected, i,
          missing + " are missing between " + prev_name + " and this file" +
              (info.kind == Kind::Rotate && !named.empty() && named != prev_name
                   ? ": a whole rotated file is missing (this file's rotate record names " + named +
                         ")"
                   : ""));
    } else {
      add(FindingKind::Truncated, expected, prev_file, prev_last_line + 1,
          prev_name + " ends at seq " + std::to_string(last_seq_) + " (line " +
              std::to_string(prev_last_line) + ") without its rotation checkpoint: its tail, " +
              missing + ", is missing");
    }
    boundary_ = false;  // reported as part of the gap
  }

  bool trusted_checkpoint(const LineInfo& info) const {
    return info.state == LineState::Record && info.kind == Kind::Checkpoint &&
           (chain_only_ || info.signature == Signature::Valid);
  }

  // Bounds from signed bytes (a valid checkpoint, or a start a later one covers): they replace
  // the current ones, 0 turning the check off as in the writer.
  void signed_bounds(std::string_view fields) {
    std::uint64_t v = 0;
    if (field_uint(fields, "every_records", &v)) {
      record_limit_ = v && v < kNoLimit - kRecordSlack ? v + kRecordSlack : kNoLimit;
      ceiling_ = false;
    }
    if (field_uint(fields, "every_seconds", &v)) every_seconds_ = v;
  }
  // Bounds from bytes no valid signature covers: they may lower the bounds, never raise them,
  // and 0 does not turn anything off.
  void tighten(std::string_view fields) {
    std::uint64_t v = 0;
    if (field_uint(fields, "every_records", &v) && v && v < kNoLimit - kRecordSlack &&
        v + kRecordSlack < record_limit_) {
      record_limit_ = v + kRecordSlack;
      ceiling_ = false;
    }
    if (field_uint(fields, "every_seconds", &v) && v && (!every_seconds_ || v < every_seconds_))
      every_seconds_ = v;
  }
  // Past the last valid checkpoint: records no signature covers are always bounded in count,
  // by the signed every_records or else by the verifier's own ceiling.
  void enter_tail() {
    if (record_limit_ == kNoLimit) {
      record_limit_ = std::max<std::uint64_t>(options_.max_unsigned, 1);
      ceiling_ = true;
    }
  }

  void checkpoint(std::size_t i) {
    const LineInfo& info = infos_[i];
    ++report_->checkpoints;
    std::uint64_t last = 0;
    if (!field_uint(info.fields(), "last_seq", &last) || last + 1 != info.seq)
      add(FindingKind::Malformed, info.seq, i, "the checkpoint's last_seq is not seq - 1");
    switch (info.signature) {
      case Signature::Valid:
        report_->signed_through = info.seq;
        break;
      case Signature::Invalid:
        add(FindingKind::BadSignature, info.seq, i,
            "the checkpoint's signature does not verify: the records it covers (through seq " +
                std::to_string(info.seq) + ") were rewritten, or the checkpoint itself was");
        break;
      case Signature::OtherKey:
        add(FindingKind::BadSignature, info.seq, i,
            "the checkpoint is signed with key " + std::string(field_raw(info.fields(), "key_id")) +
                ", not " + report_->key_id);
        break;
      case Signature::Missing:
        add(FindingKind::BadSignature, info.seq, i, "the checkpoint has no signature");
        break;
      case Signature::NotChecked:
        break;
    }
    if (trusted_checkpoint(info)) {
      signed_bounds(info.fields());
      if (i == last_trusted_index_) enter_tail();
    } else {
      tighten(info.fields());
    }
    unsigned_count_ = 0;
    restart_cadence();
    last_checkpoint_seq_ = info.seq;
  }

  // Records between checkpoints stay within the log's bounds: every_records (+ slack) and
  // every_seconds of record time, with a grace of one interval.
  void cadence(std::size_t i) {
    const LineInfo& info = infos_[i];
    if (++unsigned_count_ == 1) {
      first_unsigned_seq_ = info.seq;
      first_unsigned_index_ = i;
    }
    ++run_count_;
    if (!time_started_) {
      run_first_time_ = info.time_us;
      time_started_ = true;
    }
    if (cadence_reported_) return;
    const std::string since = run_start_seq_ > last_checkpoint_seq_
                                  ? "the daemon's start at seq " + std::to_string(run_start_seq_)
                              : last_checkpoint_seq_
                                  ? "the checkpoint at seq " + std::to_string(last_checkpoint_seq_)
                                  : "the start of the log";
    if (run_count_ > record_limit_) {
      add(FindingKind::MissingCheckpoint, info.seq, i,
          std::to_string(run_count_) + " records since " +
              (last_checkpoint_seq_
                   ? "the checkpoint at seq " + std::to_string(last_checkpoint_seq_)
                   : std::string("the start of the log")) +
              " without a " + (have_trusted_ ? "" : "valid ") + "checkpoint (" +
              (ceiling_
                   ? "the verifier's ceiling on records no signature covers, --max-unsigned: " +
                         std::to_string(record_limit_)
                   : "the log's bound: " + std::to_string(record_limit_ - kRecordSlack)) +
              ")");
      cadence_reported_ = true;
      return;
    }
    const std::int64_t limit = 2 * static_cast<std::int64_t>(every_seconds_) * 1000000;
    if (every_seconds_ && info.time_us - run_first_time_ > limit && ++late_records_ >= 2) {
      add(FindingKind::MissingCheckpoint, info.seq, i,
          "records for " + std::to_string((info.time_us - run_first_time_) / 1000000) +
              " s since " + since + " without a checkpoint (the log's bound: every " +
              std::to_string(every_seconds_) + " s)");
      cadence_reported_ = true;
    }
  }

  // The bounds count afresh: after a checkpoint, or a gap that may have held one.
  void restart_cadence() {
    run_count_ = 0;
    restart_clock();
  }
  // The time bound counts afresh at a daemon's start: the writer's clock for checkpoints
  // restarts with it (a daemon killed before its checkpoint leaves its tail unsigned). The
  // record count does not: the writer resumes its count from the last checkpoint.
  void restart_clock() {
    run_first_time_ = 0;
    time_started_ = false;
    late_records_ = 0;
    cadence_reported_ = false;
  }

  void finish() {
    report_->unsigned_tail = unsigned_count_;
    if ((options_.require_signed_tail || options_.require_closed) && unsigned_count_ > 0)
      add(FindingKind::MissingCheckpoint, first_unsigned_seq_, first_unsigned_index_,
          std::to_string(unsigned_count_) + " records after " +
              (last_checkpoint_seq_
                   ? "the last checkpoint (seq " + std::to_string(last_checkpoint_seq_) + ")"
                   : std::string("the start of the log")) +
              " are not signed" +
              (options_.require_closed ? " (--require-closed: a stopped daemon's log ends with "
                                         "its stop checkpoint)"
                                       : ""));
    if (infos_.size() == 0) return;
    // How the log ends: a rotation checkpoint announces a next file; with require_closed,
    // only the stop checkpoint closes the log.
    const std::size_t last = infos_.size() - 1;
    const LineInfo& end = infos_[last];
    if (end.state != LineState::Record || end.kind != Kind::Checkpoint) return;
    const std::string_view reason = field_raw(end.fields(), "reason");
    const std::string name = base_name(set_.files()[end.file]);
    if (reason == "rotate" && !options_.partial) {
      add(FindingKind::Truncated, end.seq + 1, end.file, end.line + 1,
          name + " ends with a rotation checkpoint (seq " + std::to_string(end.seq) +
              "): the log continues in a file not given (seq " + std::to_string(end.seq + 1) +
              " on): it was deleted, or give the live file (--partial verifies a slice on "
              "purpose)");
    } else if (options_.require_closed && reason != "stop") {
      add(FindingKind::Truncated, end.seq + 1, end.file, end.line + 1,
          name + " ends at a checkpoint with reason " + std::string(reason) + " (seq " +
              std::to_string(end.seq) +
              "), not the daemon's stop checkpoint: records after it were cut off, or the daemon "
              "did not stop (--require-closed)");
    }
  }

  const LogSet& set_;
  const LineTable& infos_;
  const VerifyOptions& options_;
  VerifyReport* report_;

  bool have_last_ = false, link_unknown_ = false, boundary_ = false,
       previous_file_checkpointed_ = false;
  std::uint64_t last_seq_ = 0;
  std::size_t last_index_ = 0;
  std::vector<std::size_t> file_last_line_ = std::vector<std::size_t>(set_.files().size(), 0);
  std::set<std::uint64_t> edited_, reordered_;

  static constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};
  const bool chain_only_ =
      options_.key == nullptr && std::none_of(options_.other_keys.begin(),
                                              options_.other_keys.end(), [](auto* k) { return k; });
  bool have_trusted_ = false;
  std::size_t last_trusted_index_ = 0;
  std::size_t run_index_ = 0;   // the record that set the current run's daemon id (its start)
  bool daemon_matches_ = true;  // the last record adopted has the run's daemon id
  bool daemon_reported_ = false;
  std::uint64_t record_limit_ = kNoLimit;  // run_count_ above this is a missing checkpoint
  bool ceiling_ = false;                   // record_limit_ is the verifier's max_unsigned
  std::uint64_t every_seconds_ = 0;
  std::uint64_t unsigned_count_ = 0, late_records_ = 0, last_checkpoint_seq_ = 0,
                first_unsigned_seq_ = 0;
  std::size_t first_unsigned_index_ = 0;
  std::uint64_t run_count_ = 0, run_start_seq_ = 0;
  std::int64_t run_first_time_ = 0;
  bool time_started_ = false;
  bool cadence_reported_ = false;
};

void describe_keys(const VerifyOptions& options, VerifyReport* report) {
  report->chain_only = options.key == nullptr && options.other_keys.empty();
  std::vector<const VerifyKey*> keys{options.key};
  keys.insert(keys.end(), options.other_keys.begin(), options.other_keys.end());
  for (const VerifyKey* k : keys)
    if (k) report->key_id += (report->key_id.empty() ? "" : ",") + k->key_id();
}

}  // namespace

VerifyReport verify_log(const LogSet& set, const VerifyOptions& options) {
  VerifyReport report;
  report.files = set.files().size();
  report.bytes = set.total_bytes();
  describe_keys(options, &report);
  const LineTable infos = inspect_all(set, options);
  Linker(set, infos, options, &report).run();
  // Findings about an earlier line (a previous record, a previous file's tail) are found
  // one line late: put them in log order.
  std::vector<std::size_t> file_index;
  auto index_of = [&](const std::string& path) {
    return static_cast<std::size_t>(std::find(set.files().begin(), set.files().end(), path) -
                                    set.files().begin());
  };
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [&](const Finding& a, const Finding& b) {
                     std::size_t fa = index_of(a.file), fb = index_of(b.file);
                     return fa != fb ? fa < fb : a.line < b.line;
                   });
  report.ok = report.findings_total == 0;
  return report;
}

VerifyReport verify_paths(const std::vector<std::string>& paths, const VerifyOptions& options) {
  LogSet set;
  std::string error;
  const std::vector<std::string> files = expand_log_paths(paths);
  if (!LogSet::open(files, &set, &error)) {
    VerifyReport report;
    report.files = files.size();
    describe_keys(options, &report);
    report.findings_total = 1;
    std::string file;
    for (const auto& f : files)
      if (error.find(f) != std::string::npos) file = f;
    report.findings.push_back({FindingKind::Unreadable, 0, file, 0, error});
    return report;
  }
  return verify_log(set, options);
}

std::string report_to_json(const VerifyReport& r) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto finding = [&](const Finding& f) {
    w.StartObject();
    w.Key("kind");
    std::string_view kind = finding_kind_name(f.kind);
    w.String(kind.data(), static_cast<rapidjson::SizeType>(kind.size()));
    w.Key("seq");
    w.Uint64(f.seq);
    w.Key("file");
    w.String(f.file.c_str(), static_cast<rapidjson::SizeType>(f.file.size()));
    w.Key("line");
    w.Uint64(f.line);
    w.Key("message");
    w.String(f.message.c_str(), static_cast<rapidjson::SizeType>(f.message.size()));
    w.EndObject();
  };
  w.StartObject();
  w.Key("ok");
  w.Bool(r.ok);
  const std::pair<const char*, std::uint64_t> counts[] = {{"files", r.files},
                                                          {"bytes", r.bytes},
                                                          {"records", r.records},
                                                          {"checkpoints", r.checkpoints},
                                                          {"first_seq", r.first_seq},
                                                          {"last_seq", r.last_seq},
                                                          {"signed_through", r.signed_through},
                                                          {"unsigned_tail", r.unsigned_tail}};
  for (const auto& [name, value] : counts) {
    w.Key(name);
    w.Uint64(value);
  }
  w.Key("key_id");
  w.String(r.key_id.c_str(), static_cast<rapidjson::SizeType>(r.key_id.size()));
  w.Key("chain_only");
  w.Bool(r.chain_only);
  w.Key("findings_total");
  w.Uint64(r.findings_total);
  w.Key("first_bad");
  if (const Finding* f = r.first_bad()) {
    finding(*f);
  } else {
    w.Null();
  }
  w.Key("findings");
  w.StartArray();
  for (const auto& f : r.findings) finding(f);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace warden::audit
