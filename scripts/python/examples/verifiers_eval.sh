#!/usr/bin/env bash
# Evaluate a model on ehrgym's tasks with verifiers' own eval command; each rollout is an ehrgym
# episode and its reward the server's. EHRGYM_URL: a running `ehrgym serve`; MODEL_URL, MODEL and
# MODEL_API_KEY: an OpenAI-compatible endpoint. Extra flags pass through (-n, -r, -o, ...).
set -euo pipefail
vf-eval ehrgym-verifiers --env.taskset.base-url "$EHRGYM_URL" \
  -m "$MODEL" --client.base-url "$MODEL_URL" --client.api-key-var MODEL_API_KEY --no-push "$@"
