"""Key flags shared by the policy (which computes them) and the pipeline (which reads them).

A leaf module, so that ``pipeline`` need not import ``policy``, which builds pipelines.
"""

from __future__ import annotations

K_SECRET = 1
"""Key flag: a ``redact.keys`` rule matches the key."""
K_ALLOW = 2
"""Key flag: an ``allow.keys`` rule matches the key."""
