"""The operations every door calls: HTTP (app/api/), MCP (app/mcp.py) and the command
line (app/cli/). Each is one transaction bound to an API key's principal
(`async X(services, token, ...)`), or the SQL of it on a connection the caller holds
(`X_on(conn, ...)`, what the CLI runs on the database directly); `Services` holds what
they run on, and `errors` maps what they raise to the status every door reports.

Nothing here knows a door: no Litestar, no MCP SDK (tests/test_layers.py checks that
importing this package loads neither)."""
