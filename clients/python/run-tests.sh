#!/usr/bin/env bash
# The Python client's tests, as CI runs them (.ci/run): the package installed with pip from
# this directory without any index (`pip install --no-index --no-build-isolation`, the
# setuptools Debian's python3 ships), into an empty directory, then `python3 -m unittest`
# over tests/ with that installation (not the sources) on the path, against the service
# started by tests/serve.js on a free port with the embedded database.
#   clients/python/run-tests.sh [unittest arguments, e.g. -k Webhooks]
# PYTHON picks the interpreter; otherwise the first of python3 and /usr/bin/python3 that has
# pip, setuptools and wheel (pip builds a wheel even from a directory).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/pyclient-tests.XXXXXX)"
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]]; then
    exec {SERVE[1]}>&- 2>/dev/null || true   # stdin closed: serve.js stops the service
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

python=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import setuptools, wheel' 2>/dev/null && "$candidate" -m pip --version >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
cp -r "$here" "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
if [[ -n $python ]]; then
  echo "== pip install --no-index --no-build-isolation clients/python ($("$python" --version), into an empty directory)"
  "$python" -m pip install --quiet --no-index --no-build-isolation --disable-pip-version-check --target "$work/site" "$work/src" 2>&1 | grep -v "Running pip as the 'root' user" || true
  test -f "$work/site/robotics_marketplace/__init__.py"
else
  python="${PYTHON:-python3}"
  echo "== no python3 here has pip, setuptools and wheel: testing the sources on PYTHONPATH instead of an installation"
  mkdir -p "$work/site" && cp -r "$here/robotics_marketplace" "$work/site/"
fi
mkdir -p "$work/run" && cp -r "$here/tests" "$work/run/tests"

(cd "$root" && node bin/build.js --stale)
coproc SERVE { node "$here/tests/serve.js"; }
serve_pid=$SERVE_PID
read -r -t 180 service <&"${SERVE[0]}" || { echo "tests/serve.js did not start the service" >&2; exit 1; }
echo "== service at $(sed -E 's/.*"base_url":"([^"]+)".*/\1/' <<<"$service")"

cd "$work/run"
SVC_TEST_SERVICE="$service" PYTHONPATH="$work/site" PYTHONDONTWRITEBYTECODE=1 "$python" -m unittest discover -s tests -t . "$@"
