"""The project config `.dqgov/config.yaml`: every catalog setting in one place, every key checked.

```yaml
openmetadata:
  url: https://openmetadata.example:8585
  token_env: DQGOV_OPENMETADATA_TOKEN   # the variable's name, never the token
  server_version: "1.9"
  service: lakehouse
  database: sales
  schema: curated                       # for contracts whose dataset.name is a bare table
  create_tables: false
datahub:
  url: https://datahub-gms.example:8080
  token_env: DQGOV_DATAHUB_TOKEN
  platform: spark
  platform_instance: cluster1
  env: PROD
```

A key the config cannot hold, or a value a catalog cannot take, is refused with one line naming the
file, line, column and key. Found in the current directory, or given with `--project-config PATH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dq_governance.catalogs.naming import DEFAULT_CONFIG, NameSettings, setting_problem
from dq_governance.contracts.diagnostics import validation_issues
from dq_governance.contracts.source import LintIssue, SourceDocument, read_source
from dq_governance.errors import CatalogError, ConfigError, ContractError
from dq_governance.urls import http_url_problem

CONFIG_PATH = Path(DEFAULT_CONFIG)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _checked(setting: str, value: str | None) -> str | None:
    problem = setting_problem(setting, value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


class _Section(BaseModel):
    """What both catalogs take: where the server is and which variable holds its token."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    url: str | None = None
    token_env: str | None = None
    token: Any = Field(default=None, exclude=True)  # only so that a token written here gets its own refusal

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        problem = http_url_problem(value, base=True) if value is not None else None
        if problem is not None:
            raise ValueError(f"the catalog URL {problem}")
        return value

    @field_validator("token_env")
    @classmethod
    def _token_env(cls, value: str | None) -> str | None:
        # The message never repeats the value: it may be a token pasted in the wrong place.
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError("must be the name of an environment variable (letters, digits and _), "
                             "never the token itself")
        return value

    @field_validator("token")
    @classmethod
    def _no_token(cls, value: Any) -> None:
        if value is not None:
            raise ValueError("a token never goes in the config: put it in an environment variable "
                             "and name that variable in token_env")
        return None


class OpenMetadataConfig(_Section):
    """`openmetadata:`: server, API version, and the FQN parts above `schema.table`."""

    server_version: str | None = None
    service: str | None = None
    database: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    create_tables: bool | None = None

    @field_validator("server_version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        from dq_governance.catalogs.openmetadata import parse_version, profile_for

        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError('write the version in quotes, e.g. "1.10": YAML reads 1.10 as the number 1.1')
        if isinstance(value, str):
            try:
                version = parse_version(value)
            except ConfigError:
                raise ValueError('must be X.Y or X.Y.Z, e.g. "1.9"') from None
            try:
                profile_for(version)
            except CatalogError:
                raise ValueError(f"{value} is not supported (OpenMetadata 1.6 to 2.x)") from None
        return value

    @field_validator("service", "database")
    @classmethod
    def _om_part(cls, value: str | None, info: Any) -> str | None:
        return _checked(info.field_name, value)

    @field_validator("schema_")
    @classmethod
    def _om_schema(cls, value: str | None) -> str | None:
        return _checked("schema", value)


class DataHubConfig(_Section):
    """`datahub:`: server, and the URN parts around the dataset name."""

    platform: str | None = None
    platform_instance: str | None = None
    env: str | None = None

    @field_validator("platform", "platform_instance", "env")
    @classmethod
    def _urn_part(cls, value: str | None, info: Any) -> str | None:
        return _checked(info.field_name, value)


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    openmetadata: OpenMetadataConfig = Field(default_factory=OpenMetadataConfig)
    datahub: DataHubConfig = Field(default_factory=DataHubConfig)

    @field_validator("openmetadata", "datahub", mode="before")
    @classmethod
    def _empty_section(cls, value: Any) -> Any:
        return {} if value is None else value  # `openmetadata:` with nothing under it


@dataclass(frozen=True)
class ProjectConfig:
    """A read project config; `file` is None when there is none (every setting unset)."""

    file: str | None = None
    openmetadata: OpenMetadataConfig = field(default_factory=OpenMetadataConfig)
    datahub: DataHubConfig = field(default_factory=DataHubConfig)

    def section(self, catalog: str) -> Union[OpenMetadataConfig, DataHubConfig]:
        """The settings of one catalog (`openmetadata` or `datahub`)."""
        return {"openmetadata": self.openmetadata, "datahub": self.datahub}[catalog]

    def names(self) -> NameSettings:
        """The naming settings, as the lowest-precedence layer of catalog names."""
        om, dh = self.openmetadata, self.datahub
        return NameSettings(service=om.service, database=om.database, schema=om.schema_,
                            platform=dh.platform, platform_instance=dh.platform_instance, env=dh.env)


def find_project_config(directory: str | Path | None = None) -> Path | None:
    """`.dqgov/config.yaml` in `directory` (default: the current directory), if it exists."""
    path = Path(directory or ".") / CONFIG_PATH
    return path if path.is_file() else None


def project_config_issues(path: str | Path) -> list[LintIssue]:
    """Every problem of one config file, positioned (what `dqgov lint` reports)."""
    doc = _read(path)
    return _in_file_order(list(doc.problems) + _validate(doc)[1])


def load_project_config(path: str | Path | None = None) -> ProjectConfig:
    """The config at `path`, or the one in the current directory, or an empty one; ConfigError if invalid."""
    if path is None:
        path = find_project_config()
        if path is None:
            return ProjectConfig()
    doc = _read(path)
    document, issues = _validate(doc)
    problems = _in_file_order(list(doc.problems) + issues)
    if problems or document is None:
        raise ConfigError(str(problems[0]))
    return ProjectConfig(doc.file, document.openmetadata, document.datahub)


def _in_file_order(issues: list[LintIssue]) -> list[LintIssue]:
    return sorted(issues, key=lambda issue: (issue.line or 0, issue.column or 0))


def _read(path: str | Path) -> SourceDocument:
    try:
        return read_source(path)
    except ContractError as exc:  # positioned already; a config is bad configuration, not a bad contract
        raise ConfigError(str(exc)) from None


def _validate(doc: SourceDocument) -> tuple[_Document | None, list[LintIssue]]:
    data = {} if doc.data is None else doc.data
    if not isinstance(data, dict):
        return None, [doc.issue((), "a project config is a mapping with `openmetadata:` and/or `datahub:`")]
    try:
        return _Document.model_validate(data), []
    except ValidationError as exc:
        return None, validation_issues(doc, exc, root=_Document)
