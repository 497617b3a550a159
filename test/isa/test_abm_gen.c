/* test_abm_gen.c - writes the sample .abm files used by test/cli/abm*.sh and
 * the fuzz seeds, and (run without arguments) tests that each of them is
 * what the CLI tests expect: valid, or broken in exactly one way.
 *
 *   test_abm_gen --write DIR    writes DIR/{a,b,raw,otherchip,badcrc,truncated,badver,badref,layers}.abm
 *                               (raw.abm: variant 0 with compression off;
 *                               badref.abm: raw.abm with a bad blob index and
 *                               correct checksums)
 *   test_abm_gen                self-test (part of make test)
 */
#include <stdlib.h>
#include <unistd.h>
#include "test/test.h"
#include "test/isa/abm_sample.h"
#include "util/file.h"

static int write_sample(const char *dir, const char *name, uint64_t chip, int variant, int level, int damage, AtlErr *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    AbmWriter *w = sample_model(chip, variant, level, e);
    if (!w) return -1;
    if (damage == 5) {                          /* not damage: the optional layers section */
        AbmLayer a = {0, 3, "/conv1/Conv", "Conv+Relu", "N1 C2", 8, 2, ABM_LAYER_MATRIX, 1000, 500, 400, 300};
        AbmLayer b = {0, 0, "tiny_relu", "Relu", "", 1, 1, 0, 0, 20, 10, 15};
        if (abm_add_layer(w, 2, &a, e) || abm_add_layer(w, 1, &b, e)) { abm_writer_free(w); return -1; }
    }
    uint8_t *buf;
    size_t n;
    int rc = abm_serialize(w, &buf, &n, e);
    abm_writer_free(w);
    if (rc) return -1;
    AbmView v;
    if (abm_open(&v, buf, n, 0, 0, e)) { free(buf); return -1; }
    if (damage == 1) {                          /* bad CRC in weight_data, structure intact */
        uint8_t *sc = malloc(v.scratch_needed);
        if (!sc || abm_decode(&v, sc, v.scratch_needed, e)) { free(sc); free(buf); return -1; }
        AbmBlob b = abm_blob(&v, 2);            /* the incompressible blob, stored raw */
        free(sc);
        buf[v.sec[v.by_type[ABM_SEC_WEIGHT_DATA]].offset + b.data_offset + 3] ^= 0x10;
    }
    if (damage == 2) n = n * 2 / 3;                                             /* truncated */
    if (damage == 3) {                                                          /* version 2.0, valid header CRC */
        buf[8] = 2;
        uint32_t c = abm_crc32(buf, 60);
        for (int i = 0; i < 4; i++) buf[60 + i] = (uint8_t)(c >> (8 * i));
    }
    if (damage == 4) {                          /* valid CRCs, a weight tensor naming blob 77 */
        uint8_t *t = buf + v.sec[v.by_type[ABM_SEC_TENSORS]].offset + ABM_TENSOR_BYTES;
        sample_wr32(t + 12, 77);
        sample_refix(buf, n);
    }
    rc = atl_write_file_atomic(path, buf, n, e);
    free(buf);
    return rc;
}

static int write_all(const char *dir, AtlErr *e)
{
    return write_sample(dir, "a.abm", SAMPLE_CHIP, 0, 6, 0, e) || write_sample(dir, "b.abm", SAMPLE_CHIP, 1, 6, 0, e) ||
           write_sample(dir, "raw.abm", SAMPLE_CHIP, 0, 0, 0, e) ||
           write_sample(dir, "otherchip.abm", SAMPLE_CHIP ^ 1, 1, 6, 0, e) ||
           write_sample(dir, "badcrc.abm", SAMPLE_CHIP, 0, 6, 1, e) ||
           write_sample(dir, "truncated.abm", SAMPLE_CHIP, 0, 6, 2, e) ||
           write_sample(dir, "badver.abm", SAMPLE_CHIP, 0, 6, 3, e) ||
           write_sample(dir, "badref.abm", SAMPLE_CHIP, 0, 0, 4, e) ||
           write_sample(dir, "layers.abm", SAMPLE_CHIP, 0, 0, 5, e) ? -1 : 0;
}

static char dir[] = "/tmp/atoll_abm_genXXXXXX";

static int load(const char *name, uint64_t chip, unsigned flags, AbmModel *m, AtlErr *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return abm_load_file(m, path, chip, flags, e);
}

TEST(samples_are_what_the_cli_tests_expect)
{
    AtlErr e;
    REQUIRE(mkdtemp(dir));
    REQUIRE(write_all(dir, &e) == 0);
    AbmModel m;
    CHECK(load("a.abm", SAMPLE_CHIP, 0, &m, &e) == 0);
    CHECK_EQ_INT(m.view.n_nets, 2);
    abm_model_free(&m);
    CHECK(load("b.abm", SAMPLE_CHIP, 0, &m, &e) == 0);
    abm_model_free(&m);
    CHECK(load("raw.abm", SAMPLE_CHIP, 0, &m, &e) == 0);
    for (uint32_t i = 0; i < m.view.section_count; i++) CHECK_EQ_INT(m.view.sec[i].compression, ABM_COMP_NONE);
    abm_model_free(&m);
    CHECK(load("otherchip.abm", SAMPLE_CHIP, 0, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "wrong chip");
    CHECK(load("badcrc.abm", 0, 0, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "CRC mismatch in section 8 (weight_data)");
    CHECK(load("badcrc.abm", 0, ABM_OPEN_IGNORE_CRC | ABM_LOAD_SKIP_WEIGHTS, &m, &e) == 0);
    abm_model_free(&m);
    CHECK(load("badcrc.abm", 0, ABM_OPEN_IGNORE_CRC, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "CRC mismatch in weight blob 2");
    CHECK(load("truncated.abm", 0, 0, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "truncated");
    CHECK(load("badver.abm", 0, 0, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "unsupported format version 2.0");
    CHECK(load("badref.abm", 0, 0, &m, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "section 'tensors' record 1 field 'blob'");
    CHECK(load("layers.abm", SAMPLE_CHIP, 0, &m, &e) == 0);
    CHECK_EQ_INT(m.view.n_layers, 2);
    CHECK_EQ_INT(m.view.version_minor, 1);
    abm_model_free(&m);
    const char *names[] = { "a", "b", "raw", "otherchip", "badcrc", "truncated", "badver", "badref", "layers" };
    for (int i = 0; i < 9; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s.abm", dir, names[i]);
        remove(p);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        AtlErr e;
        if (write_all(argv[2], &e)) { fprintf(stderr, "test_abm_gen: %s\n", e.msg); return 1; }
        return 0;
    }
    RUN(samples_are_what_the_cli_tests_expect);
    return test_summary("test_abm_gen");
}
