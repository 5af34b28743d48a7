-- Cron jobs are found by their storage key (tools/storage.py storage_scope), like memory rows
-- and workspace files: a direct scope's key names its channel, so HTTP user "4242" and
-- Telegram user 4242 (both scope "4242") never see each other's jobs. `scope` keeps the run's
-- real scope (user_id) for whatever runs the job. A job's name is unique per (agent, key).
-- Rows written before keep their scope as their key: a Telegram private chat's key is its
-- bare id, so its jobs stay its own (memory keeps old rows readable the same way).
-- SQLite cannot drop a table constraint, so the table is rebuilt (nothing references it).
CREATE TABLE cron_jobs_keyed (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id    TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    scope       TEXT NOT NULL CHECK (length(scope) > 0),
    name        TEXT NOT NULL CHECK (length(name) > 0),
    schedule    TEXT NOT NULL CHECK (length(schedule) > 0),
    message     TEXT NOT NULL DEFAULT '',
    created_by  TEXT NOT NULL CHECK (length(created_by) > 0),
    created_at  TEXT NOT NULL,
    storage_key TEXT NOT NULL CHECK (length(storage_key) > 0),
    UNIQUE (agent_id, storage_key, name)
);

INSERT INTO cron_jobs_keyed
    (id, agent_id, scope, name, schedule, message, created_by, created_at, storage_key)
SELECT id, agent_id, scope, name, schedule, message, created_by, created_at, scope
FROM cron_jobs;

DROP TABLE cron_jobs;

ALTER TABLE cron_jobs_keyed RENAME TO cron_jobs;
