"""Trusted side: the records. Results files, the nbgrader gradebook, autograded notebooks, CSV.

    results.py      a submission's results as records (and the gradebook's view of them);
                    ``read_result``: the validated loader of a results file
    store.py        the results files, the autograded notebooks' grade cells, the grades CSV;
                    ``reconcile``: the results as the gradebook has them now
    gradebook.py    every read and write of the nbgrader gradebook
    submissions.py  a submission and its cells as data; its timestamp and secret files
    files.py        atomic writes, and reading beneath the course without following a link
    sheet.py        every CSV written, text cells escaped against spreadsheet formulas
"""
