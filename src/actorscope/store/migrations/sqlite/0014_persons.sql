-- Persons and their linked accounts (docs/design.md, "Persons and links"). A person is a
-- tenant-scoped UUID owning channel accounts (`telegram:42`, `discord:1234`, `http:alice`); an
-- account belongs to at most one person of its tenant (the primary key). A link is made by an
-- operator or proven by the person with a link code: `link_codes` keeps each code's SHA-256
-- (hex), never the code, with its account, lifetime and when it was used or burnt.
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

-- A link or unlink moves the grant epoch like a grant change: every process's cached
-- decisions (which may name a person) are dropped within the freshness bound.
CREATE TRIGGER grant_epoch_on_link_insert AFTER INSERT ON person_accounts
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_link_update AFTER UPDATE ON person_accounts
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER grant_epoch_on_link_delete AFTER DELETE ON person_accounts
BEGIN
    UPDATE grant_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
