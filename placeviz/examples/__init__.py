"""Example programs shipped with placeviz. Source lines here are reported as user code."""
