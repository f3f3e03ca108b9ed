// The trace page (docs/adr/0011): plain DOM, no framework, no build step. Every value
// from the service is written with textContent, never parsed as HTML.
"use strict";

const KEY = "contexts.key";
const $ = (id) => document.getElementById(id);

function show(id, visible = true) {
  $(id).hidden = !visible;
}

function message(text, kind = "error") {
  const box = $("message");
  box.textContent = text;
  box.className = kind;
  box.hidden = !text;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function link(href, text) {
  const a = el("a", text);
  a.href = href;
  return a;
}

function num(value, digits = 4) {
  if (value === undefined) return "";
  if (value === null) return "–";
  return Number.isInteger(value) ? String(value) : Number(value).toFixed(digits);
}

function product(weight, norm) {
  return typeof weight === "number" && typeof norm === "number" ? weight * norm : null;
}

class ProblemError extends Error {
  constructor(status, text) {
    super(text);
    this.status = status;
  }
}

// One call to the service with the key; a problem-details body becomes a readable error.
async function api(path, body) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new ProblemError(401, "enter an API key first");
  const init = { headers: { Authorization: "Bearer " + key, Accept: "application/json" } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    data = null;
  }
  if (!response.ok) {
    const detail = data && (data.detail || data.title);
    let text = response.status + " " + (detail || response.statusText);
    if (data && Array.isArray(data.errors)) {
      text += ": " + data.errors.map((e) => (e.key ? e.key + ": " : "") + (e.message || "")).join("; ");
    }
    throw new ProblemError(response.status, text);
  }
  return data;
}

function failed(error) {
  if (error instanceof ProblemError && error.status === 401) {
    sessionStorage.removeItem(KEY);
    message("The service refused the key (" + error.message + "). Enter a valid API key.");
    askForKey();
  } else {
    message(error instanceof ProblemError ? error.message : "The request failed: " + error.message);
  }
}

function askForKey() {
  ["search-section", "results-section", "trace-section", "fragment-section", "forget-key"].forEach((id) =>
    show(id, false),
  );
  $("who").textContent = "";
  show("key-section");
  $("key-input").focus();
}

let whoami = null;

async function start() {
  if (!sessionStorage.getItem(KEY)) {
    askForKey();
    return;
  }
  try {
    whoami = await api("/whoami");
  } catch (error) {
    failed(error);
    return;
  }
  show("key-section", false);
  show("forget-key");
  $("who").textContent = "as " + whoami.principal_id + " in " + whoami.org_id + (whoami.audit ? " (auditor)" : "");
  const path = location.pathname.replace(/\/+$/, "");
  const trace = path.match(/^\/ui\/traces\/([^/]+)$/);
  const fragment = path.match(/^\/ui\/fragments\/([^/]+)$/);
  try {
    if (trace) {
      await showTrace(decodeURIComponent(trace[1]));
    } else if (fragment) {
      await showFragment(decodeURIComponent(fragment[1]));
    } else {
      show("search-section");
      $("query").focus();
    }
  } catch (error) {
    failed(error);
  }
}

async function search(event) {
  event.preventDefault();
  message("");
  const scope = { org_id: whoami.org_id };
  for (const [field, id] of [["repo_id", "repo"], ["persona_id", "persona"], ["session_id", "session"]]) {
    const value = $(id).value.trim();
    if (value) scope[field] = value;
  }
  const body = { query: $("query").value, scope };
  const budget = $("budget").value.trim();
  if (budget) body.budget_tokens = Number(budget);
  const button = $("search-form").querySelector("button");
  button.disabled = true;
  try {
    const result = await api("/contexts/retrieve", body);
    renderResults(result);
    await showTrace(result.trace_id);
  } catch (error) {
    failed(error);
  } finally {
    button.disabled = false;
  }
}

