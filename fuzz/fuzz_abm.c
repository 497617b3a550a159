/* fuzz_abm.c - libFuzzer harness for the .abm reader (isa/abm_read.c).
 *
 * Each input is parsed twice: strictly, and with CRC checks off so that the
 * fuzzer can reach the structural checks behind them (a checksum would
 * otherwise stop almost every mutation at the door). A valid view is then
 * walked completely, every blob inflated, so that any field the validator
 * let through unchecked shows up as an ASan/UBSan report. A valid view is
 * also merged into a fresh writer and serialised: whatever the reader
 * accepts, the writer must reproduce (its own re-validation must pass), so a
 * mismatch between the two traps. Seeds in
 * fuzz/seeds/fuzz_abm/ are the sample models of test/isa/abm_sample.h
 * (written by `build/test/isa/test_abm_gen --write DIR`).
 */
#include <stdlib.h>
#include <string.h>
#include "isa/abm.h"

static void walk(const AbmView *v)
{
    volatile unsigned sum = 0;
    for (uint32_t i = 0; i < v->n_nets; i++) sum += (unsigned)strlen(abm_net(v, i).name);
    for (uint32_t s = 0; s < v->n_variants; s++) {
        AbmVariant st = abm_variant(v, s);
        for (uint32_t t = 0; t < st.tensor_count; t++) {
            AbmTensor x = abm_tensor(v, st.tensor_first + t);
            sum += (unsigned)strlen(x.name);
            for (uint32_t q = 0; q < x.quant_count; q++) sum += (unsigned)abm_quant(v, x.quant_first + q).zero_point;
        }
        for (uint32_t c = 0; c < st.core_count; c++)
            for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                AbmStream str = abm_stream(v, s, c, g);
                if (str.size) sum += str.data[0] + str.data[str.size - 1];
            }
    }
    for (uint32_t i = 0; i < v->n_layers; i++) {
        AbmLayer l = abm_layer(v, i);
        sum += (unsigned)strlen(l.name) + (unsigned)strlen(l.op) + (unsigned)strlen(l.split) + l.variant;
    }
    AbmMeta m = abm_meta(v);
    sum += (unsigned)strlen(m.producer) + (unsigned)strlen(m.options) + m.source_hash[31];
    for (uint32_t i = 0; i < v->n_blobs; i++) {
        AbmBlob b = abm_blob(v, i);
        if (b.raw_size > (16u << 20)) continue;
        uint8_t *dst = malloc(b.raw_size);
        if (!dst) continue;
        AtlErr e;
        if (abm_blob_read(v, i, dst, b.raw_size, &e) == 0) sum += dst[0];
        free(dst);
    }
    (void)sum;
}

/* Merge + serialise must succeed for every valid view whose weights read back. */
static void remerge(const AbmView *v)
{
    uint64_t raw = 0;
    for (uint32_t i = 0; i < v->n_blobs; i++) {
        AbmBlob b = abm_blob(v, i);
        if (b.raw_size > (16u << 20) - raw) return;
        raw += b.raw_size;
    }
    AbmWriter *w = abm_writer_new(v->chip_fingerprint ? v->chip_fingerprint : 1);
    if (!w) return;
    AtlErr e;
    if (v->chip_fingerprint && abm_writer_merge(w, v, &e) == 0) {
        uint8_t *buf;
        size_t n;
        /* the one thing the writer refuses that the reader accepts: two
         * variants of a net that a runtime could not tell apart */
        if (abm_serialize(w, &buf, &n, &e) == 0) free(buf);
        else if (!strstr(e.msg, "the same input shapes")) __builtin_trap();
    }
    abm_writer_free(w);
}

/* What the host loads into the device: the file without its trailing
 * optional sections (layers, stages) must still open. */
static void drop_optional(const uint8_t *data, size_t size)
{
    uint64_t req;
    if (abm_required_size(data, size, &req) || req >= size) return;
    uint8_t *copy = malloc(size);
    if (!copy) return;
    memcpy(copy, data, size);
    AbmView v;
    AtlErr e;
    if (abm_drop_optional(copy, (size_t)req) == 0 && abm_open(&v, copy, (size_t)req, 0, ABM_OPEN_IGNORE_CRC, &e) == 0 &&
        (v.by_type[ABM_SEC_LAYERS] >= 0 || v.by_type[ABM_SEC_STAGES] >= 0))
        __builtin_trap();   /* dropped, yet still there */
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    drop_optional(data, size);
    for (unsigned flags = 0; flags <= ABM_OPEN_IGNORE_CRC; flags += ABM_OPEN_IGNORE_CRC) {
        AbmView v;
        AtlErr e;
        if (abm_open(&v, data, size, 0, flags, &e)) continue;
        if (v.scratch_needed > (64u << 20)) continue;
        uint8_t *scratch = malloc(v.scratch_needed);
        if (!scratch) continue;
        if (abm_decode(&v, scratch, v.scratch_needed, &e) == 0) {
            walk(&v);
            remerge(&v);
        }
        free(scratch);
    }
    return 0;
}
