"""BALROG family of RL4VLM Gym: BALROG's benchmark envs behind our contract, under ``balrog/``.

``register`` is this family's ``rl4vlm_gym.envs`` entry point. Keep this module light: it runs on
every ``import rl4vlm_gym``, so it imports no env module (the entry point string below is
imported only when an env is made).
"""

from __future__ import annotations

from rl4vlm_gym.registry import EnvCard
from rl4vlm_gym.registry import register as _register

_BALROG = "BALROG (Paglieri et al. 2024, arXiv 2411.13543; balrog-ai/BALROG af7d1f17), env babyai"
_BABYAI = (
    "BabyAI (Chevalier-Boisvert et al. 2019) on minigrid 3.0.0 (Farama); BabyAI-Text's level BabyAI-MixedTrainLocal-v0 "
    "as BALROG's minigrid fork (BartekCupial/Minigrid cf73dd14) generates it"
)

# (id name, BALROG task, what the mission asks, where, max steps: minigrid's navs * 64 * rooms)
_BABYAI_TASKS = (
    ("GoTo", "goto", "go to the named object (stand facing it)", "one 8x8 room", 64),
    ("Pickup", "pickup", "pick up the named object", "one 8x8 room", 64),
    ("Open", "open", "open the locked door (the mission names its colour about half the time) with its key, which lies "
     "in your room", "two 8x8 rooms", 128),
    ("PutNext", "putnext", "put the first named object next to the second", "one 8x8 room", 128),
    ("PickUpSeqGoTo", "pick_up_seq_go_to", "pick up the first named object, then go to the second (reaching the second "
     "first fails nothing)", "one 8x8 room", 128),
)  # fmt: skip

CARDS = tuple(
    EnvCard(
        id=f"balrog/BabyAI-{name}-v0",
        entry_point="rl4vlm_gym.envs.balrog.babyai:BabyAI",
        family="balrog",
        summary=f"BALROG's BabyAI {task} task: {what}, in {where} with no distractors; a seed gives the level, text, "
        "image and prompt BALROG's wrapper gives it (golden-tested; minigrid).",
        skills=("visual-reading", "navigation", "instruction-following"),
        levels=("BALROG's setting: BabyAI-MixedTrainLocal-v0 with no distractors, one 8x8 room (two for open)",),
        default_level=0,
        action_grammar="one of 'turn left', 'turn right', 'go forward', 'pick up', 'drop', 'toggle'",
        action_examples=(
            "go forward",
            '{"thoughts": "the ball is to my left", "action": "turn left"}',
            "<action>pick up</action>",
        ),
        reward_variants=("native",),
        success="minigrid's verifier reports the mission accomplished (BALROG's progression 1)",
        max_episode_steps=steps,
        references=(_BALROG + f", task BabyAI-MixedTrainLocal-v0/{task}", _BABYAI),
        extra="balrog",
        kwargs={"task": task},
        benchmark=("babyai", f"BabyAI-MixedTrainLocal-v0/{task}"),
    )
    for name, task, what, where, steps in _BABYAI_TASKS
)


_CRAFTER = "Crafter (Hafner 2022, arXiv 2109.06780) on crafter 1.8.3 (danijar/crafter)"

CARDS += (
    EnvCard(
        id="balrog/Crafter-v0",
        entry_point="rl4vlm_gym.envs.balrog.crafter:Crafter",
        family="balrog",
        summary="BALROG's Crafter: survive in a generated 2-D open world and unlock as many of its 22 achievements as you can (crafter).",
        skills=("visual-reading", "navigation", "planning", "long-horizon"),
        levels=("BALROG's setting: a 64x64 world seen 9x7 cells around you, inventory below",),
        default_level=0,
        action_grammar="one of BALROG's 17 names: 'Noop', 'Move West', 'Move East', 'Move North', 'Move South', 'Do', "
        "'Sleep', 'Place Stone', 'Place Table', 'Place Furnace', 'Place Plant', 'Make Wood Pickaxe', 'Make Stone Pickaxe', "
        "'Make Iron Pickaxe', 'Make Wood Sword', 'Make Stone Sword', 'Make Iron Sword'",
        action_examples=("Do", '{"thoughts": "a tree is to my west", "action": "Move West"}', "<action>Place Table</action>"),
        reward_variants=("native",),
        success="all 22 achievements unlocked (BALROG's progression is the share unlocked: info['progress'])",
        max_episode_steps=2000,
        references=(_BALROG.replace("env babyai", "env crafter"), _CRAFTER),
        extra="balrog",
        benchmark=("crafter", "default"),
    ),
)


