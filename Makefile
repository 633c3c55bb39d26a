# cardroom: `make run` starts the whole service locally, `make test` runs the suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# two stamps: what the services need (and the tools that build this tree), then the
# development tools
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# Every environment here installs the packages of its lock file in requirements/, each
# pinned with its hashes; `make lock` resolves them again (docs/development.md).
LOCKS := requirements
PIP_VERSION := 26.3
# pip says nothing of its own: each install says what it installs and how long it took
PIP_LOCKED := pip install --quiet --require-hashes
# setuptools notes, on every editable install, that a folder named like the package may
# shadow it; here those folders are the package, so the note is left out
NO_EDITABLE_NOTE := PYTHONWARNINGS='ignore:Editable installation:UserWarning'
PROTO_DIR := protos
PROTO_SRC := $(PROTO_DIR)/cardroom/evaluator/v1/evaluator.proto
PROTO_OUT := $(PROTO_DIR)/cardroom/evaluator/v1/evaluator_pb2_grpc.py
# the SDK's own checks for Python 3.9 run in an environment of their own (httpx and the
# checkers only): the newest mypy that still targets 3.9 is older than the server's
CLIENT_LINT := $(VENV)/client-lint
CLIENT_LINT_STAMP := $(CLIENT_LINT)/.installed
CLIENT_SOURCES := clients/python/cardroom_client clients/python/examples
# `make demo` runs the SDK alone, in a small virtualenv of its own (httpx and the SDK)
DEMO_VENV := $(VENV)/demo
DEMO_STAMP := $(DEMO_VENV)/.installed
GATEWAY_PORT ?= 8000
# checkov pins packaging<24 (the gateway needs 26) and ~100 more packages: it lives in a
# virtualenv of its own, used only by `python -m deploy.validate`.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
# podman-compose runs deploy/compose.yaml for make test-images (deploy/images/setup.sh)
PODMAN_COMPOSE_VERSION := 1.6.0
# the TypeScript client: its packages (npm ci) and its types generated from the OpenAPI document
TS_CLIENT := clients/typescript
TS_STAMP := $(TS_CLIENT)/node_modules/.installed

.PHONY: all install install-run protos run test test-fast lint bench bench-evaluator \
	bench-gateway bench-capacity bench-bots bench-fanout bench-page history-dictionary loadtest loadtest-evaluator demo browser screenshots dist \
	checkov clean \
	test-images ts-client messages lock

all: test

# the services' packages and the tools that build this tree, then the tree itself,
# editable: its build generates the protobuf code (protos/generate.py)
$(RUN_STAMP): pyproject.toml $(LOCKS)/runtime.txt $(LOCKS)/build.txt
	@echo "installing the services into $(VENV): the packages of $(LOCKS)/runtime.txt and" \
		"$(LOCKS)/build.txt, then this tree (its build generates the protobuf code)"
	@started=$$SECONDS && $(PYTHON) -m venv $(VENV) && \
		$(BIN)/$(PIP_LOCKED) -r $(LOCKS)/build.txt -r $(LOCKS)/runtime.txt && \
		$(NO_EDITABLE_NOTE) $(BIN)/pip install --quiet --no-deps --no-build-isolation --editable . && \
		echo "  installed in $$((SECONDS - started)) s"
	@touch $@

$(DEV_STAMP): $(RUN_STAMP) $(LOCKS)/development.txt clients/python/pyproject.toml
	@echo "installing the development tools into $(VENV): the packages of" \
		"$(LOCKS)/development.txt (tests, linters, benchmarks), then the SDK (clients/python)"
	@started=$$SECONDS && $(BIN)/$(PIP_LOCKED) -r $(LOCKS)/development.txt && \
		$(NO_EDITABLE_NOTE) $(BIN)/pip install --quiet --no-deps --no-build-isolation \
			--editable 'clients/python[cli]' && \
		echo "  installed in $$((SECONDS - started)) s"
	@touch $@

$(CLIENT_LINT_STAMP): clients/python/pyproject.toml $(LOCKS)/client-lint.txt
	@echo "installing the SDK's checks for Python 3.9 into $(CLIENT_LINT) ($(LOCKS)/client-lint.txt)"
	@started=$$SECONDS && $(PYTHON) -m venv $(CLIENT_LINT) && \
		$(CLIENT_LINT)/bin/$(PIP_LOCKED) -r $(LOCKS)/client-lint.txt && \
		$(NO_EDITABLE_NOTE) $(CLIENT_LINT)/bin/pip install --quiet --no-deps \
			--build-constraint $(LOCKS)/build.txt --editable 'clients/python[cli]' && \
		echo "  installed in $$((SECONDS - started)) s"
	@touch $@

