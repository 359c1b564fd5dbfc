"""shoe_daemon.web without a browser: the static files, display_config(), mount()."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from shoe_daemon import web
from shoe_daemon.config import Config, LimitsConfig, MqttConfig, TableConfig
from tests.web.harness import DisplayServer


def config(**mqtt) -> Config:
    return Config(table=TableConfig(id="t7", decks=6), mqtt=MqttConfig(**mqtt))


def test_the_static_files_are_all_there_and_reference_nothing_remote():
    static = web.static_dir()
    for name in ("index.html", "app.js", "style.css", "fonts.css", "common.js", "console.html", "console.js",
                 "console.css", "i18n/en.json", "vendor/mqtt.min.js", "vendor/mqtt.LICENSE.md", "vendor/README.md"):
        assert (static / name).is_file(), name
    assert "MIT License" in (static / "vendor/mqtt.LICENSE.md").read_text()
    for name in ("index.html", "app.js", "style.css", "fonts.css", "common.js", "console.html", "console.js",
                 "console.css"):
        text = (static / name).read_text()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), f"{name} loads something remote"
        assert "@import" not in text and "url(http" not in text
    html = (static / "index.html").read_text()
    assert 'src="vendor/mqtt.min.js"' in html and 'src="app.js"' in html and 'href="style.css"' in html
    assert "protocolVersion: 4" in (static / "app.js").read_text()


def test_display_config_for_the_embedded_broker():
    cfg = web.display_config(config(embedded_ws_port=9101))
    assert cfg == {
        "schema": 1,
        "table_id": "t7",
        "prefix": "baccarat/t7",
        "decks": 6,
        "broker": {"url": "ws://127.0.0.1:9101", "protocol_version": 4},
        "limits": {
            "punto": {"min": "10", "max": "10000", "table_max": "100000"},
            "banco": {"min": "10", "max": "10000", "table_max": "100000"},
            "tie": {"min": "5", "max": "1000", "table_max": "10000"},
        },
        "seats": 7,
        "profile": "dealer",
        "lang": "en",
    }
    assert web.display_config(config())["broker"]["url"] is None   # no websockets listener configured


@pytest.mark.parametrize(("mqtt", "url"), [
    ({"host": "mqtt.casino.lan"}, "ws://mqtt.casino.lan:9001"),
    ({"host": "mqtt.casino.lan", "tls_ca": "/etc/ca.pem"}, "wss://mqtt.casino.lan:9001"),
    ({"host": "fd00::5"}, "ws://[fd00::5]:9001"),
])
def test_display_config_for_an_external_broker(mqtt, url):
    assert web.display_config(config(**mqtt))["broker"]["url"] == url
    assert web.display_config(config(**mqtt), ws_url="wss://display.example:443/mqtt")["broker"]["url"] == \
        "wss://display.example:443/mqtt"


def test_display_config_carries_the_prefix_and_limits_but_never_credentials():
    limits = LimitsConfig.model_validate({"banco": {"min": "25", "max": "5000.50"}, "tie": {"max": "500"}})
    c = Config(table=TableConfig(id="t9", limits=limits),
               mqtt=MqttConfig(host="broker", prefix="casino1/baccarat/t9/", username="table", password="s3cret"))
    cfg = web.display_config(c)
    assert cfg["prefix"] == "casino1/baccarat/t9"
    assert cfg["limits"]["banco"] == {"min": "25", "max": "5000.50", "table_max": "100000"}
    assert cfg["limits"]["tie"]["max"] == "500"
    text = json.dumps(cfg)
    assert "s3cret" not in text and "username" not in text and "password" not in text


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str):
    """(status, headers, body) of a GET, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=5) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_mount_serves_the_page_and_its_config():
    current = {"cfg": config(embedded_ws_port=9101)}
    server = DisplayServer(lambda: current["cfg"]).start()      # web.mount() on a bare FastAPI app
    base = f"http://127.0.0.1:{server.port}"
    try:
        status, headers, _ = get(base + "/display")
        assert status in (307, 308) and headers["location"].endswith("/display/")
        status, headers, body = get(base + "/display/")
        assert status == 200 and "text/html" in headers["content-type"] and b"PUNTO" in body
        for path, kind in (("/display/app.js", "javascript"), ("/display/style.css", "text/css"),
                           ("/display/vendor/mqtt.min.js", "javascript")):
            status, headers, _ = get(base + path)
            assert status == 200 and kind in headers["content-type"], path
        status, headers, body = get(base + "/display/config.json")
        assert status == 200 and headers["cache-control"] == "no-store"
        assert json.loads(body)["broker"]["url"] == "ws://127.0.0.1:9101"
        status, headers, body = get(base + "/console")
        assert status in (307, 308) and headers["location"].endswith("/console/")
        status, headers, body = get(base + "/console/")
        assert status == 200 and "text/html" in headers["content-type"] and b'id="picker"' in body
        for path, kind in (("/console/console.js", "javascript"), ("/console/fonts.css", "text/css"),
                           ("/console/i18n/ru.json", "json"), ("/console/vendor/inter-cyrillic-wght-normal.woff2", "font")):
            status, headers, _ = get(base + path)
            assert status == 200 and kind in headers["content-type"], (path, headers["content-type"])
        assert json.loads(get(base + "/console/config.json")[2])["seats"] == 7
        current["cfg"] = config(host="mqtt.lan")      # a reloaded configuration shows at the next load
        assert json.loads(get(base + "/display/config.json")[2])["broker"]["url"] == "ws://mqtt.lan:9001"
        assert get(base + "/display/nope.js")[0] == 404
    finally:
        server.stop()
