#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo use, only those missing; changes nothing else.
# Idempotent; needs root (the table PC's installer and CI run as root).
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v socat >/dev/null || need+=(socat)
command -v openssl >/dev/null || need+=(openssl)
command -v rsvg-convert >/dev/null || need+=(librsvg2-bin)   # card art of the camera tests (tests/vision/)
command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || need+=(chromium)   # the display tests (tests/web/)
command -v systemd-analyze >/dev/null || need+=(systemd)      # unit verify + security score
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)  # the floor tests start their own cluster (tests/floor/)
command -v shellcheck >/dev/null || need+=(shellcheck)         # lint of the install script
dpkg -s python3-seccomp >/dev/null 2>&1 || need+=(python3-seccomp)  # the unit's syscall filter, in a test
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Installing mosquitto may enable Debian's system broker on 1883: it is left alone (on a table PC
# it may be the displays' broker). The tests start their own brokers on free ports; this script
# never stops, restarts or disables a service (tests/cli/test_system_deps.py).
