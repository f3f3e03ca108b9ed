/*
 * A plain `COPY partitioned_table TO ...` under row-level security exports nothing and
 * says nothing: PostgreSQL runs it as `SELECT * FROM ONLY table`, and a partitioned
 * table's own heap is empty (its rows are in its partitions). An analyst's
 * `\copy data.fragments to FILE` then writes an empty file. This utility hook turns that
 * case into an error naming the query form that works. Loaded in every session through
 * session_preload_libraries (app/db/embedded.py writes it when the library is installed);
 * a server that does not load it behaves as PostgreSQL does (docs/analysts.md says so).
 * Written by hand: no library can intercept a statement inside the server.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"

void _PG_init(void);

static ProcessUtility_hook_type previous_utility = NULL;

static void
contexts_copy_guard(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                    ProcessUtilityContext context, ParamListInfo params,
                    QueryEnvironment *query_env, DestReceiver *dest, QueryCompletion *qc)
{
    Node *statement = pstmt->utilityStmt;

    if (IsA(statement, CopyStmt))
    {
        CopyStmt *copy = (CopyStmt *) statement;

        if (!copy->is_from && copy->relation != NULL)
        {
            Oid relid = RangeVarGetRelid(copy->relation, NoLock, true);

            if (OidIsValid(relid) && get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE &&
                check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
            {
                char *name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
                                                        get_rel_name(relid));

                ereport(ERROR,
                        (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                         errmsg("COPY %s TO would export nothing: its rows are in its partitions, "
                                "which row-level security keeps COPY from reading", name),
                         errhint("Copy a query instead: COPY (SELECT * FROM %s) TO ..., "
                                 "in psql \\copy (select * from %s) to 'file.csv' csv header", name, name)));
            }
        }
    }
    if (previous_utility)
        previous_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    else
        standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
}

void
_PG_init(void)
{
    previous_utility = ProcessUtility_hook;
    ProcessUtility_hook = contexts_copy_guard;
}
