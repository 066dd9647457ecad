"""TextWorld's PDDL env paying a game's PDDL translation once per process.

``textworld.envs.PddlEnv`` parses the game's grammar with tatsu in ``load`` and translates the PDDL
domain + problem to Fast Downward's SAS format twice (plain, then optimized for replanning) every time
it builds a ``PddlState``: once in ``load`` and again in every ``reset``. That is ~0.3 s per
translation on a kitchen, and users replay the same games many times. Translation is a pure function of
the PDDL text, so :class:`CachedPddlEnv` keeps the results in bounded LRU caches keyed by a content
hash; everything after it (loading the SAS into the env's own copy of Fast Downward's library,
the facts, the text) runs as in TextWorld, so the game state is the same as a fresh load's.

TextWorld (1.7, pinned through alfworld 0.4.2) gives no hook for the translation, so ``PddlState``'s
constructor and ``PddlEnv.load``/``reset`` are restated here with the cache in; the tests compare
observations, admissible commands and rollouts with TextWorld's own env.

Every step, TextWorld's text generator also parses with tatsu the same few hundred grammar strings
and queries again, and deep-copies each derivation's context thousands of times:
:func:`lighten_text_generation` keeps the parse trees, still building every caller its own objects
from them, and copies the contexts' dicts, not the entities in them, which the generator only reads
(an ALFWorld step 160 -> 83 ms, benchmarks/alfworld_step.py).

Both are patches of :mod:`rl4vlm_gym.patches` (``textworld-parse-cache``,
``textworld-pddl-translation-cache``), made only over TextWorld 1.7.0's own code: over any other,
they are refused with a warning and TextWorld's code runs.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from rl4vlm_gym.extras import require

require("household", "rl4vlm/ALFWorld-v0")  # before importing it: an error naming the extra

import fast_downward
import textworld
from textworld.core import GameState
from textworld.envs import PddlEnv
from textworld.envs.pddl import logic as pddl_logic
from textworld.logic import Proposition, Variable
from textworld.utils import check_flag

from rl4vlm_gym import patches

T = TypeVar("T")

GAMES = 16
"""How many games' translations (and grammars) a process keeps."""


