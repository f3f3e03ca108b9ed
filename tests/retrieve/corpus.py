"""A small engineering corpus: runbooks, ADRs, policies and code."""

DOCS = {
    "runbooks/storage.md": "# Storage runbook\n\nWhen the storage volume reaches capacity, rotate the journal and "
    "reboot the daemon. Page the owning team if it happens twice in one week.\n",
    "runbooks/certificates.md": "# Certificates\n\nTLS certificates renew automatically thirty days before expiry. "
    "If renewal fails, run certbot manually and reload nginx.\n",
    "adr/0007-postgres.md": "# ADR 7: one database\n\nWe keep documents, vectors and lexical statistics in PostgreSQL "
    "so that a single transaction covers ingestion and retrieval.\n",
    "policies/secrets.md": "# Secrets policy\n\nNever commit API keys. Rotate credentials every ninety days and store "
    "them in the vault, not in environment files.\n",
    "docs/onboarding.md": "# Onboarding\n\nNew engineers pair with a buddy for two weeks and ship a small change "
    "on their first day.\n",
    "docs/frontend.md": "# Frontend guidelines\n\nComponents must be accessible: every button needs a label, and "
    "colour contrast follows WCAG AA.\n",
}

CODE = {
    "billing/limits.py": (
        "def refund_window_days(plan, invoice_total, currency):\n"
        '    """Days a customer may ask for a refund of an invoice, by plan and amount."""\n'
        "    window = 30 if plan == 'enterprise' else 14\n"
        "    if currency != 'EUR' and invoice_total > 10_000:\n"
        "        window = SessionTimeoutGuard.clamp(window)\n"
        "    return window\n"
    ),
    "billing/invoice.py": (
        "def render_invoice(order):\n    lines = [f'{item.name}: {item.price}' for item in order.items]\n"
        "    return '\\n'.join(lines)\n"
    ),
    "billing/tax.py": "def vat(amount, rate=0.2):\n    return round(amount * rate, 2)\n",
    "auth/timeouts.py": (
        'def idle_timeout_seconds(role):\n    """Sessions of admins time out sooner."""\n'
        "    return 900 if role == 'admin' else 3600\n"
    ),
    "auth/session.py": (
        "def expire_sessions(store, now):\n    for key, session in list(store.items()):\n"
        "        if session.expires_at <= now:\n            del store[key]\n"
    ),
    "search/ranking.py": (
        "def reciprocal_rank_fusion(rankings, k=60):\n    scores = {}\n    for ranking in rankings:\n"
        "        for rank, item in enumerate(ranking, start=1):\n"
        "            scores[item] = scores.get(item, 0) + 1 / (k + rank)\n    return scores\n"
    ),
}
