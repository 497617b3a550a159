/* test_chip_limits.c - the table the chip conformance runner tells a
 * refusal for a documented chip limit from any other failure with
 * (tools/chip_limits.c). The messages come from the compiler itself, on
 * graphs built here that break each limit: each must match its limit and
 * no other; the graph checks the runner makes before compiling (rank
 * above 6, empty tensors) refuse in the same words; and failures that are
 * not a chip limit (an unsupported op, an internal error, a limit's words
 * inside another message) match none, so chip_limit_classify fails them
 * where it makes a limit's refusal an unsupported test. */
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "tools/chip_limits.h"
#include "tools/chip_exec.h"
#include <stdlib.h>

/* The compile error of g on configs/tiny.ini in f32 (empty when it
 * compiles), as the chip conformance runner compiles. */
static void compile_message(IrGraph *g, char *msg, size_t cap)
{
    AtlErr e = {{0}};
    AtlChip chip;
    uint8_t *abm = NULL;
    size_t len = 0;
    BkOptions o;
    bk_options_default(&o);
    int failed = cfg_load("configs/tiny.ini", &chip, &e) || ir_toposort(g, &e) || ir_infer_shapes(g, &e) ||
                 pass_run_all(g, &e) || chip_compile_graph(g, &chip, &o, 0, &abm, &len, NULL, &e);
    free(abm);
    if (!failed) e.msg[0] = 0;
    snprintf(msg, cap, "%s", e.msg);
}

static void expect_limit(const char *msg, const char *name)
{
    const ChipLimit *l = chip_limit_match(msg);
    CHECKF(l != NULL, "no limit matches '%s'", msg);
    if (l) CHECKF(!strcmp(l->name, name), "'%s' matched limit '%s', not '%s'", msg, l->name, name);
}

TEST(uint64_input_is_the_64_bit_limit)
{
    IrGraph g;
    AtlErr e;
    int64_t d[2] = {2, 3};
    ir_init(&g);
    ir_add_input(&g, "x", IR_U64, 2, d, &e);
    ir_add_op(&g, "Identity", "id", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    char msg[1024];
    compile_message(&g, msg, sizeof msg);
    CHECK(msg[0] != 0);
    expect_limit(msg, "64-bit integers");
    ir_free(&g);
}

TEST(accumulating_scatter_is_its_limit)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {4, 4}, id[2] = {1, 4}, idx[4] = {0, 1, 2, 3};
    new_graph(&g, "x", 2, xd);
    ir_add_const(&g, "i", IR_I64, 2, id, idx, &e);
    cst(&g, "u", 2, id, 1.0f);
    int n = ir_add_op(&g, "ScatterElements", "sc", "x,i,u", "y", &e);
    ir_set_attr_str(&g, n, "reduction", "add", &e);
    ir_add_output(&g, "y", &e);
    char msg[1024];
    compile_message(&g, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "sc");
    expect_limit(msg, "accumulating scatter");
    ir_free(&g);
}

/* chip_limit_check_graph on x (f32, dims d) -> Relu -> y: 0, or -1 with
 * its message in msg. */
static int check_relu_graph(int ndim, const int64_t *d, char *msg, size_t cap)
{
    IrGraph g;
    AtlErr e = {{0}};
    ir_init(&g);
    ir_add_input(&g, "x", IR_F32, ndim, d, &e);
    ir_add_op(&g, "Relu", "r", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    int rc = ir_infer_shapes(&g, &e) ? -2 : chip_limit_check_graph(&g, &e);
    snprintf(msg, cap, "%s", e.msg);
    ir_free(&g);
    return rc;
}

TEST(graph_checks_refuse_in_the_limits_words)
{
    char msg[ATL_ERRLEN];
    int64_t d7[7] = {1, 1, 1, 1, 1, 2, 2}, d0[2] = {0, 3}, d2[2] = {2, 3};
    REQUIRE(check_relu_graph(7, d7, msg, sizeof msg) == -1);
    expect_limit(msg, "rank above 6");
    REQUIRE(check_relu_graph(2, d0, msg, sizeof msg) == -1);
    expect_limit(msg, "empty tensor");
    CHECK_EQ_INT(check_relu_graph(2, d2, msg, sizeof msg), 0);
}

TEST(other_failures_match_no_limit)
{
    static const char *const msgs[] = {
        "node 'n': op FancyOp is not supported by the backend",
        "node 'c': internal error: tile plan overlaps its slot",
        "out of memory",
        "",
        /* a limit's words inside a message of another shape */
        "node 'x': has rank 7",
        "the DMA engine cannot accumulate",
    };
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++)
        CHECKF(chip_limit_match(msgs[i]) == NULL, "'%s' matched limit '%s'", msgs[i], chip_limit_match(msgs[i])->name);
}

/* The runner's verdict: a limit's refusal makes the test unsupported and
 * says which limit; anything else fails it, saying at which stage. */
TEST(classify_refuses_limits_and_fails_the_rest)
{
    AtlErr e;
    atl_fail(&e, "graph input 'x' has rank 7 (at most 6)");
    CHECK_EQ_INT(chip_limit_classify("compiling", &e), CONF_RUN_REFUSED);
    CHECK_STR_CONTAINS(e.msg, "chip limit (rank above 6): graph input 'x' has rank 7");
    atl_fail(&e, "node 'c': internal error: tile plan overlaps its slot");
    CHECK_EQ_INT(chip_limit_classify("compiling", &e), -1);
    CHECK_STR_CONTAINS(e.msg, "compiling failed, and not for a documented chip limit: node 'c': internal error");
    atl_fail(&e, "node 'n': op FancyOp is not supported by the backend");
    CHECK_EQ_INT(chip_limit_classify("converting the inputs", &e), -1);
    CHECK_STR_CONTAINS(e.msg, "converting the inputs failed, and not for a documented chip limit");
}

TEST(every_limit_is_documented_with_a_pattern)
{
    REQUIRE(chip_nlimits > 0);
    for (int i = 0; i < chip_nlimits; i++) {
        CHECK(chip_limits[i].name && chip_limits[i].name[0]);
        CHECK(chip_limits[i].what && strlen(chip_limits[i].what) > 20);
        CHECK(chip_limits[i].pattern[0] != NULL);
    }
}

int main(void)
{
    RUN(uint64_input_is_the_64_bit_limit);
    RUN(accumulating_scatter_is_its_limit);
    RUN(graph_checks_refuse_in_the_limits_words);
    RUN(other_failures_match_no_limit);
    RUN(classify_refuses_limits_and_fails_the_rest);
    RUN(every_limit_is_documented_with_a_pattern);
    return test_summary("test_chip_limits");
}
