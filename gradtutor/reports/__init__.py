"""Trusted side: what the records say, for people. Read-only over the records.

    report.py          ``gradtutor report``: what the class misunderstands, as charts
    analysis.py        the report's unexplained wrong answers, item analysis, misconceptions per student
    feedback_pages.py  ``gradtutor feedback``: one HTML page per student and assignment
    export.py          ``gradtutor export``: a Canvas gradebook import file, a CSV per submission
    pages.py           the one Jinja2 environment (autoescaped) for templates/*.html.j2
    charts.py          matplotlib off screen: the report's charts as embeddable SVG or PNG
"""
