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

.PHONY: all install install-run protos run test test-fast lint bench bench-evaluator bench-gateway \
	loadtest loadtest-evaluator demo browser screenshots clean

all: test

$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[protoc]'
	touch $@

$(DEV_STAMP): $(RUN_STAMP) pyproject.toml clients/python/pyproject.toml
	$(BIN)/pip install --quiet -e '.[protoc,dev]' -e clients/python
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

test: protos $(DEV_STAMP) browser
	$(BIN)/python -m pytest -q

# unit and integration tests without the long suites (marked slow)
test-fast: protos $(DEV_STAMP)
	$(BIN)/python -m pytest -q -m "not slow" tests/unit tests/integration

lint: protos $(DEV_STAMP)
	$(BIN)/ruff check gateway evaluator clients tests bench deploy
	$(BIN)/ruff format --check gateway evaluator clients tests bench deploy
	$(BIN)/mypy gateway evaluator clients/python/cardroom_client deploy tests bench
	$(BIN)/python -m deploy.validate

bench: bench-evaluator bench-gateway

bench-evaluator: protos $(DEV_STAMP)
	$(BIN)/python -m bench.evaluator_bench

# ARGS: --quick, --scaling (1/2/4 workers, gthread and gevent), --gc (collector policy on/off),
# --profile (pyinstrument)
bench-gateway: protos $(DEV_STAMP)
	$(BIN)/python -m bench.gateway_bench $(ARGS)

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

demo: protos $(DEV_STAMP)
	$(BIN)/python -m deploy.demo $(ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
	find $(PROTO_DIR) -name '*_pb2*.py*' -delete
