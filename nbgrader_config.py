"""nbgrader configuration for the gradtutor course (one assignment per chapter)."""

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "gradtutor"
c.CourseDirectory.root = "course"

# Students see "# YOUR CODE HERE" under the answer placeholder; no NotImplementedError, so a
# fresh notebook runs top to bottom and every check says "not answered yet".
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}

# A student who deletes a grade cell gets it back (and the points it carries).
c.OverwriteCells.add_missing_cells = True

# Stuck cells are cut after nbgrader's default 30 s (import torch alone takes ~2 s).
c.Execute.timeout = 30

# The released notebook shows its due date and the late policy under its title (from the
# gradebook and the course's config: `gradtutor due-date`, `gradtutor late-policy`); nbgrader's
# own steps follow, in nbgrader 0.9's order. Where gradtutor is not installed (or is an older
# one), nbgrader's own list stays: generate_assignment never fails for want of the step.
import importlib.util  # noqa: E402

if importlib.util.find_spec("gradtutor.records.nbgrader_hooks") is not None:
    c.GenerateAssignment.preprocessors = [
        "nbgrader.preprocessors.IncludeHeaderFooter",
        "gradtutor.records.nbgrader_hooks.ShowDueDate",
        "nbgrader.preprocessors.InstantiateTests",
        "nbgrader.preprocessors.LockCells",
        "nbgrader.preprocessors.ClearSolutions",
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.CheckCellMetadata",
        "nbgrader.preprocessors.ComputeChecksums",
        "nbgrader.preprocessors.SaveCells",
        "nbgrader.preprocessors.ClearHiddenTests",
        "nbgrader.preprocessors.ClearMarkScheme",
        "nbgrader.preprocessors.ComputeChecksums",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]

# Feedback must never show hidden tests or reference answers.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Opt-in: `GRADTUTOR_ISOLATED=1 nbgrader autograde ...` runs student code in gradtutor's isolated,
# limited workers instead of nbgrader's kernel, and judges plain answers outside it (see
# docs/grading.md). Off by default, so stock nbgrader stays the reference the tests compare to.
import os  # noqa: E402

if os.environ.get("GRADTUTOR_ISOLATED") == "1":
    c.Autograde.autograde_preprocessors = [
        "gradtutor.grading.nbgrader_execute.IsolatedExecute",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "nbgrader.preprocessors.SaveAutoGrades",
        "nbgrader.preprocessors.AssignLatePenalties",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
