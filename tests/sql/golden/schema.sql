-- Golden: pg_dump --schema-only of a fresh migrate (tests/sql/test_goldens.py), without
-- \restrict keys, version lines and routine bodies (sql/functions holds those; tests
-- check them by behaviour); <migrator> is the role that ran the migrations.
-- Regenerate: make goldens  (or: CONTEXTS_UPDATE_GOLDENS=1 python -m pytest tests/sql/test_goldens.py), then review and commit the diff of tests/sql/golden/

--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: api; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA api;


ALTER SCHEMA api OWNER TO <migrator>;

--
-- Name: SCHEMA api; Type: COMMENT; Schema: -; Owner: <migrator>
--

COMMENT ON SCHEMA api IS 'Contexts functions: what the service and analysts call.';


--
-- Name: data; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA data;


ALTER SCHEMA data OWNER TO <migrator>;

--
-- Name: SCHEMA data; Type: COMMENT; Schema: -; Owner: <migrator>
--

COMMENT ON SCHEMA data IS 'Contexts tables. Read and write them through the api schema.';


--
-- Name: extensions; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA extensions;


ALTER SCHEMA extensions OWNER TO <migrator>;

--
-- Name: service; Type: SCHEMA; Schema: -; Owner: <migrator>
--

CREATE SCHEMA service;


ALTER SCHEMA service OWNER TO <migrator>;

--
-- Name: SCHEMA service; Type: COMMENT; Schema: -; Owner: <migrator>
--

COMMENT ON SCHEMA service IS 'Functions of the service and the migrator: writes, ingest, authentication, trace writing, administration and their helpers. No analyst or auditor holds USAGE on it (sql/grants).';


--
-- Name: contexts_bm25; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS contexts_bm25 WITH SCHEMA extensions;


--
-- Name: EXTENSION contexts_bm25; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION contexts_bm25 IS 'BM25 postings packed in blocks with block-max bounds; exact top k by MaxScore';


--
-- Name: vector; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA extensions;


--
-- Name: EXTENSION vector; Type: COMMENT; Schema: -; Owner: 
--

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';


