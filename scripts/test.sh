#!/usr/bin/env bash
# Runs the tests (`cargo test --locked`, with any extra arguments) and then
# lists the tests that were skipped: cargo test counts a test that returns
# early as `ok`, so each skip (no corpus, no test server, no root) is
# written to a ledger that this script prints and counts at the end.
# Under CI=true a skipped test is a failure (the script exits 1 after
# listing them): CI must run every test, and `scripts/test-deps` installs
# what they start. On a developer machine the skips are only listed.
#
# usage: scripts/test.sh [cargo test arguments]
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
ledger=$target_dir/tmp/skipped-tests
rm -f "$ledger"

cargo test --locked "$@"
status=$?

skipped=0
if [[ -f $ledger ]]; then
  # One per test: a test that misses several tools says so on several lines.
  skipped=$(sed -E 's/^SKIPPED ([^ ]+): .*/\1/' "$ledger" | sort -u | wc -l)
fi
echo
echo "skipped tests: $skipped (cargo test counted them as ok)"
if (( skipped > 0 )); then
  sort -u "$ledger" | sed 's/^/  /'
  if [[ ${CI:-} == true ]]; then
    echo "CI=true: $skipped tests were skipped; a skipped test is a failure in CI" >&2
    (( status != 0 )) || status=1
  fi
fi
exit $status
