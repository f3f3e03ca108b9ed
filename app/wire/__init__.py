"""The wire format: request and response bodies (msgspec structs, nothing else), one
definition for whoever speaks it. bodies.py holds the HTTP API's, retrieve.py a
retrieval's (which the retriever itself takes and answers). The server (app.api), the
MCP door (app.mcp), the Python client (app.client), the CLI and the retrieval lane import
them; they import nothing of the service, so the client and the CLI's `--url` mode load
neither Litestar, psycopg nor a model."""
