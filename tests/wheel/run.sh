#!/usr/bin/env bash
# The wheel test: `pip wheel` builds loopcast's wheel offline (no build isolation, Debian's pip and
# setuptools; the extension comes from the CMake build tree given), a venv that sees Debian's
# packages installs it, and the reference scenario runs from outside the checkout on the presets
# the wheel bundles, in Python and through the `loopcast` command.
#   tests/wheel/run.sh PYTHON SOURCE_DIR CMAKE_BUILD_DIR WORK_DIR
set -euo pipefail
py=$1 src=$2 build=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
LOOPCAST_CMAKE_BUILD_DIR="$build" "$py" -m pip wheel --no-build-isolation --no-deps --no-index -q -w "$work/dist" "$src"
wheel=$(ls "$work"/dist/loopcast-*.whl)
"$py" -m venv --system-site-packages --without-pip "$work/venv"
"$py" -m pip --python "$work/venv/bin/python" install --no-deps --no-index -q "$wheel"
cd "$work"
unset LOOPCAST_MODELS PYTHONPATH
out=$("$work/venv/bin/python" - <<'PY'
import os, loopcast
assert "/venv/" in os.path.realpath(loopcast.__file__), loopcast.__file__
print(os.path.relpath(loopcast.models_dir(), os.path.dirname(loopcast.__file__)))
r = loopcast.run()
print(r["cloud"].first_429["bucket"], len(loopcast.presets("workload")) > 0)
here = os.path.dirname(loopcast.__file__)
print(all(os.path.isfile(os.path.join(here, f)) for f in ("py.typed", "_core.pyi")))  # typed, with the stub
PY
)
expected=$'models\ntotal_tpm True\nTrue'
if [ "$out" != "$expected" ]; then
  echo "the installed wheel printed:"; echo "$out"; echo "expected:"; echo "$expected"; exit 1
fi
# The `loopcast` command the wheel installs: the bundled program on the bundled presets, from
# outside the checkout, prints the reference report the checkout expects.
if ! "$work/venv/bin/loopcast" run > "$work/reference.txt"; then
  echo "the installed loopcast command failed"; exit 1
fi
if ! diff -u "$src/examples/reference.expected" "$work/reference.txt"; then
  echo "the installed loopcast command's reference report differs from examples/reference.expected"; exit 1
fi
echo "wheel $(basename "$wheel") installs, runs the reference scenario, and its loopcast command prints the report"
