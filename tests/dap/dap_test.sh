#!/usr/bin/env bash
# `tfdebug dap` against npm's @vscode/debugadapter-testsupport DebugClient (dap_test.js), spawned
# on standard input and output as an editor does, and connected over loopback TCP (--port 0); on a
# TorchScript model with data (dap_model_test.js, the model from tests/cli/make_debug_model.py);
# the VS Code extension manifest (editors/vscode/package.json) contributes the debugger, and its
# hovers read that run's shapes.json (vscode_shapes_test.js).
set -u
tfdebug="$1"
npm_dir="$2"
here="$(dirname "$0")"
source "$here/../cli/harness.sh"
require node
[ -d "$npm_dir/node_modules/@vscode/debugadapter-testsupport" ] ||
  { echo "FAIL: npm test clients missing; run scripts/install-deps.sh" >&2; exit 1; }

check "stdio" env NODE_PATH="$npm_dir/node_modules" timeout 180 node "$here/dap_test.js" "$tfdebug"
check "tcp" env NODE_PATH="$npm_dir/node_modules" timeout 180 node "$here/dap_test.js" "$tfdebug" tcp
require_python torch numpy
/usr/bin/python3 "$here/../cli/make_debug_model.py" "$work"
check "a TorchScript model with data" env NODE_PATH="$npm_dir/node_modules" timeout 180 \
  node "$here/dap_model_test.js" "$tfdebug" "$work"
check "the extension's hovers read the run's shapes.json" node "$here/vscode_shapes_test.js" "$work/dap_run/shapes.json"
check "the extension manifest contributes the tfdebug debugger running 'tfdebug dap'" node -e '
const m = require(process.argv[1]);
const d = m.contributes.debuggers[0];
if (d.type !== "tfdebug" || d.args[0] !== "dap" || !m.categories.includes("Debuggers")) process.exit(1);
if (!("fault" in d.configurationAttributes.launch.properties)) process.exit(1);
if (!("model" in d.configurationAttributes.launch.properties) || m.main !== "./extension.js") process.exit(1);
' "$(cd "$here/../../editors/vscode" && pwd)/package.json"
# A launch with a bad fault: exit 2 after the terminated and exited events, one line on stderr.
frame() { printf 'Content-Length: %d\r\n\r\n%s' "${#1}" "$1"; }
{
  frame '{"seq":1,"type":"request","command":"initialize"}'
  frame '{"seq":2,"type":"request","command":"launch","arguments":{"fault":"nope"}}'
  frame '{"seq":3,"type":"request","command":"configurationDone"}'
  sleep 2
  frame '{"seq":4,"type":"request","command":"disconnect"}'
} | timeout 60 "$tfdebug" dap >"$work/out" 2>"$work/err"
echo $? >"$work/rc"
check "bad launch arguments: exit 2" grep -qx 2 "$work/rc"
check "bad launch arguments: the exited event says 2" grep -qF '"exitCode":2' "$work/out"
check "bad launch arguments: one line on stderr" grep -qx "tfdebug dap: launch: --fault: unknown fault 'nope'; expected .*" "$work/err"
finish dap
