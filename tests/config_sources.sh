#!/bin/sh
# Where a model's config.json comes from (issue 19, "Models as users have them"): --config DIR (its
# config.json), --config - (standard input) and --model org/name from a local Hugging Face cache tree
# built here. Each answer must equal the same config read through --config FILE (the independent path),
# but for the one line that names the file read. usage: config_sources.sh BINARY CONFIGS_DIR
set -u
bin=$1
configs=$2
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99
fail() { echo "FAIL: $*"; exit 1; }
# No cache of the machine's own: every lookup below goes to a tree this test built.
unset HF_HUB_CACHE HF_HOME XDG_CACHE_HOME
export HOME="$dir/home"

bloom=$configs/bloom-560m.json
falcon=$configs/falcon-7b.json
[ -r "$bloom" ] && [ -r "$falcon" ] || exit 99

# ref CMD ARGS...: the reference run through --config FILE, its exit status in $ref_rc.
ref() { "$bin" "$@" --config "$bloom" --ctx 1024 --wide > ref.out 2> ref.err; ref_rc=$?; }
# same NAME SHOWN RC: got.out equals ref.out with the config line naming SHOWN; exit status RC.
same() {
  [ "$3" = "$ref_rc" ] || fail "$1: exit $3, the --config FILE run $ref_rc"
  want="config: $2 (model_type bloom, bloom)"
  line=$(grep '^config: ' got.out)
  [ "$line" = "$want" ] || fail "$1: config line '$line', expected '$want'"
  grep -v '^config: ' ref.out > ref.rest
  grep -v '^config: ' got.out > got.rest
  [ -s ref.rest ] || fail "$1: the reference run printed nothing"
  cmp -s ref.rest got.rest || { diff ref.rest got.rest | head; fail "$1: differs from --config FILE"; }
}
# refused NAME WANT: exit 2 ($1 rc given in $rc), nothing on stdout, one line on stderr containing WANT.
refused() {
  [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
  [ -s got.out ] && fail "$1: wrote to stdout"
  [ "$(wc -l < got.err)" -eq 1 ] || { cat got.err; fail "$1: expected one line on stderr"; }
  grep -qF -- "$2" got.err || fail "$1: '$(cat got.err)' does not name '$2'"
}

for cmd in analyze check; do
  ref "$cmd"
  # --config DIR, with and without the trailing slash: DIR/config.json, named so.
  mkdir -p snap && cp "$bloom" snap/config.json
  "$bin" "$cmd" --config snap --ctx 1024 --wide > got.out 2>/dev/null
  same "$cmd --config DIR" "snap/config.json" $?
  "$bin" "$cmd" --config "$dir/snap/" --ctx 1024 --wide > got.out 2>/dev/null
  same "$cmd --config DIR/" "$dir/snap/config.json" $?

  # --config -: standard input.
  "$bin" "$cmd" --config - --ctx 1024 --wide < "$bloom" > got.out 2>/dev/null
  same "$cmd --config -" "standard input" $?

  # --model org/name from the cache, where each variable puts it (huggingface_hub's order).
  for where in HF_HUB_CACHE HF_HOME XDG_CACHE_HOME HOME; do
    case $where in
      HF_HUB_CACHE) hub=$dir/c1/hub ;;
      HF_HOME) hub=$dir/c2/hub ;;
      XDG_CACHE_HOME) hub=$dir/c3/huggingface/hub ;;
      HOME) hub=$dir/home/.cache/huggingface/hub ;;
    esac
    repo=$hub/models--test-org--tiny-bloom
    mkdir -p "$repo/refs" "$repo/snapshots/0123abcd" "$repo/snapshots/old"
    printf '0123abcd\n' > "$repo/refs/main"
    cp "$bloom" "$repo/snapshots/0123abcd/config.json"
    cp "$falcon" "$repo/snapshots/old/config.json"   # another revision: never read
    case $where in
      HF_HUB_CACHE) env HF_HUB_CACHE="$hub" HF_HOME="$dir/c2" "$bin" "$cmd" --model test-org/tiny-bloom --ctx 1024 --wide ;;
      HF_HOME) env HF_HOME="$dir/c2" XDG_CACHE_HOME="$dir/c3" "$bin" "$cmd" --model test-org/tiny-bloom --ctx 1024 --wide ;;
      XDG_CACHE_HOME) env XDG_CACHE_HOME="$dir/c3" "$bin" "$cmd" --model test-org/tiny-bloom --ctx 1024 --wide ;;
      HOME) "$bin" "$cmd" --model test-org/tiny-bloom --ctx 1024 --wide ;;
    esac > got.out 2>/dev/null
    same "$cmd --model org/name ($where)" "$repo/snapshots/0123abcd/config.json" $?
  done
done

# The catalogue wins over the cache: bigscience/bloom-560m is catalogued; a falcon config in the cache
# under that name is not read.
hub=$dir/home/.cache/huggingface/hub
repo=$hub/models--bigscience--bloom-560m
mkdir -p "$repo/refs" "$repo/snapshots/r1"
printf 'r1' > "$repo/refs/main"
cp "$falcon" "$repo/snapshots/r1/config.json"
"$bin" analyze --model bigscience/bloom-560m --ctx 1024 --wide > got.out 2>/dev/null || fail "catalogued name: exit $?"
grep -q '^model: bloom-560m (bigscience/bloom-560m)$' got.out || fail "catalogued name: not the catalogue's entry"
grep -q '^config: ' got.out && fail "catalogued name: read the cache"

# Bad inputs: exit 2, one line naming the input at fault.
mkdir -p empty
"$bin" analyze --config empty --ctx 1024 > got.out 2> got.err; rc=$?
refused "--config DIR without config.json" "empty/config.json"
head -c 5000000 /dev/zero | "$bin" analyze --config - --ctx 1024 > got.out 2> got.err; rc=$?
refused "--config - over the size limit" "standard input"
"$bin" analyze --config - --ctx 1024 < /dev/null > got.out 2> got.err; rc=$?
refused "--config - empty" "standard input"
repo=$hub/models--test-org--no-main
mkdir -p "$repo/snapshots/r1" && cp "$bloom" "$repo/snapshots/r1/config.json"
"$bin" analyze --model test-org/no-main --ctx 1024 > got.out 2> got.err; rc=$?
refused "cache without refs/main" "$repo/refs/main"
grep -qF -- "test-org/no-main" got.err || fail "cache without refs/main: the model is not named"
repo=$hub/models--test-org--gone
mkdir -p "$repo/refs" && printf 'deadbeef' > "$repo/refs/main"
"$bin" check --model test-org/gone --ctx 1024 > got.out 2> got.err; rc=$?
refused "refs/main naming a missing snapshot" "$repo/snapshots/deadbeef/config.json"
printf '../../../etc' > "$repo/refs/main"
"$bin" check --model test-org/gone --ctx 1024 > got.out 2> got.err; rc=$?
refused "refs/main that is not a revision" "$repo/refs/main"
# A name neither catalogued nor cached keeps the did-you-mean refusal.
"$bin" analyze --model test-org/absent --ctx 1024 > got.out 2> got.err; rc=$?
refused "org/name in no cache" "unknown model 'test-org/absent'"
exit 0