class _LRU:
    """A small bounded LRU map (functools.lru_cache cannot key on a hash we compute of the arguments)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return value

    def clear(self) -> None:
        self.items.clear()


_translations = _LRU(2 * GAMES)  # plain + optimized per game
_logics = _LRU(GAMES)


def _digest(*texts: str) -> str:
    hasher = hashlib.sha256()
    for text in texts:
        hasher.update(text.encode("utf-8"))
        hasher.update(b"\0")
    return hasher.hexdigest()


def translate(domain: str, problem: str, optimize: bool) -> tuple[Any, str]:
    """Fast Downward's ``pddl2sas(domain, problem)``: the parsed task and the SAS text, cached.
    The task is only read by ``PddlState``. ``pddl2sas`` overwrites ``sys.argv`` (for the
    translator's option parser): put back, as a user's script may still read it."""

    def make() -> tuple[Any, str]:
        argv = sys.argv
        try:
            return fast_downward.pddl2sas(domain, problem, verbose=check_flag("TW_PDDL_DEBUG"), optimize=optimize)
        finally:
            sys.argv = argv

    return _translations.get((_digest(domain, problem), optimize), make)


def game_logic(domain: str, grammar: str) -> Any:
    """TextWorld's ``GameLogic`` (the tatsu-parsed grammar), shared: its grammar and actions are only
    read, and ``PddlState`` adds the task's types to it idempotently."""
    return _logics.get(_digest(domain, grammar), lambda: pddl_logic.GameLogic(domain=domain, grammar=grammar))


PARSES = 8192
"""How many parse trees of grammar strings and logic expressions a process keeps."""


def lighten_text_generation() -> bool:
    """Cache the tatsu parse in TextWorld's two ``_parse_and_convert`` (its text generator's and its
    logic's), both pure functions of their arguments; the walk from the tree into TextWorld's objects
    runs on every call, as before, so no caller shares an object with another. And copy a
    derivation's context (``textgen.copy_context``) one level deep: its variables and mapping are
    dicts the generator updates, of entity infos and variables it never changes. Idempotent; made only
    over TextWorld 1.7.0's functions (:func:`rl4vlm_gym.patches.assign`). True when ours are in place."""
    return patches.assign("textworld-parse-cache", _replacements())


@functools.cache
def _replacements() -> dict[str, Any]:
    """Our three functions, made once (so a second :func:`lighten_text_generation` finds them in place)."""
    from textworld import logic
    from textworld.envs.pddl import textgen

    return {
        "textworld.envs.pddl.textgen:_parse_and_convert": _memoized(textgen._PARSER, textgen._Converter),
        "textworld.logic:_parse_and_convert": _memoized(logic._PARSER, logic._ModelConverter),
        "textworld.envs.pddl.textgen:copy_context": _copy_context,
    }


def _copy_context(context: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": dict(context["variables"]),
        "mapping": dict(context["mapping"]),
        "entity_infos": context["entity_infos"],
    }


def _memoized(parser: Any, converter: type) -> Callable[..., Any]:
    parse = functools.lru_cache(maxsize=PARSES)(lambda text, options: parser.parse(text, **dict(options)))

    def parse_and_convert(text: str, **options: Any) -> Any:
        return converter().walk(parse(text, tuple(sorted(options.items()))))

    parse_and_convert.memoized = True  # type: ignore[attr-defined]
    return parse_and_convert


class CachedPddlState(pddl_logic.PddlState):
    """``textworld.envs.pddl.logic.PddlState`` with the translation from :func:`translate`."""

    def __init__(self, downward_lib: Any, pddl_problem: str, logic: Any) -> None:  # noqa: D107
        from collections import Counter, defaultdict

        # From here to the end: PddlState.__init__ (textworld 1.7) with the two pddl2sas calls cached.
        self._facts: defaultdict[str, set[Any]] = defaultdict(set)
        self._vars_by_name: dict[str, Any] = {}
        self._vars_by_type: defaultdict[str, set[Any]] = defaultdict(set)
        self._var_counts: Counter[str] = Counter()
        self._logic = logic
        self.downward_lib = downward_lib
        self.pddl_problem = pddl_problem
        self.task, self.sas = translate(logic.domain, pddl_problem, optimize=False)
        self._replan_loaded = False  # the optimized translation: made on the first replan (see replan)
        self._actions = {a.name: a for a in self.task.actions}
        for type_ in self.task.types:
            try:
                self._logic.types.add(textworld.logic.Type(type_.name, type_.supertype_names))
            except ValueError:
                pass
        self.downward_lib.load_sas(self.sas.encode("utf-8"))
        self.name2type = {o.name: o.type_name for o in self.task.objects}

        def _atom2proposition(atom: Any) -> Proposition | None:
            if isinstance(atom, fast_downward.translate.pddl.conditions.Atom):
                if atom.predicate == "=":
                    return None
                return Proposition(atom.predicate, [Variable(arg, self.name2type[arg]) for arg in atom.args])
            if isinstance(atom, fast_downward.translate.pddl.f_expression.Assign):
                if atom.fluent.symbol == "total-cost":
                    return None
                name = f"{atom.expression.value}"
                if str.isdigit(name):  # Discard distance relations.
                    return None
                return Proposition(name, [Variable(arg, self.name2type[arg]) for arg in atom.fluent.args])
            return None

        self.add_facts(list(filter(None, (_atom2proposition(atom) for atom in self.task.init))))
        atoms = (pddl_logic.Atom * self.downward_lib.get_state_size())()
        self.downward_lib.get_state(atoms)
        facts = [atom.get_fact(self.name2type) for atom in atoms]
        self.add_facts([fact for fact in facts if not fact.is_negation])


    @property
    def sas_replan(self) -> str:
        """The task translated for replanning (``pddl2sas(..., optimize=True)``), as ``PddlState`` has it."""
        return translate(self._logic.domain, self.pddl_problem, optimize=True)[1]

    def replan(self, infos: Any) -> list[str]:
        """``PddlState.replan``, the optimized translation loaded first. TextWorld translates and loads
        it in every ``PddlState`` (half of a game's translation, ~0.5 s on a kitchen), though only a
        replan reads it: a process that never plans never pays for it. The library keeps the task
        it is given apart from the played one, and ``replan`` starts from the played one's state,
        so loading it later gives the same plans (tests/envs/household/test_pddl_cache.py)."""
        self.load_replan()
        return super().replan(infos)

    def load_replan(self) -> None:
        """Translate (cached) and load the task for replanning, once; a planner forked from this process
        then finds it here rather than translating it in the child, where the cache would be lost."""
        if not self._replan_loaded:
            self.downward_lib.load_sas_replan(self.sas_replan.encode("utf-8"))
            self._replan_loaded = True


class CachedPddlEnv(PddlEnv):
    """``textworld.envs.PddlEnv`` whose ``load`` and ``reset`` reuse the game's parsed grammar and PDDL
    translation, and whose text is generated with memoized parsers (see the module's docstring);
    everything else is TextWorld's. Over another TextWorld than 1.7.0 (the patches refused), it is
    TextWorld's ``PddlEnv``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: D107
        lighten_text_generation()
        super().__init__(*args, **kwargs)

    def load(self, filename_or_data: str | Mapping[str, Any]) -> None:
        if not patches.guard("textworld-pddl-translation-cache"):
            return super().load(filename_or_data)
        if isinstance(filename_or_data, Mapping):
            data, self._game_file = filename_or_data, None
        else:
            import json

            with open(filename_or_data, encoding="utf-8") as file:
                data = json.load(file)
            self._game_file = filename_or_data
        # PddlEnv.load (textworld 1.7) with the cached logic and state
        self._game_data = data
        self.walkthrough = data.get("walkthrough", None)
        self._logic = game_logic(data["pddl_domain"], data["grammar"])
        self._pddl_state = CachedPddlState(self.downward_lib, data["pddl_problem"], self._logic)
        self._entity_infos = self._get_entity_infos()

    def reset(self) -> GameState:
        if not patches.guard("textworld-pddl-translation-cache"):
            return super().reset()
        # PddlEnv.reset (textworld 1.7) with the cached state
        self._pddl_state = CachedPddlState(self.downward_lib, self._game_data["pddl_problem"], self._logic)
        self.prev_state = None
        self.state = GameState()
        self._last_action = None
        self._moves = 0
        context = {
            "state": self._pddl_state,
            "facts": list(self._pddl_state.facts),
            "variables": {},
            "mapping": {},
            "entity_infos": self._entity_infos,
        }
        self.state.feedback = self._logic.grammar.derive("#intro#", context)
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.walkthrough or self._pddl_state.replan(self._entity_infos)
        return self.state
