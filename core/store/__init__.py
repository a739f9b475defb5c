"""The database: models, sessions and migrations (Alembic), and the repository functions
that read and write reports, versions, the evidence pool and snapshots."""
