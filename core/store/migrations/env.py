"""Alembic environment: migrations run on the connection Evergreen hands over."""

from alembic import context
from sqlalchemy import engine_from_config, pool
from sqlmodel import SQLModel

import core.store.models  # noqa: F401 - registers the tables

target_metadata = SQLModel.metadata
config = context.config


def _run(connection) -> None:  # noqa: ANN001
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as conn:
        _run(conn)
