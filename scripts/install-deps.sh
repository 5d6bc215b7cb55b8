#!/usr/bin/env bash
# Installs every Debian package trustformers-debug needs to build, test and benchmark.
# Idempotent: when everything is present it does nothing (and needs no network).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache clang-format clang-tidy pkg-config
  # libFuzzer targets (scripts/fuzz.sh)
  clang libclang-rt-14-dev
  # core: SIMD with run-time dispatch
  libhwy-dev
  # model files: .npz and torch.save archives (ZIP; deflate through zlib)
  zlib1g-dev
  # CLI and report writers (Excel workbooks: libxlsxwriter)
  libcli11-dev nlohmann-json3-dev libfmt-dev libxlsxwriter-dev
  # session: run configuration files in TOML
  libtomlplusplus-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # the LibTorch adapter (tfdebug::torch) and tfdebug demo
  libtorch-dev
  # peers and independent references in tests/bench
  python3-numpy libopenblas0-pthread
  # independent writers/readers of model files in tests: torch.save, onnx; ONNX conformance models
  python3-torch python3-onnx libonnx-testdata
  # independent readers of what tfdebug writes: Excel workbooks (openpyxl), GraphViz (dot)
  python3-openpyxl graphviz
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
