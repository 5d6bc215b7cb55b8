#!/usr/bin/env bash
# Runs every command line that README.md and docs/*.md show as `$ tfdebug ...` inside fenced
# blocks, from the repository root, with the built tfdebug first on PATH. A command documented
# to fail ends with `# exit N`; every other command must exit 0. Pages after the first two
# arguments: only those (ctest runs one test per page, so that the pages run side by side).
set -u
bin_dir="$1"
root="$2"
shift 2
cd "$root"
pages=("$@")
[ "${#pages[@]}" -gt 0 ] || pages=(README.md docs/*.md)
export PATH="$bin_dir:$PATH"
passed=0
failed=0
skipped=0
# `tfdebug demo`, `tfdebug explain`, `tfdebug attack`, `tfdebug robust`, `tfdebug console`, `tfdebug dap` and `tfdebug graph --demo` exist only
# in a build with LibTorch; without it their commands are skipped.
has_demo=0
tfdebug --help 2>/dev/null | grep -q "^  demo " && has_demo=1
while IFS= read -r line; do
  file="${line%%:*}"
  cmd="${line#*:\$ }"
  if [ "$has_demo" -eq 0 ] && [[ "$cmd" == "tfdebug demo"* || "$cmd" == "tfdebug explain"* || "$cmd" == "tfdebug attack"* || "$cmd" == "tfdebug robust"* || "$cmd" == "tfdebug console"* || "$cmd" == "tfdebug dap"* ||
    "$cmd" == *" --demo"* ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  expected=0
  if [[ "$cmd" =~ \#\ exit\ ([0-9]+)$ ]]; then
    expected="${BASH_REMATCH[1]}"
    cmd="${cmd%%#*}"
  fi
  bash -c "$cmd" >/dev/null 2>&1
  got=$?
  if [ "$got" -eq "$expected" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL ($file): exit $got, expected $expected: $cmd"
  fi
done < <(grep -H '^\$ tfdebug' "${pages[@]}")
echo "docs: $passed passed, $failed failed, $skipped skipped (no LibTorch)"
[ $((passed + skipped)) -gt 0 ] && [ "$failed" -eq 0 ]
