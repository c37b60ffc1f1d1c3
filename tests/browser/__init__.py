"""Helpers for the browser tests: a throwaway JupyterLab server and a demo notebook."""
