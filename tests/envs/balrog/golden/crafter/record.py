"""Record what BALROG's own Crafter wrapper shows an agent: the golden transcripts of balrog/Crafter-v0.

Run with the PRIVATE reference environment (see ../make_reference_env.sh), from outside its source
folder (the checkouts there shadow packages):

    cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/crafter/record.py

It writes ``crafter.json.gz`` beside itself. What it drives: ``balrog.environments.make_env("crafter",
"default", config)`` of balrog-ai/BALROG af7d1f17e0deec3a7a0e334beae5f11b7a21371b (crafter 1.8.3),
with ``config`` read from BALROG's own ``balrog/config/config.yaml`` (``crafter_kwargs``: area 64x64,
view 9x9, size 256x256, reward True, max_episode_steps 2000, unique_items True, precise_location
False, skip_items [], edge_only_items []), except ``crafter_kwargs.seed``: BALROG leaves it null, so
``crafter.Env`` draws its world seed from NumPy's global RNG when it is built (its ``reset(seed)``
ignores the seed); here it is set to each episode's seed, which makes the world the one
``crafter.Env(seed=s)`` plays, and our ``reset(seed=s)`` plays the same. The evaluator's calls are
made as its ``run_episode`` makes them (balrog/evaluator.py): ``env.reset(seed=s)``, then per step
``env.check_action_validity(output)`` (an output that is not one of the 17 names, case included,
plays the default "Noop") and ``env.step(action)``. The evaluator's invalid-output line ("Your
previous output did not contain a valid action...") is not recorded: it is the protocol's, not the
env's.

Recorded per episode: the seed, the outputs given and the actions BALROG played for them, and for
the reset and every step BALROG's ``obs["text"]`` (``long_term_context``, ``short_term_context``),
the reward, terminated, truncated, ``env.get_stats()`` (score, progression, achievements) and the
SHA-256 of ``obs["image"]`` (the PIL RGB image, as uint8 bytes in row-major order, 256x256x3).
Outputs come from a fixed RNG: a random mix of moves, "Do", "Sleep" (more often from step 35, once
energy can have dropped, so that the sleeping line shows), making, placing, "Noop" and strings
that are not actions (BALROG plays "Noop" for those); one episode plays a policy that reads
BALROG's text to drink, eat and fight, and lives through the first night (steps ~148-272, when
crafter draws the night's noise from the world's random stream at every render) into the next day.
Episodes end at their step count or when the player dies.

One change to crafter, and why. crafter balances creatures every 10 steps and picks the one that
despawns from a chunk's set of objects, whose order follows their memory addresses: BALROG's own
runs of one world and one action sequence differ from run to run (run this file twice: the
``set_order_run_parts_at`` it prints changes). The recording pins that order to creation order
(``creation_order``), the order our env uses, and runs each episode again without the pin to
report where crafter's own order first parted from it in that run (``set_order_run_parts_at``).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import json
import pathlib
import sys

import numpy as np

BALROG_COMMIT = "af7d1f17e0deec3a7a0e334beae5f11b7a21371b"
OUT = pathlib.Path(__file__).with_name("crafter.json.gz")

# (world seed, steps, policy); 3_000_000_000 is above 2**31, as BALROG's 8-hex-digit seeds can be.
EPISODES = (
    (0, 60, "random"),
    (1, 60, "random"),
    (42, 300, "random"),
    (12345, 60, "random"),
    (1435529258, 300, "random"),
    (3_000_000_000, 80, "random"),
    (7, 450, "survive"),  # dies at step 305, after the first night
)
ACTIONS = (
    "Noop", "Move West", "Move East", "Move North", "Move South", "Do", "Sleep",
    "Place Stone", "Place Table", "Place Furnace", "Place Plant",
    "Make Wood Pickaxe", "Make Stone Pickaxe", "Make Iron Pickaxe",
    "Make Wood Sword", "Make Stone Sword", "Make Iron Sword",
)
MOVES = {"north": "Move North", "south": "Move South", "west": "Move West", "east": "Move East"}
NOT_ACTIONS = ("move west", "noop", "Place table", "Craft Table", "", "Move  North")


def random_output(rng: np.random.Generator, t: int) -> str:
    """One output of the random mix: moves, "Do", "Sleep" (more often from step 35, once energy can
    have dropped), making and placing, "Noop", and strings that are not actions."""
    u = rng.random()
    if u < 0.04:
        return NOT_ACTIONS[rng.integers(len(NOT_ACTIONS))]
    if u < (0.16 if t >= 35 else 0.07):
        return "Sleep"
    if u < 0.36:
        return "Do"
    if u < 0.48:
        return ACTIONS[7:][rng.integers(len(ACTIONS) - 7)]
    if u < 0.5:
        return "Noop"
    return ACTIONS[1:5][rng.integers(4)]


def survival_output(rng: np.random.Generator, t: int, text: dict[str, str]) -> str:
    """An output that keeps the player alive longer (through the night to the next day), read from
    BALROG's text: hit what it faces when that feeds, waters or defends it, walk to water or a cow
    when thirsty or hungry, else the random mix (without sleeping at night, when zombies come)."""
    long_term, short_term = text["long_term_context"], text["short_term_context"]
    vitals = {name: int(short_term.split(f"- {name}: ")[1].split("/")[0]) for name in ("food", "drink", "energy")}
    front = long_term.rsplit("You face ", 1)[1].split(" at your front.")[0]
    if front in ("zombie", "skeleton") or (front == "water" and vitals["drink"] < 9) or (front == "cow" and vitals["food"] < 9):
        return "Do"
    for foe in ("zombie", "skeleton"):  # next to one: turn to it (the move is blocked), then hit it
        for way in ("north", "south", "west", "east"):
            if f"- {foe} 1 step to your {way}\n" in long_term:
                return MOVES[way]
    for need, source in (("drink", "water"), ("food", "cow")):
        line = f"- {source} "
        if vitals[need] <= 6 and line in long_term:
            where = long_term.split(line, 1)[1].split("\n", 1)[0].rsplit(" ", 1)[1]  # "north-west"
            way = where.split("-")[rng.integers(len(where.split("-")))]
            return MOVES[way]
    if vitals["food"] <= 5 and "- cow " not in long_term:  # explore: keep walking one way (t // 25 picks it)
        output = MOVES[("north", "east", "south", "west")[(t // 25) % 4]]
    else:
        output = random_output(rng, t)
    night = 140 <= t % 300 <= 290
    if output == "Sleep" and (night or vitals["energy"] > 3):
        return "Noop"
    if any(f"- lava 1 step to your {way}\n" in long_term and output == MOVES[way] for way in MOVES):
        return "Noop"  # lava kills
    return output


def image_sha256(image) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(image, dtype=np.uint8)).tobytes()).hexdigest()


def record_step(obs, reward, terminated, truncated, stats) -> dict:
    return {
        "long_term_context": obs["text"]["long_term_context"],
        "short_term_context": obs["text"]["short_term_context"],
        "reward": reward,
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "stats": stats,
        "image_sha256": image_sha256(obs["image"]),
    }


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


def play(make_env, config, seed: int, steps: int, policy: str, given: list[str] | None = None) -> dict:
    """One episode through BALROG's wrapper, as its evaluator plays it; ``given``: replay these outputs."""
    config.envs.crafter_kwargs.seed = seed
    env = make_env("crafter", "default", config)
    obs, _ = env.reset(seed=seed)
    transcript = [record_step(obs, None, False, False, jsonable(env.get_stats()))]
    rng = np.random.default_rng([7, seed])
    outputs, played = [], []
    for t in range(steps if given is None else len(given)):
        if given is not None:
            output = given[t]
        elif policy == "survive":
            output = survival_output(rng, t, obs["text"])
        else:
            output = random_output(rng, t)
        action = env.check_action_validity(output)
        obs, reward, terminated, truncated, _ = env.step(action)
        outputs.append(output)
        played.append(action)
        transcript.append(record_step(obs, float(reward), terminated, truncated, jsonable(env.get_stats())))
        if terminated or truncated:
            break
    return {"seed": seed, "policy": policy, "outputs": outputs, "played": played, "steps": transcript}


