# Every target creates what it needs; all are idempotent.
PY ?= python3
# Installs are pinned by constraints.txt (a `pip freeze` of a working install; `make constraints`).
PIP_C := -c constraints.txt

# The test venv: the package (editable) with every extra and the test tools.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := test,broker,api,camera,floor,floor-pg

# The demo's venv: only what the demo runs (embedded broker, API and display; the floor for
# --tables N), no test tools.
DEMO_VENV := .venv-demo
DEMO_STAMP := $(DEMO_VENV)/.installed
DEMO_EXTRAS := broker,api,floor

.PHONY: demo test lint pytest bench drills clean system-deps constraints

# A venv in $(1) with the extras $(2), pinned by the constraints.
define make_venv
	@$(PY) -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv; }
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	$(1)/bin/python -m pip install -q --upgrade pip
	$(1)/bin/python -m pip install -q $(PIP_C) -e ".[$(2)]"
	touch $(1)/.installed
endef

$(STAMP): pyproject.toml constraints.txt
	$(call make_venv,$(VENV),$(EXTRAS))

$(DEMO_STAMP): pyproject.toml constraints.txt
	$(call make_venv,$(DEMO_VENV),$(DEMO_EXTRAS))

system-deps:
	./scripts/system-deps.sh

# The README's first command: the daemon's main job on the embedded default.
demo: $(DEMO_STAMP)
	$(DEMO_VENV)/bin/shoe-daemon demo $(DEMO_ARGS)

# The README's second command: set up and pass the whole suite (lint included).
test: system-deps $(STAMP) lint pytest

lint: $(STAMP)
	$(BIN)/ruff check .

pytest: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python -m bench

# The fault drills (issue 13), one table: minutes on real parts, so not in `make test`. The
# disk-full and read-only rows mount a small tmpfs: as root; elsewhere they say "skipped".
drills: $(STAMP)
	$(BIN)/python -m bench drills

# Re-pin after changing a dependency range in pyproject.toml: a fresh venv from the ranges alone,
# then its exact versions (the project itself left out).
constraints:
	rm -rf .venv-constraints
	$(PY) -m venv .venv-constraints
	.venv-constraints/bin/python -m pip install -q --upgrade pip
	.venv-constraints/bin/python -m pip install -q ".[$(EXTRAS)]"
	{ echo "# pip freeze of a working install of .[$(EXTRAS)] (make constraints); used with -c by the Makefile."; \
	  .venv-constraints/bin/python -m pip freeze --exclude-editable | grep -iv '^shoe[-_]daemon'; } > constraints.txt
	rm -rf .venv-constraints

clean:
	rm -rf $(VENV) $(DEMO_VENV) .pytest_cache .hypothesis build *.egg-info

# The service on this machine (as root): venv in /opt/shoe-daemon, unit, udev rule, example config
# (never overwritten). Idempotent: run again to upgrade. INSTALL_ARGS: see systemd/install.sh --help.
.PHONY: install uninstall
install:
	./systemd/install.sh $(INSTALL_ARGS)

uninstall:
	./systemd/install.sh --uninstall $(INSTALL_ARGS)
