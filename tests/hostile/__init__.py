"""Bad and hostile submissions for the grader, and the small course kit the tests build on."""
