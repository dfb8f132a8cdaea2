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

# The main job on the embedded defaults: local Spark, local files, OpenLineage to a JSONL file.
demo: venv java
	$(DQGOV) lint contracts/*

test: venv java listener-jar listener
	@scripts/ensure-chromium.sh
	$(PY) -m pytest -q

# The OpenLineage Spark listener jar (pinned 1.53.0) into the git-ignored listeners/lib/.
listener-jar: java
	@listeners/fetch-openlineage-spark >/dev/null

# The dq-governance listener extension, listeners/target/dq-governance-listener-<version>.jar (git-ignored);
# `package` runs its JUnit tests first, so `make test` (and CI) runs them too.
listener: java
	mvn -q -f listeners/pom.xml package

bench: venv java
	$(PY) benchmarks/bench_checks.py

clean:
	rm -rf $(VENV) out .dqgov listeners/target listeners/lib
