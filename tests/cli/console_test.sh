#!/usr/bin/env bash
# `tfdebug console --demo` driven by scripted standard input (docs/debugger.md): the run stops
# at the aten::log that makes the demo's first NaN and shows its module stack, phase, step and
# its input's statistics; tensors saved with `save` are read back by numpy and agree with what
# `stats` printed; stepping by op, module and step; bad options and bad commands give one-line
# errors (exit 2 for options; the console goes on after a bad command).
set -u
tfdebug="$1"
source "$(dirname "$0")/harness.sh"
require_python numpy

console() {  # console NAME [OPTIONS...] < commands: output in $work/NAME.txt, exit code in $work/NAME.rc
  local name="$1"
  shift
  "$tfdebug" console "$@" >"$work/$name.txt" 2>&1
  echo $? >"$work/$name.rc"
}

# The issue's check, with a save of the input for numpy.
printf 'break nan\ncontinue\nwhere\nstats inputs\nsave input0 %s\nsave output %s\nquit\n' \
  "$work/log_input.npy" "$work/log_output.npy" | console nan --demo --fault log
check "nan: exit 0" grep -qx 0 "$work/nan.rc"
check "nan: stopped at the breakpoint" grep -qx "stopped: breakpoint 1: nan" "$work/nan.txt"
check "nan: the op, its module, phase and step" \
  grep -qx "  aten::log in blocks.1.mlp  (forward, step 73)  f32\[32, 16, 64\]" "$work/nan.txt"
check "nan: where shows the module stack" bash -c "grep -A6 -x '(tfdebug) where' '$work/nan.txt' | tr '\n' '|' |
  grep -qF '#0 aten::log  f32[32, 16, 64]  (output)|#1 blocks.1.mlp|#2 blocks.1|#3 blocks|#4 (model)|phase forward, step 73, thread 1|'"
check "nan: the input's statistics show the negative value" \
  grep -qE "^input0  f32\[32, 16, 64\]  f32 count 32768  min -[0-9.e-]+  .*  negative 1  zero 0  nan 0  inf 0$" "$work/nan.txt"
check "nan: quit stops the run at step 73" grep -q "^run stopped by quit after 74 of 200 steps" "$work/nan.txt"
check "nan: numpy reads the saved tensors; they agree with stats and with log" $py - "$work" <<'PY'
import re, sys
import numpy as np
work = sys.argv[1]
x = np.load(f"{work}/log_input.npy")
y = np.load(f"{work}/log_output.npy")
assert x.shape == (32, 16, 64) and x.dtype == np.float32, (x.shape, x.dtype)
text = open(f"{work}/nan.txt").read()
line = re.search(r"^input0 .* min (\S+)  max (\S+)  mean (\S+)  std (\S+)  abs_max (\S+)  negative (\d+)", text, re.M)
lo, hi, mean, std, absmax, negative = line.groups()
assert float(lo) == float(f"{x.min():.5g}"), (lo, x.min())
assert float(hi) == float(f"{x.max():.5g}"), (hi, x.max())
assert abs(float(mean) - x.mean(dtype=np.float64)) <= 1e-4 * abs(float(mean)), (mean, x.mean())
assert abs(float(std) - x.std(dtype=np.float64)) <= 1e-4 * float(std), (std, x.std())
assert int(negative) == int((x < 0).sum()) == 1
# The output is log of the input: NaN exactly where the input is negative.
with np.errstate(invalid="ignore"):
    assert np.array_equal(np.isnan(y), x < 0)
    assert np.allclose(y[x >= 0], np.log(x[x >= 0]), rtol=1e-6)
PY

# Stepping from a module's backward: next op, next module, end of the step; tensors by name.
printf '%s\n' 'break module blocks.0.mlp backward once' continue where next step finish \
  'print blocks.0.mlp.fc1.weight[0, :3]' "save blocks.0.mlp.fc1.weight.grad $work/grad.npy" \
  'stats blocks.0.mlp.fc1.weight.grad' 'info breakpoints' detach | console steps --demo --steps 3 --every 0
check "steps: exit 0, ran to the end after detach" bash -c "grep -qx 0 '$work/steps.rc' &&
  grep -q '^run finished after 3 of 3 steps' '$work/steps.txt'"
check "steps: entered blocks.0.mlp in backward, step 0" \
  grep -qE "^stopped: breakpoint 1: module blocks.0.mlp backward once, entered blocks.0.mlp \(backward\)$" "$work/steps.txt"
