/*
 * cu_tls.c - see cu_tls.h: a certificate authority and a server
 * certificate generated for one run (GnuTLS). The CA is self-signed;
 * the server certificate names 127.0.0.1, ::1, localhost and the listen
 * host, so kubectl verifies it with the CA the kubeconfig carries.
 * Keys are ECDSA P-256 (fast to generate); certificates are valid from
 * one hour ago for one year.
 */
#include "cu_tls.h"

#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Returns a malloc'ed copy of the PEM export of crt or key. */
static char *datum_str(gnutls_datum_t *d)
{
    char *s = malloc(d->size + 1);
    if (s) {
        memcpy(s, d->data, d->size);
        s[d->size] = '\0';
    }
    gnutls_free(d->data);
    return s;
}

static int new_key(gnutls_x509_privkey_t *k)
{
    int rc = gnutls_x509_privkey_init(k);
    if (rc < 0)
        return rc;
    return gnutls_x509_privkey_generate(*k, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
}

/* Common fields: serial, validity, subject CN, public key. */
static int init_crt(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *cn,
                    const char *org, int64_t valid_s)
{
    unsigned char serial[16];
    int rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    if (rc < 0)
        return rc;
    serial[0] &= 0x7f; /* positive */
    serial[0] |= 0x01; /* no leading zero byte */
    time_t now = time(NULL);
    if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
        (rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0 ||
        (rc = gnutls_x509_crt_set_activation_time(crt, now - 3600)) < 0 ||
        (rc = gnutls_x509_crt_set_expiration_time(crt, now + (time_t)valid_s)) < 0 ||
        (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                            (unsigned)strlen(cn))) < 0 ||
        (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, org,
                                            (unsigned)strlen(org))) < 0 ||
        (rc = gnutls_x509_crt_set_key(crt, key)) < 0)
        return rc;
    unsigned char kid[64];
    size_t kidn = sizeof kid;
    if ((rc = gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA1, kid, &kidn)) < 0 ||
        (rc = gnutls_x509_crt_set_subject_key_id(crt, kid, kidn)) < 0)
        return rc;
    return 0;
}

static int add_ip(gnutls_x509_crt_t crt, const char *ip)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, ip, b) == 1)
        return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, b, 4,
                                                    GNUTLS_FSAN_APPEND);
    if (inet_pton(AF_INET6, ip, b) == 1)
        return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, b, 16,
                                                    GNUTLS_FSAN_APPEND);
    return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, ip, (unsigned)strlen(ip),
                                                GNUTLS_FSAN_APPEND);
}

/* A CA and a certificate signed by it: for a server (client_cn NULL:
 * CN srv_cn, the names of o) or a client (CN client_cn, client
 * authentication). ca_key_pem may be NULL (the CA's key is dropped). */
