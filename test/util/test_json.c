/* test_json.c - the JSON reader: every value kind, escapes (surrogate
 * pairs), key lookup, and errors with line and column for each kind of
 * malformed text, including nesting past JSON_MAX_DEPTH. */
#include <stdlib.h>
#include "test/test.h"
#include "util/json.h"

TEST(values_and_lookup)
{
    const char *t = "{\n \"a\": [1, -2.5e3, true, false, null],\n \"s\": \"x\\\"\\u00e9\\ud83d\\ude00\\n\", \"o\": {}, \"a\": 7}";
    JsonValue *v;
    AtlErr e;
    REQUIRE(json_parse("t.json", t, strlen(t), &v, &e) == 0);
    const JsonValue *a = json_get(v, "a");
    REQUIRE(a && a->kind == JSON_ARRAY && a->count == 5);
    CHECK(json_number(&a->items[0], 0) == 1);
    CHECK(json_number(&a->items[1], 0) == -2500);
    CHECK(a->items[2].kind == JSON_BOOL && a->items[2].number == 1);
    CHECK(a->items[3].kind == JSON_BOOL && a->items[3].number == 0);
    CHECK(a->items[4].kind == JSON_NULL);
    CHECK(!strcmp(json_string(json_get(v, "s"), ""), "x\"\xc3\xa9\xf0\x9f\x98\x80\n"));
    CHECK(json_get(v, "o")->kind == JSON_OBJECT && json_get(v, "o")->count == 0);
    CHECK(json_get(v, "nope") == NULL);
    CHECK(json_number(json_get(v, "s"), 42) == 42);
    CHECK(!strcmp(json_string(NULL, "d"), "d"));
    json_free(v);
}

static void expect_error(const char *text, const char *msg)
{
    JsonValue *v = NULL;
    AtlErr e = {{0}};
    CHECKF(json_parse("bad.json", text, strlen(text), &v, &e) == -1, "accepted %s", text);
    CHECK(v == NULL);
    CHECK_STR_CONTAINS(e.msg, msg);
}

TEST(errors_name_line_and_column)
{
    expect_error("{\"a\": 1,\n  \"b\" 2}", "bad.json:2:7: expected ':'");
    expect_error("[1, 2", "bad.json:1:6: expected ',' or ']'");
    expect_error("\"abc", "string never closes");
    expect_error("[01]", "leading zero");
    expect_error("[1e999]", "malformed number");
    expect_error("{} x", "text after the JSON value");
    expect_error("\"\\ud800x\"", "lone surrogate");
    expect_error("\"\\q\"", "unknown escape");
    expect_error("nul", "unexpected text");
    expect_error("", "unexpected end of text");
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    expect_error(deep, "nested too deeply");
}

int main(void)
{
    RUN(values_and_lookup);
    RUN(errors_name_line_and_column);
    return test_summary("test_json");
}
