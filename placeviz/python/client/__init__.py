"""``placeviz.python.client``: ``device_lib``."""
