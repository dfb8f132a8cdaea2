"""Read a contract file (YAML or JSON) keeping the 1-based line and column of every node.

Positions are keyed by the path into the document (mapping keys and list indexes), so a
validation error at `('schema', 'fields', 2, 'name')` can be reported at its exact place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dq_governance.errors import ContractError, SourceLocation

Position = tuple[int, int]
DocPath = tuple[Any, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_FLOAT_TAG = "tag:yaml.org,2002:float"


def format_path(path: DocPath) -> str:
    """A document path as readers write it: `schema.fields[2].name`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass(frozen=True)
class LintIssue:
    """One problem at one place: `file:line:column: field.path: message (hint)`."""

    file: str
    line: int | None
    column: int | None
    field: str
    message: str
    hint: str | None = None
    severity: str = "error"  # "error" or "warning"

    @property
    def location(self) -> SourceLocation:
        """The file position as an errors.SourceLocation."""
        return SourceLocation(self.file, self.line, self.column)

    def to_error(self) -> ContractError:
        """This issue as the ContractError a loader raises."""
        message = f"{self.message} ({self.hint})" if self.hint else self.message
        return ContractError(message, self.location, self.field or None)

    def __str__(self) -> str:
        where = str(self.location)
        field_part = f" {self.field}:" if self.field else ""
        kind = " warning:" if self.severity == "warning" else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}:{kind}{field_part} {self.message}{hint}"


@dataclass
class SourceDocument:
    """A parsed document and where each of its nodes sits in the file."""

    file: str
    data: Any
    values: dict[DocPath, Position] = field(default_factory=dict)
    keys: dict[DocPath, Position] = field(default_factory=dict)
    problems: list[LintIssue] = field(default_factory=list)  # duplicate keys

    def position(self, path: DocPath) -> Position:
        """Where the value at `path` starts, or its nearest known ancestor's."""
        for end in range(len(path), -1, -1):
            pos = self.values.get(tuple(path[:end]))
            if pos is not None:
                return pos
        return (1, 1)

    def key_position(self, path: DocPath) -> Position:
        """Where the key naming `path` starts; the value's position for list items and the root."""
        pos = self.keys.get(tuple(path))
        return pos if pos is not None else self.position(path)

    def issue(self, path: DocPath, message: str, hint: str | None = None, *, at_key: bool = False,
              severity: str = "error", field_path: DocPath | None = None) -> LintIssue:
        """An issue positioned at `path` (its key with `at_key`), naming `field_path` (default `path`)."""
        line, column = self.key_position(path) if at_key else self.position(path)
        shown = format_path(path if field_path is None else field_path)
        return LintIssue(self.file, line, column, shown, message, hint, severity)


def read_source(path: str | Path) -> SourceDocument:
    """Read and parse a contract file; unreadable files and syntax errors raise ContractError."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ContractError("no such file", SourceLocation(file)) from None
    except IsADirectoryError:
        raise ContractError("is a directory, not a contract file", SourceLocation(file)) from None
    except OSError as exc:
        raise ContractError(f"cannot read: {exc.strerror}", SourceLocation(file)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ContractError("not UTF-8 text", SourceLocation(file, line, column)) from None
    return parse_text(text, file, is_json=file.lower().endswith(".json"))


def parse_text(text: str, file: str = "<string>", is_json: bool = False) -> SourceDocument:
    """Parse YAML (or JSON) text into a SourceDocument with node positions."""
    if is_json:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ContractError(f"invalid JSON: {exc.msg}", SourceLocation(file, exc.lineno, exc.colno)) from None
        try:
            # JSON is YAML: compose it again only to learn positions and duplicate keys. Valid JSON
            # has tabs only as whitespace, which YAML rejects; a space keeps every column.
            doc = _parse_yaml(text.replace("\t", " "), file)
        except ContractError:
            return SourceDocument(file, data, {(): (1, 1)})
        doc.data = data
        return doc
    return _parse_yaml(text, file)


def _parse_yaml(text: str, file: str) -> SourceDocument:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        doc = SourceDocument(file, None, {(): (1, 1)})
        if node is None:
            return doc
        _walk(loader, node, (), doc, set())
        # Position and duplicate scan run before construction: merge keys rewrite the node tree.
        doc.data = loader.construct_document(node)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = "invalid YAML: " + (exc.problem or "syntax error")
        if exc.context:
            message += f" ({exc.context})"
        location = SourceLocation(file, mark.line + 1, mark.column + 1) if mark else SourceLocation(file)
        raise ContractError(message, location) from None
    except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
        position = getattr(exc, "position", None)
        location = SourceLocation(file)
        if isinstance(position, int):
            line = text.count("\n", 0, position) + 1
            column = position - (text.rfind("\n", 0, position) + 1) + 1
            location = SourceLocation(file, line, column)
        reason = getattr(exc, "reason", None) or "unreadable"
        raise ContractError(f"invalid YAML: {reason}", location) from None
    finally:
        loader.dispose()


def _mark(node: Node) -> Position:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _walk(loader: yaml.SafeLoader, node: Node, path: DocPath, doc: SourceDocument, walked: set[int]) -> None:
    """Record positions and duplicate keys; each node is walked once, so alias bombs stay linear."""
    doc.values[path] = _mark(node)
    if id(node) in walked:  # an alias of a node walked already: its children are placed there
        return
    walked.add(id(node))
    if isinstance(node, MappingNode):
        first_seen: dict[Any, Position] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = loader.construct_object(key_node) if isinstance(key_node, ScalarNode) else None
            try:
                hash(key)
            except TypeError:
                continue
            if key is None and not isinstance(key_node, ScalarNode):
                continue
            child = (*path, key)
            if key in first_seen:
                line, column = _mark(key_node)
                doc.problems.append(LintIssue(
                    doc.file, line, column, format_path(child),
                    f"duplicate key `{key}` (first defined on line {first_seen[key][0]})",
                ))
                # Like the YAML loader, the last value wins; report positions of that one.
            first_seen.setdefault(key, _mark(key_node))
            doc.keys[child] = _mark(key_node)
            _walk(loader, value_node, child, doc, walked)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            _walk(loader, item, (*path, index), doc, walked)
    elif isinstance(node, ScalarNode) and node.tag == _FLOAT_TAG:
        read = _inexact_float(loader, node)
        if read is not None:
            line, column = _mark(node)
            doc.problems.append(LintIssue(
                doc.file, line, column, format_path(path),
                f"{node.value} is not exact as a number: it reads as {read}, the nearest 64-bit float",
                "numbers hold about 15 significant digits; write one that fits",
            ))


def _inexact_float(loader: yaml.SafeLoader, node: ScalarNode) -> str | None:
    """What a YAML float reads as when that is not the number its text writes; None when it is."""
    try:
        written = Decimal(node.value.replace("_", ""))
    except InvalidOperation:  # `.inf`, `.nan`, YAML 1.1 base 60: no written digits to lose
        return None
    value = loader.construct_object(node)
    # repr is the shortest text that reads back as the same float: equal to the written number, nothing was lost.
    return None if written == Decimal(repr(value)) else repr(value)
