"""Fixtures: formats, check files, replay through the real daemon, the recording tap, the library."""
