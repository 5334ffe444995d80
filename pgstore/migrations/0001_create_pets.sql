-- Pets, with IDs from an identity column. CACHE 1 (the default, spelled out)
-- hands out IDs one at a time in the order sessions ask for them, which Add
-- relies on to keep ID order and commit order the same.
CREATE TABLE {{.Table}} (
    id          bigint GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY,
    name        text   NOT NULL,
    category_id bigint NOT NULL,
    status      text   NULL
        CONSTRAINT status_valid CHECK (status IN ('available', 'pending', 'sold'))
);

-- Filtered listing: WHERE status = $s AND id > $after ORDER BY id LIMIT $n is
-- one range of this index. Unfiltered listing uses the primary key.
CREATE INDEX {{.StatusIndex}} ON {{.Table}} (status, id);
