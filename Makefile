# cardroom: `make run` starts the whole service locally, `make test` runs the suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# two stamps: what the services need (and the protobuf generator), then the development extras
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
PROTO_DIR := protos
PROTO_SRC := $(PROTO_DIR)/cardroom/evaluator/v1/evaluator.proto
PROTO_OUT := $(PROTO_DIR)/cardroom/evaluator/v1/evaluator_pb2_grpc.py
# the SDK's own checks for Python 3.9 run in an environment of their own (httpx and the
# checkers only): the newest mypy that still targets 3.9 is older than the server's
CLIENT_LINT := $(VENV)/client-lint
CLIENT_LINT_STAMP := $(CLIENT_LINT)/.installed
CLIENT_SOURCES := clients/python/cardroom_client clients/python/examples
# checkov pins packaging<24 (the gateway needs 26) and ~60 more packages: it lives in a
# virtualenv of its own, used only by `python -m deploy.validate`.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION)
# the TypeScript client: its packages (npm ci) and its types generated from the OpenAPI document
TS_CLIENT := clients/typescript
TS_STAMP := $(TS_CLIENT)/node_modules/.installed

.PHONY: all install install-run protos run test test-fast lint bench bench-evaluator \
	bench-gateway bench-capacity loadtest loadtest-evaluator demo browser screenshots dist checkov clean \
	test-images ts-client messages

all: test

$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[protoc]'
	touch $@

$(DEV_STAMP): $(RUN_STAMP) pyproject.toml clients/python/pyproject.toml
	$(BIN)/pip install --quiet -e '.[protoc,dev]' -e clients/python
	touch $@

$(CLIENT_LINT_STAMP): clients/python/pyproject.toml
	$(PYTHON) -m venv $(CLIENT_LINT)
	$(CLIENT_LINT)/bin/pip install --quiet --upgrade pip
	$(CLIENT_LINT)/bin/pip install --quiet --group clients/python/pyproject.toml:lint -e clients/python
	touch $@


# install-run: the services alone (what `make run` needs); install: everything to develop and test
install-run: $(RUN_STAMP)
install: $(DEV_STAMP)

$(PROTO_OUT): $(PROTO_SRC) $(RUN_STAMP)
	$(BIN)/python -m grpc_tools.protoc -I$(PROTO_DIR) \
		--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy \
		--plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--python_out=$(PROTO_DIR) --grpc_python_out=$(PROTO_DIR) --mypy_out=$(PROTO_DIR) \
		--mypy_grpc_out=$(PROTO_DIR) $(PROTO_SRC)
	touch $(PROTO_DIR)/cardroom/__init__.py $(PROTO_DIR)/cardroom/evaluator/__init__.py \
		$(PROTO_DIR)/cardroom/evaluator/v1/__init__.py
	touch $@

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
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund
	touch $@

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

# the images built from deploy/ and run by compose under podman, played through the
# edge; installs podman and what it needs when missing (docs/deploy.md)
test-images: protos $(DEV_STAMP)
	bash deploy/images/test.sh

# unit and integration tests without the long suites (marked slow)
test-fast: protos $(DEV_STAMP) $(CHECKOV_STAMP)
	$(PYTEST) -m "not slow" tests/unit tests/integration

$(CHECKOV_STAMP):
	rm -rf $(CHECKOV_VENV)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/pip install --quiet checkov==$(CHECKOV_VERSION)
	touch $@

checkov: $(CHECKOV_STAMP)

lint: protos $(DEV_STAMP) $(CLIENT_LINT_STAMP) $(CHECKOV_STAMP) $(TS_STAMP)
	cd $(TS_CLIENT) && npx openapi-typescript ../../gateway/http/openapi.yaml \
		--default-non-nullable=false -o node_modules/.schema-check.ts >/dev/null && \
		diff -u src/schema.ts node_modules/.schema-check.ts && npx tsc -p tsconfig.test.json --noEmit
	$(BIN)/ruff check gateway evaluator clients tests bench deploy
	$(BIN)/ruff format --check gateway evaluator clients tests bench deploy
	$(BIN)/mypy gateway evaluator clients/python/cardroom_client deploy tests bench
	$(CLIENT_LINT)/bin/mypy --config-file clients/python/pyproject.toml $(CLIENT_SOURCES)
	$(BIN)/mypy --python-version 3.13 $(CLIENT_SOURCES)
	$(CLIENT_LINT)/bin/vermin --no-tips --target=3.9- $(CLIENT_SOURCES)
	$(BIN)/lint-imports
	$(BIN)/python -m deploy.validate

