-- Permission grants per tenant and agent, and the audit trail of decisions and grant changes.
-- `scope` is where a grant applies (exact, '*', or a prefix ending in ':*'); `user_id` is the
-- sender (actor) it applies to, or '*'.
CREATE TABLE config_permissions (
    id           INTEGER PRIMARY KEY,
    tenant_id    TEXT NOT NULL CHECK (length(tenant_id) = 36),
    agent_id     TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    scope        TEXT NOT NULL CHECK (length(scope) > 0),
    config_type  TEXT NOT NULL
                 CHECK (config_type IN ('file_writer', 'cron', 'heartbeat', 'context_files', '*')),
    user_id      TEXT NOT NULL CHECK (length(user_id) > 0),
    permission   TEXT NOT NULL CHECK (permission IN ('allow', 'deny')),
    granted_by   TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (tenant_id, agent_id, scope, config_type, user_id)
);

-- The check's lookup (agent, candidate scopes, types, senders) and the agent delete cascade.
CREATE INDEX config_permissions_lookup
    ON config_permissions (agent_id, scope, config_type, user_id);

-- No foreign keys: the trail outlives the agents and grants it mentions.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at   TEXT NOT NULL,
    tenant_id    TEXT,
    agent_id     TEXT,
    actor_id     TEXT NOT NULL DEFAULT '',
    user_id      TEXT NOT NULL DEFAULT '',
    config_type  TEXT NOT NULL DEFAULT '',
    action       TEXT NOT NULL CHECK (length(action) > 0),
    reason       TEXT NOT NULL DEFAULT '',
    detail       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);

CREATE INDEX audit_log_agent ON audit_log (agent_id, id);
CREATE INDEX audit_log_actor ON audit_log (actor_id, id);
