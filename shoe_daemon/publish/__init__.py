"""Sinks towards MQTT: the topic tree, the publisher and the embedded broker.

Import the modules you need (``shoe_daemon.publish.mqtt``: the publisher, joining
``.queue``, the delivery queue, and ``.client``, paho on an asyncio loop; ``.broker``,
``.topics``); this package imports nothing heavy itself.
"""