function renderResults(result) {
  const list = $("results");
  list.replaceChildren();
  $("results-summary").textContent =
    result.fragments.length + " fragments, " + result.tokens_used + " of " + result.budget_tokens + " tokens";
  for (const f of result.fragments) {
    const item = el("li", null, "fragment");
    const head = el("div", null, "head");
    head.append(link("/ui/fragments/" + encodeURIComponent(f.id), "fragment " + f.id), " ");
    head.append(el("span", f.source, "source"), " ");
    head.append(el("span", "score " + num(f.score) + ", relevance " + num(f.relevance) + ", " + f.tokens + " tokens", "scores"));
    item.append(head, el("pre", f.text));
    list.append(item);
  }
  show("results-section");
}

function definition(list, term, value) {
  list.append(el("dt", term), el("dd", value === null || value === undefined ? "–" : value));
}

// What each reranker feature says about a candidate (GET /ui/glossary.json, read once
// from app.retrieve.features): shown on hover over a contribution and, for the features
// a trace names, in the glossary under its tables. The page works without it.
let featureMeanings = null;
async function meanings() {
  if (featureMeanings === null) {
    try {
      const response = await fetch("/ui/glossary.json");
      featureMeanings = response.ok ? (await response.json()).features || {} : {};
    } catch {
      featureMeanings = {};
    }
  }
  return featureMeanings;
}

// The glossary of the features this trace's contributions name, in the reranker's
// column order (the order of the glossary's keys).
function showGlossary(candidates, meaning) {
  const named = new Set();
  for (const c of candidates) {
    for (const name of Object.keys((c.rerank_detail || {}).contributions || {})) named.add(name);
  }
  const list = $("glossary-list");
  list.replaceChildren();
  for (const name of [...Object.keys(meaning).filter((n) => named.has(n)), ...[...named].filter((n) => !(n in meaning))]) {
    list.append(el("dt", name), el("dd", meaning[name] || "not a feature of this version of the reranker"));
  }
  show("glossary", named.size > 0);
}

async function showTrace(traceId) {
  const [trace, meaning] = await Promise.all([api("/traces/" + encodeURIComponent(traceId)), meanings()]);
  const traceLink = $("trace-link");
  traceLink.href = "/ui/traces/" + encodeURIComponent(trace.trace_id);
  traceLink.textContent = trace.trace_id;

  const meta = $("trace-meta");
  meta.replaceChildren();
  const request = trace.request || {};
  const scope = request.scope || {};
  const fusion = (trace.pipeline || {}).fusion || {};
  definition(meta, "query", trace.query);
  definition(meta, "scope", ["org_id", "repo_id", "persona_id", "session_id"]
    .filter((k) => scope[k]).map((k) => k + "=" + scope[k]).join(", "));
  definition(meta, "made by", trace.principal_id + " at " + trace.created_at);
  definition(meta, "budget", request.budget_tokens + " tokens, min_score " + request.min_score +
    ", min_relevance " + request.min_relevance + ", rerank_top " + request.rerank_top +
    (request.top_k ? ", top_k " + request.top_k + (request.top_k > request.rerank_top ? " (the head it ranks)" : "") : ""));
  definition(meta, "fusion", describeFusion(fusion, trace.candidates));
  definition(meta, "reranker", (trace.pipeline.reranker || "none") +
    (trace.pipeline.reranker_version ? " (version " + trace.pipeline.reranker_version + ")" : "") +
    (trace.pipeline.reranker_calibration ? "; " + trace.pipeline.reranker_calibration : ""));
  definition(meta, "score basis", trace.pipeline.score_basis);
  const profile = trace.pipeline.profile || {};
  definition(meta, "blend", (profile.source || "") + " profile, weights " + JSON.stringify(profile.weights || {}) +
    ", half-lives " + JSON.stringify(profile.halflife_override ? {all: profile.halflife_override} : profile.halflife_days || {}));
  definition(meta, "duration", num(trace.duration_ms, 1) + " ms");
  if (trace.redacted && trace.redacted.length) definition(meta, "withheld from you", trace.redacted.join(", "));

  const weights = profile.weights || {};
  const rows = [...trace.candidates].sort((a, b) => {
    const ra = a.final_rank ?? Infinity;
    const rb = b.final_rank ?? Infinity;
    return ra !== rb ? ra - rb : (a.fused_rank ?? Infinity) - (b.fused_rank ?? Infinity);
  });
  const returned = rows.filter((c) => c.included);
  const dropped = rows.filter((c) => !c.included);
  renderCandidates($("trace-table"), returned, weights, meaning);
  markRankGaps($("trace-table"), returned, dropped);
  renderCandidates($("dropped-table"), dropped, weights, meaning);
  showGlossary(rows, meaning);
  $("returned-heading").textContent = returned.length
    ? "Returned, in final order (" + returned.length + ")"
    : "Nothing returned";
  showLeftOut(dropped, trace.left_out || []);
  show("trace-section");
}

