/*
 * test_persist.c - the store's SQLite write-through (cu_persist.c), read
 * with SQLite itself: the schema, one row per object with its
 * resourceVersion, the counter in meta, rows replaced and removed as
 * objects change, a fresh database receiving the store's objects; a
 * database written by hand loads CRDs before their resources and
 * namespaces before the rest, skips resources whose CRD is gone, keeps
 * the counter at least at the highest RV; the refusals (no directory, a
 * directory that cannot be made, a file that is not a database, a row
 * that is not JSON). (The restart round trip is in test_store.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_json.h"
#include "cu_store.h"

static const char CRD[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"things.example.com\",\"resourceVersion\":\"7\"},"
    "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
    "\"names\":{\"plural\":\"things\",\"singular\":\"thing\",\"kind\":\"Thing\","
    "\"listKind\":\"ThingList\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

typedef struct fx {
    char dir[64], db[96];
    int64_t now;
    cu_clock clock;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/cueue-persist-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/cluster.db", f->dir);
    f->now = 1767225600000;
    f->clock.now_ms = cu_clock_fake_now;
    f->clock.ud = &f->now;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static sqlite3 *db_open(const fx *f)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    return db;
}

/* The first column of the first row of sql as an integer (-1: no row). */
static int64_t q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    int64_t v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    sqlite3_finalize(q);
    return v;
}

