"""The package version (a leaf module: recorders and tapes stamp it without importing the
package root, whose lazy API would otherwise close an import cycle). Kept equal to
pyproject.toml's ``version`` by tests/test_wheel.py."""

__version__ = "0.1.0"
