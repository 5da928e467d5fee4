"""What placeviz knows about TensorFlow 1's API: the namespaces it mirrors (``namespaces.py``),
the names TensorFlow has there (``tf1_names.py``, recorded), the error a missing one raises
(``missing.py``) and the reference of what placeviz implements (``reference.py``, docs/api.md)."""
