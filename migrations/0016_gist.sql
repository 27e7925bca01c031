-- What a list shows of a proposal's payload and preview (assent_core::light::Gist: strings cut,
-- the payload's size and hash), written when it is filed, so that a list reads no whole payload.
-- NULL for proposals filed before (and for pruned ones): a list cuts those from the payload.
ALTER TABLE proposals ADD COLUMN gist TEXT;
