"""The service process, above every door it serves: create_app (app.py) builds the
Litestar application that mounts the HTTP API (app.api) and the MCP door (app.mcp, at
/mcp through mcp_http.py), with the services they share (app.operations.build) and the
background workers (nudges, model generations). `contexts serve` runs it under uvicorn
(app.api.server); `contexts mcp` builds the same services for stdio."""
