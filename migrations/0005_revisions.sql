-- Finding the revision of a proposal (`superseded by`) without a scan: only revisions are
-- indexed.
CREATE INDEX proposals_supersedes ON proposals(supersedes) WHERE supersedes IS NOT NULL;
