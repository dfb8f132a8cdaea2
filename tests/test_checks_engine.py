"""Engine behaviour: empty input, missing columns, warn routing, caching, and Spark job counts."""

from __future__ import annotations

import re
import uuid

import pyspark
import pytest

from dq_governance.contracts.model import Contract
from dq_governance.errors import InputDataError

pytestmark = pytest.mark.spark


def contract(fields, rules=(), **quality):
    return Contract.model_validate({
        "contract": {"name": "t", "version": "1.0.0"},
        "dataset": {"name": "t"},
        "schema": {"fields": fields},
        "quality": {"rules": list(rules), **quality},
    })


ORDERS_FIELDS = [
    {"name": "id", "type": "long", "required": True, "unique": True},
    {"name": "amount", "type": "double", "minimum": 0},
]


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_empty_dataset(spark, mode):
    from dq_governance.checks.engine import evaluate

    df = spark.createDataFrame([], "id string, amount string")
    c = contract(ORDERS_FIELDS, [{"type": "row_count", "min": 1}, {"type": "avg", "column": "amount", "must_be": "> 0"}],
                 on_failure="fail")
    result = evaluate(df, c, mode=mode)
    try:
        assert (result.total_rows, result.valid_rows, result.invalid_rows, result.quality_score) == (0, 0, 0, None)
        assert result.rule("id_unique").failed_count == 0 and result.rule("id_unique").passed
        assert not result.rule("row_count").passed and result.rule("row_count").metric_value == 0.0
        assert result.rule("amount_avg").status == "skipped"
        assert not result.gate.passed  # the empty load is caught by row_count
        if mode == "split":
            assert result.valid_df.count() == 0 and result.quarantine_df.count() == 0
    finally:
        result.release()


def test_missing_columns_named(spark):
    from dq_governance.checks.engine import evaluate

    df = spark.createDataFrame([("1",)], "id string")
    with pytest.raises(InputDataError) as info:
        evaluate(df, contract(ORDERS_FIELDS + [{"name": "day", "type": "date"}]), source="in.csv")
    assert str(info.value) == "in.csv: input is missing contract column(s) amount, day (contract t)"
    with pytest.raises(InputDataError, match="^rule extra_range reads column"):
        evaluate(df, contract([{"name": "id"}], [{"type": "range", "column": "extra", "min": 0}]))


def test_warn_severity_and_warn_action_do_not_invalidate(spark):
    from dq_governance.checks.engine import evaluate

    c = contract([{"name": "a", "type": "long"}, {"name": "b", "type": "long"}], [
        {"type": "not_null", "column": "a", "severity": "warn"},
        {"type": "not_null", "column": "b", "action": "warn"},
        {"type": "range", "column": "b", "min": 0},
    ], on_failure="fail")
    result = evaluate(spark.createDataFrame([(None, None), (1, -1), (2, 2)], "a long, b long"), c)
    try:
        rows = sorted((r["a"], r["_dq_errors"], r["_dq_warnings"]) for r in result.annotated_df.collect()
                      if r["a"] is not None)
        assert rows == [(1, ["b_range"], []), (2, [], [])]
        nulls = result.annotated_df.where("a IS NULL").first()
        assert (nulls["_dq_errors"], nulls["_dq_warnings"]) == ([], ["a_not_null", "b_not_null"])
        assert (result.valid_rows, result.invalid_rows) == (2, 1)
        assert result.rule("a_not_null").status == "warned" and result.rule("b_not_null").status == "warned"
        assert result.rule("b_range").status == "failed"
        assert result.gate.reasons == ["row rule b_range failed on 1 row(s)"]
        assert result.valid_df.count() + result.quarantine_df.count() == result.total_rows
    finally:
        result.release()


@pytest.mark.parametrize("storage, kept_columns", [("packed", ["__dq_row", "__dq_bits0", "__dq_valid"]),
                                                   ("cache", None)])
