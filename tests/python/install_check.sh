#!/bin/sh
# usage: install_check.sh BUILD_DIR — `cmake --install` of the library and the Python package into a
# scratch prefix, then `import alibi_blind` from there (not from the checkout): it loads the installed
# library through _install.py and answers the paper's first number (spec §6: delta1 = 124 for the steepest
# of 16 press heads at N = 2048 in bf16, the paper's Table 1).
set -eu
build=${1:?usage: install_check.sh BUILD_DIR}
py=${ABL_PYTHON:-/usr/bin/python3}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for c in lib python; do cmake --install "$build" --prefix "$tmp/prefix" --component "$c" >/dev/null; done
site="$tmp/prefix/lib/python3/dist-packages"
[ -f "$site/alibi_blind/__init__.py" ] && [ -f "$site/alibi_blind/_install.py" ] || { echo "not installed under $site"; exit 1; }
cd "$tmp"
# ASan builds: the runtime first (ABL_PYTHON_PRELOAD, set by tests/python/CMakeLists.txt)
env -u ALIBI_BLIND_LIBRARY ${ABL_PYTHON_PRELOAD:+LD_PRELOAD="$ABL_PYTHON_PRELOAD"} PYTHONPATH="$site" "$py" - "$tmp/prefix" <<'PY'
import os, sys
import alibi_blind
lib = os.path.realpath(alibi_blind._lib.lib._name)
assert lib.startswith(os.path.realpath(sys.argv[1])), "loaded %s, not the installed library" % lib
assert alibi_blind.__file__.startswith(sys.argv[1]), alibi_blind.__file__
d = alibi_blind.analyze(heads=16, ctx=2048)
assert d["heads"][0]["delta"] == 124, d["heads"][0]
print("installed package: ok (%s)" % lib)
PY

# pip install --no-index --no-build-isolation (docs/python.md): where Debian's pip and setuptools are present,
# from a copy of python/ (the build writes beside its sources), imported from the target folder.
if "$py" -m pip --version >/dev/null 2>&1 && "$py" -c 'import setuptools' 2>/dev/null; then
  cp -r "$src/python" "$tmp/pysrc"
  "$py" -m pip install -q --no-index --no-build-isolation --target "$tmp/pip" "$tmp/pysrc" >"$tmp/pip.log" 2>&1 \
    || { cat "$tmp/pip.log"; echo "pip install of python/ failed"; exit 1; }
  env ${ABL_PYTHON_PRELOAD:+LD_PRELOAD="$ABL_PYTHON_PRELOAD"} PYTHONPATH="$tmp/pip" \
      ALIBI_BLIND_LIBRARY="$tmp/prefix/lib/libalibi-blind.so.0" "$py" -c '
import alibi_blind, sys
assert alibi_blind.__file__.startswith(sys.argv[1]), alibi_blind.__file__
assert alibi_blind.analyze(heads=16, ctx=2048)["heads"][0]["delta"] == 124' "$tmp/pip"
  echo "pip-installed package: ok"
else
  echo "pip install check: no pip or setuptools for $py (not part of the Debian way)"
fi
