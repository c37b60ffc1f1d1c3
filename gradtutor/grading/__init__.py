"""Trusted side: one grading run. Untrusted notebooks in, judged answers out.

    submission.py        find submissions; read them safely; sanitise a notebook (locked cells restored);
                         ``load``: one submission as the job its sandbox child runs
    forkserver.py        the parent's side of the sandbox: copy the runtime, start the zygote, hand
                         each child its job, read its typed messages, enforce the deadlines (the
                         child is autograder.sandbox)
    outcome.py           what came back from one child: its messages and how it ended
    scoring.py           the child's messages judged and scored (never runs student code)
    launch.py            ``gradtutor grade`` starts here: the zygote first, then the heavy imports
    batch.py             ``gradtutor grade``: all of the above, in parallel, resumable
    recorder.py          judging and storing on a thread of its own, batched gradebook transactions
    profile.py           ``gradtutor grade --profile``: where the time goes, step by step
    regrade.py           ``gradtutor regrade``: stored answers judged again against the current units
    nbgrader_execute.py  nbgrader's own autograde step, run through the same sandbox
"""