def test_split_reads_the_kept_rows_not_the_input(spark, storage, kept_columns):
    from dq_governance.checks.engine import evaluate

    c = contract(ORDERS_FIELDS)
    df = spark.createDataFrame([("1", "5"), ("1", "x"), ("2", "-1"), ("3", "1")], "id string, amount string")
    result = evaluate(df, c, storage=storage)
    kept = result.cached[0]
    assert (kept.storage, result.split_storage) == (storage, storage)
    try:
        assert kept.persisted.is_cached
        if kept_columns:  # the row in one struct column, the bit word beside it; unpacked under the original names
            assert kept.persisted.columns == kept_columns
            packed = kept.persisted.schema["__dq_row"].dataType.fieldNames()
            assert [f for f in packed if not f.startswith("__dq_raw")] == ["id", "amount"]  # + the raw text
        assert [c for c in kept.frame.columns if not c.startswith("__dq_")] == ["id", "amount"]
        for output in (result.valid_df, result.quarantine_df, result.annotated_df):
            assert "InMemoryTableScan" in output._jdf.queryExecution().executedPlan().toString()  # kept rows
        before = sorted(map(tuple, result.quarantine_df.collect()))
        assert (result.valid_df.count(), len(before)) == (1, 3)
        assert [tuple(r) for r in result.valid_df.collect()] == [(3, 1.0)]
    finally:
        result.release()
    assert not result.cached and not kept.persisted.is_cached
    # After release the outputs read the input again (and convert it again), with the same rows.
    plan = result.valid_df._jdf.queryExecution().executedPlan().toString()
    assert "try_cast" in plan and "InMemoryTableScan" not in plan
    assert sorted(map(tuple, result.quarantine_df.collect())) == before and result.valid_df.count() == 1


def test_outputs_are_built_when_first_read_and_again_after_release(spark):
    from dq_governance.checks.engine import evaluate

    df = spark.createDataFrame([("1", "5"), ("2", "-1")], "id string, amount string")
    result = evaluate(df, contract(ORDERS_FIELDS))
    calls = []
    build = result.output_builder
    result.output_builder = lambda name, kept: calls.append((name, kept)) or build(name, kept)
    assert not {"annotated_df", "valid_df", "quarantine_df"} & set(vars(result))  # nothing built by evaluate
    assert result.valid_df.count() == 1 and result.valid_df.count() == 1 and calls == [("valid_df", True)]
    result.release()
    assert calls == [("valid_df", True)] and "valid_df" not in vars(result)
    mine = result.valid_df.limit(0)
    assert calls[-1] == ("valid_df", False)  # over the input again
    result.valid_df = mine  # an output assigned after release stays as assigned
    assert result.quarantine_df.count() == 1 and result.valid_df is mine
    result.release()  # twice is safe, and nothing is built again
    assert result.valid_df is mine and result.annotated_df.count() == 2
    assert calls == [("valid_df", True), ("valid_df", False), ("quarantine_df", False), ("annotated_df", False)]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        result.nope  # noqa: B018


def test_cache_storage_is_uncompressed_and_leaves_the_setting_alone(spark):
    from dq_governance.checks.materialize import keep

    setting = "spark.sql.inMemoryColumnarStorage.compressed"

    def cached_bytes(frame) -> int:
        frame.count()
        return _only_cached_rdd(spark).memSize()

    # Three repeated words compress ~10x with Spark's dictionary encoding.
    rows = spark.range(20_000).selectExpr("element_at(array('CRIADO', 'PAGO', 'CANCELADO'), int(id % 3) + 1) AS s")
    compressed = rows.persist()
    try:
        size_compressed = cached_bytes(compressed)
    finally:
        compressed.unpersist(blocking=True)
    assert spark.conf.get(setting, None) is None
    kept = keep(rows.select("s"), "cache")
    try:
        assert kept.storage == "cache"
        assert spark.conf.get(setting, None) is None  # restored right after persist
        size_kept = cached_bytes(kept.frame)
    finally:
        kept.unpersist()
    assert size_kept > 5 * size_compressed, (size_kept, size_compressed)
    spark.conf.set(setting, "true")  # a value the user set explicitly survives too
    try:
        keep(rows.select("s", "s"), "cache").unpersist()
        assert spark.conf.get(setting) == "true"
    finally:
        spark.conf.unset(setting)


@pytest.mark.skipif(pyspark.__version__.startswith("3."),
                    reason="Spark 3.5 keeps a cached aggregate's 50 shuffle partitions (materialize.persist_for_run)")
