#!/usr/bin/env bash
# Test binaries are compiled as unity batches (tests/CMakeLists.txt): several test files in one
# translation unit, so the helpers each file keeps in its anonymous namespace share one scope.
# Two files' helpers of one name and one signature fail to compile; of one name and different
# signatures they compile as overloads, and a call in one file can silently resolve to the
# other file's helper. This fails when a function name is defined file-locally in more than
# one test file of BINARY (which files share a batch changes as files are added), naming them.
# Usage: unity_names.sh BINARY. Needs line tables (-g1 or more) to name the files.
set -euo pipefail
nm -C -l --defined-only "$1" | awk '
  /\(anonymous namespace\)::/ {
    located++
    s = $0
    sub(/.*\(anonymous namespace\)::/, "", s)
    if (s !~ /^[A-Za-z_][A-Za-z_0-9]*\(/) next        # a member, a variable or a lambda
    name = s; sub(/\(.*/, "", name)
    if (name ~ /^C_A_T_C_H_/) next                     # the test cases Catch2 names itself
    n = split($0, tab, "\t"); if (n < 2) next
    file = tab[n]; sub(/:[0-9]+$/, "", file)
    if (file !~ /_test\.cpp$/ || !match(file, /(^|\/)tests\//)) next   # a batched test file
    file = substr(file, RSTART + RLENGTH)
    if (!((name, file) in seen)) { seen[name, file] = 1; files[name] = files[name] " " file; count[name]++ }
  }
  END {
    if (located == 0) { print "no file-local functions found: built without line tables?"; exit 2 }
    bad = 0
    for (name in count) if (count[name] > 1) { print name " is defined file-locally in:" files[name]; bad = 1 }
    if (bad) print "rename all but one (a helper two files share belongs in a header)"
    exit bad
  }'
