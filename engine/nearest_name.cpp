#include "engine/nearest_name.h"

#include <algorithm>

namespace warden {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Names longer than this get no suggestion: a misspelling is a short name gone wrong, and the
// cost stays bounded however long a hostile name is.
constexpr std::size_t kMaxWord = 64;

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
  const std::size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  // Optimal string alignment distance, three rows.
  std::vector<std::size_t> before(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    std::size_t row_min = cur[0];
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit + 1);
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > kMaxWord) return "";
  const std::size_t limit = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) return "";
    const std::size_t d = edit_distance(word, c, limit);
    // A one-character name is never "near" a longer one by deleting all but one letter.
    if (d < best_distance && d < std::max(word.size(), c.size())) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = nearest_name(word, candidates);
  return best.empty() ? "" : " — did you mean `" + best + "`?";
}

std::string name_list(const std::vector<std::string>& names, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max) out += ", … (" + std::to_string(names.size()) + " in all)";
  return out;
}

}  // namespace warden
