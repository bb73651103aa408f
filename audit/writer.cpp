// The audit log writer: resume, group commit, failure rollback, checkpoints and rotation.
#include "audit/writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <future>

#include "audit/chain.h"
#include "bindings/digest.h"

namespace warden::audit {

namespace fs = std::filesystem;

namespace {

std::int64_t system_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string errno_text(int err) { return std::strerror(err); }

// 9999-12-31T23:59:59.999999Z: the last time the line format can write.
constexpr std::int64_t kLastTimeUs = 253402300799999999;
// A rotation that failed (rename refused) is tried again this much later, not after every batch.
constexpr std::int64_t kRotateRetryUs = 60 * 1000000ll;

// A done that throws must not take the writer thread (and every later record) down with it.
void call_done(const Writer::Done& done, const AppendResult& result) {
  if (!done) return;
  try {
    done(result);
  } catch (...) {
  }
}

void writer_append_u64(std::string& out, std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

bool pread_all(int fd, off_t offset, std::size_t n, std::string* out) {
  out->resize(n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out->data() + got, n - got, offset + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

// The offset of the last '\n' before `end`, -1 when there is none; false on a read error.
bool last_newline_before(int fd, off_t end, off_t* at) {
  constexpr off_t kChunk = 64 * 1024;
  std::string buf;
  off_t hi = end;
  while (hi > 0) {
    const off_t lo = std::max<off_t>(0, hi - kChunk);
    if (!pread_all(fd, lo, static_cast<std::size_t>(hi - lo), &buf)) return false;
    const auto p = buf.rfind('\n');
    if (p != std::string::npos) {
      *at = lo + static_cast<off_t>(p);
      return true;
    }
    hi = lo;
  }
  *at = -1;
  return true;
}

bool fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::string dir_of(const std::string& path) {
  const std::string d = fs::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

// The chain position a log ends at: its last record.
struct Tail {
  bool any = false;
  std::uint64_t seq = 0;
  std::string hash;
  std::string kind;
  std::int64_t time_us = 0;
};

// Reads and checks the last complete line ending at the '\n' at `nl` (the file's last one).
bool read_last_record(int fd, const std::string& path, off_t nl, Tail* tail, std::string* error) {
  off_t prev = -1;
  if (!last_newline_before(fd, nl, &prev)) {
    *error = "cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  std::string line;
  if (!pread_all(fd, prev + 1, static_cast<std::size_t>(nl - prev - 1), &line)) {
    *error = "cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  Head h;
  std::string why;
  if (!parse_head(line, &h, &why)) {
    *error = "the last record of " + path + " (at byte " + std::to_string(prev + 1) +
             ") is not an audit record: " + why;
    return false;
  }
  if (!hash_matches(h)) {
    *error = "the last record of " + path + " (seq " + std::to_string(h.seq) +
             ") does not match its hash: the log was altered; refusing to continue its chain";
    return false;
  }
  tail->any = true;
  tail->seq = h.seq;
  tail->hash = std::string(h.hash);
  tail->kind = std::string(h.kind);
  parse_time(h.time, &tail->time_us);
  return true;
}

// The first record's seq and time of a non-empty file.
bool read_first_record(int fd, const std::string& path, off_t size, std::uint64_t* seq,
                       std::int64_t* time_us, std::string* error) {
  constexpr std::size_t kChunk = 64 * 1024;
  std::string line, buf;
  off_t off = 0;
  for (;;) {
    const std::size_t n = static_cast<std::size_t>(std::min<off_t>(kChunk, size - off));
    if (n == 0 || !pread_all(fd, off, n, &buf)) {
      *error = "cannot read the first record of " + path;
      return false;
    }
    const auto p = buf.find('\n');
    if (p != std::string::npos) {
      line.append(buf, 0, p);
      break;
    }
    line += buf;
    off += static_cast<off_t>(n);
  }
  Head h;
  std::string why;
  if (!parse_head(line, &h, &why)) {
    *error = "the first record of " + path + " is not an audit record: " + why;
    return false;
  }
  *seq = h.seq;
  parse_time(h.time, time_us);
  return true;
}

// The seq of the last checkpoint within the last `window` bytes before `end`; 0 if none.
std::uint64_t last_checkpoint_seq(int fd, off_t end) {
  constexpr off_t kWindow = 4 << 20;
  const off_t lo = std::max<off_t>(0, end - kWindow);
  std::string buf;
  if (!pread_all(fd, lo, static_cast<std::size_t>(end - lo), &buf)) return 0;
  constexpr std::string_view kMark = "\",\"kind\":\"checkpoint\",\"time\":\"";
  const auto p = buf.rfind(kMark);
  if (p == std::string::npos) return 0;
  auto start = buf.rfind('\n', p);
  start = start == std::string::npos ? 0 : start + 1;
  if (start == 0 && lo != 0) return 0;
  Head h;
  std::string why;
  const auto end_nl = buf.find('\n', p);
  if (end_nl == std::string::npos) return 0;
  if (!parse_head(std::string_view(buf).substr(start, end_nl - start), &h, &why)) return 0;
  return h.kind == "checkpoint" ? h.seq : 0;
}

struct Rotated {
  std::string path;
  std::uint64_t first = 0, last = 0;
};

// The rotated siblings of the live file, by last seq.
std::vector<Rotated> rotated_files(const std::string& live_path) {
  const fs::path live(live_path);
  const std::string stem = live.stem().string(), ext = live.extension().string();
  std::vector<Rotated> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_of(live_path), ec)) {
    const std::string name = entry.path().filename().string();
    // <stem>.<12 digits>-<12 digits><ext>
    if (name.size() != stem.size() + 1 + 12 + 1 + 12 + ext.size()) continue;
    if (!name.starts_with(stem + ".") || !name.ends_with(ext)) continue;
    const std::string_view mid = std::string_view(name).substr(stem.size() + 1, 25);
    if (mid[12] != '-') continue;
    Rotated r;
    r.path = entry.path().string();
    auto a = std::from_chars(mid.data(), mid.data() + 12, r.first);
    auto b = std::from_chars(mid.data() + 13, mid.data() + 25, r.last);
    if (a.ptr != mid.data() + 12 || b.ptr != mid.data() + 25) continue;
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(),
            [](const Rotated& x, const Rotated& y) { return x.last < y.last; });
  return out;
}

}  // namespace

std::string rotated_name(const std::string& live_path, std::uint64_t first_seq,
                         std::uint64_t last_seq) {
  const fs::path live(live_path);
  char mid[64];
  std::snprintf(mid, sizeof mid, ".%012llu-%012llu", static_cast<unsigned long long>(first_seq),
                static_cast<unsigned long long>(last_seq));
  return (live.parent_path() / (live.stem().string() + mid + live.extension().string())).string();
}

// The chain position and the counters checkpoints and rotation run on. Copied before a batch
// and restored when the batch fails, so a failed batch leaves no trace.
struct ChainPos {
  std::uint64_t next_seq = 1;
  std::string prev = std::string(kGenesis);
  std::uint64_t since_checkpoint = 0;  // records since the last checkpoint
  std::uint64_t checkpoint_first = 1;  // first seq since the last checkpoint
};

struct Writer::State {
  int fd = -1;
  off_t size = 0;  // the last good size of the live file
  ChainPos pos;
  std::uint64_t file_first_seq = 1;
  std::int64_t file_start_us = 0;
  std::int64_t last_checkpoint_us = 0;
  std::size_t last_batch = 0;        // records in the previous batch (group commit's hint)
  std::string torn;                  // "torn" member of the start record, when a line was cut
  std::int64_t rotate_retry_us = 0;  // after a failed rotation, not before this time
  // A rotation renamed the old file but the new one's first record, `rotate`, is not written
  // yet (its batch failed): its FIELDS and time. The next batch that succeeds writes it first.
  std::string pending_rotate;
  std::int64_t pending_rotate_us = 0;
  // Reused by every batch: no allocation per batch once they have grown.
  std::string buffer;
  std::vector<AppendResult> results;
  ~State() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

// Appends the sealed line of one record to `buffer`, advancing `pos`.
void seal_into(std::string& buffer, ChainPos& pos, std::string_view kind, std::int64_t time_us,
               std::string_view daemon, std::string_view fields) {
  char hash[64];
  seal_append(&buffer, pos.next_seq, pos.prev, kind, time_us, daemon, fields, hash);
  pos.prev.assign(hash, sizeof hash);
  ++pos.next_seq;
}

// A signed checkpoint line covering checkpoint_first .. next_seq-1.
void seal_checkpoint(std::string& buffer, ChainPos& pos, const WriterOptions& o,
                     std::int64_t time_us, const char* reason) {
  std::string fields;
  fields.reserve(256);
  fields += "\"key_id\":\"";
  fields += o.key->key_id();
  fields += "\",\"first_seq\":";
  writer_append_u64(fields, pos.checkpoint_first);
  fields += ",\"last_seq\":";
  writer_append_u64(fields, pos.next_seq - 1);
  fields += ",\"every_records\":";
  writer_append_u64(fields, o.checkpoint_records);
  fields += ",\"every_seconds\":";
  writer_append_u64(fields, static_cast<std::uint64_t>(o.checkpoint_age.count()));
  fields += ",\"reason\":\"";
  fields += reason;
  fields += '"';
  Envelope e;
  e.seq = pos.next_seq;
  e.prev = pos.prev;
  e.kind = "checkpoint";
  e.time_us = time_us;
  e.daemon = o.daemon_id;
  // The signed bytes: the line up to (not including) `,"sig":"` = the unsigned line's sealed part.
  const std::string unsigned_line = seal(e, fields, nullptr);
  const std::size_t signed_end = unsigned_line.rfind(",\"hash\":\"");
  const std::string sig = o.key->sign_hex(std::string_view(unsigned_line).substr(0, signed_end));
  fields += ",\"sig\":\"";
  fields += sig;
  fields += '"';
  seal_into(buffer, pos, "checkpoint", time_us, o.daemon_id, fields);
  pos.since_checkpoint = 0;
  pos.checkpoint_first = pos.next_seq;
}

// Writes all of `data` at the end of the file (O_APPEND); errno on failure.
bool write_all(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

int open_live(const std::string& path) {
  return ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
}

}  // namespace

Writer::Writer(WriterOptions options) : options_(std::move(options)), state_(new State) {
  if (!options_.clock_us) options_.clock_us = system_clock_us;
  health_.file = options_.path;
}

std::unique_ptr<Writer> Writer::open(WriterOptions options, std::string* error) {
  if (options.path.empty()) {
    *error = "the audit log has no path";
    return nullptr;
  }
  if (!valid_daemon_id(options.daemon_id)) {
    *error = "the audit daemon id '" + options.daemon_id + "' is not 1 to 64 of [A-Za-z0-9._:-]";
    return nullptr;
  }
  if (!options.key) {
    *error = "the audit log needs a signing key for its checkpoints";
    return nullptr;
  }
  if (options.start_fields.find('\n') != std::string::npos) {
    *error = "the audit start record's fields hold a newline";
    return nullptr;
  }
  std::unique_ptr<Writer> w(new Writer(std::move(options)));
  const WriterOptions& o = w->options_;
  State& s = *w->state_;
  const std::string& path = o.path;

  s.fd = open_live(path);
  if (s.fd < 0) {
    *error = "cannot open the audit log " + path + ": " + errno_text(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(s.fd, &st) != 0) {
    *error = "cannot stat the audit log " + path + ": " + errno_text(errno);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "the audit log " + path + " is not a regular file";
    return nullptr;
  }
  off_t size = st.st_size;
  off_t nl = -1;
  if (size > 0 && !last_newline_before(s.fd, size, &nl)) {
    *error = "cannot read the audit log " + path + ": " + errno_text(errno);
    return nullptr;
  }
  if (nl + 1 < size) {
    // A torn last line (the previous run died mid-write): cut it, say so in the start record.
    std::string cut;
    if (!pread_all(s.fd, nl + 1, static_cast<std::size_t>(size - nl - 1), &cut)) {
      *error = "cannot read the audit log " + path + ": " + errno_text(errno);
      return nullptr;
    }
    if (::ftruncate(s.fd, nl + 1) != 0 || ::fdatasync(s.fd) != 0) {
      *error = "cannot cut the torn last line of " + path + ": " + errno_text(errno);
      return nullptr;
    }
    s.torn = "\"torn\":{\"bytes\":" + std::to_string(cut.size()) + ",\"sha256\":\"" +
             digest::sha256_hex(cut) + "\"}";
    size = nl + 1;
  }
  s.size = size;

  Tail tail;
  const std::int64_t now = o.clock_us();
  if (size > 0) {
    if (!read_last_record(s.fd, path, nl, &tail, error)) return nullptr;
    if (!read_first_record(s.fd, path, size, &s.file_first_seq, &s.file_start_us, error)) {
      return nullptr;
    }
    const std::uint64_t cp = tail.kind == "checkpoint" ? tail.seq : last_checkpoint_seq(s.fd, size);
    s.pos.checkpoint_first = cp ? cp + 1 : s.file_first_seq;
  } else {
    // An empty live file: the chain continues from the newest rotated file, if any.
    const auto rotated = rotated_files(path);
    if (!rotated.empty()) {
      const Rotated& last = rotated.back();
      const int fd = ::open(last.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        *error = "cannot open the rotated audit log " + last.path + ": " + errno_text(errno);
        return nullptr;
      }
      struct stat rst {};
      off_t rnl = -1;
      bool ok = ::fstat(fd, &rst) == 0 && rst.st_size > 0 &&
                last_newline_before(fd, rst.st_size, &rnl) && rnl == rst.st_size - 1;
      if (!ok) {
        *error = "the rotated audit log " + last.path + " is empty or does not end with a line";
      } else {
        ok = read_last_record(fd, last.path, rnl, &tail, error);
      }
      ::close(fd);
      if (!ok) return nullptr;
      s.pos.checkpoint_first = tail.seq + 1;
    }
    if (!fsync_dir(dir_of(path))) {
      *error = "cannot sync the directory of " + path + ": " + errno_text(errno);
      return nullptr;
    }
  }
  if (tail.any) {
    s.pos.next_seq = tail.seq + 1;
    s.pos.prev = tail.hash;
    s.pos.since_checkpoint = s.pos.next_seq - s.pos.checkpoint_first;
  }
  if (size == 0) {
    s.file_first_seq = s.pos.next_seq;
    s.file_start_us = now;
  }
  s.last_checkpoint_us = now;

  // The start record, durable before the daemon serves.
  std::string fields = o.start_fields;
  if (!s.torn.empty()) {
    if (!fields.empty()) fields += ',';
    fields += s.torn;
  }
  const AppendResult started = [&] {
    std::vector<Pending> batch(1);
    batch[0].kind = "start";
    batch[0].time_us = now;
    batch[0].fields = std::move(fields);
    AppendResult r;
    batch[0].done = [&r](const AppendResult& a) { r = a; };
    w->write_batch(batch);
    return r;
  }();
  if (!started.ok) {
    *error = started.error;
    return nullptr;
  }
  w->thread_ = std::thread([raw = w.get()] { raw->run(); });
  return w;
}

Writer::~Writer() { close(); }

void Writer::append(std::string kind, std::int64_t time_us, std::string fields, Done done) {
  AppendResult refused;
  if (!valid_kind(kind)) {
    refused.error = "the audit record kind '" + kind + "' is not a kind name";
  } else if (fields.find('\n') != std::string::npos) {
    refused.error = "the audit record's fields hold a newline";
  } else if (time_us < 0 || time_us > kLastTimeUs) {
    refused.error =
        "the audit record's time " + std::to_string(time_us) + " is outside 1970-01-01..9999-12-31";
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (refused.error.empty() && stopping_) refused.error = "the audit log is closed";
    if (refused.error.empty()) {
      queue_.push_back({std::move(kind), time_us, std::move(fields), std::move(done)});
      // Wake the writer only when this record is what it waits for: the queue's first record
      // (it waits for work) or the one that fills a group-commit batch. Otherwise it is busy
      // or will see the queue when it looks next.
      const bool wake = queue_.size() == wake_at_;
      lock.unlock();
      if (wake) cv_.notify_one();
      return;
    }
  }
  call_done(done, refused);
}

AppendResult Writer::append_wait(std::string kind, std::int64_t time_us, std::string fields) {
  std::promise<AppendResult> promise;
  auto future = promise.get_future();
  append(std::move(kind), time_us, std::move(fields),
         [&promise](const AppendResult& r) { promise.set_value(r); });
  return future.get();
}

WriterHealth Writer::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

void Writer::close() {
  std::lock_guard<std::mutex> close_lock(close_mu_);
  if (closed_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  closed_ = true;
}

void Writer::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<Pending> batch;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wake for work, for stop, or when an age-based checkpoint or rotation may be due.
    const auto tick = std::chrono::seconds(1);
    cv_.wait_for(lock, tick, [this] { return !queue_.empty() || stopping_; });
    if (!queue_.empty() && options_.durability == Durability::Group &&
        options_.group_commit.count() > 0 && state_->last_batch > 1 &&
        queue_.size() < state_->last_batch && !stopping_) {
      // Concurrent callers: give the batch up to group_commit to fill to the last one's size.
      const auto until = Clock::now() + options_.group_commit;
      const std::size_t want = state_->last_batch;
      wake_at_ = want;
      cv_.wait_until(lock, until, [&] { return queue_.size() >= want || stopping_; });
      wake_at_ = 1;
    }
    batch.swap(queue_);
    const bool stop = stopping_ && batch.empty();
    lock.unlock();
    if (!batch.empty()) {
      write_batch(batch);
      batch.clear();
    }
    if (stop) break;
    maintain();
    lock.lock();
  }
  // Shutdown: `stop`, then the closing checkpoint, durable.
  std::vector<Pending> last(1);
  last[0].kind = "stop";
  last[0].time_us = options_.clock_us();
  last[0].fields = "\"reason\":\"shutdown\"";
  write_batch(last);
  State& s = *state_;
  if (s.fd >= 0) {
    ChainPos pos = s.pos;
    std::string buffer;
    seal_checkpoint(buffer, pos, options_, options_.clock_us(), "stop");
    if (write_all(s.fd, buffer) && ::fdatasync(s.fd) == 0) {
      s.pos = pos;
      s.size += static_cast<off_t>(buffer.size());
      std::lock_guard<std::mutex> g(mu_);
      health_.last_seq = s.pos.next_seq - 1;
      ++health_.records;
    } else {
      const int err = errno;
      if (::ftruncate(s.fd, s.size) != 0) {
      }
      std::lock_guard<std::mutex> g(mu_);
      health_.ok = false;
      health_.error =
          "cannot write the closing checkpoint to " + options_.path + ": " + errno_text(err);
    }
    ::close(s.fd);
    s.fd = -1;
  }
}

void Writer::write_batch(std::vector<Pending>& batch) {
  State& s = *state_;
  const WriterOptions& o = options_;
  // Fsync: each record its own group, durable before its done; otherwise one group.
  // (An empty batch only writes a pending `rotate`.)
  if (batch.empty() && s.pending_rotate.empty()) return;
  const std::size_t group = o.durability == Durability::Fsync || batch.empty() ? 1 : batch.size();
  std::string& buffer = s.buffer;
  std::vector<AppendResult>& results = s.results;
  results.clear();
  results.resize(batch.size());
  std::uint64_t written = 0, failed = 0;
  bool any_failed = false;
  std::string failure;
  for (std::size_t begin = 0; begin < batch.size() || (begin == 0 && batch.empty());
       begin += group) {
    const std::size_t end = std::min(batch.size(), begin + group);
    bool ok = true;
    int err = 0;
    std::string what;
    if (s.fd < 0) {
      // No live file open: a rotation renamed it (a new one begins at size 0), or a failed
      // batch could not be truncated away. Open it again and cut it back to the last good size.
      s.fd = open_live(o.path);
      struct stat st {};
      if (s.fd < 0 || ::fstat(s.fd, &st) != 0) {
        ok = false;
        err = errno;
        what = "cannot open ";
      } else if (st.st_size < s.size) {
        ok = false;
        err = ESTALE;
        what = "the audit log shrank under the writer (" + std::to_string(st.st_size) + " < " +
               std::to_string(s.size) + " bytes): ";
      } else if (st.st_size > s.size && ::ftruncate(s.fd, s.size) != 0) {
        ok = false;
        err = errno;
        what = "cannot truncate ";
      }
      if (!ok && s.fd >= 0) {
        ::close(s.fd);
        s.fd = -1;
      }
    }
    ChainPos pos = s.pos;
    buffer.clear();
    std::uint64_t lines = 0;
    if (ok) {
      const bool rotate_first = !s.pending_rotate.empty();
      if (rotate_first) {
        // The new live file's first record, before anything else goes into it.
        seal_into(buffer, pos, "rotate", s.pending_rotate_us, o.daemon_id, s.pending_rotate);
        ++lines;
        ++pos.since_checkpoint;
      }
      for (std::size_t i = begin; i < end; ++i) {
        results[i].seq = pos.next_seq;
        seal_into(buffer, pos, batch[i].kind, batch[i].time_us, o.daemon_id, batch[i].fields);
        ++lines;
        ++pos.since_checkpoint;
        if (o.checkpoint_records > 0 && pos.since_checkpoint >= o.checkpoint_records) {
          seal_checkpoint(buffer, pos, o, o.clock_us(), "interval");
          ++lines;
        }
      }
      const int injected = o.fail_write ? o.fail_write(buffer) : 0;
      if (injected != 0 || !write_all(s.fd, buffer)) {
        ok = false;
        err = injected != 0 ? injected : errno;
        what = "cannot write ";
      } else if (o.durability != Durability::Write && ::fdatasync(s.fd) != 0) {
        ok = false;
        err = errno;
        what = "cannot sync ";
      }
    }
    if (ok) {
      if (pos.checkpoint_first != s.pos.checkpoint_first) s.last_checkpoint_us = o.clock_us();
      s.pos = std::move(pos);
      s.size += static_cast<off_t>(buffer.size());
      s.pending_rotate.clear();
      written += lines;
      for (std::size_t i = begin; i < end; ++i) results[i].ok = true;
    } else {
      // Back to the last good size: a partial line never stays, the chain stays intact.
      if (s.fd >= 0 && ::ftruncate(s.fd, s.size) != 0) {
        // Cannot even truncate: drop the descriptor so the next batch reopens and rereads.
        ::close(s.fd);
        s.fd = -1;
      }
      failure = what + o.path + ": " + errno_text(err);
      for (std::size_t i = begin; i < end; ++i) {
        results[i].ok = false;
        results[i].seq = 0;
        results[i].error = failure;
      }
      failed += end - begin;
      any_failed = true;
    }
    if (o.durability == Durability::Fsync) {
      // Durable now: answer at once rather than after the whole batch.
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (ok) {
          health_.ok = true;
          health_.error.clear();
          health_.last_seq = s.pos.next_seq - 1;
          health_.records += lines;
        } else {
          health_.ok = false;
          health_.error = failure;
          health_.failures += end - begin;
        }
      }
      for (std::size_t i = begin; i < end; ++i) call_done(batch[i].done, results[i]);
    }
  }
  s.last_batch = batch.size();
  if (o.durability != Durability::Fsync) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++health_.batches;
      if (!any_failed) {
        health_.ok = true;
        health_.error.clear();
      } else {
        health_.ok = false;
        health_.error = failure;
        health_.failures += failed;
      }
      health_.last_seq = s.pos.next_seq - 1;
      health_.records += written;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) call_done(batch[i].done, results[i]);
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    ++health_.batches;
  }
}

void Writer::maintain() {
  State& s = *state_;
  const WriterOptions& o = options_;
  if (!s.pending_rotate.empty()) {
    // A rotation whose `rotate` record failed: try it again (appends would also write it).
    std::vector<Pending> none;
    write_batch(none);
    return;
  }
  if (s.fd < 0) return;
  const std::int64_t now = o.clock_us();
  const bool rotate_size =
      o.rotate_bytes > 0 && static_cast<std::uint64_t>(s.size) >= o.rotate_bytes;
  const bool rotate_time = o.rotate_age.count() > 0 &&
                           now - s.file_start_us >= o.rotate_age.count() * 1000000 &&
                           s.pos.next_seq - s.file_first_seq > 1;
  if ((rotate_size || rotate_time) && now >= s.rotate_retry_us) {
    // The old file's last line: a checkpoint (reason rotate), durable; then rename it.
    ChainPos pos = s.pos;
    std::string buffer;
    seal_checkpoint(buffer, pos, o, now, "rotate");
    if (!write_all(s.fd, buffer) || ::fdatasync(s.fd) != 0) {
      const int err = errno;
      if (::ftruncate(s.fd, s.size) != 0) {
      }
      std::lock_guard<std::mutex> lock(mu_);
      health_.ok = false;
      health_.error = "cannot write the rotation checkpoint to " + o.path + ": " + errno_text(err);
      s.rotate_retry_us = now + kRotateRetryUs;
      return;
    }
    s.pos = pos;
    s.size += static_cast<off_t>(buffer.size());
    s.last_checkpoint_us = now;
    const std::string rotated = rotated_name(o.path, s.file_first_seq, s.pos.next_seq - 1);
    if (::rename(o.path.c_str(), rotated.c_str()) != 0) {
      const int err = errno;
      std::lock_guard<std::mutex> lock(mu_);
      health_.ok = false;
      health_.error = "cannot rotate " + o.path + " to " + rotated + ": " + errno_text(err);
      health_.last_seq = s.pos.next_seq - 1;
      s.rotate_retry_us = now + kRotateRetryUs;
      return;  // the chain goes on in the same file; the rotation is retried a minute later
    }
    ::close(s.fd);
    s.fd = -1;
    s.size = 0;
    fsync_dir(dir_of(o.path));
    s.file_first_seq = s.pos.next_seq;
    s.file_start_us = now;
    // The new file's first record; should this batch fail, the next one writes it first.
    s.pending_rotate = "\"previous_file\":" + std::string("\"") +
                       fs::path(rotated).filename().string() + "\",\"reason\":\"" +
                       (rotate_size ? "size" : "time") + "\"";
    s.pending_rotate_us = now;
    std::vector<Pending> none;
    write_batch(none);  // reopens the live file
    fsync_dir(dir_of(o.path));
    {
      std::lock_guard<std::mutex> lock(mu_);
      health_.last_seq = s.pos.next_seq - 1;
    }
    return;
  }
  if (o.checkpoint_age.count() > 0 && s.pos.since_checkpoint > 0 &&
      now - s.last_checkpoint_us >= o.checkpoint_age.count() * 1000000) {
    ChainPos pos = s.pos;
    std::string buffer;
    seal_checkpoint(buffer, pos, o, now, "interval");
    const bool ok =
        write_all(s.fd, buffer) && (o.durability == Durability::Write || ::fdatasync(s.fd) == 0);
    const int err = errno;
    std::lock_guard<std::mutex> lock(mu_);
    if (ok) {
      s.pos = pos;
      s.size += static_cast<off_t>(buffer.size());
      s.last_checkpoint_us = now;
      health_.last_seq = s.pos.next_seq - 1;
      ++health_.records;
    } else {
      if (::ftruncate(s.fd, s.size) != 0) {
      }
      health_.ok = false;
      health_.error = "cannot write a checkpoint to " + o.path + ": " + errno_text(err);
    }
  }
}

}  // namespace warden::audit
