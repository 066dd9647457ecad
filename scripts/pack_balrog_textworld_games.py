"""Pack BALROG's 75 TextWorld game definitions into ``envs/balrog/assets/textworld/`` (maintainers).

BALROG (balrog-ai/BALROG af7d1f17, ``balrog/environments/textworld/base.py``) plays the games of
conglu1997/intelligent-go-explore ``textworld/tw_games`` (MIT): 25 per task, each a textworld
``.json`` game definition beside its compiled ``.ulx`` (treasure hunter, coin collector) or ``.z8``
(the cooking game). This script takes the ``.json`` files only, byte for byte, into one
reproducible ``tw_games.tar.xz`` (sorted members, no owners, mtime 0; 0.15 MB against 0.9 MB for
the ``.json`` plus the cooking ``.z8`` and 2.1 MB for every game compiled), and writes
``tw_games.json``: the source, each game's name in BALROG's order and the SHA-256 of its
``.json`` and of the ``.z8`` that :mod:`rl4vlm_gym.envs.balrog.textworld_games` compiles from it.

    python scripts/pack_balrog_textworld_games.py PATH/TO/tw_games [COMMIT]

``PATH/TO/tw_games`` is a checkout's ``textworld/tw_games`` folder (or BALROG's download of it).
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOURCE_REPO = "conglu1997/intelligent-go-explore"
SOURCE_COMMIT = "bcb4052e6de36a4389e666acd374832cfab1a042"


def main(argv: list[str]) -> int:
    from rl4vlm_gym.envs.balrog import textworld_games as tw

    source = Path(argv[0])
    commit = argv[1] if len(argv) > 1 else SOURCE_COMMIT
    buffer = io.BytesIO()
    manifest: dict = {
        "source": f"{SOURCE_REPO} {commit} textworld/tw_games (MIT: LICENSE beside this file)",
        "taken": "the .json game definitions, byte for byte; the .z8 are compiled from them by textworld 1.7.0",
        "games": {},
    }
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for task in tw.TASKS:
            names = sorted(path.stem for path in (source / task).glob("*.json"))
            assert len(names) == tw.POOL, f"{task}: {len(names)} games, expected {tw.POOL}"
            manifest["games"][task] = []
            for name in names:
                data = (source / task / f"{name}.json").read_bytes()
                info = tarfile.TarInfo(f"{task}/{name}.json")
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
                manifest["games"][task].append({"name": name, "json_sha256": hashlib.sha256(data).hexdigest()})
    tw.DATA.mkdir(parents=True, exist_ok=True)
    tw.ARCHIVE.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    # the compiled games' hashes: compile every game from the new archive (about a minute)
    tw.MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    tw.reload()
    for task in tw.TASKS:
        for index, entry in enumerate(manifest["games"][task]):
            path = tw.build_game(task, index, check=False)
            entry["z8_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    tw.MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{tw.ARCHIVE} {tw.ARCHIVE.stat().st_size} bytes; {tw.MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
