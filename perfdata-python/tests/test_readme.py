"""The README's "From Python" snippet runs as written (from the repository's root)."""

import os
import re

from conftest import ROOT


def readme_block(section: str) -> str:
    text = (ROOT / "README.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    assert len(blocks) == 1, f"one python block under {section}"
    return blocks[0]


def test_from_python_snippet_runs(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exec(compile(readme_block("From Python"), "README.md (From Python)", "exec"), {})
    out = capsys.readouterr().out
    # DuckDB's table of the top functions, and the records loop
    assert "count_word" in out
    assert "0x" in out
