/*
 * cu_persist.c - the store's SQLite persistence (cu_store_persist in
 * cu_store.h): DIR/cluster.db in WAL mode, one row per object and the
 * resourceVersion counter, written through in one transaction per change
 * (under the store lock, so rows follow RV order).
 *
 * Schema:
 *   objects(res, ns, name, rv, data)  -- res as in error messages
 *                                        ("pods", "jobs.batch"), ns "" for
 *                                        cluster-scoped objects
 *   meta(k, v)                        -- k "rv": the global counter
 *
 * On open, an existing database replaces the store's objects: CRDs are
 * loaded first (so their resources are served), then namespaces, then
 * everything else; a fresh database receives the store's current objects.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cu_store.h"

typedef struct pdb {
    sqlite3 *db;
    sqlite3_stmt *put, *del, *meta, *begin, *commit, *rollback;
} pdb;

static void pdb_close(void *ud)
{
    pdb *p = ud;
    if (!p)
        return;
    sqlite3_finalize(p->put);
    sqlite3_finalize(p->del);
    sqlite3_finalize(p->meta);
    sqlite3_finalize(p->begin);
    sqlite3_finalize(p->commit);
    sqlite3_finalize(p->rollback);
    sqlite3_close(p->db);
    free(p);
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int row_write(pdb *p, const char *res, const char *ns, const char *name, int64_t rv,
                     const char *data)
{
    sqlite3_stmt *st = data ? p->put : p->del;
    sqlite3_bind_text(st, 1, res, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ns ? ns : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    if (data) {
        sqlite3_bind_int64(st, 4, rv);
        sqlite3_bind_text(st, 5, data, -1, SQLITE_STATIC);
    }
    int rc = step_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

static int meta_write(pdb *p, int64_t counter)
{
    sqlite3_bind_int64(p->meta, 1, counter);
    int rc = step_reset(p->meta);
    sqlite3_clear_bindings(p->meta);
    return rc;
}

static cu_err pdb_write(void *ud, const char *res, const char *ns, const char *name, int64_t rv,
                        const char *data, int64_t counter)
{
    pdb *p = ud;
    if (step_reset(p->begin) != SQLITE_OK)
        return CU_EIO;
    if (row_write(p, res, ns, name, rv, data) != SQLITE_OK || meta_write(p, counter) != SQLITE_OK) {
        step_reset(p->rollback);
        return CU_EIO;
    }
    return step_reset(p->commit) == SQLITE_OK ? CU_OK : CU_EIO;
}

static cu_err dump_row(void *ud, const char *res, const char *ns, const char *name, int64_t rv,
                       const char *data)
{
    return row_write(ud, res, ns, name, rv, data) == SQLITE_OK ? CU_OK : CU_EIO;
}

static cu_err db_fail(pdb *p, cu_status *st, const char *what, const char *path)
{
    cu_status_set(st, 500, "InternalError", "%s %s: %s", what, path,
                  p && p->db ? sqlite3_errmsg(p->db) : "out of memory");
    pdb_close(p);
    return CU_EIO;
}

/* Loads the rows a query returns (res, data) into the store. */
static cu_err load_rows(pdb *p, cu_store *s, const char *sql, const char *path, cu_status *st)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(p->db, sql, -1, &q, NULL) != SQLITE_OK)
        return cu_status_set(st, 500, "InternalError", "cannot read %s: %s", path,
                             sqlite3_errmsg(p->db));
    cu_err err = CU_OK;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(q, 0);
        const char *data = (const char *)sqlite3_column_text(q, 1);
        cu_status lst;
        if (!res || !data)
            continue;
        cu_err e = cu_store_load(s, res, data, &lst);
        if (e == CU_ENOTFOUND) {
            /* a custom resource whose CRD is gone: skip it, as the API would */
            fprintf(stderr, "cueue cluster: %s: skipping stored %s object: %s\n", path, res,
                    lst.message);
            continue;
        }
        if (e != CU_OK) {
            err = cu_status_set(st, 500, "InternalError", "%s: cannot load a %s object: %s", path,
                                res, lst.message);
            break;
        }
    }
    if (err == CU_OK && rc != SQLITE_DONE)
        err = cu_status_set(st, 500, "InternalError", "cannot read %s: %s", path,
                            sqlite3_errmsg(p->db));
    sqlite3_finalize(q);
    return err;
}

