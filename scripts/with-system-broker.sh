#!/usr/bin/env bash
# Runs a command (default: make test) beside a Mosquitto on 127.0.0.1:1883, as on a table PC whose
# displays use the system broker, and fails if that broker is gone afterwards: `make test` must leave
# the machine's services alone (issue 17). CI runs it (.ci/run).
#
# Port 1883 free: a Mosquitto is started on it for the run, as a separate process, and stopped at
# the end. Port 1883 taken (a system broker already runs): it is only checked to still answer.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- make test
PORT=1883

listening() { (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; }

pid=""
if listening; then
  echo "with-system-broker: 127.0.0.1:$PORT already answers: leaving it as it is, checking it after the run"
elif MOSQ=$(command -v mosquitto || echo /usr/sbin/mosquitto) && [ -x "$MOSQ" ]; then
  conf=$(mktemp)
  printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$PORT" > "$conf"
  "$MOSQ" -c "$conf" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do listening && break; sleep 0.1; done
  listening || { echo "with-system-broker: mosquitto did not start on $PORT" >&2; kill "$pid" 2>/dev/null; exit 1; }
  echo "with-system-broker: mosquitto (pid $pid) on 127.0.0.1:$PORT stands in for the system broker"
else
  echo "with-system-broker: no mosquitto yet: running without the check" >&2
  exec "$@"
fi

"$@"
rc=$?

alive=1
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then alive=0; fi
listening || alive=0
if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$conf"; fi
if [ "$alive" = 0 ]; then
  echo "with-system-broker: FAILED: the broker on 127.0.0.1:$PORT did not survive '$*'" >&2
  exit 1
fi
echo "with-system-broker: the broker on 127.0.0.1:$PORT is still running after '$*' (exit status $rc)"
exit "$rc"
