-- A covering index for the permission check: it holds every column the check reads
-- (permission, and tenant_id when a tenant is given), so a lookup reads no table row.
-- It replaces config_permissions_lookup, whose columns are its prefix (the holders query and
-- the agent delete cascade use it as they used that one).
CREATE INDEX config_permissions_check
    ON config_permissions (agent_id, scope, config_type, sender_id, permission, tenant_id);

DROP INDEX config_permissions_lookup;
