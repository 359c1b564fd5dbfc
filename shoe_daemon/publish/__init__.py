"""Sinks towards MQTT: the topic tree, the publisher and the embedded broker.

Import the modules you need (``shoe_daemon.publish.mqtt``, ``.broker``,
``.topics``); this package imports nothing heavy itself.
"""