def test_run_caches_take_the_partitions_their_size_needs(spark):
    from dq_governance.checks.materialize import persist_for_run

    setting = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"

    def cached_partitions(frame) -> int:
        assert frame.count() == 10
        return _only_cached_rdd(spark).numCachedPartitions()

    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "50")
    try:
        keys = spark.range(100).selectExpr("id % 10 AS k").groupBy("k").count()
        plain = keys.persist()
        try:
            assert cached_partitions(plain) == 50  # one per shuffle partition, each a task on every read
        finally:
            plain.unpersist(blocking=True)
        ours = persist_for_run(keys)
        try:
            assert cached_partitions(ours) == 1 and spark.conf.get(setting) == "false"  # restored
        finally:
            ours.unpersist(blocking=True)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)


def _only_cached_rdd(spark):
    """Storage info of the session's one cached RDD (the test has just built it with an action)."""
    infos = [i for i in spark.sparkContext._jsc.sc().getRDDStorageInfo() if i.numCachedPartitions() > 0]
    assert len(infos) == 1, [i.name() for i in infos]
    return infos[0]


def test_split_storage_choice(spark):
    from dq_governance.checks.engine import evaluate
    from dq_governance.checks.materialize import resolve_storage
    from dq_governance.errors import ConfigError

    assert resolve_storage("auto") == "packed" and resolve_storage("cache") == "cache"
    # a plan-reading listener (OpenLineage) would see every output column come from every input column
    # through the packed struct, so it gets one cache column per field
    assert resolve_storage("auto", listeners=True) == "cache"
    assert resolve_storage("packed", listeners=True) == "packed"  # asked for explicitly
    with pytest.raises(ConfigError, match="unknown split storage 'disk'; expected one of auto, packed, cache"):
        evaluate(spark.createDataFrame([("1", "5")], "id string, amount string"), contract(ORDERS_FIELDS),
                 storage="disk")
    result = evaluate(spark.createDataFrame([("1", "5")], "id string, amount string"), contract(ORDERS_FIELDS))
    try:
        assert result.cached[0].storage == "packed"  # the test session has no listener
    finally:
        result.release()


def test_rows_larger_than_free_storage_memory_are_kept_on_disk_alone(spark, tmp_path, caplog):
    """Spark's estimate of the input above the free storage memory: DISK_ONLY, same answers; else the default.

    The parquet input is 7 rows; `spark.sql.sources.fileCompressionFactor` (Spark's own scale for a file's
    bytes, read when the files are listed) makes its estimate a million times its bytes on disk.
    """
    from pyspark.sql import functions as F

    from dq_governance.checks.engine import evaluate

    rows = [(1, 5.0), (1, 2.0), (2, -1.0), (3, 1.0), (None, 4.0), (4, None), (5, 0.0)]
    spark.createDataFrame(rows, "id long, amount double").write.parquet(str(tmp_path / "orders"))
    c = contract(ORDERS_FIELDS)
    key = "spark.sql.sources.fileCompressionFactor"
    previous = spark.conf.get(key, None)

    def split(frame):
        result = evaluate(frame, c)
        kept = result.cached[-1]
        level = kept.persisted.storageLevel
        try:
            counts = {r.name: r.failed_count for r in result.rules}
            outputs = (sorted(map(tuple, result.valid_df.collect())), sorted(map(str, result.quarantine_df.collect())))
            storage = spark.sparkContext._jsc.sc().getRDDStorageInfo()
            kept_bytes = [(int(i.memSize()), int(i.diskSize())) for i in storage if i.numCachedPartitions() > 0]
        finally:
            result.release()
        assert not spark.sparkContext._jsc.getPersistentRDDs()  # released: nothing stays
        return (kept.on_disk, level.useMemory, level.useDisk), counts, outputs, kept_bytes

    in_memory = split(spark.read.parquet(str(tmp_path / "orders")))
    try:
        spark.conf.set(key, "1000000")
        huge = spark.read.parquet(str(tmp_path / "orders"))
        with caplog.at_level("INFO", logger="dq_governance.checks.materialize"):
            on_disk = split(huge)
        joined = split(huge.join(spark.range(10).withColumnRenamed("id", "k"), F.col("id") == F.col("k"), "left")
                       .drop("k"))
        # a source with no size (Spark's placeholder, the largest long, scaled down by the projection)
        from_rdd = split(spark.createDataFrame(spark.sparkContext.parallelize(rows, 2), "id long, amount double")
                         .where("id IS NULL OR id > 0").select("id", "amount"))
    finally:
        spark.conf.unset(key) if previous is None else spark.conf.set(key, previous)
    assert in_memory[0] == (False, True, True)  # MEMORY_AND_DISK_DESER
    assert on_disk[0] == (True, False, True)  # DISK_ONLY
    assert joined[0] == (False, True, True)  # a join's estimate is the product of its sides: not trusted
    assert from_rdd[0] == (False, True, True)
    # the same answers wherever the rows were kept
    assert on_disk[1:3] == in_memory[1:3] == joined[1:3] == from_rdd[1:3]
    assert in_memory[1] == {"id_type": 0, "id_not_null": 1, "id_unique": 2, "amount_type": 0, "amount_range": 1,
                            "undeclared_columns": None}
    assert in_memory[2] == ([(3, 1.0), (4, None), (5, 0.0)], [
        "Row(id=1, amount=2.0, _dq_errors=['id_unique'], _dq_warnings=[])",
        "Row(id=1, amount=5.0, _dq_errors=['id_unique'], _dq_warnings=[])",
        "Row(id=2, amount=-1.0, _dq_errors=['amount_range'], _dq_warnings=[])",
        "Row(id=None, amount=4.0, _dq_errors=['id_not_null'], _dq_warnings=[])"])
    # the kept rows: in memory, or on disk with nothing in memory
    assert len(in_memory[3]) == 1 and in_memory[3][0][0] > 0 and in_memory[3][0][1] == 0
    assert len(on_disk[3]) == 1 and on_disk[3][0][0] == 0 and on_disk[3][0][1] > 0
    estimate = (huge._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()) >> 20
    assert estimate > 1000  # a million times a file of about a kilobyte
    logged = [r.getMessage() for r in caplog.records if "local disk" in r.getMessage()]
    assert len(logged) == 1 and re.fullmatch(f"keeping the checked rows on local disk: Spark estimates the input at "
                                              f"{estimate} MB, above the [0-9]+ MB of storage memory free", logged[0])