_NLE = "NLE (Kuettler et al. 2020, arXiv 2006.13760) 0.9.0 as balrog-nle 0.9.0 (balrog-ai/nle fix_dungeons), NetHack 3.6.6"
_MINIHACK = "MiniHack (Samvelyan et al. 2021, arXiv 2109.13202) 0.1.6, the release of BALROG's fork (balrog-ai/minihack 3ecb6da4)"
_BOXOBAN = "Boxoban levels (Guez et al. 2018, deepmind/boxoban-levels d5ca5614, Apache-2.0), shipped in envs/balrog/data/boxoban"

CARDS += (
    EnvCard(
        id="balrog/NetHack-v0",
        entry_point="rl4vlm_gym.envs.balrog.nethack:NetHack",
        family="balrog",
        summary="BALROG's NetHack: the full game (NetHackChallenge-v0) as BALROG's wrappers play it, "
        "BALROG's text, image, prompt and Dlvl/Xp progression (NLE).",
        skills=("visual-reading", "navigation", "planning", "long-horizon"),
        levels=("BALROG's setting: NetHackChallenge-v0, a random character",),
        default_level=0,
        action_grammar="one of BALROG's 248 names: NLE's useful actions ('north', 'far east', 'down', 'search', 'esc', ...), "
        "a key 'a'-'z', 'A'-'Z', '0'-'9', or '00'-'99' (listed by BALROG, never playable)",
        action_examples=("far east", '{"thoughts": "the stairs are below", "action": "down"}', "<action>search</action>"),
        reward_variants=("native",),
        success="never (no ascension is reachable); BALROG's progression from the deepest Dlvl and highest Xp level: info['progress']",
        max_episode_steps=100_000,
        references=(_BALROG.replace("env babyai", "env nle"), _NLE),
        extra="nethack",
        benchmark=("nle", "NetHackChallenge-v0"),
    ),
)

# (id name, what the task asks): BALROG's eight MiniHack tasks
_MINIHACK_TASKS = (
    ("Boxoban-Hard", "push four boulders onto four fountains, a hard boxoban level (3,332 shipped: all of them)"),
    ("Boxoban-Medium", "push four boulders onto four fountains, a medium boxoban level (10,000 of its 450,000 shipped)"),
    ("MazeWalk-9x9", "find the stairs down in a 9x9 maze"),
    ("MazeWalk-15x15", "find the stairs down in a 15x15 maze"),
    ("Corridor-R3", "reach the stairs down through corridors joining three rooms"),
    ("CorridorBattle-Dark", "reach the stairs down along a dark corridor full of monsters"),
    ("Quest-Easy", "the easy quest: use items and fight monsters on the way to the stairs down"),
    ("Quest-Medium", "the medium quest: a longer way with more monsters to the stairs down"),
)

CARDS += tuple(
    EnvCard(
        id=f"balrog/MiniHack-{name}-v0",
        entry_point="rl4vlm_gym.envs.balrog.minihack:MiniHack",
        family="balrog",
        summary=f"BALROG's MiniHack {name}: {what} (minihack on NLE, as BALROG's wrappers play it).",
        skills=("visual-reading", "navigation", "planning"),
        levels=("BALROG's setting: the task's own level, 100 NLE steps",),
        default_level=0,
        action_grammar="one of the task's actions among BALROG's 33 MiniHack names ('north', 'southeast', 'far east', 'open', ...)",
        action_examples=("north", '{"thoughts": "the corridor goes east", "action": "east"}', "<action>west</action>"),
        reward_variants=("native",),
        success="the episode's last step pays at least 1.0 (the stairs down reached, or every boulder on a fountain; BALROG's progression 1)",
        max_episode_steps=100,
        references=(_BALROG.replace("env babyai", "env minihack") + f", task MiniHack-{name}-v0", _MINIHACK, _NLE)
        + ((_BOXOBAN,) if name.startswith("Boxoban") else ()),
        extra="nethack",
        kwargs={"task": f"MiniHack-{name}-v0"},
        benchmark=("minihack", f"MiniHack-{name}-v0"),
    )
    for name, what in _MINIHACK_TASKS
)

