// NearestName: "did you mean …?" for a misspelt name — the closest of the names that would
// have been right (templates, slots, functions, outcomes, construct keywords), by edit
// distance with transpositions. Used by the rule checker. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden {

// Edit distance between a and b: insertions, deletions, substitutions and swaps of two
// neighbouring characters each count 1 ("tset" → "test" is 1). Stops counting at `limit`
// (returns limit + 1 when the distance is larger).
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit);

// The candidate nearest to `word` (ties: the first in the list), when it is near enough to
// be what was meant: at most 1 edit for names of up to 4 characters, 2 up to 8, 3 beyond;
// letter case does not count. Empty when none is, or when `word` is itself a candidate.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// " — did you mean `NAME`?" for nearest_name(), or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c" (or "a, b, … (N in all)" past `max` names).
std::string name_list(const std::vector<std::string>& names, std::size_t max = 30);

}  // namespace warden
