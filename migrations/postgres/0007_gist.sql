-- What a list shows of a proposal's payload and preview. See migrations/0016_gist.sql.
ALTER TABLE proposals ADD COLUMN gist TEXT;
