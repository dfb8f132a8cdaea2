"""The README is tested: every shell and Python block runs, in order, in a fresh copy of the project.

A block is skipped only when the line before it is `<!-- readme: illustrative (why) -->`. Shell blocks run
command by command (a trailing `\\` joins lines; `export NAME=VALUE` sets the environment of the commands
after it). A command exits 0 unless its comment says `exits N`, the way the README tells readers. Key
output lines the README promises are asserted in EXPECTED below; a command the README shows but this
file does not know still has its exit code checked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.spark, pytest.mark.integration]

MARKER = re.compile(r"<!--\s*readme:\s*illustrative\b")
FENCE = re.compile(r"^```(\w*)\s*$")
EXIT = re.compile(r"#.*?\bexits? (\d)\b")
#: `make test` is the command that runs this test; running it here would recurse.
SELF = {"make test"}

#: Lines a command's output must contain (substrings), keyed by the command as the README writes it.
EXPECTED: dict[str, list[str]] = {
    "dqgov sync --catalog openmetadata --dry-run --out out/catalog/openmetadata --server-version 1.9 --contracts "
    "contracts/orders.yaml contracts/customers.yaml contracts/sales.yaml --results out/report": [
        "dqgov sync openmetadata (dry run, server 1.9.0): 59 created, 3 updated, 0 unchanged, 0 failed",
        "123 request files written to out/catalog/openmetadata",
        "note: orders: rule email_format not pushed to OpenMetadata, nor its results: OpenMetadata has no test "
        "definition for format rules",
        "note: orders: steward maria.silva not pushed to OpenMetadata: the table's owners are the contract owner only"],
    "make demo": ["rows: total 7  valid 1  invalid 6  quality_score 0.1429", "gate: BLOCKED",
                  "rows: total 6  valid 3  invalid 3"],
    "dqgov check contracts/sales.yaml --input examples/data/sales.csv": ["rows: total 6  valid 3  invalid 3",
                                                                         "published: yes"],
    "dqgov check contracts/orders.yaml --input examples/data/orders.csv": [
        "pedido_id_unique       unique              pedido_id    error     2       2       FAILED",
        "rows: total 7  valid 1  invalid 6  quality_score 0.1429", "gate: BLOCKED   published: no"],
    "dqgov lint tests/contracts_broken/": [
        "tests/contracts_broken/bad_threshold.yaml:16:16: quality.rules[0].must_be: invalid threshold",
        "tests/contracts_broken/duplicate_field.yaml:14:13: schema.fields[2].name: duplicate field name 'id'"],
    "dqgov impact curated.orders.cliente_id": ["customer_analytics"],
    "dqgov listener-conf contracts/orders.yaml --transport https://gms.example:8080/openapi/openlineage/api/v1/lineage "
    "--format spark-defaults --extension-jar /jars/dq-governance-listener-0.1.0.jar": [
        "spark.openlineage.transport.url https://gms.example:8080\n",
        "spark.openlineage.transport.endpoint /openapi/openlineage/api/v1/lineage\n",
        "spark.openlineage.dataset.extraTrimmers io.github.dqgovernance.listener.RemovePathTrimmer\n",
        "spark.jars /jars/dq-governance-listener-0.1.0.jar\n"],
    "dqgov listener-conf contracts/orders.yaml --enforce block --transport file:out/lineage/events.jsonl "
    "--manifest manifest.json --extension-jar listeners/target/dq-governance-listener-0.1.0.jar --history out/report "
    "--format spark-defaults": [
        "spark.sql.extensions io.github.dqgovernance.spark.GovernanceExtensions\n",
        "spark.dqgov.manifest manifest.json\n", "spark.dqgov.enforce block\n", "spark.dqgov.history out/report\n",
        "spark.openlineage.transport.transformerProperties.manifest manifest.json\n"],
    "dqgov manifest contracts/orders.yaml contracts/sales.yaml -o manifest.json": [
        "manifest.json: 2 contracts (manifestVersion 2)"],
    "dqgov diff contracts/orders.yaml examples/contracts/orders-v2.yaml --lineage .dqgov/lineage.db --fail-on "
    "incompatible": ["customer_analytics", "team:marketing-analytics"],
}


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    text: str
    illustrative: bool


@dataclass
class Command:
    text: str
    line: int
    expected_exit: int = 0
    comment: str = ""


@dataclass
class Outcome:
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def readme_blocks(path: Path = REPO / "README.md") -> list[Block]:
    """Fenced blocks of the README with their language and whether they are marked illustrative."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        start = index
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
        previous = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        blocks.append(Block(match.group(1), start + 1, "\n".join(lines[start + 1:end]),
                            bool(MARKER.search(previous))))
        index = end + 1
    return blocks


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block: comments stripped, `\\` continuations joined."""
    commands: list[Command] = []
    pending: list[str] = []
    first_line = 0
    for offset, raw in enumerate(block.text.splitlines(), start=block.line + 1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if not pending:
            first_line = offset
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].rstrip())
            continue
        pending.append(stripped)
        joined = " ".join(pending)
        pending = []
        code, comment = _split_comment(joined)
        found = EXIT.search("#" + comment) if comment else None
        commands.append(Command(code, first_line, int(found.group(1)) if found else 0, comment))
    return commands


def _split_comment(line: str) -> tuple[str, str]:
    """`code  # comment` -> (code, comment), ignoring `#` inside quotes."""
    quote: str | None = None
    for position, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (position == 0 or line[position - 1].isspace()):
            return line[:position].rstrip(), line[position + 1:].strip()
    return line.rstrip(), ""


def _fresh_copy(tmp: Path) -> Path:
    """The tracked project files in a new folder; the built venv and jars are linked, not rebuilt."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    work = tmp / "project"
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            destination = work / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)  # keeps mtimes: make sees the venv and jars as up to date
    for built in (".venv", "listeners/target", "listeners/lib"):
        if (REPO / built).exists():
            (work / built).parent.mkdir(parents=True, exist_ok=True)
            (work / built).symlink_to(REPO / built, target_is_directory=True)
    return work


