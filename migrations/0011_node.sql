-- The node column of the team store's tables, so that both databases answer the same statements
-- (`crates/store/src/sql.rs`). A store of one's own has no nodes: every row's node is '' here,
-- read back as "no node".
ALTER TABLE proposals ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_log ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE credentials ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE rules ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE rule_log ADD COLUMN node TEXT NOT NULL DEFAULT '';
