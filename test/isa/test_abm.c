/* test_abm.c - .abm writer and reader: round trip of a multi-net,
 * multi-variant model, weight dedup, compression only when it helps, writer
 * argument checks, atomic file output, and merging (combine). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test/test.h"
#include "test/isa/abm_sample.h"

static uint8_t *serialize(AbmWriter *w, size_t *n)
{
    AtlErr e;
    uint8_t *buf = NULL;
    if (abm_serialize(w, &buf, n, &e)) { printf("  serialize: %s\n", e.msg); return NULL; }
    return buf;
}

TEST(round_trip_multi_net_multi_variant)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmModel m;
    int rc = abm_load_buffer(&m, buf, n, SAMPLE_CHIP, 0, &e);
    CHECKF(rc == 0, "load: %s", e.msg);
    if (rc) { free(buf); abm_writer_free(w); return; }
    const AbmView *v = &m.view;
    CHECK_EQ_INT(v->chip_fingerprint, SAMPLE_CHIP);
    CHECK_EQ_INT(v->version_major, 1);
    CHECK_EQ_INT(v->n_nets, 2);
    CHECK_EQ_INT(v->n_variants, 3);
    CHECK(strcmp(abm_net(v, 0).name, "resnet") == 0);
    CHECK(strcmp(abm_net(v, 1).name, "tiny") == 0);
    /* resnet's variants (batch 1 then 4) come first even though tiny's was added between them */
    CHECK_EQ_INT(abm_net(v, 0).variant_count, 2);
    CHECK_EQ_INT(abm_variant(v, 0).batch, 1);
    CHECK_EQ_INT(abm_variant(v, 1).batch, 4);
    CHECK_EQ_INT(abm_variant(v, 2).batch, 1);
    CHECK_EQ_INT(abm_variant(v, 1).core_count, 2);
    CHECK_EQ_INT(abm_variant(v, 2).core_count, 1);
    CHECK_EQ_INT(abm_find_net(v, "tiny"), 1);
    CHECK_EQ_INT(abm_find_net(v, "nope"), -1);
    AbmVariant s1 = abm_variant(v, 1);
    CHECK_EQ_INT(s1.tensor_count, 5);
    AbmTensor in = abm_tensor(v, s1.tensor_first);
    CHECK(strcmp(in.name, "input") == 0);
    CHECK_EQ_INT(in.role, ABM_ROLE_INPUT);
    CHECK_EQ_INT(in.ndim, 4);
    CHECK_EQ_INT(in.dims[0], 4);
    CHECK_EQ_INT(in.dims[1], 3);
    CHECK_EQ_INT(in.size, 4 * 3 * 8 * 8);
    CHECK_EQ_INT(in.quant_count, 1);
    CHECK_NEAR(abm_quant(v, in.quant_first).scale, 0.05, 1e-9);
    CHECK_EQ_INT(abm_quant(v, in.quant_first).zero_point, -3);
    AbmTensor conv = abm_tensor(v, s1.tensor_first + 1);
    CHECK_EQ_INT(conv.quant_kind, ABM_QUANT_PER_CHANNEL);
    CHECK_EQ_INT(conv.quant_count, 16);
    CHECK_NEAR(abm_quant(v, conv.quant_first + 15).scale, 0.025, 1e-6);
    /* the weight image holds the right bytes where the tensor points */
    int8_t ref[16 * 27];
    sample_int8(ref, sizeof ref, 7);
    REQUIRE(m.weights);
    CHECK(memcmp(m.weights + conv.offset, ref, sizeof ref) == 0);
    AbmTensor bias = abm_tensor(v, s1.tensor_first + 2);
    float b3;
    memcpy(&b3, m.weights + bias.offset + 12, 4);
    CHECK_NEAR(b3, 0.75, 0);
    AbmTensor act = abm_tensor(v, s1.tensor_first + 3);
    CHECK_EQ_INT(act.layout, ABM_LAYOUT_OPAQUE);
    CHECK_EQ_INT(act.size, 4 * 16 * 64 * 2 + 64);
    CHECK_EQ_INT(s1.activation_bytes, 128 + act.size);
    /* streams: every (core, engine) of every variant */
    uint8_t exp[6 * ABM_INSN_BYTES];
    uint32_t tags[3] = { 0x100, 0x300, 0x200 };
    for (uint32_t s = 0; s < 3; s++) {
        AbmVariant st = abm_variant(v, s);
        for (uint32_t c = 0; c < st.core_count; c++)
            for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                AbmStream str = abm_stream(v, s, c, g);
                size_t k = (c + g + st.batch) % 6;
                sample_stream(exp, k, tags[s] + c * 16 + g);
                CHECK_EQ_INT(str.size, k * ABM_INSN_BYTES);
                CHECK(k == 0 || memcmp(str.data, exp, k * ABM_INSN_BYTES) == 0);
            }
    }
    AbmMeta meta = abm_meta(v);
    CHECK(strcmp(meta.producer, "atoll-test 0.1") == 0);
    CHECK(strcmp(meta.options, "-O2 --batch 1,4") == 0);
    CHECK_EQ_INT(meta.source_hash[3], 33);
    abm_model_free(&m);
    free(buf);
    abm_writer_free(w);
}

