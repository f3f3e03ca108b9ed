/*
 * contexts_bm25: BM25 postings packed in blocks, and the exact top k of a query scored
 * over them in compiled code (docs/adr/0025-lexical-blocks.md).
 *
 * A block holds the postings of one term in one scope group, sorted by fragment id:
 * ids delta-encoded, term frequency and fragment length as varints, in sub-blocks of
 * up to 128 postings. Each sub-block's directory entry keeps its last id (to skip it
 * without decoding) and the largest tf and smallest length in it, which bound the BM25
 * contribution of any of its postings whatever the corpus's average length (block-max).
 *
 * Everything here is pure: blocks come in and go out as bytea values. Which blocks a
 * caller may read is decided in SQL, under row-level security, before they get here.
 * The scoring is document-at-a-time MaxScore (Turtle and Flood 1995): the terms whose
 * bounds together cannot lift a fragment to the current k-th best score are never
 * iterated, only probed for the fragments the others bring, and a probe skips whole
 * sub-blocks by their last id. It is exact: the same top k and scores as scoring every
 * posting (up to the order of a float sum).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"
#include "varatt.h"

#include <math.h>

PG_MODULE_MAGIC;

#define FORMAT_VERSION 1
#define SUB_SIZE 128
/* A block stays below the size PostgreSQL would compress or move out of line. */
#define BLOCK_MAX_ENTRIES 1024
#define BLOCK_MAX_BYTES 1900

typedef struct BlockHeader
{
	uint8		version;
	uint8		reserved;
	uint16		nsub;
	uint32		count;
	int64		first_id;
	int64		last_id;
} BlockHeader;

typedef struct SubEntry
{
	int64		last_id;
	uint32		offset;			/* from the start of the data area */
	uint32		count;
	uint32		max_tf;
	uint32		min_dl;
} SubEntry;

typedef struct Posting
{
	int64		id;
	int32		tf;
	int32		dl;
} Posting;

/* ---- varints (LEB128) ---- */

static inline int
varint_size(uint64 v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8 *
varint_put(uint8 *p, uint64 v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8) v;
	return p;
}

static inline const uint8 *
varint_get(const uint8 *p, const uint8 *end, uint64 *v)
{
	uint64		r = 0;
	int			shift = 0;

	while (p < end)
	{
		uint8		b = *p++;

		r |= ((uint64) (b & 0x7f)) << shift;
		if (!(b & 0x80))
		{
			*v = r;
			return p;
		}
		shift += 7;
		if (shift > 63)
			break;
	}
	ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("contexts_bm25: malformed block")));
	return NULL;
}

/* ---- a block, read in place ---- */

typedef struct BlockView
{
	BlockHeader head;
	const SubEntry *subs;		/* unaligned: read with memcpy */
	const uint8 *data;
	const uint8 *end;
} BlockView;

static void
block_open(bytea *raw, BlockView *v)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(raw);
	Size		len = VARSIZE_ANY_EXHDR(raw);

	if (len < sizeof(BlockHeader))
		ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("contexts_bm25: block too short")));
	memcpy(&v->head, p, sizeof(BlockHeader));
	if (v->head.version != FORMAT_VERSION)
		ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
						errmsg("contexts_bm25: block format %d, expected %d", v->head.version, FORMAT_VERSION)));
	if (len < sizeof(BlockHeader) + (Size) v->head.nsub * sizeof(SubEntry))
		ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("contexts_bm25: block directory truncated")));
	v->subs = (const SubEntry *) (p + sizeof(BlockHeader));
	v->data = p + sizeof(BlockHeader) + v->head.nsub * sizeof(SubEntry);
	v->end = p + len;
}

static inline void
block_sub(const BlockView *v, int s, SubEntry *out)
{
	memcpy(out, ((const uint8 *) v->subs) + (Size) s * sizeof(SubEntry), sizeof(SubEntry));
}

