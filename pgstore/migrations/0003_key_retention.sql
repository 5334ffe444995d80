-- Key retention: a key is forgotten once its retention has passed. The Store
-- now dates each key with its own clock (created_at keeps the default now()
-- for the rows written before), and prunes the oldest keys through this
-- index, a few at a time.
CREATE INDEX {{.KeysTimeIndex}} ON {{.Keys}} (created_at);

-- Keyed creates now go in batches, and the foreign key from a key to its pet
-- cost each key a check, a row lock on the new pet and a WAL record of it.
-- Add writes a key in the same statement as its pet, and pets are never
-- deleted, so the check can never fail: drop it.
DO $$
DECLARE c name;
BEGIN
    SELECT conname INTO c FROM pg_constraint WHERE conrelid = {{literal .Keys}}::regclass AND contype = 'f';
    IF c IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', {{literal .Keys}}::regclass, c);
    END IF;
END
$$;
