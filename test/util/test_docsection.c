/* test_docsection.c - generated markdown sections: append to an empty or
 * hand-written document, replace in place keeping the prose around it,
 * idempotence, and the malformed cases (BEGIN without END, twice). */
#include "test/test.h"
#include "util/docsection.h"
#include "util/file.h"
#include <stdlib.h>
#include <unistd.h>

static AtlErr e;

TEST(append_then_replace_keeps_prose)
{
    char *a, *b, *c;
    REQUIRE(doc_section_replace("# Bench\n\nIntro.\n", "t", "## Table", "| x |\n", &a, &e) == 0);
    CHECK(strcmp(a, "# Bench\n\nIntro.\n\n## Table\n\n<!-- BEGIN generated:t -->\n| x |\n<!-- END generated:t -->\n") == 0);
    /* prose after the section survives a replacement; body without final newline */
    size_t n = strlen(a) + 20;
    char *withtail = malloc(n);
    snprintf(withtail, n, "%sOutro.\n", a);
    REQUIRE(doc_section_replace(withtail, "t", "## Table", "| y |", &b, &e) == 0);
    CHECK(strcmp(b, "# Bench\n\nIntro.\n\n## Table\n\n<!-- BEGIN generated:t -->\n| y |\n<!-- END generated:t -->\nOutro.\n") == 0);
    /* idempotent */
    REQUIRE(doc_section_replace(b, "t", "## Table", "| y |\n", &c, &e) == 0);
    CHECK(strcmp(b, c) == 0);
    free(a); free(b); free(c); free(withtail);
    /* empty document, no heading */
    REQUIRE(doc_section_replace(NULL, "s", NULL, "z\n", &a, &e) == 0);
    CHECK(strcmp(a, "<!-- BEGIN generated:s -->\nz\n<!-- END generated:s -->\n") == 0);
    free(a);
}

TEST(malformed_sections_fail)
{
    char *o;
    CHECK(doc_section_replace("<!-- BEGIN generated:t -->\nx\n", "t", NULL, "y", &o, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "BEGIN marker without END");
    CHECK(o == NULL);
    const char *twice = "<!-- BEGIN generated:t -->\n<!-- END generated:t -->\n<!-- BEGIN generated:t -->\n<!-- END generated:t -->\n";
    CHECK(doc_section_replace(twice, "t", NULL, "y", &o, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "appears twice");
}

TEST(file_round_trip)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/atoll_docsection_%d.md", (int)getpid());
    unlink(path);
    REQUIRE(doc_section_write_file(path, "# Title", "t", "## T", "one\n", &e) == 0);
    REQUIRE(doc_section_write_file(path, "# Title", "t", "## T", "two\n", &e) == 0);
    unsigned char *buf;
    size_t n;
    REQUIRE(atl_read_file(path, &buf, &n, &e) == 0);
    const char *want = "# Title\n\n## T\n\n<!-- BEGIN generated:t -->\ntwo\n<!-- END generated:t -->\n";
    CHECK(n == strlen(want) && memcmp(buf, want, n) == 0);
    free(buf);
    unlink(path);
    CHECK(doc_section_write_file("/nonexistent-dir/x.md", NULL, "t", NULL, "b", &e) == -1);
}

int main(void)
{
    RUN(append_then_replace_keeps_prose);
    RUN(malformed_sections_fail);
    RUN(file_round_trip);
    return test_summary("test_docsection");
}
