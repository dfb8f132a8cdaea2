#!/usr/bin/env bash
# A second virtualenv on Spark 3.5, built from the project's own files: the newest PySpark 3.5 plus
# `-e .[dev]` (pip takes delta-spark 3.3.x), pinned by scripts/constraints-35.txt, and the OpenLineage
# listener jar for Scala 2.12 in listeners/lib/ (beside the 2.13 one the Spark 4.0 venv uses).
#
# Usage: scripts/venv35.sh [--connect]        (from any directory; prints the venv's python on stdout)
#   VENV35   where the venv goes (default: .venv35 in the repo)
#   PYTHON   the interpreter that creates it (default: python3)
#   --connect  also install the Spark Connect client extra (`.[dev,connect]`)
# Then e.g.:  .venv35/bin/python -m pytest -q tests/test_compat.py
# Re-running is cheap: the venv is rebuilt only when pyproject.toml or the constraints changed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
VENV="${VENV35:-$REPO/.venv35}"
PYTHON="${PYTHON:-python3}"
EXTRAS="dev"
for arg in "$@"; do
  case "$arg" in
    --connect) EXTRAS="dev,connect" ;;
    *) echo "venv35.sh: unknown argument $arg (usage: scripts/venv35.sh [--connect])" >&2; exit 2 ;;
  esac
done
CONSTRAINTS="$REPO/scripts/constraints-35.txt"
STAMP="$VENV/.installed-$EXTRAS"

if [[ ! -f "$STAMP" || "$REPO/pyproject.toml" -nt "$STAMP" || "$CONSTRAINTS" -nt "$STAMP" ]]; then
  [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
  echo '*' > "$VENV/.gitignore"  # never committed (as Python 3.13's venv does by itself)
  "$VENV/bin/python" -m pip install -q --upgrade pip >&2
  "$VENV/bin/python" -m pip install -q -c "$CONSTRAINTS" -e ".[$EXTRAS]" >&2
  "$VENV/bin/python" - >&2 <<'PY'
from importlib.metadata import version
spark, delta = version("pyspark"), version("delta-spark")
assert spark.startswith("3.5.") and delta.startswith("3."), (spark, delta)
print(f"venv35: pyspark {spark}, delta-spark {delta}")
PY
  touch "$STAMP"
fi
PYTHON="$VENV/bin/python" listeners/fetch-openlineage-spark >/dev/null
echo "$VENV/bin/python"
