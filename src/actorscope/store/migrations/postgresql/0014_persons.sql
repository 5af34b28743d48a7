-- Persons and their linked accounts, as in the SQLite dialect. A link or unlink moves the
-- grant epoch and NOTIFYs `actorscope_grants` with `*` (every agent): a person's links may be
-- in any of its tenant's cached decisions, so every worker drops them all when it commits.
CREATE TABLE persons (
    id          TEXT PRIMARY KEY CHECK (length(id) = 36),
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    created_by  TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);

CREATE INDEX persons_tenant ON persons (tenant_id);

CREATE TABLE person_accounts (
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    account     TEXT NOT NULL CHECK (length(account) > 0),
    person_id   TEXT NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    via         TEXT NOT NULL CHECK (via IN ('code', 'operator')),
    linked_by   TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account)
);

CREATE INDEX person_accounts_person ON person_accounts (person_id);

CREATE TABLE link_codes (
    digest      TEXT PRIMARY KEY CHECK (length(digest) = 64),
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    account     TEXT NOT NULL CHECK (length(account) > 0),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);

CREATE INDEX link_codes_account ON link_codes (tenant_id, account, created_at);

CREATE FUNCTION person_link_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
    PERFORM pg_notify('actorscope_grants', '*');
    RETURN NULL;
END;
$$;

CREATE TRIGGER grant_epoch_on_link_insert AFTER INSERT ON person_accounts
    FOR EACH ROW EXECUTE FUNCTION person_link_bump();

CREATE TRIGGER grant_epoch_on_link_update AFTER UPDATE ON person_accounts
    FOR EACH ROW EXECUTE FUNCTION person_link_bump();

CREATE TRIGGER grant_epoch_on_link_delete AFTER DELETE ON person_accounts
    FOR EACH ROW EXECUTE FUNCTION person_link_bump();
