"""Observability: volume anomalies, freshness, schema drift, the history report, indicators.

Everything here is Spark-free except reading the history through Spark (`history.read_history_rows` on Delta or
a URI, and the pipeline's `volume_history` / `previous_run_schema`): the check engine calls the pure functions
from its rule builders, and the report reads a local parquet history with pyarrow.
"""
