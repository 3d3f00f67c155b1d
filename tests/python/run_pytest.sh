#!/bin/sh
# usage: run_pytest.sh SOURCE_DIR LIBRARY CLI — pytest over tests/python with the package from SOURCE_DIR/python,
# the shared library LIBRARY and the CLI binary CLI (the one built beside it).
set -u
src=${1:?usage: run_pytest.sh SOURCE_DIR LIBRARY CLI}
py=${ABL_PYTHON:-/usr/bin/python3}
"$py" -c 'import pytest, numpy' 2>/dev/null || { echo "run_pytest: $py lacks pytest or numpy: skipped"; exit 77; }
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" ALIBI_BLIND_LIBRARY="$2" ALIBI_BLIND_CLI="$3"
# ASan builds: the library needs the runtime loaded first (ABL_PYTHON_PRELOAD, set by tests/python/CMakeLists.txt)
[ -n "${ABL_PYTHON_PRELOAD:-}" ] && export LD_PRELOAD="$ABL_PYTHON_PRELOAD"
exec "$py" -m pytest -q -p no:cacheprovider "$src/tests/python"
