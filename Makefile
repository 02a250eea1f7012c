# One entry point for people and CI. `make test` needs nothing but python3 >= 3.11 on PATH:
# it builds the venv, installs kafkawire with its test extras (the broker wheel included) and
# runs every check. CI (.ci/run) runs it, then `make test-py313`: the same on CPython 3.13.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The demo's own venv: kafkawire with only what the demo runs (Spark, the embedded broker),
# not the test tools and peer clients of .venv.
DEMO_VENV := .venv-demo
DEMO_STAMP := $(DEMO_VENV)/.installed-stamp
comma := ,
SHARED := ../shared
MYPY_FLAGS ?= # test-py313 passes --python-version 3.13
# Where a C compiler is found, the compiled accelerators must be the code in use: the suite fails
# if either fell back to pure Python (tests/test_accelerators_in_use.py). Set it to 0 to allow it.
KAFKAWIRE_REQUIRE_EXTENSIONS ?= $(if $(KAFKAWIRE_NO_EXTENSIONS),0,$(if $(shell command -v cc),1,0))
export KAFKAWIRE_REQUIRE_EXTENSIONS

# Test processes: most tests wait on a broker's answer, not on the CPU, so more processes than
# cores pays (each starts its own embedded broker and mock cluster). `make check` uses three:
# its tests wait on timers and the fake cluster's answers for about half their time, and a
# worker costs some 7 s of CPU (start-up, collection, its own codecs and strategies).
# loadgroup: the Spark tests share one worker and its one JVM (tests/worker_groups.py).
PYTEST_WORKERS ?= 4
CHECK_WORKERS ?= 3

.PHONY: all venv system-tools test check test-py313 lint types contracts schema schema-check docs pytest pytest-quick demo bench clean

all: test

# The C sources too: an editable install compiles them only when it runs, and a stale build of
# _accel.c (another plan version) is refused with a warning, which fails the tests.
INSTALL_INPUTS := pyproject.toml hatch_build.py src/kafkawire/protocol/_accel.c src/kafkawire/records/_accel.c \
	src/kafkawire/records/_arrow_columns.h \
	src/kafkawire/producer/_accel.c src/kafkawire/_columns.h \
	src/kafkawire/_slots.h

# $(call venv_with,DIR,EXTRAS): a venv in DIR with kafkawire installed (editable) with EXTRAS.
define venv_with
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet -e '.[$(2)]'
	touch $(1)/.installed-stamp
endef

$(STAMP): $(INSTALL_INPUTS)
	$(call venv_with,$(VENV),test)

venv: $(STAMP)

LINTED := src codegen tests benchmarks docs/extensions hatch_build.py

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

types: $(STAMP)
	$(BIN)/mypy $(MYPY_FLAGS)

contracts: $(STAMP)
	$(BIN)/lint-imports

# Step 1 (import) needs the upstream schemas beside the repo; step 2 (generate) needs only schema-json/.
schema: $(STAMP)
	@if [ -d $(SHARED)/kafka-schema ]; then \
		$(BIN)/python -m codegen import --shared $(SHARED) --out schema-json; fi
	$(BIN)/python -m codegen generate --schema schema-json --out src/kafkawire/messages

schema-check: $(STAMP)
	@if [ -d $(SHARED)/kafka-schema ]; then \
		$(BIN)/python -m codegen import --shared $(SHARED) --out schema-json --check; fi
	$(BIN)/python -m codegen generate --schema schema-json --out src/kafkawire/messages --check

# The documentation site (mkdocs.yml): the guides under docs/ and the API reference rendered
# from the docstrings, into site/ (git-ignored). --strict: a warning (a broken link, a docstring
# griffe cannot read) fails the build (not with --quiet, which hides warnings from --strict too).
# Nothing is fetched from the network. The variable only silences mkdocs-material's banner.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

pytest: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

# The tests that need no broker and no Spark, with a few hypothesis examples each. Bytecode
# caches (the git-ignored __pycache__) are written even where PYTHONDONTWRITEBYTECODE is set:
# without them every worker compiles kafkawire and pytest rewrites every test module again, and
# each test that starts a Python process compiles what it imports (over 10 s of CPU a run).
pytest-quick: $(STAMP)
	PYTHONDONTWRITEBYTECODE= KAFKAWIRE_HYPOTHESIS_PROFILE=quick $(BIN)/python -m pytest \
		-n $(CHECK_WORKERS) --dist worksteal -m "not integration and not spark" -q

# GNU SASL's gsasl plays the server in the SCRAM interop tests (they skip without it), and Java 17
# runs Spark for tests/spark; both installed from Debian's packages when we can (root and apt-get
# present), never failing the build.
system-tools:
	@command -v gsasl >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& timeout 300 sh -c 'apt-get update -qq && apt-get install -y -qq gsasl' >/dev/null 2>&1; } \
		|| echo "note: gsasl is not installed; the SCRAM interop tests will be skipped"
	@command -v java >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& timeout 600 sh -c 'apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless' \
		>/dev/null 2>&1; } \
		|| echo "note: java is not installed; the Spark tests (tests/spark) will be skipped"

test: system-tools lint types contracts schema-check docs pytest

# The loop while developing (under a minute on two idle cores): every static check, and the
# tests that need no broker and no Spark. CI runs `make test`, which runs everything.
check: lint types contracts schema-check pytest-quick

# `make test` again on CPython 3.13, built from Debian's source package into a cache outside the
# tree (reused), in .venv-py313; needs root and apt-get the first time. See .ci/python313.sh.
test-py313:
	MAKE='$(MAKE)' .ci/python313.sh

# The main job, on the embedded broker: a producer's events -> a Spark Structured Streaming
# query through kafkawire -> totals back to Kafka -> printed by the async consumer.
$(DEMO_STAMP): $(INSTALL_INPUTS)
	$(call venv_with,$(DEMO_VENV),spark$(comma)broker)

demo: system-tools $(DEMO_STAMP)
	$(DEMO_VENV)/bin/python -m kafkawire.spark.demo

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python -m benchmarks

clean:
	rm -rf .venv .venv-py313 .venv-demo .mypy_cache .pytest_cache .ruff_cache .hypothesis site
