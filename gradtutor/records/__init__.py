"""Trusted side: the records. Results files, the nbgrader gradebook, autograded notebooks, CSV.

    store.py  every read and write of the gradebook and the results files
    sheet.py  every CSV written, text cells escaped against spreadsheet formulas
"""
