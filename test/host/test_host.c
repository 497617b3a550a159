/* test_host.c - end to end through the host API (include/atoll.h), the
 * simulated device (sim/device.c) and the firmware: a model built from
 * assembler text is loaded, listed, run on configs/tiny.ini and its output
 * compared with a plain-C reference; then every error a host can meet
 * (wrong shapes, unknown net, fault during the run, undecodable record,
 * wrong chip, bad checksum, bad version, firmware heap too small) comes
 * back as its code and message, and the device stays usable.
 * `test_host --write DIR` writes the sample models for the CLI tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "isa/config.h"
#include "util/file.h"
#include "test/host/model_build.h"
#include "test/test.h"

#define CHIP_PATH "configs/tiny.ini"

static uint8_t *sample(size_t *len, uint64_t fp)
{
    AtlErr e;
    uint8_t *m = mb_sample_model(fp, 1, len, &e);
    if (!m) printf("  sample model: %s\n", e.msg);
    return m;
}

static uint64_t tiny_fp(void)
{
    AtlChip c;
    AtlErr e;
    if (cfg_load(CHIP_PATH, &c, &e)) { printf("  %s\n", e.msg); return 0; }
    return cfg_fingerprint(&c);
}

static void input(int8_t x[64])
{
    for (int i = 0; i < 64; i++) x[i] = (int8_t)(i - 32);
}

TEST(load_list_run_profile)
{
    AtlDevice *dev;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    size_t len;
    uint8_t *img = sample(&len, tiny_fp());
    REQUIRE(img);
    AtlModel *m;
    AtlStatus s = atl_load_memory(dev, img, len, &m);
    CHECKF(s == ATL_OK, "load: %s", atl_last_error(dev));
    if (s) { free(img); atl_close(dev); return; }
    const AtlNetInfo *nets;
    uint32_t nn;
    REQUIRE(atl_nets(m, &nets, &nn) == ATL_OK);
    REQUIRE(nn == 2);
    CHECK(strcmp(nets[0].name, "relu_bias") == 0 && strcmp(nets[1].name, "bad") == 0);
    REQUIRE(nets[0].n_variants == 1);
    const AtlVariantInfo *st = &nets[0].variants[0];
    CHECK_EQ_INT(st->batch, 1);
    CHECK_EQ_INT(st->cores, 1);
    REQUIRE(st->n_inputs == 1 && st->n_outputs == 1);
    CHECK(strcmp(st->inputs[0].name, "x") == 0 && strcmp(st->outputs[0].name, "y") == 0);
    CHECK_EQ_INT(st->inputs[0].ndim, 2);
    CHECK_EQ_INT(st->inputs[0].dims[1], 64);
    CHECK_EQ_INT(st->inputs[0].dtype, ATL_INT8);
    CHECK_NEAR(st->inputs[0].scale, 0.25, 0);
    CHECK_EQ_INT(st->inputs[0].bytes, 64);
    CHECK_EQ_INT(st->outputs[0].device_addr, st->inputs[0].device_addr + 64);
    REQUIRE(st->n_tensors == 3);
    CHECK(!strcmp(st->tensors[1].name, "b") && st->tensors[1].role == ATL_ROLE_WEIGHT);
    CHECK(st->tensors[0].role == ATL_ROLE_INPUT && st->tensors[2].role == ATL_ROLE_OUTPUT);
    CHECK(st->inputs[0].role == ATL_ROLE_INPUT && st->outputs[0].role == ATL_ROLE_OUTPUT);
    int8_t x[64], y[64], want[64];
    input(x);
    mb_reference(x, want);
    AtlBuffer in = { .name = "x", .data = x, .size = 64, .ndim = 2, .dims = { 1, 64 } };
    CHECK_EQ_INT(atl_output(m, "y", 0, y, 64), ATL_ERR_NOT_RUN);
    uint32_t variant = 99;
    s = atl_run(m, "relu_bias", &in, 1, &variant);
    CHECKF(s == ATL_OK, "run: %s", atl_last_error(dev));
    CHECK_EQ_INT(variant, 0);
    memset(y, 0x55, sizeof y);
    CHECK_EQ_INT(atl_output(m, "y", 0, y, 64), ATL_OK);
    CHECK(memcmp(y, want, 64) == 0);
    memset(y, 0x55, sizeof y);
    CHECK_EQ_INT(atl_output(m, NULL, 0, y, 64), ATL_OK);
    CHECK(memcmp(y, want, 64) == 0);
    CHECK_EQ_INT(atl_output(m, "y", 0, y, 63), ATL_ERR_SIZE);
    CHECK_EQ_INT(atl_output(m, "nope", 0, y, 64), ATL_ERR_UNKNOWN_TENSOR);
    int8_t wb[64];
    CHECK_EQ_INT(atl_read_tensor(m, "b", wb, 64), ATL_OK);       /* a weight, as placed by the firmware */
    CHECK(memcmp(wb, sample_bias, 64) == 0);
    CHECK_EQ_INT(atl_read_tensor(m, "y", wb, 64), ATL_OK);
    CHECK(memcmp(wb, want, 64) == 0);
    CHECK_EQ_INT(atl_read_tensor(m, "b", wb, 32), ATL_ERR_SIZE);
    CHECK_EQ_INT(atl_read_tensor(m, "zz", wb, 64), ATL_ERR_UNKNOWN_TENSOR);
    CHECK_EQ_INT(atl_output(m, NULL, 1, y, 64), ATL_ERR_UNKNOWN_TENSOR);
    AtlProfile p;
    REQUIRE(atl_profile(m, &p) == ATL_OK);
    CHECK(p.cycles > 0);
    CHECK(p.fw_cycles > 0);
    CHECK_EQ_INT(p.cores, 1);
    CHECK(p.busy[0] > 0 && p.busy[2] > 0);
    CHECK_EQ_INT(p.busy[1], 0);
    CHECK(p.utilisation[0] > 0 && p.utilisation[0] <= 1.0);
    CHECK(p.dram_bytes >= 192);
    CHECK_EQ_INT(p.n_layers, 2);
    if (p.n_layers == 2) {
        CHECK_EQ_INT(p.layers[0].layer, 1);
        CHECK_EQ_INT(p.layers[0].insns, 3);
        CHECK_EQ_INT(p.layers[1].insns, 2);
        CHECK(p.layers[1].last <= p.cycles && p.layers[0].first <= p.layers[1].first);
        /* the records' DRAM bytes and engine busy add up to the run's */
        CHECK_EQ_INT(p.layers[0].dram_bytes + p.layers[1].dram_bytes, p.dram_bytes);
        CHECK_EQ_INT(p.layers[0].busy_dma + p.layers[1].busy_dma, p.busy[0]);
        CHECK_EQ_INT(p.layers[0].busy_vec + p.layers[1].busy_vec, p.busy[2]);
        for (int i = 0; i < 2; i++) {
            const AtlLayerProfile *l = &p.layers[i];
            uint64_t span = l->last - l->first, busiest = l->busy_dma > l->busy_vec ? l->busy_dma : l->busy_vec;
            CHECK_EQ_INT(l->sync, span > busiest ? span - busiest : 0);
            CHECK(l->bound && (!strcmp(l->bound, "compute") || !strcmp(l->bound, "dma") || !strcmp(l->bound, "sync")));
        }
        /* compiled without layer rows */
        CHECK_EQ_INT(nets[0].variants[0].n_layers, 0);
    }
    char *js = NULL;
    CHECK_EQ_INT(atl_stats_json(dev, &js), ATL_OK);
    CHECK(js && strstr(js, "cycles"));
    free(js);
    /* a second run with other data gives the other answer (inputs really flow) */
    for (int i = 0; i < 64; i++) x[i] = (int8_t)(3 * i - 90);
    mb_reference(x, want);
    CHECK_EQ_INT(atl_run(m, NULL, &(AtlBuffer){ .data = x, .size = 64 }, 1, NULL), ATL_OK);
    CHECK_EQ_INT(atl_output(m, "y", 0, y, 64), ATL_OK);
    CHECK(memcmp(y, want, 64) == 0);
    CHECK_EQ_INT(atl_unload(m), ATL_OK);
    free(img);
    atl_close(dev);
}

