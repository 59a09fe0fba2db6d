"""Fixtures of the mock Harness tests (defined in :mod:`tests.protocol.harness_client`)."""

from tests.protocol.harness_client import client, clock, db, store

__all__ = ["client", "clock", "db", "store"]
