from tests.builders import bearer


def test_whoami_of_the_bootstrap_admin(api, admin_token):
    response = api.http.get("/auth/users/whoami", headers=bearer(admin_token))
    assert response.status_code == 200, response.body
    body = response.json_body
    assert body["userName"] == "admin@example.com"
    assert body["roles"] == ["admin"]
    assert body["tenants"] == ["any"]
    assert body["serviceAccount"] is False