bench: bench-evaluator bench-gateway

bench-evaluator: protos $(DEV_STAMP)
	$(BIN)/python -m bench.evaluator_bench

# ARGS: --quick, --scaling (1/2/4 workers, gthread and gevent), --gc (collector policy on/off),
# --profile (pyinstrument), --seats (buy-ins and cash-outs only), --against REV [--steps]
# (this tree against revision REV, alternating runs), --pairs N; all: bench/gateway_bench.py
bench-gateway: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway_bench $(ARGS)

# the figures of docs/capacity.md; ARGS: --quick, --against REV (that revision's clock too),
# --parts memory,watchers,clock,sweep; all: bench/capacity.py
bench-capacity: protos $(DEV_STAMP)
	$(BIN)/python -m bench.capacity $(ARGS)

# locust players against a running gateway (`make run`); start it with RATE_LIMIT_PER_ADDRESS=0
HOST ?= http://127.0.0.1:8000
USERS ?= 20
SPAWN_RATE ?= 5
DURATION ?= 60s
loadtest: protos $(DEV_STAMP)
	$(BIN)/locust -f bench/locustfile.py --headless --host $(HOST) --users $(USERS) \
		--spawn-rate $(SPAWN_RATE) --run-time $(DURATION) --stop-timeout 10 $(ARGS)

loadtest-evaluator: protos $(DEV_STAMP)
	$(BIN)/python -m evaluator.loadtest $(ARGS)

# the README's pictures of the table page, taken by the browser tests
screenshots: protos $(DEV_STAMP) browser
	CARDROOM_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest -q tests/browser

# the message catalogues (docs/languages.md): both domains extracted from the code into
# their templates, then every language's catalogue updated from its template
I18N := gateway/i18n
LANGUAGES := sw ps hu et
MESSAGE_KEYWORDS := -k RuleError:2 -k ApiError:4 -k problem:2 -k say:2 -k say_plural:2,3 \
	-k say_in:2c,3 -k N_ -k NP_:1c,2 -k bad_option:2 -k quota_exceeded:3 -k _chips:2,3 \
	-k from_rule_error:2 -k _coded:2 -k invalid_credential:1 -k StoreUnavailable:1 -k EvaluatorUnavailable:1
PAGE_KEYWORDS := -k t -k tn:1,2
messages: $(DEV_STAMP)
	$(BIN)/pybabel extract --project=cardroom --no-default-keywords $(MESSAGE_KEYWORDS) --add-comments=NOTE: \
		--no-location --sort-output -F $(I18N)/babel-messages.cfg -o $(I18N)/messages.pot gateway
	$(BIN)/pybabel extract --project=cardroom --no-default-keywords $(PAGE_KEYWORDS) --add-comments=NOTE: \
		--no-location --sort-output -F $(I18N)/babel-page.cfg -o $(I18N)/page.pot gateway
	for domain in messages page; do for lang in $(LANGUAGES); do \
		if [ -f $(I18N)/locales/$$lang/LC_MESSAGES/$$domain.po ]; then \
			$(BIN)/pybabel update --no-fuzzy-matching --ignore-obsolete -D $$domain \
				-i $(I18N)/$$domain.pot -d $(I18N)/locales -l $$lang; \
		else \
			$(BIN)/pybabel init -D $$domain -i $(I18N)/$$domain.pot -d $(I18N)/locales -l $$lang; \
		fi; done; done

demo: protos $(DEV_STAMP)
	$(BIN)/python -m deploy.demo $(ARGS)

# the server's wheel and the SDK's (cardroom-client), each built as pip builds it
dist: protos
	rm -rf dist
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist . clients/python

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) var dist .pytest_cache .mypy_cache .ruff_cache
	find $(PROTO_DIR) -name '*_pb2*.py*' -delete
