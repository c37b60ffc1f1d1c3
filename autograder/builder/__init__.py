"""Author side: lessons + exercise units -> nbgrader source notebooks -> student and solution notebooks."""
