#!/usr/bin/env bash
# Build the private environment in which BALROG's own code records the golden transcripts under
# this folder. It lives OUTSIDE the project (nothing here is imported by rl4vlm_gym or its tests):
#
#   bash tests/envs/balrog/golden/make_reference_env.sh REF_DIR
#
# REF_DIR/src must hold checkouts of the originals at these commits (clone them yourself):
#   BALROG       balrog-ai/BALROG                     af7d1f17e0deec3a7a0e334beae5f11b7a21371b
#   Minigrid     BartekCupial/Minigrid (minigrid/)     cf73dd148e51276bd675a37e3bfb0bf2b42329b2
#   baba-is-ai   nacloos/baba-is-ai                    ad466e027ad0a08f253ac2bf48550a2eb21b5ecc
#   minihack     balrog-ai/minihack                    3ecb6da4eadcac7a4dbc5f8e801ccf636e34d7ec
#   tw_games     conglu1997/intelligent-go-explore      bcb4052e6de36a4389e666acd374832cfab1a042 (textworld/tw_games)
#   boxoban      deepmind/boxoban-levels               d5ca5614a803b604740ed9095ded127e8e3d5255
#   TextWorld    balrog-ai/TextWorld                   1d56f4765e7b28f04a68eff0bce5a6fe6ecd1a9f
# and makes REF_DIR/venv with BALROG's pinned PyPI dependencies (gym 0.23, crafter 1.8.3,
# balrog-nle 0.9.0, tatsu 5.8.3, textworld 1.7.0).
set -euo pipefail
ref=$(realpath "$1")
python3.11 -m venv "$ref/venv"
pip="$ref/venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q "gym==0.23" crafter==1.8.3 balrog-nle==0.9.0 tatsu==5.8.3 gymnasium pygame "numpy<2" \
  opencv-python-headless hydra-core omegaconf scipy pillow matplotlib openai pytest
# textworld 1.6.2rc1 (the release BALROG's fork renames) builds by downloading Inform 7; 1.7.0 ships it
"$pip" install -q textworld==1.7.0
"$pip" install -q --no-deps -e "$ref/src/Minigrid" -e "$ref/src/baba-is-ai" -e "$ref/src/minihack" -e "$ref/src/BALROG"
echo "reference environment ready: $ref/venv/bin/python"
# BALROG's post-install downloads, from the checkouts: the Boxoban levels into MiniHack's dat folder
# and the 75 TextWorld games where BALROG's TextWorld wrapper looks for them (tw_games).
mkdir -p "$ref/src/minihack/minihack/dat"
ln -sfn "$ref/src/boxoban-levels" "$ref/src/minihack/minihack/dat/boxoban-levels-master"
# BALROG's textworld (balrog-ai/TextWorld, 1.6.2rc1 renamed) into REF_DIR/textworld-fork, for the TextWorld
# recordings only (PYTHONPATH=REF_DIR/textworld-fork): its .ulx games need its Glulx interpreter, which
# textworld 1.7.0 dropped. Its setup.sh downloads Inform 7 first, which only compiling needs: that step is
# skipped (the aarch64 branch it already has), the Glulx interpreter and its glk bridge are built.
work=$(mktemp -d)
cp -r "$ref/src/TextWorld/." "$work/"
sed -i 's/if \[ "${ARCH}" != "aarch64" \]; then/if false; then/' "$work/setup.sh"
"$ref/venv/bin/python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install -q cffi setuptools wheel
(cd "$work" && PATH="$work/build-venv/bin:$PATH" "$work/build-venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$work/dist" .)
"$pip" install -q --no-deps --target "$ref/textworld-fork" "$work"/dist/*.whl cffi pycparser
rm -rf "$work"
echo "BALROG's textworld: PYTHONPATH=$ref/textworld-fork"