cu_err cu_store_persist(cu_store *s, const char *dir, cu_status *st)
{
    char path[4096];
    if (!dir || !*dir)
        return cu_status_set(st, 400, "BadRequest", "no data directory given");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return cu_status_set(st, 500, "InternalError", "cannot create data directory %s: %s", dir,
                             strerror(errno));
    snprintf(path, sizeof(path), "%s/cluster.db", dir);
    pdb *p = calloc(1, sizeof(*p));
    if (!p)
        return cu_status_set(st, 500, "InternalError", "out of memory");
    if (sqlite3_open_v2(path, &p->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                        NULL) != SQLITE_OK)
        return db_fail(p, st, "cannot open", path);
    sqlite3_busy_timeout(p->db, 5000);
    const char *setup =
        "PRAGMA journal_mode=WAL;"
        "PRAGMA synchronous=NORMAL;"
        "CREATE TABLE IF NOT EXISTS objects(res TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
        " rv INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY(res, ns, name)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);";
    char *emsg = NULL;
    if (sqlite3_exec(p->db, setup, NULL, NULL, &emsg) != SQLITE_OK) {
        cu_err e = cu_status_set(st, 500, "InternalError", "cannot set up %s: %s", path,
                                 emsg ? emsg : "error");
        sqlite3_free(emsg);
        pdb_close(p);
        return e;
    }
    if (sqlite3_prepare_v2(p->db,
                           "INSERT OR REPLACE INTO objects(res, ns, name, rv, data) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &p->put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, "DELETE FROM objects WHERE res = ?1 AND ns = ?2 AND name = ?3",
                           -1, &p->del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, "INSERT OR REPLACE INTO meta(k, v) VALUES ('rv', ?1)", -1,
                           &p->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, "BEGIN IMMEDIATE", -1, &p->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, "COMMIT", -1, &p->commit, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(p->db, "ROLLBACK", -1, &p->rollback, NULL) != SQLITE_OK)
        return db_fail(p, st, "cannot prepare statements for", path);

    sqlite3_stmt *q = NULL;
    int64_t counter = -1;
    if (sqlite3_prepare_v2(p->db, "SELECT v FROM meta WHERE k = 'rv'", -1, &q, NULL) != SQLITE_OK)
        return db_fail(p, st, "cannot read", path);
    if (sqlite3_step(q) == SQLITE_ROW)
        counter = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);

    if (counter >= 0) {
        /* an existing cluster: its objects replace the fresh store's */
        cu_store_reset(s);
        cu_err e = load_rows(p, s,
                             "SELECT res, data FROM objects WHERE "
                             "res = 'customresourcedefinitions.apiextensions.k8s.io' ORDER BY name",
                             path, st);
        if (e == CU_OK)
            e = load_rows(p, s,
                          "SELECT res, data FROM objects WHERE res = 'namespaces' ORDER BY name",
                          path, st);
        if (e == CU_OK)
            e = load_rows(p, s,
                          "SELECT res, data FROM objects WHERE res NOT IN "
                          "('customresourcedefinitions.apiextensions.k8s.io', 'namespaces') "
                          "ORDER BY res, ns, name",
                          path, st);
        if (e != CU_OK) {
            pdb_close(p);
            return e;
        }
        cu_store_load_done(s, counter);
    } else {
        /* a new cluster: write what the store holds now */
        if (step_reset(p->begin) != SQLITE_OK)
            return db_fail(p, st, "cannot write", path);
        cu_err e = cu_store_dump(s, dump_row, p);
        if (e == CU_OK && meta_write(p, cu_store_rv(s)) != SQLITE_OK)
            e = CU_EIO;
        if (e != CU_OK) {
            step_reset(p->rollback);
            return db_fail(p, st, "cannot write", path);
        }
        if (step_reset(p->commit) != SQLITE_OK)
            return db_fail(p, st, "cannot write", path);
    }
    cu_store_backend be = { p, pdb_write, pdb_close };
    cu_store_set_backend(s, &be);
    return CU_OK;
}