TEST(run_errors_keep_the_device_usable)
{
    AtlDevice *dev;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    size_t len;
    uint8_t *img = sample(&len, tiny_fp());
    REQUIRE(img);
    AtlModel *m;
    REQUIRE(atl_load_memory(dev, img, len, &m) == ATL_OK);
    int8_t x[64], y[64], want[64];
    input(x);
    mb_reference(x, want);
    AtlBuffer wrong = { .name = "x", .data = x, .size = 64, .ndim = 2, .dims = { 2, 32 } };
    CHECK_EQ_INT(atl_run(m, "relu_bias", &wrong, 1, NULL), ATL_ERR_NO_VARIANT);
    CHECK_STR_CONTAINS(atl_last_error(dev), "variant 0 (batch 1): x[1,64]");
    AtlBuffer shortbuf = { .name = "x", .data = x, .size = 60, .ndim = 2, .dims = { 1, 64 } };
    CHECK_EQ_INT(atl_run(m, "relu_bias", &shortbuf, 1, NULL), ATL_ERR_SIZE);
    AtlBuffer in = { .name = "x", .data = x, .size = 64, .ndim = 2, .dims = { 1, 64 } };
    CHECK_EQ_INT(atl_run(m, "resnet", &in, 1, NULL), ATL_ERR_UNKNOWN_NET);
    CHECK_STR_CONTAINS(atl_last_error(dev), "no net named 'resnet'");
    CHECK_EQ_INT(atl_run(m, "bad", &in, 1, NULL), ATL_ERR_FAULT);
    CHECK_STR_CONTAINS(atl_last_error(dev), "on core 0 engine vector instruction 0");
    CHECK_STR_CONTAINS(atl_last_error(dev), "not aligned");
    AtlProfile p;
    CHECK_EQ_INT(atl_profile(m, &p), ATL_ERR_NOT_RUN);
    CHECK_EQ_INT(atl_run(m, "relu_bias", &in, 1, NULL), ATL_OK);
    CHECK_EQ_INT(atl_output(m, "y", 0, y, 64), ATL_OK);
    CHECK(memcmp(y, want, 64) == 0);
    CHECK_EQ_INT(atl_unload(m), ATL_OK);
    free(img);
    atl_close(dev);
}

