import subprocess
import sys

import ponder.models
import ponder.testing


def test_public_names_resolve() -> None:
    for module in (ponder.models, ponder.testing):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_importing_models_does_not_import_the_sdks() -> None:
    code = "import sys, ponder.models; print('openai' in sys.modules, 'anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
