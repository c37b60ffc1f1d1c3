"""Trusted side: the answer key. The exercise units (``exercises/``), their registry, the
references and wrong answers at every variant, practice values, misconception names."""