/* Offset of the first byte of the cmds section (type 7) in an image. */
static uint64_t cmds_offset(const uint8_t *img)
{
    uint32_t count = img[28] | img[29] << 8;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = img + 64 + 40 * i;
        if (e[0] == ABM_SEC_CMDS) {
            uint64_t off = 0;
            for (int b = 0; b < 8; b++) off |= (uint64_t)e[8 + b] << (8 * b);
            return off;
        }
    }
    return 0;
}

TEST(load_errors)
{
    AtlDevice *dev;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    size_t len;
    uint64_t fp = tiny_fp();
    uint8_t *img = sample(&len, fp), *other = sample(&len, fp ^ 1);
    REQUIRE(img && other);
    AtlModel *m = (AtlModel *)1;
    CHECK_EQ_INT(atl_load_memory(dev, other, len, &m), ATL_ERR_CHIP);
    CHECK(m == NULL);
    /* refused before device memory is taken, naming the device's chip */
    CHECK_STR_CONTAINS(atl_last_error(dev), "compiled for another chip (fingerprint");
    CHECK_STR_CONTAINS(atl_last_error(dev), "but the device is chip 'tiny'");
    memcpy(other, img, len);
    other[len - 1] ^= 0x40;
    CHECK_EQ_INT(atl_load_memory(dev, other, len, &m), ATL_ERR_CHECKSUM);
    CHECK_STR_CONTAINS(atl_last_error(dev), "CRC-32 mismatch");
    memcpy(other, img, len);
    other[8] = 9;
    CHECK_EQ_INT(atl_load_memory(dev, other, len, &m), ATL_ERR_VERSION);
    CHECK_STR_CONTAINS(atl_last_error(dev), "version 9.0");
    CHECK_EQ_INT(atl_load_file(dev, "/nonexistent/model.abm", &m), ATL_ERR_IO);
    CHECK_EQ_INT(atl_load_memory(dev, img, 0, &m), ATL_ERR_INVALID);
    /* after all those failures the device still loads and runs */
    REQUIRE(atl_load_memory(dev, img, len, &m) == ATL_OK);
    int8_t x[64];
    input(x);
    CHECK_EQ_INT(atl_run(m, NULL, &(AtlBuffer){ .data = x, .size = 64 }, 1, NULL), ATL_OK);
    atl_close(dev);   /* unloads m */
    /* firmware heap smaller than the decoder needs */
    REQUIRE(atl_open(&dev, CHIP_PATH, &(AtlOpenOptions){ .fw_heap_bytes = 32 * 1024 }) == ATL_OK);
    CHECK_EQ_INT(atl_load_memory(dev, img, len, &m), ATL_ERR_NO_MEMORY);
    CHECK_STR_CONTAINS(atl_last_error(dev), "firmware heap");
    atl_close(dev);
    free(img);
    free(other);
}

