-- A counter that every grant change (and every agent rename, soft delete or delete) moves on,
-- so a process can notice changes committed by another process sharing the file and drop its
-- cached permission decisions. Kept by triggers: no writer can forget to bump it.
CREATE TABLE grant_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  INTEGER NOT NULL
);

INSERT INTO grant_epoch (id, epoch) VALUES (1, 0);

CREATE TRIGGER grant_epoch_on_grant_insert AFTER INSERT ON config_permissions
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_grant_update AFTER UPDATE ON config_permissions
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_grant_delete AFTER DELETE ON config_permissions
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_agent_update AFTER UPDATE OF agent_key, deleted_at ON agents
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_agent_delete AFTER DELETE ON agents
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
