"""One error hierarchy for the whole package; the CLI maps each class to an exit code."""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
#: an exception dqgov did not raise on purpose (a bug): never 1, which a scheduler reads as "the gate blocked"
EXIT_INTERNAL = 3


class DqGovernanceError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = EXIT_BAD_INPUT


@dataclass(frozen=True)
class SourceLocation:
    """Where in a file a problem sits (1-based line and column)."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class ContractError(DqGovernanceError):
    """A contract that cannot be read or is invalid: one line naming file, line and field."""

    def __init__(self, message: str, location: SourceLocation | None = None, field: str | None = None):
        self.message = message
        self.location = location
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        field = f"{self.field}: " if self.field else ""
        return f"{prefix}{field}{self.message}"


class ThresholdSyntaxError(ContractError):
    """A warn / must_be threshold that the DSL cannot parse."""


class InputDataError(DqGovernanceError):
    """The data does not fit the contract or cannot be read (missing file, missing column)."""


class ConfigError(DqGovernanceError):
    """Missing or invalid configuration: a masking key, a catalog URL, a listener jar."""


class GateFailedError(DqGovernanceError):
    """The quality gate blocked publication."""

    exit_code = EXIT_GATE_FAILED


class CatalogError(DqGovernanceError):
    """A catalog rejected a request; names the entity and the server's message, never the token."""

    exit_code = EXIT_GATE_FAILED


class LineageError(DqGovernanceError):
    """An OpenLineage event could not be built or emitted (raised only in strict mode)."""

    exit_code = EXIT_GATE_FAILED
