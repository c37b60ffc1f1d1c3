"""Student side: seeing autograd, graph drawings (``graph``) and widgets (``widgets``).

Import the submodules directly; ``from autograder import draw_graph`` loads them lazily. The
offline HTML export is an author's tool, ``gradtutor.authoring.export_html``.
"""
