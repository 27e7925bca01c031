"""Adapters that make Assent the approver of an agent framework's tool calls: one module per
framework, each importing its framework only when used."""
