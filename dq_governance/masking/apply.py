"""Apply a contract's masks to a DataFrame: same columns, same order, masked values.

The key reaches the executors as data, never as plan text. With the extension jar on the driver, keyed
masks use its HMAC UDF (`jvm_hmac.py`: the pads travel inside the UDF object). Without it (and always on
Spark Connect, which has no driver JVM to build the UDF object in), the pads form
a one-row DataFrame (an RDD, shown in plans only as `Scan ExistingRDD[...]`) that is broadcast and
cross-joined, the HMAC is built from `sha2`, and the pad columns are dropped by the final projection.
Both give the same bytes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dq_governance.contracts.model import Contract, MaskingPolicy, MaskingSpec
from dq_governance.errors import ConfigError, InputDataError
from dq_governance.identifiers import quote_identifier, working_name_clashes
from dq_governance.masking.keys import MaskingKey, resolve_key
from dq_governance.masking.methods import Digest, MaskContext, keyed_text, mask_column, sha2_digest
from dq_governance.masking.policies import KEYED_METHODS, effective_policy, masked_columns, undeclared_masks

log = logging.getLogger(__name__)

IPAD_COL = "__dqgov_mask_ipad"
OPAD_COL = "__dqgov_mask_opad"
#: how keyed masks compute HMAC: "auto" (the JVM UDF when its jar is loaded), "jvm" (required) or "sha2"
HMAC_ENGINES = ("auto", "jvm", "sha2")
#: column metadata written with every masked column (lands in the parquet / delta schema)
META_METHOD = "dqgov.masking"
META_KEY_ID = "dqgov.masking.key_id"


class MaskTarget(NamedTuple):
    """One masked column: its top-level column and dotted path as in the frame, its contract path, its spec."""

    top: str
    path: str
    contract_path: str
    spec: MaskingSpec


def apply_masks(
    df: DataFrame,
    contract: Contract,
    *,
    keys: MaskingKey | bytes | str | None = None,
    policy: MaskingPolicy | None = None,
    base_dir: Path | None = None,
    hmac_engine: str = "auto",
) -> DataFrame:
    """Mask the contract's masked columns of `df` (and its undeclared ones under `undeclared_columns: mask`).

    A needed key that is missing raises ConfigError now.
    """
    if hmac_engine not in HMAC_ENGINES:
        raise ConfigError(f"hmac_engine must be one of {', '.join(HMAC_ENGINES)}, got {hmac_engine!r}")
    clash = working_name_clashes(df.columns)
    if clash:  # the pads are joined in under such names
        raise InputDataError(clash)
    targets = mask_targets(df.schema, contract, policy)
    if not targets:
        return df
    key = None
    if any(target.spec.method in KEYED_METHODS for target in targets):
        key = _key(keys, effective_policy(contract, policy), base_dir)
    source, digest = df, None
    if key is not None:
        source, digest = _digest(df, key, hmac_engine)

    by_top: dict[str, list[MaskTarget]] = {}
    for target in targets:
        by_top.setdefault(target[0], []).append(target)
    columns: list[Column] = []
    for struct_field in df.schema.fields:
        name = struct_field.name
        entries = by_top.get(name)
        if not entries:
            columns.append(F.col(quote_identifier(name)))
            continue
        columns.append(_masked_top(name, struct_field, entries, contract, digest, key))
    return source.select(*columns)


def with_pseudonyms(df: DataFrame, columns: dict[str, str], contract: Contract, *,
                    keys: MaskingKey | bytes | str | None = None, base_dir: Path | None = None) -> DataFrame:
    """`df` plus, for each `column: alias`, the column's keyed HMAC (hex, normalised by its field's `format`, as
    `hmac` masks it) as `alias`: equal values get equal pseudonyms, and the raw value never has to be stored."""
    key = _key(keys, effective_policy(contract, None), base_dir)
    source, digest = _digest(df, key, "auto")
    formats = {spec.name: spec.format for spec in contract.fields}
    types = {f.name: f.dataType for f in df.schema.fields}
    pseudonyms = [digest(keyed_text(F.col(quote_identifier(c)), types.get(c, T.StringType())).cast("string"),
                         formats.get(c), "hex").alias(alias)
                  for c, alias in columns.items()]
    return source.select(*[F.col(quote_identifier(c)) for c in df.columns], *pseudonyms)


def _digest(df: DataFrame, key: MaskingKey, engine: str) -> tuple[DataFrame, Digest]:
    """The frame to select from and the HMAC digest: the JVM UDF, else sha2 over broadcast pad columns."""
    if engine != "sha2":
        from dq_governance.masking.jvm_hmac import jvm_digest

        digest = jvm_digest(df.sparkSession, key)
        if digest is not None:
            log.debug("keyed masks: JVM HMAC UDF (key id %s)", key.key_id)
            return df, digest
        if engine == "jvm":
            from dq_governance.lineage.enrich import HOW_TO_BUILD
            from dq_governance.session import is_connect, unsupported

            if is_connect(df.sparkSession):
                raise unsupported("hmac_engine 'jvm'", "hmac_engine 'auto' or 'sha2' (the same bytes)")

            raise ConfigError("hmac_engine 'jvm' needs the dq-governance extension jar on the driver and the executors "
                              f"(spark.jars); {HOW_TO_BUILD}")
    log.debug("keyed masks: sha2 construction over broadcast pads (key id %s)", key.key_id)
    inner, outer = key.pads()
    pads = df.sparkSession.createDataFrame(
        [(bytearray(inner), bytearray(outer))],
        T.StructType([T.StructField(IPAD_COL, T.BinaryType()), T.StructField(OPAD_COL, T.BinaryType())]),
    )
    return df.crossJoin(F.broadcast(pads)), sha2_digest(F.col(IPAD_COL), F.col(OPAD_COL))


def _masked_top(
    name: str,
    struct_field: T.StructField,
    entries: list[MaskTarget],
    contract: Contract,
    digest: Digest | None,
    key: MaskingKey | None,
) -> Column:
    """The masked top-level column: the whole column, or its struct with fields replaced."""
    top_col = F.col(quote_identifier(name))
    methods = sorted({spec.method for _, _, _, spec in entries})
    meta = {META_METHOD: ",".join(methods)}
    if key is not None and any(m in KEYED_METHODS for m in methods):
        meta[META_KEY_ID] = key.key_id
    for _, path, contract_path, spec in entries:
        rest = path[len(name) + 1:].split(".") if path != name else []
        dtype = _dtype_at(struct_field.dataType, rest) if rest else struct_field.dataType
        ctx = MaskContext(path=path, dtype=dtype, field=contract.field(contract_path), digest=digest)
        if not rest:
            return mask_column(top_col, spec, ctx).alias(name, metadata=meta)
        nested = top_col.getField(rest[0])
        for part in rest[1:]:
            nested = nested.getField(part)
        top_col = top_col.withField(".".join(map(quote_identifier, rest)), mask_column(nested, spec, ctx))
    return top_col.alias(name, metadata=meta)


def mask_targets(
    schema: T.StructType, contract: Contract, policy: MaskingPolicy | None = None
) -> list[MaskTarget]:
    """What `apply_masks` masks in a frame of `schema`: the contract's masked paths present, then undeclared columns.

    A masked path whose top-level column is absent is skipped (a frame without a PII column cannot leak it);
    one whose column is there but does not resolve (a nested field missing, a string or map where the contract
    declares a struct) raises ConfigError: the column is PII and would leave unmasked.
    """
    specs = masked_columns(contract, policy)
    nested = contract.nested_paths()
    targets = [target for path, spec in specs.items()
               if (target := _target(schema, path, spec, path in nested)) is not None]
    # undeclared columns are top-level names as read (a dot in one is part of its name, not a path)
    undeclared = undeclared_masks(contract, [f.name for f in schema.fields], policy)
    return targets + [MaskTarget(name, name, name, spec) for name, spec in undeclared.items()]


def _field(struct: T.StructType, name: str) -> T.StructField | None:
    """The field called `name`: exact match first, else case-insensitive (Spark's default resolution)."""
    return next((f for f in struct.fields if f.name == name), None) or next(
        (f for f in struct.fields if f.name.lower() == name.lower()), None)


def _target(schema: T.StructType, path: str, spec: MaskingSpec, nested: bool) -> MaskTarget | None:
    whole = _field(schema, path) if "." in path and not nested else None
    if whole is not None:  # a top-level column whose name holds a dot (`cliente.cpf` read from CSV)
        return MaskTarget(whole.name, whole.name, path, spec)
    parts = path.split(".")
    top = _field(schema, parts[0])
    if top is None:
        return None
    names = [top.name]
    current = top.dataType
    for part in parts[1:]:
        where = ".".join(names)
        if isinstance(current, T.ArrayType):
            raise ConfigError(f"column {path}: masking a field inside an array is not supported")
        if not isinstance(current, T.StructType):
            raise ConfigError(
                f"column {path}: `{where}` is {current.simpleString()}, not a struct, so `{part}` cannot be masked "
                f"inside it; mask `{where}` whole (a field-level `masking` on it) or read it as a struct")
        found = _field(current, part)
        if found is None:
            raise ConfigError(f"column {path}: struct `{where}` has no field `{part}`; the masked field cannot "
                              "be found, refusing to leave it unmasked")
        names.append(found.name)
        current = found.dataType
    return MaskTarget(names[0], ".".join(names), path, spec)


def _dtype_at(dtype: T.DataType, parts: list[str]) -> T.DataType:
    for part in parts:
        assert isinstance(dtype, T.StructType)
        dtype = dtype[part].dataType
    return dtype


def _key(keys: MaskingKey | bytes | str | None, policy: MaskingPolicy, base_dir: Path | None) -> MaskingKey:
    if isinstance(keys, MaskingKey):
        return keys
    if keys is not None:
        return MaskingKey.from_secret(keys, policy.key_id)
    return resolve_key(policy, base_dir=base_dir)


