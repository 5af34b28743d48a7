-- Storage of the built-in LLM tools: memory entries and cron jobs, per agent (UUID) and scope.
-- `scope` is the user_id of the run (where the row belongs), `created_by` the actor (who made it).

-- `namespace` is the agent_id / agent argument of the tool call, stored byte for byte (it may
-- be __shared__, non-ASCII, or carry surrounding spaces, which are kept).
CREATE TABLE memory_entries (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    namespace   TEXT NOT NULL CHECK (length(namespace) > 0),
    scope       TEXT NOT NULL CHECK (length(scope) > 0),
    text        TEXT NOT NULL CHECK (length(text) > 0),
    pinned      INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_by  TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

-- Every memory read is one (agent, namespace, scope), pinned and recent entries first.
CREATE INDEX memory_entries_lookup
    ON memory_entries (agent_id, namespace, scope, pinned, updated_at);

-- A job belongs to its scope: its name is unique per (agent, scope), and only that scope
-- lists or removes it.
CREATE TABLE cron_jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    scope       TEXT NOT NULL CHECK (length(scope) > 0),
    name        TEXT NOT NULL CHECK (length(name) > 0),
    schedule    TEXT NOT NULL CHECK (length(schedule) > 0),
    message     TEXT NOT NULL DEFAULT '',
    created_by  TEXT NOT NULL CHECK (length(created_by) > 0),
    created_at  TEXT NOT NULL,
    UNIQUE (agent_id, scope, name)
);
