#!/usr/bin/env bash
# Installs gpuplane's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped, so a second run does no network work.
# Prometheus' promtool and Alertmanager's amtool, which test the shipped alerts
# (scripts/test_alerts.sh), come from Debian's prometheus and prometheus-alertmanager packages
# too, but unpacked into .deps/bin rather than installed: installing them would start a
# Prometheus server and an Alertmanager on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format clang-tidy libclang-rt-14-dev
  libabsl-dev libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libre2-dev libsqlite3-dev libcpp-httplib-dev libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc
  curl libcurl4-openssl-dev libmimalloc-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
updated=0
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# unpack TOOL PACKAGE: /usr/bin/TOOL of the Debian PACKAGE into .deps/bin, unless there.
unpack() {
  local tool=$1 package=$2 download
  [[ -x .deps/bin/$tool ]] && return 0
  echo "install-deps: unpacking $tool from Debian's $package package into .deps/bin" >&2
  download=$(mktemp -d)
  if ! (cd "$download" && apt-get download -qq "$package" 2>/dev/null); then
    # The package lists may be empty (a fresh image): read them, then try once more.
    ((updated)) || $SUDO apt-get update -qq
    updated=1
    (cd "$download" && apt-get download -qq "$package")
  fi
  dpkg-deb -x "$download/${package}"_*.deb "$download/unpacked"
  mkdir -p .deps/bin
  mv "$download/unpacked/usr/bin/$tool" ".deps/bin/$tool"
  rm -rf "$download"
  ".deps/bin/$tool" --version >/dev/null 2>&1
}
unpack promtool prometheus
unpack amtool prometheus-alertmanager