--
-- Name: codeowners_file(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) RETURNS TABLE(doc_id bigint, path text, content text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION codeowners_file(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) IS 'The repo''s ingested CODEOWNERS file (.github/, root, then docs/), if any: what ingestion resolves owners against.';


--
-- Name: context_get(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_get(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.context_get(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_get(p_context_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_get(p_context_id bigint) IS 'A Context the caller may read (its newest readable version and size), retired or not.';


--
-- Name: context_resolve(text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_resolve(p_refs text[]) RETURNS TABLE(ordinal integer, ref text, context_id bigint, version integer, retired boolean, name text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.context_resolve(p_refs text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION context_resolve(p_refs text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_resolve(p_refs text[]) IS 'Resolve ctx_<id>@<version> / ctx_<id>@latest references the caller may read (22023 malformed, P0002 unknown).';


--
-- Name: context_subscriptions(bigint, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_subscriptions(p_context_id bigint DEFAULT NULL::bigint, p_include_revoked boolean DEFAULT false) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamp with time zone, accepted_at timestamp with time zone, accepted_by text, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION context_subscriptions(p_context_id bigint, p_include_revoked boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) IS 'Subscriptions the caller may see: of Contexts it publishes, and of its own subscriber scopes.';


--
-- Name: context_versions(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.context_versions(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, version integer, fragment_count integer, built_from jsonb, note text, created_by text, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.context_versions(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_versions(p_context_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.context_versions(p_context_id bigint) IS 'The versions of a Context the caller may read, newest first.';


--
-- Name: contexts_list(text, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.contexts_list(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_include_retired boolean DEFAULT false) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) IS 'Contexts a request in this scope may name: its org''s within the scope, and those subscribed to; retired ones on request.';


--
-- Name: fragment_links(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.fragment_links(p_fragment_id bigint) RETURNS TABLE(direction text, link_type text, target text, resolved boolean, fragment_id bigint, doc_id bigint, path text, anchor text, evidence text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.fragment_links(p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION fragment_links(p_fragment_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.fragment_links(p_fragment_id bigint) IS 'The references a fragment makes and those made to it, as the caller may see them (GET /fragments/{id}/links).';


--
-- Name: fragment_readers(text, bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.fragment_readers(p_org_id text, p_fragment_id bigint) RETURNS TABLE(principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.fragment_readers(p_org_id text, p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION fragment_readers(p_org_id text, p_fragment_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.fragment_readers(p_org_id text, p_fragment_id bigint) IS 'Who may read a fragment now, and why: each principal, the grants that let it, its login and its API keys (DBA and auditors of the org).';


--
-- Name: get_document(bigint, integer, integer, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_document(p_doc_id bigint, p_version integer DEFAULT NULL::integer, p_offset integer DEFAULT 0, p_max_chars integer DEFAULT NULL::integer) RETURNS TABLE(doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text, version integer, current_version integer, language text, author text, owner text, source_ts timestamp with time zone, metadata jsonb, content_hash text, content text, content_chars integer, content_offset integer, created_at timestamp with time zone, updated_at timestamp with time zone, fragments jsonb, versions jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) OWNER TO <migrator>;

--
-- Name: FUNCTION get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) IS 'One version of a readable document (current by default), its text or a slice of it, its fragments, and every version it has had.';


--
-- Name: get_fragment(bigint); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_fragment(p_fragment_id bigint) RETURNS TABLE(fragment_id bigint, org_id text, repo_id text, persona_id text, session_id text, doc_id bigint, doc_version integer, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, simhash bigint, active boolean, created_at timestamp with time zone, updated_at timestamp with time zone, embedding_model text, sources jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.get_fragment(p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION get_fragment(p_fragment_id bigint); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_fragment(p_fragment_id bigint) IS 'A fragment, its provenance and every source pointer.';


--
-- Name: get_trace(uuid); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.get_trace(p_trace_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.get_trace(p_trace_id uuid) OWNER TO <migrator>;

--
-- Name: FUNCTION get_trace(p_trace_id uuid); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.get_trace(p_trace_id uuid) IS 'A retrieval trace as the caller may see it: request, pipeline versions, every candidate''s ranks and scores; what its grants do not cover is redacted and listed.';


--
-- Name: lexical_document(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.lexical_document(p_heading text, p_body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.lexical_document(p_heading text, p_body text) OWNER TO <migrator>;

--
-- Name: FUNCTION lexical_document(p_heading text, p_body text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.lexical_document(p_heading text, p_body text) IS 'tsvector of a fragment: heading (weight A) and body.';


--
-- Name: lexical_query_terms(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.lexical_query_terms(p_query text) RETURNS TABLE(term text, times double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.lexical_query_terms(p_query text) OWNER TO <migrator>;

--
-- Name: FUNCTION lexical_query_terms(p_query text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.lexical_query_terms(p_query text) IS 'BM25 terms of a query, each once, with how often the query says it.';


--
-- Name: lexical_tsvector(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.lexical_tsvector(p_text text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.lexical_tsvector(p_text text) OWNER TO <migrator>;

--
-- Name: FUNCTION lexical_tsvector(p_text text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.lexical_tsvector(p_text text) IS 'Terms of a text for BM25: english configuration, code separators split.';


--
-- Name: linked_fragments(text, bigint[], text, text, text, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(linked_from bigint, link_type text, fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, negative boolean, valid_from timestamp with time zone, valid_until timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'The fragments these cite, one hop, within the requested scope and current (a retrieval''s expand_links).';


--
-- Name: list_documents(text, text, text, text, text, integer, bigint, text, text, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.list_documents(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_path_prefix text DEFAULT NULL::text, p_limit integer DEFAULT 50, p_after bigint DEFAULT NULL::bigint, p_kind text DEFAULT NULL::text, p_owner text DEFAULT NULL::text, p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(doc_id bigint, org_id text, repo_id text, persona_id text, session_id text, path text, kind text, version integer, language text, author text, owner text, source_ts timestamp with time zone, fragments integer, created_at timestamp with time zone, updated_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) IS 'A page of the documents a scope holds (those the caller may read, not deleted), in doc_id order, filtered by path prefix, kind, owner and update time; p_after is the last doc_id of the previous page.';


--
-- Name: model_generations(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.model_generations() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer, status text, created_at timestamp with time zone, window_ends_at timestamp with time zone, promoted_at timestamp with time zone, retired_at timestamp with time zone, dropped_at timestamp with time zone, fragments bigint, vectors bigint, replays bigint, mean_overlap double precision, min_overlap double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.model_generations() OWNER TO <migrator>;

--
-- Name: FUNCTION model_generations(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.model_generations() IS 'Each generation: status, window, coverage (vectors over active fragments) and replay overlap, over what the caller may read; org-wide principals only.';


--
-- Name: owner_settings(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.owner_settings(p_org_id text) RETURNS TABLE(org_id text, default_owner text, stale_after_days integer, window_days integer, min_retrievals integer, nudge_period_hours integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.owner_settings(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION owner_settings(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.owner_settings(p_org_id text) IS 'The org''s default owner and staleness thresholds: text older than stale_after_days, at least min_retrievals retrievals within window_days; one nudge per fragment per nudge_period_hours.';


--
-- Name: pins_list(text, text, text, text, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.pins_list(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_include_expired boolean DEFAULT false) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean, active boolean, expired boolean, superseded boolean, valid_until timestamp with time zone, superseded_by jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) IS 'Pins a retrieval in this scope sees, in the order they are composed (earliest first), each saying whether its fragment is superseded (outside its validity window now) and by what.';


--
-- Name: ranking_profile(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profile(p_org_id text, p_persona_id text DEFAULT NULL::text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile(p_org_id text, p_persona_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) IS 'The ranking profile stored for an org (persona null) or persona, and the one a retrieval there uses.';


--
-- Name: ranking_profiles(text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.ranking_profiles(p_org_id text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.ranking_profiles(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profiles(p_org_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.ranking_profiles(p_org_id text) IS 'Stored ranking profiles the caller may read, each with the profile in effect.';


--
-- Name: retrieve(text, text, text, text, text, integer, integer, jsonb, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k_lexical integer DEFAULT 100, p_k_dense integer DEFAULT 100, p_fusion jsonb DEFAULT NULL::jsonb, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, profile jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'Hybrid retrieval of a query text from SQL: api.retrieve_candidates with the newest stored query vector of that text you may read (traces keep them), else BM25 only with a notice.';


--
-- Name: retrieve_candidates(text, text, jsonb, text, text, text, integer, integer, integer, jsonb, text, text[], timestamp with time zone, timestamp with time zone, text, timestamp with time zone, boolean); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k_lexical integer DEFAULT 100, p_k_dense integer DEFAULT 100, p_rrf_k integer DEFAULT 60, p_fusion jsonb DEFAULT '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'::jsonb, p_path_prefix text DEFAULT NULL::text, p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negatives text DEFAULT 'include'::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_include_superseded boolean DEFAULT false) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, reading bytea, profile jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) IS 'Lexical and dense top-k fused (weighted calibrated scores by default, or RRF), with ranks, scores and citation data per candidate, the pins the request sees (pin_id, pin_rank), each candidate''s similarity to the persona, its citation authority (0 to 1, with the time of the last refresh) and the ranking profile in effect (first row); optional path prefix, kinds, updated-at window and negatives filters; only fragments current at p_as_of (now by default) unless p_include_superseded, each with its validity window and its reading for the learned reranker (null: none stored).';


--
-- Name: rule_matches(text, text, text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) RETURNS TABLE(rule_id bigint, name text, ref text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_matches(p_org_id text, p_repo_id text, p_touching text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) IS 'Workflow rules of a scope matching touched paths or symbols, with the Context version each brings that the caller may read (others left out, unsaid).';


--
-- Name: rules_list(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.rules_list(p_org_id text, p_repo_id text DEFAULT NULL::text) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.rules_list(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION rules_list(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) IS 'Workflow rules a retrieval in this scope consults (the org''s and the repo''s), as row-level security shows them.';


--
-- Name: score_dense(text, jsonb, bigint[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) RETURNS TABLE(fragment_id bigint, similarity double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) IS 'Cosine similarity of given fragments to the query vector of their namespace (active model).';


--
-- Name: score_lexical(text, text, bigint[], text, text, text, double precision, double precision); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75) RETURNS TABLE(fragment_id bigint, score double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: FUNCTION score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) IS 'BM25 (k1=1.2, b=0.75) of given fragments for a query, with api.search_lexical''s statistics; no matching term: absent.';


--
-- Name: search_dense(text, jsonb, integer, text, text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer DEFAULT 100, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(fragment_id bigint, namespace text, model_id integer, similarity double precision, rank integer)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) IS 'Cosine top-k per namespace with that namespace''s active model (HNSW, iterative scan).';


--
-- Name: search_lexical(text, text, integer, text, text, text, double precision, double precision); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer DEFAULT 100, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75) RETURNS TABLE(fragment_id bigint, score double precision, rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: FUNCTION search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) IS 'BM25 top-k (k1=1.2, b=0.75) over the fragments in scope, from the statistics of the scope groups the caller may read.';


--
-- Name: stale_fragments(text, text, integer, integer, integer, timestamp with time zone); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.stale_fragments(p_org_id text, p_owner text DEFAULT NULL::text, p_min_retrievals integer DEFAULT NULL::integer, p_window_days integer DEFAULT NULL::integer, p_stale_after_days integer DEFAULT NULL::integer, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(fragment_id bigint, org_id text, repo_id text, owner text, owner_source text, kind text, doc_id bigint, path text, anchor text, heading_path text[], retrievals integer, last_retrieved_at timestamp with time zone, last_edited_at timestamp with time zone, days_since_edit integer, window_days integer, min_retrievals integer, stale_after_days integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) IS 'Stale fragments you may read (often retrieved, text not edited for long; the org''s thresholds unless given), optionally of one owner, most retrieved first, with the document path, retrievals in the window, last edit and where the owner came from.';


--
-- Name: sync_documents(text, text, text[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[] DEFAULT NULL::text[]) RETURNS TABLE(doc_id bigint, path text, version integer, commit_sha text, rewrite_due boolean, blob text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_documents(p_org_id text, p_repo_id text, p_paths text[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) IS 'Live documents of a repo whose current version a git sync wrote (metadata git_commit), with that commit, the file''s git blob (null when written before syncs recorded it) and whether a migration marked it for re-chunking (rewrite_due: a sync reads its file again); optionally only these paths.';


--
-- Name: sync_state(text, text); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.sync_state(p_org_id text, p_repo_id text) RETURNS TABLE(org_id text, repo_id text, commit_sha text, ref text, synced_at timestamp with time zone, synced_by text, written integer, deleted integer, full_scan boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.sync_state(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_state(p_org_id text, p_repo_id text); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) IS 'The last git sync of a repo the caller may read: commit, branch, when, by whom, what it wrote and deleted; no row when never synced.';


--
-- Name: validity_left_out(text, text, jsonb, text, text, text, double precision, jsonb, text, text[], timestamp with time zone, timestamp with time zone, text, timestamp with time zone, integer); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_lexical_floor double precision DEFAULT NULL::double precision, p_dense_floors jsonb DEFAULT NULL::jsonb, p_path_prefix text DEFAULT NULL::text, p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negatives text DEFAULT 'include'::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, p_limit integer DEFAULT 20) RETURNS TABLE(fragment_id bigint, pin_id bigint, reason text, lexical_score double precision, dense_similarity double precision, namespace text, doc_id bigint, doc_version integer, path text, anchor text, token_count integer, valid_from timestamp with time zone, valid_until timestamp with time zone, superseded_by jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer) IS 'What validity windows kept out of a retrieval: the pins it sees whose fragment is not current at p_as_of, and the fragments not current then that would have ranked (scores at or above the lists'' floors), each with its reason and the documents superseding it.';


--
-- Name: version_metadata(bigint[], integer[]); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) RETURNS TABLE(doc_id bigint, version integer, metadata jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) OWNER TO <migrator>;

--
-- Name: FUNCTION version_metadata(p_doc_ids bigint[], p_versions integer[]); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) IS 'Metadata of readable document versions, as stored at ingestion.';


--
-- Name: whoami(); Type: FUNCTION; Schema: api; Owner: <migrator>
--

CREATE FUNCTION api.whoami() RETURNS TABLE(org_id text, principal_id text, org_wide boolean, repos text[], personas text[], sessions text[], audit boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION api.whoami() OWNER TO <migrator>;

--
-- Name: FUNCTION whoami(); Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON FUNCTION api.whoami() IS 'The principal this transaction acts for, and its read ACL.';


--
-- Name: _acl(text, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._acl(p_kind text, p_write boolean DEFAULT false) RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._acl(p_kind text, p_write boolean) OWNER TO <migrator>;

--
-- Name: _acl_writes(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._acl_writes() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._acl_writes() OWNER TO <migrator>;

--
-- Name: FUNCTION _acl_writes(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._acl_writes() IS 'True when the current principal (through its key''s restriction) may write somewhere.';


--
-- Name: _adopt_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._adopt_login(p_login text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._adopt_login(p_login text) OWNER TO <migrator>;

--
-- Name: _analyze_new_tenant(text, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer DEFAULT 100) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _analyze_new_tenant(p_org_id text, p_min_rows integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) IS 'Analyze the partitions of a tenant that were never analyzed once they hold enough rows (the planner misjudges them until then).';


--
-- Name: _authority(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) RETURNS TABLE(fragment_id bigint, authority double precision, refreshed_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _authority(p_org_id text, p_fragment_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) IS 'Authority of the given fragments the caller may read (0 when nothing cites them), with the time of the last refresh.';


--
-- Name: _begin_document(text, text, text, text, text, text, text, text, text, text, timestamp with time zone, jsonb, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]) IS 'service.begin_document''s work after data._begin_scope, leaving the deactivation of the fragments whose pointers it retired (affected) to the caller.';


--
-- Name: _begin_scope(text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._begin_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._begin_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _bind(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bind(p_org_id text, p_principal_id text, p_key_id text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bind(p_org_id text, p_principal_id text, p_key_id text) OWNER TO <migrator>;

--
-- Name: _binding(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._binding(OUT org_id text, OUT principal_id text, OUT key_id text) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._binding(OUT org_id text, OUT principal_id text, OUT key_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION _binding(OUT org_id text, OUT principal_id text, OUT key_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._binding(OUT org_id text, OUT principal_id text, OUT key_id text) IS 'Org, principal and API key (null: none) the current transaction acts for.';


--
-- Name: _binding_ids(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._binding_ids(p_org_id text, p_principal_id text, p_key_id text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._binding_ids(p_org_id text, p_principal_id text, p_key_id text) OWNER TO <migrator>;

--
-- Name: _binding_mac(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._binding_mac(p_ids text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._binding_mac(p_ids text) OWNER TO <migrator>;

--
-- Name: FUNCTION _binding_mac(p_ids text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._binding_mac(p_ids text) IS 'Signature of a binding''s hex-encoded ids for this transaction, the same on every node working for it.';


--
-- Name: _bm25_group(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_group(p_repo_id text, p_persona_id text, p_session_id text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS <body>;


ALTER FUNCTION data._bm25_group(p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _bm25_index(text[], bigint[], tsvector[], text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) IS 'Add fragments (parallel arrays) to BM25: packed postings, document frequencies, corpus size.';


--
-- Name: _bm25_kept(text, bigint[], text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) RETURNS bigint[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) IS 'The given fragments that pass the retrieval filters postings do not carry (kind, dates, negative, validity).';


--
-- Name: _bm25_on_fragment_change(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_on_fragment_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_on_fragment_change() OWNER TO <migrator>;

--
-- Name: _bm25_scores(text, text, text, text, text, bigint[], double precision, double precision); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) RETURNS TABLE(fragment_id bigint, score double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) OWNER TO <migrator>;

--
-- Name: _bm25_statistics(text, text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) IS 'BM25 statistics of a query within a scope (N, average length, weight per term: idf times query frequency) and the blocks the caller may read.';


--
-- Name: _bm25_top(text, text, text, text, text, bigint[], integer, text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone, double precision, double precision, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negative boolean DEFAULT NULL::boolean, p_valid_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_k1 double precision DEFAULT 1.2, p_b double precision DEFAULT 0.75, p_also_ids bigint[] DEFAULT NULL::bigint[]) RETURNS TABLE(fragment_id bigint, score double precision, in_top boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]) IS 'Exact BM25 top k within a scope and filters over packed postings (contexts_bm25); also the BM25 of p_also_ids (docs/adr/0025).';


--
-- Name: _bm25_unindex(text[], bigint[], tsvector[], text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) IS 'Remove fragments (parallel arrays) from BM25: the exact inverse of data._bm25_index.';


--
-- Name: _bypasses_rls(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._bypasses_rls() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._bypasses_rls() OWNER TO <migrator>;

--
-- Name: _check_fusion(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_fusion(p_fusion jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._check_fusion(p_fusion jsonb) OWNER TO <migrator>;

--
-- Name: _check_halflives(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_halflives(p_halflife_days jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._check_halflives(p_halflife_days jsonb) OWNER TO <migrator>;

--
-- Name: _check_reading(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_reading() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._check_reading() OWNER TO <migrator>;

--
-- Name: _check_rule_globs(text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) OWNER TO <migrator>;

--
-- Name: _check_subscription(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._check_subscription() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._check_subscription() OWNER TO <migrator>;

--
-- Name: _citation_pagerank(text, double precision, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._citation_pagerank(p_org_id text DEFAULT NULL::text, p_damping double precision DEFAULT 0.85, p_iterations integer DEFAULT 30) RETURNS TABLE(org_id text, fragment_id bigint, pagerank double precision, authority double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._citation_pagerank(p_org_id text, p_damping double precision, p_iterations integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _citation_pagerank(p_org_id text, p_damping double precision, p_iterations integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._citation_pagerank(p_org_id text, p_damping double precision, p_iterations integer) IS 'Citation PageRank over the links whose citing fragment every reader of the cited one may read, each citer''s share divided by all the references it makes; normalised to [0, 1] among the scope classes a fragment''s readers all see. The query of data.fragment_authority.';


--
-- Name: _clamp_unreadable_times(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._clamp_unreadable_times() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._clamp_unreadable_times() OWNER TO <migrator>;

--
-- Name: FUNCTION _clamp_unreadable_times(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._clamp_unreadable_times() IS 'Clamp every stored time no reader can decode (time columns of the data schema, metadata windows) to the readable range, and check each time column from then on; returns the values clamped. Migration 0026 runs it.';


--
-- Name: _context_rows(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._context_rows(p_ids bigint[]) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._context_rows(p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _context_versions(boolean, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._context_versions(p_scoped boolean, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(context_id bigint, version integer, via_subscription boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION _context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) IS 'Context versions the current principal may read (with p_scoped: that a request in that scope may name): every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it, of org and repo Contexts only.';


--
-- Name: _create_tenant_partitions(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._create_tenant_partitions(p_org_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._create_tenant_partitions(p_org_id text) OWNER TO <migrator>;

--
-- Name: _deactivate_unsourced(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _dense_hits(text, integer, integer, extensions.vector, integer, text, text, text, bigint[], text[], timestamp with time zone, timestamp with time zone, boolean, timestamp with time zone); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[] DEFAULT NULL::bigint[], p_kinds text[] DEFAULT NULL::text[], p_updated_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_updated_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_negative boolean DEFAULT NULL::boolean, p_valid_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(fragment_id bigint, similarity double precision, rank integer)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: _document_keys(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._document_keys(p_path text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._document_keys(p_path text) OWNER TO <migrator>;

--
-- Name: FUNCTION _document_keys(p_path text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._document_keys(p_path text) IS 'Keys a reference may name a document by: path:P, module:a.b (dotted suffixes of a code path), package:a.b (of its folder), adr:N (an ADR file''s number).';


--
-- Name: _document_version_org(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._document_version_org() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._document_version_org() OWNER TO <migrator>;

--
-- Name: FUNCTION _document_version_org(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._document_version_org() IS 'A document version''s org is its document''s: filled when left out, refused when another.';


--
-- Name: _find_duplicate(text, text, text, text, text, text, bigint, integer, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer DEFAULT 3, p_inactive bigint[] DEFAULT '{}'::bigint[]) RETURNS TABLE(fragment_id bigint, distance integer, exact boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer, p_inactive bigint[]) OWNER TO <migrator>;

--
-- Name: _fragment_readers(text, bigint); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._fragment_readers(p_org_id text, p_fragment_id bigint) RETURNS TABLE(principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._fragment_readers(p_org_id text, p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: _fragment_readers_core(text, bigint); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._fragment_readers_core(p_org_id text, p_fragment_id bigint) RETURNS TABLE(principal_id text, kind text, disabled boolean, login name, grants text[], keys text[], why text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._fragment_readers_core(p_org_id text, p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: _fuse(bigint[], integer[], double precision[], integer[], double precision[], text[], text[], boolean, boolean, jsonb, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, fused_score double precision)
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) OWNER TO <migrator>;

--
-- Name: _glob_regex(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._glob_regex(p_glob text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._glob_regex(p_glob text) OWNER TO <migrator>;

--
-- Name: FUNCTION _glob_regex(p_glob text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._glob_regex(p_glob text) IS 'A path glob (**, *, ?) as an anchored regular expression.';


--
-- Name: _grant_target(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS <body>;


ALTER FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) OWNER TO <migrator>;

--
-- Name: _in_scope(text, text, text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS <body>;


ALTER FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) OWNER TO <migrator>;

--
-- Name: _json_number(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._json_number(p_value jsonb) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._json_number(p_value jsonb) OWNER TO <migrator>;

--
-- Name: _link_targets(text[], bigint[], text[], text[], text[], text[], text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._link_targets(p_org_ids text[], p_fragment_ids bigint[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[], p_keys text[], p_names text[], p_anchors text[], p_target_repos text[]) RETURNS TABLE(n bigint, doc_id bigint, fragment_id bigint, repo_id text, persona_id text, session_id text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._link_targets(p_org_ids text[], p_fragment_ids bigint[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[], p_keys text[], p_names text[], p_anchors text[], p_target_repos text[]) OWNER TO <migrator>;

--
-- Name: _links_to_hidden(bigint); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._links_to_hidden(p_fragment_id bigint) RETURNS TABLE(link_type text, target text, target_key text, target_name text, target_anchor text, link_id bigint, evidence text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._links_to_hidden(p_fragment_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION _links_to_hidden(p_fragment_id bigint); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._links_to_hidden(p_fragment_id bigint) IS 'References a fragment the caller may read makes to fragments it may not read (api.fragment_links shows them unresolved).';


--
-- Name: _match_keys(text, bigint); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._match_keys(p_content_hash text, p_simhash bigint) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._match_keys(p_content_hash text, p_simhash bigint) OWNER TO <migrator>;

--
-- Name: _metadata_problem(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._metadata_problem(p_metadata jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._metadata_problem(p_metadata jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION _metadata_problem(p_metadata jsonb); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._metadata_problem(p_metadata jsonb) IS 'Why a document''s metadata may not be stored (null when it may): not an object, over 32 KiB, nested over 32 levels, a number beyond a double, or a validity time no reader can decode.';


--
-- Name: _metadata_time(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._metadata_time(p_value text) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._metadata_time(p_value text) OWNER TO <migrator>;

--
-- Name: FUNCTION _metadata_time(p_value text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._metadata_time(p_value text) IS 'A metadata value as a time; null when absent or not a time.';


--
-- Name: _on_sources_deleted(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._on_sources_deleted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._on_sources_deleted() OWNER TO <migrator>;

--
-- Name: _owner_problem(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._owner_problem(p_owner text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._owner_problem(p_owner text) OWNER TO <migrator>;

--
-- Name: FUNCTION _owner_problem(p_owner text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._owner_problem(p_owner text) IS 'What is wrong with an owner''s name (length, control, bidirectional or only invisible characters), or null.';


--
-- Name: _path_problem(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._path_problem(p_path text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._path_problem(p_path text) OWNER TO <migrator>;

--
-- Name: FUNCTION _path_problem(p_path text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._path_problem(p_path text) IS 'Why a document path may not be stored (null when it may): what app.ingest.normalize.normalize_path would change or refuse.';


--
-- Name: _principal_of_org(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._principal_of_org(p_who text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._principal_of_org(p_who text) OWNER TO <migrator>;

--
-- Name: _principal_or_raise(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) OWNER TO <migrator>;

--
-- Name: _query_vectors(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._query_vectors(p_query_embeddings jsonb) RETURNS TABLE(model_id integer, namespace text, dims integer, query_vector extensions.vector)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._query_vectors(p_query_embeddings jsonb) OWNER TO <migrator>;

--
-- Name: _raise_invalid(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._raise_invalid(p_what text, p_message text, p_constraint text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._raise_invalid(p_what text, p_message text, p_constraint text) OWNER TO <migrator>;

--
-- Name: FUNCTION _raise_invalid(p_what text, p_message text, p_constraint text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._raise_invalid(p_what text, p_message text, p_constraint text) IS 'Re-raise a refused value as 22023: the function''s own words kept, PostgreSQL''s (naming tables and constraints) replaced by the constraint''s name.';


--
-- Name: _ranking_profile(text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: _readable_context_versions(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_context_versions() RETURNS TABLE(context_id bigint, version integer, via_subscription boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._readable_context_versions() OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_context_versions(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_context_versions() IS 'Context versions the current principal may read: every version of a Context whose scope its grants cover, and the version each live subscription of its org (or repo) gives it.';


--
-- Name: _readable_fragments(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) RETURNS bigint[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_fragments(p_org_id text, p_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) IS 'Fragments among the given ids the current principal may read now (the data.fragments policy).';


--
-- Name: _readable_time(timestamp with time zone, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) OWNER TO <migrator>;

--
-- Name: FUNCTION _readable_time(p_value timestamp with time zone, p_what text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) IS 'True for null or a time from 0001-01-02 to 9999-12-30 UTC (what every reader, in any time zone, decodes); raises 22023 naming p_what otherwise. Checked on every time column of the data schema.';


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: documents; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.documents (
    doc_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    path text NOT NULL,
    kind text NOT NULL,
    current_version integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    owner text,
    deleted_at timestamp with time zone,
    deleted_by text,
    link_keys text[] GENERATED ALWAYS AS (data._document_keys(path)) STORED,
    owner_source text DEFAULT 'document'::text NOT NULL,
    rewrite_due boolean DEFAULT false NOT NULL,
    CONSTRAINT documents_created_at_readable CHECK (data._readable_time(created_at, 'documents.created_at'::text)),
    CONSTRAINT documents_deleted_at_readable CHECK (data._readable_time(deleted_at, 'documents.deleted_at'::text)),
    CONSTRAINT documents_kind_check CHECK ((kind ~ '^[a-z][a-z0-9-]{0,31}$'::text)),
    CONSTRAINT documents_owner_source_known CHECK ((owner_source = ANY (ARRAY['document'::text, 'codeowners'::text, 'default'::text, 'reassigned'::text, 'none'::text]))),
    CONSTRAINT documents_path_check CHECK (((length(path) >= 1) AND (length(path) <= 1024))),
    CONSTRAINT documents_updated_at_readable CHECK (data._readable_time(updated_at, 'documents.updated_at'::text))
);

ALTER TABLE ONLY data.documents FORCE ROW LEVEL SECURITY;


ALTER TABLE data.documents OWNER TO <migrator>;

--
-- Name: TABLE documents; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.documents IS 'Sources (files, ADRs, transcripts, agent output), identified by org, scope and path.';


--
-- Name: COLUMN documents.current_version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.current_version IS 'Version whose fragments are live; older versions are kept.';


--
-- Name: COLUMN documents.owner; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.owner IS 'Named owner of the current version (R-DOC-3); its fragments carry it too.';


--
-- Name: COLUMN documents.deleted_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.deleted_at IS 'Set by api.delete_document: the document is gone from listings and retrieval; its versions and sources stay for audit.';


--
-- Name: COLUMN documents.deleted_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.deleted_by IS 'Principal that deleted the document.';


--
-- Name: COLUMN documents.link_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.link_keys IS 'Keys references name this document by (data._document_keys): how a waiting reference finds it.';


--
-- Name: COLUMN documents.owner_source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.owner_source IS 'Where the owner came from: document (front matter, metadata, --owner, request), codeowners (the repo''s CODEOWNERS), default (the org''s), reassigned (contexts owners reassign), none.';


--
-- Name: COLUMN documents.rewrite_due; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.documents.rewrite_due IS 'Set by a migration that changed how chunks are matched: the next write of this document makes a new version even when its content is unchanged (and a git sync reads its file again).';


--
-- Name: _record_links(data.documents, jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._record_links(p_doc data.documents, p_links jsonb) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._record_links(p_doc data.documents, p_links jsonb) OWNER TO <migrator>;

--
-- Name: _record_links_of(bigint[], jsonb[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._record_links_of(p_doc_ids bigint[], p_links jsonb[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._record_links_of(p_doc_ids bigint[], p_links jsonb[]) OWNER TO <migrator>;

--
-- Name: _record_returns(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._record_returns() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._record_returns() OWNER TO <migrator>;

--
-- Name: _redact_candidates(text, jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION _redact_candidates(p_org_id text, p_candidates jsonb); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) IS 'A trace''s candidates for the current principal: unreadable ones reduced to ranks, scores and fate.';


--
-- Name: _redact_pipeline(jsonb, text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) RETURNS record
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) IS 'A recorded pipeline as a reader may see it: a persona''s ranking profile withheld (and listed) where the request''s persona is.';


--
-- Name: _redact_request(text, text, jsonb, boolean, text[], text[], text[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) IS 'A recorded request as a reader with the given grants may see it: withheld query and scope ids, listed.';


--
-- Name: _refresh_validity(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _refresh_validity(p_org_id text, p_doc_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) IS 'Recompute the validity windows of the fragments of these documents and of the documents they supersede or are superseded by.';


--
-- Name: _require_org(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_org(p_org_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_org(p_org_id text) OWNER TO <migrator>;

--
-- Name: _require_principal(text, text, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: _require_read(text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _require_rls_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_rls_login(p_login text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_rls_login(p_login text) OWNER TO <migrator>;

--
-- Name: _require_scope(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: _require_scram(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_scram(p_verifier text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_scram(p_verifier text) OWNER TO <migrator>;

--
-- Name: _require_write(text, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _resolve_context_refs(text[], boolean, text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean DEFAULT false, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS TABLE(ordinal integer, ref text, context_id bigint, version integer, retired boolean, name text, via_subscription boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _resolve_links(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_links(p_link_ids bigint[]) RETURNS integer
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._resolve_links(p_link_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _resolve_owner(text, text, text, text, text, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, p_same_text boolean DEFAULT false, OUT owner text, OUT owner_source text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, p_same_text boolean, OUT owner text, OUT owner_source text) OWNER TO <migrator>;

--
-- Name: _retire_pointers(bigint, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._retire_pointers(p_doc_id bigint, p_keep_version integer, OUT detached jsonb, OUT affected bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._retire_pointers(p_doc_id bigint, p_keep_version integer, OUT detached jsonb, OUT affected bigint[]) OWNER TO <migrator>;

--
-- Name: _retire_sources(bigint, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) OWNER TO <migrator>;

--
-- Name: _rule_rows(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._rule_rows(p_ids bigint[]) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._rule_rows(p_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _same_document(text, text, jsonb, text, text, text, text, jsonb, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text) OWNER TO <migrator>;

--
-- Name: FUNCTION _same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text) IS 'Whether a document written again changes nothing: the same text, kind and metadata, and no other named owner (a reassigned owner stays).';


--
-- Name: _scope_words(text, text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._scope_words(p_repo_id text, p_persona_id text, p_session_id text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._scope_words(p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: _serving_models(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._serving_models() RETURNS TABLE(model_id integer, namespace text, name text, dims integer, generation integer)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._serving_models() OWNER TO <migrator>;

--
-- Name: FUNCTION _serving_models(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._serving_models() IS 'Per namespace, the generation queries search: the active one, or the queryable one contexts.serve_generations names (55000 for a dropped one or one past its window).';


--
-- Name: _stale_core(text, timestamp with time zone, interval, integer, interval); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) RETURNS TABLE(fragment_id bigint, retrievals integer, last_retrieved_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) OWNER TO <migrator>;

--
-- Name: _stale_readable(text, timestamp with time zone, integer, integer, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) RETURNS TABLE(fragment_id bigint, retrievals integer, last_retrieved_at timestamp with time zone, window_days integer, min_retrievals integer, stale_after_days integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) IS 'Stale fragments (by the org''s thresholds unless given) that the current principal may read, with their retrievals in the window.';


--
-- Name: _stored_query_vector(text, text, text, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer) RETURNS TABLE(trace_id uuid, embedding extensions.vector, fusion jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer) IS 'The newest stored vector of a query text and model among the traces whose query the caller may read, with that retrieval''s fusion.';


--
-- Name: _subscription_out(bigint, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._subscription_out(p_subscription_id bigint, p_publisher boolean) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamp with time zone, accepted_at timestamp with time zone, accepted_by text, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._subscription_out(p_subscription_id bigint, p_publisher boolean) OWNER TO <migrator>;

--
-- Name: context_subscriptions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_subscriptions (
    subscription_id bigint NOT NULL,
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    version integer,
    subscriber_org_id text NOT NULL,
    subscriber_repo_id text,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    revoked_at timestamp with time zone,
    revoked_by text,
    accepted_at timestamp with time zone,
    accepted_by text,
    CONSTRAINT context_subscriptions_accepted_after_made CHECK (((accepted_at IS NULL) OR (accepted_at >= created_at))),
    CONSTRAINT context_subscriptions_accepted_at_readable CHECK (data._readable_time(accepted_at, 'context_subscriptions.accepted_at'::text)),
    CONSTRAINT context_subscriptions_accepted_by_whom CHECK (((accepted_at IS NULL) = (accepted_by IS NULL))),
    CONSTRAINT context_subscriptions_check CHECK (((revoked_at IS NULL) OR (revoked_at >= created_at))),
    CONSTRAINT context_subscriptions_created_at_readable CHECK (data._readable_time(created_at, 'context_subscriptions.created_at'::text)),
    CONSTRAINT context_subscriptions_revoked_at_readable CHECK (data._readable_time(revoked_at, 'context_subscriptions.revoked_at'::text)),
    CONSTRAINT subscriber_repo_format CHECK ((subscriber_repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'::text))
);

ALTER TABLE ONLY data.context_subscriptions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_subscriptions OWNER TO <migrator>;

--
-- Name: TABLE context_subscriptions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_subscriptions IS 'Grants on a Context (api.context_subscribe): the subscriber org''s principals (of subscriber_repo_id, or all of them) read the members of `version`, or of the newest version when it is null, until revoked_at. Not a copy.';


--
-- Name: COLUMN context_subscriptions.version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.version IS 'The version subscribed to (null: follows the newest).';


--
-- Name: COLUMN context_subscriptions.subscriber_repo_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.subscriber_repo_id IS 'Only principals that may read this repo of the subscriber org (null: every principal of that org). Not checked against the subscriber''s repos: the publisher learns nothing of another org.';


--
-- Name: COLUMN context_subscriptions.revoked_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_subscriptions.revoked_at IS 'Set by api.context_unsubscribe (publisher or subscriber); the row stays for audit.';


--
-- Name: _subscription_state(data.context_subscriptions); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._subscription_state(s data.context_subscriptions) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._subscription_state(s data.context_subscriptions) OWNER TO <migrator>;

--
-- Name: _superseders(text, bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) RETURNS TABLE(fragment_id bigint, superseded_by jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION _superseders(p_org_id text, p_fragment_ids bigint[]); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) IS 'The live documents superseding a live source of each fragment, as the caller may read them ([] when none).';


--
-- Name: _trace(uuid); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._trace(p_trace_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._trace(p_trace_id uuid) OWNER TO <migrator>;

--
-- Name: FUNCTION _trace(p_trace_id uuid); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._trace(p_trace_id uuid) IS 'A trace the caller may read, as api.retrieval_traces shows it (null for any other id).';


--
-- Name: _transaction_identity(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._transaction_identity() RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._transaction_identity() OWNER TO <migrator>;

--
-- Name: FUNCTION _transaction_identity(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._transaction_identity() IS 'This transaction''s identity on every node working for it (Citus''s distributed transaction id, else backend and start).';


--
-- Name: _unsourced(bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._unsourced(p_fragment_ids bigint[]) RETURNS SETOF bigint
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._unsourced(p_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: _usage_candidates(jsonb); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_candidates(p_candidates jsonb) RETURNS TABLE(fragment_id bigint, included boolean, fused_rank double precision, source text, doc_id bigint)
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_candidates(p_candidates jsonb) OWNER TO <migrator>;

--
-- Name: _usage_days_p95(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_days_p95() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_days_p95() OWNER TO <migrator>;

--
-- Name: _usage_fold(integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_fold(p_limit integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_fold(p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_fold(p_limit integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_fold(p_limit integer) IS 'Count up to p_limit pending traces (all: null) into the usage roll-ups; traces another transaction is folding are skipped.';


--
-- Name: _usage_fold_all(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_fold_all() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_fold_all() OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_fold_all(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_fold_all() IS 'Count every pending trace into the usage roll-ups (waits for concurrent folds).';


--
-- Name: _usage_fold_every(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_fold_every() RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_fold_every() OWNER TO <migrator>;

--
-- Name: _usage_fold_some(integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_fold_some(p_limit integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_fold_some(p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_fold_some(p_limit integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_fold_some(p_limit integer) IS 'Count up to p_limit pending traces (all: null) into the usage roll-ups and say how many; traces another transaction is folding are skipped.';


--
-- Name: _usage_histogram_add(integer[], bigint[], integer[], bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_histogram_add(p_buckets integer[], p_counts bigint[], p_more_buckets integer[], p_more_counts bigint[], OUT buckets integer[], OUT counts bigint[]) RETURNS record
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_histogram_add(p_buckets integer[], p_counts bigint[], p_more_buckets integer[], p_more_counts bigint[], OUT buckets integer[], OUT counts bigint[]) OWNER TO <migrator>;

--
-- Name: _usage_latency(integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_latency(p_bucket integer) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_latency(p_bucket integer) OWNER TO <migrator>;

--
-- Name: _usage_p95(integer[], bigint[]); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_p95(p_buckets integer[], p_counts bigint[]) RETURNS double precision
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_p95(p_buckets integer[], p_counts bigint[]) OWNER TO <migrator>;

--
-- Name: _usage_pend(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_pend() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_pend() OWNER TO <migrator>;

--
-- Name: _usage_rebuild(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_rebuild() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_rebuild() OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_rebuild(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_rebuild() IS 'Count the usage roll-ups again from every retrieval trace.';


--
-- Name: _usage_recount_statements(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_recount_statements(p_source text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_recount_statements(p_source text) OWNER TO <migrator>;

--
-- Name: _usage_settle(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_settle() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_settle() OWNER TO <migrator>;

--
-- Name: _usage_statements(text, integer); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_statements(p_source text, p_sign integer) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_statements(p_source text, p_sign integer) OWNER TO <migrator>;

--
-- Name: _usage_summary(text, jsonb, double precision, integer, bigint, double precision, double precision); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) RETURNS record
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) IS 'What the usage roll-ups keep of one trace, from its request, latency and candidate aggregates (data._usage_trace''s logic).';


--
-- Name: _usage_trace(text, jsonb, jsonb, double precision); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) RETURNS record
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) OWNER TO <migrator>;

--
-- Name: FUNCTION _usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) IS 'What the usage roll-ups keep of one trace (scope ids, latency bucket, empty, below the relevance floor).';


--
-- Name: _usage_track(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_track() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_track() OWNER TO <migrator>;

--
-- Name: _usage_truncate(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._usage_truncate() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._usage_truncate() OWNER TO <migrator>;

--
-- Name: _valid_login(text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._valid_login(p_login text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._valid_login(p_login text) OWNER TO <migrator>;

--
-- Name: contexts; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.contexts (
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    retired_at timestamp with time zone,
    retired_by text,
    CONSTRAINT context_name_format CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'::text)),
    CONSTRAINT contexts_created_at_readable CHECK (data._readable_time(created_at, 'contexts.created_at'::text)),
    CONSTRAINT contexts_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT contexts_retired_at_readable CHECK (data._readable_time(retired_at, 'contexts.retired_at'::text))
);

ALTER TABLE ONLY data.contexts FORCE ROW LEVEL SECURITY;


ALTER TABLE data.contexts OWNER TO <migrator>;

--
-- Name: TABLE contexts; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.contexts IS 'Contexts: named, versioned bundles of fragments in a scope (api.context_create, api.contexts_list); `ctx_<id>@<version>` addresses a version.';


--
-- Name: COLUMN contexts.created_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.contexts.created_by IS 'Principal that created it (it held a write grant on the context''s scope).';


--
-- Name: COLUMN contexts.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.contexts.retired_at IS 'Set by api.context_retire: out of listings and retrieval, still readable by reference (audit).';


--
-- Name: _writable_context(bigint, boolean); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean DEFAULT false) RETURNS data.contexts
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean) OWNER TO <migrator>;

--
-- Name: _writes_subscriber_scope(text, text); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data._writes_subscriber_scope(p_org_id text, p_repo_id text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data._writes_subscriber_scope(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: acl_audit(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_audit() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_audit() OWNER TO <migrator>;

--
-- Name: acl_org(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_org() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_org() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_org(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_org() IS 'The current principal''s org (null: none bound, nothing visible).';


--
-- Name: acl_org_wide(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_org_wide() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_org_wide() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_org_wide(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_org_wide() IS 'True when the current principal holds an org grant (every repo and persona).';


--
-- Name: acl_personas(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_personas() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_personas() OWNER TO <migrator>;

--
-- Name: acl_principal(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_principal() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_principal() OWNER TO <migrator>;

--
-- Name: acl_repos(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_repos() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_repos() OWNER TO <migrator>;

--
-- Name: acl_sessions(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.acl_sessions() RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.acl_sessions() OWNER TO <migrator>;

--
-- Name: FUNCTION acl_sessions(); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.acl_sessions() IS 'Live (unexpired) sessions the current principal holds a grant on.';


--
-- Name: current_principal(); Type: FUNCTION; Schema: data; Owner: <migrator>
--

CREATE FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION current_principal(OUT org_id text, OUT principal_id text); Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) IS 'Org and principal the current transaction acts for (null: nobody).';


--
-- Name: active_model(text, text, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.active_model(p_namespace text, p_name text, p_dims integer) RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.active_model(p_namespace text, p_name text, p_dims integer) OWNER TO <migrator>;

--
-- Name: FUNCTION active_model(p_namespace text, p_name text, p_dims integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.active_model(p_namespace text, p_name text, p_dims integer) IS 'Id of the active model of a namespace, checked against the caller''s model.';


--
-- Name: add_documents(jsonb, extensions.vector[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.add_documents(p_versions jsonb, p_embeddings extensions.vector[] DEFAULT NULL::extensions.vector[]) RETURNS TABLE(doc_id bigint, ordinal integer, fragment_id bigint, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.add_documents(p_versions jsonb, p_embeddings extensions.vector[]) OWNER TO <migrator>;

--
-- Name: FUNCTION add_documents(p_versions jsonb, p_embeddings extensions.vector[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.add_documents(p_versions jsonb, p_embeddings extensions.vector[]) IS 'Write several document versions'' chunks at once (the bound principal needs write grants): what service.add_fragments does for each, in order, one statement per table.';


--
-- Name: add_fragments(bigint, integer, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) RETURNS TABLE(ordinal integer, fragment_id bigint, created boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) IS 'Write one document version''s chunks (the bound principal needs write grants): new fragments or pointers to canonical ones.';


--
-- Name: add_model_vectors(integer, bigint[], jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) IS 'Write one generation''s vectors for existing fragments (an upgrade batch); existing ones are kept.';


--
-- Name: add_persona_vector(integer, text, text, text, text, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) IS 'A persona description''s vector for one generation (an upgrade).';


--
-- Name: authenticate(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.authenticate(p_token text) RETURNS TABLE(org_id text, principal_id text, key_id text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.authenticate(p_token text) OWNER TO <migrator>;

--
-- Name: FUNCTION authenticate(p_token text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.authenticate(p_token text) IS 'Bind the principal of an API key (within the key''s restriction) to the current transaction.';


--
-- Name: authorize_write(text, text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.authorize_write(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) IS 'Raise unless the bound principal may write into this scope; changes nothing.';


--
-- Name: begin_document(text, text, text, text, text, text, text, text, text, text, timestamp with time zone, jsonb, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text DEFAULT NULL::text, p_author text DEFAULT NULL::text, p_source_ts timestamp with time zone DEFAULT NULL::timestamp with time zone, p_metadata jsonb DEFAULT '{}'::jsonb, p_owner text DEFAULT NULL::text, p_owner_source text DEFAULT NULL::text) RETURNS TABLE(doc_id bigint, version integer, changed boolean, rehome jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) OWNER TO <migrator>;

--
-- Name: FUNCTION begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) IS 'Start ingesting a document (the bound principal needs write grants on its scope): no-op when unchanged (and not deleted), else a new version that retires the old pointers; returns near-duplicate pointers of other documents that must be re-homed (see data._retire_sources).';


--
-- Name: begin_documents(text, text, text, text, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) RETURNS TABLE(path text, doc_id bigint, version integer, changed boolean, rehome jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) IS 'service.begin_document for several documents of one scope in one call (an ingestion group): the same rows, the retired fragments deactivated at once, except those holding a text of the documents'' chunk_hashes (service.add_documents, in the same transaction, applies the rule to them).';


--
-- Name: begin_model_upgrade(text, text, text, integer, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer DEFAULT 14) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) OWNER TO <migrator>;

--
-- Name: FUNCTION begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) IS 'Shadow generation of a namespace for a new model, with its HNSW index (or the existing one: upgrades resume).';


--
-- Name: bind_principal(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.bind_principal(p_org_id text, p_principal_id text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.bind_principal(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION bind_principal(p_org_id text, p_principal_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.bind_principal(p_org_id text, p_principal_id text) IS 'Administrators: act as a principal for the rest of this transaction.';


--
-- Name: context_accept(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_accept(p_subscription_id bigint) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamp with time zone, accepted_at timestamp with time zone, accepted_by text, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_accept(p_subscription_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_accept(p_subscription_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_accept(p_subscription_id bigint) IS 'Accept a pending subscription, as a writer of its subscriber scope: from then on that scope reads the bundle it gives.';


--
-- Name: context_add_version(bigint, bigint[], bigint[], text[], text, jsonb, bigint[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_add_version(p_context_id bigint, p_fragment_ids bigint[] DEFAULT '{}'::bigint[], p_doc_ids bigint[] DEFAULT '{}'::bigint[], p_path_globs text[] DEFAULT '{}'::text[], p_note text DEFAULT ''::text, p_built_from jsonb DEFAULT '{}'::jsonb, p_query_fragment_ids bigint[] DEFAULT '{}'::bigint[]) RETURNS TABLE(context_id bigint, ref text, version integer, fragment_count integer, built_from jsonb, note text, created_by text, created_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) IS 'Freeze a new, immutable version of a Context from fragment ids, documents, path globs and what a saved query found (write grant on its scope).';


--
-- Name: context_candidates(text, text[], text, jsonb, jsonb, integer, boolean, text, text, text, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_candidates(p_org_id text, p_refs text[], p_query text DEFAULT NULL::text, p_query_embeddings jsonb DEFAULT '{}'::jsonb, p_fusion jsonb DEFAULT '{"method": "weighted", "dense_weight": 0.5, "lexical_weight": {"code": 0.2}}'::jsonb, p_rrf_k integer DEFAULT 60, p_include_retired boolean DEFAULT false, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text, p_scoped boolean DEFAULT true) RETURNS TABLE(fragment_id bigint, lexical_rank integer, lexical_score double precision, dense_rank integer, dense_similarity double precision, fused_score double precision, doc_id bigint, doc_version integer, path text, anchor text, repo_id text, namespace text, kind text, owner text, heading_path text[], symbol text, text text, token_count integer, chunker_version text, embedding_model text, updated_at timestamp with time zone, lexical_norm double precision, dense_norm double precision, lexical_weight double precision, dense_weight double precision, negative boolean, pin_id bigint, pin_rank integer, persona_similarity double precision, authority double precision, authority_refreshed_at timestamp with time zone, valid_from timestamp with time zone, valid_until timestamp with time zone, reading bytea, profile jsonb, context text, context_ordinal integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) IS 'Members of the named Context versions the caller may read, as retrieval candidates scored from the bundles alone (no statistic of anything else), each with the reference that brought it.';


--
-- Name: context_create(text, text, text, text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text DEFAULT ''::text) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) OWNER TO <migrator>;

--
-- Name: FUNCTION context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) IS 'Create a Context (a named bundle of fragments) in a scope; needs a write grant there.';


--
-- Name: context_retire(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_retire(p_context_id bigint) RETURNS TABLE(context_id bigint, ref text, org_id text, repo_id text, persona_id text, session_id text, name text, description text, created_by text, created_at timestamp with time zone, retired_at timestamp with time zone, latest_version integer, fragment_count integer, subscribed boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_retire(p_context_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_retire(p_context_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_retire(p_context_id bigint) IS 'Retire a Context: out of listings and retrieval, still readable by reference (write grant on its scope).';


--
-- Name: context_subscribe(bigint, text, text, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text DEFAULT NULL::text, p_version integer DEFAULT NULL::integer) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamp with time zone, accepted_at timestamp with time zone, accepted_by text, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) OWNER TO <migrator>;

--
-- Name: FUNCTION context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) IS 'Offer a Context to another org or repo: a revocable grant on the bundle (pinned version, or the newest), never a copy, given once a writer of the subscriber scope accepts it. Needs a write grant on the Context''s scope.';


--
-- Name: context_unsubscribe(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.context_unsubscribe(p_subscription_id bigint) RETURNS TABLE(subscription_id bigint, context_id bigint, ref text, org_id text, version integer, subscriber_org_id text, subscriber_repo_id text, state text, created_by text, created_at timestamp with time zone, accepted_at timestamp with time zone, accepted_by text, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.context_unsubscribe(p_subscription_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION context_unsubscribe(p_subscription_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.context_unsubscribe(p_subscription_id bigint) IS 'Revoke a subscription (its publisher, or a writer of the subscriber scope); the row stays for audit.';


--
-- Name: create_analyst(text, text, text, text, text[], text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[] DEFAULT '{}'::text[], p_display_name text DEFAULT ''::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) OWNER TO <migrator>;

--
-- Name: FUNCTION create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) IS 'Create (or adopt) a login, its human principal and its read grants in one step.';


--
-- Name: create_api_key(text, text, text, bytea, text, timestamp with time zone, boolean, text[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text DEFAULT ''::text, p_expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_read_only boolean DEFAULT false, p_repos text[] DEFAULT NULL::text[]) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text, p_expires_at timestamp with time zone, p_read_only boolean, p_repos text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text, p_expires_at timestamp with time zone, p_read_only boolean, p_repos text[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text, p_expires_at timestamp with time zone, p_read_only boolean, p_repos text[]) IS 'Store a new key (its SHA-256) for a principal, with its expiry and restriction.';


--
-- Name: create_login(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.create_login(p_login text, p_verifier text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.create_login(p_login text, p_verifier text) OWNER TO <migrator>;

--
-- Name: FUNCTION create_login(p_login text, p_verifier text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.create_login(p_login text, p_verifier text) IS 'Create an analyst login (member of contexts_analyst only) from a SCRAM-SHA-256 verifier.';


--
-- Name: create_org(text, text, interval); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.create_org(p_org_id text, p_display_name text DEFAULT ''::text, p_session_ttl interval DEFAULT NULL::interval) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.create_org(p_org_id text, p_display_name text, p_session_ttl interval) OWNER TO <migrator>;

--
-- Name: FUNCTION create_org(p_org_id text, p_display_name text, p_session_ttl interval); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.create_org(p_org_id text, p_display_name text, p_session_ttl interval) IS 'Create (or rename) a tenant org and its partitions.';


--
-- Name: create_principal(text, text, text, text, name); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.create_principal(p_org_id text, p_principal_id text, p_kind text DEFAULT 'agent'::text, p_display_name text DEFAULT ''::text, p_db_role name DEFAULT NULL::name) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) OWNER TO <migrator>;

--
-- Name: FUNCTION create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) IS 'Create or update a principal (agent, human or service), optionally mapped to a login role.';


--
-- Name: delete_document(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.delete_document(p_doc_id bigint) RETURNS TABLE(doc_id bigint, org_id text, path text, version integer, fragments_retired integer, rehome jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.delete_document(p_doc_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION delete_document(p_doc_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.delete_document(p_doc_id bigint) IS 'Delete a document the bound principal may write: its fragments leave retrieval and BM25 at once; versions, sources and traces stay; returns near-duplicate pointers to re-home.';


--
-- Name: disable_principal(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.disable_principal(p_org_id text, p_principal_id text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.disable_principal(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION disable_principal(p_org_id text, p_principal_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.disable_principal(p_org_id text, p_principal_id text) IS 'Disable a principal for good (rows, grants and traces are kept).';


--
-- Name: drop_model_generation(integer, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.drop_model_generation(p_model_id integer, p_force boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.drop_model_generation(p_model_id integer, p_force boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION drop_model_generation(p_model_id integer, p_force boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.drop_model_generation(p_model_id integer, p_force boolean) IS 'Delete a retired (window ended) or shadow generation''s vectors and index; the row stays for traces.';


--
-- Name: drop_retired_models(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.drop_retired_models() RETURNS TABLE(model_id integer, namespace text, name text, generation integer, vectors bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.drop_retired_models() OWNER TO <migrator>;

--
-- Name: FUNCTION drop_retired_models(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.drop_retired_models() IS 'Drop the vectors and index of every retired generation whose window has ended.';


--
-- Name: ensure_scope(text, text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.ensure_scope(p_org_id text, p_repo_id text DEFAULT NULL::text, p_persona_id text DEFAULT NULL::text, p_session_id text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) IS 'Create missing repo/persona/session rows of an existing org.';


--
-- Name: fold_usage(integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.fold_usage(p_limit integer DEFAULT 256) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.fold_usage(p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION fold_usage(p_limit integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.fold_usage(p_limit integer) IS 'Count up to p_limit pending traces into the usage roll-ups, off the request path (the service''s folder); 0 when another fold is under way.';


--
-- Name: grant_scope(text, text, text, text, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text DEFAULT NULL::text, p_can_write boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) IS 'Grant a principal read (and optionally write) on an org, repo, persona or session, or audit on the org.';


--
-- Name: idempotent_record(text, text, integer, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) IS 'Remember a write''s response under its Idempotency-Key in the write''s transaction; false when the key is taken (a concurrent request with it committed first).';


--
-- Name: idempotent_response(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.idempotent_response(p_key text) RETURNS TABLE(request_hash text, status integer, response jsonb, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.idempotent_response(p_key text) OWNER TO <migrator>;

--
-- Name: FUNCTION idempotent_response(p_key text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.idempotent_response(p_key text) IS 'The response an earlier write of the bound principal with this Idempotency-Key got (within 24 hours), and the hash of its request.';


--
-- Name: list_analysts(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.list_analysts(p_org_id text DEFAULT NULL::text) RETURNS TABLE(org_id text, principal_id text, login text, can_login boolean, member_of text[], disabled_at timestamp with time zone, grants text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.list_analysts(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_analysts(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.list_analysts(p_org_id text) IS 'Principals mapped to a login: the login''s state, groups and the principal''s grants.';


--
-- Name: list_api_keys(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.list_api_keys(p_org_id text) RETURNS TABLE(key_id text, principal_id text, label text, created_at timestamp with time zone, last_used_at timestamp with time zone, revoked_at timestamp with time zone, expires_at timestamp with time zone, read_only boolean, repos text[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.list_api_keys(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_api_keys(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.list_api_keys(p_org_id text) IS 'Keys of an org with their limits (never their hashes).';


--
-- Name: list_grants(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.list_grants(p_org_id text) RETURNS TABLE(principal_id text, kind text, scope_kind text, scope_id text, can_write boolean, created_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.list_grants(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION list_grants(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.list_grants(p_org_id text) IS 'Every principal of an org with its grants.';


--
-- Name: match_fragments(text, text, text, text, text[], text[], bigint[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) RETURNS TABLE(ordinal integer, fragment_id bigint, distance integer, exact boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) OWNER TO <migrator>;

--
-- Name: FUNCTION match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) IS 'Which proposed chunks collapse into existing fragments (exact or SimHash distance <= 3).';


--
-- Name: metrics_org_sizes(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.metrics_org_sizes() RETURNS TABLE(org_id text, active_fragments bigint, embeddings_estimated bigint, hnsw_bytes bigint, bm25_blocks_estimated bigint, bm25_bytes bigint, fragment_bytes bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.metrics_org_sizes() OWNER TO <migrator>;

--
-- Name: FUNCTION metrics_org_sizes(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.metrics_org_sizes() IS 'Per-org fragment counts and index sizes for GET /metrics (the service only).';


--
-- Name: model_backlog(integer, bigint, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.model_backlog(p_model_id integer, p_after bigint DEFAULT 0, p_limit integer DEFAULT 64) RETURNS TABLE(fragment_id bigint, org_id text, path text, heading_path text[], text text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.model_backlog(p_model_id integer, p_after bigint, p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION model_backlog(p_model_id integer, p_after bigint, p_limit integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.model_backlog(p_model_id integer, p_after bigint, p_limit integer) IS 'Active fragments still lacking a vector of this generation, in id order.';


--
-- Name: nudge_attempted(bigint, text, integer, text, double precision, interval); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) OWNER TO <migrator>;

--
-- Name: FUNCTION nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) IS 'Record a delivery attempt: 2xx marks the nudge delivered, else it is retried after p_retry_in.';


--
-- Name: nudge_claim(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.nudge_claim(p_org_id text DEFAULT NULL::text) RETURNS TABLE(nudge_id bigint, org_id text, url text, secret text, payload jsonb, attempts integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.nudge_claim(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION nudge_claim(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.nudge_claim(p_org_id text) IS 'Lock and return the next nudge due, with its own org''s webhook URL and secret (the delivery worker''s; never an HTTP answer).';


--
-- Name: nudges_enqueue(text, timestamp with time zone); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.nudges_enqueue(p_org_id text DEFAULT NULL::text, p_as_of timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(org_id text, enqueued integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION nudges_enqueue(p_org_id text, p_as_of timestamp with time zone); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) IS 'Queue one nudge per stale fragment and period for each org with an enabled webhook (idempotent within a period); run by the delivery worker.';


--
-- Name: open_session(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.open_session(p_session_id text) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.open_session(p_session_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION open_session(p_session_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.open_session(p_session_id text) IS 'Open a new session of the bound principal''s org (it needs some write grant), or confirm one it may write to.';


--
-- Name: owner_settings_set(text, text, integer, integer, integer, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.owner_settings_set(p_org_id text, p_default_owner text DEFAULT NULL::text, p_stale_after_days integer DEFAULT NULL::integer, p_window_days integer DEFAULT NULL::integer, p_min_retrievals integer DEFAULT NULL::integer, p_nudge_period_hours integer DEFAULT NULL::integer) RETURNS TABLE(org_id text, default_owner text, stale_after_days integer, window_days integer, min_retrievals integer, nudge_period_hours integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) OWNER TO <migrator>;

--
-- Name: FUNCTION owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) IS 'Set the org''s default owner (empty: none) and staleness thresholds; needs an org write grant.';


--
-- Name: owners_reassign(text, text, text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text DEFAULT NULL::text, p_path_prefix text DEFAULT NULL::text) RETURNS TABLE(reassignment_id bigint, documents integer, fragments integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) IS 'Reassign documents (and their fragments) from one owner to another, optionally within a repo and path prefix; needs a write grant there, and moves a persona''s documents only for a writer of that persona; audited in data.owner_reassignments, no version written.';


--
-- Name: owners_resolve(text, text, bigint[], text[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) IS 'Set the CODEOWNERS owners of documents whose owner was not named (null: the org default); their fragments follow; no version is written.';


--
-- Name: owners_unnamed(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.owners_unnamed(p_org_id text, p_repo_id text) RETURNS TABLE(doc_id bigint, path text, owner text, owner_source text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.owners_unnamed(p_org_id text, p_repo_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION owners_unnamed(p_org_id text, p_repo_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.owners_unnamed(p_org_id text, p_repo_id text) IS 'Live documents of a repo whose owner came from CODEOWNERS or the default (the caller needs a write grant on the repo).';


--
-- Name: persona_backlog(integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.persona_backlog(p_model_id integer) RETURNS TABLE(org_id text, persona_id text, description text, updated_by text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.persona_backlog(p_model_id integer) OWNER TO <migrator>;

--
-- Name: FUNCTION persona_backlog(p_model_id integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.persona_backlog(p_model_id integer) IS 'Persona descriptions an upgrade still has to embed with this generation.';


--
-- Name: persona_vectors_set(text, text, text, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) IS 'Store a persona profile''s description embedded per namespace (the persona term''s evidence with its own fragments); write grant on the persona.';


--
-- Name: pin_add(text, text, text, text, bigint, text, timestamp with time zone); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) OWNER TO <migrator>;

--
-- Name: FUNCTION pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) IS 'Pin a fragment to a scope (write grant there): composed first in every retrieval that sees that scope.';


--
-- Name: pin_remove(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.pin_remove(p_pin_id bigint) RETURNS TABLE(pin_id bigint, org_id text, repo_id text, persona_id text, session_id text, fragment_id bigint, pinned_by text, reason text, created_at timestamp with time zone, expires_at timestamp with time zone, kind text, negative boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.pin_remove(p_pin_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION pin_remove(p_pin_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.pin_remove(p_pin_id bigint) IS 'Remove a pin (write grant on its scope).';


--
-- Name: policy_bypass(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.policy_bypass() RETURNS TABLE(role_name text, superuser boolean, bypassrls boolean, can_login boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.policy_bypass() OWNER TO <migrator>;

--
-- Name: FUNCTION policy_bypass(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.policy_bypass() IS 'Roles that bypass row-level security (superusers, BYPASSRLS).';


--
-- Name: policy_report(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.policy_report() RETURNS TABLE(table_name text, tenant boolean, rls_enabled boolean, rls_forced boolean, policies jsonb, may_select text[], may_insert text[], may_update text[], may_delete text[], partitions integer, unprotected_partitions text[])
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.policy_report() OWNER TO <migrator>;

--
-- Name: FUNCTION policy_report(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.policy_report() IS 'Every table of schema data: tenant data or not, row-level security (enabled, forced), policies, who may select/insert/update/delete.';


--
-- Name: previous_models(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.previous_models() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer, window_ends_at timestamp with time zone, queryable boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.previous_models() OWNER TO <migrator>;

--
-- Name: FUNCTION previous_models(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.previous_models() IS 'Per namespace, the generation the last promotion replaced (not dropped), what loads it, and whether its window still lets it answer.';


--
-- Name: promote_model(text, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.promote_model(p_namespace text, p_generation integer) RETURNS TABLE(model_id integer, name text, generation integer, replaced integer, kept_until timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.promote_model(p_namespace text, p_generation integer) OWNER TO <migrator>;

--
-- Name: FUNCTION promote_model(p_namespace text, p_generation integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.promote_model(p_namespace text, p_generation integer) IS 'Make a fully embedded shadow (or a retired generation within its window) the active one; the replaced one is retired and kept until the window ends.';


--
-- Name: purge_expired_sessions(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.purge_expired_sessions() RETURNS TABLE(org_id text, session_id text, documents bigint, fragments bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.purge_expired_sessions() OWNER TO <migrator>;

--
-- Name: FUNCTION purge_expired_sessions(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.purge_expired_sessions() IS 'Delete expired sessions with their documents, fragments and grants.';


--
-- Name: ranking_profile_delete(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.ranking_profile_delete(p_org_id text, p_persona_id text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.ranking_profile_delete(p_org_id text, p_persona_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile_delete(p_org_id text, p_persona_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.ranking_profile_delete(p_org_id text, p_persona_id text) IS 'Remove the stored ranking profile of an org (persona null) or persona (write grant there); it inherits again.';


--
-- Name: ranking_profile_set(text, text, double precision, double precision, double precision, double precision, double precision, jsonb, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision DEFAULT NULL::double precision, p_w_freshness double precision DEFAULT NULL::double precision, p_w_authority double precision DEFAULT NULL::double precision, p_w_pinned double precision DEFAULT NULL::double precision, p_w_persona double precision DEFAULT NULL::double precision, p_halflife_days jsonb DEFAULT '{}'::jsonb, p_description text DEFAULT NULL::text) RETURNS TABLE(org_id text, persona_id text, w_rerank double precision, w_freshness double precision, w_authority double precision, w_pinned double precision, w_persona double precision, halflife_days jsonb, description text, updated_by text, updated_at timestamp with time zone, effective jsonb)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) OWNER TO <migrator>;

--
-- Name: FUNCTION ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) IS 'Create or replace the blend weights and freshness half-lives of an org (persona null) or a persona (write grant there).';


--
-- Name: reading_backlog(bytea, bigint, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.reading_backlog(p_prefix bytea, p_after bigint DEFAULT 0, p_limit integer DEFAULT 256) RETURNS TABLE(fragment_id bigint, org_id text, text text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) OWNER TO <migrator>;

--
-- Name: FUNCTION reading_backlog(p_prefix bytea, p_after bigint, p_limit integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) IS 'Fragments whose learned-reranker reading is missing or outdated, in id order.';


--
-- Name: reading_backlog_size(bytea); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.reading_backlog_size(p_prefix bytea) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.reading_backlog_size(p_prefix bytea) OWNER TO <migrator>;

--
-- Name: FUNCTION reading_backlog_size(p_prefix bytea); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.reading_backlog_size(p_prefix bytea) IS 'How many fragments lack an up-to-date learned-reranker reading.';


--
-- Name: record_eval_run(text, jsonb, jsonb, timestamp with time zone, text, jsonb, jsonb, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb DEFAULT '[]'::jsonb, p_replays jsonb DEFAULT '[]'::jsonb, p_outcome text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) OWNER TO <migrator>;

--
-- Name: FUNCTION record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) IS 'Store one eval run (run, gate or replay) with its golden-set figures and replayed queries; returns its run_id. The operator''s, called by the eval commands.';


--
-- Name: record_model_replay(integer, uuid, double precision, integer, integer, boolean, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) OWNER TO <migrator>;

--
-- Name: FUNCTION record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) IS 'Record one retrieval replayed on a shadow generation (its org and principal come from the trace).';


--
-- Name: record_trace(text, text, jsonb, jsonb, jsonb, double precision, jsonb, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision DEFAULT NULL::double precision, p_query_vectors jsonb DEFAULT NULL::jsonb, p_left_out jsonb DEFAULT NULL::jsonb) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb) IS 'Record one retrieval (for the bound principal), the fate of each candidate, its query vectors, and what validity windows left out.';


--
-- Name: refresh_authority(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.refresh_authority(p_org_id text DEFAULT NULL::text) RETURNS TABLE(refreshed_at timestamp with time zone, duration_ms double precision, scored integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.refresh_authority(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION refresh_authority(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.refresh_authority(p_org_id text) IS 'Recompute citation authority (data.fragment_authority) for one org or every org, and record when and how long it took.';


--
-- Name: register_embedding_model(text, text, integer); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.register_embedding_model(p_namespace text, p_name text, p_dims integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.register_embedding_model(p_namespace text, p_name text, p_dims integer) OWNER TO <migrator>;

--
-- Name: FUNCTION register_embedding_model(p_namespace text, p_name text, p_dims integer); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.register_embedding_model(p_namespace text, p_name text, p_dims integer) IS 'Active model of a namespace; first use creates it and its HNSW index.';


--
-- Name: revoke_analyst(text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.revoke_analyst(p_org_id text, p_principal_id text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.revoke_analyst(p_org_id text, p_principal_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_analyst(p_org_id text, p_principal_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.revoke_analyst(p_org_id text, p_principal_id text) IS 'End a login''s access (NOLOGIN, sessions ended) and disable its principal; history is kept.';


--
-- Name: revoke_api_key(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.revoke_api_key(p_key_id text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.revoke_api_key(p_key_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_api_key(p_key_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.revoke_api_key(p_key_id text) IS 'Revoke a key for good; false when unknown or already revoked.';


--
-- Name: revoke_scope(text, text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) IS 'Revoke one grant; false when there was none.';


--
-- Name: rule_create(text, text, text, text, text[], text[], timestamp with time zone, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[] DEFAULT '{}'::text[], p_symbol_globs text[] DEFAULT '{}'::text[], p_expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_enabled boolean DEFAULT true) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) IS 'Create a workflow rule: path or symbol globs that bring a Context version into retrievals naming touched files (write grant on the rule''s scope).';


--
-- Name: rule_delete(bigint); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.rule_delete(p_rule_id bigint) RETURNS TABLE(rule_id bigint, org_id text, repo_id text, name text, path_globs text[], symbol_globs text[], context_ref text, created_by text, created_at timestamp with time zone, expires_at timestamp with time zone, enabled boolean, expired boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.rule_delete(p_rule_id bigint) OWNER TO <migrator>;

--
-- Name: FUNCTION rule_delete(p_rule_id bigint); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.rule_delete(p_rule_id bigint) IS 'Delete a workflow rule (write grant on its scope).';


--
-- Name: secondary_models(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.secondary_models() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer, status text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.secondary_models() OWNER TO <migrator>;

--
-- Name: FUNCTION secondary_models(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.secondary_models() IS 'Shadow and not yet dropped retired generations: ingestion writes their vectors too.';


--
-- Name: serving_models(); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.serving_models() RETURNS TABLE(model_id integer, namespace text, name text, source text, dims integer, generation integer)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.serving_models() OWNER TO <migrator>;

--
-- Name: FUNCTION serving_models(); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.serving_models() IS 'Per namespace, the active generation and what loads its model: what a service follows.';


--
-- Name: set_login_password(text, text, text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.set_login_password(p_org_id text, p_principal_id text, p_verifier text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.set_login_password(p_org_id text, p_principal_id text, p_verifier text) OWNER TO <migrator>;

--
-- Name: FUNCTION set_login_password(p_org_id text, p_principal_id text, p_verifier text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.set_login_password(p_org_id text, p_principal_id text, p_verifier text) IS 'Set a new password (as its SCRAM-SHA-256 verifier) on a principal''s login.';


--
-- Name: set_readings(bigint[], text[], bytea[]); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) OWNER TO <migrator>;

--
-- Name: FUNCTION set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) IS 'Write the learned-reranker readings of existing fragments (`contexts rerank readings`).';


--
-- Name: sync_record(text, text, text, text, text, integer, integer, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer DEFAULT 0, p_deleted integer DEFAULT 0, p_full_scan boolean DEFAULT false) RETURNS TABLE(org_id text, repo_id text, commit_sha text, ref text, synced_at timestamp with time zone, synced_by text, written integer, deleted integer, full_scan boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'extensions', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) IS 'Record the commit a repo''s documents were synced to (write grant on the repo); refused (40001) when another sync recorded a different commit since p_previous.';


--
-- Name: unchanged_documents(text, text, text, text, jsonb); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) RETURNS TABLE(path text, doc_id bigint, version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) OWNER TO <migrator>;

--
-- Name: FUNCTION unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) IS 'Which of these documents ([{path, content_hash, kind, metadata, owner}]) the scope holds already as the current, live version with the same text, kind, metadata and named owner (write grants required): they need no new version.';


--
-- Name: webhook_delete(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.webhook_delete(p_org_id text) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.webhook_delete(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_delete(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.webhook_delete(p_org_id text) IS 'Remove the org''s nudge webhook; needs an org write grant.';


--
-- Name: webhook_get(text); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.webhook_get(p_org_id text) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.webhook_get(p_org_id text) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_get(p_org_id text); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.webhook_get(p_org_id text) IS 'The org''s nudge webhook (URL, whether a secret is set, enabled), never the secret; needs an org write grant.';


--
-- Name: webhook_set(text, text, text, boolean); Type: FUNCTION; Schema: service; Owner: <migrator>
--

CREATE FUNCTION service.webhook_set(p_org_id text, p_url text, p_secret text DEFAULT NULL::text, p_enabled boolean DEFAULT true) RETURNS TABLE(org_id text, url text, has_secret boolean, enabled boolean, updated_by text, updated_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS <body>;


ALTER FUNCTION service.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) OWNER TO <migrator>;

--
-- Name: FUNCTION webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean); Type: COMMENT; Schema: service; Owner: <migrator>
--

COMMENT ON FUNCTION service.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) IS 'Set the org''s nudge webhook (http/https, no credentials in the URL) and its signing secret; needs an org write grant; the secret is never read back.';


--
-- Name: _usage_concat(anycompatiblearray); Type: AGGREGATE; Schema: data; Owner: <migrator>
--

CREATE AGGREGATE data._usage_concat(anycompatiblearray) (
    SFUNC = array_cat,
    STYPE = anycompatiblearray
);


ALTER AGGREGATE data._usage_concat(anycompatiblearray) OWNER TO <migrator>;

--
-- Name: fragments; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragments (
    fragment_id bigint CONSTRAINT fragments_fragment_id_not_null1 NOT NULL,
    org_id text CONSTRAINT fragments_org_id_not_null1 NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    doc_id bigint,
    doc_version integer,
    namespace text CONSTRAINT fragments_namespace_not_null1 NOT NULL,
    kind text CONSTRAINT fragments_kind_not_null1 NOT NULL,
    owner text CONSTRAINT fragments_owner_not_null1 NOT NULL,
    heading_path text[] DEFAULT '{}'::text[] CONSTRAINT fragments_heading_path_not_null1 NOT NULL,
    symbol text,
    text text CONSTRAINT fragments_text_not_null1 NOT NULL,
    content_hash text CONSTRAINT fragments_content_hash_not_null1 NOT NULL,
    token_count integer CONSTRAINT fragments_token_count_not_null1 NOT NULL,
    chunker_version text CONSTRAINT fragments_chunker_version_not_null1 NOT NULL,
    simhash bigint CONSTRAINT fragments_simhash_not_null1 NOT NULL,
    simhash_band0 integer GENERATED ALWAYS AS ((((simhash >> 48) & (65535)::bigint))::integer) STORED,
    simhash_band1 integer GENERATED ALWAYS AS ((((simhash >> 32) & (65535)::bigint))::integer) STORED,
    simhash_band2 integer GENERATED ALWAYS AS ((((simhash >> 16) & (65535)::bigint))::integer) STORED,
    simhash_band3 integer GENERATED ALWAYS AS (((simhash & (65535)::bigint))::integer) STORED,
    tsv tsvector CONSTRAINT fragments_tsv_not_null1 NOT NULL,
    active boolean DEFAULT true CONSTRAINT fragments_active_not_null1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT fragments_created_at_not_null1 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() CONSTRAINT fragments_updated_at_not_null1 NOT NULL,
    negative boolean DEFAULT false NOT NULL,
    valid_from timestamp with time zone,
    valid_until timestamp with time zone,
    owner_source text DEFAULT 'document'::text NOT NULL,
    reading bytea,
    CONSTRAINT fragments_created_at_readable CHECK (data._readable_time(created_at, 'fragments.created_at'::text)),
    CONSTRAINT fragments_owner_source_known CHECK ((owner_source = ANY (ARRAY['document'::text, 'codeowners'::text, 'default'::text, 'reassigned'::text, 'none'::text]))),
    CONSTRAINT fragments_token_count_check1 CHECK ((token_count >= 0)),
    CONSTRAINT fragments_updated_at_readable CHECK (data._readable_time(updated_at, 'fragments.updated_at'::text)),
    CONSTRAINT fragments_valid_from_readable CHECK (data._readable_time(valid_from, 'fragments.valid_from'::text)),
    CONSTRAINT fragments_valid_until_readable CHECK (data._readable_time(valid_until, 'fragments.valid_until'::text))
)
PARTITION BY LIST (org_id);

ALTER TABLE ONLY data.fragments FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragments OWNER TO <migrator>;

--
-- Name: TABLE fragments; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragments IS 'Canonical fragments: one decision or one code unit, deduplicated by SimHash. One partition per org.';


--
-- Name: COLUMN fragments.doc_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.doc_id IS 'Document that first produced this text (null once deleted); all sources are in fragment_sources.';


--
-- Name: COLUMN fragments.heading_path; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.heading_path IS 'Headings (prose) or enclosing symbols (code) above the fragment.';


--
-- Name: COLUMN fragments.active; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.active IS 'True while at least one live document version points at the fragment.';


--
-- Name: COLUMN fragments.negative; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.negative IS 'An anti-pattern or known trap (R-DOC-2): returned with negative: true, "do not do this". From the document that wrote the fragment: kind anti-pattern, or "negative": true in its metadata.';


--
-- Name: COLUMN fragments.valid_from; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.valid_from IS 'Current from this time (null: always was); kept by data._refresh_validity.';


--
-- Name: COLUMN fragments.valid_until; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.valid_until IS 'Current until this time, exclusive (null: still is): metadata valid_until, or when a superseding document starts.';


--
-- Name: COLUMN fragments.owner_source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.owner_source IS 'Where the owner came from (as data.documents.owner_source).';


--
-- Name: COLUMN fragments.reading; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragments.reading IS 'The text as the learned reranker reads it (app.retrieve.features.reading); null: read from the text.';


--
-- Name: retrieval_traces; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.retrieval_traces (
    trace_id uuid DEFAULT gen_random_uuid() NOT NULL,
    org_id text NOT NULL,
    principal_id text,
    query text NOT NULL,
    request jsonb NOT NULL,
    pipeline jsonb NOT NULL,
    candidates jsonb NOT NULL,
    duration_ms double precision,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    query_models text[],
    query_vectors extensions.vector[],
    left_out jsonb,
    CONSTRAINT retrieval_traces_created_at_readable CHECK (data._readable_time(created_at, 'retrieval_traces.created_at'::text)),
    CONSTRAINT retrieval_traces_query_vectors_match CHECK ((cardinality(query_models) = cardinality(query_vectors)))
);

ALTER TABLE ONLY data.retrieval_traces FORCE ROW LEVEL SECURITY;


ALTER TABLE data.retrieval_traces OWNER TO <migrator>;

--
-- Name: TABLE retrieval_traces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.retrieval_traces IS 'One row per retrieval: every candidate''s ranks and scores, and why it was or was not included.';


--
-- Name: COLUMN retrieval_traces.query_models; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.retrieval_traces.query_models IS 'Embedding model of each query vector (data.embedding_models.name).';


--
-- Name: COLUMN retrieval_traces.query_vectors; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.retrieval_traces.query_vectors IS 'The query''s vector for each model of query_models, as the service computed it.';


--
-- Name: COLUMN retrieval_traces.left_out; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.retrieval_traces.left_out IS 'What the validity test kept out that the retrieval would otherwise have held: fragments that would have ranked and pins it could not serve, each with its reason and the documents superseding it (null: nothing, or recorded before migration 0025).';


--
-- Name: usage_fragments; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.usage_fragments (
    org_id text NOT NULL,
    principal_id text,
    fragment_id bigint NOT NULL,
    retrievals bigint NOT NULL,
    candidacies bigint NOT NULL,
    best_fused_rank double precision,
    last_retrieved_at timestamp with time zone,
    last_candidate_at timestamp with time zone NOT NULL,
    newest_trace_id uuid NOT NULL,
    source text,
    doc_id bigint,
    CONSTRAINT usage_fragments_last_candidate_at_readable CHECK (data._readable_time(last_candidate_at, 'usage_fragments.last_candidate_at'::text)),
    CONSTRAINT usage_fragments_last_retrieved_at_readable CHECK (data._readable_time(last_retrieved_at, 'usage_fragments.last_retrieved_at'::text))
);

ALTER TABLE ONLY data.usage_fragments FORCE ROW LEVEL SECURITY;


ALTER TABLE data.usage_fragments OWNER TO <migrator>;

--
-- Name: TABLE usage_fragments; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.usage_fragments IS 'Per org, principal and fragment: how often that principal''s retrievals ranked (candidacies) and returned (retrievals) the fragment; kept from data.retrieval_traces by triggers, read through api.fragment_retrievals.';


--
-- Name: COLUMN usage_fragments.newest_trace_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_fragments.newest_trace_id IS 'The newest trace that ranked the fragment (latest created_at, then smallest trace id); source and doc_id are its.';


--
-- Name: usage_pending; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.usage_pending (
    pending_id bigint NOT NULL,
    trace_id uuid NOT NULL,
    org_id text NOT NULL
);

ALTER TABLE ONLY data.usage_pending FORCE ROW LEVEL SECURITY;


ALTER TABLE data.usage_pending OWNER TO <migrator>;

--
-- Name: TABLE usage_pending; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.usage_pending IS 'Retrieval traces written but not yet counted into the usage roll-ups (data._usage_fold folds them in batches; the usage views add them on the fly).';


--
-- Name: usage_pending_traces; Type: VIEW; Schema: data; Owner: <migrator>
--

CREATE VIEW data.usage_pending_traces WITH (security_barrier='true') AS
 SELECT t.trace_id,
    t.org_id,
    t.principal_id,
    t.created_at,
    t.query,
    t.request,
    t.candidates,
    t.duration_ms
   FROM (data.usage_pending p
     CROSS JOIN LATERAL ( SELECT t_1.trace_id,
            t_1.org_id,
            t_1.principal_id,
            t_1.created_at,
            t_1.query,
            t_1.request,
            t_1.candidates,
            t_1.duration_ms
           FROM data.retrieval_traces t_1
          WHERE ((t_1.trace_id = p.trace_id) AND (t_1.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((t_1.principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)))
         LIMIT 1) t)
  WHERE (p.org_id = ( SELECT data.acl_org() AS acl_org));


ALTER VIEW data.usage_pending_traces OWNER TO <migrator>;

--
-- Name: VIEW usage_pending_traces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON VIEW data.usage_pending_traces IS 'The traces not yet counted into the usage roll-ups that the caller may read (the row rule of api.retrieval_traces), for the usage views.';


--
-- Name: fragment_retrievals; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragment_retrievals WITH (security_barrier='true') AS
 WITH me AS MATERIALIZED (
         SELECT whoami.org_id,
            whoami.principal_id,
            whoami.org_wide,
            whoami.repos,
            whoami.personas,
            whoami.sessions,
            whoami.audit
           FROM api.whoami() whoami(org_id, principal_id, org_wide, repos, personas, sessions, audit)
        ), counted AS (
         SELECT u_1.org_id,
            u_1.fragment_id,
            u_1.source,
            u_1.doc_id,
            u_1.retrievals,
            u_1.candidacies,
            u_1.best_fused_rank,
            u_1.last_retrieved_at,
            u_1.last_candidate_at,
            u_1.newest_trace_id
           FROM data.usage_fragments u_1
          WHERE ((u_1.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((u_1.principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)))
        UNION ALL
         SELECT t.org_id,
            c.fragment_id,
            c.source,
            c.doc_id,
            ((c.included IS TRUE))::integer AS int4,
            1,
            c.fused_rank,
                CASE
                    WHEN c.included THEN t.created_at
                    ELSE NULL::timestamp with time zone
                END AS "case",
            t.created_at,
            t.trace_id
           FROM (data.usage_pending_traces t
             CROSS JOIN LATERAL data._usage_candidates(t.candidates) c(fragment_id, included, fused_rank, source, doc_id))
        )
 SELECT u.org_id,
    u.fragment_id,
    (array_agg(u.source ORDER BY u.last_candidate_at DESC, u.newest_trace_id))[1] AS source,
    (array_agg(u.doc_id ORDER BY u.last_candidate_at DESC, u.newest_trace_id))[1] AS doc_id,
    (sum(u.retrievals))::bigint AS retrievals,
    (sum(u.candidacies))::bigint AS candidacies,
    (min(u.best_fused_rank))::integer AS best_fused_rank,
    max(u.last_retrieved_at) AS last_retrieved_at,
    max(u.last_candidate_at) AS last_candidate_at
   FROM ((me
     CROSS JOIN counted u)
     JOIN data.fragments f ON (((f.org_id = u.org_id) AND (f.fragment_id = u.fragment_id))))
  WHERE ((f.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((f.repo_id IS NULL) OR COALESCE(me.org_wide, false) OR (f.repo_id = ANY (COALESCE(me.repos, '{}'::text[])))) AND ((f.persona_id IS NULL) OR COALESCE(me.org_wide, false) OR (f.persona_id = ANY (COALESCE(me.personas, '{}'::text[])))) AND ((f.session_id IS NULL) OR (f.session_id = ANY (COALESCE(me.sessions, '{}'::text[])))))
  GROUP BY u.org_id, u.fragment_id
 OFFSET 0;


ALTER VIEW api.fragment_retrievals OWNER TO <migrator>;

--
-- Name: VIEW fragment_retrievals; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragment_retrievals IS 'Per fragment you may read: how many of the retrievals you may read returned it (retrievals) or ranked it as a candidate (candidacies), and when last. Most retrieved: order by retrievals desc.';


--
-- Name: COLUMN fragment_retrievals.source; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.fragment_retrievals.source IS 'path#anchor the newest retrieval cited it from.';


--
-- Name: document_retrievals; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.document_retrievals WITH (security_invoker='true') AS
 SELECT r.org_id,
    r.doc_id,
    d.path,
    d.kind,
    d.repo_id,
    d.persona_id,
    d.session_id,
    d.current_version,
    (sum(r.retrievals))::bigint AS fragments_returned,
    count(*) FILTER (WHERE (r.retrievals > 0)) AS fragments_retrieved,
    (sum(r.candidacies))::bigint AS candidacies,
    max(r.last_retrieved_at) AS last_retrieved_at
   FROM (api.fragment_retrievals r
     JOIN data.documents d ON (((d.org_id = r.org_id) AND (d.doc_id = r.doc_id))))
  GROUP BY r.org_id, r.doc_id, d.path, d.kind, d.repo_id, d.persona_id, d.session_id, d.current_version;


ALTER VIEW api.document_retrievals OWNER TO <migrator>;

--
-- Name: VIEW document_retrievals; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.document_retrievals IS 'Per document you may read: how often the retrievals you may read returned its fragments. Most retrieved: order by fragments_returned desc.';


--
-- Name: COLUMN document_retrievals.fragments_returned; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.document_retrievals.fragments_returned IS 'Fragments of this document returned, summed over retrievals.';


--
-- Name: COLUMN document_retrievals.fragments_retrieved; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.document_retrievals.fragments_retrieved IS 'Distinct fragments of this document ever returned.';


--
-- Name: document_versions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.document_versions (
    doc_id bigint NOT NULL,
    version integer NOT NULL,
    content_hash text NOT NULL,
    content text NOT NULL,
    language text,
    author text,
    source_ts timestamp with time zone,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    org_id text NOT NULL,
    CONSTRAINT document_versions_created_at_readable CHECK (data._readable_time(created_at, 'document_versions.created_at'::text)),
    CONSTRAINT document_versions_source_ts_readable CHECK (data._readable_time(source_ts, 'document_versions.source_ts'::text)),
    CONSTRAINT document_versions_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.document_versions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.document_versions OWNER TO <migrator>;

--
-- Name: TABLE document_versions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.document_versions IS 'Every distinct content a document has had; a new content hash makes a new version.';


--
-- Name: COLUMN document_versions.org_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.document_versions.org_id IS 'The document''s org (the tenant; Citus distributes by it).';


--
-- Name: document_version_counts; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.document_version_counts WITH (security_invoker='true') AS
 SELECT d.doc_id,
    d.org_id,
    d.repo_id,
    d.persona_id,
    d.session_id,
    d.path,
    d.kind,
    d.current_version,
    count(*) AS versions,
    min(v.created_at) AS first_version_at,
    max(v.created_at) AS last_version_at
   FROM (data.documents d
     JOIN data.document_versions v ON (((v.org_id = d.org_id) AND (v.doc_id = d.doc_id))))
  GROUP BY d.doc_id, d.org_id, d.repo_id, d.persona_id, d.session_id, d.path, d.kind, d.current_version;


ALTER VIEW api.document_version_counts OWNER TO <migrator>;

--
-- Name: VIEW document_version_counts; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.document_version_counts IS 'Documents you may read with their number of stored versions and when the first and last were written. Most versions: order by versions desc.';


--
-- Name: eval_figures; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_figures (
    run_id bigint NOT NULL,
    dataset text NOT NULL,
    split text NOT NULL,
    stage text NOT NULL,
    scope text,
    metric text NOT NULL,
    value double precision,
    queries integer,
    baseline double precision,
    status text,
    waiver text,
    CONSTRAINT eval_figures_check CHECK (((value IS NOT NULL) OR COALESCE((status = 'missing'::text), false))),
    CONSTRAINT eval_figures_queries_check CHECK ((queries >= 0)),
    CONSTRAINT eval_figures_status_check CHECK ((status = ANY (ARRAY['ok'::text, 'improved'::text, 'regressed'::text, 'waived'::text, 'missing'::text])))
);


ALTER TABLE data.eval_figures OWNER TO <migrator>;

--
-- Name: TABLE eval_figures; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_figures IS 'Golden-set figures of an eval run: one per set, stage, query scope and metric; gate runs add the baseline and the check''s status. Global: no tenant data (see 0008).';


--
-- Name: COLUMN eval_figures.scope; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_figures.scope IS 'A query scope label of the labelled set (per-scope breakdown); null: every query of the set.';


--
-- Name: COLUMN eval_figures.value; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_figures.value IS 'The figure measured; null only for a gated figure the run did not measure (status missing).';


--
-- Name: eval_runs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_runs (
    run_id bigint NOT NULL,
    command text NOT NULL,
    pipeline jsonb NOT NULL,
    pipeline_version text GENERATED ALWAYS AS ("left"(md5((pipeline)::text), 12)) STORED NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    outcome text,
    contexts_version text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT eval_runs_command_check CHECK ((command = ANY (ARRAY['run'::text, 'gate'::text, 'replay'::text]))),
    CONSTRAINT eval_runs_finished_at_readable CHECK (data._readable_time(finished_at, 'eval_runs.finished_at'::text)),
    CONSTRAINT eval_runs_options_check CHECK ((jsonb_typeof(options) = 'object'::text)),
    CONSTRAINT eval_runs_outcome_check CHECK ((outcome = ANY (ARRAY['passed'::text, 'failed'::text, 'baseline'::text]))),
    CONSTRAINT eval_runs_pipeline_check CHECK ((jsonb_typeof(pipeline) = 'object'::text)),
    CONSTRAINT eval_runs_started_at_readable CHECK (data._readable_time(started_at, 'eval_runs.started_at'::text))
);


ALTER TABLE data.eval_runs OWNER TO <migrator>;

--
-- Name: TABLE eval_runs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_runs IS 'One row per `contexts eval run|gate|replay`: the pipeline measured, the options, when. Global: no tenant data (see 0008).';


--
-- Name: COLUMN eval_runs.pipeline; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.pipeline IS 'Versions and knobs the figures depend on (chunker, models, dtype, fragment size, BM25 analysis, fusion, reranker).';


--
-- Name: COLUMN eval_runs.pipeline_version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.pipeline_version IS 'Short digest of pipeline: runs with the same value measured the same pipeline.';


--
-- Name: COLUMN eval_runs.outcome; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.outcome IS 'gate: passed, failed, or baseline (the figures were written as the new baseline); null otherwise.';


--
-- Name: COLUMN eval_runs.started_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.started_at IS 'When the command started, by the clock of the machine that ran it.';


--
-- Name: COLUMN eval_runs.finished_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_runs.finished_at IS 'When the run was recorded, by the database''s clock.';


--
-- Name: eval_figures; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_figures AS
 SELECT f.run_id,
    r.command,
    r.finished_at AS measured_at,
    r.pipeline_version,
    f.dataset,
    f.split,
    f.stage,
    f.scope,
    f.metric,
    f.value,
    f.queries,
    f.baseline,
    (f.value - f.baseline) AS delta,
    f.status,
    f.waiver
   FROM (data.eval_figures f
     JOIN data.eval_runs r ON ((r.run_id = f.run_id)));


ALTER VIEW api.eval_figures OWNER TO <migrator>;

--
-- Name: VIEW eval_figures; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_figures IS 'Golden-set figures per eval run, set, stage, query scope (null: all queries) and metric (ndcg@10, mrr@10, recall@10, recall@100); gate runs add baseline, delta and status. Chart value over measured_at.';


--
-- Name: eval_replays; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.eval_replays (
    run_id bigint NOT NULL,
    ordinal integer NOT NULL,
    org_id text NOT NULL,
    principal_id text NOT NULL,
    trace_id uuid,
    origin text NOT NULL,
    query text NOT NULL,
    request jsonb NOT NULL,
    overlap double precision,
    flagged boolean NOT NULL,
    same_order boolean,
    current jsonb DEFAULT '[]'::jsonb NOT NULL,
    candidate jsonb DEFAULT '[]'::jsonb NOT NULL,
    error text,
    CONSTRAINT eval_replays_candidate_check CHECK ((jsonb_typeof(candidate) = 'array'::text)),
    CONSTRAINT eval_replays_current_check CHECK ((jsonb_typeof(current) = 'array'::text)),
    CONSTRAINT eval_replays_ordinal_check CHECK ((ordinal >= 1)),
    CONSTRAINT eval_replays_overlap_check CHECK (((overlap >= (0)::double precision) AND (overlap <= (1)::double precision))),
    CONSTRAINT eval_replays_request_check CHECK ((jsonb_typeof(request) = 'object'::text))
);

ALTER TABLE ONLY data.eval_replays FORCE ROW LEVEL SECURITY;


ALTER TABLE data.eval_replays OWNER TO <migrator>;

--
-- Name: TABLE eval_replays; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.eval_replays IS 'One replayed query of an eval replay run: the top results under the current and the candidate pipeline, their token overlap, flagged or not. Read through api.eval_replay_diffs.';


--
-- Name: COLUMN eval_replays.principal_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_replays.principal_id IS 'Who the query was replayed for (the principal that asked, for a recorded trace).';


--
-- Name: COLUMN eval_replays.trace_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.eval_replays.trace_id IS 'The recorded retrieval replayed; null for a query read from a file.';


--
-- Name: eval_replay_diffs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_replay_diffs WITH (security_barrier='true') AS
 SELECT x.run_id,
    x.finished_at AS replayed_at,
    x.pipeline_version,
    (x.options -> 'candidate'::text) AS candidate_config,
    e.ordinal,
    e.org_id,
    e.principal_id,
    e.trace_id,
    e.origin,
    r.query,
    r.request,
    e.overlap,
    e.flagged,
    e.same_order,
    data._redact_candidates(e.org_id, e.current) AS current,
    data._redact_candidates(e.org_id, e.candidate) AS candidate,
        CASE
            WHEN (r.query IS NOT NULL) THEN e.error
            ELSE NULL::text
        END AS error,
    (r.redacted ||
        CASE
            WHEN ((r.query IS NULL) AND (e.error IS NOT NULL)) THEN ARRAY['error'::text]
            ELSE '{}'::text[]
        END) AS redacted
   FROM ((data.eval_replays e
     JOIN data.eval_runs x ON ((x.run_id = e.run_id)))
     CROSS JOIN LATERAL data._redact_request(e.org_id, e.query, e.request, ( SELECT data.acl_org_wide() AS acl_org_wide), ( SELECT data.acl_repos() AS acl_repos), ( SELECT data.acl_personas() AS acl_personas), ( SELECT data.acl_sessions() AS acl_sessions)) r(query, request, redacted))
  WHERE ((e.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((e.principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)))
 OFFSET 0;


ALTER VIEW api.eval_replay_diffs OWNER TO <migrator>;

--
-- Name: VIEW eval_replay_diffs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_replay_diffs IS 'Queries replayed by contexts eval replay that you may read (replayed for you; your org''s with an audit grant): top results under the current and the candidate pipeline, their token overlap and whether it was flagged, redacted as api.retrieval_traces redacts traces.';


--
-- Name: COLUMN eval_replay_diffs.current; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.current IS 'Top results under the current pipeline, best first: fragment_id, source, final_score, preview; a fragment you may not read keeps only its final_score ("redacted": true).';


--
-- Name: COLUMN eval_replay_diffs.candidate; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.candidate IS 'Top results under the candidate pipeline, as current.';


--
-- Name: COLUMN eval_replay_diffs.redacted; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.eval_replay_diffs.redacted IS 'Fields withheld from you (query, request.query, request.scope.session_id, error, ...); empty when none.';


--
-- Name: eval_runs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.eval_runs AS
 SELECT run_id,
    command,
    started_at,
    finished_at,
    pipeline_version,
    outcome,
    ARRAY( SELECT DISTINCT f.dataset
           FROM data.eval_figures f
          WHERE (f.run_id = r.run_id)
          ORDER BY f.dataset) AS datasets,
    pipeline,
    options,
    contexts_version
   FROM data.eval_runs r;


ALTER VIEW api.eval_runs OWNER TO <migrator>;

--
-- Name: VIEW eval_runs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.eval_runs IS 'Eval runs (contexts eval run, gate, replay): when, which pipeline (pipeline_version groups runs of the same one), which labelled sets, and the gate''s outcome.';


--
-- Name: authority_refreshes; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.authority_refreshes (
    refreshed_at timestamp with time zone NOT NULL,
    duration_ms double precision NOT NULL,
    scored integer NOT NULL,
    CONSTRAINT authority_refreshes_refreshed_at_readable CHECK (data._readable_time(refreshed_at, 'authority_refreshes.refreshed_at'::text))
);


ALTER TABLE data.authority_refreshes OWNER TO <migrator>;

--
-- Name: TABLE authority_refreshes; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.authority_refreshes IS 'Each refresh of data.fragment_authority: when, how long, how many fragments scored (no tenant data).';


--
-- Name: fragment_authority; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_authority (
    org_id text CONSTRAINT fragment_authority_table_org_id_not_null NOT NULL,
    fragment_id bigint CONSTRAINT fragment_authority_table_fragment_id_not_null NOT NULL,
    pagerank double precision CONSTRAINT fragment_authority_table_pagerank_not_null NOT NULL,
    authority double precision CONSTRAINT fragment_authority_table_authority_not_null NOT NULL
);

ALTER TABLE ONLY data.fragment_authority FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_authority OWNER TO <migrator>;

--
-- Name: TABLE fragment_authority; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_authority IS 'Citation PageRank per fragment (damping 0.85), per scope class, normalised to [0, 1]; refreshed per org by api.refresh_authority; no caller role may select it: read through data._authority.';


--
-- Name: fragment_authority; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragment_authority WITH (security_barrier='true') AS
 SELECT a.org_id,
    a.fragment_id,
    a.authority,
    a.pagerank,
    f.repo_id,
    f.persona_id,
    f.session_id,
    f.kind,
    f.active,
    d.path,
    f.heading_path,
    ( SELECT max(r.refreshed_at) AS max
           FROM data.authority_refreshes r) AS refreshed_at
   FROM ((data.fragment_authority a
     JOIN data.fragments f ON (((f.org_id = a.org_id) AND (f.fragment_id = a.fragment_id))))
     LEFT JOIN data.documents d ON (((d.org_id = f.org_id) AND (d.doc_id = f.doc_id))))
  WHERE ((a.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((f.repo_id IS NULL) OR COALESCE(( SELECT data.acl_org_wide() AS acl_org_wide), false) OR (f.repo_id = ANY (COALESCE(( SELECT data.acl_repos() AS acl_repos), '{}'::text[])))) AND ((f.persona_id IS NULL) OR COALESCE(( SELECT data.acl_org_wide() AS acl_org_wide), false) OR (f.persona_id = ANY (COALESCE(( SELECT data.acl_personas() AS acl_personas), '{}'::text[])))) AND ((f.session_id IS NULL) OR (f.session_id = ANY (COALESCE(( SELECT data.acl_sessions() AS acl_sessions), '{}'::text[])))))
 OFFSET 0;


ALTER VIEW api.fragment_authority OWNER TO <migrator>;

--
-- Name: VIEW fragment_authority; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragment_authority IS 'Citation authority of the fragments you may read (refreshed after ingestion: refreshed_at). Top 20: order by authority desc limit 20.';


--
-- Name: fragments_by_owner; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragments_by_owner WITH (security_invoker='true') AS
 WITH aged AS (
         SELECT f.org_id,
            f.owner,
            f.kind,
            f.namespace,
            f.token_count,
            f.updated_at,
                CASE
                    WHEN (f.updated_at > (now() - '30 days'::interval)) THEN 0
                    WHEN (f.updated_at > (now() - '90 days'::interval)) THEN 30
                    WHEN (f.updated_at > (now() - '180 days'::interval)) THEN 90
                    WHEN (f.updated_at > (now() - '365 days'::interval)) THEN 180
                    ELSE 365
                END AS age_from_days
           FROM data.fragments f
          WHERE f.active
        )
 SELECT org_id,
    owner,
    kind,
    namespace,
        CASE age_from_days
            WHEN 0 THEN 'under 30 days'::text
            WHEN 30 THEN '30 to 90 days'::text
            WHEN 90 THEN '90 to 180 days'::text
            WHEN 180 THEN '180 to 365 days'::text
            ELSE 'over a year'::text
        END AS age,
    age_from_days,
    count(*) AS fragments,
    sum(token_count) AS tokens,
    min(updated_at) AS oldest_update,
    max(updated_at) AS newest_update
   FROM aged a
  GROUP BY org_id, owner, kind, namespace, age_from_days;


ALTER VIEW api.fragments_by_owner OWNER TO <migrator>;

--
-- Name: VIEW fragments_by_owner; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragments_by_owner IS 'Active fragments you may read per org, owner, kind, namespace and age bucket (since last written; age_from_days sorts the buckets: 0, 30, 90, 180, 365).';


--
-- Name: fragment_sources; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_sources (
    fragment_id bigint NOT NULL,
    doc_id bigint NOT NULL,
    doc_version integer NOT NULL,
    ordinal integer NOT NULL,
    anchor text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    content_hash text NOT NULL,
    retired_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    org_id text NOT NULL,
    CONSTRAINT fragment_sources_created_at_readable CHECK (data._readable_time(created_at, 'fragment_sources.created_at'::text)),
    CONSTRAINT fragment_sources_retired_at_readable CHECK (data._readable_time(retired_at, 'fragment_sources.retired_at'::text))
);

ALTER TABLE ONLY data.fragment_sources FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_sources OWNER TO <migrator>;

--
-- Name: TABLE fragment_sources; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_sources IS 'Where each fragment occurs: one canonical fragment, many source pointers.';


--
-- Name: COLUMN fragment_sources.content_hash; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_sources.content_hash IS 'Hash of this source''s own text: equal to the fragment''s for an exact pointer, different for a near-duplicate.';


--
-- Name: COLUMN fragment_sources.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_sources.retired_at IS 'Set when a newer document version replaces this one.';


--
-- Name: fragments_never_retrieved; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.fragments_never_retrieved WITH (security_invoker='true') AS
 SELECT f.fragment_id,
    f.org_id,
    f.repo_id,
    f.persona_id,
    f.session_id,
    f.namespace,
    f.kind,
    f.owner,
    f.token_count,
    f.created_at,
    f.updated_at,
    COALESCE(r.candidacies, (0)::bigint) AS candidacies,
    ( SELECT d.path
           FROM (data.fragment_sources s
             JOIN data.documents d ON (((d.org_id = s.org_id) AND (d.doc_id = s.doc_id))))
          WHERE ((s.fragment_id = f.fragment_id) AND (s.retired_at IS NULL))
          ORDER BY (s.content_hash = f.content_hash) DESC, s.created_at DESC, s.doc_id, s.ordinal
         LIMIT 1) AS path
   FROM (data.fragments f
     LEFT JOIN api.fragment_retrievals r ON (((r.fragment_id = f.fragment_id) AND (r.org_id = f.org_id))))
  WHERE (f.active AND (COALESCE(r.retrievals, (0)::bigint) = 0));


ALTER VIEW api.fragments_never_retrieved OWNER TO <migrator>;

--
-- Name: VIEW fragments_never_retrieved; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.fragments_never_retrieved IS 'Active fragments you may read that no retrieval you may read returned (your own retrievals; your org''s with an audit grant). candidacies: how often one was ranked but not returned.';


--
-- Name: near_duplicate_clusters; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.near_duplicate_clusters AS
SELECT
    NULL::bigint AS fragment_id,
    NULL::text AS org_id,
    NULL::text AS repo_id,
    NULL::text AS persona_id,
    NULL::text AS session_id,
    NULL::text AS namespace,
    NULL::text AS kind,
    NULL::text AS owner,
    NULL::bigint AS sources,
    NULL::bigint AS exact_sources,
    NULL::bigint AS near_sources,
    NULL::bigint AS documents,
    NULL::text[] AS paths;


ALTER VIEW api.near_duplicate_clusters OWNER TO <migrator>;

--
-- Name: VIEW near_duplicate_clusters; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.near_duplicate_clusters IS 'Near-duplicate clusters deduplication collapsed: each canonical fragment you may read with more than one live source (exact copies and near-duplicates, Hamming distance <= 3), and the paths of their documents.';


--
-- Name: COLUMN near_duplicate_clusters.paths; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.near_duplicate_clusters.paths IS 'Paths of the documents holding the text (those you may read).';


--
-- Name: near_duplicate_pairs; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.near_duplicate_pairs WITH (security_invoker='true') AS
 WITH banded AS (
         SELECT a_1.fragment_id AS a_id,
            b_1.fragment_id AS b_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band0 = a_1.simhash_band0) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band1 = a_1.simhash_band1) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band2 = a_1.simhash_band2) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        UNION
         SELECT a_1.fragment_id,
            b_1.fragment_id,
            a_1.org_id
           FROM (data.fragments a_1
             JOIN data.fragments b_1 ON (((b_1.org_id = a_1.org_id) AND (b_1.simhash_band3 = a_1.simhash_band3) AND (b_1.fragment_id > a_1.fragment_id))))
          WHERE (a_1.active AND b_1.active)
        )
 SELECT p.org_id,
    a.fragment_id,
    b.fragment_id AS near_fragment_id,
    (bit_count(((a.simhash # b.simhash))::bit(64)))::integer AS distance,
        CASE
            WHEN (a.namespace <> b.namespace) THEN 'different namespace'::text
            WHEN (((a.repo_id IS DISTINCT FROM b.repo_id) OR (a.persona_id IS DISTINCT FROM b.persona_id)) OR (a.session_id IS DISTINCT FROM b.session_id)) THEN 'different scope'::text
            ELSE 'same scope'::text
        END AS why_not_collapsed,
    a.namespace,
    a.repo_id,
    a.persona_id,
    a.session_id,
    b.namespace AS near_namespace,
    b.repo_id AS near_repo_id,
    b.persona_id AS near_persona_id,
    b.session_id AS near_session_id
   FROM ((banded p
     JOIN data.fragments a ON (((a.fragment_id = p.a_id) AND (a.org_id = p.org_id))))
     JOIN data.fragments b ON (((b.fragment_id = p.b_id) AND (b.org_id = p.org_id))))
  WHERE (bit_count(((a.simhash # b.simhash))::bit(64)) <= 3);


ALTER VIEW api.near_duplicate_pairs OWNER TO <migrator>;

--
-- Name: VIEW near_duplicate_pairs; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.near_duplicate_pairs IS 'Pairs of active fragments you may read within SimHash Hamming distance 3 that deduplication kept apart (another scope or namespace: it never collapses across them), e.g. a repo copying org-wide text.';


--
-- Name: readable_traces; Type: VIEW; Schema: data; Owner: <migrator>
--

CREATE VIEW data.readable_traces WITH (security_barrier='true') AS
 SELECT trace_id,
    org_id,
    principal_id,
    query,
    request,
    pipeline,
    candidates,
    duration_ms,
    created_at,
    query_models,
    query_vectors,
    left_out,
    ( SELECT data.acl_org_wide() AS acl_org_wide) AS org_wide,
    ( SELECT data.acl_repos() AS acl_repos) AS repos,
    ( SELECT data.acl_personas() AS acl_personas) AS personas,
    ( SELECT data.acl_sessions() AS acl_sessions) AS sessions
   FROM data.retrieval_traces t
  WHERE ((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)));


ALTER VIEW data.readable_traces OWNER TO <migrator>;

--
-- Name: VIEW readable_traces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON VIEW data.readable_traces IS 'The stored rows of the traces the caller may read, with its read grants; read behind a fence (api.retrieval_traces) or by id (api.get_trace).';


--
-- Name: query_vectors; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.query_vectors AS
 SELECT t.trace_id,
    t.org_id,
    t.principal_id,
    t.created_at,
    r.query,
    v.model,
    v.embedding
   FROM ((( SELECT readable_traces.trace_id,
            readable_traces.org_id,
            readable_traces.principal_id,
            readable_traces.query,
            readable_traces.request,
            readable_traces.pipeline,
            readable_traces.candidates,
            readable_traces.duration_ms,
            readable_traces.created_at,
            readable_traces.query_models,
            readable_traces.query_vectors,
            readable_traces.left_out,
            readable_traces.org_wide,
            readable_traces.repos,
            readable_traces.personas,
            readable_traces.sessions
           FROM data.readable_traces
         OFFSET 0) t
     CROSS JOIN LATERAL data._redact_request(t.org_id, t.query, t.request, t.org_wide, t.repos, t.personas, t.sessions) r(query, request, redacted))
     CROSS JOIN LATERAL UNNEST(t.query_models, t.query_vectors) v(model, embedding))
  WHERE (r.query IS NOT NULL);


ALTER VIEW api.query_vectors OWNER TO <migrator>;

--
-- Name: VIEW query_vectors; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.query_vectors IS 'Query vectors of the traces whose query the caller may read (api.retrieval_traces), one row per trace and embedding model; api.retrieve uses the newest of a query text.';


--
-- Name: COLUMN query_vectors.model; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.query_vectors.model IS 'The embedding model (data.embedding_models.name) that computed the vector.';


--
-- Name: COLUMN query_vectors.embedding; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.query_vectors.embedding IS 'The query''s vector as the service searched with it.';


--
-- Name: retrieval_traces; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrieval_traces AS
 SELECT trace_id,
    org_id,
    principal_id,
    (data._redact_request(org_id, query, request, org_wide, repos, personas, sessions)).query AS query,
    (data._redact_request(org_id, query, request, org_wide, repos, personas, sessions)).request AS request,
    (data._redact_pipeline(pipeline, (data._redact_request(org_id, query, request, org_wide, repos, personas, sessions)).redacted)).pipeline AS pipeline,
    data._redact_candidates(org_id, candidates) AS candidates,
    duration_ms,
    created_at,
    (data._redact_pipeline(pipeline, (data._redact_request(org_id, query, request, org_wide, repos, personas, sessions)).redacted)).redacted AS redacted,
    data._redact_candidates(org_id, COALESCE(left_out, '[]'::jsonb)) AS left_out
   FROM ( SELECT readable_traces.trace_id,
            readable_traces.org_id,
            readable_traces.principal_id,
            readable_traces.query,
            readable_traces.request,
            readable_traces.pipeline,
            readable_traces.candidates,
            readable_traces.duration_ms,
            readable_traces.created_at,
            readable_traces.query_models,
            readable_traces.query_vectors,
            readable_traces.left_out,
            readable_traces.org_wide,
            readable_traces.repos,
            readable_traces.personas,
            readable_traces.sessions
           FROM data.readable_traces
         OFFSET 0) t;


ALTER VIEW api.retrieval_traces OWNER TO <migrator>;

--
-- Name: VIEW retrieval_traces; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrieval_traces IS 'Retrieval traces the caller may read (its own; its org''s with an audit grant), each redacted to what its grants let it read now: see redacted, and candidates[].redacted.';


--
-- Name: COLUMN retrieval_traces.query; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.query IS 'The query; null when withheld (then listed in redacted).';


--
-- Name: COLUMN retrieval_traces.request; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.request IS 'The request body; a scope id the caller holds no grant on is null and listed in redacted, with the query.';


--
-- Name: COLUMN retrieval_traces.pipeline; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.pipeline IS 'Versions and knobs the retrieval ran with; the ranking profile of a persona the caller holds no grant on is null (listed in redacted).';


--
-- Name: COLUMN retrieval_traces.candidates; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.candidates IS 'Each candidate''s ranks, scores and fate; one whose fragment the caller may not read has "redacted": true and nothing that identifies it.';


--
-- Name: COLUMN retrieval_traces.redacted; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.redacted IS 'Fields withheld from this caller (query, request.query, request.scope.session_id, pipeline.profile, ...); empty when none.';


--
-- Name: COLUMN retrieval_traces.left_out; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_traces.left_out IS 'What validity windows kept out that would otherwise have ranked, and the pins the retrieval could not serve, each with its reason and the documents superseding it; redacted like the candidates.';


--
-- Name: retrieval_summaries; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrieval_summaries WITH (security_invoker='true') AS
 WITH summarized AS (
         SELECT t.trace_id,
            t.org_id,
            t.principal_id,
            t.created_at,
            t.query,
            ((t.request -> 'scope'::text) ->> 'repo_id'::text) AS repo_id,
            ((t.request -> 'scope'::text) ->> 'persona_id'::text) AS persona_id,
            ((t.request -> 'scope'::text) ->> 'session_id'::text) AS session_id,
            (cardinality(t.redacted) > 0) AS withheld,
            COALESCE(data._json_number((t.request -> 'min_score'::text)), (0.0)::double precision) AS min_score,
            COALESCE(data._json_number((t.request -> 'min_relevance'::text)), (0.0)::double precision) AS min_relevance,
            c.candidates,
            c.included,
            c.best_score,
            c.best_relevance,
            t.duration_ms
           FROM (api.retrieval_traces t
             CROSS JOIN LATERAL ( SELECT (count(*))::integer AS candidates,
                    (count(*) FILTER (WHERE ((e.value ->> 'included'::text) = 'true'::text)))::integer AS included,
                    max(data._json_number((e.value -> 'final_score'::text))) AS best_score,
                    max(data._json_number((e.value -> 'relevance'::text))) AS best_relevance
                   FROM jsonb_array_elements(t.candidates) e(value)) c)
        )
 SELECT trace_id,
    org_id,
    principal_id,
    created_at,
    query,
    repo_id,
    persona_id,
    session_id,
    withheld,
    min_score,
    min_relevance,
        CASE
            WHEN (min_relevance > (0)::double precision) THEN min_relevance
            ELSE (0.3)::double precision
        END AS relevance_floor,
    candidates,
    included,
    best_score,
    best_relevance,
        CASE
            WHEN (candidates = 0) THEN true
            WHEN (best_relevance IS NULL) THEN NULL::boolean
            ELSE (best_relevance <
            CASE
                WHEN (min_relevance > (0)::double precision) THEN min_relevance
                ELSE (0.3)::double precision
            END)
        END AS nothing_above_floor,
    duration_ms
   FROM summarized s;


ALTER VIEW api.retrieval_summaries OWNER TO <migrator>;

--
-- Name: VIEW retrieval_summaries; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrieval_summaries IS 'One row per retrieval trace you may read (api.retrieval_traces): who asked, when, the scope, candidates found and included, best final score and best relevance, and whether any candidate reached the relevance floor.';


--
-- Name: COLUMN retrieval_summaries.withheld; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.withheld IS 'True when the request named a scope you hold no grant on now: its query and those scope ids are null (api.retrieval_traces.redacted).';


--
-- Name: COLUMN retrieval_summaries.relevance_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.relevance_floor IS 'The request''s min_relevance when it set one, else 0.3 (docs/adr/0009-absolute-relevance.md).';


--
-- Name: COLUMN retrieval_summaries.best_relevance; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.best_relevance IS 'Best absolute relevance among the ranked candidates (null: none ranked, or a trace from before relevance was recorded).';


--
-- Name: COLUMN retrieval_summaries.nothing_above_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrieval_summaries.nothing_above_floor IS 'No ranked candidate reached relevance_floor (true when nothing was found at all; null for a trace that recorded no relevance).';


--
-- Name: usage_below_floor; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.usage_below_floor (
    trace_id uuid NOT NULL,
    org_id text NOT NULL,
    principal_id text,
    created_at timestamp with time zone NOT NULL,
    query text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    foreign_org boolean NOT NULL,
    relevance_floor double precision NOT NULL,
    best_relevance double precision,
    best_score double precision,
    candidates integer NOT NULL,
    CONSTRAINT usage_below_floor_created_at_readable CHECK (data._readable_time(created_at, 'usage_below_floor.created_at'::text))
);

ALTER TABLE ONLY data.usage_below_floor FORCE ROW LEVEL SECURITY;


ALTER TABLE data.usage_below_floor OWNER TO <migrator>;

--
-- Name: TABLE usage_below_floor; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.usage_below_floor IS 'The traces in which no candidate reached the relevance floor (or that found nothing), without their candidates; kept from data.retrieval_traces by triggers, read through api.retrievals_below_floor.';


--
-- Name: retrievals_below_floor; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrievals_below_floor WITH (security_barrier='true') AS
 WITH me AS MATERIALIZED (
         SELECT whoami.org_id,
            whoami.principal_id,
            whoami.org_wide,
            whoami.repos,
            whoami.personas,
            whoami.sessions,
            whoami.audit
           FROM api.whoami() whoami(org_id, principal_id, org_wide, repos, personas, sessions, audit)
        ), listed AS (
         SELECT b.trace_id,
            b.org_id,
            b.principal_id,
            b.created_at,
            b.query,
            b.repo_id,
            b.persona_id,
            b.session_id,
            b.foreign_org,
            b.relevance_floor,
            b.best_relevance,
            b.best_score,
            b.candidates
           FROM data.usage_below_floor b
          WHERE ((b.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((b.principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)))
        UNION ALL
         SELECT t.trace_id,
            t.org_id,
            t.principal_id,
            t.created_at,
            t.query,
            d.repo_id,
            d.persona_id,
            d.session_id,
            d.foreign_org,
            d.relevance_floor,
            d.best_relevance,
            d.best_score,
            d.candidates
           FROM (data.usage_pending_traces t
             CROSS JOIN LATERAL data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d(repo_id, persona_id, session_id, foreign_org, latency_bucket, empty, below_floor, relevance_floor, best_relevance, best_score, candidates))
          WHERE d.below_floor
        ), visible AS (
         SELECT b.trace_id,
            b.org_id,
            b.principal_id,
            b.created_at,
            b.query,
            b.repo_id,
            b.persona_id,
            b.session_id,
            b.foreign_org,
            b.relevance_floor,
            b.best_relevance,
            b.best_score,
            b.candidates,
            (b.foreign_org OR ((b.repo_id IS NOT NULL) AND (NOT (COALESCE(me.org_wide, false) OR (b.repo_id = ANY (COALESCE(me.repos, '{}'::text[])))))) OR ((b.persona_id IS NOT NULL) AND (NOT (COALESCE(me.org_wide, false) OR (b.persona_id = ANY (COALESCE(me.personas, '{}'::text[])))))) OR ((b.session_id IS NOT NULL) AND (NOT (b.session_id = ANY (COALESCE(me.sessions, '{}'::text[])))))) AS withheld,
            COALESCE(me.org_wide, false) AS org_wide,
            me.repos,
            me.personas,
            me.sessions
           FROM (me
             CROSS JOIN listed b)
        )
 SELECT trace_id,
    org_id,
    principal_id,
    created_at,
        CASE
            WHEN withheld THEN NULL::text
            ELSE query
        END AS query,
        CASE
            WHEN (withheld AND (repo_id IS NOT NULL) AND (NOT (org_wide OR (repo_id = ANY (COALESCE(repos, '{}'::text[])))))) THEN NULL::text
            ELSE repo_id
        END AS repo_id,
        CASE
            WHEN (withheld AND (persona_id IS NOT NULL) AND (NOT (org_wide OR (persona_id = ANY (COALESCE(personas, '{}'::text[])))))) THEN NULL::text
            ELSE persona_id
        END AS persona_id,
        CASE
            WHEN (withheld AND (session_id IS NOT NULL) AND (NOT (session_id = ANY (COALESCE(sessions, '{}'::text[]))))) THEN NULL::text
            ELSE session_id
        END AS session_id,
    withheld,
    relevance_floor,
    best_relevance,
    best_score,
    candidates
   FROM visible v
 OFFSET 0;


ALTER VIEW api.retrievals_below_floor OWNER TO <migrator>;

--
-- Name: VIEW retrievals_below_floor; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrievals_below_floor IS 'Retrievals you may read in which no candidate reached the relevance floor (the request''s min_relevance, else 0.3), or that found nothing. For another floor: api.retrieval_summaries where best_relevance < x.';


--
-- Name: usage_days; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.usage_days (
    org_id text NOT NULL,
    day date NOT NULL,
    principal_id text,
    repo_id text,
    persona_id text,
    session_id text,
    foreign_org boolean NOT NULL,
    retrievals bigint NOT NULL,
    empty bigint NOT NULL,
    below_floor bigint NOT NULL,
    duration_sum double precision NOT NULL,
    timed bigint NOT NULL,
    latency_buckets integer[] NOT NULL,
    latency_counts bigint[] NOT NULL,
    p95_ms double precision,
    CONSTRAINT usage_days_day_readable CHECK (data._readable_time((day)::timestamp with time zone, 'usage_days.day'::text))
);

ALTER TABLE ONLY data.usage_days FORCE ROW LEVEL SECURITY;


ALTER TABLE data.usage_days OWNER TO <migrator>;

--
-- Name: TABLE usage_days; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.usage_days IS 'Retrievals per UTC day, org, principal and requested scope, with their latency histogram; kept from data.retrieval_traces by triggers, read through api.retrievals_per_day.';


--
-- Name: COLUMN usage_days.foreign_org; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.foreign_org IS 'The request''s scope named an org other than the trace''s (every reader sees it withheld).';


--
-- Name: COLUMN usage_days.below_floor; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.below_floor IS 'Retrievals in which no candidate reached the relevance floor, or that found nothing.';


--
-- Name: COLUMN usage_days.timed; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.timed IS 'Retrievals with a duration recorded (the sum of latency_counts).';


--
-- Name: COLUMN usage_days.latency_buckets; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.latency_buckets IS 'The latency buckets that hold retrievals, ascending: floor(ln(duration_ms) / ln(1.02)) (durations under 1 us count as 1 us).';


--
-- Name: COLUMN usage_days.latency_counts; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.latency_counts IS 'Retrievals in each bucket of latency_buckets (same positions).';


--
-- Name: COLUMN usage_days.p95_ms; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.usage_days.p95_ms IS 'The 95th percentile of the latency read from the buckets (data._usage_p95), kept by a trigger.';


--
-- Name: retrievals_per_day; Type: VIEW; Schema: api; Owner: <migrator>
--

CREATE VIEW api.retrievals_per_day WITH (security_barrier='true') AS
 WITH me AS MATERIALIZED (
         SELECT whoami.org_id,
            whoami.principal_id,
            whoami.org_wide,
            whoami.repos,
            whoami.personas,
            whoami.sessions,
            whoami.audit
           FROM api.whoami() whoami(org_id, principal_id, org_wide, repos, personas, sessions, audit)
        ), counted AS (
         SELECT u.day,
            u.org_id,
            u.principal_id,
            u.repo_id,
            u.persona_id,
            u.session_id,
            u.foreign_org,
            u.retrievals,
            u.empty,
            u.below_floor,
            u.duration_sum,
            u.timed,
            u.latency_buckets,
            u.latency_counts,
            u.p95_ms,
            false AS pending
           FROM data.usage_days u
          WHERE ((u.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((u.principal_id = ( SELECT data.acl_principal() AS acl_principal)) OR ( SELECT data.acl_audit() AS acl_audit)))
        UNION ALL
         SELECT ((t.created_at AT TIME ZONE 'UTC'::text))::date AS timezone,
            t.org_id,
            t.principal_id,
            d.repo_id,
            d.persona_id,
            d.session_id,
            d.foreign_org,
            1,
            (d.empty)::integer AS empty,
            ((d.below_floor IS TRUE))::integer AS int4,
            COALESCE(t.duration_ms, (0)::double precision) AS "coalesce",
            ((d.latency_bucket IS NOT NULL))::integer AS int4,
                CASE
                    WHEN (d.latency_bucket IS NULL) THEN '{}'::integer[]
                    ELSE ARRAY[d.latency_bucket]
                END AS "array",
                CASE
                    WHEN (d.latency_bucket IS NULL) THEN '{}'::bigint[]
                    ELSE ARRAY[(1)::bigint]
                END AS "array",
            NULL::double precision,
            true
           FROM (data.usage_pending_traces t
             CROSS JOIN LATERAL data._usage_trace(t.org_id, t.request, t.candidates, t.duration_ms) d(repo_id, persona_id, session_id, foreign_org, latency_bucket, empty, below_floor, relevance_floor, best_relevance, best_score, candidates))
        ), visible AS (
         SELECT u.day,
            u.org_id,
            u.principal_id,
            u.repo_id,
            u.persona_id,
            u.session_id,
            u.foreign_org,
            u.retrievals,
            u.empty,
            u.below_floor,
            u.duration_sum,
            u.timed,
            u.latency_buckets,
            u.latency_counts,
            u.p95_ms,
            u.pending,
            ((u.repo_id IS NOT NULL) AND (NOT (COALESCE(me.org_wide, false) OR (u.repo_id = ANY (COALESCE(me.repos, '{}'::text[])))))) AS repo_hidden,
            ((u.persona_id IS NOT NULL) AND (NOT (COALESCE(me.org_wide, false) OR (u.persona_id = ANY (COALESCE(me.personas, '{}'::text[])))))) AS persona_hidden,
            ((u.session_id IS NOT NULL) AND (NOT (u.session_id = ANY (COALESCE(me.sessions, '{}'::text[]))))) AS session_hidden
           FROM (me
             CROSS JOIN counted u)
        ), per_group AS (
         SELECT v.day,
            v.org_id,
            v.principal_id,
                CASE
                    WHEN v.repo_hidden THEN NULL::text
                    ELSE v.repo_id
                END AS repo_id,
                CASE
                    WHEN v.persona_hidden THEN NULL::text
                    ELSE v.persona_id
                END AS persona_id,
                CASE
                    WHEN v.session_hidden THEN NULL::text
                    ELSE v.session_id
                END AS session_id,
            (v.foreign_org OR v.repo_hidden OR v.persona_hidden OR v.session_hidden) AS withheld,
            count(*) AS merged,
            (sum(v.retrievals))::bigint AS retrievals,
            (sum(v.empty))::bigint AS empty,
            (sum(v.below_floor))::bigint AS nothing_above_floor,
            (sum(v.duration_sum) / (NULLIF(sum(v.timed), (0)::numeric))::double precision) AS mean_ms,
            min(v.p95_ms) AS p95_ms,
            bool_or(v.pending) AS pending,
            data._usage_concat(v.latency_buckets) AS latency_buckets,
            data._usage_concat(v.latency_counts) AS latency_counts
           FROM visible v
          GROUP BY v.day, v.org_id, v.principal_id,
                CASE
                    WHEN v.repo_hidden THEN NULL::text
                    ELSE v.repo_id
                END,
                CASE
                    WHEN v.persona_hidden THEN NULL::text
                    ELSE v.persona_id
                END,
                CASE
                    WHEN v.session_hidden THEN NULL::text
                    ELSE v.session_id
                END, (v.foreign_org OR v.repo_hidden OR v.persona_hidden OR v.session_hidden)
        )
 SELECT day,
    org_id,
    principal_id,
    repo_id,
    persona_id,
    session_id,
    withheld,
    retrievals,
    empty,
    nothing_above_floor,
    mean_ms,
        CASE
            WHEN ((merged = 1) AND (NOT pending)) THEN p95_ms
            ELSE data._usage_p95(latency_buckets, latency_counts)
        END AS p95_ms
   FROM per_group g
 OFFSET 0;


ALTER VIEW api.retrievals_per_day OWNER TO <migrator>;

--
-- Name: VIEW retrievals_per_day; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON VIEW api.retrievals_per_day IS 'Retrievals you may read per UTC day, org, principal and requested scope (repo, persona, session; withheld: a scope you hold no grant on), with empty answers and latency.';


--
-- Name: COLUMN retrievals_per_day.empty; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrievals_per_day.empty IS 'Retrievals that returned no fragment.';


--
-- Name: COLUMN retrievals_per_day.p95_ms; Type: COMMENT; Schema: api; Owner: <migrator>
--

COMMENT ON COLUMN api.retrievals_per_day.p95_ms IS '95th percentile of the latency, from buckets 2% wide (within 1% of the exact value).';


--
-- Name: api_keys; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.api_keys (
    key_id text NOT NULL,
    org_id text NOT NULL,
    principal_id text NOT NULL,
    key_hash bytea NOT NULL,
    label text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    expires_at timestamp with time zone,
    read_only boolean DEFAULT false NOT NULL,
    repos text[],
    CONSTRAINT api_keys_created_at_readable CHECK (data._readable_time(created_at, 'api_keys.created_at'::text)),
    CONSTRAINT api_keys_expire_after_creation CHECK (((expires_at IS NULL) OR (expires_at > created_at))),
    CONSTRAINT api_keys_expires_at_readable CHECK (data._readable_time(expires_at, 'api_keys.expires_at'::text)),
    CONSTRAINT api_keys_key_hash_check CHECK ((length(key_hash) = 32)),
    CONSTRAINT api_keys_key_id_check CHECK ((key_id ~ '^[a-f0-9]{12}$'::text)),
    CONSTRAINT api_keys_last_used_at_readable CHECK (data._readable_time(last_used_at, 'api_keys.last_used_at'::text)),
    CONSTRAINT api_keys_repos_named CHECK (((repos IS NULL) OR (((cardinality(repos) >= 1) AND (cardinality(repos) <= 100)) AND (array_position(repos, NULL::text) IS NULL)))),
    CONSTRAINT api_keys_revoked_at_readable CHECK (data._readable_time(revoked_at, 'api_keys.revoked_at'::text))
);

ALTER TABLE ONLY data.api_keys FORCE ROW LEVEL SECURITY;


ALTER TABLE data.api_keys OWNER TO <migrator>;

--
-- Name: TABLE api_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.api_keys IS 'Bearer keys: only the SHA-256 of the token is stored; a key acts as its principal until revoked.';


--
-- Name: COLUMN api_keys.expires_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.api_keys.expires_at IS 'When the key stops authenticating (null: never; it still ends when revoked).';


--
-- Name: COLUMN api_keys.read_only; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.api_keys.read_only IS 'The key writes nothing, whatever its principal may write.';


--
-- Name: COLUMN api_keys.repos; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.api_keys.repos IS 'Null, or the only repos the key reads and writes (within its principal''s grants).';


--
-- Name: binding_keys; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.binding_keys (
    key_id smallint DEFAULT 1 NOT NULL,
    secret bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT binding_keys_created_at_readable CHECK (data._readable_time(created_at, 'binding_keys.created_at'::text)),
    CONSTRAINT binding_keys_key_id_check CHECK ((key_id = 1)),
    CONSTRAINT binding_keys_secret_check CHECK ((octet_length(secret) = 32))
);

ALTER TABLE ONLY data.binding_keys FORCE ROW LEVEL SECURITY;


ALTER TABLE data.binding_keys OWNER TO <migrator>;

--
-- Name: TABLE binding_keys; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.binding_keys IS 'The key that signs principal bindings (one row; no caller role may read it; a reference table on Citus).';


--
-- Name: bm25_blocks; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_blocks (
    org_id text NOT NULL,
    term text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    scope_group text GENERATED ALWAYS AS (data._bm25_group(repo_id, persona_id, session_id)) STORED NOT NULL,
    first_id bigint NOT NULL,
    last_id bigint NOT NULL,
    postings_count integer NOT NULL,
    sealed boolean NOT NULL,
    postings bytea NOT NULL,
    CONSTRAINT bm25_blocks_check CHECK ((last_id >= first_id)),
    CONSTRAINT bm25_blocks_postings_count_check CHECK ((postings_count > 0))
)
PARTITION BY LIST (org_id);
ALTER TABLE ONLY data.bm25_blocks ALTER COLUMN postings SET STORAGE PLAIN;

ALTER TABLE ONLY data.bm25_blocks FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_blocks OWNER TO <migrator>;

--
-- Name: TABLE bm25_blocks; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_blocks IS 'BM25 postings of active fragments, packed per term, scope group and block of up to 1,024 (contexts_bm25).';


--
-- Name: bm25_corpus; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_corpus (
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    fragment_count bigint DEFAULT 0 NOT NULL,
    total_length bigint DEFAULT 0 NOT NULL
);

ALTER TABLE ONLY data.bm25_corpus FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_corpus OWNER TO <migrator>;

--
-- Name: TABLE bm25_corpus; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_corpus IS 'Fragment count and total length of one scope group (for idf and average length).';


--
-- Name: bm25_terms; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.bm25_terms (
    org_id text NOT NULL,
    term text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    df integer NOT NULL,
    list_end bigint DEFAULT 0 NOT NULL,
    end_before bigint DEFAULT 0 CONSTRAINT bm25_terms_last_first_id_not_null NOT NULL,
    appends smallint DEFAULT 0 NOT NULL,
    CONSTRAINT bm25_terms_df_check CHECK ((df >= 0))
);

ALTER TABLE ONLY data.bm25_terms FORCE ROW LEVEL SECURITY;


ALTER TABLE data.bm25_terms OWNER TO <migrator>;

--
-- Name: TABLE bm25_terms; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.bm25_terms IS 'Document frequency of each term among the active fragments of one scope group.';


--
-- Name: COLUMN bm25_terms.list_end; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.bm25_terms.list_end IS 'The largest fragment id ever written to this group and term''s blocks: a write above it appends.';


--
-- Name: COLUMN bm25_terms.end_before; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.bm25_terms.end_before IS 'Where the list ended before the last write (set by the upsert, read by that write''s RETURNING).';


--
-- Name: COLUMN bm25_terms.appends; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.bm25_terms.appends IS 'Writes since this group and term''s open blocks were last merged (the eighth merges them).';


--
-- Name: context_members; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_members (
    context_id bigint NOT NULL,
    version integer NOT NULL,
    org_id text NOT NULL,
    ordinal integer NOT NULL,
    fragment_id bigint NOT NULL,
    doc_id bigint,
    doc_version integer,
    CONSTRAINT context_members_ordinal_check CHECK ((ordinal >= 1))
);

ALTER TABLE ONLY data.context_members FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_members OWNER TO <migrator>;

--
-- Name: TABLE context_members; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_members IS 'The fragment references of a Context version, in bundle order: a fragment id and the document version it was cited from when the version was built.';


--
-- Name: COLUMN context_members.fragment_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_members.fragment_id IS 'No foreign key: a version never changes; a fragment deleted since (its documents deleted) is simply missing when the version is read.';


--
-- Name: context_rules; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_rules (
    rule_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    name text NOT NULL,
    path_globs text[] DEFAULT '{}'::text[] NOT NULL,
    symbol_globs text[] DEFAULT '{}'::text[] NOT NULL,
    context_id bigint NOT NULL,
    context_org_id text NOT NULL,
    version integer,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone,
    enabled boolean DEFAULT true NOT NULL,
    CONSTRAINT context_rule_name_format CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,127}$'::text)),
    CONSTRAINT context_rules_check CHECK ((((cardinality(path_globs) + cardinality(symbol_globs)) >= 1) AND ((cardinality(path_globs) + cardinality(symbol_globs)) <= 32))),
    CONSTRAINT context_rules_created_at_readable CHECK (data._readable_time(created_at, 'context_rules.created_at'::text)),
    CONSTRAINT context_rules_expires_at_readable CHECK (data._readable_time(expires_at, 'context_rules.expires_at'::text)),
    CONSTRAINT context_rules_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.context_rules FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_rules OWNER TO <migrator>;

--
-- Name: TABLE context_rules; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_rules IS 'Workflow rules (api.rule_create): a step touching a path or symbol matching a glob brings in a Context version (docs/adr/0022).';


--
-- Name: COLUMN context_rules.symbol_globs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.symbol_globs IS 'Globs over the symbol part of a touched entry (`path#Symbol`): `*` any run of characters but a slash.';


--
-- Name: COLUMN context_rules.context_org_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.context_org_id IS 'The Context''s org: the rule''s own, or that of a publisher whose Context the rule''s org (or repo) subscribes to.';


--
-- Name: COLUMN context_rules.version; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.context_rules.version IS 'The Context version brought (null: the newest version the reader may read).';


--
-- Name: context_rules_rule_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_rules ALTER COLUMN rule_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.context_rules_rule_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: context_subscriptions_subscription_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_subscriptions ALTER COLUMN subscription_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.context_subscriptions_subscription_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: context_versions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.context_versions (
    context_id bigint NOT NULL,
    org_id text NOT NULL,
    version integer NOT NULL,
    built_from jsonb DEFAULT '{}'::jsonb NOT NULL,
    note text DEFAULT ''::text NOT NULL,
    fragment_count integer NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT context_versions_created_at_readable CHECK (data._readable_time(created_at, 'context_versions.created_at'::text)),
    CONSTRAINT context_versions_fragment_count_check CHECK ((fragment_count >= 1)),
    CONSTRAINT context_versions_note_check CHECK ((length(note) <= 2000)),
    CONSTRAINT context_versions_version_check CHECK ((version >= 1))
);

ALTER TABLE ONLY data.context_versions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.context_versions OWNER TO <migrator>;

--
-- Name: TABLE context_versions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.context_versions IS 'Immutable versions of a Context: what each was built from (fragment ids, documents, path globs, a frozen query) and by whom.';


--
-- Name: contexts_context_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.contexts ALTER COLUMN context_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.contexts_context_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: documents_doc_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.documents ALTER COLUMN doc_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.documents_doc_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: embedding_models; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embedding_models (
    model_id integer NOT NULL,
    namespace text NOT NULL,
    name text NOT NULL,
    dims integer NOT NULL,
    generation integer NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    source text,
    window_ends_at timestamp with time zone,
    promoted_at timestamp with time zone,
    retired_at timestamp with time zone,
    dropped_at timestamp with time zone,
    CONSTRAINT embedding_models_created_at_readable CHECK (data._readable_time(created_at, 'embedding_models.created_at'::text)),
    CONSTRAINT embedding_models_dims_check CHECK (((dims >= 1) AND (dims <= 16000))),
    CONSTRAINT embedding_models_dropped_at_readable CHECK (data._readable_time(dropped_at, 'embedding_models.dropped_at'::text)),
    CONSTRAINT embedding_models_dropped_retired CHECK (((dropped_at IS NULL) OR (status = 'retired'::text))),
    CONSTRAINT embedding_models_generation_check CHECK ((generation >= 1)),
    CONSTRAINT embedding_models_promoted_at_readable CHECK (data._readable_time(promoted_at, 'embedding_models.promoted_at'::text)),
    CONSTRAINT embedding_models_retired_at_readable CHECK (data._readable_time(retired_at, 'embedding_models.retired_at'::text)),
    CONSTRAINT embedding_models_status_check CHECK ((status = ANY (ARRAY['active'::text, 'shadow'::text, 'retired'::text]))),
    CONSTRAINT embedding_models_window_ends_at_readable CHECK (data._readable_time(window_ends_at, 'embedding_models.window_ends_at'::text))
);


ALTER TABLE data.embedding_models OWNER TO <migrator>;

--
-- Name: TABLE embedding_models; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embedding_models IS 'One row per (namespace, model generation); each has its own HNSW index.';


--
-- Name: COLUMN embedding_models.status; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.status IS 'active: serves queries; shadow: being built or in its window; retired: replaced (kept until window_ends_at unless dropped).';


--
-- Name: COLUMN embedding_models.source; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.source IS 'What loads the model (a name or a local path) when it differs from name; null: name.';


--
-- Name: COLUMN embedding_models.window_ends_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.window_ends_at IS 'End of the shadow window (`contexts models upgrade --window-days`); a retired generation is kept until then.';


--
-- Name: COLUMN embedding_models.promoted_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.promoted_at IS 'When the generation last became active by promotion (null: registered active).';


--
-- Name: COLUMN embedding_models.retired_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.retired_at IS 'When another generation replaced it.';


--
-- Name: COLUMN embedding_models.dropped_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.embedding_models.dropped_at IS 'When its vectors and HNSW index were dropped (the row stays: traces name it).';


--
-- Name: embedding_models_model_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embedding_models ALTER COLUMN model_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.embedding_models_model_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: embedding_namespaces; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embedding_namespaces (
    namespace text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    CONSTRAINT embedding_namespaces_namespace_check CHECK ((namespace ~ '^[a-z][a-z0-9_]{0,31}$'::text))
);


ALTER TABLE data.embedding_namespaces OWNER TO <migrator>;

--
-- Name: TABLE embedding_namespaces; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embedding_namespaces IS 'Prose and code are embedded by separate models in separate vector spaces.';


--
-- Name: embeddings; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.embeddings (
    fragment_id bigint CONSTRAINT embeddings_fragment_id_not_null1 NOT NULL,
    model_id integer CONSTRAINT embeddings_model_id_not_null1 NOT NULL,
    org_id text CONSTRAINT embeddings_org_id_not_null1 NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    embedding extensions.vector CONSTRAINT embeddings_embedding_not_null1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() CONSTRAINT embeddings_created_at_not_null1 NOT NULL,
    CONSTRAINT embeddings_created_at_readable CHECK (data._readable_time(created_at, 'embeddings.created_at'::text))
)
PARTITION BY LIST (org_id);

ALTER TABLE ONLY data.embeddings FORCE ROW LEVEL SECURITY;


ALTER TABLE data.embeddings OWNER TO <migrator>;

--
-- Name: TABLE embeddings; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.embeddings IS 'Dense vectors, one per fragment and model; HNSW indexes per model and per org partition.';


--
-- Name: eval_runs_run_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.eval_runs ALTER COLUMN run_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.eval_runs_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fragment_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

CREATE SEQUENCE data.fragment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER SEQUENCE data.fragment_id_seq OWNER TO <migrator>;

--
-- Name: fragment_id_seq; Type: SEQUENCE OWNED BY; Schema: data; Owner: <migrator>
--

ALTER SEQUENCE data.fragment_id_seq OWNED BY data.fragments.fragment_id;


--
-- Name: fragment_links; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_links (
    link_id bigint NOT NULL,
    org_id text NOT NULL,
    fragment_id bigint NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    doc_id bigint NOT NULL,
    link_type text NOT NULL,
    target text NOT NULL,
    target_key text NOT NULL,
    target_name text,
    target_anchor text,
    target_repo text,
    target_doc_id bigint,
    target_fragment_id bigint,
    target_repo_id text,
    target_persona_id text,
    target_session_id text,
    resolved_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    evidence text,
    CONSTRAINT fragment_links_created_at_readable CHECK (data._readable_time(created_at, 'fragment_links.created_at'::text)),
    CONSTRAINT fragment_links_evidence_length CHECK (((length(evidence) >= 1) AND (length(evidence) <= 2048))),
    CONSTRAINT fragment_links_link_type_check CHECK ((link_type = ANY (ARRAY['link'::text, 'url'::text, 'import'::text, 'symbol'::text, 'adr'::text, 'metadata'::text, 'supersedes'::text, 'superseded_by'::text]))),
    CONSTRAINT fragment_links_resolved_at_readable CHECK (data._readable_time(resolved_at, 'fragment_links.resolved_at'::text)),
    CONSTRAINT fragment_links_target_check CHECK (((length(target) >= 1) AND (length(target) <= 2048))),
    CONSTRAINT fragment_links_target_key_check CHECK (((length(target_key) >= 1) AND (length(target_key) <= 2048)))
);

ALTER TABLE ONLY data.fragment_links FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_links OWNER TO <migrator>;

--
-- Name: TABLE fragment_links; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_links IS 'References a fragment makes (links, URLs, imports, symbol uses, ADR mentions, metadata links), resolved to the fragment they cite when known; the edges of citation PageRank.';


--
-- Name: COLUMN fragment_links.target; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target IS 'The reference as written (a link, URL, module, name, ADR mention).';


--
-- Name: COLUMN fragment_links.target_key; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_key IS 'What it names, as a key of data.documents.link_keys (path:P, module:M, package:P, adr:N).';


--
-- Name: COLUMN fragment_links.target_name; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_name IS 'A code name the target document must define (the cited fragment is its definition).';


--
-- Name: COLUMN fragment_links.target_fragment_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.target_fragment_id IS 'The cited fragment (null: unresolved, kept until its target arrives).';


--
-- Name: COLUMN fragment_links.evidence; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.fragment_links.evidence IS 'For a supersession: where the citing document declares it and the line as written (null: another kind of reference, or recorded before migration 0025).';


--
-- Name: fragment_links_link_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_links ALTER COLUMN link_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.fragment_links_link_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fragment_returns; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.fragment_returns (
    org_id text NOT NULL,
    trace_id uuid NOT NULL,
    fragment_id bigint NOT NULL,
    returned_at timestamp with time zone NOT NULL,
    CONSTRAINT fragment_returns_returned_at_readable CHECK (data._readable_time(returned_at, 'fragment_returns.returned_at'::text))
);

ALTER TABLE ONLY data.fragment_returns FORCE ROW LEVEL SECURITY;


ALTER TABLE data.fragment_returns OWNER TO <migrator>;

--
-- Name: TABLE fragment_returns; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.fragment_returns IS 'One row per fragment a retrieval returned (included in its answer), kept from data.retrieval_traces by a trigger: what staleness counts.';


--
-- Name: git_syncs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.git_syncs (
    org_id text NOT NULL,
    repo_id text NOT NULL,
    commit_sha text NOT NULL,
    ref text,
    synced_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    synced_by text NOT NULL,
    written integer DEFAULT 0 NOT NULL,
    deleted integer DEFAULT 0 NOT NULL,
    full_scan boolean DEFAULT false NOT NULL,
    CONSTRAINT git_syncs_commit_sha_check CHECK ((commit_sha ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT git_syncs_deleted_check CHECK ((deleted >= 0)),
    CONSTRAINT git_syncs_ref_check CHECK ((length(ref) <= 1024)),
    CONSTRAINT git_syncs_synced_at_readable CHECK (data._readable_time(synced_at, 'git_syncs.synced_at'::text)),
    CONSTRAINT git_syncs_written_check CHECK ((written >= 0))
);

ALTER TABLE ONLY data.git_syncs FORCE ROW LEVEL SECURITY;


ALTER TABLE data.git_syncs OWNER TO <migrator>;

--
-- Name: TABLE git_syncs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.git_syncs IS 'Last synced commit of each repo (contexts sync): its tracked files at that commit are what the repo''s synced documents hold (api.sync_record, api.sync_state).';


--
-- Name: COLUMN git_syncs.commit_sha; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.commit_sha IS 'Full object name of the commit last synced (SHA-1 or SHA-256).';


--
-- Name: COLUMN git_syncs.ref; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.ref IS 'Branch (or other symbolic ref) HEAD pointed at when synced; null on a detached HEAD.';


--
-- Name: COLUMN git_syncs.synced_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.synced_by IS 'Principal that synced it (it held a write grant on the repo).';


--
-- Name: COLUMN git_syncs.written; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.written IS 'Files that sync ingested (added, modified, renamed; unchanged content writes no version).';


--
-- Name: COLUMN git_syncs.deleted; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.deleted IS 'Documents that sync deleted (files deleted or renamed away).';


--
-- Name: COLUMN git_syncs.full_scan; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.git_syncs.full_scan IS 'True when that sync compared every tracked file with what is stored (first sync, or the previous commit was gone from the repository).';


--
-- Name: grants; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.grants (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    scope_kind text NOT NULL,
    scope_id text NOT NULL,
    can_write boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT audit_is_read_only CHECK (((scope_kind <> 'audit'::text) OR (NOT can_write))),
    CONSTRAINT grants_created_at_readable CHECK (data._readable_time(created_at, 'grants.created_at'::text)),
    CONSTRAINT grants_scope_kind_check CHECK ((scope_kind = ANY (ARRAY['org'::text, 'repo'::text, 'persona'::text, 'session'::text, 'audit'::text]))),
    CONSTRAINT org_grants_name_the_org CHECK (((scope_kind <> ALL (ARRAY['org'::text, 'audit'::text])) OR (scope_id = org_id)))
);

ALTER TABLE ONLY data.grants FORCE ROW LEVEL SECURITY;


ALTER TABLE data.grants OWNER TO <migrator>;

--
-- Name: TABLE grants; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.grants IS 'A principal''s ACL. org: every repo and persona of the org; repo/persona/session: that one; audit: the org''s traces.';


--
-- Name: idempotent_writes; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.idempotent_writes (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    idempotency_key text NOT NULL,
    request_hash text NOT NULL,
    status integer NOT NULL,
    response jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_key_format CHECK ((idempotency_key ~ '^[!-~]{1,255}$'::text)),
    CONSTRAINT idempotent_writes_created_at_readable CHECK (data._readable_time(created_at, 'idempotent_writes.created_at'::text)),
    CONSTRAINT idempotent_writes_status_check CHECK (((status >= 200) AND (status <= 299))),
    CONSTRAINT request_hash_format CHECK ((request_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE ONLY data.idempotent_writes FORCE ROW LEVEL SECURITY;


ALTER TABLE data.idempotent_writes OWNER TO <migrator>;

--
-- Name: TABLE idempotent_writes; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.idempotent_writes IS 'The response of each write made with an Idempotency-Key (per org, principal and key, kept 24 hours): a retry is answered it and writes nothing.';


--
-- Name: model_replays; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.model_replays (
    replay_id bigint NOT NULL,
    model_id integer NOT NULL,
    org_id text NOT NULL,
    principal_id text,
    trace_id uuid NOT NULL,
    overlap double precision,
    shared_top integer,
    top integer NOT NULL,
    same_order boolean,
    error text,
    replayed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT model_replays_overlap_check CHECK (((overlap >= (0)::double precision) AND (overlap <= (1)::double precision))),
    CONSTRAINT model_replays_replayed_at_readable CHECK (data._readable_time(replayed_at, 'model_replays.replayed_at'::text)),
    CONSTRAINT model_replays_shared_top_check CHECK ((shared_top >= 0)),
    CONSTRAINT model_replays_top_check CHECK ((top >= 1))
);

ALTER TABLE ONLY data.model_replays FORCE ROW LEVEL SECURITY;


ALTER TABLE data.model_replays OWNER TO <migrator>;

--
-- Name: TABLE model_replays; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.model_replays IS 'A recorded retrieval replayed on a shadow generation: top-n token overlap and shared fragments against the active generation. Org-wide readers of the org only.';


--
-- Name: COLUMN model_replays.trace_id; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.trace_id IS 'The retrieval replayed (data.retrieval_traces; its query is read there, redacted per reader).';


--
-- Name: COLUMN model_replays.overlap; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.overlap IS 'Jaccard index of the word tokens of the two top-n texts (as `contexts eval replay`); null on error.';


--
-- Name: COLUMN model_replays.shared_top; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.model_replays.shared_top IS 'Fragments present in both top-n lists.';


--
-- Name: model_replays_replay_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.model_replays ALTER COLUMN replay_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.model_replays_replay_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: nudge_deliveries; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.nudge_deliveries (
    delivery_id bigint NOT NULL,
    nudge_id bigint NOT NULL,
    org_id text NOT NULL,
    url text NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL,
    status integer,
    error text,
    duration_ms double precision,
    CONSTRAINT nudge_deliveries_attempted_at_readable CHECK (data._readable_time(attempted_at, 'nudge_deliveries.attempted_at'::text))
);

ALTER TABLE ONLY data.nudge_deliveries FORCE ROW LEVEL SECURITY;


ALTER TABLE data.nudge_deliveries OWNER TO <migrator>;

--
-- Name: TABLE nudge_deliveries; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.nudge_deliveries IS 'Every attempt to deliver a nudge: when, where, the HTTP status or the error.';


--
-- Name: nudge_deliveries_delivery_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_deliveries ALTER COLUMN delivery_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.nudge_deliveries_delivery_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: nudge_outbox; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.nudge_outbox (
    nudge_id bigint NOT NULL,
    org_id text NOT NULL,
    fragment_id bigint NOT NULL,
    owner text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    delivered_at timestamp with time zone,
    last_status integer,
    last_error text,
    CONSTRAINT nudge_outbox_created_at_readable CHECK (data._readable_time(created_at, 'nudge_outbox.created_at'::text)),
    CONSTRAINT nudge_outbox_delivered_at_readable CHECK (data._readable_time(delivered_at, 'nudge_outbox.delivered_at'::text)),
    CONSTRAINT nudge_outbox_next_attempt_at_readable CHECK (data._readable_time(next_attempt_at, 'nudge_outbox.next_attempt_at'::text)),
    CONSTRAINT nudge_outbox_period_start_readable CHECK (data._readable_time(period_start, 'nudge_outbox.period_start'::text))
);

ALTER TABLE ONLY data.nudge_outbox FORCE ROW LEVEL SECURITY;


ALTER TABLE data.nudge_outbox OWNER TO <migrator>;

--
-- Name: TABLE nudge_outbox; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.nudge_outbox IS 'Nudges owed to an org''s webhook: one row per stale fragment and period (idempotent), marked delivered only after a 2xx answer.';


--
-- Name: nudge_outbox_nudge_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_outbox ALTER COLUMN nudge_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.nudge_outbox_nudge_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: org_webhooks; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.org_webhooks (
    org_id text NOT NULL,
    url text NOT NULL,
    secret text,
    enabled boolean DEFAULT true NOT NULL,
    updated_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT org_webhooks_created_at_readable CHECK (data._readable_time(created_at, 'org_webhooks.created_at'::text)),
    CONSTRAINT org_webhooks_secret_check CHECK (((secret IS NULL) OR ((length(secret) >= 16) AND (length(secret) <= 256)))),
    CONSTRAINT org_webhooks_updated_at_readable CHECK (data._readable_time(updated_at, 'org_webhooks.updated_at'::text)),
    CONSTRAINT webhook_url_http CHECK (((url ~ '^https?://[^/?#@[:space:][:cntrl:]]+([/?#][^[:space:][:cntrl:]]*)?$'::text) AND (length(url) <= 2048)))
);

ALTER TABLE ONLY data.org_webhooks FORCE ROW LEVEL SECURITY;


ALTER TABLE data.org_webhooks OWNER TO <migrator>;

--
-- Name: TABLE org_webhooks; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.org_webhooks IS 'One webhook per org that receives its staleness nudges; the secret signs each delivery (HMAC-SHA256) and is never returned by a read.';


--
-- Name: orgs; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.orgs (
    org_id text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    org_no integer NOT NULL,
    session_ttl interval DEFAULT '24:00:00'::interval NOT NULL,
    default_owner text,
    stale_after interval DEFAULT '182 days'::interval NOT NULL,
    stale_window interval DEFAULT '90 days'::interval NOT NULL,
    stale_min_retrievals integer DEFAULT 5 NOT NULL,
    nudge_period interval DEFAULT '7 days'::interval NOT NULL,
    CONSTRAINT default_owner_named CHECK (((default_owner IS NULL) OR ((length(default_owner) >= 1) AND (length(default_owner) <= 256)))),
    CONSTRAINT nudge_period_positive CHECK ((nudge_period >= '01:00:00'::interval)),
    CONSTRAINT org_id_format CHECK ((org_id ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'::text)),
    CONSTRAINT orgs_created_at_readable CHECK (data._readable_time(created_at, 'orgs.created_at'::text)),
    CONSTRAINT session_ttl_positive CHECK ((session_ttl > '00:00:00'::interval)),
    CONSTRAINT stale_after_positive CHECK ((stale_after > '00:00:00'::interval)),
    CONSTRAINT stale_min_retrievals_positive CHECK ((stale_min_retrievals >= 1)),
    CONSTRAINT stale_window_positive CHECK ((stale_window > '00:00:00'::interval))
);

ALTER TABLE ONLY data.orgs FORCE ROW LEVEL SECURITY;


ALTER TABLE data.orgs OWNER TO <migrator>;

--
-- Name: TABLE orgs; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.orgs IS 'Tenants. Every other row belongs to exactly one org.';


--
-- Name: COLUMN orgs.session_ttl; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.session_ttl IS 'Lifetime of a new session; expired sessions are never returned and are purged by `contexts sessions purge`.';


--
-- Name: COLUMN orgs.default_owner; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.default_owner IS 'Owner of what names none and matches no CODEOWNERS rule (R-DOC-3); null: such fragments are "unowned".';


--
-- Name: COLUMN orgs.stale_after; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_after IS 'A fragment whose text is older than this and is often retrieved is stale (default six months).';


--
-- Name: COLUMN orgs.stale_window; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_window IS 'How far back retrievals are counted for staleness.';


--
-- Name: COLUMN orgs.stale_min_retrievals; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.stale_min_retrievals IS 'Retrievals within stale_window that make an old fragment "often retrieved".';


--
-- Name: COLUMN orgs.nudge_period; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.orgs.nudge_period IS 'An owner is nudged about a stale fragment at most once per period (one outbox row per fragment and period).';


--
-- Name: orgs_org_no_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.orgs ALTER COLUMN org_no ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.orgs_org_no_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: owner_reassignments; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.owner_reassignments (
    reassignment_id bigint NOT NULL,
    org_id text NOT NULL,
    from_owner text NOT NULL,
    to_owner text NOT NULL,
    repo_id text,
    path_prefix text,
    documents integer NOT NULL,
    fragments integer NOT NULL,
    principal_id text NOT NULL,
    reassigned_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT owner_reassignments_reassigned_at_readable CHECK (data._readable_time(reassigned_at, 'owner_reassignments.reassigned_at'::text)),
    CONSTRAINT owner_reassignments_to_owner_check CHECK (((length(to_owner) >= 1) AND (length(to_owner) <= 256)))
);

ALTER TABLE ONLY data.owner_reassignments FORCE ROW LEVEL SECURITY;


ALTER TABLE data.owner_reassignments OWNER TO <migrator>;

--
-- Name: TABLE owner_reassignments; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.owner_reassignments IS 'Audit of bulk owner reassignments: who moved what from whom to whom, and how much.';


--
-- Name: owner_reassignments_reassignment_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.owner_reassignments ALTER COLUMN reassignment_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.owner_reassignments_reassignment_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: persona_vectors; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.persona_vectors (
    org_id text NOT NULL,
    persona_id text NOT NULL,
    model_id integer NOT NULL,
    description text NOT NULL,
    embedding extensions.vector NOT NULL,
    updated_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT persona_vectors_updated_at_readable CHECK (data._readable_time(updated_at, 'persona_vectors.updated_at'::text))
);

ALTER TABLE ONLY data.persona_vectors FORCE ROW LEVEL SECURITY;


ALTER TABLE data.persona_vectors OWNER TO <migrator>;

--
-- Name: TABLE persona_vectors; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.persona_vectors IS 'The description of a persona''s ranking profile embedded with each model (unit vectors): evidence of what the persona cares about, with its own fragments (api.persona_vectors_set; docs/adr/0014).';


--
-- Name: COLUMN persona_vectors.description; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.persona_vectors.description IS 'The text embedded: the persona profile''s description when the vector was written.';


--
-- Name: personas; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.personas (
    org_id text NOT NULL,
    persona_id text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT persona_id_format CHECK ((persona_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'::text)),
    CONSTRAINT personas_created_at_readable CHECK (data._readable_time(created_at, 'personas.created_at'::text))
);

ALTER TABLE ONLY data.personas FORCE ROW LEVEL SECURITY;


ALTER TABLE data.personas OWNER TO <migrator>;

--
-- Name: TABLE personas; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.personas IS 'Persona scope, e.g. backend-sre: knowledge for one role of agent.';


--
-- Name: pins; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.pins (
    pin_id bigint NOT NULL,
    org_id text NOT NULL,
    repo_id text,
    persona_id text,
    session_id text,
    fragment_id bigint NOT NULL,
    pinned_by text NOT NULL,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone,
    CONSTRAINT pins_check CHECK (((expires_at IS NULL) OR (expires_at > created_at))),
    CONSTRAINT pins_created_at_readable CHECK (data._readable_time(created_at, 'pins.created_at'::text)),
    CONSTRAINT pins_expires_at_readable CHECK (data._readable_time(expires_at, 'pins.expires_at'::text)),
    CONSTRAINT pins_reason_check CHECK (((length(reason) >= 1) AND (length(reason) <= 1000)))
);

ALTER TABLE ONLY data.pins FORCE ROW LEVEL SECURITY;


ALTER TABLE data.pins OWNER TO <migrator>;

--
-- Name: TABLE pins; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.pins IS 'Manual pins: a fragment composed first, whatever its relevance, in every request that sees the pin''s scope (api.pin_add, api.pins_list).';


--
-- Name: COLUMN pins.pinned_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.pins.pinned_by IS 'Principal that pinned it (it held a write grant on the pin''s scope).';


--
-- Name: COLUMN pins.expires_at; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.pins.expires_at IS 'After this time the pin is ignored (null: never).';


--
-- Name: pins_pin_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.pins ALTER COLUMN pin_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.pins_pin_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: principals; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.principals (
    org_id text NOT NULL,
    principal_id text NOT NULL,
    kind text DEFAULT 'agent'::text NOT NULL,
    display_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    db_role name,
    disabled_at timestamp with time zone,
    CONSTRAINT principal_id_format CHECK ((principal_id ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$'::text)),
    CONSTRAINT principals_created_at_readable CHECK (data._readable_time(created_at, 'principals.created_at'::text)),
    CONSTRAINT principals_disabled_at_readable CHECK (data._readable_time(disabled_at, 'principals.disabled_at'::text)),
    CONSTRAINT principals_kind_check CHECK ((kind = ANY (ARRAY['agent'::text, 'human'::text, 'service'::text])))
);

ALTER TABLE ONLY data.principals FORCE ROW LEVEL SECURITY;


ALTER TABLE data.principals OWNER TO <migrator>;

--
-- Name: TABLE principals; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.principals IS 'Who asks: agents, humans and service accounts of an org.';


--
-- Name: COLUMN principals.db_role; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.principals.db_role IS 'Login role mapped to this principal (analysts, auditors): its SQL sessions act as this principal.';


--
-- Name: ranking_profiles; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.ranking_profiles (
    org_id text NOT NULL,
    persona_id text,
    w_rerank double precision,
    w_freshness double precision,
    w_authority double precision,
    w_pinned double precision,
    w_persona double precision,
    halflife_days jsonb DEFAULT '{}'::jsonb NOT NULL,
    description text,
    updated_by text NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT ranking_profiles_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT ranking_profiles_halflife_days_check CHECK ((jsonb_typeof(halflife_days) = 'object'::text)),
    CONSTRAINT ranking_profiles_updated_at_readable CHECK (data._readable_time(updated_at, 'ranking_profiles.updated_at'::text)),
    CONSTRAINT ranking_profiles_w_authority_check CHECK ((w_authority >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_freshness_check CHECK ((w_freshness >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_persona_check CHECK ((w_persona >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_pinned_check CHECK ((w_pinned >= (0)::double precision)),
    CONSTRAINT ranking_profiles_w_rerank_check CHECK ((w_rerank >= (0)::double precision))
);

ALTER TABLE ONLY data.ranking_profiles FORCE ROW LEVEL SECURITY;


ALTER TABLE data.ranking_profiles OWNER TO <migrator>;

--
-- Name: TABLE ranking_profiles; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.ranking_profiles IS 'Blend weights and freshness half-lives per kind: an org default (persona_id null) or a persona''s (R-RANK-1; api.ranking_profile_set). Null weights and absent kinds inherit.';


--
-- Name: COLUMN ranking_profiles.halflife_days; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.ranking_profiles.halflife_days IS 'Freshness half-life in days per document kind ({"default": 90, "policy": 365}); "default" covers the kinds not named.';


--
-- Name: COLUMN ranking_profiles.updated_by; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON COLUMN data.ranking_profiles.updated_by IS 'Principal that set it (it held a write grant on the org, or on the persona).';


--
-- Name: repos; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.repos (
    org_id text NOT NULL,
    repo_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT repo_id_format CHECK ((repo_id ~ '^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$'::text)),
    CONSTRAINT repos_created_at_readable CHECK (data._readable_time(created_at, 'repos.created_at'::text))
);

ALTER TABLE ONLY data.repos FORCE ROW LEVEL SECURITY;


ALTER TABLE data.repos OWNER TO <migrator>;

--
-- Name: TABLE repos; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.repos IS 'Repository scope: knowledge that inherits a repository''s access policy.';


--
-- Name: sessions; Type: TABLE; Schema: data; Owner: <migrator>
--

CREATE TABLE data.sessions (
    org_id text NOT NULL,
    session_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    CONSTRAINT session_id_format CHECK ((session_id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$'::text)),
    CONSTRAINT sessions_created_at_readable CHECK (data._readable_time(created_at, 'sessions.created_at'::text)),
    CONSTRAINT sessions_expires_at_readable CHECK (data._readable_time(expires_at, 'sessions.expires_at'::text))
);

ALTER TABLE ONLY data.sessions FORCE ROW LEVEL SECURITY;


ALTER TABLE data.sessions OWNER TO <migrator>;

--
-- Name: TABLE sessions; Type: COMMENT; Schema: data; Owner: <migrator>
--

COMMENT ON TABLE data.sessions IS 'Session scope: ephemeral notes visible only inside that session.';


--
-- Name: usage_pending_pending_id_seq; Type: SEQUENCE; Schema: data; Owner: <migrator>
--

ALTER TABLE data.usage_pending ALTER COLUMN pending_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME data.usage_pending_pending_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: <migrator>
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


ALTER TABLE public.alembic_version OWNER TO <migrator>;

--
-- Name: contexts_due; Type: TABLE; Schema: public; Owner: <migrator>
--

CREATE TABLE public.contexts_due (
    task text NOT NULL,
    due_since timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE public.contexts_due OWNER TO <migrator>;

--
-- Name: TABLE contexts_due; Type: COMMENT; Schema: public; Owner: <migrator>
--

COMMENT ON TABLE public.contexts_due IS 'Tasks a migration left for migrate() to run once the re-applied functions are current (app/db/migrate.py: DUE_TASKS); a task is deleted when done.';


--
-- Name: contexts_reapplied; Type: TABLE; Schema: public; Owner: <migrator>
--

CREATE TABLE public.contexts_reapplied (
    singleton boolean DEFAULT true NOT NULL,
    digest text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contexts_reapplied_singleton_check CHECK (singleton)
);


ALTER TABLE public.contexts_reapplied OWNER TO <migrator>;

--
-- Name: TABLE contexts_reapplied; Type: COMMENT; Schema: public; Owner: <migrator>
--

COMMENT ON TABLE public.contexts_reapplied IS 'Digest of the SQL files migrate() last re-applied (functions, views, policies, grants).';


--
-- Name: fragments fragment_id; Type: DEFAULT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragments ALTER COLUMN fragment_id SET DEFAULT nextval('data.fragment_id_seq'::regclass);


--
-- Name: api_keys api_keys_key_hash_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (key_id);


--
-- Name: authority_refreshes authority_refreshes_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.authority_refreshes
    ADD CONSTRAINT authority_refreshes_pkey PRIMARY KEY (refreshed_at);


--
-- Name: binding_keys binding_keys_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.binding_keys
    ADD CONSTRAINT binding_keys_pkey PRIMARY KEY (key_id);


--
-- Name: bm25_blocks bm25_blocks_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_blocks
    ADD CONSTRAINT bm25_blocks_key PRIMARY KEY (org_id, term, scope_group, first_id);


--
-- Name: bm25_corpus bm25_corpus_group_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_corpus
    ADD CONSTRAINT bm25_corpus_group_key UNIQUE NULLS NOT DISTINCT (org_id, repo_id, persona_id, session_id);


--
-- Name: bm25_terms bm25_terms_group_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_terms
    ADD CONSTRAINT bm25_terms_group_key UNIQUE NULLS NOT DISTINCT (org_id, term, repo_id, persona_id, session_id);


--
-- Name: context_members context_members_context_id_version_ordinal_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_context_id_version_ordinal_key UNIQUE (context_id, version, ordinal);


--
-- Name: context_members context_members_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_pkey PRIMARY KEY (context_id, version, fragment_id);


--
-- Name: context_rules context_rules_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_pkey PRIMARY KEY (rule_id);


--
-- Name: context_subscriptions context_subscriptions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_pkey PRIMARY KEY (subscription_id);


--
-- Name: context_versions context_versions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_versions
    ADD CONSTRAINT context_versions_pkey PRIMARY KEY (context_id, version);


--
-- Name: contexts contexts_context_id_org_id_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_context_id_org_id_key UNIQUE (context_id, org_id);


--
-- Name: contexts contexts_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_pkey PRIMARY KEY (context_id);


--
-- Name: document_versions document_versions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.document_versions
    ADD CONSTRAINT document_versions_pkey PRIMARY KEY (doc_id, version);


--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (doc_id);


--
-- Name: embedding_models embedding_models_namespace_generation_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_namespace_generation_key UNIQUE (namespace, generation);


--
-- Name: embedding_models embedding_models_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_pkey PRIMARY KEY (model_id);


--
-- Name: embedding_namespaces embedding_namespaces_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_namespaces
    ADD CONSTRAINT embedding_namespaces_pkey PRIMARY KEY (namespace);


--
-- Name: embeddings embeddings_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embeddings
    ADD CONSTRAINT embeddings_pkey PRIMARY KEY (fragment_id, model_id, org_id);


--
-- Name: eval_figures eval_figures_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_figures
    ADD CONSTRAINT eval_figures_key UNIQUE NULLS NOT DISTINCT (run_id, dataset, split, stage, scope, metric);


--
-- Name: eval_replays eval_replays_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_pkey PRIMARY KEY (run_id, ordinal);


--
-- Name: eval_runs eval_runs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_runs
    ADD CONSTRAINT eval_runs_pkey PRIMARY KEY (run_id);


--
-- Name: fragment_authority fragment_authority_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_authority
    ADD CONSTRAINT fragment_authority_pkey PRIMARY KEY (org_id, fragment_id);


--
-- Name: fragment_links fragment_links_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_pkey PRIMARY KEY (link_id);


--
-- Name: fragment_returns fragment_returns_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_pkey PRIMARY KEY (org_id, trace_id, fragment_id);


--
-- Name: fragment_sources fragment_sources_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_pkey PRIMARY KEY (doc_id, doc_version, ordinal);


--
-- Name: fragments fragments_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragments
    ADD CONSTRAINT fragments_pkey PRIMARY KEY (fragment_id, org_id);


--
-- Name: fragments fragments_reading_size; Type: CHECK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_reading_size CHECK ((octet_length(reading) <= 65536)) NOT VALID;


--
-- Name: git_syncs git_syncs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_pkey PRIMARY KEY (org_id, repo_id);


--
-- Name: grants grants_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.grants
    ADD CONSTRAINT grants_pkey PRIMARY KEY (org_id, principal_id, scope_kind, scope_id);


--
-- Name: idempotent_writes idempotent_writes_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.idempotent_writes
    ADD CONSTRAINT idempotent_writes_pkey PRIMARY KEY (org_id, principal_id, idempotency_key);


--
-- Name: model_replays model_replays_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_pkey PRIMARY KEY (replay_id);


--
-- Name: nudge_deliveries nudge_deliveries_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_pkey PRIMARY KEY (delivery_id);


--
-- Name: nudge_outbox nudge_once_per_period; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_once_per_period UNIQUE (org_id, fragment_id, period_start);


--
-- Name: nudge_outbox nudge_outbox_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_outbox_pkey PRIMARY KEY (nudge_id);


--
-- Name: org_webhooks org_webhooks_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.org_webhooks
    ADD CONSTRAINT org_webhooks_pkey PRIMARY KEY (org_id);


--
-- Name: orgs orgs_org_no_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.orgs
    ADD CONSTRAINT orgs_org_no_key UNIQUE (org_no);


--
-- Name: orgs orgs_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.orgs
    ADD CONSTRAINT orgs_pkey PRIMARY KEY (org_id);


--
-- Name: owner_reassignments owner_reassignments_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.owner_reassignments
    ADD CONSTRAINT owner_reassignments_pkey PRIMARY KEY (reassignment_id);


--
-- Name: persona_vectors persona_vectors_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_pkey PRIMARY KEY (org_id, persona_id, model_id);


--
-- Name: personas personas_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.personas
    ADD CONSTRAINT personas_pkey PRIMARY KEY (org_id, persona_id);


--
-- Name: pins pins_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_pkey PRIMARY KEY (pin_id);


--
-- Name: principals principals_db_role_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_db_role_key UNIQUE (db_role);


--
-- Name: principals principals_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_pkey PRIMARY KEY (org_id, principal_id);


--
-- Name: repos repos_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.repos
    ADD CONSTRAINT repos_pkey PRIMARY KEY (org_id, repo_id);


--
-- Name: retrieval_traces retrieval_traces_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.retrieval_traces
    ADD CONSTRAINT retrieval_traces_pkey PRIMARY KEY (trace_id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (org_id, session_id);


--
-- Name: usage_below_floor usage_below_floor_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_below_floor
    ADD CONSTRAINT usage_below_floor_pkey PRIMARY KEY (trace_id);


--
-- Name: usage_days usage_days_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_days
    ADD CONSTRAINT usage_days_key UNIQUE NULLS NOT DISTINCT (org_id, day, principal_id, repo_id, persona_id, session_id, foreign_org);


--
-- Name: usage_fragments usage_fragments_key; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_fragments
    ADD CONSTRAINT usage_fragments_key UNIQUE NULLS NOT DISTINCT (org_id, fragment_id, principal_id);


--
-- Name: usage_pending usage_pending_pkey; Type: CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_pending
    ADD CONSTRAINT usage_pending_pkey PRIMARY KEY (pending_id);


--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: <migrator>
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: contexts_due contexts_due_pkey; Type: CONSTRAINT; Schema: public; Owner: <migrator>
--

ALTER TABLE ONLY public.contexts_due
    ADD CONSTRAINT contexts_due_pkey PRIMARY KEY (task);


--
-- Name: contexts_reapplied contexts_reapplied_pkey; Type: CONSTRAINT; Schema: public; Owner: <migrator>
--

ALTER TABLE ONLY public.contexts_reapplied
    ADD CONSTRAINT contexts_reapplied_pkey PRIMARY KEY (singleton);


--
-- Name: context_members_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_members_fragment ON data.context_members USING btree (fragment_id);


--
-- Name: context_rules_name; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX context_rules_name ON data.context_rules USING btree (org_id, COALESCE(repo_id, ''::text), name);


--
-- Name: context_rules_scope; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_rules_scope ON data.context_rules USING btree (org_id, repo_id) WHERE enabled;


--
-- Name: context_subscriptions_live; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX context_subscriptions_live ON data.context_subscriptions USING btree (context_id, COALESCE(version, 0), subscriber_org_id, COALESCE(subscriber_repo_id, ''::text)) WHERE (revoked_at IS NULL);


--
-- Name: context_subscriptions_subscriber; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX context_subscriptions_subscriber ON data.context_subscriptions USING btree (subscriber_org_id) WHERE (revoked_at IS NULL);


--
-- Name: contexts_live_name; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX contexts_live_name ON data.contexts USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), name) WHERE (retired_at IS NULL);


--
-- Name: documents_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX documents_identity ON data.documents USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), path);


--
-- Name: documents_link_keys; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX documents_link_keys ON data.documents USING gin (link_keys);


--
-- Name: embedding_models_one_active; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX embedding_models_one_active ON data.embedding_models USING btree (namespace) WHERE (status = 'active'::text);


--
-- Name: embedding_models_one_shadow; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX embedding_models_one_shadow ON data.embedding_models USING btree (namespace) WHERE (status = 'shadow'::text);


--
-- Name: embeddings_model_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX embeddings_model_org ON ONLY data.embeddings USING btree (model_id, org_id);


--
-- Name: eval_replays_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX eval_replays_org ON data.eval_replays USING btree (org_id, run_id);


--
-- Name: eval_runs_finished; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX eval_runs_finished ON data.eval_runs USING btree (finished_at);


--
-- Name: fragment_links_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_doc ON data.fragment_links USING btree (doc_id);


--
-- Name: fragment_links_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX fragment_links_identity ON data.fragment_links USING btree (fragment_id, doc_id, link_type, target_key, COALESCE(target_name, ''::text), COALESCE(target_anchor, ''::text), COALESCE(target_repo, ''::text));


--
-- Name: fragment_links_key; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_key ON data.fragment_links USING btree (org_id, target_key);


--
-- Name: fragment_links_superseded; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_superseded ON data.fragment_links USING btree (target_doc_id) WHERE (link_type = ANY (ARRAY['supersedes'::text, 'superseded_by'::text]));


--
-- Name: fragment_links_superseding; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_superseding ON data.fragment_links USING btree (doc_id) WHERE (link_type = ANY (ARRAY['supersedes'::text, 'superseded_by'::text]));


--
-- Name: fragment_links_target_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_links_target_doc ON data.fragment_links USING btree (target_doc_id);


--
-- Name: fragment_returns_window; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_returns_window ON data.fragment_returns USING btree (org_id, returned_at) INCLUDE (fragment_id);


--
-- Name: fragment_sources_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_sources_fragment ON data.fragment_sources USING btree (fragment_id) WHERE (retired_at IS NULL);


--
-- Name: fragment_sources_fragment_all; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragment_sources_fragment_all ON data.fragment_sources USING btree (fragment_id);


--
-- Name: fragments_content_hash; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_content_hash ON ONLY data.fragments USING btree (org_id, content_hash);


--
-- Name: fragments_doc; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_doc ON ONLY data.fragments USING btree (doc_id);


--
-- Name: fragments_persona_recent; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_persona_recent ON ONLY data.fragments USING btree (org_id, persona_id, updated_at DESC, fragment_id DESC) WHERE ((persona_id IS NOT NULL) AND active);


--
-- Name: fragments_simhash_band0; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band0 ON ONLY data.fragments USING btree (org_id, simhash_band0);


--
-- Name: fragments_simhash_band1; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band1 ON ONLY data.fragments USING btree (org_id, simhash_band1);


--
-- Name: fragments_simhash_band2; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band2 ON ONLY data.fragments USING btree (org_id, simhash_band2);


--
-- Name: fragments_simhash_band3; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_simhash_band3 ON ONLY data.fragments USING btree (org_id, simhash_band3);


--
-- Name: fragments_windowed; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX fragments_windowed ON ONLY data.fragments USING btree (org_id) WHERE ((valid_from IS NOT NULL) OR (valid_until IS NOT NULL));


--
-- Name: idempotent_writes_age; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX idempotent_writes_age ON data.idempotent_writes USING btree (org_id, created_at);


--
-- Name: model_replays_model; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX model_replays_model ON data.model_replays USING btree (model_id, org_id, replayed_at);


--
-- Name: nudge_deliveries_nudge; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX nudge_deliveries_nudge ON data.nudge_deliveries USING btree (nudge_id);


--
-- Name: nudge_outbox_due; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX nudge_outbox_due ON data.nudge_outbox USING btree (next_attempt_at) WHERE (delivered_at IS NULL);


--
-- Name: owner_reassignments_org; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX owner_reassignments_org ON data.owner_reassignments USING btree (org_id, reassigned_at DESC);


--
-- Name: pins_fragment; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX pins_fragment ON data.pins USING btree (fragment_id);


--
-- Name: pins_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX pins_identity ON data.pins USING btree (org_id, COALESCE(repo_id, ''::text), COALESCE(persona_id, ''::text), COALESCE(session_id, ''::text), fragment_id);


--
-- Name: ranking_profiles_identity; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE UNIQUE INDEX ranking_profiles_identity ON data.ranking_profiles USING btree (org_id, COALESCE(persona_id, ''::text));


--
-- Name: retrieval_traces_org_created; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX retrieval_traces_org_created ON data.retrieval_traces USING btree (org_id, created_at DESC);


--
-- Name: usage_below_floor_org_created; Type: INDEX; Schema: data; Owner: <migrator>
--

CREATE INDEX usage_below_floor_org_created ON data.usage_below_floor USING btree (org_id, created_at DESC);


--
-- Name: near_duplicate_clusters _RETURN; Type: RULE; Schema: api; Owner: <migrator>
--

CREATE OR REPLACE VIEW api.near_duplicate_clusters WITH (security_invoker='true') AS
 SELECT f.fragment_id,
    f.org_id,
    f.repo_id,
    f.persona_id,
    f.session_id,
    f.namespace,
    f.kind,
    f.owner,
    count(*) AS sources,
    count(*) FILTER (WHERE (s.content_hash = f.content_hash)) AS exact_sources,
    count(*) FILTER (WHERE (s.content_hash <> f.content_hash)) AS near_sources,
    count(DISTINCT s.doc_id) AS documents,
    array_agg(DISTINCT d.path ORDER BY d.path) AS paths
   FROM ((data.fragments f
     JOIN data.fragment_sources s ON (((s.fragment_id = f.fragment_id) AND (s.org_id = f.org_id) AND (s.retired_at IS NULL))))
     JOIN data.documents d ON (((d.org_id = s.org_id) AND (d.doc_id = s.doc_id))))
  WHERE f.active
  GROUP BY f.org_id, f.fragment_id
 HAVING (count(*) > 1);


--
-- Name: context_subscriptions context_subscriptions_shareable; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER context_subscriptions_shareable BEFORE INSERT OR UPDATE OF context_id, revoked_at ON data.context_subscriptions FOR EACH ROW EXECUTE FUNCTION data._check_subscription();


--
-- Name: document_versions document_versions_org; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER document_versions_org BEFORE INSERT OR UPDATE OF org_id, doc_id ON data.document_versions FOR EACH ROW EXECUTE FUNCTION data._document_version_org();


--
-- Name: fragment_sources fragment_sources_deleted; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragment_sources_deleted AFTER DELETE ON data.fragment_sources REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION data._on_sources_deleted();


--
-- Name: fragments fragments_bm25_delete; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_delete AFTER DELETE ON data.fragments REFERENCING OLD TABLE AS old_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_bm25_insert; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_insert AFTER INSERT ON data.fragments REFERENCING NEW TABLE AS new_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_bm25_update; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_bm25_update AFTER UPDATE ON data.fragments REFERENCING OLD TABLE AS old_fragments NEW TABLE AS new_fragments FOR EACH STATEMENT EXECUTE FUNCTION data._bm25_on_fragment_change();


--
-- Name: fragments fragments_reading_text; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER fragments_reading_text BEFORE INSERT OR UPDATE OF text, reading ON data.fragments FOR EACH ROW EXECUTE FUNCTION data._check_reading();


--
-- Name: retrieval_traces retrieval_traces_returns; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_returns AFTER INSERT ON data.retrieval_traces REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION data._record_returns();


--
-- Name: retrieval_traces retrieval_traces_usage_delete; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_usage_delete AFTER DELETE ON data.retrieval_traces REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION data._usage_track();


--
-- Name: retrieval_traces retrieval_traces_usage_insert; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_usage_insert AFTER INSERT ON data.retrieval_traces REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION data._usage_pend();


--
-- Name: retrieval_traces retrieval_traces_usage_settle; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_usage_settle BEFORE DELETE OR UPDATE ON data.retrieval_traces FOR EACH STATEMENT EXECUTE FUNCTION data._usage_settle();


--
-- Name: retrieval_traces retrieval_traces_usage_truncate; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_usage_truncate AFTER TRUNCATE ON data.retrieval_traces FOR EACH STATEMENT EXECUTE FUNCTION data._usage_truncate();


--
-- Name: retrieval_traces retrieval_traces_usage_update; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER retrieval_traces_usage_update AFTER UPDATE ON data.retrieval_traces REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION data._usage_track();


--
-- Name: usage_days usage_days_p95; Type: TRIGGER; Schema: data; Owner: <migrator>
--

CREATE TRIGGER usage_days_p95 BEFORE INSERT OR UPDATE ON data.usage_days FOR EACH ROW EXECUTE FUNCTION data._usage_days_p95();


--
-- Name: api_keys api_keys_org_id_principal_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.api_keys
    ADD CONSTRAINT api_keys_org_id_principal_id_fkey FOREIGN KEY (org_id, principal_id) REFERENCES data.principals(org_id, principal_id) ON DELETE CASCADE;


--
-- Name: bm25_blocks bm25_blocks_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_blocks
    ADD CONSTRAINT bm25_blocks_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: bm25_corpus bm25_corpus_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_corpus
    ADD CONSTRAINT bm25_corpus_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: bm25_terms bm25_terms_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.bm25_terms
    ADD CONSTRAINT bm25_terms_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_members context_members_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_members
    ADD CONSTRAINT context_members_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_context_id_context_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_context_id_context_org_id_fkey FOREIGN KEY (context_id, context_org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_rules context_rules_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_rules
    ADD CONSTRAINT context_rules_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_context_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_context_id_org_id_fkey FOREIGN KEY (context_id, org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_context_id_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_context_id_version_fkey FOREIGN KEY (context_id, version) REFERENCES data.context_versions(context_id, version) ON DELETE CASCADE;


--
-- Name: context_subscriptions context_subscriptions_subscriber_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_subscriptions
    ADD CONSTRAINT context_subscriptions_subscriber_org_id_fkey FOREIGN KEY (subscriber_org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: context_versions context_versions_context_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.context_versions
    ADD CONSTRAINT context_versions_context_id_org_id_fkey FOREIGN KEY (context_id, org_id) REFERENCES data.contexts(context_id, org_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: contexts contexts_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.contexts
    ADD CONSTRAINT contexts_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: document_versions document_versions_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.document_versions
    ADD CONSTRAINT document_versions_doc_id_fkey FOREIGN KEY (doc_id) REFERENCES data.documents(doc_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: documents documents_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.documents
    ADD CONSTRAINT documents_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: embedding_models embedding_models_namespace_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.embedding_models
    ADD CONSTRAINT embedding_models_namespace_fkey FOREIGN KEY (namespace) REFERENCES data.embedding_namespaces(namespace);


--
-- Name: embeddings embeddings_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: embeddings embeddings_model_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_model_id_fkey1 FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id);


--
-- Name: embeddings embeddings_org_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings
    ADD CONSTRAINT embeddings_org_id_fkey1 FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: eval_figures eval_figures_run_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_figures
    ADD CONSTRAINT eval_figures_run_id_fkey FOREIGN KEY (run_id) REFERENCES data.eval_runs(run_id) ON DELETE CASCADE;


--
-- Name: eval_replays eval_replays_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: eval_replays eval_replays_run_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.eval_replays
    ADD CONSTRAINT eval_replays_run_id_fkey FOREIGN KEY (run_id) REFERENCES data.eval_runs(run_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_doc_id_fkey FOREIGN KEY (doc_id) REFERENCES data.documents(doc_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: fragment_links fragment_links_target_doc_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_links
    ADD CONSTRAINT fragment_links_target_doc_id_fkey FOREIGN KEY (target_doc_id) REFERENCES data.documents(doc_id) ON DELETE SET NULL;


--
-- Name: fragment_returns fragment_returns_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: fragment_returns fragment_returns_trace_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_returns
    ADD CONSTRAINT fragment_returns_trace_id_fkey FOREIGN KEY (trace_id) REFERENCES data.retrieval_traces(trace_id) ON DELETE CASCADE;


--
-- Name: fragment_sources fragment_sources_doc_id_doc_version_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_doc_id_doc_version_fkey FOREIGN KEY (doc_id, doc_version) REFERENCES data.document_versions(doc_id, version) ON DELETE CASCADE;


--
-- Name: fragment_sources fragment_sources_fragment_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.fragment_sources
    ADD CONSTRAINT fragment_sources_fragment_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: fragments fragments_doc_id_doc_version_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_doc_id_doc_version_fkey1 FOREIGN KEY (doc_id, doc_version) REFERENCES data.document_versions(doc_id, version) ON DELETE SET NULL;


--
-- Name: fragments fragments_namespace_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_namespace_fkey1 FOREIGN KEY (namespace) REFERENCES data.embedding_namespaces(namespace);


--
-- Name: fragments fragments_org_id_fkey1; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments
    ADD CONSTRAINT fragments_org_id_fkey1 FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: git_syncs git_syncs_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: git_syncs git_syncs_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.git_syncs
    ADD CONSTRAINT git_syncs_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: grants grants_org_id_principal_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.grants
    ADD CONSTRAINT grants_org_id_principal_id_fkey FOREIGN KEY (org_id, principal_id) REFERENCES data.principals(org_id, principal_id) ON DELETE CASCADE;


--
-- Name: idempotent_writes idempotent_writes_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.idempotent_writes
    ADD CONSTRAINT idempotent_writes_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: model_replays model_replays_model_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_model_id_fkey FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id);


--
-- Name: model_replays model_replays_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.model_replays
    ADD CONSTRAINT model_replays_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: nudge_deliveries nudge_deliveries_nudge_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_nudge_id_fkey FOREIGN KEY (nudge_id) REFERENCES data.nudge_outbox(nudge_id) ON DELETE CASCADE;


--
-- Name: nudge_deliveries nudge_deliveries_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_deliveries
    ADD CONSTRAINT nudge_deliveries_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: nudge_outbox nudge_outbox_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.nudge_outbox
    ADD CONSTRAINT nudge_outbox_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: org_webhooks org_webhooks_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.org_webhooks
    ADD CONSTRAINT org_webhooks_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: owner_reassignments owner_reassignments_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.owner_reassignments
    ADD CONSTRAINT owner_reassignments_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: persona_vectors persona_vectors_model_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_model_id_fkey FOREIGN KEY (model_id) REFERENCES data.embedding_models(model_id) ON DELETE CASCADE;


--
-- Name: persona_vectors persona_vectors_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.persona_vectors
    ADD CONSTRAINT persona_vectors_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: personas personas_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.personas
    ADD CONSTRAINT personas_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: pins pins_fragment_id_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_fragment_id_org_id_fkey FOREIGN KEY (fragment_id, org_id) REFERENCES data.fragments(fragment_id, org_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_repo_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_repo_id_fkey FOREIGN KEY (org_id, repo_id) REFERENCES data.repos(org_id, repo_id) ON DELETE CASCADE;


--
-- Name: pins pins_org_id_session_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.pins
    ADD CONSTRAINT pins_org_id_session_id_fkey FOREIGN KEY (org_id, session_id) REFERENCES data.sessions(org_id, session_id) ON DELETE CASCADE;


--
-- Name: principals principals_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.principals
    ADD CONSTRAINT principals_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: ranking_profiles ranking_profiles_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.ranking_profiles
    ADD CONSTRAINT ranking_profiles_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: ranking_profiles ranking_profiles_org_id_persona_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.ranking_profiles
    ADD CONSTRAINT ranking_profiles_org_id_persona_id_fkey FOREIGN KEY (org_id, persona_id) REFERENCES data.personas(org_id, persona_id) ON DELETE CASCADE;


--
-- Name: repos repos_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.repos
    ADD CONSTRAINT repos_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: retrieval_traces retrieval_traces_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.retrieval_traces
    ADD CONSTRAINT retrieval_traces_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: sessions sessions_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.sessions
    ADD CONSTRAINT sessions_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: usage_below_floor usage_below_floor_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_below_floor
    ADD CONSTRAINT usage_below_floor_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: usage_below_floor usage_below_floor_trace_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_below_floor
    ADD CONSTRAINT usage_below_floor_trace_id_fkey FOREIGN KEY (trace_id) REFERENCES data.retrieval_traces(trace_id) ON DELETE CASCADE;


--
-- Name: usage_days usage_days_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_days
    ADD CONSTRAINT usage_days_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: usage_fragments usage_fragments_org_id_fkey; Type: FK CONSTRAINT; Schema: data; Owner: <migrator>
--

ALTER TABLE ONLY data.usage_fragments
    ADD CONSTRAINT usage_fragments_org_id_fkey FOREIGN KEY (org_id) REFERENCES data.orgs(org_id) ON DELETE CASCADE;


--
-- Name: api_keys; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.api_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: binding_keys; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.binding_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_blocks; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_blocks ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_corpus; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_corpus ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_terms; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.bm25_terms ENABLE ROW LEVEL SECURITY;

--
-- Name: context_members; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_members ENABLE ROW LEVEL SECURITY;

--
-- Name: context_rules; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_rules ENABLE ROW LEVEL SECURITY;

--
-- Name: context_subscriptions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_subscriptions ENABLE ROW LEVEL SECURITY;

--
-- Name: context_versions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.context_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: contexts; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.contexts ENABLE ROW LEVEL SECURITY;

--
-- Name: document_versions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.document_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: documents; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.documents ENABLE ROW LEVEL SECURITY;

--
-- Name: embeddings; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.embeddings ENABLE ROW LEVEL SECURITY;

--
-- Name: eval_replays; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.eval_replays ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_authority; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_authority ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_links; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_links ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_returns; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_returns ENABLE ROW LEVEL SECURITY;

--
-- Name: fragment_sources; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragment_sources ENABLE ROW LEVEL SECURITY;

--
-- Name: fragments; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.fragments ENABLE ROW LEVEL SECURITY;

--
-- Name: git_syncs; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.git_syncs ENABLE ROW LEVEL SECURITY;

--
-- Name: sessions granted_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY granted_read ON data.sessions FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))));


--
-- Name: grants; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.grants ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotent_writes; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.idempotent_writes ENABLE ROW LEVEL SECURITY;

--
-- Name: orgs member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.orgs FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: personas member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.personas FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: repos member_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY member_read ON data.repos FOR SELECT USING ((org_id = ( SELECT data.acl_org() AS acl_org)));


--
-- Name: model_replays; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.model_replays ENABLE ROW LEVEL SECURITY;

--
-- Name: binding_keys no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.binding_keys USING (false);


--
-- Name: fragment_authority no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.fragment_authority USING (false);


--
-- Name: fragment_returns no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.fragment_returns USING (false);


--
-- Name: idempotent_writes no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.idempotent_writes USING (false);


--
-- Name: org_webhooks no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.org_webhooks USING (false);


--
-- Name: usage_below_floor no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.usage_below_floor USING (false);


--
-- Name: usage_days no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.usage_days USING (false);


--
-- Name: usage_fragments no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.usage_fragments USING (false);


--
-- Name: usage_pending no_direct_access; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY no_direct_access ON data.usage_pending USING (false);


--
-- Name: nudge_deliveries; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: nudge_outbox; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.nudge_outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: model_replays org_admin_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_admin_read ON data.model_replays FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: org_webhooks; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.org_webhooks ENABLE ROW LEVEL SECURITY;

--
-- Name: nudge_deliveries org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.nudge_deliveries FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: nudge_outbox org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.nudge_outbox FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: owner_reassignments org_wide_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY org_wide_read ON data.owner_reassignments FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ( SELECT data.acl_org_wide() AS acl_org_wide)));


--
-- Name: orgs; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.orgs ENABLE ROW LEVEL SECURITY;

--
-- Name: eval_replays own_only; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY own_only ON data.eval_replays FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: retrieval_traces own_only; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY own_only ON data.retrieval_traces FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: owner_reassignments; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.owner_reassignments ENABLE ROW LEVEL SECURITY;

--
-- Name: context_subscriptions party_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY party_read ON data.context_subscriptions FOR SELECT USING ((((org_id = ( SELECT data.acl_org() AS acl_org)) AND (context_id IN ( SELECT c.context_id
   FROM data.contexts c
  WHERE ((c.org_id = ( SELECT data.acl_org() AS acl_org)) AND ((c.repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (c.repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((c.persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (c.persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((c.session_id IS NULL) OR (c.session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))))))) OR ((subscriber_org_id = ( SELECT data.acl_org() AS acl_org)) AND ((subscriber_repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (subscriber_repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))))));


--
-- Name: persona_vectors; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.persona_vectors ENABLE ROW LEVEL SECURITY;

--
-- Name: personas; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.personas ENABLE ROW LEVEL SECURITY;

--
-- Name: pins; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.pins ENABLE ROW LEVEL SECURITY;

--
-- Name: principals; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.principals ENABLE ROW LEVEL SECURITY;

--
-- Name: ranking_profiles; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.ranking_profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: repos; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.repos ENABLE ROW LEVEL SECURITY;

--
-- Name: retrieval_traces; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.retrieval_traces ENABLE ROW LEVEL SECURITY;

--
-- Name: bm25_blocks scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_blocks FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: bm25_corpus scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_corpus FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: bm25_terms scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.bm25_terms FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: context_rules scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.context_rules FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[])))));


--
-- Name: contexts scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.contexts FOR SELECT USING ((((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))) OR (context_id IN ( SELECT r.context_id
   FROM data._readable_context_versions() r(context_id, version, via_subscription)))));


--
-- Name: document_versions scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.document_versions FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (EXISTS ( SELECT 1
   FROM data.documents d
  WHERE ((d.org_id = document_versions.org_id) AND (d.doc_id = document_versions.doc_id))))));


--
-- Name: documents scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.documents FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: embeddings scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.embeddings FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: fragment_links scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragment_links FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[]))) AND ((target_repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (target_repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((target_persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (target_persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((target_session_id IS NULL) OR (target_session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: fragment_sources scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragment_sources FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (EXISTS ( SELECT 1
   FROM data.documents d
  WHERE ((d.org_id = fragment_sources.org_id) AND (d.doc_id = fragment_sources.doc_id))))));


--
-- Name: fragments scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.fragments FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: git_syncs scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.git_syncs FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[])))));


--
-- Name: persona_vectors scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.persona_vectors FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[])))));


--
-- Name: pins scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.pins FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((repo_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (repo_id = ANY (( SELECT data.acl_repos() AS acl_repos)::text[]))) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[]))) AND ((session_id IS NULL) OR (session_id = ANY (( SELECT data.acl_sessions() AS acl_sessions)::text[])))));


--
-- Name: ranking_profiles scope_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY scope_read ON data.ranking_profiles FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND ((persona_id IS NULL) OR ( SELECT data.acl_org_wide() AS acl_org_wide) OR (persona_id = ANY (( SELECT data.acl_personas() AS acl_personas)::text[])))));


--
-- Name: api_keys self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.api_keys FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: grants self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.grants FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: principals self_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY self_read ON data.principals FOR SELECT USING (((org_id = ( SELECT data.acl_org() AS acl_org)) AND (principal_id = ( SELECT data.acl_principal() AS acl_principal))));


--
-- Name: sessions; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: usage_below_floor; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.usage_below_floor ENABLE ROW LEVEL SECURITY;

--
-- Name: usage_days; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.usage_days ENABLE ROW LEVEL SECURITY;

--
-- Name: usage_fragments; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.usage_fragments ENABLE ROW LEVEL SECURITY;

--
-- Name: usage_pending; Type: ROW SECURITY; Schema: data; Owner: <migrator>
--

ALTER TABLE data.usage_pending ENABLE ROW LEVEL SECURITY;

--
-- Name: context_members version_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY version_read ON data.context_members FOR SELECT USING (((context_id, version) IN ( SELECT r.context_id,
    r.version
   FROM data._readable_context_versions() r(context_id, version, via_subscription))));


--
-- Name: context_versions version_read; Type: POLICY; Schema: data; Owner: <migrator>
--

CREATE POLICY version_read ON data.context_versions FOR SELECT USING (((context_id, version) IN ( SELECT r.context_id,
    r.version
   FROM data._readable_context_versions() r(context_id, version, via_subscription))));


--
-- Name: SCHEMA api; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA api TO contexts_service;
GRANT USAGE ON SCHEMA api TO contexts_analyst;
GRANT USAGE ON SCHEMA api TO contexts_auditor;


--
-- Name: SCHEMA data; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA data TO contexts_service;
GRANT USAGE ON SCHEMA data TO contexts_analyst;
GRANT USAGE ON SCHEMA data TO contexts_auditor;


--
-- Name: SCHEMA extensions; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA extensions TO contexts_service;
GRANT USAGE ON SCHEMA extensions TO contexts_analyst;
GRANT USAGE ON SCHEMA extensions TO contexts_auditor;


--
-- Name: SCHEMA service; Type: ACL; Schema: -; Owner: <migrator>
--

GRANT USAGE ON SCHEMA service TO contexts_service;


--
-- Name: FUNCTION codeowners_file(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.codeowners_file(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION context_get(p_context_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_get(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_get(p_context_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.context_get(p_context_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION context_resolve(p_refs text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_resolve(p_refs text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_resolve(p_refs text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.context_resolve(p_refs text[]) TO contexts_analyst;


--
-- Name: FUNCTION context_subscriptions(p_context_id bigint, p_include_revoked boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.context_subscriptions(p_context_id bigint, p_include_revoked boolean) TO contexts_analyst;


--
-- Name: FUNCTION context_versions(p_context_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.context_versions(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.context_versions(p_context_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.context_versions(p_context_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.contexts_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_retired boolean) TO contexts_analyst;


--
-- Name: FUNCTION fragment_links(p_fragment_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.fragment_links(p_fragment_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION fragment_readers(p_org_id text, p_fragment_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.fragment_readers(p_org_id text, p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.fragment_readers(p_org_id text, p_fragment_id bigint) TO contexts_auditor;


--
-- Name: FUNCTION get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) TO contexts_service;
GRANT ALL ON FUNCTION api.get_document(p_doc_id bigint, p_version integer, p_offset integer, p_max_chars integer) TO contexts_analyst;


--
-- Name: FUNCTION get_fragment(p_fragment_id bigint); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION api.get_fragment(p_fragment_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION get_trace(p_trace_id uuid); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.get_trace(p_trace_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_service;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_analyst;
GRANT ALL ON FUNCTION api.get_trace(p_trace_id uuid) TO contexts_auditor;


--
-- Name: FUNCTION lexical_document(p_heading text, p_body text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) TO contexts_service;
GRANT ALL ON FUNCTION api.lexical_document(p_heading text, p_body text) TO contexts_analyst;


--
-- Name: FUNCTION lexical_query_terms(p_query text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.lexical_query_terms(p_query text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.lexical_query_terms(p_query text) TO contexts_service;
GRANT ALL ON FUNCTION api.lexical_query_terms(p_query text) TO contexts_analyst;


--
-- Name: FUNCTION lexical_tsvector(p_text text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.lexical_tsvector(p_text text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.lexical_tsvector(p_text text) TO contexts_service;
GRANT ALL ON FUNCTION api.lexical_tsvector(p_text text) TO contexts_analyst;


--
-- Name: FUNCTION linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.linked_fragments(p_org_id text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION api.list_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path_prefix text, p_limit integer, p_after bigint, p_kind text, p_owner text, p_updated_since timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION model_generations(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.model_generations() FROM PUBLIC;
GRANT ALL ON FUNCTION api.model_generations() TO contexts_service;
GRANT ALL ON FUNCTION api.model_generations() TO contexts_analyst;


--
-- Name: FUNCTION owner_settings(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.owner_settings(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.owner_settings(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.owner_settings(p_org_id text) TO contexts_analyst;


--
-- Name: FUNCTION pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.pins_list(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_include_expired boolean) TO contexts_analyst;


--
-- Name: FUNCTION ranking_profile(p_org_id text, p_persona_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.ranking_profile(p_org_id text, p_persona_id text) TO contexts_analyst;


--
-- Name: FUNCTION ranking_profiles(p_org_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.ranking_profiles(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.ranking_profiles(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.ranking_profiles(p_org_id text) TO contexts_analyst;


--
-- Name: FUNCTION retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.retrieve(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_fusion jsonb, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_service;
GRANT ALL ON FUNCTION api.retrieve_candidates(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_k_lexical integer, p_k_dense integer, p_rrf_k integer, p_fusion jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_include_superseded boolean) TO contexts_analyst;


--
-- Name: FUNCTION rule_matches(p_org_id text, p_repo_id text, p_touching text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.rule_matches(p_org_id text, p_repo_id text, p_touching text[]) TO contexts_analyst;


--
-- Name: FUNCTION rules_list(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.rules_list(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION api.score_dense(p_org_id text, p_query_embeddings jsonb, p_fragment_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION api.score_lexical(p_org_id text, p_query text, p_fragment_ids bigint[], p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.search_dense(p_org_id text, p_query_embeddings jsonb, p_k integer, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION api.search_lexical(p_org_id text, p_query text, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION api.stale_fragments(p_org_id text, p_owner text, p_min_retrievals integer, p_window_days integer, p_stale_after_days integer, p_as_of timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION sync_documents(p_org_id text, p_repo_id text, p_paths text[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) TO contexts_service;
GRANT ALL ON FUNCTION api.sync_documents(p_org_id text, p_repo_id text, p_paths text[]) TO contexts_analyst;


--
-- Name: FUNCTION sync_state(p_org_id text, p_repo_id text); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) TO contexts_service;
GRANT ALL ON FUNCTION api.sync_state(p_org_id text, p_repo_id text) TO contexts_analyst;


--
-- Name: FUNCTION validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer) TO contexts_service;
GRANT ALL ON FUNCTION api.validity_left_out(p_org_id text, p_query text, p_query_embeddings jsonb, p_repo_id text, p_persona_id text, p_session_id text, p_lexical_floor double precision, p_dense_floors jsonb, p_path_prefix text, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negatives text, p_as_of timestamp with time zone, p_limit integer) TO contexts_analyst;


--
-- Name: FUNCTION version_metadata(p_doc_ids bigint[], p_versions integer[]); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) FROM PUBLIC;
GRANT ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) TO contexts_service;
GRANT ALL ON FUNCTION api.version_metadata(p_doc_ids bigint[], p_versions integer[]) TO contexts_analyst;


--
-- Name: FUNCTION whoami(); Type: ACL; Schema: api; Owner: <migrator>
--

REVOKE ALL ON FUNCTION api.whoami() FROM PUBLIC;
GRANT ALL ON FUNCTION api.whoami() TO contexts_service;
GRANT ALL ON FUNCTION api.whoami() TO contexts_analyst;
GRANT ALL ON FUNCTION api.whoami() TO contexts_auditor;


--
-- Name: FUNCTION _acl(p_kind text, p_write boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._acl(p_kind text, p_write boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_service;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_analyst;
GRANT ALL ON FUNCTION data._acl(p_kind text, p_write boolean) TO contexts_auditor;


--
-- Name: FUNCTION _acl_writes(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._acl_writes() FROM PUBLIC;


--
-- Name: FUNCTION _adopt_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._adopt_login(p_login text) FROM PUBLIC;


--
-- Name: FUNCTION _analyze_new_tenant(p_org_id text, p_min_rows integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._analyze_new_tenant(p_org_id text, p_min_rows integer) FROM PUBLIC;


--
-- Name: FUNCTION _authority(p_org_id text, p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._authority(p_org_id text, p_fragment_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text, OUT doc_id bigint, OUT version integer, OUT changed boolean, OUT rehome jsonb, OUT affected bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _begin_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._begin_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION _bind(p_org_id text, p_principal_id text, p_key_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bind(p_org_id text, p_principal_id text, p_key_id text) FROM PUBLIC;


--
-- Name: FUNCTION _binding(OUT org_id text, OUT principal_id text, OUT key_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._binding(OUT org_id text, OUT principal_id text, OUT key_id text) FROM PUBLIC;


--
-- Name: FUNCTION _binding_ids(p_org_id text, p_principal_id text, p_key_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._binding_ids(p_org_id text, p_principal_id text, p_key_id text) FROM PUBLIC;


--
-- Name: FUNCTION _binding_mac(p_ids text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._binding_mac(p_ids text) FROM PUBLIC;


--
-- Name: FUNCTION _bm25_group(p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_group(p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION _bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_index(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) FROM PUBLIC;


--
-- Name: FUNCTION _bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_kept(p_org_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_on_fragment_change(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_on_fragment_change() FROM PUBLIC;


--
-- Name: FUNCTION _bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_scores(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k1 double precision, p_b double precision) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_statistics(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, OUT n double precision, OUT avgdl double precision, OUT terms text[], OUT weights double precision[], OUT term_nos integer[], OUT blocks bytea[]) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._bm25_top(p_org_id text, p_query text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_k integer, p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone, p_k1 double precision, p_b double precision, p_also_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bm25_unindex(p_org_ids text[], p_fragment_ids bigint[], p_tsvs tsvector[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[]) FROM PUBLIC;


--
-- Name: FUNCTION _bypasses_rls(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._bypasses_rls() FROM PUBLIC;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_service;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_analyst;
GRANT ALL ON FUNCTION data._bypasses_rls() TO contexts_auditor;


--
-- Name: FUNCTION _check_fusion(p_fusion jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_fusion(p_fusion jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._check_fusion(p_fusion jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._check_fusion(p_fusion jsonb) TO contexts_analyst;


--
-- Name: FUNCTION _check_halflives(p_halflife_days jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_halflives(p_halflife_days jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _check_reading(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_reading() FROM PUBLIC;


--
-- Name: FUNCTION _check_rule_globs(p_path_globs text[], p_symbol_globs text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_rule_globs(p_path_globs text[], p_symbol_globs text[]) FROM PUBLIC;


--
-- Name: FUNCTION _check_subscription(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._check_subscription() FROM PUBLIC;


--
-- Name: FUNCTION _citation_pagerank(p_org_id text, p_damping double precision, p_iterations integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._citation_pagerank(p_org_id text, p_damping double precision, p_iterations integer) FROM PUBLIC;


--
-- Name: FUNCTION _clamp_unreadable_times(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._clamp_unreadable_times() FROM PUBLIC;


--
-- Name: FUNCTION _context_rows(p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._context_rows(p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._context_rows(p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._context_rows(p_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._context_versions(p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION _create_tenant_partitions(p_org_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._create_tenant_partitions(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION _deactivate_unsourced(p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._deactivate_unsourced(p_fragment_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_service;
GRANT ALL ON FUNCTION data._dense_hits(p_org_id text, p_model_id integer, p_dims integer, p_query_vector extensions.vector, p_k integer, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_ids bigint[], p_kinds text[], p_updated_since timestamp with time zone, p_updated_until timestamp with time zone, p_negative boolean, p_valid_at timestamp with time zone) TO contexts_analyst;


--
-- Name: FUNCTION _document_keys(p_path text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._document_keys(p_path text) FROM PUBLIC;


--
-- Name: FUNCTION _document_version_org(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._document_version_org() FROM PUBLIC;


--
-- Name: FUNCTION _find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer, p_inactive bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._find_duplicate(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespace text, p_content_hash text, p_simhash bigint, p_max_distance integer, p_inactive bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _fragment_readers(p_org_id text, p_fragment_id bigint); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._fragment_readers(p_org_id text, p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION data._fragment_readers(p_org_id text, p_fragment_id bigint) TO contexts_auditor;


--
-- Name: FUNCTION _fragment_readers_core(p_org_id text, p_fragment_id bigint); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._fragment_readers_core(p_org_id text, p_fragment_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION _fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) TO contexts_service;
GRANT ALL ON FUNCTION data._fuse(p_ids bigint[], p_lexical_ranks integer[], p_lexical_scores double precision[], p_dense_ranks integer[], p_dense_scores double precision[], p_namespaces text[], p_models text[], p_lexical_on boolean, p_dense_on boolean, p_fusion jsonb, p_rrf_k integer) TO contexts_analyst;


--
-- Name: FUNCTION _glob_regex(p_glob text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._glob_regex(p_glob text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._glob_regex(p_glob text) TO contexts_service;
GRANT ALL ON FUNCTION data._glob_regex(p_glob text) TO contexts_analyst;


--
-- Name: FUNCTION _grant_target(p_org_id text, p_scope_kind text, p_scope_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._grant_target(p_org_id text, p_scope_kind text, p_scope_id text) FROM PUBLIC;


--
-- Name: FUNCTION _in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_service;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._in_scope(fragment_repo text, fragment_persona text, fragment_session text, want_repo text, want_persona text, want_session text) TO contexts_auditor;


--
-- Name: FUNCTION _json_number(p_value jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._json_number(p_value jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._json_number(p_value jsonb) TO contexts_analyst;
GRANT ALL ON FUNCTION data._json_number(p_value jsonb) TO contexts_auditor;


--
-- Name: FUNCTION _link_targets(p_org_ids text[], p_fragment_ids bigint[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[], p_keys text[], p_names text[], p_anchors text[], p_target_repos text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._link_targets(p_org_ids text[], p_fragment_ids bigint[], p_repo_ids text[], p_persona_ids text[], p_session_ids text[], p_keys text[], p_names text[], p_anchors text[], p_target_repos text[]) FROM PUBLIC;


--
-- Name: FUNCTION _links_to_hidden(p_fragment_id bigint); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._links_to_hidden(p_fragment_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION data._links_to_hidden(p_fragment_id bigint) TO contexts_service;
GRANT ALL ON FUNCTION data._links_to_hidden(p_fragment_id bigint) TO contexts_analyst;


--
-- Name: FUNCTION _match_keys(p_content_hash text, p_simhash bigint); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._match_keys(p_content_hash text, p_simhash bigint) FROM PUBLIC;


--
-- Name: FUNCTION _metadata_problem(p_metadata jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._metadata_problem(p_metadata jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _metadata_time(p_value text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._metadata_time(p_value text) FROM PUBLIC;


--
-- Name: FUNCTION _on_sources_deleted(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._on_sources_deleted() FROM PUBLIC;


--
-- Name: FUNCTION _owner_problem(p_owner text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._owner_problem(p_owner text) FROM PUBLIC;


--
-- Name: FUNCTION _path_problem(p_path text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._path_problem(p_path text) FROM PUBLIC;


--
-- Name: FUNCTION _principal_of_org(p_who text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._principal_of_org(p_who text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._principal_of_org(p_who text) TO contexts_service;
GRANT ALL ON FUNCTION data._principal_of_org(p_who text) TO contexts_analyst;


--
-- Name: FUNCTION _principal_or_raise(OUT org_id text, OUT principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._principal_or_raise(OUT org_id text, OUT principal_id text) TO contexts_auditor;


--
-- Name: FUNCTION _query_vectors(p_query_embeddings jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._query_vectors(p_query_embeddings jsonb) TO contexts_analyst;


--
-- Name: FUNCTION _raise_invalid(p_what text, p_message text, p_constraint text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._raise_invalid(p_what text, p_message text, p_constraint text) FROM PUBLIC;


--
-- Name: FUNCTION _ranking_profile(p_org_id text, p_persona_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._ranking_profile(p_org_id text, p_persona_id text) TO contexts_analyst;


--
-- Name: FUNCTION _readable_context_versions(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_context_versions() FROM PUBLIC;
GRANT ALL ON FUNCTION data._readable_context_versions() TO contexts_service;
GRANT ALL ON FUNCTION data._readable_context_versions() TO contexts_analyst;


--
-- Name: FUNCTION _readable_fragments(p_org_id text, p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._readable_fragments(p_org_id text, p_ids bigint[]) TO contexts_auditor;


--
-- Name: FUNCTION _readable_time(p_value timestamp with time zone, p_what text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._readable_time(p_value timestamp with time zone, p_what text) FROM PUBLIC;


--
-- Name: TABLE documents; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.documents TO contexts_service;
GRANT SELECT ON TABLE data.documents TO contexts_analyst;


--
-- Name: FUNCTION _record_links(p_doc data.documents, p_links jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._record_links(p_doc data.documents, p_links jsonb) FROM PUBLIC;


--
-- Name: FUNCTION _record_links_of(p_doc_ids bigint[], p_links jsonb[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._record_links_of(p_doc_ids bigint[], p_links jsonb[]) FROM PUBLIC;


--
-- Name: FUNCTION _record_returns(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._record_returns() FROM PUBLIC;


--
-- Name: FUNCTION _redact_candidates(p_org_id text, p_candidates jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_service;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_analyst;
GRANT ALL ON FUNCTION data._redact_candidates(p_org_id text, p_candidates jsonb) TO contexts_auditor;


--
-- Name: FUNCTION _redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) TO contexts_service;
GRANT ALL ON FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._redact_pipeline(p_pipeline jsonb, p_redacted text[], OUT pipeline jsonb, OUT redacted text[]) TO contexts_auditor;


--
-- Name: FUNCTION _redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_service;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._redact_request(p_org_id text, p_query text, p_request jsonb, p_org_wide boolean, p_repos text[], p_personas text[], p_sessions text[], OUT query text, OUT request jsonb, OUT redacted text[]) TO contexts_auditor;


--
-- Name: FUNCTION _refresh_validity(p_org_id text, p_doc_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._refresh_validity(p_org_id text, p_doc_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _require_org(p_org_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_org(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_org(p_org_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_principal(p_org_id text, p_principal_id text, p_enabled boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_principal(p_org_id text, p_principal_id text, p_enabled boolean) FROM PUBLIC;


--
-- Name: FUNCTION _require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_read(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_rls_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_rls_login(p_login text) FROM PUBLIC;


--
-- Name: FUNCTION _require_scope(p_org_id text, p_repo_id text, p_persona_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data._require_scope(p_org_id text, p_repo_id text, p_persona_id text) TO contexts_auditor;


--
-- Name: FUNCTION _require_scram(p_verifier text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_scram(p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION _require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._require_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION _resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;
GRANT ALL ON FUNCTION data._resolve_context_refs(p_refs text[], p_scoped boolean, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_analyst;


--
-- Name: FUNCTION _resolve_links(p_link_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_links(p_link_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, p_same_text boolean, OUT owner text, OUT owner_source text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._resolve_owner(p_org_id text, p_owner text, p_source text, p_current_owner text, p_current_source text, p_same_text boolean, OUT owner text, OUT owner_source text) FROM PUBLIC;


--
-- Name: FUNCTION _retire_pointers(p_doc_id bigint, p_keep_version integer, OUT detached jsonb, OUT affected bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._retire_pointers(p_doc_id bigint, p_keep_version integer, OUT detached jsonb, OUT affected bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _retire_sources(p_doc_id bigint, p_keep_version integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._retire_sources(p_doc_id bigint, p_keep_version integer) FROM PUBLIC;


--
-- Name: FUNCTION _rule_rows(p_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._rule_rows(p_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._rule_rows(p_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._rule_rows(p_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._same_document(p_hash text, p_kind text, p_metadata jsonb, p_owner text, p_owner_source text, p_stored_hash text, p_stored_kind text, p_stored_metadata jsonb, p_stored_owner text, p_stored_owner_source text) FROM PUBLIC;


--
-- Name: FUNCTION _scope_words(p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._scope_words(p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION _serving_models(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._serving_models() FROM PUBLIC;
GRANT ALL ON FUNCTION data._serving_models() TO contexts_service;
GRANT ALL ON FUNCTION data._serving_models() TO contexts_analyst;


--
-- Name: FUNCTION _stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._stale_core(p_org_id text, p_as_of timestamp with time zone, p_window interval, p_min integer, p_after interval) FROM PUBLIC;


--
-- Name: FUNCTION _stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) TO contexts_service;
GRANT ALL ON FUNCTION data._stale_readable(p_org_id text, p_as_of timestamp with time zone, p_window_days integer, p_min integer, p_after_days integer) TO contexts_analyst;


--
-- Name: FUNCTION _stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._stored_query_vector(p_org_id text, p_query text, p_model text, p_dims integer) TO contexts_analyst;


--
-- Name: FUNCTION _subscription_out(p_subscription_id bigint, p_publisher boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._subscription_out(p_subscription_id bigint, p_publisher boolean) FROM PUBLIC;


--
-- Name: TABLE context_subscriptions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_subscriptions TO contexts_service;
GRANT SELECT ON TABLE data.context_subscriptions TO contexts_analyst;


--
-- Name: FUNCTION _subscription_state(s data.context_subscriptions); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._subscription_state(s data.context_subscriptions) FROM PUBLIC;
GRANT ALL ON FUNCTION data._subscription_state(s data.context_subscriptions) TO contexts_service;
GRANT ALL ON FUNCTION data._subscription_state(s data.context_subscriptions) TO contexts_analyst;


--
-- Name: FUNCTION _superseders(p_org_id text, p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) TO contexts_service;
GRANT ALL ON FUNCTION data._superseders(p_org_id text, p_fragment_ids bigint[]) TO contexts_analyst;


--
-- Name: FUNCTION _trace(p_trace_id uuid); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._trace(p_trace_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION data._trace(p_trace_id uuid) TO contexts_service;
GRANT ALL ON FUNCTION data._trace(p_trace_id uuid) TO contexts_analyst;
GRANT ALL ON FUNCTION data._trace(p_trace_id uuid) TO contexts_auditor;


--
-- Name: FUNCTION _transaction_identity(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._transaction_identity() FROM PUBLIC;


--
-- Name: FUNCTION _unsourced(p_fragment_ids bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._unsourced(p_fragment_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _usage_candidates(p_candidates jsonb); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_candidates(p_candidates jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_candidates(p_candidates jsonb) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_candidates(p_candidates jsonb) TO contexts_auditor;


--
-- Name: FUNCTION _usage_days_p95(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_days_p95() FROM PUBLIC;


--
-- Name: FUNCTION _usage_fold(p_limit integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_fold(p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION _usage_fold_all(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_fold_all() FROM PUBLIC;


--
-- Name: FUNCTION _usage_fold_every(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_fold_every() FROM PUBLIC;


--
-- Name: FUNCTION _usage_fold_some(p_limit integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_fold_some(p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION _usage_histogram_add(p_buckets integer[], p_counts bigint[], p_more_buckets integer[], p_more_counts bigint[], OUT buckets integer[], OUT counts bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_histogram_add(p_buckets integer[], p_counts bigint[], p_more_buckets integer[], p_more_counts bigint[], OUT buckets integer[], OUT counts bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION _usage_latency(p_bucket integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_latency(p_bucket integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_latency(p_bucket integer) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_latency(p_bucket integer) TO contexts_auditor;


--
-- Name: FUNCTION _usage_p95(p_buckets integer[], p_counts bigint[]); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_p95(p_buckets integer[], p_counts bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_p95(p_buckets integer[], p_counts bigint[]) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_p95(p_buckets integer[], p_counts bigint[]) TO contexts_auditor;


--
-- Name: FUNCTION _usage_pend(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_pend() FROM PUBLIC;


--
-- Name: FUNCTION _usage_rebuild(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_rebuild() FROM PUBLIC;


--
-- Name: FUNCTION _usage_recount_statements(p_source text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_recount_statements(p_source text) FROM PUBLIC;


--
-- Name: FUNCTION _usage_settle(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_settle() FROM PUBLIC;


--
-- Name: FUNCTION _usage_statements(p_source text, p_sign integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_statements(p_source text, p_sign integer) FROM PUBLIC;


--
-- Name: FUNCTION _usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_summary(p_org_id text, p_request jsonb, p_duration_ms double precision, p_candidates integer, p_included bigint, p_best_relevance double precision, p_best_score double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) TO contexts_auditor;


--
-- Name: FUNCTION _usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_trace(p_org_id text, p_request jsonb, p_candidates jsonb, p_duration_ms double precision, OUT repo_id text, OUT persona_id text, OUT session_id text, OUT foreign_org boolean, OUT latency_bucket integer, OUT empty boolean, OUT below_floor boolean, OUT relevance_floor double precision, OUT best_relevance double precision, OUT best_score double precision, OUT candidates integer) TO contexts_auditor;


--
-- Name: FUNCTION _usage_track(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_track() FROM PUBLIC;


--
-- Name: FUNCTION _usage_truncate(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_truncate() FROM PUBLIC;


--
-- Name: FUNCTION _valid_login(p_login text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._valid_login(p_login text) FROM PUBLIC;


--
-- Name: TABLE contexts; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.contexts TO contexts_service;
GRANT SELECT ON TABLE data.contexts TO contexts_analyst;


--
-- Name: FUNCTION _writable_context(p_context_id bigint, p_retired_ok boolean); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._writable_context(p_context_id bigint, p_retired_ok boolean) FROM PUBLIC;


--
-- Name: FUNCTION _writes_subscriber_scope(p_org_id text, p_repo_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._writes_subscriber_scope(p_org_id text, p_repo_id text) FROM PUBLIC;


--
-- Name: FUNCTION acl_audit(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_audit() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_audit() TO contexts_auditor;


--
-- Name: FUNCTION acl_org(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_org() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_org() TO contexts_auditor;


--
-- Name: FUNCTION acl_org_wide(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_org_wide() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_org_wide() TO contexts_auditor;


--
-- Name: FUNCTION acl_personas(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_personas() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_personas() TO contexts_auditor;


--
-- Name: FUNCTION acl_principal(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_principal() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_principal() TO contexts_auditor;


--
-- Name: FUNCTION acl_repos(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_repos() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_repos() TO contexts_auditor;


--
-- Name: FUNCTION acl_sessions(); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.acl_sessions() FROM PUBLIC;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_service;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_analyst;
GRANT ALL ON FUNCTION data.acl_sessions() TO contexts_auditor;


--
-- Name: FUNCTION current_principal(OUT org_id text, OUT principal_id text); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_service;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_analyst;
GRANT ALL ON FUNCTION data.current_principal(OUT org_id text, OUT principal_id text) TO contexts_auditor;


--
-- Name: FUNCTION lo_creat(integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_creat(integer) FROM PUBLIC;


--
-- Name: FUNCTION lo_create(oid); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_create(oid) FROM PUBLIC;


--
-- Name: FUNCTION lo_from_bytea(oid, bytea); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_from_bytea(oid, bytea) FROM PUBLIC;


--
-- Name: FUNCTION lo_open(oid, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_open(oid, integer) FROM PUBLIC;


--
-- Name: FUNCTION lo_put(oid, bigint, bytea); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_put(oid, bigint, bytea) FROM PUBLIC;


--
-- Name: FUNCTION lo_truncate(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION lo_truncate64(integer, bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_truncate64(integer, bigint) FROM PUBLIC;


--
-- Name: FUNCTION lo_unlink(oid); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lo_unlink(oid) FROM PUBLIC;


--
-- Name: FUNCTION lowrite(integer, bytea); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.lowrite(integer, bytea) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_unlock(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_unlock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_unlock_all(); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_unlock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_unlock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) FROM PUBLIC;


--
-- Name: FUNCTION pg_try_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog; Owner: <migrator>
--

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;


--
-- Name: FUNCTION active_model(p_namespace text, p_name text, p_dims integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.active_model(p_namespace text, p_name text, p_dims integer) FROM PUBLIC;
GRANT ALL ON FUNCTION service.active_model(p_namespace text, p_name text, p_dims integer) TO contexts_service;


--
-- Name: FUNCTION add_documents(p_versions jsonb, p_embeddings extensions.vector[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.add_documents(p_versions jsonb, p_embeddings extensions.vector[]) FROM PUBLIC;
GRANT ALL ON FUNCTION service.add_documents(p_versions jsonb, p_embeddings extensions.vector[]) TO contexts_service;


--
-- Name: FUNCTION add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.add_fragments(p_doc_id bigint, p_doc_version integer, p_chunks jsonb) TO contexts_service;


--
-- Name: FUNCTION add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.add_model_vectors(p_model_id integer, p_fragment_ids bigint[], p_vectors jsonb) FROM PUBLIC;


--
-- Name: FUNCTION add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.add_persona_vector(p_model_id integer, p_org_id text, p_persona_id text, p_description text, p_updated_by text, p_vector jsonb) FROM PUBLIC;


--
-- Name: FUNCTION authenticate(p_token text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.authenticate(p_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.authenticate(p_token text) TO contexts_service;


--
-- Name: FUNCTION authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.authorize_write(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) TO contexts_service;


--
-- Name: FUNCTION begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.begin_document(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_path text, p_kind text, p_content text, p_content_hash text, p_language text, p_author text, p_source_ts timestamp with time zone, p_metadata jsonb, p_owner text, p_owner_source text) TO contexts_service;


--
-- Name: FUNCTION begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.begin_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) TO contexts_service;


--
-- Name: FUNCTION begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.begin_model_upgrade(p_namespace text, p_name text, p_source text, p_dims integer, p_window_days integer) FROM PUBLIC;


--
-- Name: FUNCTION bind_principal(p_org_id text, p_principal_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.bind_principal(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION context_accept(p_subscription_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_accept(p_subscription_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_accept(p_subscription_id bigint) TO contexts_service;


--
-- Name: FUNCTION context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_add_version(p_context_id bigint, p_fragment_ids bigint[], p_doc_ids bigint[], p_path_globs text[], p_note text, p_built_from jsonb, p_query_fragment_ids bigint[]) TO contexts_service;


--
-- Name: FUNCTION context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_candidates(p_org_id text, p_refs text[], p_query text, p_query_embeddings jsonb, p_fusion jsonb, p_rrf_k integer, p_include_retired boolean, p_repo_id text, p_persona_id text, p_session_id text, p_scoped boolean) TO contexts_service;


--
-- Name: FUNCTION context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_create(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_name text, p_description text) TO contexts_service;


--
-- Name: FUNCTION context_retire(p_context_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_retire(p_context_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_retire(p_context_id bigint) TO contexts_service;


--
-- Name: FUNCTION context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_subscribe(p_context_id bigint, p_subscriber_org_id text, p_subscriber_repo_id text, p_version integer) TO contexts_service;


--
-- Name: FUNCTION context_unsubscribe(p_subscription_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.context_unsubscribe(p_subscription_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.context_unsubscribe(p_subscription_id bigint) TO contexts_service;


--
-- Name: FUNCTION create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.create_analyst(p_org_id text, p_principal_id text, p_login text, p_verifier text, p_grants text[], p_display_name text) FROM PUBLIC;


--
-- Name: FUNCTION create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text, p_expires_at timestamp with time zone, p_read_only boolean, p_repos text[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.create_api_key(p_org_id text, p_principal_id text, p_key_id text, p_key_hash bytea, p_label text, p_expires_at timestamp with time zone, p_read_only boolean, p_repos text[]) FROM PUBLIC;


--
-- Name: FUNCTION create_login(p_login text, p_verifier text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.create_login(p_login text, p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION create_org(p_org_id text, p_display_name text, p_session_ttl interval); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.create_org(p_org_id text, p_display_name text, p_session_ttl interval) FROM PUBLIC;


--
-- Name: FUNCTION create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.create_principal(p_org_id text, p_principal_id text, p_kind text, p_display_name text, p_db_role name) FROM PUBLIC;


--
-- Name: FUNCTION delete_document(p_doc_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.delete_document(p_doc_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.delete_document(p_doc_id bigint) TO contexts_service;


--
-- Name: FUNCTION disable_principal(p_org_id text, p_principal_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.disable_principal(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION drop_model_generation(p_model_id integer, p_force boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.drop_model_generation(p_model_id integer, p_force boolean) FROM PUBLIC;


--
-- Name: FUNCTION drop_retired_models(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.drop_retired_models() FROM PUBLIC;


--
-- Name: FUNCTION ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.ensure_scope(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text) FROM PUBLIC;


--
-- Name: FUNCTION fold_usage(p_limit integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.fold_usage(p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION service.fold_usage(p_limit integer) TO contexts_service;


--
-- Name: FUNCTION grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.grant_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text, p_can_write boolean) FROM PUBLIC;


--
-- Name: FUNCTION idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.idempotent_record(p_key text, p_request_hash text, p_status integer, p_response jsonb) TO contexts_service;


--
-- Name: FUNCTION idempotent_response(p_key text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.idempotent_response(p_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.idempotent_response(p_key text) TO contexts_service;


--
-- Name: FUNCTION list_analysts(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.list_analysts(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION list_api_keys(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.list_api_keys(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION list_grants(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.list_grants(p_org_id text) FROM PUBLIC;


--
-- Name: FUNCTION match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION service.match_fragments(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_namespaces text[], p_content_hashes text[], p_simhashes bigint[]) TO contexts_service;


--
-- Name: FUNCTION metrics_org_sizes(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.metrics_org_sizes() FROM PUBLIC;
GRANT ALL ON FUNCTION service.metrics_org_sizes() TO contexts_service;


--
-- Name: FUNCTION model_backlog(p_model_id integer, p_after bigint, p_limit integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.model_backlog(p_model_id integer, p_after bigint, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) FROM PUBLIC;
GRANT ALL ON FUNCTION service.nudge_attempted(p_nudge_id bigint, p_url text, p_status integer, p_error text, p_duration_ms double precision, p_retry_in interval) TO contexts_service;


--
-- Name: FUNCTION nudge_claim(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.nudge_claim(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.nudge_claim(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION nudges_enqueue(p_org_id text, p_as_of timestamp with time zone); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION service.nudges_enqueue(p_org_id text, p_as_of timestamp with time zone) TO contexts_service;


--
-- Name: FUNCTION open_session(p_session_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.open_session(p_session_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.open_session(p_session_id text) TO contexts_service;


--
-- Name: FUNCTION owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) FROM PUBLIC;
GRANT ALL ON FUNCTION service.owner_settings_set(p_org_id text, p_default_owner text, p_stale_after_days integer, p_window_days integer, p_min_retrievals integer, p_nudge_period_hours integer) TO contexts_service;


--
-- Name: FUNCTION owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.owners_reassign(p_org_id text, p_from text, p_to text, p_repo_id text, p_path_prefix text) TO contexts_service;


--
-- Name: FUNCTION owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION service.owners_resolve(p_org_id text, p_repo_id text, p_doc_ids bigint[], p_owners text[]) TO contexts_service;


--
-- Name: FUNCTION owners_unnamed(p_org_id text, p_repo_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.owners_unnamed(p_org_id text, p_repo_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.owners_unnamed(p_org_id text, p_repo_id text) TO contexts_service;


--
-- Name: FUNCTION persona_backlog(p_model_id integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.persona_backlog(p_model_id integer) FROM PUBLIC;


--
-- Name: FUNCTION persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.persona_vectors_set(p_org_id text, p_persona_id text, p_description text, p_vectors jsonb) TO contexts_service;


--
-- Name: FUNCTION pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION service.pin_add(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_fragment_id bigint, p_reason text, p_expires_at timestamp with time zone) TO contexts_service;


--
-- Name: FUNCTION pin_remove(p_pin_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.pin_remove(p_pin_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.pin_remove(p_pin_id bigint) TO contexts_service;


--
-- Name: FUNCTION policy_bypass(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.policy_bypass() FROM PUBLIC;


--
-- Name: FUNCTION policy_report(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.policy_report() FROM PUBLIC;


--
-- Name: FUNCTION previous_models(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.previous_models() FROM PUBLIC;
GRANT ALL ON FUNCTION service.previous_models() TO contexts_service;


--
-- Name: FUNCTION promote_model(p_namespace text, p_generation integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.promote_model(p_namespace text, p_generation integer) FROM PUBLIC;


--
-- Name: FUNCTION purge_expired_sessions(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.purge_expired_sessions() FROM PUBLIC;


--
-- Name: FUNCTION ranking_profile_delete(p_org_id text, p_persona_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.ranking_profile_delete(p_org_id text, p_persona_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.ranking_profile_delete(p_org_id text, p_persona_id text) TO contexts_service;


--
-- Name: FUNCTION ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.ranking_profile_set(p_org_id text, p_persona_id text, p_w_rerank double precision, p_w_freshness double precision, p_w_authority double precision, p_w_pinned double precision, p_w_persona double precision, p_halflife_days jsonb, p_description text) TO contexts_service;


--
-- Name: FUNCTION reading_backlog(p_prefix bytea, p_after bigint, p_limit integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.reading_backlog(p_prefix bytea, p_after bigint, p_limit integer) FROM PUBLIC;


--
-- Name: FUNCTION reading_backlog_size(p_prefix bytea); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.reading_backlog_size(p_prefix bytea) FROM PUBLIC;


--
-- Name: FUNCTION record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.record_eval_run(p_command text, p_pipeline jsonb, p_options jsonb, p_started_at timestamp with time zone, p_contexts_version text, p_figures jsonb, p_replays jsonb, p_outcome text) FROM PUBLIC;


--
-- Name: FUNCTION record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.record_model_replay(p_model_id integer, p_trace_id uuid, p_overlap double precision, p_shared_top integer, p_top integer, p_same_order boolean, p_error text) FROM PUBLIC;


--
-- Name: FUNCTION record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.record_trace(p_org_id text, p_query text, p_request jsonb, p_pipeline jsonb, p_candidates jsonb, p_duration_ms double precision, p_query_vectors jsonb, p_left_out jsonb) TO contexts_service;


--
-- Name: FUNCTION refresh_authority(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.refresh_authority(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.refresh_authority(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION register_embedding_model(p_namespace text, p_name text, p_dims integer); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.register_embedding_model(p_namespace text, p_name text, p_dims integer) FROM PUBLIC;


--
-- Name: FUNCTION revoke_analyst(p_org_id text, p_principal_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.revoke_analyst(p_org_id text, p_principal_id text) FROM PUBLIC;


--
-- Name: FUNCTION revoke_api_key(p_key_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.revoke_api_key(p_key_id text) FROM PUBLIC;


--
-- Name: FUNCTION revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.revoke_scope(p_org_id text, p_principal_id text, p_scope_kind text, p_scope_id text) FROM PUBLIC;


--
-- Name: FUNCTION rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION service.rule_create(p_org_id text, p_repo_id text, p_name text, p_context_ref text, p_path_globs text[], p_symbol_globs text[], p_expires_at timestamp with time zone, p_enabled boolean) TO contexts_service;


--
-- Name: FUNCTION rule_delete(p_rule_id bigint); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.rule_delete(p_rule_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION service.rule_delete(p_rule_id bigint) TO contexts_service;


--
-- Name: FUNCTION secondary_models(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.secondary_models() FROM PUBLIC;
GRANT ALL ON FUNCTION service.secondary_models() TO contexts_service;


--
-- Name: FUNCTION serving_models(); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.serving_models() FROM PUBLIC;
GRANT ALL ON FUNCTION service.serving_models() TO contexts_service;


--
-- Name: FUNCTION set_login_password(p_org_id text, p_principal_id text, p_verifier text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.set_login_password(p_org_id text, p_principal_id text, p_verifier text) FROM PUBLIC;


--
-- Name: FUNCTION set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.set_readings(p_fragment_ids bigint[], p_org_ids text[], p_readings bytea[]) FROM PUBLIC;


--
-- Name: FUNCTION sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION service.sync_record(p_org_id text, p_repo_id text, p_commit_sha text, p_ref text, p_previous text, p_written integer, p_deleted integer, p_full_scan boolean) TO contexts_service;


--
-- Name: FUNCTION unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION service.unchanged_documents(p_org_id text, p_repo_id text, p_persona_id text, p_session_id text, p_documents jsonb) TO contexts_service;


--
-- Name: FUNCTION webhook_delete(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.webhook_delete(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.webhook_delete(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION webhook_get(p_org_id text); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.webhook_get(p_org_id text) FROM PUBLIC;
GRANT ALL ON FUNCTION service.webhook_get(p_org_id text) TO contexts_service;


--
-- Name: FUNCTION webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean); Type: ACL; Schema: service; Owner: <migrator>
--

REVOKE ALL ON FUNCTION service.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION service.webhook_set(p_org_id text, p_url text, p_secret text, p_enabled boolean) TO contexts_service;


--
-- Name: FUNCTION _usage_concat(anycompatiblearray); Type: ACL; Schema: data; Owner: <migrator>
--

REVOKE ALL ON FUNCTION data._usage_concat(anycompatiblearray) FROM PUBLIC;
GRANT ALL ON FUNCTION data._usage_concat(anycompatiblearray) TO contexts_analyst;
GRANT ALL ON FUNCTION data._usage_concat(anycompatiblearray) TO contexts_auditor;


--
-- Name: TABLE fragments; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragments TO contexts_service;
GRANT SELECT ON TABLE data.fragments TO contexts_analyst;


--
-- Name: TABLE fragment_retrievals; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragment_retrievals TO contexts_analyst;
GRANT SELECT ON TABLE api.fragment_retrievals TO contexts_auditor;


--
-- Name: TABLE document_retrievals; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.document_retrievals TO contexts_analyst;


--
-- Name: TABLE document_versions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.document_versions TO contexts_service;
GRANT SELECT ON TABLE data.document_versions TO contexts_analyst;


--
-- Name: TABLE document_version_counts; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.document_version_counts TO contexts_analyst;


--
-- Name: TABLE eval_figures; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.eval_figures TO contexts_service;
GRANT SELECT ON TABLE data.eval_figures TO contexts_analyst;


--
-- Name: TABLE eval_runs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.eval_runs TO contexts_service;
GRANT SELECT ON TABLE data.eval_runs TO contexts_analyst;


--
-- Name: TABLE eval_figures; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_figures TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_figures TO contexts_auditor;


--
-- Name: TABLE eval_replay_diffs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_replay_diffs TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_replay_diffs TO contexts_auditor;


--
-- Name: TABLE eval_runs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.eval_runs TO contexts_analyst;
GRANT SELECT ON TABLE api.eval_runs TO contexts_auditor;


--
-- Name: TABLE authority_refreshes; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.authority_refreshes TO contexts_service;
GRANT SELECT ON TABLE data.authority_refreshes TO contexts_analyst;


--
-- Name: TABLE fragment_authority; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragment_authority TO contexts_analyst;


--
-- Name: TABLE fragments_by_owner; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragments_by_owner TO contexts_analyst;


--
-- Name: TABLE fragment_sources; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragment_sources TO contexts_service;
GRANT SELECT ON TABLE data.fragment_sources TO contexts_analyst;


--
-- Name: TABLE fragments_never_retrieved; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.fragments_never_retrieved TO contexts_analyst;


--
-- Name: TABLE near_duplicate_clusters; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.near_duplicate_clusters TO contexts_analyst;


--
-- Name: TABLE near_duplicate_pairs; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.near_duplicate_pairs TO contexts_analyst;


--
-- Name: TABLE query_vectors; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.query_vectors TO contexts_analyst;
GRANT SELECT ON TABLE api.query_vectors TO contexts_auditor;


--
-- Name: TABLE retrieval_traces; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrieval_traces TO contexts_service;
GRANT SELECT ON TABLE api.retrieval_traces TO contexts_analyst;
GRANT SELECT ON TABLE api.retrieval_traces TO contexts_auditor;


--
-- Name: TABLE retrieval_summaries; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrieval_summaries TO contexts_analyst;
GRANT SELECT ON TABLE api.retrieval_summaries TO contexts_auditor;


--
-- Name: TABLE retrievals_below_floor; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrievals_below_floor TO contexts_analyst;
GRANT SELECT ON TABLE api.retrievals_below_floor TO contexts_auditor;


--
-- Name: TABLE retrievals_per_day; Type: ACL; Schema: api; Owner: <migrator>
--

GRANT SELECT ON TABLE api.retrievals_per_day TO contexts_analyst;
GRANT SELECT ON TABLE api.retrievals_per_day TO contexts_auditor;


--
-- Name: COLUMN api_keys.key_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(key_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(key_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.org_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(org_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(org_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.principal_id; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(principal_id) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(principal_id) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.label; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(label) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(label) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.created_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(created_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(created_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.last_used_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(last_used_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(last_used_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: COLUMN api_keys.revoked_at; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT(revoked_at) ON TABLE data.api_keys TO contexts_service;
GRANT SELECT(revoked_at) ON TABLE data.api_keys TO contexts_analyst;


--
-- Name: TABLE bm25_blocks; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_blocks TO contexts_service;
GRANT SELECT ON TABLE data.bm25_blocks TO contexts_analyst;


--
-- Name: TABLE bm25_corpus; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_corpus TO contexts_service;
GRANT SELECT ON TABLE data.bm25_corpus TO contexts_analyst;


--
-- Name: TABLE bm25_terms; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.bm25_terms TO contexts_service;
GRANT SELECT ON TABLE data.bm25_terms TO contexts_analyst;


--
-- Name: TABLE context_members; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_members TO contexts_service;
GRANT SELECT ON TABLE data.context_members TO contexts_analyst;


--
-- Name: TABLE context_rules; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_rules TO contexts_service;
GRANT SELECT ON TABLE data.context_rules TO contexts_analyst;


--
-- Name: TABLE context_versions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.context_versions TO contexts_service;
GRANT SELECT ON TABLE data.context_versions TO contexts_analyst;


--
-- Name: TABLE embedding_models; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embedding_models TO contexts_service;
GRANT SELECT ON TABLE data.embedding_models TO contexts_analyst;


--
-- Name: TABLE embedding_namespaces; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embedding_namespaces TO contexts_service;
GRANT SELECT ON TABLE data.embedding_namespaces TO contexts_analyst;


--
-- Name: TABLE embeddings; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.embeddings TO contexts_service;
GRANT SELECT ON TABLE data.embeddings TO contexts_analyst;


--
-- Name: TABLE fragment_links; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.fragment_links TO contexts_service;
GRANT SELECT ON TABLE data.fragment_links TO contexts_analyst;


--
-- Name: TABLE git_syncs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.git_syncs TO contexts_service;
GRANT SELECT ON TABLE data.git_syncs TO contexts_analyst;


--
-- Name: TABLE grants; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.grants TO contexts_service;
GRANT SELECT ON TABLE data.grants TO contexts_analyst;
GRANT SELECT ON TABLE data.grants TO contexts_auditor;


--
-- Name: TABLE idempotent_writes; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.idempotent_writes TO contexts_service;
GRANT SELECT ON TABLE data.idempotent_writes TO contexts_analyst;


--
-- Name: TABLE model_replays; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.model_replays TO contexts_service;
GRANT SELECT ON TABLE data.model_replays TO contexts_analyst;


--
-- Name: TABLE nudge_deliveries; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.nudge_deliveries TO contexts_service;
GRANT SELECT ON TABLE data.nudge_deliveries TO contexts_analyst;


--
-- Name: TABLE nudge_outbox; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.nudge_outbox TO contexts_service;
GRANT SELECT ON TABLE data.nudge_outbox TO contexts_analyst;


--
-- Name: TABLE orgs; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.orgs TO contexts_service;
GRANT SELECT ON TABLE data.orgs TO contexts_analyst;
GRANT SELECT ON TABLE data.orgs TO contexts_auditor;


--
-- Name: TABLE owner_reassignments; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.owner_reassignments TO contexts_service;
GRANT SELECT ON TABLE data.owner_reassignments TO contexts_analyst;


--
-- Name: TABLE persona_vectors; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.persona_vectors TO contexts_service;
GRANT SELECT ON TABLE data.persona_vectors TO contexts_analyst;


--
-- Name: TABLE personas; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.personas TO contexts_service;
GRANT SELECT ON TABLE data.personas TO contexts_analyst;


--
-- Name: TABLE pins; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.pins TO contexts_service;
GRANT SELECT ON TABLE data.pins TO contexts_analyst;


--
-- Name: TABLE principals; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.principals TO contexts_service;
GRANT SELECT ON TABLE data.principals TO contexts_analyst;
GRANT SELECT ON TABLE data.principals TO contexts_auditor;


--
-- Name: TABLE ranking_profiles; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.ranking_profiles TO contexts_service;
GRANT SELECT ON TABLE data.ranking_profiles TO contexts_analyst;


--
-- Name: TABLE repos; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.repos TO contexts_service;
GRANT SELECT ON TABLE data.repos TO contexts_analyst;


--
-- Name: TABLE sessions; Type: ACL; Schema: data; Owner: <migrator>
--

GRANT SELECT ON TABLE data.sessions TO contexts_service;
GRANT SELECT ON TABLE data.sessions TO contexts_analyst;


--
-- PostgreSQL database dump complete
--
