"""Trusted side: the course author's tools, apart from grading.

    build.py        lessons + exercise units -> nbgrader source, student and solution notebooks
    lesson.py       a chapter's lesson.md read into cells;  cells.py: the cells the build writes
    runtime.py      the student runtime wheel, built from autograder/pyproject.toml with its check data
    demo.py         ``gradtutor demo-class``: a synthetic class to grade
    export_html.py  ``gradtutor export-html``: an offline page of a notebook with live widgets
"""
