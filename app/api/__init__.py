"""HTTP API (Litestar): thin controllers that parse a request, call one operation of
app.operations and render its answer; problem details, OpenAPI, metrics, throttling,
the request log and the uvicorn server are the HTTP door's own."""
