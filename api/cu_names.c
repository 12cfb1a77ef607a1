/*
 * cu_names.c - the syntax of Kubernetes names (see cu_names.h).
 */
#include "cu_names.h"

#include <stdio.h>
#include <string.h>

static int lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static int alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

int cu_dns1123_label_ok(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

int cu_dns1123_subdomain_ok(const char *s, size_t n, int fold)
{
    size_t seg = 0;
    if (n == 0)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i == n ? '.' : fold ? lower(s[i]) : s[i];
        if (c == '.') { /* s[seg..i) holds only [-a-z0-9] by now */
            if (i == seg || s[seg] == '-' || s[i - 1] == '-')
                return 0;
            seg = i + 1;
        } else if (!lower_alnum(c) && c != '-') {
            return 0;
        }
    }
    return 1;
}

int cu_qname_part_ok(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

unsigned cu_qname_problems(const char *s, size_t n, int fold)
{
    unsigned p = 0;
    const char *slash = memchr(s, '/', n);
    const char *name = s;
    size_t nlen = n;
    if (slash) {
        if (memchr(slash + 1, '/', n - (size_t)(slash + 1 - s)))
            return CU_NAME_SLASHES;
        size_t plen = (size_t)(slash - s);
        if (plen == 0)
            p |= CU_NAME_PREFIX_EMPTY;
        else if (plen > 253)
            p |= CU_NAME_PREFIX_LONG;
        else if (!cu_dns1123_subdomain_ok(s, plen, fold))
            p |= CU_NAME_PREFIX_CHARS;
        name = slash + 1;
        nlen = n - plen - 1;
    }
    if (nlen == 0)
        return p | CU_NAME_PART_EMPTY;
    if (nlen > 63)
        p |= CU_NAME_PART_LONG;
    if (!cu_qname_part_ok(name, nlen))
        p |= CU_NAME_PART_CHARS;
    return p;
}

unsigned cu_label_value_problems(const char *s, size_t n)
{
    unsigned p = 0;
    if (n > 63)
        p |= CU_VALUE_LONG;
    if (n && !cu_qname_part_ok(s, n))
        p |= CU_VALUE_CHARS;
    return p;
}

#define SUBDOMAIN_MSG \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

const char *cu_name_detail(unsigned problem)
{
    switch (problem) {
    case CU_NAME_SLASHES:
        return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyName',  or "
               "'my.name',  or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
               "prefix and '/' (e.g. 'example.com/MyName')";
    case CU_NAME_PREFIX_EMPTY: return "prefix part must be non-empty";
    case CU_NAME_PREFIX_LONG: return "prefix part must be no more than 253 characters";
    case CU_NAME_PREFIX_CHARS: return "prefix part " SUBDOMAIN_MSG;
    case CU_NAME_PART_EMPTY: return "name part must be non-empty";
    case CU_NAME_PART_LONG: return "name part must be no more than 63 characters";
    case CU_NAME_PART_CHARS:
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
               "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
               "or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    case CU_VALUE_LONG: return "must be no more than 63 characters";
    case CU_VALUE_CHARS:
        return "a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    case CU_DNS_LABEL_CHARS:
        return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
               "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
               "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    case CU_DNS_SUBDOMAIN_CHARS: return SUBDOMAIN_MSG;
    }
    return "";
}

void cu_name_generate(char *out, size_t outsz, const char *base, uint64_t r)
{
    char sfx[CU_GENERATE_SUFFIX_LEN + 1];
    const uint64_t nalpha = sizeof(CU_GENERATE_ALPHABET) - 1;
    for (int i = 0; i < CU_GENERATE_SUFFIX_LEN; i++) {
        sfx[i] = CU_GENERATE_ALPHABET[r % nalpha];
        r /= nalpha;
    }
    sfx[CU_GENERATE_SUFFIX_LEN] = '\0';
    snprintf(out, outsz, "%.*s%s", CU_GENERATE_BASE_MAX, base ? base : "", sfx);
}
