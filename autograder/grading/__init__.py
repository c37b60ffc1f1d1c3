"""Grading a class: untrusted notebooks in, trusted scores out. Trusted side.

    submission.py  find submissions; read them safely; sanitise a notebook (locked cells restored)
    forkserver.py  the parent's side of the sandbox: start the zygote, hand each child its job,
                   read its typed messages, enforce the deadlines (the child is autograder.sandbox)
    scoring.py     the child's messages judged and scored (never runs student code)
    store.py       results files, CSV, the nbgrader gradebook (late penalties, manual grades),
                   autograded notebooks
    batch.py       ``gradtutor grade``: all of the above, in parallel, resumable
    feedback_pages.py ``gradtutor feedback``: one HTML page per student and assignment
    demo.py        ``gradtutor demo-class``: a synthetic class to grade
    report.py      ``gradtutor report``: what the class misunderstands, as charts
    analysis.py    the report's unexplained wrong answers, item analysis, misconceptions per student
    regrade.py     ``gradtutor regrade``: stored answers judged again against the current units
    export.py      ``gradtutor export``: a Canvas gradebook import file, a CSV per submission
    sheet.py       every CSV written, text cells escaped against spreadsheet formulas
"""
