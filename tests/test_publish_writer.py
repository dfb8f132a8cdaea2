"""Staging and promotion on parquet paths: the target changes only on promote, byte for byte otherwise."""

from __future__ import annotations

import pytest

import _publish_fixtures as fx
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.publish.writer import Output, dataset_identity, retry_tag, stage

pytestmark = pytest.mark.spark


def _frame(spark, ids):
    return spark.createDataFrame([(i, f"v{i}") for i in ids], "id long, v string")


def _ids(spark, path):
    return sorted(r["id"] for r in spark.read.parquet(str(path)).collect())


def test_overwrite_promote_replaces_and_discard_leaves_target(spark, tmp_path):
    target = tmp_path / "t"
    first = stage(_frame(spark, [1, 2, 3]), Output(str(target)), run_id="a")
    assert first.rows == 3 and not target.exists()  # staged beside the target, target not created yet
    assert (tmp_path / f".dqgov-staging-a-{retry_tag(None, 'a')}" / "t").is_dir()
    first.promote()
    assert _ids(spark, target) == [1, 2, 3]
    before = fx.tree(target)

    second = stage(_frame(spark, [9]), Output(str(target)), run_id="b")
    assert fx.tree(target) == before  # staging never touches the target
    second.discard()
    assert fx.tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # no staging left behind

    third = stage(_frame(spark, [7, 8]), Output(str(target)), run_id="c")
    third.promote()
    assert _ids(spark, target) == [7, 8]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # the previous copy is gone too


def test_append_moves_staged_files_in(spark, tmp_path):
    target = tmp_path / "t"
    stage(_frame(spark, [1, 2]), Output(str(target), mode="append"), run_id="a").promote()
    stage(_frame(spark, [3]), Output(str(target), mode="append"), run_id="b").promote()
    assert _ids(spark, target) == [1, 2, 3]


def test_append_with_other_schema_fails_before_touching_target(spark, tmp_path):
    target = tmp_path / "t"
    stage(_frame(spark, [1]), Output(str(target), mode="append"), run_id="a").promote()
    before = fx.tree(target)
    other = spark.createDataFrame([(1, 2)], "id long, w long")
    staged = stage(other, Output(str(target), mode="append"), run_id="b")
    with pytest.raises(InputDataError, match="cannot append to .*schema differs"):
        staged.promote()
    assert fx.tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_replace_partitions_is_idempotent_per_run(spark, tmp_path):
    target = tmp_path / "q"
    out = Output(str(target), mode="replace_partitions", partition_by=["run"])
    frame = spark.createDataFrame([("r1", 1), ("r1", 2)], "run string, id long")
    stage(frame, out, run_id="r1").promote()
    stage(spark.createDataFrame([("r2", 5)], "run string, id long"), out, run_id="r2").promote()
    stage(frame, out, run_id="r1").promote()  # the same run again
    rows = sorted((r["run"], r["id"]) for r in spark.read.parquet(str(target)).collect())
    assert rows == [("r1", 1), ("r1", 2), ("r2", 5)]
    # a re-run that now has no rows removes the run's earlier rows
    empty = stage(spark.createDataFrame([], "run string, id long"), out, run_id="r1")
    empty.clear = ["run=r1"]
    empty.promote()
    assert sorted((r["run"], r["id"]) for r in spark.read.parquet(str(target)).collect()) == [("r2", 5)]


def test_empty_frame_stages_zero_rows(spark, tmp_path):
    staged = stage(spark.createDataFrame([], "id long, v string"), Output(str(tmp_path / "t")), run_id="e")
    assert staged.rows == 0
    staged.promote()
    assert spark.read.schema("id long, v string").parquet(str(tmp_path / "t")).count() == 0


def test_bad_output_options_fail_before_any_write(tmp_path):
    with pytest.raises(ConfigError, match="mode merge needs merge_keys"):
        Output(str(tmp_path / "t"), "delta", "merge")
    with pytest.raises(ConfigError, match="mode merge needs format delta"):
        Output(str(tmp_path / "t"), "parquet", "merge", ["id"])
    with pytest.raises(ConfigError, match="format must be one of"):
        Output(str(tmp_path / "t"), "orc")
    with pytest.raises(ConfigError, match="merge_keys only go with mode merge, not overwrite"):
        Output(str(tmp_path / "t"), "parquet", "overwrite", ["id"])
    assert not (tmp_path / "t").exists()


def test_delta_on_plain_session_is_a_config_error(spark, tmp_path):
    staged = stage(_frame(spark, [1]), Output(str(tmp_path / "d"), "delta"), run_id="x")
    with pytest.raises(ConfigError, match="Delta needs delta-spark and a session"):
        staged.promote()
    assert not (tmp_path / "d").exists()


def test_table_target_overwrite_and_append(spark, tmp_path):
    name = "dqgov_writer_test_table"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    try:
        stage(_frame(spark, [1, 2]), Output(name, "table"), run_id="a").promote()
        stage(_frame(spark, [3]), Output(name, "table", "append"), run_id="b").promote()
        assert sorted(r["id"] for r in spark.table(name).collect()) == [1, 2, 3]
        stage(_frame(spark, [4]), Output(name, "table"), run_id="c").promote()
        assert [r["id"] for r in spark.table(name).collect()] == [4]
        namespace, path = dataset_identity(spark, Output(name, "table"))
        assert namespace == "file" and path.endswith(f"/{name}")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_dataset_identity_of_a_path(spark, tmp_path):
    assert dataset_identity(spark, Output(str(tmp_path / "t"))) == ("file", str(tmp_path / "t"))


def test_partition_dir_escapes_exactly_like_spark(spark):
    from dq_governance.publish.writer import partition_dir, partition_value

    utils = spark._jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
    for code in range(1, 256):
        value = f"a{chr(code)}b"
        assert partition_dir("c", value) == f"c={utils.escapePathName(value)}", repr(chr(code))
        assert partition_value(partition_dir("c", value)) == value
    value = "2026-01-01T00:00:00Z"
    assert partition_dir("_dq_run_id", value) == "_dq_run_id=2026-01-01T00%3A00%3A00Z"
    assert partition_value("_dq_run_id=2026-01-01T00%3A00%3A00Z") == value
    assert partition_dir("p", None) == partition_dir("p", "") == "p=__HIVE_DEFAULT_PARTITION__"
    assert partition_value("p=__HIVE_DEFAULT_PARTITION__") is None


def test_replace_where_predicate_matches_null_partitions():
    from dq_governance.publish.writer import _partition_predicate

    assert _partition_predicate([{"p": None, "q": 1}, {"p": "it's", "q": None}]) == (
        "(`p` IS NULL AND `q` = '1') OR (`p` = 'it\\'s' AND `q` IS NULL)")


def test_table_overwrite_keeps_a_partitioned_parquet_table(spark):
    from dq_governance.publish.writer import table_info

    name = "dqgov_writer_part_overwrite"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    try:
        spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING parquet PARTITIONED BY (v)")
        spark.sql(f"INSERT INTO {name} VALUES (9, 'old')")
        stage(_frame(spark, [1, 2]), Output(name, "table"), run_id="a").promote()
        info = table_info(spark, name)
        assert (info.provider, info.partition_by) == ("parquet", ["v"])
        assert sorted((r["id"], r["v"]) for r in spark.table(name).collect()) == [(1, "v1"), (2, "v2")]
        with pytest.raises(ConfigError, match=f"table {name}: overwrite with partition_by \\[id\\] of a table "
                                              "partitioned by \\[v\\]"):
            stage(_frame(spark, [3]), Output(name, "table", partition_by=["id"]), run_id="b")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
