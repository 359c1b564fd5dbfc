"""Shared test helpers (a real Mosquitto, a collecting subscriber)."""
