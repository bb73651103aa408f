#!/usr/bin/env bash
# Sets up, builds, and decides the example proposals with the shipped rules (dry run:
# nothing is actuated), printing one decision per line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
exec build/cli/warden dry-run --format text --workspace /home/user/project --home /home/user \
  --rules rules examples/proposals.jsonl
