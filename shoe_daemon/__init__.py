"""Punto Banco dealing-shoe daemon."""

__version__ = "0.1.0"
