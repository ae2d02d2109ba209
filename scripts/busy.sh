#!/usr/bin/env bash
# Keeps the machine busy while a command runs: BUSY_PROCS CPU-bound processes (default 8, which with the command's
# own work holds a two-core machine's load average around 10), at normal priority, so the command competes for
# the CPU as it would beside other work. Prints the load average every minute and the command's wall time; the
# busy processes stop with the command, whatever way it ends.
#
#   scripts/busy.sh bash .ci/run        the CI run on a busy machine
#   scripts/busy.sh pnpm vitest run packages/inbox/test/ops/retention.test.ts
set -uo pipefail
(($# > 0)) || { echo "usage: scripts/busy.sh <command> [args...]" >&2; exit 2; }
procs=${BUSY_PROCS:-8}
[[ "$procs" =~ ^[0-9]+$ ]] || { echo "BUSY_PROCS must be a whole number, got '$procs'" >&2; exit 2; }

pids=()
stop() {
  ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
}
trap stop EXIT
trap 'exit 130' INT TERM

# stress-ng (Debian's) when present; otherwise busy Node processes, which every machine here has.
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$procs" --cpu-method int64 --quiet 2>/dev/null &
  pids+=($!)
else
  for ((i = 0; i < procs; i++)); do
    node -e 'for (;;) {}' &
    pids+=($!)
  done
fi
# The sleep is waited on, so that the loop's TERM stops it too (an orphaned sleep would hold the output open).
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  while :; do
    sleep 60 &
    nap=$!
    wait "$nap"
    echo "busy.sh: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  done
) &
pids+=($!)

start=$(date +%s)
echo "busy.sh: $procs busy processes; running: $*" >&2
"$@"
status=$?
echo "busy.sh: '$*' exited $status after $(($(date +%s) - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exit "$status"