check "steps: next op, next module, end of the step" bash -c "grep '^stopped: ' '$work/steps.txt' | sed 1d |
  sed -E 's/(next module): .*/\1/' | tr '\n' '|' | grep -qx 'stopped: next op|stopped: next module|stopped: step 0 ended|'"
check "steps: finish stops at step 1's first op" grep -qE "^  .* in .*  \(forward, step 1\)" "$work/steps.txt"
check "steps: a parameter's values sliced" grep -qE "^f32\[3\] \[-?[0-9.e-]+, -?[0-9.e-]+, -?[0-9.e-]+\]$" "$work/steps.txt"
check "steps: the one-shot breakpoint is gone" grep -qx "no breakpoints" "$work/steps.txt"
check "steps: the gradient saved agrees with stats" $py - "$work" <<'PY'
import re, sys
import numpy as np
work = sys.argv[1]
g = np.load(f"{work}/grad.npy")
assert g.shape == (64, 32), g.shape
text = open(f"{work}/steps.txt").read()
lo, hi = re.search(r"^blocks\.0\.mlp\.fc1\.weight\.grad  f32\[64, 32\]  f32 count 2048  min (\S+)  max (\S+)", text, re.M).groups()
assert float(lo) == float(f"{g.min():.5g}") and float(hi) == float(f"{g.max():.5g}"), (lo, hi, g.min(), g.max())
PY

# A condition on statistics, a watch, the findings; the end of the input lets the run finish.
printf '%s\n' 'break op aten::mm* if abs_max > 1e30' 'break step 2' 'watch *aten::log' continue findings \
  'info watch' | console cond --demo --fault log --steps 4 --every 0
check "cond: stopped only at step 2 (no mm reaches 1e30)" bash -c "[ \$(grep -c '^stopped: ' '$work/cond.txt') = 1 ] &&
  grep -qx 'stopped: breakpoint 2: step 2' '$work/cond.txt'"
check "cond: the watched log's statistics" grep -qE "^watch \*aten::log: f32 count 32768  min .*\(blocks\.1\.mlp aten::log, step [12]\)  kept as watch1 f32\[32, 16, 64\]$" "$work/cond.txt"
check "cond: end of input, the run goes on to its end" bash -c "grep -qx 'end of input: the run goes on without stopping' '$work/cond.txt' &&
  grep -q '^run finished after 4 of 4 steps' '$work/cond.txt'"

# Help, and bad commands: one line each, the console goes on.
printf '%s\n' help 'help break' frobnicate 'break if absmax > 1' 'print output' 'break step x' 'delete 9' \
  'break op aten::nope' continue | console bad --demo --steps 2 --every 0
check "bad: exit 0" grep -qx 0 "$work/bad.rc"
check "bad: help lists every command" bash -c "for c in break tbreak cond ignore delete continue next step finish where print inspect \
  stats hist watch findings save quit help; do grep -q \"^\$c\" '$work/bad.txt' || exit 1; done"
check "bad: unknown command" grep -qx "error: unknown command 'frobnicate'; 'help' lists the commands" "$work/bad.txt"
check "bad: unknown statistic" grep -q "^error: condition: unknown statistic 'absmax'; expected one of min, max" "$work/bad.txt"
check "bad: not stopped" grep -qx "error: the run is not stopped: set a breakpoint and 'continue'" "$work/bad.txt"
check "bad: step number" grep -qx "error: break step: expected a step number >= 0, got 'x'" "$work/bad.txt"
check "bad: no such breakpoint" grep -qx "error: no breakpoint 9" "$work/bad.txt"
check "bad: a breakpoint never hit lets the run finish" grep -q "^run finished after 2 of 2 steps; .* stopped 0 time(s)$" "$work/bad.txt"

# Quit before the run starts; options that are wrong: exit 2 with one line.
printf 'quit\n' | console quit --demo
check "quit first: no step runs" bash -c "grep -qx 0 '$work/quit.rc' && grep -q '^run stopped by quit after 0 of 200 steps' '$work/quit.txt'"
console nodemo </dev/null
check "no --demo: exit 2, one line" bash -c "grep -qx 2 '$work/nodemo.rc' && [ \$(wc -l <'$work/nodemo.txt') = 1 ] &&
  grep -q -- '--demo' '$work/nodemo.txt'"
console badfault --demo --fault nope </dev/null
check "bad fault: exit 2" bash -c "grep -qx 2 '$work/badfault.rc' && grep -q \"unknown fault 'nope'\" '$work/badfault.txt'"

finish console
