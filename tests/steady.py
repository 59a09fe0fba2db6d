"""What tests of a live ``verify`` pass so the machine's speed never reads as drift.

B8 compares wall-clock latencies: on a loaded 2-core CI machine a 19 ms call can take 150 ms.
That is a measurement of the machine, not drift of the server, so tests that check answers (not
latency) lift B8's floor to a minute. B8 itself is tested with recorded latencies
(tests/verify/test_rules.py), never with live ones.
"""

STEADY_FLOOR_MS = 60_000.0
