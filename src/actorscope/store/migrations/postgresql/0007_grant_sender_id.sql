-- A grant names its actor `sender_id`, as every other actor in actorscope; `user_id` means the
-- scope everywhere (docs/design.md). PostgreSQL follows the rename in the
-- CHECK and UNIQUE constraints and in config_permissions_lookup; grant_epoch_bump() reads
-- only agent_id, so the NOTIFY triggers are untouched. The two constraints keep the names
-- generated from the old column, so they are renamed to what a table created with
-- `sender_id` would call them.
ALTER TABLE config_permissions RENAME COLUMN user_id TO sender_id;

ALTER TABLE config_permissions
    RENAME CONSTRAINT config_permissions_user_id_check TO config_permissions_sender_id_check;

ALTER TABLE config_permissions
    RENAME CONSTRAINT config_permissions_tenant_id_agent_id_scope_config_type_use_key
    TO config_permissions_tenant_id_agent_id_scope_config_type_sen_key;
