"""Database access: the embedded server, migrations, and per-request connections."""
