"""The inspector's kernel side: the live widget, its throttled event stream and the HTML export.

The browser side lives in ``labextension/`` and renders placement documents; this package only
hands it documents and event batches. ipywidgets is imported by ``widget`` alone, on first use.
"""
