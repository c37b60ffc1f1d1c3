"""Trusted side: gradtutor's course tools. They hold the answer key and never run student code.

    key/        the exercise units' registry, the answer key (references at every variant,
                practice values), the misconception catalogue, ``gradtutor key``
    grading/    one grading run: read submissions, the sandbox's parent side, judge and score
    records/    every read and write of the gradebook and the results files
    reports/    the class report, feedback pages, exports for a learning management system
    authoring/  the course author's tools: the build, the student runtime wheel, the demo class,
                offline HTML
    cli.py      the ``gradtutor`` command

It imports the student runtime (``autograder``); the runtime never imports it
(``tests/test_architecture.py``).
"""
