"""The JVM HMAC digest: `io.github.dqgovernance.masking.HmacMask` from the extension jar, as a Spark UDF.

One UDF per (normaliser, encoding, key) is registered in the session under a name built from the key's
public fingerprint, so plans read `dqgov_hmac_cpf_hex_1a2b3c4d5e6f(cpf#12)`. The key's pads live inside
the UDF object (serialized with each task), never in plan text or conf. They reach the JVM the way the
sha2 path's pads do, as the data of a one-row DataFrame; py4j then only carries a reference to its Row,
because py4j's own debug log prints every argument it sends. It computes the same bytes as the
built-in `sha2` path in a single call per value, several times faster (benchmarks/bench_masking.py).
"""

from __future__ import annotations

import logging
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from dq_governance.masking.keys import MaskingKey
from dq_governance.masking.methods import NORMALISERS, Digest
from dq_governance.session import java_class, log_once

HMAC_CLASS = "io.github.dqgovernance.masking.HmacMask"
REACH_CLASS = "io.github.dqgovernance.ExecutorReach"

log = logging.getLogger(__name__)


def available(spark: Any) -> bool:
    """Whether the JVM digest can run: the extension jar on the driver (and a py4j gateway) and on the executors."""
    return java_class(spark, HMAC_CLASS) is not None and _executors_load_it(spark)


def _executors_load_it(spark: Any) -> bool:
    """False when the jar is on the driver's class path alone: the UDF's tasks would fail on the executors."""
    reach = java_class(spark, REACH_CLASS)
    if reach is None or reach.reachable(spark.sparkContext._jsc.sc()):
        return True
    log_once(None, "hmac-driver-only", "keyed masks: the dq-governance jar is on the driver's class path only (not on "
             "spark.jars or spark.executor.extraClassPath), so the sha2 path is used (the same bytes)",
             level=logging.WARNING, logger=log)
    return False


def jvm_digest(spark: Any, key: MaskingKey) -> Digest | None:
    """A Digest backed by the JVM UDF, or None when the executors cannot run it (or on Connect)."""
    mask_class = java_class(spark, HMAC_CLASS)
    if mask_class is None or not _executors_load_it(spark):
        return None
    inner, outer = key.pads()
    pad_row = spark.createDataFrame([(bytearray(inner), bytearray(outer))], "ipad binary, opad binary")._jdf.head()
    # named by the secret's fingerprint, not key_id: a rotated key under a reused id must not replace the
    # function that frames built earlier (and not yet run) resolve by name
    tag = key.fingerprint.removeprefix("fp-")
    string_type = spark._jvm.org.apache.spark.sql.types.DataTypes.StringType
    registered: set[str] = set()

    def digest(col: Column, fmt: str | None, encoding: str) -> Column:
        normaliser = fmt if fmt in NORMALISERS else "text"
        name = f"dqgov_hmac_{normaliser}_{encoding}_{tag}"
        if name not in registered:
            udf = mask_class.fromPadRow(pad_row, normaliser, encoding)
            spark._jsparkSession.udf().register(name, udf, string_type)
            registered.add(name)
        return F.call_function(name, col.cast("string"))

    return digest