// Fusion in words: the method, the query's shape, and each namespace's lexical and dense
// weights as its candidates carry them (SQL makes a namespace's two weights sum to 1),
// with the factor a natural-language question put on a namespace's lexical side.
function describeFusion(fusion, candidates) {
  if (fusion.method === "rrf") return "rrf, k " + fusion.k;
  if (fusion.method !== "weighted") return JSON.stringify(fusion);
  const byNamespace = {};
  for (const c of candidates) {
    if (c.namespace && c.lexical_weight != null && !(c.namespace in byNamespace)) byNamespace[c.namespace] = c;
  }
  const factors = fusion.lexical_weight || {};
  const parts = Object.keys(byNamespace).sort().map((ns) => {
    const c = byNamespace[ns];
    const text = ns + ": lexical " + num(c.lexical_weight, 3) + ", dense " + num(c.dense_weight, 3);
    return factors[ns] !== undefined && factors[ns] !== 1 ? text + " (lexical x " + factors[ns] + ")" : text;
  });
  const shape = fusion.query_shape || "?";
  return ["weighted, " + (/^[aeiou]/.test(shape) ? "an " : "a ") + shape + " query", ...parts,
    ...(fusion.calibration ? ["each side: " + fusion.calibration] : [])].join("; ");
}

// The blend's terms of a ranked candidate, each times its weight in the profile: what
// its final score is made of, the largest first (zero terms left out).
function weightedTerms(terms, weights) {
  return Object.entries(terms || {})
    .map(([name, value]) => [name, (typeof weights[name] === "number" ? weights[name] : 0) * (value || 0)])
    .filter(([, value]) => value > 0)
    .sort((a, b) => b[1] - a[1]);
}

function signed(value) {
  const text = num(value, 3);
  return value > 0 ? "+" + text : text;
}

// A long source shown by its end (the file and anchor tell rows apart; a repository's
// or a venv's leading folders do not): "…/" and the last two folders' worth of path,
// whole in the cell's title.
function shortSource(source) {
  if (source.length <= 48) return source;
  const hash = source.indexOf("#");
  const path = hash < 0 ? source : source.slice(0, hash);
  const rest = hash < 0 ? "" : source.slice(hash);
  const parts = path.split("/");
  return parts.length > 2 ? "…/" + parts.slice(-2).join("/") + rest : source;
}

