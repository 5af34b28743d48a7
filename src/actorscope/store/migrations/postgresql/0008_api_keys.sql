-- HTTP API keys. A key is shown once: `as_<prefix>_<secret>`; `prefix` is its public,
-- indexed id and `secret_hash` the SHA-256 of the secret (hex), compared in constant time.
-- `user_id` is the HTTP scope the key acts as; `agent_id`, when set, is the one agent it
-- may use. A revoked key keeps its row (revoked_at) for the record. Same table as the
-- SQLite dialect.
CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY CHECK (length(id) = 36),
    prefix        TEXT NOT NULL UNIQUE CHECK (length(prefix) > 0),
    secret_hash   TEXT NOT NULL CHECK (length(secret_hash) = 64),
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    agent_id      TEXT REFERENCES agents (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL CHECK (length(user_id) > 0),
    role          TEXT NOT NULL
                  CHECK (role IN ('owner', 'admin', 'operator', 'viewer', 'member')),
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
