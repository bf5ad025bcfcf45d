#!/usr/bin/env bash
# Coverage-guided fuzzing of hub's parsers with cargo-fuzz (libFuzzer).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]
#
# Targets: manifest, state, expressions, capture, templates, elaborate
# (fuzz/fuzz_targets/). Each runs for SECONDS (default 60) from a corpus in
# fuzz/corpus/TARGET seeded from ../shared/corpus, fixtures/ and
# fuzz/seeds/. Works on stable Rust: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass
# its sanitizer flags. cargo-fuzz is installed from crates.io when missing.
# Crashes are saved in fuzz/artifacts/TARGET/; a crash fails the script.
#
# Environment: FUZZ_SANITIZER (default address; `none` builds faster),
# FUZZ_DEV=1 (an unoptimised build: much faster to build, slower to run;
# CI's smoke uses it), FUZZ_JOBS (parallel fuzzing jobs per target),
# HUB_CORPUS.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=(manifest state expressions capture templates elaborate)
target=${1:-all}
seconds=${2:-60}
sanitizer=${FUZZ_SANITIZER:-address}
build=(--sanitizer "$sanitizer")
if [[ ${FUZZ_DEV:-} == 1 ]]; then
  build+=(--dev)
fi
corpus_src=${HUB_CORPUS:-../shared/corpus}

if [[ $target != all ]] && [[ ! " ${targets[*]} " == *" $target "* ]]; then
  echo "error: unknown fuzz target \`$target\`; one of: ${targets[*]} or all" >&2
  exit 2
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install cargo-fuzz --locked </dev/null
fi
export RUSTC_BOOTSTRAP=1

# Copies the files `find` lists (under a size limit) into a corpus folder.
seed() {
  local dir=$1
  shift
  mkdir -p "$dir"
  local n=0
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$dir/seed-$n-$(basename "$file")"
  done < <(find "$@" -type f -size -256k -print0 2>/dev/null || true)
}

seed_corpus() {
  local name=$1 dir=fuzz/corpus/$1
  [[ -d $dir ]] && return 0
  local sources=()
  [[ -d $corpus_src ]] && sources+=("$corpus_src")
  sources+=(fixtures)
  case $name in
    manifest) seed "$dir" "${sources[@]}" -name '*.yaml' ;;
    elaborate) seed "$dir" "${sources[@]}" -name 'hub*.yaml' ;;
    state) seed "$dir" tests/it/testdata crates/hub-state/src/testdata crates/hub-state/testdata fixtures -name '*.state' ;;
    templates)
      mkdir -p "$dir"
      local i=0
      while IFS= read -r -d '' file; do
        i=$((i + 1))
        # The first byte picks the template kind.
        { printf "\\x$(printf %02x $((i % 4)))"; cat "$file"; } >"$dir/seed-$i"
      done < <(find "${sources[@]}" -type f \( -name '*.template' -o -name '*.gotemplate' \) -size -64k -print0)
      ;;
    expressions)
      mkdir -p "$dir"
      local i=0
      while IFS= read -r line; do
        i=$((i + 1))
        printf '%s' "$line" >"$dir/seed-$i"
      done < <(grep -rhoE '[^ ]*[$#]\{[^}]*\}[^ ]*' "${sources[@]}" --include='*.yaml' 2>/dev/null | sort -u | head -2000)
      ;;
    capture) mkdir -p "$dir" ;;
  esac
  if [[ -d fuzz/seeds/$name ]]; then
    cp fuzz/seeds/"$name"/* "$dir"/
  fi
}

run_target() {
  local name=$1
  seed_corpus "$name"
  echo "==> fuzz $name for ${seconds}s ($(find "fuzz/corpus/$name" -type f | wc -l) inputs in the corpus)"
  local flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1)
  if [[ -n ${FUZZ_JOBS:-} ]]; then
    flags+=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
  fi
  (cd fuzz && cargo fuzz run "${build[@]}" "$name" "corpus/$name" -- "${flags[@]}")
}

if [[ $target == all ]]; then
  (cd fuzz && cargo fuzz build "${build[@]}")
else
  (cd fuzz && cargo fuzz build "${build[@]}" "$target")
fi
if [[ $target == all ]]; then
  for name in "${targets[@]}"; do
    run_target "$name"
  done
else
  run_target "$target"
fi
