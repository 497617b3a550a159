/* docsection.h - generated sections inside hand-written markdown files.
 *
 * A tool that regenerates part of a document (the benchmark table in
 * docs/benchmarks.md) owns the text between
 *     <!-- BEGIN generated:NAME -->
 *     <!-- END generated:NAME -->
 * and nothing else, so prose around it survives regeneration. */
#ifndef ATOLL_UTIL_DOCSECTION_H
#define ATOLL_UTIL_DOCSECTION_H
#include <stddef.h>
#include "util/err.h"

/* Returns a malloc'd copy of `doc` (may be NULL: empty) with the section
 * NAME's body replaced by `body`; if the section is absent it is appended
 * (after `heading`, a line such as "## Models", when heading is non-NULL).
 * Fails on a BEGIN without its END, or a section present twice. */
int doc_section_replace(const char *doc, const char *name, const char *heading, const char *body, char **out, AtlErr *e);

/* The same on a file, written atomically; a missing file starts empty
 * (then `title`, e.g. "# Benchmarks", is written first when non-NULL). */
int doc_section_write_file(const char *path, const char *title, const char *name, const char *heading,
                           const char *body, AtlErr *e);
#endif
