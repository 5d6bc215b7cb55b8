# Shared by the CLI test scripts (sourced): a scratch folder, `check NAME COMMAND...` which
# counts a pass when COMMAND exits 0, and `finish LABEL`, which prints the closing
# "N passed, N failed" line and exits non-zero on any failure.
source "$(dirname "${BASH_SOURCE[0]}")/../require.sh"
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() {
  local name="$1"
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name"
  fi
}

finish() {
  echo "$1: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
