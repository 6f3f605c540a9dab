"""Suite-wide test settings.

Hypothesis runs few examples locally and many in CI (where ``CI=true`` is set);
``HYPOTHESIS_PROFILE=ci`` (or ``dev``) chooses one by hand. Neither has a deadline: an
example that is slow because the machine is busy is not a failure (tests assert no timing).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=400, deadline=None)
_IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _IN_CI else "dev"))
