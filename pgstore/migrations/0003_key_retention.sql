-- Key retention: a key is forgotten once its retention has passed. The Store
-- now dates each key with its own clock (created_at keeps the default now()
-- for the rows written before), and prunes the oldest keys through this
-- index, a few at a time.
CREATE INDEX {{.KeysTimeIndex}} ON {{.Keys}} (created_at);
