# RL4VLM Gym's OpenEnv server (rl4vlm-gym serve) as a container, built the way OpenEnv's env template
# builds (openenv init's server/Dockerfile): a builder stage installs the package into a virtual
# environment, the runtime stage copies it, a HEALTHCHECK polls /health, the server listens on 8000.
#
# Build from the repository's root (the build context is the repository; .dockerignore trims it):
#   docker build -f docker/server.Dockerfile -t rl4vlm-gym-server .
#   docker build -f docker/server.Dockerfile --build-arg EXTRAS=server,nav -t rl4vlm-gym-server-nav .
# Run (ENV_ID: an env id or a suite):
#   docker run -p 8000:8000 -e ENV_ID=rl4vlm/Sokoban-v0 -e MAX_SESSIONS=16 rl4vlm-gym-server
#   openenv validate http://localhost:8000

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
# pip extras to install beside the server (e.g. server,nav for MiniWorld; see setup.cfg)
ARG EXTRAS=server
WORKDIR /app/src
COPY setup.cfg pyproject.toml README.md MANIFEST.in ./
COPY scripts/ scripts/
COPY rl4vlm_gym/ rl4vlm_gym/
COPY envs/ envs/
COPY baselines/ baselines/
COPY leaderboards/suites/ leaderboards/suites/
RUN python -m venv /app/.venv \
    && /app/.venv/bin/pip install --no-cache-dir --upgrade pip \
    && /app/.venv/bin/pip install --no-cache-dir ".[${EXTRAS}]"

FROM ${PYTHON_IMAGE}
ARG EXTRAS=server
WORKDIR /app
# The Debian packages the chosen extras need at run time (scripts/debian-packages.txt, as setup.sh reads it).
COPY scripts/debian-packages.txt /tmp/debian-packages.txt
RUN pkgs=$(for extra in $(echo "core,${EXTRAS}" | tr ',' ' '); do \
        sed -n "s/^${extra}:[[:space:]]*//p" /tmp/debian-packages.txt; done) \
    && if [ -n "$(echo $pkgs | tr -d ' ')" ]; then \
        apt-get update && apt-get install -y --no-install-recommends $pkgs && rm -rf /var/lib/apt/lists/*; fi \
    && rm /tmp/debian-packages.txt
COPY --from=builder /app/.venv /app/.venv
ENV PATH="/app/.venv/bin:$PATH" \
    ENV_ID=rl4vlm/NumberLine-v0 \
    MAX_SESSIONS=16 \
    IDLE_TIMEOUT=600
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://localhost:8000/health', timeout=2)" || exit 1
CMD ["sh", "-c", "exec rl4vlm-gym serve \"$ENV_ID\" --host 0.0.0.0 --port 8000 --max-sessions \"$MAX_SESSIONS\" --idle-timeout \"$IDLE_TIMEOUT\""]