def creation_order(crafter_env) -> tuple:
    """Make crafter take each chunk's creatures in creation order when it balances them (the order
    ours uses), instead of the order of a set of objects, which follows their memory addresses and
    changes from run to run. Returns (original, patched) ``_balance_chunk``; nothing else changes."""
    original = crafter_env._balance_chunk

    def balance_chunk(self, chunk, objs):
        created = self._world._obj_map  # an object's index in the world's list: its creation order
        return original(self, chunk, sorted(objs, key=lambda obj: created[tuple(obj.pos)]))

    return original, balance_chunk


def main() -> None:
    import balrog
    import crafter
    from balrog.environments import make_env
    from omegaconf import OmegaConf

    source = pathlib.Path(balrog.__file__).resolve().parent
    config = OmegaConf.load(source / "config" / "config.yaml")
    original, pinned = creation_order(crafter.Env)
    episodes = []
    for seed, steps, policy in EPISODES:
        crafter.Env._balance_chunk = pinned
        episode = play(make_env, config, seed, steps, policy)
        crafter.Env._balance_chunk = original
        unpinned = play(make_env, config, seed, steps, policy, given=episode["outputs"])
        parted = [t for t, (a, b) in enumerate(zip(episode["steps"], unpinned["steps"])) if a != b]
        episode["set_order_run_parts_at"] = parted[0] if parted else None
        episodes.append(episode)
        transcript = episode["steps"]
        asleep = sum(s["long_term_context"].startswith("You are sleeping") for s in transcript)
        print(
            f"seed {seed} ({policy}): {len(transcript) - 1} steps, {asleep} asleep, score {transcript[-1]['stats']['score']}, "
            f"end {transcript[-1]['long_term_context'][:9]!r}, crafter's own set order parts at {episode['set_order_run_parts_at']}",
            file=sys.stderr,
        )
    config.envs.crafter_kwargs.seed = 0
    env = make_env("crafter", "default", config)
    versions = {name: importlib.metadata.version(name) for name in ("crafter", "gym", "gymnasium", "numpy", "pillow", "omegaconf", "opensimplex")}
    data = {
        "header": {
            "what": "BALROG's Crafter wrapper (balrog.environments.make_env('crafter', 'default', config)), golden transcripts",
            "balrog": f"balrog-ai/BALROG {BALROG_COMMIT}",
            "config": "balrog/config/config.yaml crafter_kwargs, with seed set to the episode's seed",
            "crafter_kwargs": OmegaConf.to_container(config.envs.crafter_kwargs) | {"seed": "the episode's seed"},
            "despawn_order": "crafter.Env._balance_chunk given each chunk's creatures in creation order (see record.py); "
            "set_order_run_parts_at: the first step (0: reset) at which a run with crafter's own set order differed, in the run that made this file",
            "packages": versions,
            "python": sys.version.split()[0],
            "command": "cd /tmp && /work/balrog-ref/venv/bin/python /work/main/tests/envs/balrog/golden/crafter/record.py",
            "image_sha256": "sha256 of np.asarray(obs['image'], uint8) bytes (256x256x3, row-major)",
        },
        "instruction_prompt": env.get_instruction_prompt(),
        "actions": list(env.env.language_action_space),  # as check_action_validity reads it
        "default_action": env.env.default_action,
        "max_steps": env.max_steps,
        "episodes": episodes,
    }
    raw = json.dumps(data, indent=0).encode()
    OUT.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(raw)} uncompressed)", file=sys.stderr)


if __name__ == "__main__":
    if pathlib.Path.cwd().resolve().as_posix().startswith("/work/balrog-ref/src"):
        sys.exit("run from outside /work/balrog-ref/src: its checkouts shadow packages")
    main()
