// Data files: named lists and maps of strings beside the rules (`*.data.toml`,
// `*.data.json`), which rules read with data-member and data-value (docs/RULES.md, "Data
// files"). The read stage for data of Policy::compile: each file is checked whole (syntax,
// shape, names, every string, the limits) and adds nothing when any of it is wrong.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "bindings/data_sets.h"
#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

// Longest string (value, map key) a data file may hold, and most entries (list values and
// map keys) all data files of a rule set may hold together.
inline constexpr std::size_t kMaxDataStringBytes = 4096;
inline constexpr std::size_t kMaxDataEntries = 250000;
inline constexpr std::size_t kMaxDataSetName = 64;

// True for a data file's name: it ends in ".data.toml" or ".data.json" (and has a stem).
bool is_data_file(std::string_view path);

// Reads one data file into `sets`. Problems are E_DATA (syntax, shape, a value that is not a
// string, a bad or repeated name), E_DATA_VALUE (invalid UTF-8, a NUL byte) and E_DATA_LIMIT
// (a string or the entries over the limits) errors with the file and line. Returns false, and
// adds nothing of the file, when there was any.
bool read_data_file(const RuleSource& source, DataSets* sets, Diagnostics* diagnostics);

}  // namespace warden
