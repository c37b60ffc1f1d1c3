"""Student side: the grading sandbox. Nothing here may hold, import or receive the answer key.

    limits.py  the limits of one submission and the per-cell timers (the benchmark's floor uses them)
    zygote.py  the warm process children are forked from: torch, IPython, the student runtime only
    child.py   one submission in one forked child: its own uid, private scratch space, the cells
"""
