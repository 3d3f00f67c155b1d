#!/usr/bin/env bash
# Smoke test of the Debian package built by `cpack -G DEB` in BUILD_DIR: its metadata and contents, then
# the packaged binary and library run from an extracted tree (dpkg -x, no root needed); with --install
# (CI, as root) also `apt-get install ./pkg.deb` into the system, the same checks from /usr, and removal.
# usage: .ci/deb_smoke.sh BUILD_DIR [--install]
set -euo pipefail
build=$1; mode=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
debs=("$build"/alibi-blind_*.deb)
[ "${#debs[@]}" = 1 ] && [ -f "${debs[0]}" ] || { echo "expected one alibi-blind_*.deb in $build"; exit 1; }
deb=$(cd "$(dirname "${debs[0]}")" && pwd)/$(basename "${debs[0]}")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dpkg-deb --field "$deb" Package Version Depends
dpkg-deb --field "$deb" Depends | grep -q libmpfr || { echo "package does not depend on libmpfr"; exit 1; }
dpkg-deb --contents "$deb" > "$tmp/contents"
for f in ./usr/bin/alibi-blind ./usr/lib/libalibi-blind.so.0 ./usr/lib/libalibi-blind.a ./usr/include/alibi_blind.h \
         ./usr/lib/pkgconfig/alibi-blind.pc ./usr/lib/cmake/AlibiBlind/AlibiBlindConfig.cmake \
         ./usr/share/man/man1/alibi-blind.1 ./usr/share/bash-completion/completions/alibi-blind \
         ./usr/share/zsh/site-functions/_alibi-blind ./usr/share/doc/alibi-blind/spec.md; do
  grep -q " $f\( \|$\)" "$tmp/contents" || { echo "not in the package: $f"; exit 1; }
done

# check ROOT BIN LIBDIR: the binary answers the paper's first number, a program builds against the library.
check() {
  local root=$1 bin=$2 libdir=$3
  local out; out=$(LD_LIBRARY_PATH=$libdir "$bin" analyze --heads 16 --ctx 2048 --format csv)
  # spec §6: delta1 = nint(126 ln 2 / 2^-0.5) = 124 for the steepest of 16 press heads (the paper's Table 1)
  echo "$out" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "delta") c = i } NR == 2 && (!c || $c != 124) { exit 1 }' || { echo "packaged binary: delta1 is not 124"; echo "$out" | head -3; exit 1; }
  "$bin" completion list >/dev/null
  PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --exists alibi-blind
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Werror -o "$tmp/consumer" "$src/tests/install/consumer/main.c" \
     $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs alibi-blind)
  LD_LIBRARY_PATH=$libdir "$tmp/consumer"
  LD_LIBRARY_PATH=$libdir ldd "$tmp/consumer" | grep "libalibi-blind.so.0 => $libdir" >/dev/null \
    || { echo "consumer does not load $libdir/libalibi-blind.so.0"; exit 1; }
  bash -n "$root/usr/share/bash-completion/completions/alibi-blind"
}

dpkg -x "$deb" "$tmp/root"
check "$tmp/root" "$tmp/root/usr/bin/alibi-blind" "$tmp/root/usr/lib"
echo "extracted package: ok"

if [ "$mode" = --install ]; then
  apt-get install -y --no-install-recommends "$deb" >/dev/null
  check "" /usr/bin/alibi-blind /usr/lib
  man -w alibi-blind >/dev/null 2>&1 || [ -f /usr/share/man/man1/alibi-blind.1 ]
  dpkg -s alibi-blind | grep -q '^Status: install ok installed'
  apt-get purge -y alibi-blind >/dev/null
  [ ! -e /usr/bin/alibi-blind ] || { echo "apt-get purge left /usr/bin/alibi-blind"; exit 1; }
  echo "installed package: ok (installed, checked, removed)"
fi
