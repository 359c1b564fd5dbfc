"""Tests of the MQTT sinks: publisher, embedded broker, monitor."""
