#!/usr/bin/env bash
# What the tests need from the machine beyond npm, checked before any test
# runs, so that a missing tool stops `npm test` at once with the line that
# installs it, never as a test failing deep inside. The one list of it:
# .ci/run relies on this script too.
#
# Each Debian package, and the probe that finds what the tests use of it:
#   python3-grpcio, python3-protobuf   Debian's Python runs the stock-client interop tests
#   protobuf-compiler(-grpc)           protoc and its Python gRPC plugin generate that client's stubs
#   docker-compose                     `docker-compose config` validates docker-compose.yml
#   chromium                           the chaos report's browser test (puppeteer-core downloads none)
#   etcd-server                        coordinator replicas on etcd, and the bench's etcd rows
#   faketime                           the clock-skew nemesis (libfaketime)
#
# Missing ones are installed when this runs as root with apt-get (as CI
# does), unless FENCER_TEST_NO_INSTALL=1; otherwise it prints the exact
# apt-get line and exits 1.
set -uo pipefail

probes=(
  "python3-grpcio|/usr/bin/python3 -c 'import grpc'"
  "python3-protobuf|/usr/bin/python3 -c 'import google.protobuf'"
  "protobuf-compiler|command -v protoc"
  "protobuf-compiler-grpc|command -v grpc_python_plugin"
  "docker-compose|command -v docker-compose"
  "chromium|command -v chromium"
  "etcd-server|command -v etcd"
  "faketime|command -v faketime"
)

missing() {
  local entry
  for entry in "${probes[@]}"; do
    sh -c "${entry#*|}" >/dev/null 2>&1 || printf '%s\n' "${entry%%|*}"
  done
}

mapfile -t need < <(missing)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "${FENCER_TEST_NO_INSTALL:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing ${need[*]}" >&2
  apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2 || exit 1
  mapfile -t need < <(missing)
  [ ${#need[@]} -eq 0 ] && exit 0
  echo "test prerequisites: still missing after apt-get: ${need[*]}" >&2
  exit 1
fi

{
  echo "npm test needs Debian packages that are not installed here: ${need[*]}"
  echo "install them, then run npm test again:"
  echo "  sudo apt-get install -y ${need[*]}"
} >&2
exit 1
