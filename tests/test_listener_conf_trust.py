"""`dqgov listener-conf`: credentials in a transport URL are refused, never dropped or printed; errors name the
option the user gave (--transport, --enrich, --enforce; `dqgov check` keeps --lineage); the printed command is
quoted.

Nothing here starts a JVM: listener-conf only prints settings, and the session helper is given a builder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dq_governance.cli import main
from dq_governance.errors import ConfigError
from dq_governance.lineage import emit as E
from dq_governance.lineage import spark as S

REPO = Path(__file__).resolve().parent.parent
CONTRACT = str(REPO / "contracts" / "orders.yaml")
PASSWORD = "s3cret-pw-91c2"
AUTH_HINT = ("set spark.openlineage.transport.auth.type=api_key and spark.openlineage.transport.auth.apiKey "
             "yourself")
EXPECTED_SPECS = ("expected file:PATH, http(s)://HOST[:PORT][/PATH], console, none, default "
                  "(openlineage.yml / OPENLINEAGE__* env) or a path to an openlineage.yml")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (E.PARENT_ENV, E.ROOT_PARENT_ENV, E.API_KEY_ENV, S.JAR_ENV, "OPENLINEAGE_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["listener-conf", CONTRACT, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("userinfo", "path", "endpoint"), [
    (f"user:{PASSWORD}@", "/api/v1/lineage", "/api/v1/lineage"),
    (f"{PASSWORD}@", "/api/v1/lineage?code=x", "/api/v1/lineage?<query of --transport>")])
def test_credentials_in_the_transport_url_are_refused_and_never_printed(capsys, userinfo, path, endpoint):
    code, out, err = _run(capsys, "--transport", f"http://{userinfo}host:5000{path}", "--format", "spark-defaults")
    assert (code, out) == (2, "")
    assert err == f"dqgov: error: --transport: credentials in the URL are not printed; {AUTH_HINT}\n"
    assert PASSWORD not in err
    # the same URL without them prints as ever
    code, out, _ = _run(capsys, "--transport", f"http://host:5000{path}", "--format", "spark-defaults")
    lines = out.splitlines()
    assert code == 0
    assert "spark.openlineage.transport.url http://host:5000" in lines
    assert f"spark.openlineage.transport.endpoint {endpoint}" in lines


def test_credentials_in_the_url_of_an_openlineage_yml_are_refused_and_never_printed(capsys, tmp_path):
    config = tmp_path / "openlineage.yml"
    config.write_text(f"transport:\n  type: http\n  url: http://user:{PASSWORD}@host:5000\n"
                      "  endpoint: api/v1/lineage\n")
    code, out, err = _run(capsys, "--transport", str(config))
    assert (code, out) == (2, "")
    assert err == (f"dqgov: error: --transport {config}: transport.url: credentials in the URL are not printed; "
                   f"{AUTH_HINT}\n")
    assert PASSWORD not in err


def test_credentials_in_a_lineage_url_are_refused_where_events_are_sent(tmp_path):
    """`dqgov check --lineage` / `run(lineage=...)`: the emitter and the session's listener would drop them and send
    unauthenticated, so they are refused (never echoed); an API key is the way."""
    from pyspark.sql import SparkSession

    url = f"http://user:{PASSWORD}@host:5000/api/v1/lineage"
    expected = ("--lineage: credentials in the URL are never sent (OpenLineage's HTTP transport takes an API key); "
                "set OPENLINEAGE_API_KEY instead")
    with pytest.raises(ConfigError) as client_error:
        E.make_client(url)
    with pytest.raises(ConfigError) as emitter_error:
        E.build_emitter(url, CONTRACT, run_id="r1", pipeline="p")
    with pytest.raises(ConfigError) as session_error:
        S.configure(SparkSession.Builder(), lineage=url, conf={"spark.jars.packages": S.MAVEN_COORDINATES})
    assert [str(e.value) for e in (client_error, emitter_error, session_error)] == [expected] * 3
    # without them, the same URL configures as ever
    assert S.listener_settings(lineage="http://host:5000/api/v1/lineage")[
        "spark.openlineage.transport.url"] == "http://host:5000"


def test_transport_errors_name_transport_and_check_keeps_lineage(capsys, tmp_path):
    code, out, err = _run(capsys, "--transport", "kafka://broker:9092/topic")
    assert (code, out) == (2, "")
    assert err == f"dqgov: error: --transport 'kafka://broker:9092/topic': {EXPECTED_SPECS}\n"
    assert _run(capsys, "--transport", "file:")[2] == (
        "dqgov: error: --transport file: needs a path, e.g. file:out/lineage.jsonl\n")
    kafka = tmp_path / "kafka.yml"
    kafka.write_text("transport:\n  type: kafka\n  topicName: t\n")
    assert _run(capsys, "--transport", str(kafka))[2] == (
        "dqgov: error: --transport: the listener cannot be configured for transport 'kafka' from a spec; use "
        "openlineage.yml or spark.openlineage.transport.* keys\n")
    # `dqgov check --lineage` reaches the same parser through the session helper and the emitter
    from pyspark.sql import SparkSession

    with pytest.raises(ConfigError) as session_error:
        S.listener_settings(lineage="kafka://broker:9092/topic")
    assert str(session_error.value) == f"--lineage 'kafka://broker:9092/topic': {EXPECTED_SPECS}"
    with pytest.raises(ConfigError) as yml_error:
        S.configure(SparkSession.Builder(), lineage=str(kafka), conf={"spark.jars.packages": S.MAVEN_COORDINATES})
    assert str(yml_error.value) == ("--lineage: the listener cannot be configured for transport 'kafka' from a "
                                    "spec; use openlineage.yml or spark.openlineage.transport.* keys")
    with pytest.raises(ConfigError) as client_error:
        E.make_client("kafka://broker:9092/topic")
    assert str(client_error.value) == f"--lineage 'kafka://broker:9092/topic': {EXPECTED_SPECS}"


@pytest.mark.parametrize(("option", "args"), [("--enforce", ["--enforce", "observe"]), ("--enrich", ["--enrich"]),
                                              ("--enforce", ["--enrich", "--enforce", "block"])])
def test_enrich_and_enforce_without_a_transport_name_the_option_given(capsys, option, args):
    code, out, err = _run(capsys, *args)
    assert (code, out) == (2, "")
    assert err == (f"dqgov: error: {option} needs an explicit --transport for the listener to hand events to: "
                   "file:PATH, http(s)://HOST[:PORT][/PATH] or console\n")


def test_the_manifest_command_in_the_first_comment_is_shell_quoted(capsys):
    code, out, _ = _run(capsys, "--enrich", "--transport", "console", "--manifest", "/dbfs/my dir/m.json",
                        "--extension-jar", "/jars/dq.jar", "--format", "spark-defaults")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "# the manifest: `dqgov manifest CONTRACTS_DIR -o '/dbfs/my dir/m.json'`, shipped with the job"
    assert "spark.openlineage.transport.transformerProperties.manifest /dbfs/my dir/m.json" in lines


@pytest.mark.parametrize("spelling", ["apiKey", "apikey", "api_key"])
def test_an_openlineage_yml_api_key_reaches_the_listener_in_each_spelling_the_client_reads(tmp_path, spelling):
    # openlineage-python reads all three; the listener's settings dropped the two it did not, so its events went
    # out unauthenticated while dqgov's own were authenticated
    config = tmp_path / "openlineage.yml"
    config.write_text(f"transport:\n  type: http\n  url: http://host:5000\n  auth:\n    type: api_key\n"
                      f"    {spelling}: {PASSWORD}\n")
    assert S.transport_settings(str(config)) == {
        "spark.openlineage.transport.type": "http", "spark.openlineage.transport.url": "http://host:5000",
        "spark.openlineage.transport.endpoint": "/api/v1/lineage",
        "spark.openlineage.transport.auth.type": "api_key", "spark.openlineage.transport.auth.apiKey": PASSWORD}
    printed = S.transport_settings(str(config), secrets=False, flag="--transport")
    assert printed["spark.openlineage.transport.auth.apiKey"] == "<OPENLINEAGE_API_KEY>"


@pytest.mark.parametrize(("auth", "found"), [
    ("type: jwt\n    apiKey: KEY", "auth type 'jwt'"),
    ("type: my_pkg.TokenProvider\n    token: KEY", "auth type 'my_pkg.TokenProvider'"),
    ("type: KEY", "an auth type it does not know"),  # a secret pasted as the type is never printed
    ("type: api_key\n    token: KEY", "auth type 'api_key' without its apiKey"),
    ("apiKey: KEY", "auth with no type"),
])
def test_openlineage_yml_auth_the_listener_cannot_take_is_refused_not_dropped(capsys, tmp_path, auth, found):
    config = tmp_path / "openlineage.yml"
    config.write_text(f"transport:\n  type: http\n  url: http://host:5000\n  auth:\n    "
                      f"{auth.replace('KEY', PASSWORD)}\n")
    code, out, err = _run(capsys, "--transport", str(config))
    assert (code, out) == (2, "")
    assert err == (f"dqgov: error: --transport {config}: transport.auth: the listener cannot be configured for "
                   f"{found} from a spec; use spark.openlineage.transport.auth.* keys\n")
    assert PASSWORD not in err


def test_printing_settings_for_a_file_transport_creates_no_directory_here(capsys, tmp_path):
    # the printed settings are for the cluster's driver; a session started here still gets its directory
    events = tmp_path / "lineage" / "day" / "events.jsonl"
    code, out, _err = _run(capsys, "--transport", f"file:{events}", "--format", "spark-defaults")
    assert code == 0
    assert f"spark.openlineage.transport.location {events}" in out.splitlines()
    assert not (tmp_path / "lineage").exists()
    assert S.transport_settings(f"file:{events}")["spark.openlineage.transport.location"] == str(events)
    assert events.parent.is_dir()
