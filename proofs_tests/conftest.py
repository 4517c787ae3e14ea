"""Test settings: no per-example deadline (the specification is slow by design, and timing is no test here)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "bpeproof",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("bpeproof")
