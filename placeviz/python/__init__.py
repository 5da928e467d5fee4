"""``placeviz.python``: the private TensorFlow module paths seed programs import from."""
