"""Verify: classify drift between a recorded cassette and a candidate (cassette or live server)."""
