#!/usr/bin/env bash
# Install (or uninstall) shoe-daemon as a systemd service on a Debian table PC. Idempotent: run it
# again to upgrade after pulling a new version. Run as root from the source tree:
#
#   systemd/install.sh                      # or: make install
#   systemd/install.sh --uninstall          # or: make uninstall
#
# What it does (docs/operations.md tells the whole story):
#   - the system user `shoe-daemon` (groups dialout, video), if missing;
#   - the venv PREFIX/.venv (default /opt/shoe-daemon/.venv) with the package and its extras;
#   - /etc/systemd/system/shoe-daemon.service (always replaced: local changes go in drop-ins);
#   - /etc/udev/rules.d/99-dealing-shoe.rules, only if there is none (you edit its ids);
#   - /etc/shoe-daemon/config.toml from the example, only if there is none (never overwritten);
#   - /etc/modules-load.d/shoe-daemon.conf (usbserial, cdc_acm, videodev: see the unit's DeviceAllow=);
#   - the docs and the shipped example config and rule under PREFIX/share/;
#   - systemctl daemon-reload and udevadm control --reload, when systemd and udev are running.
# It never starts, restarts or enables the service: it prints the next steps instead.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: systemd/install.sh [--uninstall [--purge]] [options]

  --prefix DIR     install prefix (default /opt/shoe-daemon; the venv is DIR/.venv)
  --python PATH    Python 3.11+ that creates the venv (default python3)
  --extras LIST    package extras (default broker,api; add camera for the camera source)
  --pip-arg ARG    extra argument for pip, repeatable; offline table PCs:
                   --pip-arg=--no-index --pip-arg=--find-links=/media/usb/wheels
  --no-venv        do not create or update the venv (files only)
  --root DIR       stage everything under DIR instead of / (packaging, tests): no user,
                   no chown, no systemctl/udevadm/modprobe
  --uninstall      stop and disable the service, remove the unit, udev rule, modules-load file
                   and PREFIX; keep /etc/shoe-daemon, the journal in /var/lib/shoe-daemon and
                   the user (it owns the journal)
  --purge          with --uninstall: also remove /etc/shoe-daemon (NEVER the journal)
  -h, --help       this help
EOF
}

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEFAULT_PREFIX=/opt/shoe-daemon
PREFIX=$DEFAULT_PREFIX
PYTHON=python3
EXTRAS=broker,api
PIP_ARGS=()
ROOT=
DO_VENV=1
ACTION=install
PURGE=0
SERVICE_USER=shoe-daemon
UNIT_NAME=shoe-daemon.service
RULE_NAME=99-dealing-shoe.rules

while [ $# -gt 0 ]; do
  case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --python) PYTHON=$2; shift 2 ;;
    --python=*) PYTHON=${1#*=}; shift ;;
    --extras) EXTRAS=$2; shift 2 ;;
    --extras=*) EXTRAS=${1#*=}; shift ;;
    --pip-arg) PIP_ARGS+=("$2"); shift 2 ;;
    --pip-arg=*) PIP_ARGS+=("${1#*=}"); shift ;;
    --no-venv) DO_VENV=0; shift ;;
    --root) ROOT=$2; shift 2 ;;
    --root=*) ROOT=${1#*=}; shift ;;
    --uninstall) ACTION=uninstall; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

