-- Pets. AUTOINCREMENT keeps the largest ID ever used in sqlite_sequence, so
-- an ID is never handed out twice, even after the pet that held the largest
-- one is gone. Add draws IDs inside its write transaction, and SQLite lets
-- one write transaction run at a time, so ID order is commit order.
CREATE TABLE pets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    category_id INTEGER NOT NULL,
    status      TEXT    NULL CHECK (status IN ('available', 'pending', 'sold'))
);

-- Filtered listing: WHERE status = ? AND id > ? ORDER BY id LIMIT ? is one
-- range of this index. Unfiltered listing uses the primary key.
CREATE INDEX pets_status_id ON pets (status, id);

-- Idempotency keys: each key, in the scope of the caller's principal, names
-- the pet that the first create with it stored. created_at is the store's
-- clock in Unix milliseconds. WITHOUT ROWID: the primary key is the table,
-- so a key is stored once, not in a table and again in its index.
CREATE TABLE pet_keys (
    principal  TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    pet_id     INTEGER NOT NULL REFERENCES pets (id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (principal, key)
) WITHOUT ROWID;

-- Pruning reads the oldest keys first.
CREATE INDEX pet_keys_created_at ON pet_keys (created_at);
