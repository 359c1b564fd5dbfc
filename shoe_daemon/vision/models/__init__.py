"""The shipped glyph models (JSON, written by ``python -m shoe_daemon.vision.train``)."""
