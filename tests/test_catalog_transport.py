"""Transport: retries with backoff and Retry-After, no retry on 4xx, tokens never in logs or errors."""

from __future__ import annotations

import logging
import random

import pytest
import requests
import responses

from catalog_support import OM_URL, TOKEN
from dq_governance.catalogs.transport import HttpTransport, RetryPolicy, Secret, load_token, parse_retry_after
from dq_governance.errors import CatalogError, ConfigError

URL = OM_URL + "/api/v1/tables/name/svc.db.sch.orders"


def make(sleeps: list[float], attempts: int = 5, seed: int = 7) -> HttpTransport:
    return HttpTransport(OM_URL, "openmetadata", token=Secret(TOKEN), retry=RetryPolicy(attempts=attempts),
                         sleep=sleeps.append, rng=random.Random(seed))


@responses.activate
def test_retries_503_with_exponential_backoff_and_jitter_then_succeeds():
    responses.get(URL, status=503, json={"message": "busy"})
    responses.get(URL, status=503, json={"message": "busy"})
    responses.get(URL, status=200, json={"id": "t1"})
    sleeps: list[float] = []
    reply = make(sleeps).request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table svc.db.sch.orders")
    assert reply.status == 200 and reply.body == {"id": "t1"}
    assert len(responses.calls) == 3
    # equal jitter: half of min(30, 0.5 * 2**n) fixed, the other half random from the seeded generator
    rng = random.Random(7)
    expected = [0.25 + rng.uniform(0, 0.25), 0.5 + rng.uniform(0, 0.5)]
    assert sleeps == pytest.approx(expected)
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


@responses.activate
def test_429_honours_retry_after_seconds():
    responses.get(URL, status=429, headers={"Retry-After": "7"}, json={"message": "slow down"})
    responses.get(URL, status=200, json={})
    sleeps: list[float] = []
    make(sleeps).request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
    assert sleeps == [7.0]
    assert len(responses.calls) == 2


def test_retry_after_http_date_and_garbage():
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert RetryPolicy(max_retry_after=60).delay(0, 600.0, random.Random(1)) == 60.0


@responses.activate
def test_connection_error_is_retried():
    responses.get(URL, body=requests.ConnectionError("connection refused"))
    responses.get(URL, status=200, json={"ok": True})
    sleeps: list[float] = []
    reply = make(sleeps).request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
    assert reply.body == {"ok": True} and len(sleeps) == 1


@responses.activate
def test_400_is_not_retried_and_names_entity_and_server_message():
    responses.put(OM_URL + "/api/v1/tables", status=400,
                  json={"code": 400, "message": "columns[0].dataType must not be null"})
    sleeps: list[float] = []
    with pytest.raises(CatalogError) as info:
        make(sleeps).request("PUT", "/api/v1/tables", entity="table svc.db.sch.orders", body={"name": "orders"})
    assert len(responses.calls) == 1 and sleeps == []
    assert str(info.value) == ("openmetadata rejected PUT /api/v1/tables for table svc.db.sch.orders: HTTP 400: "
                               "columns[0].dataType must not be null")
    assert info.value.exit_code == 1


@responses.activate
def test_gives_up_after_the_configured_attempts():
    for _ in range(3):
        responses.get(URL, status=502, body="Bad Gateway")
    sleeps: list[float] = []
    with pytest.raises(CatalogError, match=r"failed after 3 tries: HTTP 502: Bad Gateway"):
        make(sleeps, attempts=3).request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
    assert len(responses.calls) == 3 and len(sleeps) == 2


@responses.activate
def test_token_sent_as_bearer_but_never_in_logs_errors_or_repr(caplog):
    caplog.set_level(logging.DEBUG)
    responses.get(URL, status=503, json={"message": "busy"})
    # A server that echoes the Authorization header back in its error message.
    responses.get(URL, status=401, json={"message": f"invalid token Bearer {TOKEN}"})
    transport = make([])
    with pytest.raises(CatalogError) as info:
        transport.request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
    assert responses.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in str(info.value) and "***" in str(info.value)
    assert TOKEN not in repr(transport) and TOKEN not in repr(Secret(TOKEN)) and TOKEN not in str(Secret(TOKEN))
    assert caplog.records, "the retry should have been logged"
    assert all(TOKEN not in r.getMessage() for r in caplog.records)
    assert TOKEN not in caplog.text


