#!/usr/bin/env bash
# Set up everything RL4VLM Gym needs on a Debian machine with Python 3.11: the Debian packages the
# chosen extras need (apt-get, only when missing), a virtual environment in .venv and the Python
# packages. Safe to re-run: it reinstalls only when the packaging files change.
#
#   bash scripts/setup.sh [EXTRA ...]      e.g. bash scripts/setup.sh dev
set -euo pipefail
cd "$(dirname "$0")/.."
extras=("$@")
venv=.venv

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; exit 1
  fi
}

apt_install() {  # install the Debian packages that are not installed yet
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# 1. Python 3.11+ with venv.
python=$(command -v python3.11 || command -v python3 || true)
if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  log "Python 3.11 or newer is required (found: ${python:-none})"; exit 1
fi
if [ ! -x "$venv/bin/python" ] && ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  apt_install python3-venv
fi

# 2. Debian packages of the requested extras (scripts/debian-packages.txt: "extra: pkg pkg ...").
for extra in core "${extras[@]}"; do
  pkgs=$(sed -n "s/^${extra}:[[:space:]]*//p" scripts/debian-packages.txt)
  [ -n "$pkgs" ] && apt_install $pkgs
done

# An rl4vlm_gym.egg-info at the root (written by installs before setup.cfg's egg_base) shadows the
# installed metadata whenever Python runs from here: remove it.
rm -rf rl4vlm_gym.egg-info

# 3. The virtual environment and the Python packages (skipped when nothing changed).
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
spec=".[$(IFS=,; echo "${extras[*]:-}")]"
[ "$spec" = ".[]" ] && spec="."
stamp="$venv/.rl4vlm-setup"
want="$spec $(cat setup.cfg pyproject.toml | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing rl4vlm-gym$([ "$spec" = . ] || echo " with ${spec#.}") into $venv"
  # The venv's bin leads PATH: some sdists (fast-downward-textworld) build by calling `python`.
  PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pip install -q --upgrade pip
  # The hf and train extras need torch: install the CPU build first (pip would otherwise resolve torch to a
  # multi-GB CUDA build). Set TORCH_SPEC to choose another build, e.g. on a GPU machine.
  case " ${extras[*]:-} " in *" hf "*|*" train "*|*" marl "*|*" all "*)
    "$venv/bin/python" -c 'import torch' 2>/dev/null ||
      PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pip install -q "${TORCH_SPEC:-torch==2.13.0}" ;;
  esac
  PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pip install -q -e "$spec"
  # BALROG's MiniHack: minihack 0.1.6 without its pin nle==0.9.0 (balrog-nle, of the nethack extra,
  # provides the same nle module; BALROG's fork of minihack changes only that pin).
  case " ${extras[*]:-} " in *" nethack "*|*" all "*)
    PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pip install -q --no-deps minihack==0.1.6 ;;
  esac
  echo "$want" > "$stamp"
fi
# 4. BALROG's TextWorld games (balrog extra): its 75 game definitions ship compressed in
# envs/balrog/assets/textworld; textworld's Inform 7 compiles them here, two at a time (about 1 s of CPU
# each; a minute on 2 cores), into $RL4VLM_GYM_CACHE/textworld. A second run finds them there.
case " ${extras[*]:-} " in *" balrog "*|*" all "*)
  log "compiling BALROG's 75 TextWorld games (about a minute on 2 cores the first time)"
  "$venv/bin/python" -m rl4vlm_gym.envs.balrog.textworld_games --jobs 2 | tail -n 1 >&2 ;;
esac
# 5. Byte-compile the package's sources, as pip does for an installed wheel (an editable install does not):
# every process the suite or a run starts (fresh kit children, servers, Ray workers) then reads them, even
# under PYTHONDONTWRITEBYTECODE. Quick: only changed files are compiled again. tests/ too: the kit's fresh
# children import its helper modules (tests/kit/kit_walk.py) by plain import, hundreds of times a run.
"$venv/bin/python" -m compileall -q -j 0 rl4vlm_gym envs baselines leaderboards/suites tests >/dev/null
# 6. With pytest (the dev extra): its assertion-rewritten test modules, which pytest caches only where bytecode
# may be written. Under PYTHONDONTWRITEBYTECODE each worker of every test run rewrites every test module again
# (about 11 s of CPU a worker: collection takes 19 s of CPU without them, 8 s with them); one collection with
# writing allowed leaves them in tests/**/__pycache__, and pytest rewrites again only the modules changed since.
if "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
  env -u PYTHONDONTWRITEBYTECODE "$venv/bin/python" -m pytest --collect-only -q -p no:xdist >/dev/null 2>&1 ||
    log "pytest could not collect the tests: run .venv/bin/python -m pytest --collect-only to see why"
fi
log "ready: $venv ($("$venv/bin/python" --version))"
