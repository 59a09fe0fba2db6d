"""Fixtures of the mock Harness tests (defined in :mod:`tests.agents.harness_client`)."""

from tests.agents.harness_client import client, clock, db, store

__all__ = ["client", "clock", "db", "store"]
