"""Alembic environment: runs on the engine synelo hands over (see store.engine.migrate)."""

from alembic import context

from synelo.store.tables import metadata

config = context.config
engine = config.attributes["engine"]

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
