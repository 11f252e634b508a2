"""The analyses: identity-derived streams, designs, the bootstrap engine, one descriptor per analysis, summaries,
the privacy ledger, figures and the start-up checks."""
