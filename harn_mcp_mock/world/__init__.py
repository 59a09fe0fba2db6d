"""Seeded simulated worlds: spec, templates, effects, faults and the engine."""
