"""The redaction corpus: credential formats and harmless values, generated from a seed."""
