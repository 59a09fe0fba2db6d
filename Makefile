# harn-mcp-mock developer tasks. Everything runs from the project's own .venv; on a fresh
# machine with Python 3.11+, Node 20+ and npm, `make test` installs what it needs first
# (`make demo` needs only Python).
# Installs are stamped under .venv/, so repeated runs skip them until their inputs change.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-builtin-rules
# Some images set PYTHONDONTWRITEBYTECODE: then every test process and every CLI subprocess the
# tests start compiles the package again, and pytest rewrites the asserts of every test module
# on every run. The suite keeps its bytecode (__pycache__/ is ignored by git).
unexport PYTHONDONTWRITEBYTECODE

PYTHON ?= python3
NPM ?= npm
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
E2E := tests/e2e

INSTALL_STAMP := $(VENV)/.harn-install.stamp
PEERS_STAMP := $(VENV)/.harn-peers.stamp
EVERYTHING_MANIFEST := $(E2E)/node_modules/@modelcontextprotocol/server-everything/package.json
# Reinstall the npm peers whenever node_modules lost them, even if the stamp is newer than the lock.
PEERS_MISSING := $(if $(wildcard $(EVERYTHING_MANIFEST)),,peers-missing)
CONFORMANCE := tests/conformance
CONFORMANCE_STAMP := $(VENV)/.harn-conformance.stamp
CONFORMANCE_MANIFEST := $(CONFORMANCE)/node_modules/@modelcontextprotocol/conformance/package.json
CONFORMANCE_MISSING := $(if $(wildcard $(CONFORMANCE_MANIFEST)),,conformance-missing)

PYTEST_ARGS ?=
# pytest-xdist workers: `make test JOBS=1` runs serially. Most tests wait on child processes
# (servers, clients, agents), so more workers than cores still pays on a 2-core machine.
JOBS ?= 4
# The fast tests wait less on child processes: each worker also costs CPU of its own (imports,
# collection, session fixtures), so 3 workers finish first here (81-85 s; 2: 88 s; 4: 82 s).
FAST_JOBS ?= 3
FAST_MARKERS := not e2e and not slow and not browser and not ray and not frameworks

.PHONY: venv install peers releases browser sandbox-tools screenshots lint lint-test-patterns test suite test-fast test-conformance test-frameworks fuzz bench demo peers-missing \
	conformance-missing

venv: $(PY)

$(PY):
	$(PYTHON) -m venv $(VENV)

# uv installs the project and its extras into the venv: about 10 s from a cold cache where pip
# took 25 s (70 s with the frameworks extra), most of it pip's own CPU. Pinned; pip installs it
# into the venv once. `--compile-bytecode` byte-compiles what it installs, as pip does: ~9 s
# here, on both cores. Left to first import instead, the compiling fell on the first test run
# (~30 s of CPU in a fresh clone's first `make test-fast`, in every worker and subprocess).
UV_VERSION := 0.13.9
UV := $(BIN)/uv
UV_STAMP := $(VENV)/.harn-uv-$(UV_VERSION).stamp
# Where uv has no build for the machine, pip does the installs (slower, same result).
$(UV_STAMP): | $(PY)
	$(PY) -m pip install --disable-pip-version-check --quiet 'uv==$(UV_VERSION)' \
		|| echo "make: no uv $(UV_VERSION) for this machine; pip installs instead"
	touch $@
PIP_INSTALL = $(if $(wildcard $(UV)),$(UV) pip install --quiet --compile-bytecode --python $(PY),\
	$(PY) -m pip install --disable-pip-version-check --quiet)

# The project itself (editable) with its dev tools and the Python peer servers (mcp-server-time).
$(INSTALL_STAMP): pyproject.toml | $(UV_STAMP)
	$(PIP_INSTALL) -e '.[dev,peers,ray]'
	touch $@

# The agent frameworks of examples/frameworks/ (the `frameworks` extra, too heavy for a local
# `make test`). On CI (CI set) `make install` adds them, so `make test` runs the framework tests
# too, in the same xdist pool as the rest.
FRAMEWORKS_STAMP := $(VENV)/.harn-frameworks.stamp
$(FRAMEWORKS_STAMP): pyproject.toml $(INSTALL_STAMP)
	$(PIP_INSTALL) -e '.[dev,peers,ray,frameworks]'
	touch $@

# The npm peer servers, exactly as tests/e2e/package-lock.json pins them.
$(PEERS_STAMP): $(E2E)/package.json $(E2E)/package-lock.json $(PEERS_MISSING) | $(PY)
	$(NPM) ci --prefix $(E2E) --no-audit --no-fund --loglevel=error
	touch $@

peers-missing: ;

# The official MCP conformance suite, Node 22 (the `node` npm package) and the server it runs
# against, exactly as tests/conformance/package-lock.json pins them.
$(CONFORMANCE_STAMP): $(CONFORMANCE)/package.json $(CONFORMANCE)/package-lock.json $(CONFORMANCE_MISSING) | $(PY)
	$(NPM) ci --prefix $(CONFORMANCE) --no-audit --no-fund --loglevel=error
	touch $@