/* An instruction record with a valid opcode but non-zero padding passes the
 * firmware (which relocates only DMA operands) and the container CRCs
 * (recomputed here): the device's decoder must catch it as a DECODE fault. */
TEST(undecodable_record_is_a_fault)
{
    AtlErr e;
    uint64_t fp = tiny_fp();
    size_t len;
    AbmWriter *w = abm_writer_new(fp);
    REQUIRE(w);
    abm_writer_set_level(w, 0);
    uint32_t net, st;
    AbmTensorDesc x = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO, .ndim = 1, .dims = { 64 } };
    REQUIRE(abm_add_net(w, "n", &net, &e) == 0 && abm_add_variant(w, net, 1, 1, &st, &e) == 0 &&
            abm_add_tensor(w, st, &x, NULL, &e) == 0 && abm_set_mem_plan(w, st, 0, 64, &e) == 0);
    REQUIRE(mb_streams(w, st, "pad.s", ".engine vec\n v.relu dtype=i8 dst=0 src=0 shape=64 dstride=1 sstride=1\n end\n", &e) == 0);
    uint8_t *img;
    REQUIRE(abm_serialize(w, &img, &len, &e) == 0);
    abm_writer_free(w);
    uint64_t cmds = cmds_offset(img);
    REQUIRE(cmds);
    img[cmds + 63] = 0x80;           /* padding bit of the first record */
    /* recompute the cmds section CRC, then the table CRC */
    uint32_t count = img[28] | img[29] << 8;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *en = img + 64 + 40 * i;
        if (en[0] != ABM_SEC_CMDS) continue;
        uint64_t size = 0;
        for (int b = 0; b < 8; b++) size |= (uint64_t)en[16 + b] << (8 * b);
        uint32_t c = abm_crc32(img + cmds, size);
        for (int b = 0; b < 4; b++) en[32 + b] = (uint8_t)(c >> (8 * b));
    }
    uint32_t tc = abm_crc32(img + 64, 40ull * count);
    for (int b = 0; b < 4; b++) img[48 + b] = (uint8_t)(tc >> (8 * b));
    uint32_t hc = abm_crc32(img, 60);
    for (int b = 0; b < 4; b++) img[60 + b] = (uint8_t)(hc >> (8 * b));
    AtlDevice *dev;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    AtlModel *m;
    AtlStatus s = atl_load_memory(dev, img, len, &m);
    CHECKF(s == ATL_OK, "load: %s", atl_last_error(dev));
    if (!s) {
        uint8_t xb[64] = { 0 };
        CHECK_EQ_INT(atl_run(m, "n", &(AtlBuffer){ .data = xb, .size = 64 }, 1, NULL), ATL_ERR_FAULT);
        CHECK_STR_CONTAINS(atl_last_error(dev), "fault 2 (DECODE) on core 0 engine vector instruction 0");
        CHECK_STR_CONTAINS(atl_last_error(dev), "does not decode");
    }
    atl_close(dev);
    free(img);
}

/* Inputs and outputs listed in file order whatever their interleaving, and
 * matched by name or position when running. */
