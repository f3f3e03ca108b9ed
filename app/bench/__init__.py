"""Benchmarks, outside the product: nothing in app/ imports this package, and it may
import any of app/ (it drives the service as a user would, and times its parts).

- `python -m app.bench` (`make bench`, run.py): ingest throughput and retrieval latency
  on the bench corpus, with the hand-written SQL reference (reference.py), the learned
  reranker's cost (rerank.py), the ingest reference (ingest.py), copies at scale
  (scale.py) and the authority refresh (authority.py) in the same run;
- `python -m app.bench.load` (`make bench-load`, load.py): the HTTP service under
  concurrent load, with the database's part alone (ceiling.py) and CPU per party (cpu.py);
- `python -m app.bench.lexical`: BM25 alone at scale;
- engines.py: Tantivy, bm25s and LanceDB timed beside ours by both of the above, from
  the optional `bench` extra (imported lazily; skipped in one line without it);
- `python -m app.bench.authority`: the citation-authority refresh alone.

stats.py holds what they all report of their timings."""
