#!/usr/bin/env bash
# Elaborates every case of the shared corpus (cases.tsv) and compares each
# output that has a reference (expected.elaborate.yaml) with hubdiff.py,
# ignoring the intended deviations of tests/conformance/deviations.txt; then
# deploys the template set (corpus/templates) and compares its renders byte
# for byte, expecting only tests/conformance/template-differences.txt.
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

# The template set: curly, mustache, _mustache and go templates rendered during a deploy,
# compared byte for byte with the reference's renders (see its README).
templates=$corpus/templates
if [[ -f $templates/run.sh ]]; then
  total=$((total + 1))
  out=$work/templates
  successor=$root/tests/it/testdata/template-set-successor
  known=$root/tests/conformance/template-differences.txt
  sh "$templates/run.sh" "$hub" "$out" >/dev/null 2>&1 || true
  problems=()
  # Components the reference cannot render (successor functions): our own expected output.
  while IFS= read -r file; do
    relative=${file#"$successor"/}
    if ! cmp -s "$file" "$out/rendered/$relative"; then
      problems+=("successor render differs: $relative")
    fi
    rm -rf "$out/rendered/${relative%%/*}"
  done < <(find "$successor" -type f | sort)
  # go-corpus fails as a whole on one missing key: render the other files with `hub render`.
  go_corpus=$out/stack/components/go-corpus
  mapfile -t renderable < <(cd "$templates/expected/rendered/go-corpus" && find . -type f | sed 's|^\./||' |
    while read -r f; do grep -q "rendered/go-corpus/$f"$'\t' "$known" || echo "$f"; done | sort)
  if (cd "$go_corpus" && "$hub" render -m ../../hub.yaml.elaborate -s ../../../state -c go-corpus -k go \
        "${renderable[@]/%/.gotemplate}") >"$work/templates-render.log" 2>&1; then
    for f in "${renderable[@]}"; do
      mkdir -p "$(dirname "$out/rendered/go-corpus/$f")"
      cp "$go_corpus/$f" "$out/rendered/go-corpus/$f"
    done
  else
    problems+=("hub render of go-corpus failed: $(tail -n 3 "$work/templates-render.log")")
  fi
  expected_lines=$(grep -v '^#' "$known" | cut -f1 | sort)
  actual_lines=$(sh "$templates/compare.sh" "$out" | grep -v '^templates:' | sort || true)
  if [[ $actual_lines != "$expected_lines" ]]; then
    problems+=("compare.sh differs from tests/conformance/template-differences.txt:" "$(diff <(echo "$expected_lines") <(echo "$actual_lines") || true)")
  fi
  if ((${#problems[@]} == 0)); then
    printf 'ok    templates: every expected file equal but the %d known difference(s)\n' "$(grep -vc '^#' "$known")"
  else
    failed=$((failed + 1))
    printf 'FAIL  templates:\n'
    printf '      %s\n' "${problems[@]}"
  fi
fi

if ((failed > 0)); then
  echo "conformance: $failed of $total cases failed"
  exit 1
fi
echo "conformance: all $total cases pass"
