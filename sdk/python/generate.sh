#!/usr/bin/env bash
# Regenerates src/assent/_models.py from docs/openapi.json (pydantic v2 models, by
# datamodel-code-generator at the version pinned in requirements-dev.txt). The tests fail when
# the committed file differs from what this makes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/src/assent/_models.py}"
datamodel-codegen --input "$here/../../docs/openapi.json" --input-file-type openapi --output "$out" \
  --output-model-type pydantic_v2.BaseModel --target-python-version 3.10 --use-annotated \
  --field-constraints --use-double-quotes --disable-timestamp \
  --custom-file-header "# Generated from docs/openapi.json by sdk/python/generate.sh: do not edit."
