"""What a regex rule costs per value in the session extension, against Spark's own rlike, before Spark runs it.

    python benchmarks/bench_regex.py

Runs listeners/src/test/java/.../AsciiRegexBenchmark.java through Maven: 2,000,000 values per pattern (the
e-mail format spelled out as the engine writes it and as the contract author wrote it, the CPF format, a
short code), each through Spark's way (decode the value, then `Pattern.find`) and through AsciiRegex (an
automaton over the value's bytes, what the extension runs for these patterns), in the same JVM. Prints its
JSON line: nanoseconds per value and the ratio automaton / rlike per pattern.
"""

from __future__ import annotations

import json
import sys

from jvm_bench import run


def main() -> int:
    """Run the benchmark and print its JSON; exit 1 when it cannot run."""
    result = run("AsciiRegexBenchmark", "ascii_regex")
    if result is None:
        return 1
    result.pop("sink", None)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
