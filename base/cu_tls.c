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
static int init_crt(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *cn)
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
        (rc = gnutls_x509_crt_set_expiration_time(crt, now + 365 * 24 * 3600)) < 0 ||
        (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                            (unsigned)strlen(cn))) < 0 ||
        (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, "cueue",
                                            5)) < 0 ||
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
 * CN cueue-apiserver, the loopback names and host) or a client (CN
 * client_cn, client authentication). */
static cu_err generate(const char *host, const char *client_cn, char **ca_pem, char **cert_pem,
                       char **key_pem, char *err, size_t errn)
{
    gnutls_x509_privkey_t cakey = NULL, key = NULL;
    gnutls_x509_crt_t ca = NULL, crt = NULL;
    gnutls_datum_t d = { NULL, 0 };
    const char *what = "generate keys";
    int rc;
    *ca_pem = *cert_pem = *key_pem = NULL;

    if ((rc = new_key(&cakey)) < 0 || (rc = new_key(&key)) < 0)
        goto fail;
    what = "build the CA certificate";
    if ((rc = gnutls_x509_crt_init(&ca)) < 0 ||
        (rc = init_crt(ca, cakey, client_cn ? "cueue-client-ca" : "cueue-ca")) < 0 ||
        (rc = gnutls_x509_crt_set_basic_constraints(ca, 1, -1)) < 0 ||
        (rc = gnutls_x509_crt_set_key_usage(ca, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                                    GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
        (rc = gnutls_x509_crt_sign2(ca, ca, cakey, GNUTLS_DIG_SHA256, 0)) < 0)
        goto fail;
    what = client_cn ? "build the client certificate" : "build the server certificate";
    if ((rc = gnutls_x509_crt_init(&crt)) < 0 ||
        (rc = init_crt(crt, key, client_cn ? client_cn : "cueue-apiserver")) < 0 ||
        (rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
        (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE |
                                                     GNUTLS_KEY_KEY_ENCIPHERMENT)) < 0 ||
        (rc = gnutls_x509_crt_set_key_purpose_oid(
             crt, client_cn ? GNUTLS_KP_TLS_WWW_CLIENT : GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0)
        goto fail;
    if (!client_cn && ((rc = add_ip(crt, "127.0.0.1")) < 0 || (rc = add_ip(crt, "::1")) < 0 ||
                       (rc = add_ip(crt, "localhost")) < 0))
        goto fail;
    if (!client_cn && host && *host && strcmp(host, "0.0.0.0") != 0 && strcmp(host, "::") != 0 &&
        strcmp(host, "127.0.0.1") != 0 && strcmp(host, "localhost") != 0 &&
        strcmp(host, "::1") != 0 && (rc = add_ip(crt, host)) < 0)
        goto fail;
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
    if (!*ca_pem || !*cert_pem || !*key_pem) {
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
    return generate(host, NULL, ca_pem, cert_pem, key_pem, err, errn);
}

cu_err cu_tls_generate_client(const char *cn, char **ca_pem, char **cert_pem, char **key_pem,
                              char *err, size_t errn)
{
    return generate(NULL, cn, ca_pem, cert_pem, key_pem, err, errn);
}
