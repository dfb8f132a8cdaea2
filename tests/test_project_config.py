"""The project config `.dqgov/config.yaml`: what it holds, where it is found, and the one-line refusal
(file:line:column: key: problem) of every key it cannot hold or value a catalog cannot take."""

from __future__ import annotations

from pathlib import Path

import pytest

from dq_governance.catalogs.naming import NameSettings
from dq_governance.cli import main
from dq_governance.errors import ConfigError
from dq_governance.project_config import find_project_config, load_project_config, project_config_issues

FULL = """\
openmetadata:
  url: https://om.example:8585
  token_env: OM_TOKEN
  server_version: "1.10"
  service: lakehouse
  database: sales
  schema: curated
  create_tables: true
datahub:
  url: https://gms.example:8080
  token_env: DH_TOKEN
  platform: hive
  platform_instance: cluster1
  env: DEV
"""


def write(directory: Path, text: str) -> Path:
    path = directory / ".dqgov" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def refusal(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_project_config(path)
    return str(caught.value).replace(str(path), "F")


def test_every_key_is_read(tmp_path):
    config = load_project_config(write(tmp_path, FULL))
    om, dh = config.openmetadata, config.datahub
    assert (om.url, om.token_env, om.server_version, om.create_tables) == \
        ("https://om.example:8585", "OM_TOKEN", "1.10", True)
    assert (dh.url, dh.token_env) == ("https://gms.example:8080", "DH_TOKEN")
    assert config.names() == NameSettings(service="lakehouse", database="sales", schema="curated", platform="hive",
                                          platform_instance="cluster1", env="DEV")
    assert config.section("datahub") is dh and config.file == str(tmp_path / ".dqgov" / "config.yaml")


def test_found_in_the_current_directory_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_project_config() is None
    empty = load_project_config()
    assert empty.file is None and empty.names() == NameSettings()
    write(tmp_path, "datahub:\n  env: QA\n")
    assert find_project_config() == Path(".dqgov/config.yaml")
    assert load_project_config().datahub.env == "QA" and load_project_config().file == ".dqgov/config.yaml"
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert load_project_config().file is None  # not looked for in parent directories


def test_an_empty_file_or_an_empty_section_sets_nothing(tmp_path):
    assert load_project_config(write(tmp_path, "")).names() == NameSettings()
    assert load_project_config(write(tmp_path, "openmetadata:\ndatahub:\n")).names() == NameSettings()


@pytest.mark.parametrize("text,message", [
    ("openmetadata:\n  url: http://om:8585\n  servce: lakehouse\n",
     "F:3:3: openmetadata.servce: unknown key `servce` (did you mean `service`?)"),
    ("datahub:\n  env: PROD\ncatalogs:\n  x: 1\n", "F:3:1: catalogs: unknown key `catalogs`"),
    ("datahub:\n  server_version: '1.9'\n", "F:2:3: datahub.server_version: unknown key `server_version`"),
    ("openmetadata:\n  service: a\n  service: b\n",
     "F:3:3: openmetadata.service: duplicate key `service` (first defined on line 2)"),
    ("openmetadata:\n  server_version: 1.10\n", 'F:2:19: openmetadata.server_version: write the version in quotes, '
     'e.g. "1.10": YAML reads 1.10 as the number 1.1'),
    ("openmetadata:\n  server_version: '1.5'\n",
     "F:2:19: openmetadata.server_version: 1.5 is not supported (OpenMetadata 1.6 to 2.x)"),
    ("openmetadata:\n  server_version: latest\n",
     'F:2:19: openmetadata.server_version: must be X.Y or X.Y.Z, e.g. "1.9"'),
    ("openmetadata:\n  url: om.example:8585\n",
     "F:2:8: openmetadata.url: the catalog URL must start with http:// or https://"),
    ("openmetadata:\n  schema: 'a\"b'\n",
     'F:2:11: openmetadata.schema: must not contain `"` (OpenMetadata quotes names with dots itself)'),
    ("datahub:\n  env: prod\n", "F:2:8: datahub.env: must be a DataHub environment in capitals, e.g. PROD, DEV or QA"),
    ("datahub:\n  platform_instance: eu 1\n", "F:2:22: datahub.platform_instance: must be one word without spaces, "
     "commas or parentheses (they delimit a DataHub URN)"),
    ("openmetadata:\n  create_tables: sometimes\n",
     "F:2:18: openmetadata.create_tables: input should be a valid boolean, unable to interpret input"),
    ("- openmetadata\n", "F:1:1: a project config is a mapping with `openmetadata:` and/or `datahub:`"),
    ("openmetadata: [1\n", "F:2:1: invalid YAML: expected ',' or ']', but got '<stream end>' "
     "(while parsing a flow sequence)"),
])
def test_what_the_config_cannot_hold_is_refused_in_one_line(tmp_path, text, message):
    assert refusal(tmp_path, text) == message


def test_a_token_is_refused_and_never_repeated(tmp_path):
    secret = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0"
    message = refusal(tmp_path, f"openmetadata:\n  token: {secret}\n")
    assert message == ("F:2:10: openmetadata.token: a token never goes in the config: put it in an environment "
                       "variable and name that variable in token_env")
    pasted = refusal(tmp_path, f"datahub:\n  token_env: {secret}\n")
    assert pasted == ("F:2:14: datahub.token_env: must be the name of an environment variable (letters, digits "
                      "and _), never the token itself")


def test_the_first_problem_in_file_order_is_raised_and_lint_gets_them_all(tmp_path):
    path = write(tmp_path, "datahub:\n  env: prod\nopenmetadata:\n  token: x\n  servce: y\n")
    issues = [str(i).replace(str(path), "F") for i in project_config_issues(path)]
    assert issues == [
        "F:2:8: datahub.env: must be a DataHub environment in capitals, e.g. PROD, DEV or QA",
        "F:4:10: openmetadata.token: a token never goes in the config: put it in an environment variable and "
        "name that variable in token_env",
        "F:5:3: openmetadata.servce: unknown key `servce` (did you mean `service`?)",
    ]
    assert refusal(tmp_path, path.read_text()) == issues[0]


def test_dqgov_sync_refuses_a_bad_config_before_reading_contracts(tmp_path, monkeypatch, capsys):
    write(tmp_path, "openmetadata:\n  databse: sales\n")
    monkeypatch.chdir(tmp_path)
    assert main(["sync", "--catalog", "openmetadata", "--out", "o", "no-such-contract.yaml"]) == 2
    assert capsys.readouterr().err == ("dqgov: error: .dqgov/config.yaml:2:3: openmetadata.databse: unknown key "
                                       "`databse` (did you mean `database`?)\n")
    assert main(["sync", "--catalog", "datahub", "--project-config", "missing.yaml", "--out", "o"]) == 2
    assert capsys.readouterr().err == "dqgov: error: missing.yaml: no such file\n"