def _count_jobs(spark, action) -> int:
    sc = spark.sparkContext
    group = f"dq-test-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "counting jobs")
    try:
        action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def _wide_rules(n_rules: int):
    """n row rules spread over 10 columns (not_null, range, allowed_values, regex, expression)."""
    rules = []
    for i in range(n_rules):
        col = f"c{i % 10}"
        kind = (i // 10) % 4
        if kind == 0:
            rules.append({"type": "not_null", "name": f"r{i}", "column": col})
        elif kind == 1:
            rules.append({"type": "range", "name": f"r{i}", "column": col, "min": 0, "max": 90})
        elif kind == 2:
            rules.append({"type": "allowed_values", "name": f"r{i}", "column": col, "values": list(range(0, 100, 3))})
        else:
            rules.append({"type": "expression", "name": f"r{i}", "expression": f"{col} % 7 <> 3"})
    return rules


@pytest.mark.parametrize("mode", ["split", "counts"])
def test_job_count_does_not_grow_with_rules(spark, mode):
    from pyspark.sql import functions as F

    from dq_governance.checks.engine import evaluate

    df = spark.range(2000).select(F.col("id").alias("id"), *[((F.col("id") * (i + 3)) % 101).alias(f"c{i}")
                                                             for i in range(10)]).cache()
    df.count()
    fields = [{"name": "id", "type": "bigint", "unique": True}] + [{"name": f"c{i}", "type": "bigint"} for i in range(10)]
    jobs, results = {}, {}
    for n in (5, 40):
        c = contract(fields, _wide_rules(n))

        def run(c=c, n=n):
            result = evaluate(df, c, mode=mode)
            if mode == "split":
                result.valid_df.write.format("noop").mode("overwrite").save()
                result.quarantine_df.write.format("noop").mode("overwrite").save()
            result.release()
            results[n] = result

        jobs[n] = _count_jobs(spark, run)
    df.unpersist()
    assert len(results[40].rules) == len(results[5].rules) + 35
    assert jobs[5] == jobs[40], jobs
    # one aggregation for the key set, one pass for everything else (AQE adds a job per shuffle stage),
    # plus two output writes in split mode
    assert jobs[40] <= (8 if mode == "split" else 6), jobs


def test_bad_inputs_are_one_line_errors(spark, tmp_path):
    from dq_governance.checks.engine import evaluate
    from dq_governance.errors import ConfigError, ContractError

    df = spark.createDataFrame([("1",)], "id string")
    fields = [{"name": "id", "type": "long"}]
    with pytest.raises(ConfigError, match="unknown check mode 'fast'"):
        evaluate(df, contract(fields), mode="fast")
    with pytest.raises(ContractError, match="^rule bad_expr: invalid SQL expression 'nope > 1'"):
        evaluate(df, contract(fields, [{"type": "expression", "name": "bad_expr", "expression": "nope > 1"}]))
    good = {"type": "expression", "name": "good_expr", "expression": "id > 0"}
    with pytest.raises(ContractError, match="^rule broken: invalid SQL expression 'id >'"):  # does not parse
        evaluate(df, contract(fields, [good, {"type": "expression", "name": "broken", "expression": "id >"}]))
    with pytest.raises(ContractError, match="^rule late: invalid SQL expression 'nope = 1'"):  # resolved together
        evaluate(df, contract(fields, [good, {"type": "expression", "name": "late", "expression": "nope = 1"}]))
    missing = str(tmp_path / "absent.csv")
    fk = {"type": "foreign_key", "column": "id", "reference": {"path": missing, "format": "csv", "column": "id"}}
    with pytest.raises(InputDataError, match=f"^cannot read reference {missing}"):
        evaluate(df, contract(fields, [fk]))
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("_validation_df")]


