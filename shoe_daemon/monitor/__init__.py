"""`shoe-daemon monitor`: a live view of a table over MQTT (see commands/monitor.py)."""
