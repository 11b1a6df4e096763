#!/usr/bin/env bash
# Installs gpuplane's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped, so a second run does no network work.
set -euo pipefail

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

if ((${#missing[@]} == 0)); then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
