"""Seeing autograd: graph drawings (``graph``), widgets (``widgets``), offline HTML (``export``).

Import the submodules directly; ``from autograder import draw_graph`` loads them lazily.
"""
