#!/usr/bin/env bash
# Installs every Debian package trustformers-debug needs to build, test and benchmark, and the npm
# test clients of tests/npm (independent readers of what tfdebug writes). Every tool a test or a
# bench script runs is named here: the tests fail, never skip, when one is missing
# (tests/require.sh), so a machine set up by this script alone runs the whole suite.
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
  # the live dashboard (tfdebug::serve): HTTP and Server-Sent Events
  libcpp-httplib-dev
  # `tfdebug top`: its full-screen dashboard (ncurses, the wide-character build: braille, blocks)
  libncurses-dev
  # `tfdebug console`: the debugger's REPL (tfdebug::ide: line editing, history, completion)
  libreadline-dev
  # viz: plots (cairo, text through pango), PNG (libpng), animated GIF (giflib), video (libav*)
  libcairo2-dev libpango1.0-dev libpng-dev libgif-dev libavcodec-dev libavformat-dev libavutil-dev
  libswscale-dev fonts-dejavu-core
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
  # independent checks of the interpretability surrogates (LIME's weighted Ridge), and of
  # robustness's exact binomial bounds and tests (scipy.special, scipy.stats)
  python3-sklearn python3-scipy
  # independent readers of what tfdebug writes: Excel workbooks (openpyxl), GraphViz (dot),
  # Perfetto and TensorBoard protobuf (protoc --decode_raw), TensorBoard's CRC32C (crcmod),
  # MLflow's meta.yaml (yaml)
  python3-openpyxl graphviz protobuf-compiler python3-crcmod python3-yaml
  # independent readers of pictures: rsvg-convert (SVG), ffprobe/ffmpeg (GIF and video), a real
  # browser for the HTML report (Chromium, driven by npm's playwright-core), tmux for `tfdebug top`
  # and `tfdebug console`
  librsvg2-bin ffmpeg chromium tmux
  # a pseudo-terminal for the terminal-output tests (script(1); essential in Debian, named for clarity)
  bsdutils
  # npm test clients (tests/npm) and the flame graph's inline script check (node --check)
  nodejs
  # bench scripts: GNU time (peak RSS), bc, valgrind (callgrind instruction counts), hyperfine
  # (start-up times), Debian's Python (the numpy peer)
  time bc valgrind hyperfine python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_install() {
  [ "$updated" -eq 1 ] || { $SUDO apt-get update -qq; updated=1; }
  $SUDO apt-get install -y -qq --no-install-recommends "$@"
}

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi
# Debian's nodejs comes without npm (a package of its own); NodeSource's nodejs bundles it, and
# Debian's npm would conflict with it, so npm is installed only when the command is missing.
if ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: installing npm"
  apt_install npm
fi

# The npm test clients, at the versions of tests/npm/package-lock.json; again only when the lock
# changed since the last install.
here="$(cd "$(dirname "$0")/.." && pwd)"
npm_dir="$here/tests/npm"
stamp="$npm_dir/node_modules/.tfdebug-lock"
if ! cmp -s "$npm_dir/package-lock.json" "$stamp" 2>/dev/null; then
  echo "install-deps: npm ci in tests/npm"
  (cd "$npm_dir" && timeout 600 npm ci --no-audit --no-fund --silent)
  cp "$npm_dir/package-lock.json" "$stamp"
fi
