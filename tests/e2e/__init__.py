"""End-to-end tests: the daemon as a subprocess, a real Mosquitto, the emulated shoe on a real pty.

``harness`` starts the daemon (temp config and journal, readiness through a NOTIFY_SOCKET the test
owns) and builds emulated shoes; ``rules`` checks what arrives on MQTT against an independent
implementation of the Punto Banco tableau and against the emulator's ground truth.
"""
