# Two commands on a fresh machine:  `make demo` (set up + main job)  and  `make test` (set up + all tests).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
DQGOV   = $(VENV)/bin/dqgov

.PHONY: demo test venv java listener-jar listener clean bench

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

java:
	@scripts/ensure-java.sh

# The main job on the embedded defaults: local Spark, local files, OpenLineage to a JSONL file, the
# OpenLineage Spark listener and our extension jar (its HMAC UDF masks PII columns).
# The seed lab (orders) is meant to be blocked by its gate (exit 1); sales publishes. Exit 2 still fails make.
demo: venv java listener-jar listener
	$(DQGOV) lint contracts/*
	@mkdir -p .dqgov && [ -s .dqgov/demo-masking.key ] || head -c 32 /dev/urandom > .dqgov/demo-masking.key
	@echo "== dqgov check contracts/orders.yaml (the seed lab: the gate blocks, exit 1) =="
	@DQGOV_MASKING_KEY_FILE=.dqgov/demo-masking.key $(DQGOV) check contracts/orders.yaml \
		--input examples/data/orders.csv; code=$$?; [ $$code -eq 1 ] || exit $$code
	@echo "== dqgov check contracts/sales.yaml (publishes, exit 0) =="
	@DQGOV_MASKING_KEY_FILE=.dqgov/demo-masking.key $(DQGOV) check contracts/sales.yaml \
		--input examples/data/sales.csv
	@echo "outputs under out/: <contract>/valid, <contract>/quarantine, report/ (history), lineage/events.jsonl"

test: venv java listener-jar listener
	@scripts/ensure-chromium.sh
	$(PY) -m pytest -q

# The OpenLineage Spark listener jar (pinned 1.53.0) into the git-ignored listeners/lib/.
listener-jar: java
	@listeners/fetch-openlineage-spark >/dev/null

# The dq-governance listener extension, listeners/target/dq-governance-listener-<version>.jar (git-ignored);
# `package` runs its JUnit tests first, so `make test` (and CI) runs them too. Rebuilt only when a source changed.
LISTENER_JAR = listeners/target/dq-governance-listener-0.1.0.jar
LISTENER_SRC = listeners/pom.xml $(shell find listeners/src -type f 2>/dev/null)

listener: java $(LISTENER_JAR)

$(LISTENER_JAR): $(LISTENER_SRC)
	mvn -q -f listeners/pom.xml package
	@touch $@

bench: venv java
	$(PY) benchmarks/bench_checks.py

clean:
	rm -rf $(VENV) out .dqgov listeners/target listeners/lib
