/*
 * cu_doc_int.h - what the document tree's reader (cu_doc.c) and writer
 * (cu_docemit.c) share; for base/ only.
 */
#ifndef CU_DOC_INT_H
#define CU_DOC_INT_H

/* libyaml refuses simple keys longer than 1024 characters; longer keys
 * are written in the explicit "? key" form. */
#define DOC_SIMPLE_KEY_MAX 1000

/* True if s is w in lower, Title or UPPER case (w is lower case).
 * Borrows both. */
int cu_doc_word_case(const char *s, const char *w);

#endif