/* Decode sub-block s into ids/tfs/dls; returns its count. */
static int
block_decode_sub(const BlockView *v, int s, int64 *ids, int32 *tfs, int32 *dls)
{
	SubEntry	e;
	int64		prev;
	const uint8 *p;
	uint32		i;

	block_sub(v, s, &e);
	if (s == 0)
		prev = v->head.first_id;
	else
	{
		SubEntry	before;

		block_sub(v, s - 1, &before);
		prev = before.last_id;
	}
	p = v->data + e.offset;
	if (p > v->end || e.count > SUB_SIZE)
		ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("contexts_bm25: sub-block out of bounds")));
	for (i = 0; i < e.count; i++)
	{
		uint64		d,
					tf,
					dl;

		p = varint_get(p, v->end, &d);
		p = varint_get(p, v->end, &tf);
		p = varint_get(p, v->end, &dl);
		prev += (int64) d;
		ids[i] = prev;
		tfs[i] = (int32) tf;
		dls[i] = (int32) dl;
	}
	return (int) e.count;
}

/* ---- writing blocks ---- */

static int
posting_cmp(const void *a, const void *b)
{
	int64		x = ((const Posting *) a)->id;
	int64		y = ((const Posting *) b)->id;

	return (x > y) - (x < y);
}

static inline int
posting_bytes(const Posting *p, int64 prev)
{
	return varint_size((uint64) (p->id - prev)) + varint_size((uint64) p->tf) + varint_size((uint64) p->dl);
}

/* How many of the sorted postings from `from` go into one block. */
static int
block_take(const Posting *ps, int n, int from)
{
	Size		bytes = sizeof(BlockHeader);
	int			i;
	int64		prev = ps[from].id;

	for (i = from; i < n && i - from < BLOCK_MAX_ENTRIES; i++)
	{
		Size		more = posting_bytes(&ps[i], prev);

		if ((i - from) % SUB_SIZE == 0)
			more += sizeof(SubEntry);
		if (i > from && bytes + more > BLOCK_MAX_BYTES)
			break;
		bytes += more;
		prev = ps[i].id;
	}
	return i - from;
}

static bytea *
block_encode(const Posting *ps, int n)
{
	int			nsub = (n + SUB_SIZE - 1) / SUB_SIZE;
	Size		data_bytes = 0;
	int64		prev = ps[0].id;
	int			i;
	bytea	   *out;
	uint8	   *base,
			   *dir,
			   *data,
			   *p;
	BlockHeader head;

	for (i = 0; i < n; i++)
	{
		data_bytes += posting_bytes(&ps[i], prev);
		prev = ps[i].id;
	}
	out = (bytea *) palloc0(VARHDRSZ + sizeof(BlockHeader) + nsub * sizeof(SubEntry) + data_bytes);
	SET_VARSIZE(out, VARHDRSZ + sizeof(BlockHeader) + nsub * sizeof(SubEntry) + data_bytes);
	base = (uint8 *) VARDATA(out);
	memset(&head, 0, sizeof(head));
	head.version = FORMAT_VERSION;
	head.nsub = (uint16) nsub;
	head.count = (uint32) n;
	head.first_id = ps[0].id;
	head.last_id = ps[n - 1].id;
	memcpy(base, &head, sizeof(head));
	dir = base + sizeof(BlockHeader);
	data = dir + nsub * sizeof(SubEntry);
	p = data;
	prev = ps[0].id;
	for (int s = 0; s < nsub; s++)
	{
		SubEntry	e;
		int			lo = s * SUB_SIZE;
		int			hi = Min(n, lo + SUB_SIZE);

		memset(&e, 0, sizeof(e));
		e.offset = (uint32) (p - data);
		e.count = (uint32) (hi - lo);
		e.min_dl = PG_UINT32_MAX;
		for (i = lo; i < hi; i++)
		{
			p = varint_put(p, (uint64) (ps[i].id - prev));
			p = varint_put(p, (uint64) ps[i].tf);
			p = varint_put(p, (uint64) ps[i].dl);
			prev = ps[i].id;
			e.max_tf = Max(e.max_tf, (uint32) ps[i].tf);
			e.min_dl = Min(e.min_dl, (uint32) ps[i].dl);
		}
		e.last_id = ps[hi - 1].id;
		memcpy(dir + s * sizeof(SubEntry), &e, sizeof(e));
	}
	Assert(p == data + data_bytes);
	return out;
}