_TEXTWORLD = (
    "TextWorld (Côté et al. 2018, arXiv 1806.11532) on textworld 1.7.0 (Microsoft); BALROG's 75 games from "
    "conglu1997/intelligent-go-explore bcb4052e textworld/tw_games (MIT), compiled to .z8 at set-up"
)

# (id name, BALROG task, summary, skills): 25 fixed games per task, BALROG's.
_TEXTWORLD_TASKS = (
    ("TreasureHunter", "treasure_hunter", "find and take an object in a house of locked doors and containers (the keys are in it), "
     "and not the forbidden one; 20-step walkthroughs", ("visual-reading", "exploration", "planning")),
    ("CookingGame", "the_cooking_game", "read the recipe, gather 5 ingredients from 12 rooms, cut and cook them, prepare the meal "
     "and eat it; 45-90-step walkthroughs, 39-75 steps without their repeats", ("visual-reading", "exploration", "planning", "long-horizon")),
    ("CoinCollector", "coin_collector", "find and take the coin at the end of a chain of rooms with dead ends; 20-step walkthroughs",
     ("visual-reading", "exploration", "navigation")),
)  # fmt: skip

CARDS += tuple(
    EnvCard(
        id=f"balrog/TextWorld-{name}-v0",
        entry_point="rl4vlm_gym.envs.balrog.textworld_env:TextWorld",
        family="balrog",
        summary=f"BALROG's TextWorld {task}: {what} (BALROG's 25 fixed games, its texts and prompt; the objective is cut "
        "from every observation, as BALROG does).",
        skills=skills,
        levels=("BALROG's setting: one of its 25 games of the task (game seed mod 25)",),
        default_level=0,
        action_grammar="one of TextWorld's admissible commands (obs['actions']), e.g. 'go east', 'take coin', 'open fridge'; "
        "free_commands=True passes any other one-line command to the game, as BALROG (interpreter commands refused)",
        action_examples=("go east", '{"thoughts": "the coin may be east", "action": "go east"}', "<action>take coin</action>"),
        reward_variants=("native",),
        success="the game is won (BALROG's progression: max(score / max_score, won) at the end, info['progress'])",
        max_episode_steps=80,
        references=(_BALROG.replace("env babyai", "env textworld") + f", task {task}", _TEXTWORLD),
        extra="balrog",
        kwargs={"task": task},
        benchmark=("textworld", task),
    )
    for name, task, what, skills in _TEXTWORLD_TASKS
)


_BABAISAI = "BabaIsAI (Cloos et al. 2024, arXiv 2407.13729) as nacloos/baba-is-ai ad466e02 (MIT) generates and plays it, rebuilt here"

