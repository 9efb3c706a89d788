#!/usr/bin/env bash
# The TypeScript SDK's tests, as CI runs them (.ci/run): the SDK built and packed with
# `npm pack`, the tarball installed into an empty directory (`npm install --offline`: the SDK
# has no runtime dependency, so nothing is fetched and none of the server's dependencies is
# there), then, against the service started by clients/python/tests/serve.js on a free port
# with the embedded database, the example script (examples/publish-buy-download.mjs) and the
# node:test suite (test/*.test.mjs: the SDK, and the robomarket CLI as npm linked its bin),
# both importing the installed package. `npx --package=<tarball> robomarket` is checked too.
#   clients/typescript/run-tests.sh [node --test arguments, e.g. --test-name-pattern=webhooks]
# The build uses the repository's typescript and @types/node (the SDK's devDependencies, the
# same versions); its generated types are checked against the live document by `npm run lint:openapi`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/ts-sdk-tests.XXXXXX)"
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]]; then
    exec {SERVE[1]}>&- 2>/dev/null || true   # stdin closed: serve.js stops the service
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

version="$(node -p "require('$here/package.json').version")"
grep -q "VERSION = '$version'" "$here/src/version.ts" || { echo "src/version.ts does not say $version (package.json's version)" >&2; exit 1; }

echo "== npm pack clients/typescript (builds dist/ with tsc)"
(cd "$here" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball="$(ls "$work"/robotics-marketplace-sdk-*.tgz)"

echo "== npm install $(basename "$tarball") into an empty directory"
mkdir -p "$work/run"
cd "$work/run"
printf '{ "name": "sdk-tests", "private": true, "type": "module" }\n' > package.json
npm install --offline --no-audit --no-fund --silent "$tarball"
test -f node_modules/@robotics-marketplace/sdk/dist/index.d.ts
# Nothing but the SDK: it brings no dependency.
extra="$(ls node_modules | grep -v '^@robotics-marketplace$' | grep -v '^\.' || true)"
[[ -z $extra ]] || { echo "the tarball pulled in: $extra" >&2; exit 1; }
cp -r "$here/test" "$here/examples" .
echo "== the package's types, as a TypeScript user's code sees them (test/consumer.ts)"
node "$root/node_modules/typescript/bin/tsc" --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 \
  --types node --typeRoots "$root/node_modules/@types" test/consumer.ts
node -e "const { Marketplace, constructEvent } = require('@robotics-marketplace/sdk'); if (typeof Marketplace !== 'function' || typeof constructEvent !== 'function') process.exit(1)"

echo "== npx: the robomarket CLI from the tarball alone (an empty directory, an empty npm cache, offline)"
mkdir -p "$work/npx"
got="$(cd "$work/npx" && npm exec --offline --yes --cache "$work/npx/cache" --package="$tarball" -- robomarket --version)"
[[ $got == "$version" ]] || { echo "npx robomarket --version said '$got', not $version" >&2; exit 1; }
test -x node_modules/.bin/robomarket

(cd "$root" && node bin/build.js --stale)
coproc SERVE { node "$root/clients/python/tests/serve.js"; }
serve_pid=$SERVE_PID
read -r -t 180 service <&"${SERVE[0]}" || { echo "serve.js did not start the service" >&2; exit 1; }
base="$(node -p 'JSON.parse(process.argv[1]).base_url' "$service")"
echo "== service at $base"

echo "== examples/publish-buy-download.mjs"
mkdir -p "$work/tmp"   # what the example and the tests leave in the temp directory goes with $work
TMPDIR="$work/tmp" SVC_URL="$base" SELLER_KEY="$(node -p 'JSON.parse(process.argv[1]).seller_key' "$service")" BUYER_KEY="$(node -p 'JSON.parse(process.argv[1]).buyer_key' "$service")" \
  node examples/publish-buy-download.mjs "$root/examples/policy.onnx"

echo "== node --test"
TMPDIR="$work/tmp" SVC_TEST_SERVICE="$service" SVC_REPO_ROOT="$root" node --test --test-concurrency=1 "$@" test/*.test.mjs
