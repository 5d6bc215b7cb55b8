#!/usr/bin/env bash
# `tfdebug console --demo --fault log` on a terminal (tmux: send-keys, capture-pane): readline's
# prompt, TAB completion of commands, tensor names and module paths, history (Up), the stop at
# the aten::log that makes the first NaN with its input's statistics, and quit.
set -u
tfdebug="$1"
here="$(dirname "$0")"
source "$here/harness.sh"
require tmux

sock="tfdebug_console_test_$$"
source "$here/tmux.sh"
screen() { tmx capture-pane -p -t console; }
keys() { tmx send-keys -t console "$@"; }
trap 'tmx kill-server 2>/dev/null; rm -rf "$work"' EXIT

tmx -u new-session -d -s console -x 160 -y 50 \
  "env LANG=C.UTF-8 TERM=tmux-256color OMP_NUM_THREADS=1 '$tfdebug' console --demo --fault log --steps 100 --every 0; echo \$? >'$work/rc'; sleep 60"
check "the prompt" wait_for '^\(tfdebug\) ?$' 60

# "bre" + TAB completes to what break and breakpoints share; the rest typed.
keys "bre" Tab
check "TAB completes a command" wait_for '^\(tfdebug\) break$'
keys " nan" Enter
check "the breakpoint is set" wait_for '^breakpoint 1: nan$'
keys "continue" Enter
check "stopped at the log in blocks.1.mlp, forward, step 73" \
  wait_for '^  aten::log in blocks\.1\.mlp  \(forward, step 73\)  f32\[32, 16, 64\]$' 60

# "stats inp" + TAB completes "input" (input0 and inputs share it); TAB on the completed word
# (readline: twice) lists both; then "s" makes it "inputs".
keys "stats inp" Tab
check "TAB completes the shared prefix of tensor names" wait_for '^\(tfdebug\) stats input$'
keys Tab
sleep 0.3
keys Tab
check "more TABs list the stop's tensor names" wait_for '^input0 +inputs$'
keys "s" Enter
check "the input's statistics, one negative value" \
  wait_for '^input0  f32\[32, 16, 64\]  f32 count 32768  min -[0-9.e-]+ .* negative 1  zero 0  nan 0  inf 0$'

# A parameter's path completed from its prefix (module paths hold dots: one word).
keys "print blocks.1.mlp.fc1.wei" Tab
check "TAB completes a tensor path" wait_for '^\(tfdebug\) print blocks\.1\.mlp\.fc1\.weight$'
keys "[0, :3]" Enter
check "its values, sliced" wait_for '^f32\[3\] \[-?[0-9.e-]+, -?[0-9.e-]+, -?[0-9.e-]+\]$'

# History: Up brings the last line back.
keys Up
check "Up recalls the last command" wait_for '^\(tfdebug\) print blocks\.1\.mlp\.fc1\.weight\[0, :3\]$'
keys C-u "quit" Enter
check "quit stops the run at step 73" wait_for '^run stopped by quit after 74 of 100 steps' 30
check "exit 0" bash -c "for i in \$(seq 50); do [ -s '$work/rc' ] && break; sleep 0.1; done; grep -qx 0 '$work/rc'"

finish console_tmux
