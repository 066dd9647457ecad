"""The server's Dockerfile has a complete build context (no container runtime here to build it)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "server.Dockerfile"


def _ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path.rstrip("/"), p.rstrip("/")) or path.startswith(p.rstrip("/") + "/") for p in patterns)


def test_every_copy_source_is_in_the_build_context() -> None:
    patterns = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    sources = []
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            sources += line.split()[1:-1]
    assert sources, "no COPY lines found"
    for source in sources:
        assert (ROOT / source).exists(), f"the Dockerfile copies {source}, which the repository lacks"
        assert not _ignored(source, patterns), f".dockerignore excludes {source}, which the Dockerfile copies"
    # setup.cfg's package_dir: every folder the package is built from is copied
    package_dirs = re.findall(r"^\s+rl4vlm_gym[\w.]* = (\S+)$", (ROOT / "setup.cfg").read_text(), re.MULTILINE)
    for folder in package_dirs:
        assert any(folder.rstrip("/") == s.rstrip("/") or folder.startswith(s.rstrip("/") + "/") for s in sources), folder
    # the long description and the egg-info folder that setup.cfg names
    assert {"README.md", "setup.cfg", "pyproject.toml", "scripts/"} <= set(sources)


def test_the_container_runs_the_server_on_the_port_it_exposes() -> None:
    text = DOCKERFILE.read_text()
    assert "EXPOSE 8000" in text and "rl4vlm-gym serve" in text and "--port 8000" in text and "--host 0.0.0.0" in text
    assert 'pip install --no-cache-dir ".[${EXTRAS}]"' in text and "ARG EXTRAS=server" in text
    assert "/health" in text
