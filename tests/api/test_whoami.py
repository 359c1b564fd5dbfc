"""GET /auth/whoami over real HTTP: the console learns its user and role from its token."""

from __future__ import annotations


def test_whoami_names_the_tokens_user_and_role(stack):
    for role in ("dealer", "supervisor", "technician"):
        r = stack.get("/auth/whoami", role)
        assert r.status_code == 200, r.text
        assert r.json() == {"user": f"{role}-1", "role": role}


def test_whoami_without_a_known_token_is_401(stack):
    r = stack.get("/auth/whoami")
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"]["code"] == "unauthorized"
    r = stack.http.get("/auth/whoami", headers={"Authorization": "Bearer not-a-token"})
    assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
    assert stack.get("/openapi.json").json()["paths"]["/auth/whoami"]["get"]["responses"].keys() >= {"200", "401"}
