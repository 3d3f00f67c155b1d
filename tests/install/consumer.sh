#!/bin/sh
# Install the build tree into a temporary prefix (cmake --install), check what is there, then configure,
# build and run a consumer project against it through find_package(AlibiBlind) and pkg-config, and a
# plain `cc $(pkg-config --cflags --libs alibi-blind)` build.
# usage: consumer.sh BUILD_DIR SOURCE_DIR C_COMPILER [FLAGS]  (FLAGS: e.g. -fsanitize=... of a sanitized build)
set -eu
build=$1; src=$2; cc=$3; flags=${4:-}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
fail=0
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1); libdir=${libdir%/pkgconfig}
for f in bin/alibi-blind include/alibi_blind.h include/abl/core/status.h share/man/man1/alibi-blind.1.gz \
         share/bash-completion/completions/alibi-blind share/zsh/site-functions/_alibi-blind \
         share/doc/alibi-blind/README.md share/doc/alibi-blind/spec.md share/doc/alibi-blind/architecture.md; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; fail=1; }
done
for f in libalibi-blind.a libalibi-blind.so pkgconfig/alibi-blind.pc cmake/AlibiBlind/AlibiBlindConfig.cmake; do
  [ -e "$libdir/$f" ] || { echo "not installed: ${libdir#$prefix/}/$f"; fail=1; }
done
# Versioned soname: libalibi-blind.so -> .so.MAJOR -> .so.MAJOR.MINOR.PATCH, SONAME libalibi-blind.so.MAJOR.
real=$(readlink -f "$libdir/libalibi-blind.so")
case "$(basename "$real")" in libalibi-blind.so.[0-9]*.[0-9]*.[0-9]*) ;; *) echo "unversioned shared library: $real"; fail=1;; esac
soname=$(objdump -p "$real" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
[ -z "$soname" ] || [ -e "$libdir/$soname" ] || { echo "SONAME $soname is not installed"; fail=1; }
case "$soname" in libalibi-blind.so.[0-9]*) ;; "") ;; *) echo "SONAME $soname is not versioned"; fail=1;; esac
# Every header that is installed compiles on its own (no hidden dependency on the source tree).
for h in $(cd "$prefix/include" && find . -name '*.h' | sed 's|^\./||'); do
  printf '#include "%s"\nint abl_header_check;\n' "$h" > "$tmp/h.c"
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $flags -c -I"$prefix/include" "$tmp/h.c" -o "$tmp/h.o" \
    || { echo "installed header does not compile alone: $h"; fail=1; }
done
"$prefix/bin/alibi-blind" --version >/dev/null || { echo "installed binary does not run"; fail=1; }

# The consumer project: shared and static targets through find_package, and pkg-config.
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if ! cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_C_COMPILER="$cc" \
       -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$flags" >"$tmp/configure.log" 2>&1; then
  cat "$tmp/configure.log"; exit 1
fi
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
for exe in consumer_shared consumer_static consumer_pkgconfig; do
  LD_LIBRARY_PATH="$libdir" "$tmp/consumer/$exe" || { echo "$exe failed"; fail=1; }
done
# The shared consumer really uses the installed shared library.
if command -v ldd >/dev/null 2>&1; then
  LD_LIBRARY_PATH="$libdir" ldd "$tmp/consumer/consumer_shared" | grep -q "libalibi-blind.so.[0-9]" \
    || { echo "consumer_shared is not linked against libalibi-blind.so"; fail=1; }
fi
# A plain compiler line with pkg-config.
if command -v pkg-config >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  "$cc" -std=c11 $flags -o "$tmp/plain" "$src/tests/install/consumer/main.c" $(pkg-config --cflags --libs alibi-blind) \
    && LD_LIBRARY_PATH="$libdir" "$tmp/plain" >/dev/null || { echo "pkg-config build failed"; fail=1; }
  [ "$(pkg-config --modversion alibi-blind)" = "$("$prefix/bin/alibi-blind" --version | awk '{print $2}')" ] \
    || { echo "pkg-config version differs from the binary's"; fail=1; }
fi
exit $fail
