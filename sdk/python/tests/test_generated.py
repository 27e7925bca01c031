"""The generated models are what generate.sh makes from docs/openapi.json today."""

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def test_the_generated_models_have_not_drifted(tmp_path):
    out = tmp_path / "_models.py"
    subprocess.run([str(HERE / "generate.sh"), str(out)], check=True, env={**os.environ}, capture_output=True)
    committed = (HERE / "src" / "assent" / "_models.py").read_text()
    assert out.read_text() == committed, "docs/openapi.json changed: run sdk/python/generate.sh and commit the result"