TEST(identical_blobs_are_stored_once)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(1);
    REQUIRE(w);
    uint8_t a[1000], b[1000];
    for (int i = 0; i < 1000; i++) { a[i] = (uint8_t)(i * 37); b[i] = a[i]; }
    uint64_t oa, ob, oc;
    CHECK(abm_add_weight(w, a, sizeof a, &oa, &e) == 0);
    CHECK(abm_add_weight(w, b, sizeof b, &ob, &e) == 0);   /* same bytes, other buffer */
    b[999] ^= 1;
    CHECK(abm_add_weight(w, b, sizeof b, &oc, &e) == 0);   /* differs in the last byte */
    CHECK_EQ_INT(oa, ob);
    CHECK(oc != oa);
    CHECK_EQ_INT(oc % ABM_ALIGN, 0);
    uint64_t blobs, raw, stored, hits;
    abm_writer_weight_stats(w, &blobs, &raw, &stored, &hits);
    CHECK_EQ_INT(blobs, 2);
    CHECK_EQ_INT(raw, 2000);
    CHECK_EQ_INT(hits, 1);
    /* many blobs: the hash table grows and still finds every duplicate */
    for (uint32_t i = 0; i < 300; i++) {
        uint32_t x[16];
        for (int k = 0; k < 16; k++) x[k] = i * 1000 + (uint32_t)k;
        uint64_t o1, o2;
        CHECK(abm_add_weight(w, x, sizeof x, &o1, &e) == 0);
        CHECK(abm_add_weight(w, x, sizeof x, &o2, &e) == 0);
        CHECK_EQ_INT(o1, o2);
    }
    abm_writer_weight_stats(w, &blobs, NULL, NULL, &hits);
    CHECK_EQ_INT(blobs, 302);
    CHECK_EQ_INT(hits, 301);
    abm_writer_free(w);
}

TEST(sample_model_dedups_its_duplicate_blob)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmModel m;
    REQUIRE(abm_load_buffer(&m, buf, n, 0, 0, &e) == 0);
    CHECK_EQ_INT(m.view.n_blobs, 3);                     /* conv, bias, noise; the 4th was a duplicate */
    AbmVariant tiny = abm_variant(&m.view, 2);
    AbmVariant res = abm_variant(&m.view, 0);
    CHECK_EQ_INT(abm_tensor(&m.view, tiny.tensor_first + 1).offset, abm_tensor(&m.view, res.tensor_first + 1).offset);
    abm_model_free(&m);
    free(buf);
    abm_writer_free(w);
}

TEST(compression_only_when_smaller)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(1);
    REQUIRE(w);
    uint8_t zeros[4096] = { 0 }, noise[4096];
    uint32_t s = 1;
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (uint8_t)sample_rng(&s);
    uint64_t oz, on;
    REQUIRE(abm_add_weight(w, zeros, sizeof zeros, &oz, &e) == 0);
    REQUIRE(abm_add_weight(w, noise, sizeof noise, &on, &e) == 0);
    uint32_t net, st;
    REQUIRE(abm_add_net(w, "n", &net, &e) == 0);
    REQUIRE(abm_add_variant(w, net, 1, 1, &st, &e) == 0);
    uint8_t cmds[64 * 64] = { 0 };
    REQUIRE(abm_set_stream(w, st, 0, ABM_ENGINE_MATRIX, cmds, sizeof cmds, &e) == 0);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmModel m;
    REQUIRE(abm_load_buffer(&m, buf, n, 0, 0, &e) == 0);
    AbmBlob bz = abm_blob(&m.view, 0), bn = abm_blob(&m.view, 1);
    CHECK_EQ_INT(bz.compression, ABM_COMP_ZLIB);
    CHECK(bz.stored_size < bz.raw_size);
    CHECK_EQ_INT(bn.compression, ABM_COMP_NONE);
    CHECK_EQ_INT(bn.stored_size, sizeof noise);
    CHECK(memcmp(m.weights + on, noise, sizeof noise) == 0);
    CHECK(m.weights[oz + 100] == 0);
    /* every compressed section is smaller than raw; cmds (all zero) is compressed */
    for (uint32_t i = 0; i < m.view.section_count; i++) {
        const AbmSection *sec = &m.view.sec[i];
        if (sec->compression == ABM_COMP_ZLIB) CHECK(sec->stored_size < sec->raw_size);
        else CHECK_EQ_INT(sec->stored_size, sec->raw_size);
    }
    CHECK_EQ_INT(m.view.sec[m.view.by_type[ABM_SEC_CMDS]].compression, ABM_COMP_ZLIB);
    CHECK_EQ_INT(m.view.sec[m.view.by_type[ABM_SEC_WEIGHT_DATA]].compression, ABM_COMP_NONE);
    CHECK_EQ_INT(m.view.sec[m.view.by_type[ABM_SEC_WEIGHT_DATA]].offset % ABM_ALIGN, 0);
    abm_model_free(&m);
    free(buf);
    /* level 0 stores everything raw */
    abm_writer_set_level(w, 0);
    buf = serialize(w, &n);
    REQUIRE(buf);
    AbmView v;
    REQUIRE(abm_open(&v, buf, n, 0, 0, &e) == 0);
    for (uint32_t i = 0; i < v.section_count; i++) CHECK_EQ_INT(v.sec[i].compression, ABM_COMP_NONE);
    free(buf);
    abm_writer_free(w);
}

