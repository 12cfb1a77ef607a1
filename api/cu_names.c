/*
 * cu_names.c - label keys and values (see cu_names.h).
 */
#include "cu_names.h"

#include <ctype.h>
#include <string.h>

static int alnum(char c) { return isalnum((unsigned char)c) != 0; }
static int lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

static const char QNAME_PART_MSG[] =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
static const char QNAME_MSG[] =
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
    "prefix and '/' (e.g. 'example.com/MyName')";
static const char PREFIX_MSG[] =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char LABEL_VALUE_MSG[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
    "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static int qname_chars(const char *s, size_t n)
{
    if (!n || !alnum(s[0]) || !alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* a lowercase RFC 1123 subdomain of at most 253 characters */
static int subdomain(const char *s, size_t n)
{
    if (!n || n > 253)
        return 0;
    size_t seg = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (i == seg || !lower_alnum(s[seg]) || !lower_alnum(s[i - 1]))
                return 0;
            seg = i + 1;
        } else if (!lower_alnum(s[i]) && s[i] != '-') {
            return 0;
        }
    }
    return 1;
}

const char *cu_label_key_problem(const char *key, size_t len)
{
    const char *slash = memchr(key, '/', len);
    const char *name = key;
    size_t nlen = len;
    if (slash) {
        if (memchr(slash + 1, '/', len - (size_t)(slash + 1 - key)))
            return QNAME_MSG;
        size_t plen = (size_t)(slash - key);
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > 253)
            return "prefix part must be no more than 253 characters";
        if (!subdomain(key, plen))
            return PREFIX_MSG;
        name = slash + 1;
        nlen = len - plen - 1;
    }
    if (nlen == 0)
        return "name part must be non-empty";
    if (nlen > 63)
        return "name part must be no more than 63 characters";
    if (!qname_chars(name, nlen))
        return QNAME_PART_MSG;
    return NULL;
}

const char *cu_label_value_problem(const char *val, size_t len)
{
    if (len > 63)
        return "must be no more than 63 characters";
    if (len && !qname_chars(val, len))
        return LABEL_VALUE_MSG;
    return NULL;
}