def test_recheck_of_annotated_data_replaces_annotations(spark):
    from dq_governance.checks.engine import evaluate

    first = evaluate(spark.createDataFrame([("1",), ("x",)], "id string"), contract([{"name": "id", "type": "long"}]))
    try:
        again = evaluate(first.quarantine_df, contract([{"name": "id", "type": "long"}]))
        rows = again.annotated_df.collect()
        assert [(r["id"], r["_dq_errors"]) for r in rows] == [("x", ["id_type"])]
        assert again.annotated_df.columns == ["id", "_dq_errors", "_dq_warnings"]
        again.release()
    finally:
        first.release()


def test_rule_names_with_quotes_and_backslashes_annotate_rows(spark):
    from dq_governance.checks.engine import evaluate

    odd = "it's a \\d rule"
    c = contract([{"name": "id", "type": "long"}],
                 [{"type": "expression", "name": odd, "expression": "id > 1"},
                  {"type": "expression", "name": "ünïcode rule", "expression": "id > 2", "severity": "warn"}])
    result = evaluate(spark.createDataFrame([("1",), ("2",), ("3",)], "id string"), c)
    try:
        rows = sorted(map(tuple, result.annotated_df.collect()))
        assert rows == [("1", [odd], ["ünïcode rule"]), ("2", [], ["ünïcode rule"]), ("3", [], [])]
        assert (result.rule(odd).failed_count, result.rule("ünïcode rule").failed_count) == (1, 2)
    finally:
        result.release()


def test_rule_names_of_a_row_across_words_and_name_chunks(spark):
    from dq_governance.checks.engine import evaluate

    # 70 rules: flags in two 63-bit words, names in three chunks of 32; every third rule warns. Rule r<i>
    # fails where a is a multiple of i + 2, so a = 0 fails all 70, 71 (prime) only the last, 1 none.
    warns = {i for i in range(70) if i % 3 == 0}
    rules = [{"type": "expression", "name": f"r{i}", "expression": f"a % {i + 2} <> 0",
              **({"severity": "warn"} if i in warns else {})} for i in range(70)]
    values = [0, 1, 2, 33, 34, 64, 65, 71]
    result = evaluate(spark.createDataFrame([(a,) for a in values], "a long"),
                      contract([{"name": "a", "type": "long"}], rules))
    try:
        names = {r["a"]: (r["_dq_errors"], r["_dq_warnings"]) for r in result.annotated_df.collect()}
        fails = {a: [i for i in range(70) if a % (i + 2) == 0] for a in values}
        assert names == {a: ([f"r{i}" for i in f if i not in warns], [f"r{i}" for i in f if i in warns])
                         for a, f in fails.items()}
        # the same by hand for a few rows: 33 = 3 x 11, 65 = 5 x 13, 64 = 2^6, 71 prime
        assert names[33] == (["r1", "r31"], ["r9"]) and names[65] == (["r11"], ["r3", "r63"])
        assert names[64] == (["r2", "r14", "r62"], ["r0", "r6", "r30"]) and names[71] == ([], ["r69"])
        assert names[1] == ([], [])
        assert {r.name: r.failed_count for r in result.rules if r.type == "expression"}["r63"] == 2  # 0, 65
        assert (result.valid_rows, result.invalid_rows) == (3, 5)  # 1, 2 and 71 break no error rule
    finally:
        result.release()