static cu_err generate(const cu_tls_issue *o, const char *client_cn, char **ca_pem,
                       char **ca_key_pem, char **cert_pem, char **key_pem, char *err, size_t errn)
{
    gnutls_x509_privkey_t cakey = NULL, key = NULL;
    gnutls_x509_crt_t ca = NULL, crt = NULL;
    gnutls_datum_t d = { NULL, 0 };
    const char *what = "generate keys";
    const char *org = o->org ? o->org : "cueue";
    int64_t valid = o->valid_s > 0 ? o->valid_s : 365 * 24 * 3600;
    int rc;
    *ca_pem = *cert_pem = *key_pem = NULL;
    if (ca_key_pem)
        *ca_key_pem = NULL;

    if ((rc = new_key(&cakey)) < 0 || (rc = new_key(&key)) < 0)
        goto fail;
    what = "build the CA certificate";
    if ((rc = gnutls_x509_crt_init(&ca)) < 0 ||
        (rc = init_crt(ca, cakey,
                       o->ca_cn    ? o->ca_cn
                       : client_cn ? "cueue-client-ca"
                                   : "cueue-ca",
                       org, valid)) < 0 ||
        (rc = gnutls_x509_crt_set_basic_constraints(ca, 1, -1)) < 0 ||
        (rc = gnutls_x509_crt_set_key_usage(ca, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                                    GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (rc = gnutls_x509_crt_sign2(ca, ca, cakey, GNUTLS_DIG_SHA256, 0)) < 0)
        goto fail;
    what = client_cn ? "build the client certificate" : "build the server certificate";
    if ((rc = gnutls_x509_crt_init(&crt)) < 0 ||
        (rc = init_crt(crt, key,
                       client_cn ? client_cn
                       : o->cn   ? o->cn
                                 : "cueue-apiserver",
                       org, valid)) < 0 ||
        (rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
        (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE |
                                                     GNUTLS_KEY_KEY_ENCIPHERMENT)) < 0 ||
        (rc = gnutls_x509_crt_set_key_purpose_oid(
             crt, client_cn ? GNUTLS_KP_TLS_WWW_CLIENT : GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0)
        goto fail;
    what = "add the certificate's names";
    for (size_t i = 0; !client_cn && i < o->nnames; i++)
        if (o->names[i] && *o->names[i] && (rc = add_ip(crt, o->names[i])) < 0)
            goto fail;
    what = "sign the certificate";
    unsigned char akid[64];
    size_t akidn = sizeof akid;
    if ((rc = gnutls_x509_crt_get_subject_key_id(ca, akid, &akidn, NULL)) < 0 ||
        (rc = gnutls_x509_crt_set_authority_key_id(crt, akid, akidn)) < 0 ||
        (rc = gnutls_x509_crt_sign2(crt, ca, cakey, GNUTLS_DIG_SHA256, 0)) < 0)
        goto fail;
    what = "export PEM";
    if ((rc = gnutls_x509_crt_export2(ca, GNUTLS_X509_FMT_PEM, &d)) < 0)
        goto fail;
    *ca_pem = datum_str(&d);
    if ((rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d)) < 0)
        goto fail;
    *cert_pem = datum_str(&d);
    if ((rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &d)) < 0)
        goto fail;
    *key_pem = datum_str(&d);
    if (ca_key_pem) {
        if ((rc = gnutls_x509_privkey_export2(cakey, GNUTLS_X509_FMT_PEM, &d)) < 0)
            goto fail;
        *ca_key_pem = datum_str(&d);
    }
    if (!*ca_pem || !*cert_pem || !*key_pem || (ca_key_pem && !*ca_key_pem)) {
        rc = GNUTLS_E_MEMORY_ERROR;
        goto fail;
    }
    gnutls_x509_crt_deinit(ca);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(cakey);
    gnutls_x509_privkey_deinit(key);
    return CU_OK;
fail:
    snprintf(err, errn, "TLS: cannot %s: %s", what, gnutls_strerror(rc));
    free(*ca_pem);
    free(*cert_pem);
    free(*key_pem);
    *ca_pem = *cert_pem = *key_pem = NULL;
    if (ca_key_pem) {
        free(*ca_key_pem);
        *ca_key_pem = NULL;
    }
    if (ca)
        gnutls_x509_crt_deinit(ca);
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (cakey)
        gnutls_x509_privkey_deinit(cakey);
    if (key)
        gnutls_x509_privkey_deinit(key);
    return CU_EIO;
}

cu_err cu_tls_generate(const char *host, char **ca_pem, char **cert_pem, char **key_pem, char *err,
                       size_t errn)
{
    const char *names[4] = { "127.0.0.1", "::1", "localhost", NULL };
    size_t n = 3;
    if (host && *host && strcmp(host, "0.0.0.0") != 0 && strcmp(host, "::") != 0 &&
        strcmp(host, "127.0.0.1") != 0 && strcmp(host, "localhost") != 0 &&
        strcmp(host, "::1") != 0)
        names[n++] = host;
    cu_tls_issue o = { .names = names, .nnames = n };
    return generate(&o, NULL, ca_pem, NULL, cert_pem, key_pem, err, errn);
}

cu_err cu_tls_generate_client(const char *cn, char **ca_pem, char **cert_pem, char **key_pem,
                              char *err, size_t errn)
{
    cu_tls_issue o = { 0 };
    return generate(&o, cn, ca_pem, NULL, cert_pem, key_pem, err, errn);
}

cu_err cu_tls_issue_server(const cu_tls_issue *o, char **ca_pem, char **ca_key_pem, char **cert_pem,
                           char **key_pem, char *err, size_t errn)
{
    return generate(o, NULL, ca_pem, ca_key_pem, cert_pem, key_pem, err, errn);
}

/* The first certificate of pem, imported into *crt. */
static int import_crt(const char *pem, gnutls_x509_crt_t *crt)
{
    gnutls_datum_t d = { (unsigned char *)(uintptr_t)pem, pem ? (unsigned)strlen(pem) : 0 };
    int rc = gnutls_x509_crt_init(crt);
    if (rc < 0)
        return rc;
    if (!pem || (rc = gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM)) < 0) {
        gnutls_x509_crt_deinit(*crt);
        *crt = NULL;
        return pem ? rc : GNUTLS_E_BASE64_DECODING_ERROR;
    }
    return 0;
}

cu_err cu_tls_cert_expiry(const char *pem, int64_t *not_after, char *err, size_t errn)
{
    gnutls_x509_crt_t crt = NULL;
    int rc = import_crt(pem, &crt);
    if (rc < 0) {
        snprintf(err, errn, "not a PEM certificate: %s", gnutls_strerror(rc));
        return CU_EINVAL;
    }
    time_t t = gnutls_x509_crt_get_expiration_time(crt);
    gnutls_x509_crt_deinit(crt);
    if (t == (time_t)-1) {
        snprintf(err, errn, "the certificate has no expiration time");
        return CU_EINVAL;
    }
    *not_after = (int64_t)t;
    return CU_OK;
}

int cu_tls_server_ok(const char *ca_pem, const char *cert_pem, const char *key_pem,
                     const char *name, int64_t at, char *why, size_t n)
{
    gnutls_x509_crt_t ca = NULL, crt = NULL;
    gnutls_x509_privkey_t key = NULL;
    int ok = 0, rc;
    unsigned status = 0;
    unsigned char id1[64], id2[64];
    size_t n1 = sizeof id1, n2 = sizeof id2;
    gnutls_datum_t kd = { (unsigned char *)(uintptr_t)key_pem,
                          key_pem ? (unsigned)strlen(key_pem) : 0 };
    if (import_crt(ca_pem, &ca) < 0) {
        snprintf(why, n, "the CA certificate cannot be read");
        goto out;
    }
    if (import_crt(cert_pem, &crt) < 0) {
        snprintf(why, n, "the certificate cannot be read");
        goto out;
    }
    if (!key_pem || gnutls_x509_privkey_init(&key) < 0 ||
        gnutls_x509_privkey_import(key, &kd, GNUTLS_X509_FMT_PEM) < 0) {
        snprintf(why, n, "the key cannot be read");
        goto out;
    }
    if ((rc = gnutls_x509_crt_verify(crt, &ca, 1, GNUTLS_VERIFY_DISABLE_TIME_CHECKS, &status)) <
            0 ||
        status) {
        snprintf(why, n, "the certificate is not signed by the CA");
        goto out;
    }
    if (gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA256, id1, &n1) < 0 ||
        gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA256, id2, &n2) < 0 || n1 != n2 ||
        memcmp(id1, id2, n1) != 0) {
        snprintf(why, n, "the key does not match the certificate");
        goto out;
    }
    if (name && !gnutls_x509_crt_check_hostname(crt, name)) {
        snprintf(why, n, "the certificate is not valid for %s", name);
        goto out;
    }
    time_t nb = gnutls_x509_crt_get_activation_time(crt);
    time_t na = gnutls_x509_crt_get_expiration_time(crt);
    time_t cana = gnutls_x509_crt_get_expiration_time(ca);
    if (nb == (time_t)-1 || (int64_t)nb > at) {
        snprintf(why, n, "the certificate is not valid yet");
        goto out;
    }
    if (na == (time_t)-1 || (int64_t)na <= at || cana == (time_t)-1 || (int64_t)cana <= at) {
        snprintf(why, n, "the certificate or its CA expires before %lld", (long long)at);
        goto out;
    }
    ok = 1;
out:
    if (ca)
        gnutls_x509_crt_deinit(ca);
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (key)
        gnutls_x509_privkey_deinit(key);
    return ok;
}
