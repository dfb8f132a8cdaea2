"""Where staged outputs live, in one Spark-free place the writer and the listener settings share."""

from __future__ import annotations

STAGING_PREFIX = ".dqgov-staging-"
#: for `spark.openlineage.dataset.removePath.pattern`: the listener strips the `remove` group from
#: dataset paths, so a staged write `<parent>/.dqgov-staging-<run_id>-<tag>/<name>` is named as its target.
STAGING_REMOVE_PATTERN = r"(?<remove>/\.dqgov-staging-[^/]+)"


def staged_path(target: str, key: str) -> str:
    """The staging path of a file target: a hidden directory per run (`key`) beside it, same leaf name."""
    parent, _, name = target.rstrip("/").rpartition("/")
    return f"{(parent or '.').rstrip('/')}/{STAGING_PREFIX}{key}/{name}"
