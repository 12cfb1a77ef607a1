/*
 * test_tls.c - the certificates cu_tls_generate makes, read back with
 * GnuTLS: the server certificate verifies against the CA, names
 * 127.0.0.1, ::1, localhost and the listen host (not a wildcard address),
 * is for TLS servers and not a CA; the key is the certificate's; both are
 * valid now and for a year; every run makes new keys and serials.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_tls.h"

typedef struct certs {
    char *ca, *cert, *key;
    gnutls_x509_crt_t cac, crt;
    gnutls_x509_privkey_t pk;
} certs;

static void load(certs *c, const char *host)
{
    char err[256] = "";
    memset(c, 0, sizeof *c);
    if (cu_tls_generate(host, &c->ca, &c->cert, &c->key, err, sizeof err) != CU_OK)
        fail_msg("cu_tls_generate: %s", err);
    assert_non_null(strstr(c->ca, "-----BEGIN CERTIFICATE-----"));
    assert_non_null(strstr(c->cert, "-----BEGIN CERTIFICATE-----"));
    assert_non_null(strstr(c->key, "PRIVATE KEY-----"));
    gnutls_datum_t d;
    assert_int_equal(gnutls_x509_crt_init(&c->cac), 0);
    assert_int_equal(gnutls_x509_crt_init(&c->crt), 0);
    assert_int_equal(gnutls_x509_privkey_init(&c->pk), 0);
    d.data = (unsigned char *)c->ca, d.size = (unsigned)strlen(c->ca);
    assert_int_equal(gnutls_x509_crt_import(c->cac, &d, GNUTLS_X509_FMT_PEM), 0);
    d.data = (unsigned char *)c->cert, d.size = (unsigned)strlen(c->cert);
    assert_int_equal(gnutls_x509_crt_import(c->crt, &d, GNUTLS_X509_FMT_PEM), 0);
    d.data = (unsigned char *)c->key, d.size = (unsigned)strlen(c->key);
    assert_int_equal(gnutls_x509_privkey_import(c->pk, &d, GNUTLS_X509_FMT_PEM), 0);
}

static void unload(certs *c)
{
    gnutls_x509_crt_deinit(c->cac);
    gnutls_x509_crt_deinit(c->crt);
    gnutls_x509_privkey_deinit(c->pk);
    free(c->ca);
    free(c->cert);
    free(c->key);
}

static int has_ip(gnutls_x509_crt_t crt, const char *ip)
{
    unsigned char b[16];
    unsigned n = inet_pton(AF_INET, ip, b) == 1 ? 4 : 16;
    if (n == 16)
        assert_int_equal(inet_pton(AF_INET6, ip, b), 1);
    return gnutls_x509_crt_check_ip(crt, b, n, 0) != 0;
}

static void test_chain(void **st)
{
    (void)st;
    certs c;
    load(&c, NULL);
    /* the server certificate verifies against the CA */
    unsigned status = 1;
    assert_int_equal(gnutls_x509_crt_verify(c.crt, &c.cac, 1, 0, &status), 0);
    assert_int_equal(status, 0);
    /* and the CA against itself, as a root */
    status = 1;
    assert_int_equal(gnutls_x509_crt_verify(c.cac, &c.cac, 1, 0, &status), 0);
    assert_int_equal(status, 0);
    /* not against another run's CA */
    certs o;
    load(&o, NULL);
    status = 0;
    gnutls_x509_crt_verify(c.crt, &o.cac, 1, 0, &status);
    assert_true(status & GNUTLS_CERT_INVALID);
    /* every run: new serials and keys */
    unsigned char s1[32], s2[32];
    size_t n1 = sizeof s1, n2 = sizeof s2;
    assert_int_equal(gnutls_x509_crt_get_serial(c.crt, s1, &n1), 0);
    assert_int_equal(gnutls_x509_crt_get_serial(o.crt, s2, &n2), 0);
    assert_false(n1 == n2 && memcmp(s1, s2, n1) == 0);
    assert_true(s1[0] < 0x80); /* a positive serial */
    assert_string_not_equal(c.key, o.key);
    unload(&o);
    unload(&c);
}

static void test_names_and_roles(void **st)
{
    (void)st;
    certs c;
    load(&c, "cueue.example.com");
    assert_true(gnutls_x509_crt_check_hostname(c.crt, "localhost"));
    assert_true(gnutls_x509_crt_check_hostname(c.crt, "cueue.example.com"));
    assert_false(gnutls_x509_crt_check_hostname(c.crt, "other.example.com"));
    assert_true(has_ip(c.crt, "127.0.0.1"));
    assert_true(has_ip(c.crt, "::1"));
    assert_false(has_ip(c.crt, "10.0.0.1"));
    /* subjects */
    char cn[128];
    size_t n = sizeof cn;
    assert_int_equal(
        gnutls_x509_crt_get_dn_by_oid(c.crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &n), 0);
    assert_string_equal(cn, "cueue-apiserver");
    n = sizeof cn;
    assert_int_equal(
        gnutls_x509_crt_get_dn_by_oid(c.cac, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &n), 0);
    assert_string_equal(cn, "cueue-ca");
    /* roles: the CA is one, the server certificate is not and serves TLS */
    unsigned ca = 0;
    assert_true(gnutls_x509_crt_get_basic_constraints(c.cac, NULL, &ca, NULL) >= 0);
    assert_int_equal(ca, 1);
    ca = 1;
    assert_true(gnutls_x509_crt_get_basic_constraints(c.crt, NULL, &ca, NULL) >= 0);
    assert_int_equal(ca, 0);
    char oid[128];
    n = sizeof oid;
    assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(c.crt, 0, oid, &n, NULL), 0);
    assert_string_equal(oid, GNUTLS_KP_TLS_WWW_SERVER);
    /* the key is the server certificate's */
    unsigned char k1[64], k2[64];
    size_t kn1 = sizeof k1, kn2 = sizeof k2;
    assert_int_equal(gnutls_x509_crt_get_key_id(c.crt, GNUTLS_KEYID_USE_SHA256, k1, &kn1), 0);
    assert_int_equal(gnutls_x509_privkey_get_key_id(c.pk, GNUTLS_KEYID_USE_SHA256, k2, &kn2), 0);
    assert_int_equal(kn1, kn2);
    assert_memory_equal(k1, k2, kn1);
    /* valid now, for a year */
    time_t now = time(NULL);
    time_t from = gnutls_x509_crt_get_activation_time(c.crt);
    time_t to = gnutls_x509_crt_get_expiration_time(c.crt);
    assert_true(from <= now && now < to);
    assert_true(to - now > 364 * 24 * 3600 && to - now <= 365 * 24 * 3600 + 60);
    unload(&c);
}

