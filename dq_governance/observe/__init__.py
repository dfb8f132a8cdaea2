"""Observability: volume anomalies, freshness, schema drift, the history report, indicators.

Everything here except `history.read_history_rows` on Delta is Spark-free: the check engine calls the
pure functions from its rule builders, and the report reads the history with pyarrow.
"""
