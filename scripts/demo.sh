#!/usr/bin/env bash
# Sets up, builds, and decides the example proposals with the shipped rules (dry run:
# nothing is actuated), printing one decision per line. Workspace and home are the defaults
# every command shares (/home/user/project, /home/user: engine/defaults.h).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
exec build/cli/warden dry-run --format text --rules rules examples/proposals.jsonl
