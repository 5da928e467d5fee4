"""The inspector's kernel side: the live widget, its throttled event stream, a %%placement cell's
outputs (``cell_output``) and the text summary.

The browser side lives in ``labextension/`` and renders placement documents; this package only
hands it documents and event batches. ipywidgets is imported by ``widget`` (and ``cell_output``,
which uses it) alone, on first use.
"""