/* The stored JSON of one object (a new tree) or NULL. */
static json_object *q_obj(sqlite3 *db, const char *res, const char *ns, const char *name)
{
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT data FROM objects WHERE res=?1 AND ns=?2 "
                                        "AND name=?3",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(q, 1, res, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, name, -1, SQLITE_STATIC);
    json_object *o = NULL;
    if (sqlite3_step(q) == SQLITE_ROW)
        o = cu_json_parse_str((const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    return o;
}

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *e = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
        fail_msg("%s: %s", sql, e);
}

static json_object *J(const char *s)
{
    json_object *o = cu_json_parse_str(s);
    assert_non_null(o);
    return o;
}

static void test_write_through(void **state)
{
    fx *f = *state;
    cu_status st;
    cu_store *s = cu_store_new(0, &f->clock);
    assert_non_null(s);
    assert_int_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    assert_int_equal(access(f->db, F_OK), 0);
    sqlite3 *db = db_open(f);
    /* a fresh database receives what the store holds: the 4 namespaces */
    assert_int_equal(q_int(db, "SELECT count(*) FROM objects WHERE res='namespaces' AND ns=''"), 4);
    assert_int_equal(q_int(db, "SELECT v FROM meta WHERE k='rv'"), cu_store_rv(s));
    json_object *def = q_obj(db, "namespaces", "", "default");
    assert_non_null(def);
    json_object_put(def);

    const cu_rtype *cms = cu_store_rtype(s, "", "v1", "configmaps");
    const cu_rtype *jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    json_object *out = NULL;
    assert_int_equal(cu_store_create(s, cms, "default",
                                     J("{\"metadata\":{\"name\":\"c\"},"
                                       "\"data\":{\"k\":\"v\"}}"),
                                     &out, &st),
                     CU_OK);
    const char *rv = cu_jpath_str(out, "metadata.resourceVersion");
    assert_non_null(rv);
    /* the row: its rv column, its JSON the stored object, the counter */
    json_object *row = q_obj(db, "configmaps", "default", "c");
    assert_non_null(row);
    assert_true(json_object_equal(row, out));
    json_object_put(row);
    assert_int_equal(q_int(db, "SELECT rv FROM objects WHERE res='configmaps' AND name='c'"),
                     atoll(rv));
    assert_int_equal(q_int(db, "SELECT v FROM meta WHERE k='rv'"), atoll(rv));
    json_object_put(out);

    /* an update replaces the row; a group's resource is named res.group */
    assert_int_equal(cu_store_create(s, jobs, "default",
                                     J("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":"
                                       "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                                       "\"i\"}],\"restartPolicy\":\"Never\"}}}}"),
                                     NULL, &st),
                     CU_OK);
    assert_int_equal(q_int(db, "SELECT count(*) FROM objects WHERE res='jobs.batch'"), 1);
    json_object *c = NULL;
    assert_int_equal(cu_store_get(s, cms, "default", "c", &c, &st), CU_OK);
    json_object_object_add(c, "data", J("{\"k\":\"v2\"}"));
    assert_int_equal(cu_store_update(s, cms, "default", "c", NULL, c, &out, &st), CU_OK);
    row = q_obj(db, "configmaps", "default", "c");
    assert_string_equal(cu_jpath_str(row, "data.k"), "v2");
    assert_int_equal(q_int(db, "SELECT count(*) FROM objects WHERE res='configmaps'"), 1);
    assert_int_equal(q_int(db, "SELECT v FROM meta WHERE k='rv'"), cu_store_rv(s));
    json_object_put(row);
    json_object_put(out);

    /* a delete removes it */
    assert_int_equal(cu_store_delete(s, cms, "default", "c", NULL, NULL, NULL, &st), CU_OK);
    assert_null(q_obj(db, "configmaps", "default", "c"));
    assert_int_equal(q_int(db, "SELECT v FROM meta WHERE k='rv'"), cu_store_rv(s));
    /* a finalizer keeps the row, now terminating */
    assert_int_equal(cu_store_create(s, cms, "default",
                                     J("{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"x/y\"]}}"),
                                     NULL, &st),
                     CU_OK);
    assert_int_equal(cu_store_delete(s, cms, "default", "f", NULL, NULL, NULL, &st), CU_OK);
    row = q_obj(db, "configmaps", "default", "f");
    assert_non_null(cu_jpath(row, "metadata.deletionTimestamp"));
    json_object_put(row);
    sqlite3_close(db);
    cu_store_free(s);
}

static void test_load_written_by_hand(void **state)
{
    fx *f = *state;
    cu_status st;
    /* a database as a previous run left it, rows in an awkward order */
    cu_store *s = cu_store_new(0, &f->clock);
    assert_int_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    cu_store_free(s);
    sqlite3 *db = db_open(f);
    exec_sql(db, "DELETE FROM objects");
    char sql[4096];
    /* the custom resource sorts before its CRD, and the config map's
     * namespace after it */
    exec_sql(db, "INSERT INTO objects VALUES('things.example.com','team','t1',9,"
                 "'{\"apiVersion\":\"example.com/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":"
                 "\"t1\",\"namespace\":\"team\",\"resourceVersion\":\"9\"},\"x\":1}')");
    snprintf(sql, sizeof sql,
             "INSERT INTO objects VALUES('customresourcedefinitions.apiextensions.k8s.io','',"
             "'things.example.com',7,'%s')",
             CRD);
    exec_sql(db, sql);
    exec_sql(db, "INSERT INTO objects VALUES('configmaps','team','c',12,"
                 "'{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                 "\"namespace\":\"team\",\"resourceVersion\":\"12\"}}')");
    exec_sql(db, "INSERT INTO objects VALUES('namespaces','','team',3,"
                 "'{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\","
                 "\"resourceVersion\":\"3\"}}')");
    /* a resource whose CRD is gone: skipped */
    exec_sql(db, "INSERT INTO objects VALUES('gone.example.com','','g',4,"
                 "'{\"metadata\":{\"name\":\"g\",\"resourceVersion\":\"4\"}}')");
    /* a counter lower than the highest stored RV */
    exec_sql(db, "UPDATE meta SET v=10 WHERE k='rv'");
    sqlite3_close(db);

    s = cu_store_new(0, &f->clock);
    assert_int_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    assert_true(cu_store_rv(s) >= 12);
    const cu_rtype *things = cu_store_rtype(s, "example.com", "v1", "things");
    assert_non_null(things);
    json_object *o = NULL;
    assert_int_equal(cu_store_get(s, things, "team", "t1", &o, &st), CU_OK);
    assert_int_equal(cu_jas_int64(cu_jget(o, "x"), 0), 1);
    json_object_put(o);
    const cu_rtype *cms = cu_store_rtype(s, "", "v1", "configmaps");
    assert_int_equal(cu_store_get(s, cms, "team", "c", &o, &st), CU_OK);
    assert_string_equal(cu_jpath_str(o, "metadata.resourceVersion"), "12");
    json_object_put(o);
    /* the stored objects replaced the fresh store's: "default" was not stored */
    const cu_rtype *nss = cu_store_rtype(s, "", "v1", "namespaces");
    assert_int_equal(cu_store_get(s, nss, NULL, "default", &o, &st), CU_ENOTFOUND);
    /* new writes continue after the highest RV */
    assert_int_equal(cu_store_create(s, cms, "team", J("{\"metadata\":{\"name\":\"d\"}}"), &o, &st),
                     CU_OK);
    assert_true(atoll(cu_jpath_str(o, "metadata.resourceVersion")) > 12);
    json_object_put(o);
    cu_store_free(s);
}

static void test_refusals(void **state)
{
    fx *f = *state;
    cu_status st;
    cu_store *s = cu_store_new(0, &f->clock);
    memset(&st, 0, sizeof st);
    assert_int_not_equal(cu_store_persist(s, NULL, &st), CU_OK);
    assert_int_equal(st.code, 400);
    assert_string_equal(st.message, "no data directory given");
    assert_int_not_equal(cu_store_persist(s, "", &st), CU_OK);
    assert_int_equal(st.code, 400);
    /* a directory under a file cannot be made */
    char bad[128];
    snprintf(bad, sizeof bad, "%s/file", f->dir);
    FILE *fp = fopen(bad, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(bad, sizeof bad, "%s/file/sub", f->dir);
    assert_int_not_equal(cu_store_persist(s, bad, &st), CU_OK);
    assert_int_equal(st.code, 500);
    assert_non_null(strstr(st.message, "cannot create data directory"));
    /* a cluster.db that is not a database */
    fp = fopen(f->db, "w");
    assert_non_null(fp);
    fputs("this is not an SQLite database, not even close; just some text that is long enough "
          "to have a header of one hundred bytes, which SQLite reads first.\n",
          fp);
    fclose(fp);
    assert_int_not_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    assert_int_equal(st.code, 500);
    assert_non_null(strstr(st.message, f->db));
    cu_store_free(s);

    /* a row that is not JSON */
    assert_int_equal(unlink(f->db), 0);
    s = cu_store_new(0, &f->clock);
    assert_int_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    cu_store_free(s);
    sqlite3 *db = db_open(f);
    exec_sql(db, "INSERT INTO objects VALUES('configmaps','default','x',99,'{not json')");
    sqlite3_close(db);
    s = cu_store_new(0, &f->clock);
    assert_int_not_equal(cu_store_persist(s, f->dir, &st), CU_OK);
    assert_int_equal(st.code, 500);
    assert_non_null(strstr(st.message, "cannot load a configmaps object"));
    cu_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_written_by_hand, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
