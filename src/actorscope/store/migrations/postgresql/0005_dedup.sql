-- Updates already claimed by a worker, so a redelivered Telegram update or Discord event is
-- processed once across every worker sharing this database (channels/shared_dedup.py).
-- seen_at is ISO 8601 UTC text like every other timestamp in this schema (the same values,
-- parameters and ordering on both dialects); the index lets the TTL cleanup delete the oldest
-- rows in bounded batches.
CREATE TABLE processed_updates (
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    seen_at     TEXT NOT NULL,
    PRIMARY KEY (channel, chat_id, message_id)
);

CREATE INDEX processed_updates_seen_at ON processed_updates (seen_at);
