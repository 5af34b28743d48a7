-- Cron jobs are found by their storage key (tools/storage.py storage_scope), like memory rows
-- and workspace files: a direct scope's key names its channel, so HTTP user "4242" and
-- Telegram user 4242 (both scope "4242") never see each other's jobs. `scope` keeps the run's
-- real scope (user_id) for whatever runs the job. A job's name is unique per (agent, key).
-- Rows written before keep their scope as their key: a Telegram private chat's key is its
-- bare id, so its jobs stay its own (memory keeps old rows readable the same way).
ALTER TABLE cron_jobs ADD COLUMN storage_key TEXT;

UPDATE cron_jobs SET storage_key = scope;

ALTER TABLE cron_jobs ALTER COLUMN storage_key SET NOT NULL;

ALTER TABLE cron_jobs
    ADD CONSTRAINT cron_jobs_storage_key_check CHECK (length(storage_key) > 0);

ALTER TABLE cron_jobs DROP CONSTRAINT cron_jobs_agent_id_scope_name_key;

ALTER TABLE cron_jobs
    ADD CONSTRAINT cron_jobs_agent_id_storage_key_name_key UNIQUE (agent_id, storage_key, name);