conformance-missing: ;

# Older PyPI releases of the peers for the release-pair tests of `verify`
# (tests/e2e/test_verify_releases.py), each in its own venv .venv/releases/<name>-<version>: they
# need an older `mcp` than the project's. Locked in tests/e2e/releases/requirements/<release>.txt;
# one stamp per release, so repeated runs skip it until its lock changes.
RELEASE_LOCKS := $(wildcard $(E2E)/releases/requirements/*.txt)
RELEASE_STAMPS := $(patsubst $(E2E)/releases/requirements/%.txt,$(VENV)/releases/%/.harn-release.stamp,$(RELEASE_LOCKS))
$(VENV)/releases/%/.harn-release.stamp: $(E2E)/releases/requirements/%.txt | $(UV_STAMP)
	rm -rf $(@D)
	if [ -x $(UV) ]; then \
		$(UV) venv --quiet --python $(PY) $(@D) && \
		$(UV) pip install --quiet --compile-bytecode --python $(@D)/bin/python -r $<; \
	else $(PY) -m venv $(@D) && $(@D)/bin/python -m pip install --disable-pip-version-check --quiet -r $<; fi
	touch $@

releases: $(RELEASE_STAMPS)

peers: $(PEERS_STAMP) releases

# A real browser for the HTML report tests (tests/report/): Debian's Chromium, driven by the
# Playwright of the dev extra. Installed with apt-get when we are root and it is missing;
# otherwise the tests say how to get it (and fail on CI).
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
		|| { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			chromium >/dev/null; }; \
	else echo "make browser: install chromium (Debian: apt-get install chromium) for the report tests"; fi

# The runner's sandbox (`run --sandbox auto`, docs/runner.md "Threat model"): Debian's bubblewrap,
# installed with apt-get when we are root and it is missing; otherwise `auto` runs agents without
# isolation and says so (the sandbox tests skip, and fail on CI).
sandbox-tools:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null \
		|| { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			bubblewrap >/dev/null; }; \
	else echo "make sandbox-tools: install bubblewrap (Debian: apt-get install bubblewrap) for the runner's sandbox"; fi

# The docs' pictures (docs/images/), taken by the report tests in Chromium.
screenshots: $(INSTALL_STAMP) browser
	HARN_UPDATE_SCREENSHOTS=1 $(BIN)/pytest -q -p no:randomly tests/report

install: $(INSTALL_STAMP) $(PEERS_STAMP) releases browser sandbox-tools $(if $(CI),$(FRAMEWORKS_STAMP))

lint: $(INSTALL_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(PY) scripts/lint_test_patterns.py

lint-test-patterns: | $(PY)
	$(PY) scripts/lint_test_patterns.py

# Lint (mypy: ~30 s from a fresh clone) runs beside the suite, not before it; either failing
# fails `make test`, once both have ended.
test: install
	@$(MAKE) --no-print-directory -j2 lint suite

suite: install
	$(BIN)/pytest -q -n $(JOBS) --dist loadgroup $(PYTEST_ARGS)

# Differential conformance: the suite against a live server, through `record --url`, and
# against `replay --http` of that recording; every check must agree (docs/http.md#conformance).
test-conformance: $(INSTALL_STAMP) $(CONFORMANCE_STAMP)
	$(PY) scripts/conformance.py

# The tests that run the agent frameworks: the scripted LLM endpoint, each recipe on the bank
# world. Once the extra is installed, `make test` runs these tests as well (CI installs it).
test-frameworks: $(FRAMEWORKS_STAMP)
	$(BIN)/pytest -q -n $(JOBS) --dist loadgroup tests/llm tests/test_inspect.py tests/e2e/test_frameworks.py tests/e2e/test_frameworks_faults.py $(PYTEST_ARGS)

# The inner loop: no third-party peers, browser, Ray, agent frameworks, wheel or pre-commit builds
# (README: the markers).
test-fast: $(INSTALL_STAMP) sandbox-tools
	$(BIN)/pytest -q -n $(FAST_JOBS) --dist loadgroup -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# The input fuzzers of tests/test_fuzz_inputs.py with random seeds and thousands of examples
# each (the suite runs a small fixed-seed sample); HARN_FUZZ_EXAMPLES=N to change the count.
fuzz: $(INSTALL_STAMP)
	HARN_FUZZ_PROFILE=fuzz $(BIN)/pytest -q -p no:randomly tests/test_fuzz_inputs.py $(PYTEST_ARGS)

bench: install
	@benches="$(wildcard benchmarks/bench_*.py)"; \
	if [ -z "$$benches" ]; then echo "no benchmarks/bench_*.py to run"; exit 0; fi; \
	for bench in $$benches; do \
		echo "== $$bench"; \
		$(PY) "$$bench"; \
	done

# The demos use no Node: they need only the Python install, so they run without npm.
demo: $(INSTALL_STAMP)
	$(PY) examples/demo.py
	$(PY) examples/world_demo.py
