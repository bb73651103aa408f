// FairQueue: jobs waiting in one line per key (a principal), served round-robin, with a cap
// on all lines together and one on each line: a key that floods waits behind itself, not in
// front of everyone. The decision workers and the pipeline workers queue through it. Not
// thread-safe: its owner holds its own lock around every call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace warden::server {

template <class Job>
class FairQueue {
 public:
  // At most max_total jobs together and max_per_key of one key (each at least 1).
  FairQueue(std::size_t max_total, std::size_t max_per_key)
      : max_total_(std::max<std::size_t>(1, max_total)),
        max_per_key_(std::max<std::size_t>(1, max_per_key)) {}

  // Whether a job of `key` would be refused now.
  bool full(const std::string& key) const {
    if (size_ >= max_total_) return true;
    auto it = lines_.find(key);
    return it != lines_.end() && it->second.size() >= max_per_key_;
  }

  // Queues `job` at the back of its key's line (a new line takes the last turn); false, with
  // the job left as it was, when full(key).
  bool push(const std::string& key, Job& job) {
    if (full(key)) return false;
    auto& line = lines_[key];
    if (line.empty()) turns_.push_back(key);
    line.push_back(std::move(job));
    ++size_;
    return true;
  }

  // What take's chooser says of a job: it leaves as the one taken, it stays (a later job of
  // its line may still go), or it leaves into *dropped.
  enum class Choice { Take, Skip, Drop };

  // Round-robin: each key in turn offers its line, oldest first, to `choose` (after
  // `start_line(key)`), until one job is taken: it moves to *out, and its key goes to the
  // back of the turns if its line still holds jobs. Lines left empty by drops lose their
  // turn. False when no job was taken.
  template <class StartLine, class Choose>
  bool take(Job* out, StartLine start_line, Choose choose, std::vector<Job>* dropped) {
    for (std::size_t n = turns_.size(), i = 0; i < n; ++i) {
      auto it = lines_.find(turns_[i]);
      auto& line = it->second;
      start_line(it->first);
      for (auto j = line.begin(); j != line.end();) {
        const Choice c = choose(*j);
        if (c == Choice::Skip) {
          ++j;
          continue;
        }
        if (c == Choice::Drop) {
          dropped->push_back(std::move(*j));
          j = line.erase(j);
          --size_;
          continue;
        }
        *out = std::move(*j);
        line.erase(j);
        --size_;
        std::string key = std::move(turns_[i]);
        turns_.erase(turns_.begin() + static_cast<std::ptrdiff_t>(i));
        if (line.empty())
          lines_.erase(it);
        else
          turns_.push_back(std::move(key));
        return true;
      }
      if (line.empty()) {
        lines_.erase(it);
        turns_.erase(turns_.begin() + static_cast<std::ptrdiff_t>(i));
        --i;
        --n;
      }
    }
    return false;
  }

  // The oldest job of the next key in turn; false when empty.
  bool take(Job* out) {
    return take(
        out, [](const std::string&) {}, [](const Job&) { return Choice::Take; }, nullptr);
  }

  // Moves every job `drop` says into *dropped, oldest first per line; returns how many.
  template <class Drop>
  std::size_t remove_if(Drop drop, std::vector<Job>* dropped) {
    std::size_t removed = 0;
    for (auto it = lines_.begin(); it != lines_.end();) {
      auto& line = it->second;
      auto keep =
          std::stable_partition(line.begin(), line.end(), [&](const Job& j) { return !drop(j); });
      for (auto j = keep; j != line.end(); ++j) dropped->push_back(std::move(*j));
      removed += static_cast<std::size_t>(line.end() - keep);
      line.erase(keep, line.end());
      if (line.empty()) {
        turns_.erase(std::find(turns_.begin(), turns_.end(), it->first));
        it = lines_.erase(it);
      } else {
        ++it;
      }
    }
    size_ -= removed;
    return removed;
  }

  // Every job into *out (oldest first per line); the queue is then empty.
  void drain(std::vector<Job>* out) {
    for (auto& [key, line] : lines_)
      for (Job& job : line) out->push_back(std::move(job));
    lines_.clear();
    turns_.clear();
    size_ = 0;
  }

  std::size_t size() const { return size_; }
  std::size_t keys() const { return lines_.size(); }
  std::size_t max_per_key() const { return max_per_key_; }

 private:
  std::size_t max_total_, max_per_key_;
  std::unordered_map<std::string, std::deque<Job>> lines_;
  std::deque<std::string> turns_;  // keys with jobs, next to be served first
  std::size_t size_ = 0;
};

}  // namespace warden::server