# BALROG's 40 BabaIsAI tasks (balrog/config/config.yaml babaisai_tasks, in its order): the part after
# "env/" names the id, e.g. env/two_room-break_stop-make_win -> balrog/BabaIsAI-two_room-break_stop-make_win-v0.
_BABAISAI_TASKS = (
    "make_win-distr_obj_rule", "goto_win-distr_obj_rule", "goto_win", "goto_win-distr_obj", "goto_win-distr_rule",
    "goto_win-distr_obj-irrelevant_rule", "make_win-distr_obj", "make_win-distr_rule", "make_win",
    "make_win-distr_obj-irrelevant_rule", "two_room-goto_win", "two_room-goto_win-distr_obj_rule", "two_room-goto_win-distr_rule",
    "two_room-goto_win-distr_obj", "two_room-goto_win-distr_obj-irrelevant_rule", "two_room-goto_win-distr_win_rule",
    "two_room-break_stop-goto_win-distr_obj_rule", "two_room-break_stop-goto_win-distr_obj", "two_room-break_stop-goto_win-distr_rule",
    "two_room-break_stop-goto_win-distr_obj-irrelevant_rule", "two_room-break_stop-goto_win",
    "two_room-maybe_break_stop-goto_win-distr_obj_rule", "two_room-maybe_break_stop-goto_win",
    "two_room-maybe_break_stop-goto_win-distr_obj", "two_room-maybe_break_stop-goto_win-distr_rule",
    "two_room-maybe_break_stop-goto_win-distr_obj-irrelevant_rule", "two_room-make_win-distr_obj_rule", "two_room-make_win-distr_rule",
    "two_room-make_win", "two_room-make_win-distr_obj-irrelevant_rule", "two_room-make_win-distr_obj", "two_room-make_win-distr_win_rule",
    "two_room-break_stop-make_win-distr_obj_rule", "two_room-break_stop-make_win-distr_rule", "two_room-break_stop-make_win",
    "two_room-break_stop-make_win-distr_obj-irrelevant_rule", "two_room-break_stop-make_win-distr_obj", "two_room-make_you",
    "two_room-make_you-make_win", "two_room-make_wall_win",
)  # fmt: skip
_BABAISAI_PARTS = {
    "goto_win": "walk to the object that is WIN",
    "make_win": "rebuild the win rule (one of its word blocks was moved away), then walk to the win object",
    "make_you": "make an object of the other room YOU with a word block, then walk it to the win object",
    "make_you-make_win": "make an object of the other room YOU and rebuild the win rule, then reach the win object",
    "make_wall_win": "break 'wall is stop', make 'wall is win' and touch a wall",
    "break_stop": "the win object is behind a wall: break 'wall is stop' first",
    "maybe_break_stop": "the win object may be behind a wall ('wall is stop')",
    "distr_obj": "a distractor object",
    "distr_rule": "a distractor word block",
    "distr_obj_rule": "a distractor object and word block",
    "irrelevant_rule": "a word block naming neither object",
    "distr_win_rule": "a second win rule",
}


def _babaisai_summary(task: str) -> str:
    parts = task.split("-")
    room = "two rooms split by a wall" if parts[0] == "two_room" else "one 8x8 room"
    parts = [p for p in parts if p != "two_room"]
    if "make_you" in parts:
        goal = _BABAISAI_PARTS["make_you-make_win" if "make_win" in parts else "make_you"]
    else:
        goal = _BABAISAI_PARTS[next(p for p in parts if p in ("goto_win", "make_win", "make_wall_win"))]
    extras = [_BABAISAI_PARTS[p] for p in parts if p in ("break_stop", "maybe_break_stop", "distr_obj", "distr_rule", "distr_obj_rule",
                                                        "irrelevant_rule", "distr_win_rule")]  # fmt: skip
    return f"BALROG's BabaIsAI env/{task}: {goal}, in {room}" + "".join(f"; {e}" for e in extras) + " (rules are word blocks you push)."


CARDS += tuple(
    EnvCard(
        id=f"balrog/BabaIsAI-{task}-v0",
        entry_point="rl4vlm_gym.envs.balrog.babaisai.env:BabaIsAI",
        family="balrog",
        summary=_babaisai_summary(task),
        skills=("visual-reading", "planning", "rule-manipulation"),
        levels=("BALROG's setting: the original generator's level for the task (np.random seeded with the episode's seed)",),
        default_level=0,
        action_grammar="one of 'idle', 'up', 'right', 'down', 'left'",
        action_examples=("up", '{"thoughts": "the key is to my left", "action": "left"}', "<action>down</action>"),
        reward_variants=("native",),
        success="a YOU object reaches a WIN object (reward 1 - 0.9 t/100; BALROG's progression 1, info['progress'])",
        max_episode_steps=100,
        references=(_BALROG.replace("env babyai", "env babaisai") + f", task env/{task}", _BABAISAI),
        kwargs={"task": f"env/{task}"},
        benchmark=("babaisai", f"env/{task}"),
    )
    for task in _BABAISAI_TASKS
)


def register() -> None:
    """Register the balrog envs (called through the ``rl4vlm_gym.envs`` entry point)."""
    for card in CARDS:
        _register(card)