// One row per candidate: its source (sticky: it stays while the row scrolls sideways),
// what decided its place (final score and its largest terms, rerank score and the
// reranker's largest contributions), then how fusion ranked it.
function renderCandidates(table, candidates, weights, meaning = {}) {
  const body = table.querySelector("tbody");
  body.replaceChildren();
  for (const c of candidates) {
    const row = el("tr", null, c.included ? "included" : "dropped");
    const cell = (value, className) => {
      const td = el("td", value, className);
      row.append(td);
      return td;
    };
    const source = c.source === undefined || c.source === null ? "" : c.source + (c.doc_version != null ? " @v" + c.doc_version : "");
    cell(shortSource(source), "source").title = source;
    cell(num(c.final_rank), "rank");
    const fragmentCell = cell(null);
    if (c.redacted || c.fragment_id === undefined) {
      fragmentCell.textContent = "hidden";
      fragmentCell.title = "you may not read this fragment now: only its ranks and scores are shown";
    } else {
      fragmentCell.append(link("/ui/fragments/" + encodeURIComponent(c.fragment_id), String(c.fragment_id)));
    }
    const finalCell = cell(num(c.final_score), "final");
    if (c.twin_of_rank != null) {
      // A sync or async twin of a fragment ranked above: its score was scaled down.
      finalCell.append(el("div", "twin of #" + c.twin_of_rank, "twin"));
      finalCell.title = "the same words as #" + c.twin_of_rank + ", in its other (sync or async) form or word for word: final score x 0.85";
    }
    const termsCell = cell(null, "terms");
    for (const [name, value] of weightedTerms(c.terms, weights).slice(0, 3)) {
      termsCell.append(el("div", name + " " + num(value, 3)));
    }
    const terms = c.terms || {};
    const rerankCell = cell(num(terms.rerank ?? c.rerank_score), "rerank");
    if (terms.rerank != null && c.rerank_score != null && Math.abs(terms.rerank - c.rerank_score) > 1e-9) {
      // The relevance term mixes the reranker's probability with the fused order (the
      // trace's score basis): show the probability it started from.
      rerankCell.append(el("div", "p " + num(c.rerank_score, 3), "raw"));
    }
    const contributionsCell = cell(null, "contributions");
    if (c.rerank_detail) {
      // The learned reranker's view of its best candidates: the largest contributions
      // to its raw score, shown; every feature's value on hover (a trace of an older
      // version may lack either).
      const detail = c.rerank_detail;
      const contributions = Object.entries(detail.contributions || {}).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
      for (const [name, value] of contributions) {
        const line = el("div", name + " " + signed(value));
        if (meaning[name]) line.title = name + ": " + meaning[name];
        contributionsCell.append(line);
      }
      if (detail.raw !== undefined) contributionsCell.append(el("div", "raw " + num(detail.raw, 3), "raw"));
      rerankCell.title = contributionsCell.title = "raw " + detail.raw + " -> probability " + c.rerank_score +
        "; contributions: " +
        contributions.map(([k, v]) => k + " " + v).join(", ") +
        "\nfeatures: " + Object.entries(detail.features || {}).map(([k, v]) => k + "=" + v).join(", ");
      rerankCell.classList.add("explained");
    }
    cell(c.included ? "included" : c.reason, "fate");
    cell(num(c.relevance));
    cell(num(c.tokens));
    cell(num(c.fused_rank));
    cell(num(c.fused_score));
    cell(num(c.lexical_rank));
    cell(num(c.lexical_score));
    cell(num(c.lexical_norm));
    cell(num(product(c.lexical_weight, c.lexical_norm)));
    cell(num(c.dense_rank));
    cell(num(c.dense_similarity));
    cell(num(c.dense_norm));
    cell(num(product(c.dense_weight, c.dense_norm)));
    cell(num(terms.freshness ?? c.freshness));
    cell(num(terms.authority));
    cell(num(terms.pinned));
    cell(num(terms.persona));
    body.append(row);
  }
}

// Everything the retrieval saw and did not return, in a section of its own: candidates
// the ranking or the composition dropped (their fate says why), and what validity
// windows kept out (docs/adr/0016): "why didn't this document come back?"
// The final order ranks every candidate; composition then leaves some out (over the
// budget, below a floor). Where returned ranks skip (1, 2, 4), a row says which ranks
// are missing and why, so the order reads without hunting through the table below.
function markRankGaps(table, returned, dropped) {
  const reasonOf = {};
  for (const c of dropped) if (c.final_rank != null) reasonOf[c.final_rank] = c.reason;
  const rows = [...table.querySelectorAll("tbody tr")];
  const columns = table.querySelectorAll("thead th").length || 1;
  let previous = 0;
  returned.forEach((c, i) => {
    if (c.final_rank == null) return;
    const missing = [];
    for (let rank = previous + 1; rank < c.final_rank; rank++) missing.push(rank);
    previous = c.final_rank;
    if (!missing.length) return;
    const byReason = {};
    for (const rank of missing) (byReason[reasonOf[rank] || "left out"] ||= []).push(rank);
    const runs = (ranks) => {  // 7, 8, 9, 12 -> "#7 to #9, #12"
      const out = [];
      for (let i = 0; i < ranks.length; ) {
        let j = i;
        while (j + 1 < ranks.length && ranks[j + 1] === ranks[j] + 1) j++;
        out.push(j - i >= 2 ? "#" + ranks[i] + " to #" + ranks[j] : ranks.slice(i, j + 1).map((r) => "#" + r).join(", "));
        i = j + 1;
      }
      return out.join(", ");
    };
    const text = Object.entries(byReason)
      .map(([reason, ranks]) => runs(ranks) + " " + reason.replaceAll("_", " "))
      .join("; ");
    const gap = el("tr", null, "gap");
    const td = el("td", text + " (left out: listed below)");
    td.colSpan = columns;
    gap.append(td);
    rows[i].before(gap);
  });
}

