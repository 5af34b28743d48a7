-- Retention prunes the audit trail by age ([audit] keep in bot.toml, `actorscope audit prune`),
-- oldest first in bounded batches; the `since` filter of listings reads the same order.
CREATE INDEX audit_log_created_at ON audit_log (created_at, id);
