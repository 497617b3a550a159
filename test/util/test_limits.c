/* test_limits.c - the input limits (util/limits.h): sizes parse with their
 * suffixes, the environment overrides a default, a malformed override is
 * reported, and docs/conventions.md lists every limit with its default. */
#include <stdlib.h>
#include "test/test.h"
#include "util/file.h"
#include "util/limits.h"

TEST(sizes_parse)
{
    uint64_t v = 0;
    CHECK(atl_parse_size("123", &v) == 0 && v == 123);
    CHECK(atl_parse_size("0x10", &v) == 0 && v == 16);
    CHECK(atl_parse_size("4K", &v) == 0 && v == 4096);
    CHECK(atl_parse_size("2MiB", &v) == 0 && v == 2u << 20);
    CHECK(atl_parse_size("3G", &v) == 0 && v == (uint64_t)3 << 30);
    CHECK(atl_parse_size("1T", &v) == 0 && v == (uint64_t)1 << 40);
    CHECK(atl_parse_size("-1", &v) == -1);
    CHECK(atl_parse_size("nan", &v) == -1);
    CHECK(atl_parse_size("12x", &v) == -1);
    CHECK(atl_parse_size("", &v) == -1);
    CHECK(atl_parse_size("99999999999999999999999", &v) == -2);
    CHECK(atl_parse_size("20000000T", &v) == -2);
}

TEST(environment_overrides)
{
    unsetenv("ATOLL_MAX_TENSOR_BYTES");
    CHECK(atl_limit(ATL_LIMIT_TENSOR_BYTES) == atl_limit_info(ATL_LIMIT_TENSOR_BYTES)->dflt);
    setenv("ATOLL_MAX_TENSOR_BYTES", "4G", 1);
    CHECK(atl_limit(ATL_LIMIT_TENSOR_BYTES) == (uint64_t)4 << 30);
    AtlErr e = {{0}};
    CHECK(atl_limits_check(&e) == 0);
    setenv("ATOLL_MAX_TENSOR_BYTES", "0", 1);
    CHECK(atl_limits_check(&e) == -1);
    CHECK_STR_CONTAINS(e.msg, "ATOLL_MAX_TENSOR_BYTES='0' is not a positive size");
    CHECK(atl_limit(ATL_LIMIT_TENSOR_BYTES) == atl_limit_info(ATL_LIMIT_TENSOR_BYTES)->dflt);
    unsetenv("ATOLL_MAX_TENSOR_BYTES");
}

/* Every limit is in the table of docs/conventions.md with its variable and
 * its default in bytes or units. */
TEST(documented)
{
    unsigned char *doc;
    size_t n;
    AtlErr e = {{0}};
    REQUIRE(atl_read_file("docs/conventions.md", &doc, &n, &e) == 0);
    for (int i = 0; i < ATL_NLIMITS; i++) {
        const AtlLimitInfo *l = atl_limit_info((AtlLimit)i);
        char row[160];
        snprintf(row, sizeof row, "| `%s` | %llu |", l->env, (unsigned long long)l->dflt);
        CHECKF(strstr((const char *)doc, row) != NULL, "docs/conventions.md has no row starting %s", row);
    }
    free(doc);
}

int main(void)
{
    RUN(sizes_parse);
    RUN(environment_overrides);
    RUN(documented);
    return test_summary("test_limits");
}