static void test_hosts(void **st)
{
    (void)st;
    certs c;
    /* an IPv6 listen address becomes an IP name */
    load(&c, "fd00::1");
    assert_true(has_ip(c.crt, "fd00::1"));
    unload(&c);
    load(&c, "192.0.2.7");
    assert_true(has_ip(c.crt, "192.0.2.7"));
    assert_false(gnutls_x509_crt_check_hostname(c.crt, "192.0.2.8"));
    unload(&c);
    /* a wildcard listen address names nothing more */
    load(&c, "0.0.0.0");
    assert_false(has_ip(c.crt, "0.0.0.0"));
    assert_true(has_ip(c.crt, "127.0.0.1"));
    unload(&c);
    load(&c, "::");
    assert_false(has_ip(c.crt, "::"));
    unload(&c);
    load(&c, "");
    assert_true(gnutls_x509_crt_check_hostname(c.crt, "localhost"));
    unload(&c);
}

/* cu_tls_issue_server: the names and validity asked for, a CA key that
 * signs, the expiry read back, and cu_tls_server_ok's verdicts. */
static void test_issue(void **st)
{
    (void)st;
    const char *names[] = { "svc.ns.svc", "svc.ns.svc.cluster.local", "127.0.0.1", "localhost" };
    cu_tls_issue o = {
        .ca_cn = "kueue-ca", .org = "kueue", .names = names, .nnames = 4, .valid_s = 7200
    };
    char *ca, *cakey, *cert, *key, err[256] = "", why[256] = "";
    int64_t now = (int64_t)time(NULL);
    if (cu_tls_issue_server(&o, &ca, &cakey, &cert, &key, err, sizeof err) != CU_OK)
        fail_msg("cu_tls_issue_server: %s", err);
    assert_non_null(strstr(cakey, "PRIVATE KEY-----"));
    int64_t na = 0;
    assert_int_equal(cu_tls_cert_expiry(cert, &na, err, sizeof err), CU_OK);
    assert_true(na >= now + 7200 - 5 && na <= now + 7200 + 5);
    assert_int_equal(cu_tls_cert_expiry(ca, &na, err, sizeof err), CU_OK);
    assert_true(na >= now + 7200 - 5 && na <= now + 7200 + 5);
    assert_int_equal(cu_tls_cert_expiry("garbage", &na, err, sizeof err), CU_EINVAL);
    assert_non_null(strstr(err, "not a PEM certificate"));
    /* valid now for each name, not for another, not after expiry */
    for (int i = 0; i < 4; i++)
        assert_int_equal(cu_tls_server_ok(ca, cert, key, names[i], now, why, sizeof why), 1);
    assert_int_equal(cu_tls_server_ok(ca, cert, key, "other.ns.svc", now, why, sizeof why), 0);
    assert_non_null(strstr(why, "not valid for other.ns.svc"));
    assert_int_equal(cu_tls_server_ok(ca, cert, key, NULL, now + 7300, why, sizeof why), 0);
    assert_non_null(strstr(why, "expires"));
    /* another CA, another key */
    char *ca2, *cakey2, *cert2, *key2;
    assert_int_equal(cu_tls_issue_server(&o, &ca2, &cakey2, &cert2, &key2, err, sizeof err), CU_OK);
    assert_int_equal(cu_tls_server_ok(ca2, cert, key, NULL, now, why, sizeof why), 0);
    assert_non_null(strstr(why, "not signed by the CA"));
    assert_int_equal(cu_tls_server_ok(ca, cert, key2, NULL, now, why, sizeof why), 0);
    assert_non_null(strstr(why, "key does not match"));
    assert_int_equal(cu_tls_server_ok(ca, cert, "x", NULL, now, why, sizeof why), 0);
    assert_non_null(strstr(why, "key cannot be read"));
    assert_int_equal(cu_tls_server_ok(NULL, cert, key, NULL, now, why, sizeof why), 0);
    assert_int_equal(cu_tls_server_ok(ca, ca, cakey, NULL, now, why, sizeof why), 1);
    free(ca), free(cakey), free(cert), free(key);
    free(ca2), free(cakey2), free(cert2), free(key2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_names_and_roles),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_issue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
