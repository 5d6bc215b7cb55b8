#!/usr/bin/env bash
# check_includes.py fails where it should: a small tree whose core header includes session, and
# whose session target links an area its row forbids; then passes once both are fixed.
set -u
script="$(cd "$(dirname "$0")" && pwd)/check_includes.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include/tfdebug/core" "$work/include/tfdebug/session" "$work/src/core" "$work/src/session" "$work/build"
cat >"$work/include/README.md" <<'MD'
## Dependency rules
| area | may depend on | why |
|---|---|---|
| `core` | nothing of ours | |
| `session` | `core` | |
| `torch` | `core`, `session` | |
MD
echo '#include "tfdebug/session/session.hpp"' >"$work/include/tfdebug/core/stats.hpp"
echo '#include "tfdebug/core/stats.hpp"' >"$work/src/session/session.cpp"
printf 'core: \nsession: core torch\ntorch: core session\n' >"$work/build/tfdebug_areas.txt"
out=$(/usr/bin/python3 "$script" "$work" "$work/build")
status=$?
fails=0
[ $status -eq 1 ] || { echo "FAIL: expected exit 1, got $status"; fails=1; }
echo "$out" | grep -q 'include/tfdebug/core/stats.hpp:1: includes tfdebug/session/' || { echo "FAIL: the core header's include of session is not reported"; fails=1; }
echo "$out" | grep -q 'tfdebug::session links tfdebug::torch' || { echo "FAIL: the forbidden link is not reported"; fails=1; }
echo '#include "tfdebug/core/dtype.hpp"' >"$work/include/tfdebug/core/stats.hpp"
printf 'core: \nsession: core\n' >"$work/build/tfdebug_areas.txt"
/usr/bin/python3 "$script" "$work" "$work/build" >/dev/null || { echo "FAIL: the fixed tree is not accepted"; fails=1; }
[ $fails -eq 0 ] && echo "check_includes: reports both violations and accepts the fixed tree"
exit $fails
