#!/usr/bin/env bash
# Differential check of Warden's shell parser against bash's own parser, over a corpus of
# command lines (one per file): fuzz/corpus/shell and what fuzz_shell added to it.
#
#   fuzz/shell_differential.sh BUILD_DIR [CORPUS_DIR...]
#
# What is compared (bash -n parses without running anything; extglob on, as in most
# interactive setups):
#   * Warden accepts → bash must accept. A line bash refuses but Warden reads as commands
#     means the parsers disagree on the grammar, so they may disagree on what runs.
#   * bash accepts → Warden must accept, for the curated seeds in fuzz/corpus/shell only
#     (real commands agents send). For arbitrary fuzz input Warden may refuse more than
#     bash (constructs it does not model fail closed), which is safe.
# Inputs holding NUL bytes are skipped (bash reads them differently from a shell line). Exit 1 on any
# disagreement, listing each file.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: shell_differential.sh BUILD_DIR [CORPUS_DIR...]}
shift
SEEDS="$ROOT/fuzz/corpus/shell"
DIRS=("$SEEDS" "$@")
PARSE="$BUILD/fuzz/shell_parse"
[ -x "$PARSE" ] || { echo "shell_differential: $PARSE is not built" >&2; exit 2; }

checked=0; failures=0
while IFS= read -r -d '' file; do
  if grep -qaP '\x00' "$file"; then continue; fi
  ours=$("$PARSE" "$file" | cut -d' ' -f1)
  # bash -n FILE reads the file as a script: exactly the bytes, trailing newlines included.
  if timeout 5 env -i bash --norc --noprofile -O extglob -n "$file" 2>/dev/null; then
    theirs=ok
  else
    theirs=error
  fi
  checked=$((checked + 1))
  if [ "$ours" = ok ] && [ "$theirs" = error ]; then
    echo "DIFF warden accepts, bash refuses: $file"; failures=$((failures + 1))
  elif [ "$ours" != ok ] && [ "$theirs" = ok ] && [ "${file#"$SEEDS"/}" != "$file" ]; then
    echo "DIFF bash accepts a seed, warden refuses: $file ($("$PARSE" "$file"))"; failures=$((failures + 1))
  fi
done < <(find "${DIRS[@]}" -type f -print0 2>/dev/null)
echo "shell_differential: $checked inputs, $failures disagreements"
[ "$failures" -eq 0 ]