/* Sort, check and cut postings into blocks: a bytea[] (empty when there are none). */
static ArrayType *
blocks_from_postings(Posting *ps, int n)
{
	Datum	   *out;
	int			nout = 0;
	int			at = 0;

	if (n > 1)
		qsort(ps, n, sizeof(Posting), posting_cmp);
	for (int i = 0; i < n; i++)
	{
		if (ps[i].id <= 0 || ps[i].tf < 1 || ps[i].dl < ps[i].tf)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("contexts_bm25: posting (%lld, tf %d, dl %d) out of range",
								   (long long) ps[i].id, ps[i].tf, ps[i].dl)));
		if (i > 0 && ps[i].id == ps[i - 1].id)
			ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION),
							errmsg("contexts_bm25: fragment %lld posted twice for one term",
								   (long long) ps[i].id)));
	}
	out = (Datum *) palloc(sizeof(Datum) * Max(1, n));
	while (at < n)
	{
		int			take = block_take(ps, n, at);

		out[nout++] = PointerGetDatum(block_encode(ps + at, take));
		at += take;
	}
	return construct_array(out, nout, BYTEAOID, -1, false, TYPALIGN_INT);
}

static void
array_check_1d(ArrayType *a, const char *what)
{
	if (ARR_NDIM(a) > 1)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("contexts_bm25: %s must be one-dimensional", what)));
	if (array_contains_nulls(a))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("contexts_bm25: %s must not hold nulls", what)));
}

PG_FUNCTION_INFO_V1(bm25_pack);

/* bm25_pack(ids bigint[], tfs int[], dls int[]) returns bytea[] */
Datum
bm25_pack(PG_FUNCTION_ARGS)
{
	ArrayType  *ids = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *tfs = PG_GETARG_ARRAYTYPE_P(1);
	ArrayType  *dls = PG_GETARG_ARRAYTYPE_P(2);
	int			n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	int64	   *id;
	int32	   *tf,
			   *dl;
	Posting    *ps;

	array_check_1d(ids, "ids");
	array_check_1d(tfs, "tfs");
	array_check_1d(dls, "dls");
	if (ArrayGetNItems(ARR_NDIM(tfs), ARR_DIMS(tfs)) != n || ArrayGetNItems(ARR_NDIM(dls), ARR_DIMS(dls)) != n)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("contexts_bm25: ids, tfs and dls differ in length")));
	id = (int64 *) ARR_DATA_PTR(ids);
	tf = (int32 *) ARR_DATA_PTR(tfs);
	dl = (int32 *) ARR_DATA_PTR(dls);
	ps = (Posting *) palloc(sizeof(Posting) * Max(1, n));
	for (int i = 0; i < n; i++)
	{
		ps[i].id = id[i];
		ps[i].tf = tf[i];
		ps[i].dl = dl[i];
	}
	PG_RETURN_ARRAYTYPE_P(blocks_from_postings(ps, n));
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

