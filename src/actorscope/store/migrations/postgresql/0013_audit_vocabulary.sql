-- One vocabulary (docs/design.md, "Vocabulary"), as in config_permissions and Decision:
-- `sender_id` is the actor of a check (and whom a grant, writer or key change is for),
-- `actor` who made a change ('' for a check: nothing changed), `scope` where, and a grant
-- change's allow or deny is its `permission`, no longer its `reason`. Same table and rows as
-- the SQLite dialect; PostgreSQL follows the renames in the audit_log_actor index.
ALTER TABLE audit_log RENAME COLUMN actor_id TO actor;
ALTER TABLE audit_log RENAME COLUMN user_id TO scope;
ALTER TABLE audit_log ADD COLUMN sender_id TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN permission TEXT NOT NULL DEFAULT '';

-- Rows written before kept the sender a check judged in detail.sender_id and put the actor
-- (the sender, else the scope) in actor_id; a grant change's grantee was detail.grantee and its
-- permission the reason; a writer refusal's target detail.target; a key's user the scope.
UPDATE audit_log SET sender_id = COALESCE(detail::json ->> 'sender_id', ''), actor = ''
    WHERE action LIKE 'check.%';
UPDATE audit_log SET sender_id = COALESCE(detail::json ->> 'sender_id', '')
    WHERE action LIKE 'memory.%';
UPDATE audit_log
    SET sender_id = COALESCE(detail::json ->> 'grantee', ''), permission = reason, reason = ''
    WHERE action LIKE 'grant.%';
UPDATE audit_log SET sender_id = COALESCE(detail::json ->> 'target', '')
    WHERE action = 'writer.refused';
UPDATE audit_log SET sender_id = scope, scope = '' WHERE action LIKE 'key.%';

CREATE INDEX audit_log_sender ON audit_log (sender_id, id);
