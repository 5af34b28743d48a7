-- A claim is a lease until its turn is over (channels/_shared_dedup.py): `owner` is the
-- claiming process, `done_at` when its turn finished (NULL while it runs). A claim not done
-- whose `seen_at` (renewed while the turn runs) is older than the lease belongs to a worker
-- that died: a redelivery may take it over. Rows claimed before leases count as done.
ALTER TABLE processed_updates ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE processed_updates ADD COLUMN done_at TEXT;
UPDATE processed_updates SET done_at = seen_at;
