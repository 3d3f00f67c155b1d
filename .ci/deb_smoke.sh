#!/usr/bin/env bash
# Smoke test of the four Debian packages that `cpack -G DEB` writes into DIR (cmake/abl_deb.cmake):
# their metadata and contents, then the CLI and a C consumer (cc + pkg-config, and find_package through
# tests/install/consumer) against the extracted tree (dpkg -x, no root needed). With --install (as root,
# in CI inside the fresh root of .ci/fresh_root.sh): `apt-get install` of the four, the same checks from
# /usr, the man page, then `apt-get purge` and a comparison of the file lists before and after: nothing
# may be left behind.
# usage: .ci/deb_smoke.sh DIR [--install]
set -euo pipefail
dir=$(cd "$1" && pwd); mode=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
triplet=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH)
pkgs=(alibi-blind libalibi-blind0 libalibi-blind-dev python3-alibi-blind)
debs=()
for p in "${pkgs[@]}"; do
  f=("$dir/${p}"_*.deb)
  [ "${#f[@]}" = 1 ] && [ -f "${f[0]}" ] || { echo "expected one ${p}_*.deb in $dir"; exit 1; }
  debs+=("${f[0]}")
  dpkg-deb --field "${f[0]}" Package Version Architecture Depends
  dpkg-deb --contents "${f[0]}" | awk '{print $NF == "->" ? $(NF-2) : ($(NF-1) == "->" ? $(NF-2) : $NF)}' > "$tmp/$p.contents"
done
dpkg-deb --field "${debs[1]}" Depends | grep -q libmpfr || { echo "libalibi-blind0 does not depend on libmpfr"; exit 1; }
dpkg-deb --field "${debs[2]}" Depends | grep -q "libalibi-blind0 (= " || { echo "the -dev package does not depend on its library"; exit 1; }
dpkg-deb --field "${debs[0]}" Maintainer | grep -qv '@localhost' || { echo "Maintainer is @localhost"; exit 1; }
has() { grep -qx "$2" "$tmp/$1.contents" || { echo "not in $1: $2"; exit 1; }; }
lib=./usr/lib/$triplet
for f in ./usr/bin/alibi-blind ./usr/share/man/man1/alibi-blind.1.gz ./usr/share/bash-completion/completions/alibi-blind \
         ./usr/share/zsh/vendor-completions/_alibi-blind ./usr/share/doc/alibi-blind/spec.md; do has alibi-blind "$f"; done
for f in "$lib/libalibi-blind.so.0" "$lib/libalibi-blind.so.0.2.0"; do has libalibi-blind0 "$f"; done
for f in "$lib/libalibi-blind.so" "$lib/libalibi-blind.a" ./usr/include/alibi_blind.h "$lib/pkgconfig/alibi-blind.pc" \
         "$lib/cmake/AlibiBlind/AlibiBlindConfig.cmake"; do has libalibi-blind-dev "$f"; done
for f in ./usr/lib/python3/dist-packages/alibi_blind/__init__.py ./usr/lib/python3/dist-packages/alibi_blind/_install.py; do
  has python3-alibi-blind "$f"; done
dpkg-deb --field "${debs[3]}" Depends | grep -q "libalibi-blind0 (>= " || { echo "python3-alibi-blind does not depend on its library"; exit 1; }
for p in "${pkgs[@]}"; do
  has "$p" "./usr/share/doc/$p/copyright"; has "$p" "./usr/share/doc/$p/changelog.Debian.gz"
done

# check ROOT: the binary answers the paper's first number, C programs build against the library.
check() {
  local root=$1 bin=$1/usr/bin/alibi-blind libdir=$1/usr/lib/$triplet
  local out; out=$(LD_LIBRARY_PATH=$libdir "$bin" analyze --heads 16 --ctx 2048 --format csv)
  # spec §6: delta1 = nint(126 ln 2 / 2^-0.5) = 124 for the steepest of 16 press heads (the paper's Table 1)
  echo "$out" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "delta") c = i } NR == 2 && (!c || $c != 124) { exit 1 }' || { echo "packaged binary: delta1 is not 124"; echo "$out" | head -3; exit 1; }
  "$bin" completion list >/dev/null
  bash -n "$root/usr/share/bash-completion/completions/alibi-blind"
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Werror -o "$tmp/consumer" "$src/tests/install/consumer/main.c" \
     $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs alibi-blind)
  LD_LIBRARY_PATH=$libdir "$tmp/consumer" >/dev/null
  LD_LIBRARY_PATH=$libdir ldd "$tmp/consumer" | grep "libalibi-blind.so.0 => $libdir" >/dev/null \
    || { echo "consumer does not load $libdir/libalibi-blind.so.0"; exit 1; }
  # find_package(AlibiBlind): the shared and static targets, and pkg-config through CMake.
  rm -rf "$tmp/cbuild"
  PKG_CONFIG_PATH=$libdir/pkgconfig cmake -S "$src/tests/install/consumer" -B "$tmp/cbuild" -DCMAKE_PREFIX_PATH="$root/usr" >"$tmp/cmake.log" 2>&1 \
    && cmake --build "$tmp/cbuild" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
  for c in consumer_shared consumer_static consumer_pkgconfig; do LD_LIBRARY_PATH=$libdir "$tmp/cbuild/$c" >/dev/null; done
  # the Python package loads the packaged library (through its _install.py, relative to itself)
  if command -v python3 >/dev/null; then
    # (no byte code written: purge must leave nothing behind; the package ships none, as dh_python3 would not)
    (cd "$tmp" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$root/usr/lib/python3/dist-packages python3 -c 'import alibi_blind as a
assert a.analyze(heads=16, ctx=2048)["heads"][0]["delta"] == 124') || { echo "python3-alibi-blind: import or delta1 failed"; exit 1; }
  fi
}

mkdir "$tmp/root"
for d in "${debs[@]}"; do dpkg -x "$d" "$tmp/root"; done
check "$tmp/root"
echo "extracted packages: ok"

if [ "$mode" = --install ]; then
  # Everything that is not scratch: the file list before, after install+purge must be the same.
  snapshot() { find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /root -o -path /var/log \
               -o -path /var/cache -o -path /var/lib/apt/lists -o -path "$tmp" \) -prune -o -print | sort; }
  snapshot > "$tmp/before"
  apt-get install -y --no-install-recommends "${debs[@]}" >/dev/null
  dpkg -s "${pkgs[@]}" | grep -c '^Status: install ok installed' | grep -qx "${#pkgs[@]}" || { echo "not all ${#pkgs[@]} installed"; exit 1; }
  check ""
  man -w alibi-blind >/dev/null 2>&1 || [ -f /usr/share/man/man1/alibi-blind.1.gz ]
  gzip -t /usr/share/man/man1/alibi-blind.1.gz
  # (into a file: grep -q stops reading early, and under pipefail ldconfig's SIGPIPE would fail the check)
  ldconfig -p > "$tmp/ldconfig"
  grep -q "libalibi-blind.so.0 .*=> \(/usr\)\?/lib/$triplet/libalibi-blind.so.0\$" "$tmp/ldconfig" || { echo "ldconfig does not know libalibi-blind.so.0"; exit 1; }
  apt-get purge -y "${pkgs[@]}" >/dev/null
  snapshot > "$tmp/after"
  if ! diff "$tmp/before" "$tmp/after" > "$tmp/diff"; then
    echo "apt-get purge left the system different:"; cat "$tmp/diff"; exit 1
  fi
  echo "installed packages: ok (installed, checked, purged, nothing left behind)"
fi