def _environment(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DQGOV_", "OPENLINEAGE"))}
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _export(command: str, env: dict[str, str]) -> bool:
    match = re.fullmatch(r"export\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)", command)
    if match:
        env[match.group(1)] = os.path.expandvars(match.group(2))
    return bool(match)


def _run_python(block: Block, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    script = work / f".readme_block_{block.line}.py"
    script.write_text(block.text + "\n", encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)


def test_readme_blocks_parse() -> None:
    """The parser sees every shell and Python block; each illustrative one says why."""
    blocks = readme_blocks()
    runnable = [b for b in blocks if b.lang in ("bash", "python") and not b.illustrative]
    assert len(runnable) >= 8
    text = (REPO / "README.md").read_text(encoding="utf-8")
    for reason in re.findall(r"<!--\s*readme:\s*illustrative\b(.*?)-->", text):
        assert reason.strip(" ():"), "an illustrative marker must say why"
    commands = [c.text for b in runnable if b.lang == "bash" for c in shell_commands(b)]
    assert "make demo" in commands
    for known in EXPECTED:
        assert known in commands, f"EXPECTED names a command the README no longer shows: {known}"


def test_split_comment_keeps_quoted_hashes() -> None:
    assert _split_comment("dqgov x --pattern '#a' # exits 1") == ("dqgov x --pattern '#a'", "exits 1")
    assert _split_comment("echo ok") == ("echo ok", "")


def test_readme_commands_run_as_documented(tmp_path: Path) -> None:
    """Every non-illustrative block, in order, in a fresh copy: exit codes and key output lines as documented."""
    work = _fresh_copy(tmp_path)
    env = _environment(work)
    outcome = Outcome()
    failures: list[str] = []
    done: set[str] = set()
    for block in readme_blocks():
        if block.lang not in ("bash", "python"):
            continue
        if block.illustrative:
            outcome.skipped.append(f"README.md:{block.line}")
            continue
        if block.lang == "python":
            proc = _run_python(block, work, env)
            outcome.ran.append(f"python block at README.md:{block.line}")
            if proc.returncode != 0:
                failures.append(f"README.md:{block.line}: python block exited {proc.returncode}:\n"
                                f"{proc.stderr[-3000:]}")
            continue
        for command in shell_commands(block):
            if command.text in SELF or _export(command.text, env):
                continue
            if command.text in done and command.text == "make demo":
                continue  # the five-uses block repeats the set-up command
            proc = subprocess.run(["bash", "-c", command.text], cwd=work, env=env, capture_output=True,
                                  text=True, timeout=900)
            done.add(command.text)
            outcome.ran.append(command.text)
            where = f"README.md:{command.line}: `{command.text}`"
            if proc.returncode != command.expected_exit:
                failures.append(f"{where} exited {proc.returncode}, the README says {command.expected_exit}:\n"
                                f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
                continue
            for line in EXPECTED.get(command.text, []):
                if line not in proc.stdout:
                    failures.append(f"{where}: output lacks {line!r}:\n{proc.stdout[-3000:]}")
    assert not failures, "\n\n".join(failures)
    assert len(outcome.ran) >= 20, outcome.ran


def test_the_test_budgets_the_readme_states_are_the_makefile_s() -> None:
    """The README's budget per test part names the Makefile's --session-timeout values, in order."""
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    stated = re.search(r"test-40 (\d+) s, test-connect (\d+) \+ (\d+) s, test-cluster (\d+) s, test-35 (\d+) s", text)
    assert stated, "the README no longer states the test parts' budgets"
    made = re.findall(r"--session-timeout=(\d+)", (REPO / "Makefile").read_text(encoding="utf-8"))
    assert list(stated.groups()) == made
