/*
 * cu_names.h - the syntax of Kubernetes names (k8s.io/apimachinery's
 * util/validation): DNS-1123 labels and subdomains, qualified names (label
 * and annotation keys, finalizers) and label values. The one home of these
 * rules: the cluster's ObjectMeta checks (cluster/apiserver/cu_objmeta.c) and
 * Kueue's validation (api/cu_validate.c) both ask here and each words the
 * problems its own way; cu_name_detail() gives kube-apiserver's wording.
 */
#ifndef CU_NAMES_H
#define CU_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* kube-apiserver's cap on the total bytes of an object's annotations
 * (keys and values). */
#define CU_ANNOTATIONS_MAX_BYTES (256 * 1024)

/* 1 if s[0..n) matches the DNS-1123 label syntax [a-z0-9]([-a-z0-9]*[a-z0-9])?
 * (length not checked). A NUL inside is invalid. */
int cu_dns1123_label_ok(const char *s, size_t n);
/* 1 if s[0..n) is DNS-1123 labels joined by '.' (length not checked);
 * fold: upper-case letters count as their lower case. */
int cu_dns1123_subdomain_ok(const char *s, size_t n, int fold);
/* 1 if s[0..n) matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
int cu_qname_part_ok(const char *s, size_t n);

/* The problems of a name, one bit each, in the order kube-apiserver lists
 * them (lowest bit first). */
enum {
    CU_NAME_SLASHES = 1 << 0, /* more than one '/' (nothing else is checked) */
    CU_NAME_PREFIX_EMPTY = 1 << 1,
    CU_NAME_PREFIX_LONG = 1 << 2, /* over 253 (its characters are not checked then) */
    CU_NAME_PREFIX_CHARS = 1 << 3,
    CU_NAME_PART_EMPTY = 1 << 4,
    CU_NAME_PART_LONG = 1 << 5, /* over 63 */
    CU_NAME_PART_CHARS = 1 << 6,
    CU_VALUE_LONG = 1 << 7, /* a label value over 63 */
    CU_VALUE_CHARS = 1 << 8,
    CU_DNS_LABEL_CHARS = 1 << 9, /* not a DNS-1123 label (object names) */
    CU_DNS_SUBDOMAIN_CHARS = 1 << 10,
};

/* The problems of the qualified name s[0..n) (optional DNS subdomain
 * prefix and '/', then a name part), as IsQualifiedName lists them: the
 * length and the characters of the name part both. fold: the key is
 * checked lowercased (annotation keys). 0 when valid. */
unsigned cu_qname_problems(const char *s, size_t n, int fold);
/* The problems of the label value s[0..n) (may be empty): CU_VALUE_LONG
 * and/or CU_VALUE_CHARS, or 0. */
unsigned cu_label_value_problems(const char *s, size_t n);

/* kube-apiserver's detail for one problem bit, e.g. "name part must be no
 * more than 63 characters" (a static string; "" for an unknown bit). */
const char *cu_name_detail(unsigned problem);

/* metadata.generateName: kube-apiserver's SimpleNameGenerator keeps the
 * first CU_GENERATE_BASE_MAX bytes of the base and appends
 * CU_GENERATE_SUFFIX_LEN characters of CU_GENERATE_ALPHABET. */
#define CU_GENERATE_BASE_MAX 58
#define CU_GENERATE_SUFFIX_LEN 5
#define CU_GENERATE_ALPHABET "bcdfghjklmnpqrstvwxz2456789"

/* Writes the name generated from base with the suffix drawn from r (the
 * cluster passes a random number, simulate a hash so that its output is
 * stable) into out[0..outsz), truncated to fit. */
void cu_name_generate(char *out, size_t outsz, const char *base, uint64_t r);

#endif