function showLeftOut(dropped, leftOut) {
  const reasons = {};
  for (const x of [...dropped, ...leftOut]) reasons[x.reason] = (reasons[x.reason] || 0) + 1;
  $("left-out-summary").textContent = Object.entries(reasons)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => count + " " + reason.replaceAll("_", " "))
    .join(", ");
  show("dropped", dropped.length > 0);
  const body = $("left-out-table").querySelector("tbody");
  body.replaceChildren();
  for (const x of leftOut) {
    const row = el("tr", null, "dropped");
    const cell = (value, className) => {
      const td = el("td", value, className);
      row.append(td);
      return td;
    };
    const source = x.source === undefined || x.source === null ? "" : x.source;
    cell(shortSource(source), "source").title = source;
    const fragmentCell = cell(null);
    if (x.redacted || x.fragment_id === undefined) {
      fragmentCell.textContent = "hidden";
      fragmentCell.title = "you may not read this fragment now: only its ranks and scores are shown";
    } else {
      fragmentCell.append(link("/ui/fragments/" + encodeURIComponent(x.fragment_id), String(x.fragment_id)));
    }
    cell(x.reason + (x.pin_id !== undefined ? " (pin " + x.pin_id + ")" : ""), "fate");
    const by = cell(null, "superseder");
    for (const s of x.superseded_by || []) {
      const item = el("div", s.path, "path");
      if (s.evidence) {
        item.title = s.evidence;
        item.append(el("div", s.evidence, "evidence"));
      }
      by.append(item);
    }
    cell(num(x.lexical_rank));
    cell(num(x.lexical_score));
    cell(num(x.dense_rank));
    cell(num(x.dense_similarity));
    cell(x.valid_until === undefined || x.valid_until === null ? "–" : x.valid_until);
    body.append(row);
  }
  show("invalid", leftOut.length > 0);
  show("left-out", dropped.length + leftOut.length > 0);
}

async function showFragment(fragmentId) {
  const f = await api("/fragments/" + encodeURIComponent(fragmentId));
  $("fragment-id").textContent = String(f.fragment_id);
  const meta = $("fragment-meta");
  meta.replaceChildren();
  definition(meta, "scope", ["org_id", "repo_id", "persona_id", "session_id"]
    .filter((k) => f[k]).map((k) => k + "=" + f[k]).join(", "));
  definition(meta, "kind", f.kind + ", owner " + f.owner);
  definition(meta, "headings", f.heading_path.join(" › "));
  definition(meta, "symbol", f.symbol);
  definition(meta, "document", f.doc_id === null ? null : f.doc_id + " version " + f.doc_version);
  definition(meta, "tokens", f.token_count);
  definition(meta, "chunker", f.chunker_version);
  definition(meta, "embedding model", f.embedding_model);
  definition(meta, "active", String(f.active));
  definition(meta, "updated", f.updated_at);
  const body = $("sources-table").querySelector("tbody");
  body.replaceChildren();
  for (const s of f.sources) {
    const row = el("tr");
    for (const value of [s.path, s.anchor, s.start_line + "–" + s.end_line, s.doc_id, s.version, s.live, s.exact]) {
      row.append(el("td", value));
    }
    body.append(row);
  }
  $("fragment-text").textContent = f.text;
  show("fragment-section");
}

document.addEventListener("DOMContentLoaded", () => {
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key-input").value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY, key);
    $("key-input").value = "";
    message("");
    start();
  });
  $("search-form").addEventListener("submit", search);
  $("forget-key").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    message("The key is forgotten.", "info");
    askForKey();
  });
  start();
});
