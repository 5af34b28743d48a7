-- A grant names its actor `sender_id`, as every other actor in actorscope; `user_id` means the
-- scope everywhere (docs/design.md). SQLite >= 3.25 renames the column in the
-- table's CHECK and UNIQUE constraints and in config_permissions_lookup too; no trigger
-- reads the column (the grant epoch triggers only bump a counter).
ALTER TABLE config_permissions RENAME COLUMN user_id TO sender_id;