case $PREFIX in /*) ;; *) echo "install.sh: --prefix must be an absolute path (got $PREFIX)" >&2; exit 2 ;; esac
PREFIX=${PREFIX%/}
if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  [ "$ROOT" = / ] && ROOT=
fi
STAGED=0
[ -n "$ROOT" ] && STAGED=1

if [ "$STAGED" = 0 ] && [ "$(id -u)" != 0 ]; then
  echo "install.sh: run as root (sudo $0 $*)" >&2
  exit 1
fi

# Paths on the target system (what the unit names) and where this run writes them ($ROOT + path).
CONF_DIR=/etc/shoe-daemon
UNIT_DIR=/etc/systemd/system
UDEV_DIR=/etc/udev/rules.d
MODULES_FILE=/etc/modules-load.d/shoe-daemon.conf
STATE_DIR=/var/lib/shoe-daemon
VENV=$PREFIX/.venv
SHARE=$PREFIX/share

say() { printf '%s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
systemd_running() { [ "$STAGED" = 0 ] && [ -d /run/systemd/system ] && have systemctl; }
udev_running() { [ "$STAGED" = 0 ] && have udevadm && [ -d /run/udev ]; }

# install MODE SRC DEST, owned by root (left alone when staging)
put() {
  local mode=$1 src=$2 dest=$3
  if [ "$STAGED" = 1 ]; then
    install -D -m "$mode" "$src" "$dest"
  else
    install -D -m "$mode" -o root -g root "$src" "$dest"
  fi
}

unit_text() {
  # The shipped unit, with the install prefix substituted where it is not the default.
  if [ "$PREFIX" = "$DEFAULT_PREFIX" ]; then
    cat "$SRC/systemd/$UNIT_NAME"
  else
    sed -e "s#$DEFAULT_PREFIX#$PREFIX#g" "$SRC/systemd/$UNIT_NAME"
  fi
}

# ------------------------------------------------------------------------------------------ install
do_install() {
  for f in "systemd/$UNIT_NAME" "systemd/$RULE_NAME" systemd/shoe-daemon.example.toml pyproject.toml; do
    [ -f "$SRC/$f" ] || { echo "install.sh: $SRC/$f is missing: run me from the source tree" >&2; exit 1; }
  done

  # 1. The user: a system account, no login, in dialout (serial) and video (cameras).
  if [ "$STAGED" = 0 ]; then
    if ! getent passwd "$SERVICE_USER" >/dev/null; then
      useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
        --shell /usr/sbin/nologin --comment "shoe-daemon (dealing shoe)" "$SERVICE_USER"
      say "created the system user $SERVICE_USER"
    fi
    for g in dialout video; do
      if getent group "$g" >/dev/null && ! id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx "$g"; then
        usermod -a -G "$g" "$SERVICE_USER"
        say "added $SERVICE_USER to the group $g"
      fi
    done
  fi

  # 2. The venv and the package.
  if [ "$DO_VENV" = 1 ]; then
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "install.sh: $PYTHON is not Python 3.11 or newer (use --python PATH)" >&2
      exit 1
    fi
    if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
      echo "install.sh: $PYTHON cannot create venvs: apt-get install python3-venv" >&2
      exit 1
    fi
    local venv=$ROOT$VENV
    if [ -e "$venv" ] && ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      say "the venv $VENV is broken or too old (Python upgraded?): recreating it"
      rm -rf "$venv"
    fi
    if [ ! -x "$venv/bin/python" ]; then
      mkdir -p "$(dirname "$venv")"
      "$PYTHON" -m venv "$venv"
      say "created the venv $VENV"
    fi
    # Build from a clean copy, so that the source tree gets no build/ or *.egg-info.
    BUILD_DIR=$(mktemp -d)
    trap 'rm -rf "$BUILD_DIR"' EXIT
    tar -C "$SRC" --exclude=./.venv --exclude=./.venv-demo --exclude=./.git --exclude=./build --exclude='*.egg-info' \
      --exclude=__pycache__ --exclude=.pytest_cache --exclude=.hypothesis --exclude=.ruff_cache \
      --exclude=./var -cf - . | tar -C "$BUILD_DIR" -xf -
    local pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input -q)
    # Dependencies (only what is missing or outdated), then the package itself, always replaced
    # so that an upgrade with an unchanged version number still installs the new code.
    "${pip[@]}" install ${PIP_ARGS[@]+"${PIP_ARGS[@]}"} "${BUILD_DIR}[${EXTRAS}]"
    "${pip[@]}" install ${PIP_ARGS[@]+"${PIP_ARGS[@]}"} --no-deps --force-reinstall "$BUILD_DIR"
    rm -rf "$BUILD_DIR"
    trap - EXIT
    say "installed $("$venv/bin/shoe-daemon" --version) into $VENV"
  fi

  # 3. Shipped copies (for reference and upgrades), the docs.
  put 0644 "$SRC/systemd/shoe-daemon.example.toml" "$ROOT$SHARE/shoe-daemon/shoe-daemon.example.toml"
  put 0644 "$SRC/systemd/$RULE_NAME" "$ROOT$SHARE/shoe-daemon/$RULE_NAME"
  for doc in "$SRC"/docs/*.md; do
    put 0644 "$doc" "$ROOT$SHARE/doc/$(basename "$doc")"
  done

  # 4. The unit: always ours.
  local unit_tmp
  unit_tmp=$(mktemp)
  unit_text >"$unit_tmp"
  if ! cmp -s "$unit_tmp" "$ROOT$UNIT_DIR/$UNIT_NAME" 2>/dev/null; then
    put 0644 "$unit_tmp" "$ROOT$UNIT_DIR/$UNIT_NAME"
    say "installed $UNIT_DIR/$UNIT_NAME"
  fi
  rm -f "$unit_tmp"

  # 5. The udev rule: yours once installed (you put the shoe's ids in it).
  local rule=$ROOT$UDEV_DIR/$RULE_NAME rule_new=0
  if [ ! -e "$rule" ]; then
    put 0644 "$SRC/systemd/$RULE_NAME" "$rule"
    rule_new=1
    say "installed $UDEV_DIR/$RULE_NAME (edit the vendor/product/serial ids in it)"
  elif ! cmp -s "$SRC/systemd/$RULE_NAME" "$rule"; then
    say "kept your $UDEV_DIR/$RULE_NAME; the shipped one is $SHARE/shoe-daemon/$RULE_NAME"
  fi

  # 6. Kernel modules whose device classes the unit's DeviceAllow= names (loaded at boot, and now).
  local modules_tmp
  modules_tmp=$(mktemp)
  printf '%s\n' "# shoe-daemon: load the serial and camera classes at boot, so that the service's" \
    "# DeviceAllow=char-ttyUSB/char-ttyACM/char-video4linux exist when it starts (a shoe plugged" \
    "# in later is then allowed without a restart). Installed by shoe-daemon's install.sh." \
    usbserial cdc_acm videodev >"$modules_tmp"
  put 0644 "$modules_tmp" "$ROOT$MODULES_FILE"
  rm -f "$modules_tmp"
  if [ "$STAGED" = 0 ] && have modprobe; then
    modprobe -a -q usbserial cdc_acm videodev 2>/dev/null || true
  fi

  # 7. The configuration: created from the example once, never overwritten.
  if [ "$STAGED" = 1 ]; then
    install -d -m 0755 "$ROOT$CONF_DIR"
    install -d -m 0750 "$ROOT$STATE_DIR"
  else
    install -d -m 0755 -o root -g root "$CONF_DIR"
    [ -d "$STATE_DIR" ] || install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR"
  fi
  local conf=$ROOT$CONF_DIR/config.toml conf_new=0
  if [ ! -e "$conf" ]; then
    if [ "$STAGED" = 1 ]; then
      install -m 0640 "$SRC/systemd/shoe-daemon.example.toml" "$conf"
    else
      install -m 0640 -o root -g "$SERVICE_USER" "$SRC/systemd/shoe-daemon.example.toml" "$conf"
    fi
    conf_new=1
    say "created $CONF_DIR/config.toml from the example"
  else
    say "kept $CONF_DIR/config.toml (the current example: $SHARE/shoe-daemon/shoe-daemon.example.toml)"
  fi

  # 8. Tell systemd and udev.
  if systemd_running; then
    systemctl daemon-reload
    say "systemctl daemon-reload: done"
  fi
  if udev_running; then
    if udevadm control --reload 2>/dev/null; then
      udevadm trigger --subsystem-match=tty --action=add 2>/dev/null || true
      say "udevadm control --reload: done"
    fi
  fi

  local venv_bin=$VENV/bin/shoe-daemon
  cat <<EOF

shoe-daemon is installed. Next steps (docs/operations.md: $SHARE/doc/operations.md):
EOF
  local n=1
  if [ "$rule_new" = 1 ] || grep -q 'CHANGE-ME' "$rule" 2>/dev/null; then
    cat <<EOF
  $n. Put the shoe's USB ids in $UDEV_DIR/$RULE_NAME (how: the comments in it), then
       udevadm control --reload && udevadm trigger --subsystem-match=tty --action=add
       ls -l /dev/dealing-shoe
EOF
    n=$((n + 1))
  fi
  cat <<EOF
  $n. Set the table in $CONF_DIR/config.toml ([table] id, decks, limits; [mqtt] host, ...)$([ "$conf_new" = 1 ] || echo " (kept as it was)"), and check it:
       runuser -u $SERVICE_USER -- $venv_bin run --config $CONF_DIR/config.toml --check-config
     Secrets (SHOE_DAEMON__MQTT__PASSWORD=...) go in $CONF_DIR/environment (root:root, 0600).
  $((n + 1)). Start it now and at every boot, and watch it:
       systemctl enable --now shoe-daemon
       systemctl status shoe-daemon; journalctl -u shoe-daemon -f
     Upgrading a running table: systemctl restart shoe-daemon (between coups).
EOF
}

# ---------------------------------------------------------------------------------------- uninstall
do_uninstall() {
  if systemd_running; then
    systemctl disable --now "$UNIT_NAME" 2>/dev/null || true
  fi
  local f
  for f in "$UNIT_DIR/$UNIT_NAME" "$UDEV_DIR/$RULE_NAME" "$MODULES_FILE"; do
    if [ -e "$ROOT$f" ]; then
      rm -f "$ROOT$f"
      say "removed $f"
    fi
  done
  if [ -d "$ROOT$PREFIX" ]; then
    rm -rf "${ROOT:?}$PREFIX"
    say "removed $PREFIX"
  fi
  if systemd_running; then
    systemctl daemon-reload
    systemctl reset-failed "$UNIT_NAME" 2>/dev/null || true
  fi
  if udev_running; then
    udevadm control --reload 2>/dev/null || true
  fi
  if [ "$PURGE" = 1 ]; then
    if [ -d "$ROOT$CONF_DIR" ]; then
      rm -rf "${ROOT:?}$CONF_DIR"
      say "removed $CONF_DIR"
    fi
  else
    [ -d "$ROOT$CONF_DIR" ] && say "kept $CONF_DIR (--purge removes it)"
  fi
  if [ "$STAGED" = 0 ] && getent passwd "$SERVICE_USER" >/dev/null; then
    say "kept the user $SERVICE_USER (it owns the journal; userdel $SERVICE_USER to remove it)"
  fi
  if [ -d "$ROOT$STATE_DIR" ]; then
    say "kept the journal in $STATE_DIR: it is the table's audit record. Export it"
    say "(shoe-daemon journal export) and archive it before deleting it yourself."
  fi
  return 0
}

if [ "$ACTION" = install ]; then
  do_install
else
  do_uninstall
fi
