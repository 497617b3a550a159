/* test_csv.c - the CSV writer quotes exactly the fields that need it, the
 * reader returns what the writer wrote (quotes, commas, newlines inside
 * fields, CRLF, no final newline) with each record's line, and malformed
 * text is an error naming the line. */
#include <stdlib.h>
#include "test/test.h"
#include "util/csv.h"

static char *write_fields(const char *const *f, int n)
{
    StrBuf b = {0};
    for (int i = 0; i < n; i++) {
        if (i) sbuf_put(&b, ",", 1);
        csv_put_field(&b, f[i]);
    }
    sbuf_put(&b, "\n", 1);
    return sbuf_take(&b);
}

TEST(writer_quotes_only_when_needed)
{
    const char *f[] = {"plain", "a,b", "say \"hi\"", "two\nlines", " pad", ""};
    char *t = write_fields(f, 6);
    REQUIRE(t);
    CHECK(!strcmp(t, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" pad\",\n"));
    AtlCsv c;
    AtlErr e;
    REQUIRE(csv_parse("t.csv", t, strlen(t), &c, &e) == 0);
    REQUIRE(c.nrecords == 1);
    CHECK_EQ_INT(c.records[0].nfields, 6);
    for (int i = 0; i < 6 && i < c.records[0].nfields; i++) CHECKF(!strcmp(c.records[0].fields[i], f[i]), "field %d", i);
    csv_free(&c);
    free(t);
}

TEST(reader_lines_and_endings)
{
    const char *t = "h1,h2\r\n\r\n1,\"x\ny\"\n2,z";
    AtlCsv c;
    AtlErr e;
    REQUIRE(csv_parse("t.csv", t, strlen(t), &c, &e) == 0);
    REQUIRE(c.nrecords == 3);
    CHECK_EQ_INT(c.records[0].line, 1);
    CHECK_EQ_INT(c.records[1].line, 3);
    CHECK(!strcmp(c.records[1].fields[1], "x\ny"));
    CHECK_EQ_INT(c.records[2].line, 5);
    CHECK(!strcmp(c.records[2].fields[1], "z"));
    csv_free(&c);
}

TEST(malformed_text_names_the_line)
{
    AtlCsv c;
    AtlErr e;
    const char *t1 = "a,b\nc,\"open\n";
    CHECK(csv_parse("bad.csv", t1, strlen(t1), &c, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad.csv:2: quoted field never closes");
    const char *t2 = "a\n\"q\"x,b\n";
    CHECK(csv_parse("bad.csv", t2, strlen(t2), &c, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad.csv:2: text after a closing quote");
    const char t3[] = "a,b\nc\0d\n";
    CHECK(csv_parse("bad.csv", t3, sizeof t3 - 1, &c, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad.csv:2: NUL byte");
}

int main(void)
{
    RUN(writer_quotes_only_when_needed);
    RUN(reader_lines_and_endings);
    RUN(malformed_text_names_the_line);
    return test_summary("test_csv");
}
