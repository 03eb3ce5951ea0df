"""The README's Python example, taken from README.md (the first ```python block of its
"Python" section) and run as written, from a directory laid out as `make demo` leaves the
repository (build/examples/ holding the example model)."""

import os
import re
import subprocess
import sys

from helpers import REPO


def readme_example():
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_as_written(llama_f32, tmp_path):
    code = readme_example()
    assert len(code.strip().splitlines()) == 5
    examples = tmp_path / "build" / "examples"
    examples.mkdir(parents=True)
    (examples / "llama3_layer_small_f32_b1.onnx").symlink_to(llama_f32)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env=os.environ.copy(), timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("(1, 1, 64)"), run.stdout
