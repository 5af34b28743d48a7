-- A covering index for the permission check: it holds every column the check reads
-- (permission, and tenant_id when a tenant is given), so a lookup can be an index-only scan.
-- It replaces config_permissions_lookup, whose key is its key (the holders query and the
-- agent delete cascade use it as they used that one). Same index as the SQLite dialect,
-- the two read-only columns as INCLUDE (they are never searched on).
CREATE INDEX config_permissions_check
    ON config_permissions (agent_id, scope, config_type, sender_id)
    INCLUDE (permission, tenant_id);

-- The new index is built before the old one is dropped: building takes a lock that blocks
-- writes only, while DROP INDEX locks the table against reads until the migration commits
-- (permission checks of other workers would time out meanwhile).
DROP INDEX config_permissions_lookup;