static bool
sorted_contains(const int64 *xs, int n, int64 x)
{
	int			lo = 0,
				hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (xs[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && xs[lo] == x;
}

/* A sorted, de-duplicated copy of a bigint[] (NULL array: NULL, *n = -1). */
static int64 *
sorted_ids(ArrayType *a, int *n, const char *what)
{
	int64	   *xs;
	int			m,
				k = 0;

	array_check_1d(a, what);
	m = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	xs = (int64 *) palloc(sizeof(int64) * Max(1, m));
	memcpy(xs, ARR_DATA_PTR(a), sizeof(int64) * m);
	if (m > 1)
		qsort(xs, m, sizeof(int64), int64_cmp);
	for (int i = 0; i < m; i++)
		if (k == 0 || xs[k - 1] != xs[i])
			xs[k++] = xs[i];
	*n = k;
	return xs;
}

PG_FUNCTION_INFO_V1(bm25_merge);

/*
 * bm25_merge(blocks bytea[], drop_ids bigint[]) returns bytea[]: the postings of the
 * blocks less those of drop_ids, packed again (empty when none is left). Merging a
 * term's partly filled blocks, and removing retired fragments, are both this.
 */
Datum
bm25_merge(PG_FUNCTION_ARGS)
{
	ArrayType  *blocks = PG_GETARG_ARRAYTYPE_P(0);
	int64	   *drop = NULL;
	int			ndrop = 0;
	Datum	   *elems;
	bool	   *nulls;
	int			nblocks;
	Posting    *ps;
	int			n = 0,
				cap = 0;
	int64		ids[SUB_SIZE];
	int32		tfs[SUB_SIZE],
				dls[SUB_SIZE];

	if (!PG_ARGISNULL(1))
		drop = sorted_ids(PG_GETARG_ARRAYTYPE_P(1), &ndrop, "drop_ids");
	array_check_1d(blocks, "blocks");
	deconstruct_array(blocks, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nblocks);
	for (int b = 0; b < nblocks; b++)
	{
		BlockView	v;

		block_open((bytea *) PG_DETOAST_DATUM_PACKED(elems[b]), &v);
		cap += (int) v.head.count;
	}
	ps = (Posting *) palloc(sizeof(Posting) * Max(1, cap));
	for (int b = 0; b < nblocks; b++)
	{
		BlockView	v;

		block_open((bytea *) PG_DETOAST_DATUM_PACKED(elems[b]), &v);
		for (int s = 0; s < v.head.nsub; s++)
		{
			int			m = block_decode_sub(&v, s, ids, tfs, dls);

			for (int i = 0; i < m; i++)
			{
				if (drop && sorted_contains(drop, ndrop, ids[i]))
					continue;
				ps[n].id = ids[i];
				ps[n].tf = tfs[i];
				ps[n].dl = dls[i];
				n++;
			}
		}
	}
	PG_RETURN_ARRAYTYPE_P(blocks_from_postings(ps, n));
}

PG_FUNCTION_INFO_V1(bm25_block_first);
PG_FUNCTION_INFO_V1(bm25_block_last);
PG_FUNCTION_INFO_V1(bm25_block_count);

Datum
bm25_block_first(PG_FUNCTION_ARGS)
{
	BlockView	v;

	block_open(PG_GETARG_BYTEA_PP(0), &v);
	PG_RETURN_INT64(v.head.first_id);
}

Datum
bm25_block_last(PG_FUNCTION_ARGS)
{
	BlockView	v;

	block_open(PG_GETARG_BYTEA_PP(0), &v);
	PG_RETURN_INT64(v.head.last_id);
}

Datum
bm25_block_count(PG_FUNCTION_ARGS)
{
	BlockView	v;

	block_open(PG_GETARG_BYTEA_PP(0), &v);
	PG_RETURN_INT32((int32) v.head.count);
}

PG_FUNCTION_INFO_V1(bm25_postings);

/* bm25_postings(block bytea) returns table (fragment_id bigint, tf int, dl int) */
Datum
bm25_postings(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlockView	v;
	int64		ids[SUB_SIZE];
	int32		tfs[SUB_SIZE],
				dls[SUB_SIZE];

	InitMaterializedSRF(fcinfo, 0);
	block_open(PG_GETARG_BYTEA_PP(0), &v);
	for (int s = 0; s < v.head.nsub; s++)
	{
		int			m = block_decode_sub(&v, s, ids, tfs, dls);

		for (int i = 0; i < m; i++)
		{
			Datum		values[3];
			bool		isnull[3] = {false, false, false};

			values[0] = Int64GetDatum(ids[i]);
			values[1] = Int32GetDatum(tfs[i]);
			values[2] = Int32GetDatum(dls[i]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
		}
	}
	return (Datum) 0;
}

/* ---- scoring ---- */

typedef struct Scoring
{
	double		k1;
	double		b;
	double		avgdl;
} Scoring;

static inline double
impact(const Scoring *sc, double idf, int32 tf, int32 dl)
{
	return idf * ((double) tf * (sc->k1 + 1.0)) /
		((double) tf + sc->k1 * (1.0 - sc->b + sc->b * (double) dl / sc->avgdl));
}

/* A cursor walks one sorted run of a term's blocks (blocks of several scope groups
 * whose id ranges do not overlap form one run). */
typedef struct Cursor
{
	double		idf;
	double		bound;			/* largest contribution of any posting in the run */
	BlockView  *blocks;
	int			nblocks;
	int			block;			/* current block, sub-block and position */
	int			sub;
	int			pos;
	int			len;			/* postings decoded in the current sub-block */
	int64		ids[SUB_SIZE];
	int32		tfs[SUB_SIZE];
	int32		dls[SUB_SIZE];
	int64		cur;			/* current id; PG_INT64_MAX when done */
} Cursor;

static void
cursor_load(Cursor *c)
{
	while (c->block < c->nblocks)
	{
		BlockView  *v = &c->blocks[c->block];

		if (c->sub < v->head.nsub)
		{
			c->len = block_decode_sub(v, c->sub, c->ids, c->tfs, c->dls);
			c->pos = 0;
			if (c->len > 0)
			{
				c->cur = c->ids[0];
				return;
			}
			c->sub++;
			continue;
		}
		c->block++;
		c->sub = 0;
	}
	c->cur = PG_INT64_MAX;
}

static inline void
cursor_next(Cursor *c)
{
	if (++c->pos < c->len)
	{
		c->cur = c->ids[c->pos];
		return;
	}
	c->sub++;
	cursor_load(c);
}

/* Move to the first posting at or after target, skipping blocks and sub-blocks by
 * their last id without decoding them. */
static void
cursor_seek(Cursor *c, int64 target)
{
	if (c->cur >= target)
		return;
	if (c->ids[c->len - 1] < target)
	{
		/* Past the decoded sub-block: find the first block, then sub-block, reaching target. */
		c->sub++;
		while (c->block < c->nblocks)
		{
			BlockView  *v = &c->blocks[c->block];

			if (v->head.last_id >= target)
			{
				while (c->sub < v->head.nsub)
				{
					SubEntry	e;

					block_sub(v, c->sub, &e);
					if (e.last_id >= target)
						break;
					c->sub++;
				}
				break;
			}
			c->block++;
			c->sub = 0;
		}
		cursor_load(c);
		if (c->cur >= target)
			return;
	}
	while (c->pos < c->len && c->ids[c->pos] < target)
		c->pos++;
	if (c->pos < c->len)
		c->cur = c->ids[c->pos];
	else
	{
		c->sub++;
		cursor_load(c);
	}
}

static inline double
cursor_score(const Cursor *c, const Scoring *sc)
{
	return impact(sc, c->idf, c->tfs[c->pos], c->dls[c->pos]);
}

/* Back to the run's first posting. */
static void
cursor_rewind(Cursor *c)
{
	c->block = 0;
	c->sub = 0;
	c->len = 0;
	cursor_load(c);
}

static void
cursor_start(Cursor *c, const Scoring *sc)
{
	double		best = 0.0;

	for (int b = 0; b < c->nblocks; b++)
		for (int s = 0; s < c->blocks[b].head.nsub; s++)
		{
			SubEntry	e;

			block_sub(&c->blocks[b], s, &e);
			best = Max(best, impact(sc, c->idf, (int32) e.max_tf, (int32) e.min_dl));
		}
	c->bound = best;
	cursor_rewind(c);
}

/* The k best (score desc, id asc) in a binary heap whose root is the worst kept. */
typedef struct Hit
{
	double		score;
	int64		id;
} Hit;

static inline bool
hit_worse(const Hit *a, const Hit *b)
{
	return a->score < b->score || (a->score == b->score && a->id > b->id);
}

static void
heap_sift_down(Hit *h, int n, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;

		if (l < n && hit_worse(&h[l], &h[m]))
			m = l;
		if (r < n && hit_worse(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		{
			Hit			t = h[i];

			h[i] = h[m];
			h[m] = t;
		}
		i = m;
	}
}

static void
heap_sift_up(Hit *h, int i)
{
	while (i > 0)
	{
		int			p = (i - 1) / 2;

		if (!hit_worse(&h[i], &h[p]))
			return;
		{
			Hit			t = h[i];

			h[i] = h[p];
			h[p] = t;
		}
		i = p;
	}
}

/* Offer a hit; true when it was kept. */
static bool
heap_offer(Hit *h, int *n, int k, double score, int64 id)
{
	Hit			x = {score, id};

	if (*n < k)
	{
		h[*n] = x;
		heap_sift_up(h, (*n)++);
		return true;
	}
	if (!hit_worse(&h[0], &x))
		return false;
	h[0] = x;
	heap_sift_down(h, *n, 0);
	return true;
}

static int
hit_order(const void *a, const void *b)
{
	const Hit  *x = (const Hit *) a;
	const Hit  *y = (const Hit *) b;

	if (hit_worse(x, y))
		return 1;
	if (hit_worse(y, x))
		return -1;
	return 0;
}

static int
cursor_by_bound(const void *a, const void *b)
{
	double		x = (*(Cursor *const *) a)->bound;
	double		y = (*(Cursor *const *) b)->bound;

	return (x > y) - (x < y);
}

typedef struct BlockRef
{
	int			term;
	int64		first;
	int			index;
} BlockRef;

static int
blockref_order(const void *a, const void *b)
{
	const BlockRef *x = (const BlockRef *) a;
	const BlockRef *y = (const BlockRef *) b;

	if (x->term != y->term)
		return (x->term > y->term) - (x->term < y->term);
	if (x->first != y->first)
		return (x->first > y->first) - (x->first < y->first);
	return (x->index > y->index) - (x->index < y->index);
}

/* Relative margin for comparisons with theta: sums taken in another order may differ
 * in their last bits, and a fragment must never be pruned by rounding. */
#define MARGIN (1.0 - 1e-9)

PG_FUNCTION_INFO_V1(bm25_top);

/*
 * bm25_top(term_nos int[], blocks bytea[], idfs float8[], k int, k1 float8, b float8,
 *          avgdl float8, only_ids bigint[], also_ids bigint[])
 *   returns table (fragment_id bigint, score float8, in_top boolean)
 *
 * blocks[i] holds postings of term term_nos[i] (1-based into idfs). The top k by
 * score (desc) then id (asc), among only_ids when given; then, with in_top false, the
 * scores of also_ids outside that top k that hold at least one term.
 */
Datum
bm25_top(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *term_arr,
			   *block_arr,
			   *idf_arr;
	Datum	   *block_elems;
	bool	   *block_nulls;
	int			nblocks,
				nterms,
				k;
	int32	   *term_nos;
	double	   *idfs;
	Scoring		sc;
	int64	   *only = NULL,
			   *also = NULL;
	int			nonly = -1,
				nalso = 0;
	BlockRef   *refs;
	BlockView  *views;
	Cursor    **cursors;
	Cursor	   *pool;
	int			ncursors = 0;
	double	   *prefix;
	Hit		   *heap;
	int			nheap = 0;
	int			ess = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3) ||
		PG_ARGISNULL(4) || PG_ARGISNULL(5) || PG_ARGISNULL(6))
		return (Datum) 0;
	term_arr = PG_GETARG_ARRAYTYPE_P(0);
	block_arr = PG_GETARG_ARRAYTYPE_P(1);
	idf_arr = PG_GETARG_ARRAYTYPE_P(2);
	k = PG_GETARG_INT32(3);
	sc.k1 = PG_GETARG_FLOAT8(4);
	sc.b = PG_GETARG_FLOAT8(5);
	sc.avgdl = PG_GETARG_FLOAT8(6);
	if (!PG_ARGISNULL(7))
		only = sorted_ids(PG_GETARG_ARRAYTYPE_P(7), &nonly, "only_ids");
	if (!PG_ARGISNULL(8))
		also = sorted_ids(PG_GETARG_ARRAYTYPE_P(8), &nalso, "also_ids");
	array_check_1d(term_arr, "term_nos");
	array_check_1d(block_arr, "blocks");
	array_check_1d(idf_arr, "idfs");
	if (!(sc.avgdl > 0.0) || sc.k1 < 0.0 || sc.b < 0.0 || sc.b > 1.0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("contexts_bm25: need avgdl > 0, k1 >= 0 and b in [0, 1]")));
	term_nos = (int32 *) ARR_DATA_PTR(term_arr);
	idfs = (double *) ARR_DATA_PTR(idf_arr);
	nterms = ArrayGetNItems(ARR_NDIM(idf_arr), ARR_DIMS(idf_arr));
	deconstruct_array(block_arr, BYTEAOID, -1, false, TYPALIGN_INT, &block_elems, &block_nulls, &nblocks);
	if (ArrayGetNItems(ARR_NDIM(term_arr), ARR_DIMS(term_arr)) != nblocks)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("contexts_bm25: term_nos and blocks differ in length")));
	if (nblocks == 0)
		return (Datum) 0;

	/* Blocks by term then first id; each term's blocks dealt into runs of disjoint ranges. */
	refs = (BlockRef *) palloc(sizeof(BlockRef) * nblocks);
	views = (BlockView *) palloc(sizeof(BlockView) * nblocks);
	for (int i = 0; i < nblocks; i++)
	{
		if (term_nos[i] < 1 || term_nos[i] > nterms)
			ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
							errmsg("contexts_bm25: term number %d outside 1..%d", term_nos[i], nterms)));
		block_open((bytea *) PG_DETOAST_DATUM_PACKED(block_elems[i]), &views[i]);
		refs[i].term = term_nos[i];
		refs[i].first = views[i].head.first_id;
		refs[i].index = i;
	}
	qsort(refs, nblocks, sizeof(BlockRef), blockref_order);
	pool = (Cursor *) palloc0(sizeof(Cursor) * nblocks);
	cursors = (Cursor **) palloc(sizeof(Cursor *) * nblocks);
	{
		int			i = 0;

		while (i < nblocks)
		{
			int			j = i;
			int			first_run = ncursors;

			while (j < nblocks && refs[j].term == refs[i].term)
				j++;
			/* Greedy interval partitioning: a block joins the first run it follows. */
			for (int x = i; x < j; x++)
			{
				int			r;

				for (r = first_run; r < ncursors; r++)
				{
					Cursor	   *c = &pool[r];

					if (c->blocks[c->nblocks - 1].head.last_id < refs[x].first)
						break;
				}
				if (r == ncursors)
				{
					pool[r].idf = idfs[refs[i].term - 1];
					pool[r].blocks = (BlockView *) palloc(sizeof(BlockView) * (j - i));
					pool[r].nblocks = 0;
					ncursors++;
				}
				pool[r].blocks[pool[r].nblocks++] = views[refs[x].index];
			}
			i = j;
		}
	}
	for (int c = 0; c < ncursors; c++)
	{
		cursor_start(&pool[c], &sc);
		cursors[c] = &pool[c];
	}
	qsort(cursors, ncursors, sizeof(Cursor *), cursor_by_bound);
	/* prefix[i]: the bounds of cursors[0..i-1] together. */
	prefix = (double *) palloc(sizeof(double) * (ncursors + 1));
	prefix[0] = 0.0;
	for (int c = 0; c < ncursors; c++)
		prefix[c + 1] = prefix[c] + cursors[c]->bound;

	/* No more hits than postings: k may be "all" (the largest int). */
	{
		int64		total = 0;

		for (int i = 0; i < nblocks; i++)
			total += views[i].head.count;
		k = (int) Max(0, Min((int64) k, total));
	}
	heap = (Hit *) palloc(sizeof(Hit) * Max(1, k));
	if (k > 0 && only != NULL)
	{
		/* Only the given fragments: probe every run for each. */
		for (int x = 0; x < nonly; x++)
		{
			double		score = 0.0;
			bool		held = false;

			for (int c = 0; c < ncursors; c++)
			{
				cursor_seek(cursors[c], only[x]);
				if (cursors[c]->cur == only[x])
				{
					score += cursor_score(cursors[c], &sc);
					held = true;
				}
			}
			if (held)
				heap_offer(heap, &nheap, k, score, only[x]);
			CHECK_FOR_INTERRUPTS();
		}
	}
	else if (k > 0)
	{
		uint32		steps = 0;

		for (;;)
		{
			int64		doc = PG_INT64_MAX;
			double		score = 0.0;
			bool		pruned = false;

			for (int c = ess; c < ncursors; c++)
				if (cursors[c]->cur < doc)
					doc = cursors[c]->cur;
			if (doc == PG_INT64_MAX)
				break;
			for (int c = ess; c < ncursors; c++)
				if (cursors[c]->cur == doc)
				{
					score += cursor_score(cursors[c], &sc);
					cursor_next(cursors[c]);
				}
			/* The non-essential runs, the likeliest first, while the doc can still make it. */
			for (int c = ess - 1; c >= 0; c--)
			{
				if (score + prefix[c + 1] < heap[0].score * MARGIN)
				{
					pruned = true;
					break;
				}
				cursor_seek(cursors[c], doc);
				if (cursors[c]->cur == doc)
					score += cursor_score(cursors[c], &sc);
			}
			if (!pruned && heap_offer(heap, &nheap, k, score, doc) && nheap == k)
			{
				double		theta = heap[0].score * MARGIN;

				while (ess < ncursors && prefix[ess + 1] < theta)
					ess++;
			}
			if ((++steps & 0x3fff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}

	qsort(heap, nheap, sizeof(Hit), hit_order);
	for (int i = 0; i < nheap; i++)
	{
		Datum		values[3];
		bool		isnull[3] = {false, false, false};

		values[0] = Int64GetDatum(heap[i].id);
		values[1] = Float8GetDatum(heap[i].score);
		values[2] = BoolGetDatum(true);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	if (also != NULL && nalso > 0)
	{
		/* The runs again from their start, probed for each of also_ids not in the top. */
		int64	   *top = (int64 *) palloc(sizeof(int64) * Max(1, nheap));

		for (int i = 0; i < nheap; i++)
			top[i] = heap[i].id;
		if (nheap > 1)
			qsort(top, nheap, sizeof(int64), int64_cmp);
		for (int c = 0; c < ncursors; c++)
			cursor_rewind(&pool[c]);
		for (int x = 0; x < nalso; x++)
		{
			double		score = 0.0;
			bool		held = false;

			if (sorted_contains(top, nheap, also[x]))
				continue;
			for (int c = 0; c < ncursors; c++)
			{
				cursor_seek(&pool[c], also[x]);
				if (pool[c].cur == also[x])
				{
					score += cursor_score(&pool[c], &sc);
					held = true;
				}
			}
			if (held)
			{
				Datum		values[3];
				bool		isnull[3] = {false, false, false};

				values[0] = Int64GetDatum(also[x]);
				values[1] = Float8GetDatum(score);
				values[2] = BoolGetDatum(false);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
			}
		}
	}
	return (Datum) 0;
}
