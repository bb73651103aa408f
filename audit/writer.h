// The audit log writer (docs/AUDIT.md): one thread appends records to the live file, chaining
// them (seq, prev, hash), with group commit, signed checkpoints and size/time rotation.
//
// append() only queues. The writer thread takes the whole pending batch, seals each record,
// writes the batch with one write loop at O_APPEND and makes it durable per `durability`, then
// calls each record's done. Nothing is acknowledged before it is written: when a write or
// fdatasync fails, the file is truncated back to its last good size (the chain stays intact),
// every done of the batch gets ok=false with the cause, and health() says so until a later
// batch succeeds (each batch retries).
//
// Group commit: the thread never waits while it is idle; when the previous batch held several
// records (concurrent callers) and fewer are pending now, it waits up to group_commit for as
// many to arrive, so one sequential caller pays no added latency.
//
// Checkpoints (signed): after every checkpoint_records records, after checkpoint_age since the
// last one when records were written since, as the last line of a rotated file, and at close.
// Rotation: when the live file reaches rotate_bytes, or its first record is rotate_age old: a
// checkpoint (reason rotate) ends the file, which is renamed to
// <stem>.<first seq %012llu>-<last seq %012llu><ext>; the new live file begins with `rotate`
// (when writing it fails, every later batch writes it first until one succeeds: no record
// enters the new file before it).
//
// append() wakes the writer thread only when its record is what the thread waits for (the
// queue's first, or the one filling a group-commit batch), not per record.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "audit/signing.h"

namespace warden::audit {

// fdatasync per record / per batch (default) / write() only (a crash of the machine may lose
// acknowledged records; a crash of the daemon does not).
enum class Durability { Fsync, Group, Write };

struct WriterOptions {
  std::string path;
  std::string daemon_id;  // [A-Za-z0-9._:-]{1,64}
  Durability durability = Durability::Group;
  std::chrono::milliseconds group_commit{2};   // a batch waits at most this long for company
  std::uint64_t rotate_bytes = 64ull << 20;    // 0: never
  std::chrono::seconds rotate_age{24 * 3600};  // 0: never
  std::uint64_t checkpoint_records = 1000;     // 0: not by count
  std::chrono::seconds checkpoint_age{60};     // 0: not by age
  std::shared_ptr<const SigningKey> key;       // required
  std::string start_fields;  // FIELDS of the start record minus torn (the daemon supplies them)
  std::function<std::int64_t()> clock_us;  // tests; default: the system clock
  // Tests: called with each batch's lines before they are written; a nonzero errno fails
  // that write as if write() had.
  std::function<int(std::string_view lines)> fail_write;
};

struct AppendResult {
  bool ok = false;
  std::uint64_t seq = 0;
  std::string error;
};

struct WriterHealth {
  bool ok = true;
  std::string error;
  std::uint64_t last_seq = 0;
  std::string file;
  std::uint64_t records = 0, failures = 0, batches = 0;
};

// The rotated name of the live file `live_path` holding seqs first..last.
std::string rotated_name(const std::string& live_path, std::uint64_t first_seq,
                         std::uint64_t last_seq);

class Writer {
 public:
  // Opens (creates 0600) or resumes the log: reads the last line of the live file (or, when it
  // is empty, of the newest rotated file), checks its hash and continues the chain; a torn last
  // line (no '\n') is cut and reported in the start record's "torn". A last complete line that
  // is not a record or whose hash does not match, or an unreadable file → nullptr with the
  // cause (the daemon refuses to start). Writes the start record (durable before returning).
  static std::unique_ptr<Writer> open(WriterOptions options, std::string* error);
  ~Writer();  // close()

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  using Done = std::function<void(const AppendResult&)>;
  // Thread-safe. done runs on the writer thread once the record is durable per `durability`
  // (or failed); after close() it runs at once with ok=false. `fields` must be the kind's
  // members as compact JSON (no newline); `kind` a kind name.
  void append(std::string kind, std::int64_t time_us, std::string fields, Done done);
  AppendResult append_wait(std::string kind, std::int64_t time_us, std::string fields);
  WriterHealth health() const;
  // Writes `stop` then a checkpoint (reason stop), fsyncs, joins the thread. Idempotent.
  void close();

  struct State;  // the writer thread's chain and file state

 private:
  struct Pending {
    std::string kind;
    std::int64_t time_us = 0;
    std::string fields;
    Done done;
  };

  explicit Writer(WriterOptions options);
  void run();
  void write_batch(std::vector<Pending>& batch);
  void maintain();

  WriterOptions options_;
  std::unique_ptr<State> state_;  // writer thread only (and open() before it starts)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> queue_;
  std::size_t wake_at_ = 1;  // append() notifies when the queue reaches this size
  bool stopping_ = false;
  bool closed_ = false;
  WriterHealth health_;
  std::thread thread_;
  std::mutex close_mu_;
};

}  // namespace warden::audit
