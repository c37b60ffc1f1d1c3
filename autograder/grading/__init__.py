"""Grading a class: untrusted notebooks in, trusted scores out.

    submission.py  find submissions; read and sanitise a notebook (locked cells restored)
    worker.py      the forked child: limits, runs the student's cells, sends answers as JSON
    forkserver.py  the warm parent: forks one child per submission, enforces the deadlines
    scoring.py     trusted side: validate the JSON, judge, score (never runs student code)
    store.py       results files, CSV, the nbgrader gradebook, autograded notebooks
    batch.py       ``gradtutor grade``: all of the above, in parallel, resumable
    feedback.py    ``gradtutor feedback``: one HTML page per student and assignment
    demo.py        ``gradtutor demo-class``: a synthetic class to grade
    report.py      ``gradtutor report``: what the class misunderstands, as charts
"""