# the SDK as its users install it (not editable), with httpx and nothing of the server
$(DEMO_STAMP): $(LOCKS)/client.txt clients/python/pyproject.toml $(wildcard clients/python/cardroom_client/*.py)
	@echo "installing the SDK into $(DEMO_VENV): httpx ($(LOCKS)/client.txt), then clients/python"
	@started=$$SECONDS && $(PYTHON) -m venv $(DEMO_VENV) && \
		$(DEMO_VENV)/bin/$(PIP_LOCKED) -r $(LOCKS)/client.txt && \
		$(DEMO_VENV)/bin/pip install --quiet --no-deps --force-reinstall \
			--build-constraint $(LOCKS)/build.txt ./clients/python && \
		echo "  installed in $$((SECONDS - started)) s ($$(du -sh $(DEMO_VENV) | cut -f1))"
	@touch $@

# install-run: the services alone (what `make run` needs); install: everything to develop and test
install-run: $(RUN_STAMP)
install: $(DEV_STAMP)

# the install generates the protobuf code; this generates it again after the .proto changed
# (the test: make cannot know that the install, just now, wrote the code)
$(PROTO_OUT): $(PROTO_SRC) | $(RUN_STAMP)
	@test $@ -nt $(PROTO_SRC) || $(BIN)/python $(PROTO_DIR)/generate.py

protos: $(PROTO_OUT)

run: protos
	$(BIN)/python -m deploy.local_run

# the browser tests drive Debian's Chromium (no browser download); installed here when missing
CHROMIUM ?= /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { echo "installing Debian's chromium for the browser tests"; \
		$$(test "$$(id -u)" = 0 || echo sudo) apt-get update -qq && \
		$$(test "$$(id -u)" = 0 || echo sudo) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq chromium >/dev/null; }
	@test -d /usr/share/fonts/truetype/noto || { echo "installing Debian's Noto UI fonts (Pashto's letters, for the screenshots)"; \
		$$(test "$$(id -u)" = 0 || echo sudo) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq fonts-noto-ui-core >/dev/null || echo "no fonts-noto-ui-core: Pashto's screenshots may show boxes"; }

$(TS_STAMP): $(TS_CLIENT)/package-lock.json
	@echo "installing the TypeScript client's packages (npm ci: $(TS_CLIENT)/package-lock.json)"
	@cd $(TS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

ts-client: $(TS_STAMP)

# the tests run in one process a core (pytest-xdist), each with its own Redis and
# evaluator; a worker that runs out of tests takes some of another's (worksteal). The
# browser tests run after them, alone: a page's taps and Chromium's timers are what a
# second busy process on two cores would hold up most.
PYTEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

test: protos $(DEV_STAMP) browser $(CHECKOV_STAMP) $(TS_STAMP)
	$(PYTEST) --ignore=tests/browser
	$(BIN)/python -m pytest -q tests/browser

# the deployment files' checks (hadolint, yamllint, kubernetes-validate, the compose
# spec, checkov and the cross-references), then the images built from deploy/ and run by
# compose under podman, played through the edge; installs podman and what it needs when
# missing (docs/deploy.md)
test-images: protos $(DEV_STAMP) $(CHECKOV_STAMP)
	$(BIN)/python -m deploy.validate
	bash deploy/images/test.sh

# unit and integration tests without the long suites (marked slow)
test-fast: protos $(DEV_STAMP) $(CHECKOV_STAMP)
	$(PYTEST) -m "not slow" tests/unit tests/integration

$(CHECKOV_STAMP): $(LOCKS)/checkov.txt
	@echo "installing checkov $(CHECKOV_VERSION) into $(CHECKOV_VENV) ($(LOCKS)/checkov.txt)"
	@started=$$SECONDS && rm -rf $(CHECKOV_VENV) && $(PYTHON) -m venv $(CHECKOV_VENV) && \
		$(CHECKOV_VENV)/bin/$(PIP_LOCKED) -r $(LOCKS)/checkov.txt && \
		echo "  installed in $$((SECONDS - started)) s"
	@touch $@

checkov: $(CHECKOV_STAMP)

# the code's checks, CI's first step: the TypeScript client's types against the OpenAPI
# document, ruff, mypy --strict, the SDK's checks for Python 3.9, the import contracts and
# the sizes of functions and classes. The deployment files' checks run with test-images
# (and the unit tests run each of them too): they took half of lint's time, and checkov
# its own virtualenv. lint-imports keeps no cache: it reads the tree as fast, and its
# cache answered with stale imports once the root packages had changed.
lint: protos $(DEV_STAMP) $(CLIENT_LINT_STAMP) $(TS_STAMP)
	cd $(TS_CLIENT) && npx openapi-typescript ../../api/http/openapi.yaml \
		--default-non-nullable=false -o node_modules/.schema-check.ts >/dev/null && \
		diff -u src/schema.ts node_modules/.schema-check.ts && npx tsc -p tsconfig.test.json --noEmit
	$(BIN)/ruff check api evaluator clients tests bench deploy $(PROTO_DIR)/generate.py
	$(BIN)/ruff format --check api evaluator clients tests bench deploy $(PROTO_DIR)/generate.py
	$(BIN)/mypy api evaluator clients/python/cardroom_client deploy tests bench $(PROTO_DIR)/generate.py
	$(CLIENT_LINT)/bin/mypy --config-file clients/python/pyproject.toml $(CLIENT_SOURCES)
	$(BIN)/mypy --python-version 3.13 $(CLIENT_SOURCES)
	$(CLIENT_LINT)/bin/vermin --no-tips --target=3.9- $(CLIENT_SOURCES)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/unit/test_code_sizes.py

bench: bench-evaluator bench-gateway

# EVALUATOR_ARGS (not ARGS, which `make bench` gives the gateway's): --parts rates,floors
# (both by default), --rounds N, --floor-seconds S, --cores N; all: bench/evaluator/__main__.py
bench-evaluator: protos $(DEV_STAMP)
	$(BIN)/python -m bench.evaluator $(EVALUATOR_ARGS)

# computer players' strategies at one table, 10,000 deals of each game in process (docs/bots.md);
# ARGS: --deals N, --seed S, --games guts,paiute
bench-bots: $(DEV_STAMP)
	$(BIN)/python -m bench.bots $(ARGS)

# ARGS: --quick, --scaling (1/2/4 workers, gthread and gevent), --gc (collector policy on/off),
# --profile (pyinstrument), --seats (buy-ins and cash-outs only), --against REV [--steps]
# (this tree against revision REV, alternating runs), --pairs N; all: bench/gateway/__main__.py
bench-gateway: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway $(ARGS)

# the figures of docs/capacity.md; ARGS: --quick, --against REV (that revision's clock too),
# --parts memory,watchers,clock,sweep (the default), notices (--concurrency N); all:
# bench/gateway/capacity.py
bench-capacity: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway.capacity $(ARGS)

# the zstd dictionary finished deals' histories are packed with, trained on deals of both
# games (api.adapters.packed; docs/hand-histories.md): written as the next one shipped
history-dictionary: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway.dictionary $(ARGS)

# docs/capacity.md's watchers sharing one read: 5,000 event streams and 1,000 long polls
# on 50 tables; ARGS: --against REV (its gateway first, as the baseline), --seconds N
bench-fanout: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway.fanout $(ARGS)

# locust players against a running gateway (`make run`); start it with RATE_LIMIT_PER_ADDRESS=0
HOST ?= http://127.0.0.1:8000
USERS ?= 20
SPAWN_RATE ?= 5
DURATION ?= 60s
loadtest: protos $(DEV_STAMP)
	$(BIN)/locust -f bench/gateway/locustfile.py --headless --host $(HOST) --users $(USERS) \
		--spawn-rate $(SPAWN_RATE) --run-time $(DURATION) --stop-timeout 10 $(ARGS)

loadtest-evaluator: protos $(DEV_STAMP)
	$(BIN)/python -m evaluator.loadtest $(ARGS)

# what the table page weighs and how soon Chromium draws it (docs/table-page.md)
bench-page: protos $(DEV_STAMP) browser
	CARDROOM_PAGE_WEIGHT=1 $(BIN)/python -m pytest -q -s tests/browser/test_table_page_weight.py

# the README's pictures of the table page, taken by the browser tests
screenshots: protos $(DEV_STAMP) browser
	CARDROOM_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest -q tests/browser \
		tests/integration/test_cli.py

# the message catalogues (docs/languages.md): both domains extracted from the code into
# their templates, then every language's catalogue updated from its template
I18N := api/i18n
LANGUAGES := sw ps hu et
MESSAGE_KEYWORDS := -k RuleError:2 -k ApiError:4 -k problem:2 -k say:2 -k say_plural:2,3 \
	-k say_in:2c,3 -k N_ -k NP_:1c,2 -k bad_option:2 -k quota_exceeded:3 -k _chips:2,3 \
	-k from_rule_error:2 -k _coded:2 -k invalid_credential:1 -k StoreUnavailable:1 -k EvaluatorUnavailable:1
PAGE_KEYWORDS := -k t -k tn:1,2
messages: $(DEV_STAMP)
	$(BIN)/pybabel extract --project=cardroom --no-default-keywords $(MESSAGE_KEYWORDS) --add-comments=NOTE: \
		--no-location --sort-output -F $(I18N)/babel-messages.cfg -o $(I18N)/messages.pot api
	$(BIN)/pybabel extract --project=cardroom --no-default-keywords $(PAGE_KEYWORDS) --add-comments=NOTE: \
		--no-location --sort-output -F $(I18N)/babel-page.cfg -o $(I18N)/page.pot api
	for domain in messages page; do for lang in $(LANGUAGES); do \
		if [ -f $(I18N)/locales/$$lang/LC_MESSAGES/$$domain.po ]; then \
			$(BIN)/pybabel update --no-fuzzy-matching --ignore-obsolete -D $$domain \
				-i $(I18N)/$$domain.pot -d $(I18N)/locales -l $$lang; \
		else \
			$(BIN)/pybabel init -D $$domain -i $(I18N)/$$domain.pot -d $(I18N)/locales -l $$lang; \
		fi; done; done

# against the gateway on GATEWAY_PORT (`make run`'s), or ARGS="--url http://host:port"
demo: $(DEMO_STAMP)
	GATEWAY_PORT=$(GATEWAY_PORT) $(DEMO_VENV)/bin/python -m deploy.demo $(ARGS)

# the server's wheel and the SDK's (cardroom-client), each built as pip builds it, by the
# build tools of requirements/build.txt
dist: $(RUN_STAMP)
	rm -rf dist build
	$(BIN)/pip wheel --quiet --no-deps --build-constraint $(LOCKS)/build.txt --wheel-dir dist \
		. clients/python

# The lock files, resolved again by uv (pinned in the development group) for Python 3.11
# and newer on every platform. Each keeps the versions it has unless pyproject.toml (or
# clients/python/pyproject.toml) asks for others; ARGS="--upgrade-package NAME" moves one
# (docs/development.md). The build's tools are pyproject.toml's [build-system] requires.
UV_COMPILE = $(BIN)/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command "make lock" $(ARGS)
BUILD_REQUIRES = $(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", \
	"rb"))["build-system"]["requires"], "pip==$(PIP_VERSION)", sep="\n")'
lock: $(DEV_STAMP)
	$(UV_COMPILE) pyproject.toml -o $(LOCKS)/runtime.txt
	$(BUILD_REQUIRES) | $(UV_COMPILE) - pyproject.toml --group pyproject.toml:dev \
		clients/python/pyproject.toml --all-extras -c $(LOCKS)/runtime.txt \
		-o $(LOCKS)/development.txt
	$(BUILD_REQUIRES) | $(UV_COMPILE) - -c $(LOCKS)/development.txt -o $(LOCKS)/build.txt
	echo pip==$(PIP_VERSION) | $(UV_COMPILE) - clients/python/pyproject.toml \
		-c $(LOCKS)/runtime.txt -o $(LOCKS)/client.txt
	# not constrained by the server's lock: its checks hold the SDK to what Python 3.9 gets
	echo pip==$(PIP_VERSION) | $(UV_COMPILE) - clients/python/pyproject.toml --all-extras \
		--group clients/python/pyproject.toml:lint -o $(LOCKS)/client-lint.txt
	printf 'pip==$(PIP_VERSION)\ncheckov==$(CHECKOV_VERSION)\n' | $(UV_COMPILE) - -o $(LOCKS)/checkov.txt
	printf 'pip==$(PIP_VERSION)\npodman-compose==$(PODMAN_COMPOSE_VERSION)\n' | $(UV_COMPILE) - \
		-o $(LOCKS)/podman-compose.txt

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) var dist build .pytest_cache .mypy_cache .ruff_cache
	find $(PROTO_DIR) -name '*_pb2*.py*' -delete
