# Every target creates what it needs; all are idempotent.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := test,broker,api,camera

.PHONY: demo test lint pytest bench clean system-deps

$(STAMP): pyproject.toml
	@$(PY) -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	touch $(STAMP)

system-deps:
	./scripts/system-deps.sh

# The README's first command: the daemon's main job on the embedded default.
demo: $(STAMP)
	$(BIN)/shoe-daemon demo $(DEMO_ARGS)

# The README's second command: set up and pass the whole suite (lint included).
test: system-deps $(STAMP) lint pytest

lint: $(STAMP)
	$(BIN)/ruff check .

pytest: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info

# The service on this machine (as root): venv in /opt/shoe-daemon, unit, udev rule, example config
# (never overwritten). Idempotent: run again to upgrade. INSTALL_ARGS: see systemd/install.sh --help.
.PHONY: install uninstall
install:
	./systemd/install.sh $(INSTALL_ARGS)

uninstall:
	./systemd/install.sh --uninstall $(INSTALL_ARGS)
