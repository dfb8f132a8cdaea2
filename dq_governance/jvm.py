"""The driver JVM through py4j: find a class of ours (the dq-governance extension jar) if it is loaded.

Every caller has a pure-Python or pure-Spark fallback: Spark Connect has no driver JVM to talk to, and a
session started without the extension jar simply lacks the classes.
"""

from __future__ import annotations

from typing import Any


def java_class(spark: Any, class_name: str) -> Any | None:
    """The py4j JavaClass `class_name` on the driver's classpath, or None (no gateway, or jar not loaded)."""
    try:
        from py4j.java_gateway import JavaClass
    except ImportError:
        return None
    try:
        jvm = getattr(spark, "_jvm", None)
        if jvm is None:
            jvm = spark.sparkContext._jvm  # classic sessions before _jvm existed on SparkSession
        if jvm is None:
            return None
        node = jvm
        for part in class_name.split("."):
            node = getattr(node, part)
    except Exception:  # Spark Connect raises on _jvm / sparkContext: there is no driver JVM to talk to
        return None
    # py4j answers an unknown class with a JavaPackage: the jar is not on the driver's classpath
    return node if isinstance(node, JavaClass) else None
