-- A covering index for the permission check: it holds every column the check reads
-- (permission, and tenant_id when a tenant is given), so a lookup can be an index-only scan.
-- It replaces config_permissions_lookup, whose key is its key (the holders query and the
-- agent delete cascade use it as they used that one). Same index as the SQLite dialect,
-- the two read-only columns as INCLUDE (they are never searched on).
DROP INDEX config_permissions_lookup;

CREATE INDEX config_permissions_check
    ON config_permissions (agent_id, scope, config_type, sender_id)
    INCLUDE (permission, tenant_id);
