#!/bin/sh
# The project, tests included, configures on a machine with only what it requires (issue 16: without
# python3, `cmake -S . -B build` stopped at set_tests_properties(plot.files)). A configure of SOURCE in a
# scratch directory sees only the required pkg-config modules (mpfr, gmp, jansson, sleef, cmocka) and no program
# from PATH or the system directories (so no python3, chromium or zsh): it must pass, and its summary
# must name what it left out. Then -DABL_PLOT=ON must fail there, naming the packages to install.
# usage: config_no_tools.sh SOURCE C_COMPILER
set -u
src=$1; cc=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc"
for m in mpfr gmp jansson sleef cmocka; do
  d=$(pkg-config --variable=pcfiledir "$m") || { echo "pkg-config cannot find $m"; exit 1; }
  ln -s "$d/$m.pc" "$tmp/pc/$m.pc"
done
ignore="/usr/bin;/bin;/usr/sbin;/sbin;/usr/local/bin;/usr/local/sbin"
old_ifs=$IFS; IFS=:
for d in $PATH; do [ -n "$d" ] && ignore="$ignore;$d"; done
IFS=$old_ifs
# The tools CMake itself needs are given by path, so that ignoring the directories hides only the optional ones.
configure() {
  PKG_CONFIG_LIBDIR=$tmp/pc cmake -S "$src" -B "$tmp/build" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_MAKE_PROGRAM="$(command -v make)" -DCMAKE_AR="$(command -v ar)" -DCMAKE_RANLIB="$(command -v ranlib)" \
    -DPKG_CONFIG_EXECUTABLE="$(command -v pkg-config)" -DCMAKE_IGNORE_PATH="$ignore" -DBUILD_TESTING=ON "$@" > "$tmp/log" 2>&1
}
fail=0
if ! configure; then echo "configure without the optional tools failed:"; cat "$tmp/log"; exit 1; fi
line=$(grep 'optional features:' "$tmp/log")
echo "$line"
echo "$line" | grep -q 'pictures (PLplot): OFF' || { echo "summary does not say PLplot is off"; fail=1; }
echo "$line" | grep -q 'tools missing: .*python3' || { echo "summary does not name python3 as missing"; fail=1; }
ctest --test-dir "$tmp/build" -N > "$tmp/tests"
grep -Eq 'plot\.files|doc\.json_schema|report\.browser|unit\.test_plot$' "$tmp/tests" && { echo "a test needing a missing tool is registered"; fail=1; }
grep -q 'noplot.plot_bias' "$tmp/tests" || { echo "the refusal goldens are not registered without PLplot"; fail=1; }
rm -rf "$tmp/build"
if configure -DABL_PLOT=ON; then echo "-DABL_PLOT=ON configured without PLplot"; fail=1
else grep -q 'libplplot-dev plplot-driver-cairo' "$tmp/log" || { echo "-DABL_PLOT=ON: no package named"; cat "$tmp/log"; fail=1; }
fi
exit $fail
