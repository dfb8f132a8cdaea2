"""Catalog names for a contract's dataset: the OpenMetadata table FQN and the DataHub dataset URN.

Each part of a name comes from the first of these that sets it:

1. an override: a `dqgov sync` option (`--service`, `--database`, `--schema`, `--platform`,
   `--platform-instance`, `--env`);
2. the contract: its `dataset.catalog` hints, then its `dataset.name`;
3. a default: the project config (`openmetadata.service`, `datahub.env`, ... in `.dqgov/config.yaml`);
4. DataHub only: the built-in `spark` platform and `PROD` environment.

An OpenMetadata part that none of them sets is an error naming the option and the config key that
supply it. `dataset.name` gives the end of the FQN: `table`, `schema.table` or `database.schema.table`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from dq_governance.contracts.hints import did_you_mean
from dq_governance.contracts.model import CATALOG_HINTS, Contract
from dq_governance.errors import ConfigError, ContractError

#: where a project config is looked for, as messages name it
DEFAULT_CONFIG = ".dqgov/config.yaml"
#: OpenMetadata FQN parts above the table, outermost first
OM_PARTS = ("service", "database", "schema")
#: naming setting -> (the `dqgov sync` option, the project-config key) that supply it
SETTINGS: dict[str, tuple[str, str]] = {
    "service": ("--service", "openmetadata.service"),
    "database": ("--database", "openmetadata.database"),
    "schema": ("--schema", "openmetadata.schema"),
    "platform": ("--platform", "datahub.platform"),
    "platform_instance": ("--platform-instance", "datahub.platform_instance"),
    "env": ("--env", "datahub.env"),
}
#: which catalog reads which setting
CATALOG_SETTINGS = {"openmetadata": OM_PARTS, "datahub": ("platform", "platform_instance", "env")}
#: what DataHub names take when no layer sets them: the engine that ran the checks, production
DATAHUB_PLATFORM, DATAHUB_ENV = "spark", "PROD"
#: dataset.catalog hint -> the setting whose value rules it must follow
_HINT_SETTINGS = {"datahub_platform": "platform", "datahub_platform_instance": "platform_instance",
                  "datahub_env": "env"}

_URN_PART = re.compile(r"^[^\s,()]+$")
_ENV = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _om_name_problem(value: str) -> str | None:
    if not value.strip():
        return "must not be empty"
    if '"' in value:
        return 'must not contain `"` (OpenMetadata quotes names with dots itself)'
    return None


def _urn_part_problem(value: str) -> str | None:
    if not _URN_PART.match(value):
        return "must be one word without spaces, commas or parentheses (they delimit a DataHub URN)"
    return None


def _env_problem(value: str) -> str | None:
    if not _ENV.match(value):
        return "must be a DataHub environment in capitals, e.g. PROD, DEV or QA"
    return None


#: setting -> its value check (a problem sentence, or None when the value is fine)
CHECKS: dict[str, Callable[[str], str | None]] = {
    "service": _om_name_problem, "database": _om_name_problem, "schema": _om_name_problem,
    "platform": _urn_part_problem, "platform_instance": _urn_part_problem, "env": _env_problem,
}


def setting_problem(setting: str, value: str) -> str | None:
    """Why `value` cannot be used for `setting` (e.g. `env`), or None."""
    return CHECKS[setting](value)


@dataclass(frozen=True)
class NameSettings:
    """One layer of naming settings (the CLI options, or the project config); None means not set."""

    service: str | None = None
    database: str | None = None
    schema: str | None = None
    platform: str | None = None
    platform_instance: str | None = None
    env: str | None = None

    def given(self) -> dict[str, str]:
        """The settings this layer sets."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class DatasetRef:
    """A dataset as both catalogs name it."""

    name: str
    openmetadata_fqn: str | None = None
    datahub_platform: str = DATAHUB_PLATFORM
    datahub_env: str = DATAHUB_ENV
    datahub_platform_instance: str | None = None