TEST(writer_rejects_bad_arguments)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(1);
    REQUIRE(w);
    uint32_t net, st;
    CHECK(abm_add_net(w, "", &net, &e) == -1);
    REQUIRE(abm_add_net(w, "n", &net, &e) == 0);
    CHECK(abm_add_net(w, "n", NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "already exists");
    CHECK(abm_add_variant(w, 5, 1, 1, &st, &e) == -1);
    CHECK(abm_add_variant(w, net, 1, 0, &st, &e) == -1);
    REQUIRE(abm_add_variant(w, net, 1, 2, &st, &e) == 0);
    uint8_t cmd[100] = { 0 };
    CHECK(abm_set_stream(w, st, 0, 0, cmd, 100, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "not a multiple of the 64-byte instruction");
    CHECK(abm_set_stream(w, st, 2, 0, cmd, 64, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "no core 2");
    CHECK(abm_set_stream(w, st, 0, 3, cmd, 64, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "engine 3");
    uint64_t off;
    uint8_t wt[64] = { 1 };
    REQUIRE(abm_add_weight(w, wt, sizeof wt, &off, &e) == 0);
    AbmTensorDesc t = { .name = "w", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_WEIGHT, .region = ABM_REGION_WEIGHTS,
                        .ndim = 1, .dims = { 65 }, .offset = off };
    CHECK(abm_add_tensor(w, st, &t, NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "not inside one blob");
    t.dims[0] = 64;
    t.region = ABM_REGION_IO;
    CHECK(abm_add_tensor(w, st, &t, NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "tensor 'w': a tensor with role weight lives in region weights, not io");
    t.region = ABM_REGION_WEIGHTS;
    t.quant_kind = ABM_QUANT_PER_CHANNEL;
    t.quant_count = 3;
    CHECK(abm_add_tensor(w, st, &t, NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "3 quantisation entries, expected 64");
    t.quant_kind = ABM_QUANT_NONE;
    t.quant_count = 0;
    t.size = 10;
    CHECK(abm_add_tensor(w, st, &t, NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "does not match its shape");
    t.size = 0;
    CHECK(abm_add_tensor(w, st, &t, NULL, &e) == 0);
    /* an IO tensor beyond the variant's memory plan is caught at serialisation */
    AbmTensorDesc io = { .name = "x", .dtype = ABM_DTYPE_FP32, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO,
                         .ndim = 1, .dims = { 4 }, .offset = 0 };
    REQUIRE(abm_add_tensor(w, st, &io, NULL, &e) == 0);
    uint8_t *buf = NULL;
    size_t n;
    CHECK(abm_serialize(w, &buf, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "points outside its region");
    CHECK(buf == NULL);
    REQUIRE(abm_set_mem_plan(w, st, 0, 16, &e) == 0);
    CHECK(abm_serialize(w, &buf, &n, &e) == 0);
    free(buf);
    uint32_t empty;
    REQUIRE(abm_add_net(w, "empty", &empty, &e) == 0);
    CHECK(abm_serialize(w, &buf, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "net 'empty' has no variants");
    abm_writer_free(w);
}

TEST(write_file_then_load_file)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 1, 6, &e);
    REQUIRE(w);
    char path[] = "/tmp/atoll_test_abmXXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    CHECK(abm_write_file(w, path, &e) == 0);
    AbmModel m;
    CHECK(abm_load_file(&m, path, SAMPLE_CHIP, 0, &e) == 0);
    CHECK_EQ_INT(m.view.n_nets, 2);
    CHECK_EQ_INT(abm_variant(&m.view, 1).batch, 8);
    abm_model_free(&m);
    CHECK(abm_load_file(&m, path, 0x1234, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, path);
    CHECK_STR_CONTAINS(e.msg, "wrong chip");
    CHECK(abm_write_file(w, "/nonexistent-dir/x.abm", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent-dir/x.abm");
    remove(path);
    abm_writer_free(w);
}

TEST(decode_needs_enough_scratch)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmView v;
    REQUIRE(abm_open(&v, buf, n, 0, 0, &e) == 0);
    CHECK(v.scratch_needed >= ABM_INFLATE_WORK_BYTES);
    uint8_t *sc = malloc(v.scratch_needed);
    REQUIRE(sc);
    CHECK(abm_decode(&v, sc, v.scratch_needed - 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "scratch buffer too small");
    CHECK(abm_decode(&v, sc, v.scratch_needed, &e) == 0);
    /* a buffer longer than the file is fine (firmware hands over a whole region) */
    uint8_t *big = calloc(1, n + 4096);
    REQUIRE(big);
    memcpy(big, buf, n);
    CHECK(abm_open(&v, big, n + 4096, SAMPLE_CHIP, 0, &e) == 0);
    CHECK_EQ_INT(v.size, n);
    free(big);
    free(sc);
    free(buf);
    abm_writer_free(w);
}

/* ABM_OPEN_SKIP_WEIGHT_CRC: a damaged weight_data section passes abm_open
 * (its blobs' own CRCs still catch it when read); any other section does not. */
TEST(skip_weight_crc_only_skips_weights)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmView v;
    REQUIRE(abm_open(&v, buf, n, 0, 0, &e) == 0);
    const AbmSection *wd = &v.sec[v.by_type[ABM_SEC_WEIGHT_DATA]], *cm = &v.sec[v.by_type[ABM_SEC_CMDS]];
    REQUIRE(wd->stored_size > 0 && cm->stored_size > 0);
    uint64_t woff = wd->offset, coff = cm->offset;
    buf[woff] ^= 1;
    CHECK(abm_open(&v, buf, n, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "CRC mismatch in section");
    CHECK(abm_open(&v, buf, n, 0, ABM_OPEN_SKIP_WEIGHT_CRC, &e) == 0);
    uint8_t *sc = malloc(v.scratch_needed);
    REQUIRE(sc);
    REQUIRE(abm_decode(&v, sc, v.scratch_needed, &e) == 0);
    int bad_blobs = 0;
    for (uint32_t i = 0; i < v.n_blobs; i++) {
        AbmBlob b = abm_blob(&v, i);
        uint8_t *dst = malloc(b.raw_size);
        REQUIRE(dst);
        bad_blobs += abm_blob_read(&v, i, dst, b.raw_size, &e) != 0;
        free(dst);
    }
    CHECK_EQ_INT(bad_blobs, 1);
    buf[woff] ^= 1;
    buf[coff] ^= 1;
    CHECK(abm_open(&v, buf, n, 0, ABM_OPEN_SKIP_WEIGHT_CRC, &e) == -1);
    free(sc);
    free(buf);
    abm_writer_free(w);
}

/* The optional layers section: absent (and the file 1.0 with ten
 * sections) unless rows were added; rows come back per variant in the file's
 * variant order (net 'resnet''s variants first, though 'tiny''s was added
 * between them), survive --combine, and a bad row is refused. */
TEST(layers_section_round_trip)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n0;
    uint8_t *plain = serialize(w, &n0);
    REQUIRE(plain);
    CHECK_EQ_INT(plain[10], 0);                 /* version 1.0 */
    CHECK_EQ_INT(plain[28], ABM_SEC_META);      /* ten sections */
    /* writer variants: 0 resnet b1, 1 tiny, 2 resnet b4 (file order: 0, 2, 1) */
    AbmLayer a = {0, 3, "/conv1/Conv", "Conv", "N1 C2", 8, 2, ABM_LAYER_MATRIX, 1000, 500, 400, 300};
    AbmLayer b = {0, 0, "tiny_relu", "Relu", "", 1, 1, 0, 0, 20, 10, 15};
    REQUIRE(abm_add_layer(w, 1, &b, &e) == 0);
    REQUIRE(abm_add_layer(w, 2, &a, &e) == 0);
    CHECK(abm_add_layer(w, 9, &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "no variant 9");
    abm_writer_set_level(w, 0); /* sections stored raw: the damage below hits a row */
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    CHECK_EQ_INT(buf[10], 1);                   /* version 1.1 */
    CHECK_EQ_INT(buf[28], ABM_SEC_LAYERS);
    /* without the trailing layers section the file is byte for byte the
     * plain one (what the host loads into the device) */
    uint64_t req = 0;
    REQUIRE(abm_required_size(buf, n, &req) == 0);
    CHECK(req < n);
    uint8_t *cut = malloc(n);
    REQUIRE(cut);
    memcpy(cut, buf, n);
    CHECK(abm_drop_optional(cut, (size_t)req) == 0);
    abm_writer_set_level(w, 6);
    size_t np;
    uint8_t *plain6 = serialize(w, &np);   /* layers and all, at the plain file's level */
    REQUIRE(plain6);
    uint64_t req6 = 0;
    REQUIRE(abm_required_size(plain6, np, &req6) == 0);
    CHECK(abm_drop_optional(plain6, (size_t)req6) == 0);
    CHECK_EQ_INT(req6, n0);
    CHECK(req6 == n0 && !memcmp(plain6, plain, n0));
    free(plain6);
    abm_writer_set_level(w, 0);
    uint64_t same = 0;
    CHECK(abm_required_size(plain, n0, &same) == 0 && same == n0);   /* nothing to drop */
    const uint8_t *ent = abm_find_entry(buf, n, ABM_SEC_LAYERS);
    CHECK(ent != NULL && abm_find_entry(plain, n0, ABM_SEC_LAYERS) == NULL);
    free(cut);
    AbmModel m;
    REQUIRE(abm_load_buffer(&m, buf, n, SAMPLE_CHIP, 0, &e) == 0);
    const AbmView *v = &m.view;
    REQUIRE(v->n_layers == 2);
    AbmLayer r0 = abm_layer(v, 0), r1 = abm_layer(v, 1);
    CHECK_EQ_INT(r0.variant, 1);                  /* resnet b4 is file variant 1 */
    CHECK_EQ_INT(r0.layer, 3);
    CHECK(!strcmp(r0.name, "/conv1/Conv") && !strcmp(r0.op, "Conv") && !strcmp(r0.split, "N1 C2"));
    CHECK(r0.tiles == 8 && r0.cores == 2 && r0.flags == ABM_LAYER_MATRIX);
    CHECK(r0.macs == 1000 && r0.est_cycles == 500 && r0.est_compute == 400 && r0.est_dma == 300);
    CHECK_EQ_INT(r1.variant, 2);                  /* tiny */
    CHECK(!strcmp(r1.name, "tiny_relu"));
    /* combined with a model that has none: the rows follow their variants */
    AbmWriter *c = abm_writer_new(SAMPLE_CHIP);
    REQUIRE(c);
    CHECK(abm_writer_merge(c, v, &e) == 0);
    size_t cn;
    uint8_t *cb = serialize(c, &cn);
    REQUIRE(cb);
    AbmModel cm;
    REQUIRE(abm_load_buffer(&cm, cb, cn, SAMPLE_CHIP, 0, &e) == 0);
    CHECK_EQ_INT(cm.view.n_layers, 2);
    CHECK(!strcmp(abm_layer(&cm.view, 1).name, "tiny_relu"));
    abm_model_free(&cm);
    free(cb);
    abm_writer_free(c);
    /* a row naming a variant past the last is refused by the reader */
    AbmView bad;
    uint8_t *copy = malloc(n);
    REQUIRE(copy);
    memcpy(copy, buf, n);
    const AbmSection *ls = &v->sec[v->by_type[ABM_SEC_LAYERS]];
    REQUIRE(ls->compression == ABM_COMP_NONE);
    copy[ls->offset + ABM_LAYERS_HEADER_BYTES] = 7;   /* row 0's variant */
    sample_refix(copy, n);
    REQUIRE(abm_open(&bad, copy, n, 0, 0, &e) == 0);
    uint8_t *sc = malloc(bad.scratch_needed);
    REQUIRE(sc);
    CHECK(abm_decode(&bad, sc, bad.scratch_needed, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "row 0 field 'variant': variant 7 is not one of the 3 variants");
    free(sc);
    free(copy);
    abm_model_free(&m);
    free(buf);
    free(plain);
    abm_writer_free(w);
}

/* Decodes buf (n bytes) after poke(row 0 of the stages section at p): the
 * reader's message, or "" when it accepts the file. */
static void stage_damage(const uint8_t *buf, size_t n, uint64_t row0, uint32_t off, uint32_t value, char *msg, size_t cap)
{
    uint8_t *copy = malloc(n);
    AbmView v;
    AtlErr e;
    snprintf(msg, cap, "%s", "");
    if (!copy) return;
    memcpy(copy, buf, n);
    for (int b = 0; b < 4; b++) copy[row0 + off + (uint32_t)b] = (uint8_t)(value >> (8 * b));
    sample_refix(copy, n);
    if (abm_open(&v, copy, n, 0, 0, &e) == 0) {
        uint8_t *sc = malloc(v.scratch_needed);
        if (sc && abm_decode(&v, sc, v.scratch_needed, &e) == -1) snprintf(msg, cap, "%s", e.msg);
        free(sc);
    } else
        snprintf(msg, cap, "%s", e.msg);
    free(copy);
}

/* The optional stages section: rows per variant numbered from 0 (the
 * writer numbers them), version 1.2, dropped with the layers section
 * before the device loads the file (what remains is the plain file), kept
 * by --combine; the writer and the reader refuse empty, overlapping and
 * misnumbered stages. */
TEST(stages_section_round_trip)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 0, &e);
    REQUIRE(w);
    size_t n0;
    uint8_t *plain = serialize(w, &n0);
    REQUIRE(plain);
    /* writer variant 2 (resnet b4) in two stages */
    AbmStage s0 = {9, 9, 0, 3, 1, 4, 16, "", 1000, 40, 500, 2};
    AbmStage s1 = {9, 9, 3, 2, 2, 2, 16, "/layer3/x", 3000, 90, 700, 0};
    REQUIRE(abm_add_stage(w, 2, &s0, &e) == 0);
    CHECK(abm_add_stage(w, 2, &s0, &e) == -1);   /* layers 0-2 again */
    CHECK_STR_CONTAINS(e.msg, "stage 1 of variant 2 starts at layer 0, inside the previous stage's layers");
    AbmStage none = s1;
    none.micro_batch = 0;
    CHECK(abm_add_stage(w, 2, &none, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "has no layers, micro-batch, instances or cores");
    CHECK(abm_add_stage(w, 7, &s1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "no variant 7");
    REQUIRE(abm_add_stage(w, 2, &s1, &e) == 0);
    AbmLayer a = {0, 3, "/conv1/Conv", "Conv", "N1 C2", 8, 2, ABM_LAYER_MATRIX, 1000, 500, 400, 300};
    REQUIRE(abm_add_layer(w, 2, &a, &e) == 0);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    CHECK_EQ_INT(buf[10], 2);                      /* version 1.2 */
    CHECK_EQ_INT(buf[28], 12);                     /* ten sections, layers, stages */
    /* both optional sections dropped: the file without the layer rows,
     * dropped the same way (the device image does not depend on them) */
    uint64_t req = 0, sreq = 0;
    REQUIRE(abm_required_size(buf, n, &req) == 0);
    CHECK(req > n0 && req < n);                    /* room for the stages entry: 64 bytes more */
    uint8_t *cut = malloc(n);
    REQUIRE(cut);
    memcpy(cut, buf, n);
    CHECK(abm_drop_optional(cut, (size_t)req) == 0);
    AbmWriter *ws = sample_model(SAMPLE_CHIP, 0, 0, &e);
    REQUIRE(ws);
    CHECK(abm_add_stage(ws, 2, &s0, &e) == 0 && abm_add_stage(ws, 2, &s1, &e) == 0);
    size_t ns;
    uint8_t *sb = serialize(ws, &ns);
    REQUIRE(sb);
    CHECK_EQ_INT(sb[28], 11);
    REQUIRE(abm_required_size(sb, ns, &sreq) == 0);
    CHECK(abm_drop_optional(sb, (size_t)sreq) == 0);
    CHECK(sreq == req && !memcmp(cut, sb, (size_t)req));
    AbmView pv;
    CHECK(abm_open(&pv, cut, (size_t)req, SAMPLE_CHIP, 0, &e) == 0 && pv.by_type[ABM_SEC_STAGES] < 0);
    free(sb);
    abm_writer_free(ws);
    free(cut);
    AbmModel m;
    REQUIRE(abm_load_buffer(&m, buf, n, SAMPLE_CHIP, 0, &e) == 0);
    const AbmView *v = &m.view;
    REQUIRE(v->n_stages == 2);
    AbmStage r0 = abm_stage(v, 0), r1 = abm_stage(v, 1);
    CHECK(r0.variant == 1 && r0.stage == 0 && r0.first_layer == 0 && r0.layers == 3 && r0.micro_batch == 1);
    CHECK(r0.instances == 4 && r0.cores == 16 && !strcmp(r0.input, "") && r0.macs == 1000 && r0.mat_cycles == 40);
    CHECK(r0.est_cycles == 500 && r0.dram_tensors == 2);
    CHECK(r1.variant == 1 && r1.stage == 1 && r1.first_layer == 3 && !strcmp(r1.input, "/layer3/x") && r1.macs == 3000);
    /* combined: the stages follow their variant */
    AbmWriter *c = abm_writer_new(SAMPLE_CHIP);
    REQUIRE(c);
    CHECK(abm_writer_merge(c, v, &e) == 0);
    size_t cn;
    uint8_t *cb = serialize(c, &cn);
    REQUIRE(cb);
    AbmModel cm;
    REQUIRE(abm_load_buffer(&cm, cb, cn, SAMPLE_CHIP, 0, &e) == 0);
    CHECK_EQ_INT(cm.view.n_stages, 2);
    CHECK(!strcmp(abm_stage(&cm.view, 1).input, "/layer3/x"));
    abm_model_free(&cm);
    free(cb);
    abm_writer_free(c);
    /* the reader: stage numbers, overlapping layers, zero fields, reserved bits */
    const AbmSection *ss = &v->sec[v->by_type[ABM_SEC_STAGES]];
    REQUIRE(ss->compression == ABM_COMP_NONE);
    uint64_t row0 = ss->offset + ABM_STAGES_HEADER_BYTES, row1 = row0 + ABM_STAGE_BYTES;
    char msg[512];
    stage_damage(buf, n, row1, 4, 5, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "section 'stages' row 1 field 'stage': 5, expected 1");
    stage_damage(buf, n, row1, 8, 2, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "row 1 field 'first_layer': layer 2 is inside or before the previous stage's layers (from 3 on)");
    stage_damage(buf, n, row0, 16, 0, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "row 0 field 'micro_batch': must not be 0");
    stage_damage(buf, n, row0, 60, 1, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "row 0 field 'reserved': must be 0");
    stage_damage(buf, n, row0, 28, 100000, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "row 0 field 'input' (byte 44 of the section): string index out of range");
    stage_damage(buf, n, row0, 0, 3, msg, sizeof msg);
    CHECK_STR_CONTAINS(msg, "row 0 field 'variant': variant 3 is not one of the 3 variants");
    stage_damage(buf, n, row0, 4, 0, msg, sizeof msg);   /* unchanged: accepted */
    CHECK_EQ_INT(msg[0], 0);
    abm_model_free(&m);
    free(buf);
    free(plain);
    abm_writer_free(w);
}

static int load_sample(AbmModel *m, int variant, uint64_t chip)
{
    AtlErr e;
    AbmWriter *w = sample_model(chip, variant, 6, &e);
    if (!w) return -1;
    size_t n;
    uint8_t *buf = serialize(w, &n);
    abm_writer_free(w);
    if (!buf) return -1;
    int rc = abm_load_buffer(m, buf, n, 0, 0, &e);
    free(buf);
    return rc;
}

TEST(merge_combines_nets_and_dedups_weights)
{
    AtlErr e;
    AbmModel a, b;
    REQUIRE(load_sample(&a, 0, SAMPLE_CHIP) == 0);
    REQUIRE(load_sample(&b, 1, SAMPLE_CHIP) == 0);
    AbmWriter *w = abm_writer_new(SAMPLE_CHIP);
    REQUIRE(w);
    CHECK(abm_writer_merge(w, &a.view, &e) == 0);
    CHECK(abm_writer_merge(w, &b.view, &e) == 0);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    REQUIRE(buf);
    AbmModel c;
    REQUIRE(abm_load_buffer(&c, buf, n, SAMPLE_CHIP, 0, &e) == 0);
    CHECK_EQ_INT(c.view.n_nets, 3);                /* resnet, tiny, mobilenet */
    CHECK_EQ_INT(c.view.n_variants, 5);
    int r = abm_find_net(&c.view, "resnet");
    REQUIRE(r >= 0);
    AbmNet rn = abm_net(&c.view, (uint32_t)r);
    CHECK_EQ_INT(rn.variant_count, 3);               /* batch 1, 4 from a and 8 from b */
    CHECK_EQ_INT(abm_variant(&c.view, rn.first_variant + 2).batch, 8);
    /* conv weights and noise are shared; biases differ: 3 + 1 blobs */
    CHECK_EQ_INT(c.view.n_blobs, 4);
    /* b's conv tensor still points at the right bytes */
    AbmVariant s8 = abm_variant(&c.view, rn.first_variant + 2);
    AbmTensor conv = abm_tensor(&c.view, s8.tensor_first + 1);
    int8_t ref[16 * 27];
    sample_int8(ref, sizeof ref, 7);
    CHECK(memcmp(c.weights + conv.offset, ref, sizeof ref) == 0);
    AbmTensor bias = abm_tensor(&c.view, s8.tensor_first + 2);
    float b1;
    memcpy(&b1, c.weights + bias.offset + 4, 4);
    CHECK_NEAR(b1, 0.25 - 1.0, 0);
    /* streams survive */
    AbmStream s = abm_stream(&c.view, rn.first_variant + 2, 1, 2);
    AbmStream o = abm_stream(&b.view, 1, 1, 2);
    CHECK_EQ_INT(s.size, o.size);
    CHECK(s.size == 0 || memcmp(s.data, o.data, s.size) == 0);
    CHECK(strcmp(abm_meta(&c.view).options, "-O2 --batch 1,4") == 0);
    abm_model_free(&c);
    free(buf);
    /* merging a again: every variant is a duplicate */
    CHECK(abm_writer_merge(w, &a.view, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "duplicate variant: net 'resnet' batch 1");
    abm_writer_free(w);
    /* different chips are refused */
    AbmModel d;
    REQUIRE(load_sample(&d, 1, SAMPLE_CHIP + 1) == 0);
    w = abm_writer_new(SAMPLE_CHIP);
    REQUIRE(w);
    CHECK(abm_writer_merge(w, &a.view, &e) == 0);
    CHECK(abm_writer_merge(w, &d.view, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "different chips");
    abm_writer_free(w);
    abm_model_free(&d);
    abm_model_free(&a);
    abm_model_free(&b);
}

TEST(lookups_and_shared_strings)
{
    AtlErr e;
    AbmModel m;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w);
    size_t n;
    uint8_t *buf = serialize(w, &n);
    abm_writer_free(w);
    REQUIRE(buf);
    REQUIRE(abm_load_buffer(&m, buf, n, 0, 0, &e) == 0);
    free(buf);
    const AbmView *v = &m.view;
    CHECK_EQ_INT(abm_find_variant(v, 0, 4), 1);
    CHECK_EQ_INT(abm_find_variant(v, 0, 2), -1);
    CHECK_EQ_INT(abm_find_variant(v, 1, 1), 2);
    CHECK_EQ_INT(abm_find_variant(v, 9, 1), -1);
    int t = abm_find_tensor(v, 1, "logits");
    REQUIRE(t >= 0);
    CHECK_EQ_INT(abm_tensor(v, (uint32_t)t).dims[0], 4);
    CHECK_EQ_INT(abm_find_tensor(v, 1, "nope"), -1);
    CHECK_EQ_INT(abm_find_tensor(v, 7, "logits"), -1);
    /* every variant names its input "input": the strings section holds it once */
    CHECK(abm_tensor(v, abm_variant(v, 0).tensor_first).name == abm_tensor(v, abm_variant(v, 2).tensor_first).name);
    abm_model_free(&m);
}

TEST(writer_refuses_indistinguishable_variants)
{
    AtlErr e;
    AbmWriter *w = abm_writer_new(1);
    REQUIRE(w);
    uint32_t net, s0, s1, s2;
    REQUIRE(abm_add_net(w, "n", &net, &e) == 0);
    REQUIRE(abm_add_variant(w, net, 2, 1, &s0, &e) == 0);
    REQUIRE(abm_add_variant(w, net, 2, 1, &s1, &e) == 0);
    AbmTensorDesc a = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO,
                        .ndim = 2, .dims = { 2, 8 } };
    AbmTensorDesc b = a;
    b.dims[1] = 16;                    /* same batch, other input shape: a distinct variant */
    REQUIRE(abm_add_tensor(w, s0, &a, NULL, &e) == 0);
    REQUIRE(abm_add_tensor(w, s1, &b, NULL, &e) == 0);
    REQUIRE(abm_set_mem_plan(w, s0, 0, 64, &e) == 0);
    REQUIRE(abm_set_mem_plan(w, s1, 0, 64, &e) == 0);
    uint8_t *buf = NULL;
    size_t n;
    CHECKF(abm_serialize(w, &buf, &n, &e) == 0, "%s", e.msg);
    free(buf);
    REQUIRE(abm_add_variant(w, net, 2, 1, &s2, &e) == 0);
    REQUIRE(abm_add_tensor(w, s2, &a, NULL, &e) == 0);
    REQUIRE(abm_set_mem_plan(w, s2, 0, 64, &e) == 0);
    CHECK(abm_serialize(w, &buf, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "net 'n' has two variants (0 and 2) with batch 2 and the same input shapes");
    abm_writer_free(w);
}

TEST(output_is_deterministic)
{
    AtlErr e;
    AbmWriter *w1 = sample_model(SAMPLE_CHIP, 0, 6, &e), *w2 = sample_model(SAMPLE_CHIP, 0, 6, &e);
    REQUIRE(w1 && w2);
    size_t n1, n2, n3;
    uint8_t *b1 = serialize(w1, &n1), *b2 = serialize(w2, &n2), *b3 = serialize(w1, &n3);
    REQUIRE(b1 && b2 && b3);
    CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);
    CHECK(n1 == n3 && memcmp(b1, b3, n1) == 0);
    free(b1);
    free(b2);
    free(b3);
    abm_writer_free(w1);
    abm_writer_free(w2);
}

TEST(names_of_enums)
{
    CHECK(strcmp(abm_section_name(ABM_SEC_TENSORS), "tensors") == 0);
    CHECK(strcmp(abm_section_name(99), "unknown") == 0);
    CHECK(strcmp(abm_dtype_name(ABM_DTYPE_BF16), "bf16") == 0);
    CHECK(strcmp(abm_dtype_name(7), "?") == 0);
    CHECK_EQ_INT(abm_dtype_bytes(ABM_DTYPE_FP16), 2);
    CHECK_EQ_INT(abm_dtype_bytes(42), 0);
    CHECK(strcmp(abm_engine_name(ABM_ENGINE_VECTOR), "vector") == 0);
    CHECK(strcmp(abm_role_name(ABM_ROLE_WEIGHT), "weight") == 0);
    CHECK(strcmp(abm_region_name(ABM_REGION_IO), "io") == 0);
    CHECK(strcmp(abm_layout_name(ABM_LAYOUT_NHWC), "nhwc") == 0);
    CHECK_EQ_INT(abm_crc32("123456789", 9), 0xCBF43926u);
    CHECK(abm_hash64("a", 1) != abm_hash64("b", 1));
}

/* abm_add_weight_take stores the caller's buffer without copying it and
 * frees it on a duplicate: the same file as abm_add_weight's, and no leak
 * or double free under ASan. */
TEST(taken_weights_give_the_same_file)
{
    AtlErr e;
    uint8_t blobs[3][300];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 300; i++) blobs[k][i] = (uint8_t)(k == 2 ? i * 7 : i * (k + 3));
    memcpy(blobs[1], blobs[0], sizeof blobs[0]);             /* a duplicate */
    uint8_t *files[2];
    size_t lens[2];
    for (int take = 0; take < 2; take++) {
        AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
        REQUIRE(w);
        uint64_t off[3];
        for (int k = 0; k < 3; k++) {
            if (take) {
                uint8_t *copy = malloc(sizeof blobs[k]);
                REQUIRE(copy);
                memcpy(copy, blobs[k], sizeof blobs[k]);
                REQUIRE(abm_add_weight_take(w, copy, sizeof blobs[k], &off[k], &e) == 0);
            } else
                REQUIRE(abm_add_weight(w, blobs[k], sizeof blobs[k], &off[k], &e) == 0);
        }
        CHECK(off[1] == off[0]);
        CHECK(off[2] != off[0]);
        REQUIRE(abm_serialize(w, &files[take], &lens[take], &e) == 0);
        abm_writer_free(w);
    }
    CHECK(lens[0] == lens[1]);
    CHECK(!memcmp(files[0], files[1], lens[0] < lens[1] ? lens[0] : lens[1]));
    free(files[0]);
    free(files[1]);
    /* an empty blob is refused, and the taken buffer freed */
    AbmWriter *w = abm_writer_new(SAMPLE_CHIP);
    REQUIRE(w);
    CHECK(abm_add_weight_take(w, malloc(1), 0, NULL, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "empty weight blob");
    abm_writer_free(w);
}

int main(void)
{
    RUN(round_trip_multi_net_multi_variant);
    RUN(identical_blobs_are_stored_once);
    RUN(sample_model_dedups_its_duplicate_blob);
    RUN(compression_only_when_smaller);
    RUN(writer_rejects_bad_arguments);
    RUN(write_file_then_load_file);
    RUN(decode_needs_enough_scratch);
    RUN(skip_weight_crc_only_skips_weights);
    RUN(layers_section_round_trip);
    RUN(stages_section_round_trip);
    RUN(merge_combines_nets_and_dedups_weights);
    RUN(lookups_and_shared_strings);
    RUN(writer_refuses_indistinguishable_variants);
    RUN(output_is_deterministic);
    RUN(names_of_enums);
    RUN(taken_weights_give_the_same_file);
    return test_summary("test_abm");
}
