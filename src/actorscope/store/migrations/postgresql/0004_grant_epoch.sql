-- A counter that every grant change (and every agent rename, soft delete or delete) moves on,
-- kept by triggers as in the SQLite dialect. On PostgreSQL the same triggers also NOTIFY
-- channel `actorscope_grants` with the agent's UUID: every worker LISTENing there drops that
-- agent's cached permission decisions when the change commits (NOTIFY is transactional).
CREATE TABLE grant_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  BIGINT NOT NULL
);

INSERT INTO grant_epoch (id, epoch) VALUES (1, 0);

CREATE FUNCTION grant_epoch_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
    IF TG_TABLE_NAME = 'agents' THEN
        PERFORM pg_notify('actorscope_grants', OLD.id);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('actorscope_grants', OLD.agent_id);
    ELSE
        PERFORM pg_notify('actorscope_grants', NEW.agent_id);
        IF TG_OP = 'UPDATE' AND OLD.agent_id IS DISTINCT FROM NEW.agent_id THEN
            PERFORM pg_notify('actorscope_grants', OLD.agent_id);
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER grant_epoch_on_grant_insert AFTER INSERT ON config_permissions
    FOR EACH ROW EXECUTE FUNCTION grant_epoch_bump();

CREATE TRIGGER grant_epoch_on_grant_update AFTER UPDATE ON config_permissions
    FOR EACH ROW EXECUTE FUNCTION grant_epoch_bump();

CREATE TRIGGER grant_epoch_on_grant_delete AFTER DELETE ON config_permissions
    FOR EACH ROW EXECUTE FUNCTION grant_epoch_bump();

CREATE TRIGGER grant_epoch_on_agent_update AFTER UPDATE OF agent_key, deleted_at ON agents
    FOR EACH ROW EXECUTE FUNCTION grant_epoch_bump();

CREATE TRIGGER grant_epoch_on_agent_delete AFTER DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION grant_epoch_bump();
