"""Persistence: SQLAlchemy Core tables, the engine, Alembic migrations and repository code."""
