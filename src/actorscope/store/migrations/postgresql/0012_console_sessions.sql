-- Console sessions live on the server: the cookie holds a random token and the row its
-- SHA-256 (hex), so signing out, expiry and the key's revocation end a session at once in
-- every process that shares the database. A row is deleted when its session ends. Same table
-- as the SQLite dialect.
CREATE TABLE console_sessions (
    id          TEXT PRIMARY KEY CHECK (length(id) = 64),
    key_id      TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);

CREATE INDEX console_sessions_key ON console_sessions (key_id);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
