#!/usr/bin/env bash
# Elaborates every case of the shared corpus (cases.tsv) and compares each
# output that has a reference (expected.elaborate.yaml) with hubdiff.py,
# ignoring the intended deviations of tests/conformance/deviations.txt.
# Prints one line per case; exits 1 when any case differs or fails.
#
# usage: scripts/conformance.sh [--release]
#   HUB_CORPUS  corpus folder (default: ../shared/corpus beside the checkout)
#   CI=true     a missing corpus is an error instead of a skip
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=${HUB_CORPUS:-$root/../shared/corpus}
deviations=$root/tests/conformance/deviations.txt
profile=debug
build_flags=()
case ${1:-} in
  "") ;;
  --release) profile=release; build_flags=(--release) ;;
  *) echo "usage: $0 [--release]" >&2; exit 2 ;;
esac

if [[ ! -f $corpus/cases.tsv ]]; then
  if [[ ${CI:-} == true ]]; then
    echo "conformance: no corpus at $corpus (CI=true: ../shared must be beside the checkout, or set HUB_CORPUS)" >&2
    exit 1
  fi
  echo "conformance: SKIPPED, no corpus at $corpus (set HUB_CORPUS to run it)"
  exit 0
fi
corpus=$(cd "$corpus" && pwd)
hubdiff=$corpus/../tools/hubdiff.py

cd "$root"
cargo build --locked --quiet --bin hub "${build_flags[@]}"
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
hub=$target_dir/$profile/hub
[[ -x $hub ]] || { echo "conformance: no binary at $hub" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

total=0 failed=0
while IFS=$'\t' read -r name workdir args expected <&3; do
  [[ -z $name || $name == \#* ]] && continue
  total=$((total + 1))
  read -r -a argv <<<"$args"
  out=$work/$name.elaborate.yaml
  if ! (cd "$corpus/$name/$workdir" &&
        "$hub" elaborate "${argv[@]}" -o "$out" --compressed=false) >"$work/$name.log" 2>&1 </dev/null; then
    failed=$((failed + 1))
    printf 'FAIL  %s: hub elaborate %s failed\n' "$name" "$args"
    sed 's/^/      /' "$work/$name.log"
    continue
  fi
  if [[ $expected != yes ]]; then
    printf 'ok    %s: elaborated (no reference output)\n' "$name"
    continue
  fi
  status=0
  python3 "$hubdiff" elaborate "$corpus/$name/expected.elaborate.yaml" "$out" \
    --allow "$deviations" >"$work/$name.diff" 2>"$work/$name.summary" </dev/null || status=$?
  summary=$(sed -n 's/^hubdiff elaborate: //p' "$work/$name.summary")
  if [[ $status == 0 ]]; then
    printf 'ok    %s: %s\n' "$name" "$summary"
  else
    failed=$((failed + 1))
    printf 'FAIL  %s: %s\n' "$name" "${summary:-hubdiff.py exited with $status}"
    sed 's/^/      /' "$work/$name.diff"
    [[ $status == 1 ]] || sed 's/^/      /' "$work/$name.summary"
  fi
done 3<"$corpus/cases.tsv"

if ((failed > 0)); then
  echo "conformance: $failed of $total cases failed"
  exit 1
fi
echo "conformance: all $total cases pass"
