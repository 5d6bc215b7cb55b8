# Sourced by the tests that drive a full-screen program under tmux (top_test.sh, top_demo_test.sh)
# after they set $sock: tmx runs tmux on the test's own server, screen prints the pane "top", and
# wait_for PATTERN [SECONDS] waits up to SECONDS (10) for the screen to show it (grep -E), printing
# the screen when it does not.
tmx() { tmux -L "$sock" -f /dev/null "$@"; }
screen() { tmx capture-pane -p -t top; }
wait_for() {
  local i
  for i in $(seq $((${2:-10} * 10))); do
    screen | grep -qE "$1" && return 0
    sleep 0.1
  done
  echo "screen without /$1/:" >&2
  screen >&2
  return 1
}
