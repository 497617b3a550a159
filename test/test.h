/* test.h - the whole unit-test harness, header only.
 *
 * A test file defines functions with TEST(name), lists them in main() with
 * RUN(name), and ends with `return test_summary("file");`. CHECK records a
 * failure and continues; REQUIRE records a failure and leaves the test.
 * The last line a test binary prints is "NAME: N passed, N failed", which
 * test/run.sh sums across binaries. A test counts once, failed if any check
 * in it failed.
 *
 * A table of cases counts each case as a test: RUN_CASE(fn, arg, name)
 * runs fn(arg) as a test of its own (each model run, each chip), and
 * test_record(name, ok, why) counts a case whose outcome a suite runner
 * computed (each ONNX conformance test of one conf_run call).
 */
#ifndef ATOLL_TEST_H
#define ATOLL_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

static int test_passed, test_failed, test_current_failed;
static const char *test_current_name;

#define TEST(name) static void name(void)
#define RUN(name) test_run_one(name, #name)

#define CHECK(cond) \
    do { if (!(cond)) test_fail_at(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)
#define CHECKF(cond, ...) \
    do { if (!(cond)) test_fail_at(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define REQUIRE(cond) \
    do { if (!(cond)) { test_fail_at(__FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } } while (0)
#define CHECK_EQ_INT(a, b) \
    do { long long a_ = (long long)(a), b_ = (long long)(b); \
         if (a_ != b_) test_fail_at(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); } while (0)
#define CHECK_STR_CONTAINS(hay, needle) \
    do { const char *h_ = (hay), *n_ = (needle); \
         if (!h_ || !strstr(h_, n_)) test_fail_at(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); } while (0)
#define CHECK_NEAR(a, b, tol) \
    do { double a_ = (a), b_ = (b); \
         if (!(fabs(a_ - b_) <= (tol))) test_fail_at(__FILE__, __LINE__, "%s ~ %s: %.9g vs %.9g", #a, #b, a_, b_); } while (0)

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void test_fail_at(const char *file, int line, const char *fmt, ...);

#include <stdarg.h>
static void test_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("  FAIL %s (%s:%d): ", test_current_name, file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    test_current_failed = 1;
}

/* With TEST_TIMES=1 in the environment each test's line ends with the CPU
 * seconds it took (of the whole process, from clock()): which cases of a
 * binary CI's time goes to (test/run.sh times whole binaries). */
static inline void test_count(const char *name)
{
    static clock_t last;
    const char *tt = getenv("TEST_TIMES");
    char took[32] = "";
    if (tt && tt[0] == '1') {
        clock_t now = clock();
        snprintf(took, sizeof took, " (%.2f CPU-s)", (double)(now - last) / CLOCKS_PER_SEC);
        last = now;
    }
    if (test_current_failed) { test_failed++; printf("not ok %s%s\n", name, took); }
    else { test_passed++; printf("ok %s%s\n", name, took); }
    fflush(stdout);
}

static inline void test_run_one(void (*fn)(void), const char *name)
{
    test_current_name = name;
    test_current_failed = 0;
    fn();
    test_count(name);
}

#define RUN_CASE(fn, arg, name) test_run_case(fn, arg, name)
static inline void test_run_case(void (*fn)(const void *), const void *arg, const char *name)
{
    test_current_name = name;
    test_current_failed = 0;
    fn(arg);
    test_count(name);
}

/* Counts one case run elsewhere as a test; why: the failure's reason.
 * The enclosing test's own verdict is kept. */
static inline void test_record(const char *name, int ok, const char *why)
{
    const char *outer = test_current_name;
    int outer_failed = test_current_failed;
    test_current_name = name;
    test_current_failed = !ok;
    if (!ok) printf("  FAIL %s: %s\n", name, why ? why : "failed");
    test_count(name);
    test_current_name = outer;
    test_current_failed = outer_failed;
}

static int test_summary(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, test_passed, test_failed);
    return test_failed ? 1 : 0;
}
/* TEST_SANITIZED: 1 in a build under AddressSanitizer (gcc or clang), where
 * tests leave out their slowest cases (a ResNet-50 compile takes minutes
 * there; the plain pass runs them), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_SANITIZED 1
#endif
#endif
#ifndef TEST_SANITIZED
#define TEST_SANITIZED 0
#endif
#endif