def test_token_from_env_or_file(tmp_path):
    assert load_token("DQGOV_OPENMETADATA_TOKEN", {"DQGOV_OPENMETADATA_TOKEN": " abc \n"}).reveal() == "abc"
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    env = {"DQGOV_DATAHUB_TOKEN_FILE": str(token_file)}
    assert load_token("DQGOV_DATAHUB_TOKEN", env).reveal() == "from-file"
    assert load_token("DQGOV_DATAHUB_TOKEN", {}) is None
    with pytest.raises(ConfigError, match="DQGOV_DATAHUB_TOKEN_FILE: cannot read token file"):
        load_token("DQGOV_DATAHUB_TOKEN", {"DQGOV_DATAHUB_TOKEN_FILE": str(tmp_path / "missing")})


@responses.activate
def test_a_token_the_server_echoes_across_the_message_cut_is_still_hidden():
    # the message is cut at 300 characters: redacted first, so a token the cut would shorten never survives
    # both put the token's first 7 characters before the cut
    responses.get(URL, status=401, json={"message": "x" * 262 + f" invalid Authorization 'Bearer {TOKEN}'"})
    responses.get(URL, status=403, body="y" * 285 + f" Bearer {TOKEN}")
    for _ in range(2):
        with pytest.raises(CatalogError) as info:
            make([]).request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
        assert TOKEN[:5] not in str(info.value) and "Bearer ***" in str(info.value)


def test_a_token_with_a_second_line_is_refused_without_showing_it(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n# rotated 2026-01\n")
    with pytest.raises(ConfigError) as info:
        load_token("DQGOV_DATAHUB_TOKEN", {"DQGOV_DATAHUB_TOKEN_FILE": str(token_file)})
    assert str(info.value) == (f"DQGOV_DATAHUB_TOKEN_FILE ({token_file}): the token holds whitespace or control "
                               "characters (a second line?); give the token alone")
    with pytest.raises(ConfigError, match="^DQGOV_DATAHUB_TOKEN: the token holds whitespace") as info:
        load_token("DQGOV_DATAHUB_TOKEN", {"DQGOV_DATAHUB_TOKEN": f"{TOKEN} extra"})
    assert TOKEN not in str(info.value)


@responses.activate
def test_a_request_the_http_library_refuses_names_no_header():
    # a header value requests refuses (its own message would quote the whole value, token included)
    transport = HttpTransport(OM_URL, "openmetadata", token=Secret(TOKEN), retry=RetryPolicy(attempts=2),
                              sleep=lambda _s: None)
    transport.session.headers["Authorization"] = f"Bearer {TOKEN}\nx"  # a handed-in token this bad is refused earlier
    with pytest.raises(CatalogError) as info:
        transport.request("GET", "/api/v1/tables/name/svc.db.sch.orders", entity="table x")
    assert str(info.value) == "openmetadata GET /api/v1/tables/name/svc.db.sch.orders: InvalidHeader"
    assert not responses.calls


def test_bad_url_is_a_config_error():
    with pytest.raises(ConfigError, match="must start with http"):
        HttpTransport("om:8585", "openmetadata")


@pytest.mark.parametrize(("url", "problem"), [
    ("http://", "names no host"),
    ("http://127.0.0.1:99999/", "has a port that is not a number from 1 to 65535"),
    ("http://exa mple/", "holds whitespace"),
    # the API path would be appended after the query, and the query is where tokens hide (never echoed)
    ("http://om.example/?token=SECRET-1", "is a base URL: its query or fragment would come before the API path"),
])
def test_a_url_that_cannot_reach_a_server_is_bad_input_not_a_refusal_by_the_catalog(url, problem):
    with pytest.raises(ConfigError) as info:
        HttpTransport(url, "openmetadata")
    assert str(info.value).startswith(f"openmetadata: catalog URL {problem}, got ")
    assert "SECRET-1" not in str(info.value)


def test_a_token_file_that_is_not_utf8_names_the_file_not_the_byte(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_bytes(b"abc\xe9def")
    with pytest.raises(ConfigError) as info:
        load_token("DQGOV_DATAHUB_TOKEN", {"DQGOV_DATAHUB_TOKEN_FILE": str(token_file)})
    assert str(info.value) == f"DQGOV_DATAHUB_TOKEN_FILE: token file {token_file} is not UTF-8 text"