TEST(listing_order_and_matching)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(tiny_fp());
    REQUIRE(w);
    uint32_t net, st;
    const char *names[4] = { "out1", "in1", "out2", "in2" };
    REQUIRE(abm_add_net(w, "multi", &net, &e) == 0 && abm_add_variant(w, net, 1, 1, &st, &e) == 0);
    for (int i = 0; i < 4; i++) {
        AbmTensorDesc t = { .name = names[i], .dtype = ABM_DTYPE_INT32, .role = i % 2 ? ABM_ROLE_INPUT : ABM_ROLE_OUTPUT,
                            .region = ABM_REGION_IO, .ndim = 1, .dims = { (uint32_t)(4 + i) }, .offset = 64 * (uint64_t)i };
        REQUIRE(abm_add_tensor(w, st, &t, NULL, &e) == 0);
    }
    REQUIRE(abm_set_mem_plan(w, st, 0, 256, &e) == 0);
    REQUIRE(mb_streams(w, st, "end.s", ".engine vec\n end\n", &e) == 0);
    uint8_t *img;
    size_t len;
    REQUIRE(abm_serialize(w, &img, &len, &e) == 0);
    abm_writer_free(w);
    AtlDevice *dev;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    AtlModel *m;
    REQUIRE(atl_load_memory(dev, img, len, &m) == ATL_OK);
    const AtlNetInfo *nets;
    uint32_t nn;
    REQUIRE(atl_nets(m, &nets, &nn) == ATL_OK && nn == 1);
    const AtlVariantInfo *s = &nets[0].variants[0];
    REQUIRE(s->n_inputs == 2 && s->n_outputs == 2);
    CHECK(!strcmp(s->inputs[0].name, "in1") && !strcmp(s->inputs[1].name, "in2"));
    CHECK(!strcmp(s->outputs[0].name, "out1") && !strcmp(s->outputs[1].name, "out2"));
    CHECK_EQ_INT(s->outputs[1].dims[0], 6);
    CHECK_EQ_INT(s->outputs[1].bytes, 24);
    int32_t a[5] = { 1, 2, 3, 4, 5 }, b[7] = { 0 }, o[6];
    /* by name, in the other order */
    AtlBuffer in[2] = { { .name = "in2", .data = b, .size = sizeof b, .ndim = 1, .dims = { 7 } },
                        { .name = "in1", .data = a, .size = sizeof a, .ndim = 1, .dims = { 5 } } };
    CHECK_EQ_INT(atl_run(m, "multi", in, 2, NULL), ATL_OK);
    CHECK_EQ_INT(atl_output(m, NULL, 1, o, sizeof o), ATL_OK);
    /* by position: sizes must match positions, so swapped unnamed buffers find no variant */
    AtlBuffer swapped[2] = { { .data = b, .size = sizeof b }, { .data = a, .size = sizeof a } };
    CHECK_EQ_INT(atl_run(m, NULL, swapped, 2, NULL), ATL_ERR_NO_VARIANT);
    AtlBuffer ordered[2] = { { .data = a, .size = sizeof a }, { .data = b, .size = sizeof b } };
    CHECK_EQ_INT(atl_run(m, NULL, ordered, 2, NULL), ATL_OK);
    CHECK_EQ_INT(atl_run(m, NULL, ordered, 1, NULL), ATL_ERR_NO_VARIANT);
    atl_close(dev);
    free(img);
}

TEST(open_errors)
{
    AtlDevice *dev;
    CHECK_EQ_INT(atl_open(&dev, "/nonexistent.ini", NULL), ATL_ERR_CONFIG);
    CHECK(dev != NULL);
    CHECK_STR_CONTAINS(atl_last_error(dev), "nonexistent.ini");
    atl_close(dev);
    CHECK_EQ_INT(atl_open(NULL, CHIP_PATH, NULL), ATL_ERR_INVALID);
    CHECK(strcmp(atl_status_name(ATL_ERR_CHECKSUM), "CHECKSUM") == 0);
    CHECK(strcmp(atl_status_name(ATL_ERR_NO_VARIANT), "NO_VARIANT") == 0);
    CHECK(strcmp(atl_status_name((AtlStatus)555), "?") == 0);
}

/* --write DIR: the models the CLI tests use (test/cli/run.sh, host_example.sh). */
static int write_models(const char *dir)
{
    AtlChip chip;
    AtlErr e;
    if (cfg_load(CHIP_PATH, &chip, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    uint64_t fp = cfg_fingerprint(&chip);
    static const struct { const char *name; int bad; uint64_t flip; } files[] = {
        { "relu.abm", 0, 0 }, { "faulty.abm", 1, 0 }, { "otherchip.abm", 0, 0xFF },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        size_t len;
        uint8_t *img = mb_sample_model(fp ^ files[i].flip, files[i].bad, &len, &e);
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        int rc = img ? atl_write_file_atomic(path, img, len, &e) : -1;
        free(img);
        if (rc) { fprintf(stderr, "test_host: %s\n", e.msg); return 1; }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_models(argv[2]);
    RUN(load_list_run_profile);
    RUN(run_errors_keep_the_device_usable);
    RUN(load_errors);
    RUN(undecodable_record_is_a_fault);
    RUN(listing_order_and_matching);
    RUN(open_errors);
    return test_summary("test_host");
}
