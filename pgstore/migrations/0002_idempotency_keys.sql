-- Idempotency keys: each key, in the scope of the caller's principal, names
-- the one pet that the first create with it stored. Add writes the key in
-- the same statement, and so the same transaction, as its pet.
CREATE TABLE {{.Keys}} (
    principal  text        NOT NULL,
    key        text        NOT NULL,
    pet_id     bigint      NOT NULL REFERENCES {{.Table}} (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (principal, key)
);
