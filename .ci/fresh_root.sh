#!/usr/bin/env bash
# README's two quick-start commands on a bare Debian 12, as a newcomer runs them: a fresh
# `debootstrap --variant=minbase bookworm` root (from the mirror the host's apt uses), with only
# gcc g++ make cmake git ca-certificates added (issue 16's reproducer), a `git clone` of this checkout's
# HEAD, then README's setup command and test command, each timed. With --debs DIR, the three Debian
# packages in DIR are then installed into the same root, smoke-tested (.ci/deb_smoke.sh: the CLI, a C
# consumer through pkg-config and find_package), purged, and the root's file list compared with the one
# before the install. /proc, /sys and /dev are bind-mounted and always unmounted (trap), the root removed.
#
# usage (as root): .ci/fresh_root.sh [--only setup] [--debs DIR] [--keep]
#   --only setup  run README's setup command only (a quick check of the lean command, ~3 min + debootstrap)
#   --debs DIR    after both commands, install/smoke/purge DIR/*.deb in the root (CI does this)
#   --keep        keep the root (unmounted) for inspection; its path is printed
# Env: ABL_FRESH_MIRROR overrides the mirror; ABL_FRESH_TMP the parent directory of the root (/var/tmp);
# ABL_FRESH_SRC the checkout (default: this script's), for running a copy of the script.
set -euo pipefail
src=${ABL_FRESH_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
only=""; debs=""; keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --only) only=$2; shift 2;;
    --debs) debs=$(cd "$2" && pwd); shift 2;;
    --keep) keep=1; shift;;
    *) echo "fresh_root.sh: unknown argument $1 (usage: [--only setup] [--debs DIR] [--keep])" >&2; exit 2;;
  esac
done
[ -z "$only" ] || [ "$only" = setup ] || { echo "fresh_root.sh: --only takes 'setup'" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "fresh_root.sh: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh_root.sh: apt-get install debootstrap" >&2; exit 2; }

# The mirror of the host's apt: the first deb URI serving bookworm (one-line or deb822 sources).
host_mirror() {
  { grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | sed -E 's/\[[^]]*\]//' | awk '$3 == "bookworm" {print $2}'
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      awk 'BEGIN {RS=""} /(^|\n)Types:[^\n]*deb( |\n|$)/ && /(^|\n)Suites:[^\n]*[ \t]bookworm( |\n|$)/ {
             if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) { u = substr($0, RSTART, RLENGTH); sub(/.*URIs:[ \t]*/, "", u); print u } }' "$f"
    done; } | head -1
}
mirror=${ABL_FRESH_MIRROR:-$(host_mirror)}
[ -n "$mirror" ] || { echo "fresh_root.sh: no bookworm mirror in /etc/apt/sources.list*; set ABL_FRESH_MIRROR" >&2; exit 2; }

# README's commands, extracted as .ci/run always did (the fenced sh block after each tag).
readme_cmd() { awk -v tag="$1" '$0 ~ "<!-- " tag " -->" {grab=1; next} grab && /^```sh$/ {inblock=1; next}
                                  inblock && /^```$/ {exit} inblock {print}' "$src/README.md"; }
setup_cmd=$(readme_cmd quickstart-setup); test_cmd=$(readme_cmd quickstart-test)
[ -n "$setup_cmd" ] && [ -n "$test_cmd" ] || { echo "fresh_root.sh: README quick-start commands not found" >&2; exit 1; }

root=$(mktemp -d "${ABL_FRESH_TMP:-/var/tmp}/abl-fresh.XXXXXX")
mounted=()
cleanup() {
  local rc=$? i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || echo "fresh_root.sh: could not unmount ${mounted[$i]}" >&2
  done
  if [ "$keep" = 1 ]; then echo "root kept: $root"
  elif ! grep -q " $root/" /proc/mounts; then rm -rf --one-file-system "$root"
  else echo "fresh_root.sh: $root still has mounts; not removed" >&2; rc=1; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n=== fresh root: %s\n' "$*"; }
# in_root COMMAND: bash in the root, clean environment, in the clone; its wall time is printed.
in_root() {
  local t0 t1 rc=0
  printf '%s\n' "$1" > "$root/root/abl-step.sh"
  t0=$(date +%s.%N)
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
      bash -euo pipefail -c 'cd /root/alibi-blind && . /root/abl-step.sh' 2>&1 | tee "$root/root/abl-step.log" || rc=$?
  t1=$(date +%s.%N)
  awk -v what="$2" -v rc="$rc" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "=== fresh root: %s: exit %d, %.0f s wall\n", what, rc, t1 - t0 }'
  return "$rc"
}

step "debootstrap --variant=minbase bookworm $root $mirror"
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 \
  || { tail -30 "$root.debootstrap.log"; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
echo "debootstrap: $(( $(date +%s) - t0 )) s"
for m in proc sys dev dev/pts; do
  mount --bind "/$m" "$root/$m"; mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The newcomer's checkout: a clone of HEAD (what is committed is what is tested).
git clone --quiet --no-hardlinks "$src" "$root/root/alibi-blind"
git -C "$root/root/alibi-blind" fetch --quiet "$src" HEAD   # the checkout's HEAD, even detached or not a branch
git -C "$root/root/alibi-blind" checkout --quiet --detach FETCH_HEAD
echo "testing commit $(git -C "$root/root/alibi-blind" log -1 --format='%h %s' | cut -c1-100)"

step "the issue's bare machine: apt-get install gcc g++ make cmake git ca-certificates"
in_root 'apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc g++ make cmake git ca-certificates >/dev/null' "base packages"

step "README setup command: $setup_cmd"
in_root "$setup_cmd" "README setup command"
[ "$only" = setup ] && { step "passed (setup command only)"; exit 0; }

# The class of issue 16's defect: the tests configure with none of the optional tools (no python3, no
# PLplot, no chromium); only cmocka, which they need, is added for this check.
step "the tests configure on the lean machine (only libcmocka-dev added)"
in_root 'apt-get install -y -qq --no-install-recommends libcmocka-dev >/dev/null && cmake -S . -B build-lean -DBUILD_TESTING=ON -DABL_WERROR=ON >/dev/null && ctest --test-dir build-lean -N | tail -1 && rm -rf build-lean' "lean test configure"

step "README test command: $test_cmd"
in_root "$test_cmd" "README test command"
# Nothing skipped that the command could have installed: gpu.kernels and gpu.backward (a CUDA device) are the only tests
# allowed to skip (torch.validate runs: the command installs python3-torch).
skipped=$(awk '/The following tests did not run:/ {on=1; next} on && !/^[[:space:]]+[0-9]+ - / {on=0}
               on {print $3}' "$root/root/abl-step.log" \
          | grep -vxE 'gpu\.(kernels|backward)' || true)
[ -z "$skipped" ] || { echo "fresh_root.sh: skipped in a full install: $skipped" >&2; exit 1; }

if [ -n "$debs" ]; then
  step "Debian packages from $debs: install, smoke test, purge, nothing left behind"
  mkdir "$root/root/debs"; cp "$debs"/*.deb "$root/root/debs/"
  in_root '.ci/deb_smoke.sh /root/debs --install' "package smoke test"
fi
step "passed"
