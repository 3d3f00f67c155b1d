#!/bin/sh
# Run every libFuzzer harness of a build for a bounded time, seeded from the golden tests.
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_PER_HARNESS (default 60)] [extra libFuzzer flags]
# Exit status non-zero on any finding (crash, sanitizer report, leak, timeout, broken contract); the
# reproducer is left as BUILD_DIR/fuzz-findings/<harness>/crash-* (or leak-*, timeout-*). docs/fuzzing.md.
set -eu
build=$1; secs=${2:-60}; shift; [ $# -gt 0 ] && shift
src=$(cd "$(dirname "$0")/../.." && pwd)
work="$build/fuzz-work"; findings="$build/fuzz-findings"
rm -rf "$work"; mkdir -p "$work" "$findings"

# Seeds: the golden command lines (one argument per line, @DATA@ expanded) and the published tables.
mkdir -p "$work/fuzz_cli" "$work/fuzz_published"
# Seeds slower than a few seconds under the sanitizers are left out (the fuzzer would spend its time
# on them): the long predictor run and the exhaustive verify of every format.
slow='simulate_predict_mpt_long|verify_all|verify_default'
for c in "$src"/tests/cli/*.cmd; do
  echo "$(basename "$c" .cmd)" | grep -Eqx "$slow" && continue
  sed "s|@DATA@|$src/tests/cli/data|g" "$c" > "$work/fuzz_cli/$(basename "$c" .cmd)"
done
i=0
for t in table1 table4 table5 table8 claims; do
  { printf "\\$(printf '%03o' $i)"; cat "$src/tables/published/$t.csv"; } > "$work/fuzz_published/$t"
  i=$((i + 1))
done

# The .npy reader: the golden tests' score files, good and bad.
mkdir -p "$work/fuzz_npy"
cp "$src"/tests/cli/data/scores_*.npy "$work/fuzz_npy/"

# The config.json reader: the test configs, good and bad.
mkdir -p "$work/fuzz_config"
cp "$src"/tests/data/configs/*.json "$work/fuzz_config/"

# The rope readers: a selector byte (even: config.json, odd: .npy vector), then the file.
mkdir -p "$work/fuzz_rope"
for f in "$src"/tests/data/configs/rope_*.json; do
  { printf '\000'; cat "$f"; } > "$work/fuzz_rope/$(basename "$f")"
done
for f in "$src"/tests/cli/data/rope_*.npy; do
  { printf '\001'; cat "$f"; } > "$work/fuzz_rope/$(basename "$f")"
done

# One harness, its log in $work/NAME.log and its exit status in $work/NAME.rc.
run_one() {
  h=$1; shift
  name=$(basename "$h")
  mkdir -p "$work/$name" "$findings/$name"
  # -timeout: one input may take at most 60 s. Every accepted input's cost is estimated and refused over
  # the harness's budget of 0.05 s (fuzz_cli sets abl_cli_budget_seconds), the zero-logit predictor
  # included (check --model falcon-rw-7b, the Falcon SDPA path that ran for minutes under ASan+UBSan, is
  # now refused at once); what remains are bounded fixed-size runs (table 5, the seeds). -rss_limit_mb:
  # 2 GiB; the corpus grows in $work.
  rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$h" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/$name/" "$@" "$work/$name" > "$work/$name.log" 2>&1 || rc=$?
  echo "$rc" > "$work/$name.rc"
}

# The harnesses run side by side, as many at once as there are cores (each is single-threaded: the same
# seconds of fuzzing per harness in less wall time); ABL_FUZZ_JOBS overrides.
jobs=${ABL_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for h in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$h" ] || continue
  echo "=== $(basename "$h"): $secs s"
  run_one "$h" "$@" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait

status=0
for h in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$h" ] || continue
  name=$(basename "$h")
  if [ "$(cat "$work/$name.rc" 2>/dev/null || echo missing)" != 0 ]; then
    echo "FINDING in $name:"; tail -40 "$work/$name.log"; status=1
  else
    echo "=== $name"; grep -E '^stat::number_of_executed_units|^Done' "$work/$name.log" | tail -2
  fi
done
exit $status
