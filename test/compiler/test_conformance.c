/* test_conformance.c - the ONNX backend test suite as a unit test: every
 * test whose ops are supported must pass, and each one that runs counts as
 * a test (test_record). Fails (does not skip) when the test data is not
 * installed, so CI cannot pass without running it. */
#include "test/test.h"
#include "tools/conform.h"
#include <stdlib.h>

static const char *datadir(void)
{
    const char *d = getenv("ATOLL_ONNX_TESTDATA");
    return d && *d ? d : "/usr/share/libonnx-testdata/data";
}

TEST(suite_present)
{
    ConfResult r;
    AtlErr e = {{0}};
    int rc = conf_run(datadir(), "test_relu", &r, &e);
    CHECKF(rc == 0, "ONNX test data missing: %s (install libonnx-testdata or set ATOLL_ONNX_TESTDATA)", e.msg);
    if (!rc) CHECK(r.passed > 0);
    conf_free(&r);
}

TEST(all_supported_tests_pass)
{
    ConfResult r;
    AtlErr e = {{0}};
    REQUIRE(conf_run(datadir(), NULL, &r, &e) == 0);
    /* each test that ran counts as a test of this suite (the unsupported
     * ones did not run) */
    for (int i = 0; i < r.n; i++) {
        const ConfCase *c = &r.cases[i];
        if (c->status == CONF_UNSUPPORTED) continue;
        char name[200];
        snprintf(name, sizeof name, "onnx/%s/%s", c->suite, c->name);
        test_record(name, c->status == CONF_PASS, c->reason);
        if (c->status == CONF_FAIL) CHECKF(0, "%s: %s", name, c->reason);
    }
    printf("  conformance: %d passed, %d failed, %d unsupported\n", r.passed, r.failed, r.unsupported);
    CHECKF(r.passed >= 961, "%d passed, at least 961 expected", r.passed); /* today's count: a test that stops passing fails here */
    conf_free(&r);
}

TEST(missing_dir_is_an_error)
{
    ConfResult r;
    AtlErr e = {{0}};
    CHECK(conf_run("/nonexistent/onnx-data", NULL, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "does not exist");
}

int main(void)
{
    RUN(suite_present);
    RUN(all_supported_tests_pass);
    RUN(missing_dir_is_an_error);
    return test_summary("test_conformance");
}
