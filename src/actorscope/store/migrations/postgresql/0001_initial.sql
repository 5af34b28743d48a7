-- Tenants, agents and teams. Ids are UUID strings; agent_key is unique per tenant among
-- live (not soft-deleted) agents only, so a key can be reused after a delete.
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY CHECK (length(id) = 36),
    slug        TEXT NOT NULL UNIQUE CHECK (length(slug) > 0),
    name        TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);

CREATE TABLE agents (
    id            TEXT PRIMARY KEY CHECK (length(id) = 36),
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    agent_key     TEXT NOT NULL CHECK (length(agent_key) > 0),
    display_name  TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    deleted_at    TEXT
);

CREATE UNIQUE INDEX agents_live_key ON agents (tenant_id, agent_key) WHERE deleted_at IS NULL;
CREATE INDEX agents_tenant ON agents (tenant_id);

CREATE TABLE teams (
    id          TEXT PRIMARY KEY CHECK (length(id) = 36),
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);

CREATE TABLE team_members (
    team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    role        TEXT NOT NULL DEFAULT 'member',
    added_at    TEXT NOT NULL,
    PRIMARY KEY (team_id, agent_id)
);

CREATE INDEX team_members_agent ON team_members (agent_id);
