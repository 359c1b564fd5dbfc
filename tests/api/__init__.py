"""Tests of the HTTP API, over real HTTP against a running daemon."""
