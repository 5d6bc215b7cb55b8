# Sourced by the test scripts that run a tool of another project (protoc, dot, node, python3
# modules, npm test clients). Each of them is installed by scripts/install-deps.sh, so a missing
# one is a broken machine, not a reason to skip: the test fails at once and says what to run.
# (A skipped check hides a missing install step; CI once passed only because protoc had been
# installed by hand.)

require() {
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "FAIL: '$tool' is not installed; run scripts/install-deps.sh (it installs every tool the tests use)" >&2
      exit 1
    fi
  done
}

# require_python MODULE...: Debian's Python (/usr/bin/python3) can import each module.
require_python() {
  local module
  for module in "$@"; do
    if ! /usr/bin/python3 -c "import $module" >/dev/null 2>&1; then
      echo "FAIL: /usr/bin/python3 cannot import '$module'; run scripts/install-deps.sh" >&2
      exit 1
    fi
  done
}

# require_npm DIR PACKAGE...: the npm test clients of tests/npm/package.json, installed in DIR.
require_npm() {
  local dir="$1" package
  shift
  for package in "$@"; do
    if [ ! -f "$dir/node_modules/$package/package.json" ]; then
      echo "FAIL: the npm test client '$package' is not installed in $dir; run scripts/install-deps.sh (npm ci there)" >&2
      exit 1
    fi
  done
}
