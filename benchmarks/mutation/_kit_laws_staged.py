# ruff: noqa  -- a fragment appended to tests/kit/kit_laws.py in the staging tree: its names come from there

# -- Appended by benchmarks/mutation/run.sh to the STAGING tree's copy of tests/kit/kit_laws.py only. --
# Under mutmut, rl4vlm_gym/testing/*.py holds every function once per mutant (``x_f__mutmut_3``,
# ``xǁClassǁm__mutmut_orig``): read as laws, each assertion would be one law per copy. So the laws
# come from the unmutated sources (WORKDIR/stage/rl4vlm_gym/testing), and a traceback frame in a
# mutated copy is matched to a law by (module, function, line offset in that function): a copy has the
# original's lines, but for its one mutation.
import functools as _functools  # noqa: E402

_ORIGINAL_KIT = Path(__file__).resolve().parents[3] / "rl4vlm_gym" / "testing"
if _ORIGINAL_KIT.is_dir():
    KIT = _ORIGINAL_KIT
_COPY = re.compile(r"^(?:x_|xǁ(?P<cls>[^ǁ]+)ǁ)(?P<name>.+?)__mutmut_(?:\d+|orig)$")


@_functools.cache
def _outer_functions(path: Path) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, Class.name) of each module-level function and method of ``path``;
    a mutant copy is named as its original."""
    out = []
    tree = ast.parse(path.read_text(), str(path))
    for top in tree.body:
        inner = top.body if isinstance(top, ast.ClassDef) else [top]
        for node in inner:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                match = _COPY.match(node.name)
                cls, name = (match["cls"], match["name"]) if match else (top.name if top is not node else None, node.name)
                out.append((node.lineno, node.end_lineno or node.lineno, f"{cls}.{name}" if cls else name))
    return tuple(out)


def _place(path: Path, line: int) -> tuple[str, str, int] | None:
    for first, last, name in _outer_functions(path):
        if first <= line <= last:
            return path.stem, name, line - first
    return None


def _within(law: Law, frame: tuple[str, str, int]) -> bool:
    place = _place(law.path, law.lines[0])
    return place is not None and frame[:2] == place[:2] and place[2] <= frame[2] <= place[2] + law.lines[1] - law.lines[0]


def law_of(error: BaseException) -> Law | None:  # noqa: F811 - the staging tree's version
    message = str(error)
    laws = [law for law in kit_laws() if law.template is not None and law.template.fullmatch(message)]
    if len(laws) > 1:
        frames = [
            _place(Path(f.filename).resolve(), f.lineno)
            for f in traceback.extract_tb(error.__traceback__)
            if Path(f.filename).resolve().parent.name == "testing"
        ]
        laws = [law for law in laws if any(_within(law, frame) for frame in frames if frame is not None)]
    return laws[0] if len(laws) == 1 else None