def split_fqn(fqn: str) -> list[str]:
    """Split an FQN on dots outside double quotes (`svc.db.schema."my.table"`)."""
    parts, current, quoted = [], "", False
    for char in fqn:
        if char == '"':
            quoted = not quoted
            current += char
        elif char == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def quote_name(name: str) -> str:
    """One FQN part as OpenMetadata writes it: a name with a dot in double quotes."""
    return f'"{name}"' if "." in name else name


def check_hints(contract: Contract) -> None:
    """Refuse `dataset.catalog` keys no catalog reads, and hint values no catalog could take."""
    for key, value in contract.dataset.catalog.items():
        where = f"dataset.catalog.{key}"
        if key not in CATALOG_HINTS:
            hint = did_you_mean(key, CATALOG_HINTS) or f"known: {', '.join(CATALOG_HINTS)}"
            raise ContractError(f"unknown catalog hint `{key}` ({hint})", field=where)
        setting = _HINT_SETTINGS.get(key)
        problem = setting_problem(setting, value) if setting else None
        if problem:
            raise ContractError(problem, field=where)


@dataclass(frozen=True)
class CatalogNaming:
    """Resolves a contract's catalog names from overrides, the contract and defaults, in that order."""

    overrides: NameSettings = field(default_factory=NameSettings)
    defaults: NameSettings = field(default_factory=NameSettings)
    config_file: str | None = None  # where the defaults came from, for messages

    def openmetadata_fqn(self, contract: Contract) -> str:
        """`service.database.schema.table` for the contract's dataset, or an error naming what is missing."""
        check_hints(contract)
        named, table = _contract_parts(contract)
        parts, missing = [], []
        for part in OM_PARTS:
            override, default = getattr(self.overrides, part), getattr(self.defaults, part)
            value = quote_name(override) if override else named.get(part) or (quote_name(default) if default else None)
            if value is None:
                missing.append(part)
            parts.append(value)
        if missing:
            raise ConfigError(self._missing(contract.dataset.name, missing))
        return ".".join([*parts, table])  # type: ignore[list-item]

    def datahub_ref(self, contract: Contract) -> DatasetRef:
        """The DatasetRef a DataHub URN is built from: platform, platform instance, name and env."""
        check_hints(contract)
        hints = contract.dataset.catalog

        def pick(setting: str) -> str | None:
            return (getattr(self.overrides, setting) or hints.get(f"datahub_{setting}")
                    or getattr(self.defaults, setting))

        return DatasetRef(name=hints.get("datahub_name") or contract.dataset.name,
                          datahub_platform=pick("platform") or DATAHUB_PLATFORM,
                          datahub_env=pick("env") or DATAHUB_ENV, datahub_platform_instance=pick("platform_instance"))

    def _missing(self, dataset: str, missing: list[str]) -> str:
        options = _and([SETTINGS[m][0] for m in missing])
        keys = " / ".join(SETTINGS[m][1] for m in missing)
        what = _and([f"a {m}" for m in missing])
        return (f"{dataset}: OpenMetadata needs {what} for its table FQN: pass {options}, set {keys} in "
                f"{self.config_file or DEFAULT_CONFIG}, or dataset.catalog.openmetadata_fqn in the contract")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _contract_parts(contract: Contract) -> tuple[dict[str, str], str]:
    """(FQN parts above the table that the contract names, the table) from the hint or `dataset.name`."""
    hint = contract.dataset.catalog.get("openmetadata_fqn")
    if hint is not None:
        parts = split_fqn(hint)
        if len(parts) != 4 or not all(parts):
            raise ContractError(f"{hint!r} must be service.database.schema.table",
                                field="dataset.catalog.openmetadata_fqn")
        return dict(zip(OM_PARTS, parts[:3])), parts[3]
    name = contract.dataset.name
    parts = split_fqn(name)
    if "/" in name or ":" in name or not all(parts) or len(parts) > 3:
        raise ContractError(f"`{name}` is not table, schema.table or database.schema.table; name the OpenMetadata "
                            "table in dataset.catalog.openmetadata_fqn (service.database.schema.table)",
                            field="dataset.name")
    # `schema.table` and `database.schema.table` (Spark's catalog.schema.table) name the parts they hold
    return dict(zip(OM_PARTS[3 - (len(parts) - 1):], parts[:-1])), parts[-1]
