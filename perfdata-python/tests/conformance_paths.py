"""Where the conformance suite's committed recordings and stored perf output are."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = ROOT / "conformance" / "fixtures"
ORACLE_DIR = FIXTURES_DIR / "perf-output"
