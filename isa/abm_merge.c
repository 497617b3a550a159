/* abm_merge.c - adds the nets and stages of a decoded model to a writer:
 * the library half of `atoll inspect --combine`. Weights go through
 * abm_add_weight, so blobs shared by both models are stored once; tensor
 * offsets are moved with their blob. Everything is checked before the
 * writer is touched, so a refused merge leaves it unchanged.
 */
#include "isa/abm.h"
#include <stdlib.h>
#include <string.h>

/* Does the view's stage vs have the same inputs (count, dtype, shape) as the
 * view's stage of other? Works on two views or the same one. */
static int same_inputs(const AbmView *a, uint32_t sa, const AbmView *b, uint32_t sb)
{
    AbmStage x = abm_stage(a, sa), y = abm_stage(b, sb);
    if (x.batch != y.batch) return 0;
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < x.tensor_count && abm_tensor(a, x.tensor_first + i).role != ABM_ROLE_INPUT) i++;
        while (j < y.tensor_count && abm_tensor(b, y.tensor_first + j).role != ABM_ROLE_INPUT) j++;
        if (i == x.tensor_count || j == y.tensor_count) return i == x.tensor_count && j == y.tensor_count;
        AbmTensor ta = abm_tensor(a, x.tensor_first + i), tb = abm_tensor(b, y.tensor_first + j);
        if (ta.dtype != tb.dtype || ta.ndim != tb.ndim || memcmp(ta.dims, tb.dims, sizeof ta.dims)) return 0;
        i++;
        j++;
    }
}

int abm_writer_merge(AbmWriter *w, const AbmView *v, AtlErr *e)
{
    if (!v->decoded) return atl_fail(e, "merge: the model was not decoded");
    /* Serialise what w holds so far and compare stages through the reader. */
    uint8_t *cur = NULL;
    size_t cur_n = 0;
    AbmView *cv = NULL;
    uint8_t *scratch = NULL;
    uint64_t *newoff = NULL;
    uint8_t *tmp = NULL;
    int rc = -1;
    uint64_t chip = abm_writer_chip(w);
    if (chip != v->chip_fingerprint)
        return atl_fail(e, "cannot combine models for different chips: fingerprint 0x%llx vs 0x%llx",
                        (unsigned long long)chip, (unsigned long long)v->chip_fingerprint);
    if (abm_writer_stage_count(w) > 0) {
        if (abm_serialize(w, &cur, &cur_n, e)) goto done;
        if (!(cv = malloc(sizeof *cv))) { atl_fail(e, "out of memory"); goto done; }
        if (abm_open(cv, cur, cur_n, 0, 0, e)) goto done;
        if (!(scratch = malloc(cv->scratch_needed))) { atl_fail(e, "out of memory"); goto done; }
        if (abm_decode(cv, scratch, cv->scratch_needed, e)) goto done;
        for (uint32_t s = 0; s < v->n_stages; s++) {
            AbmStage st = abm_stage(v, s);
            const char *net = abm_net(v, st.net).name;
            int cn = abm_find_net(cv, net);
            if (cn < 0) continue;
            AbmNet c = abm_net(cv, (uint32_t)cn);
            for (uint32_t k = 0; k < c.stage_count; k++)
                if (same_inputs(cv, c.first_stage + k, v, s))
                    { atl_fail(e, "duplicate stage: net '%s' batch %u with the same input shapes is in both models", net, st.batch); goto done; }
        }
    }
    if (v->n_blobs && !(newoff = malloc(v->n_blobs * sizeof *newoff))) { atl_fail(e, "out of memory"); goto done; }
    for (uint32_t i = 0; i < v->n_blobs; i++) {
        AbmBlob b = abm_blob(v, i);
        if (b.raw_size > SIZE_MAX || !(tmp = malloc((size_t)b.raw_size))) { atl_fail(e, "out of memory for weight blob %u", i); goto done; }
        if (abm_blob_read(v, i, tmp, b.raw_size, e)) goto done;
        if (abm_add_weight(w, tmp, (size_t)b.raw_size, &newoff[i], e)) goto done;
        free(tmp);
        tmp = NULL;
    }
    for (uint32_t n = 0; n < v->n_nets; n++) {
        AbmNet net = abm_net(v, n);
        uint32_t wn;
        if (abm_writer_find_net(w, net.name, &wn) && abm_add_net(w, net.name, &wn, e)) goto done;
        for (uint32_t k = 0; k < net.stage_count; k++) {
            AbmStage st = abm_stage(v, net.first_stage + k);
            uint32_t ws;
            if (abm_add_stage(w, wn, st.batch, st.core_count, &ws, e) ||
                abm_set_mem_plan(w, ws, st.activation_bytes, st.io_bytes, e))
                goto done;
            for (uint32_t t = 0; t < st.tensor_count; t++) {
                AbmTensor x = abm_tensor(v, st.tensor_first + t);
                AbmTensorDesc d;
                memset(&d, 0, sizeof d);
                d.name = x.name;
                d.dtype = x.dtype; d.role = x.role; d.region = x.region; d.layout = x.layout; d.ndim = x.ndim;
                memcpy(d.dims, x.dims, sizeof d.dims);
                d.offset = x.offset;
                if (x.region == ABM_REGION_WEIGHTS) d.offset = newoff[x.blob] + (x.offset - abm_blob(v, x.blob).dram_offset);
                d.size = x.size;
                d.quant_kind = x.quant_kind; d.quant_axis = x.quant_axis; d.quant_count = x.quant_count;
                float *sc = x.quant_count ? malloc(x.quant_count * sizeof *sc) : NULL;
                int32_t *zp = x.quant_count ? malloc(x.quant_count * sizeof *zp) : NULL;
                if (x.quant_count && (!sc || !zp)) { free(sc); free(zp); atl_fail(e, "out of memory"); goto done; }
                for (uint32_t q = 0; q < x.quant_count; q++) {
                    AbmQuant aq = abm_quant(v, x.quant_first + q);
                    sc[q] = aq.scale;
                    zp[q] = aq.zero_point;
                }
                d.scale = sc;
                d.zero_point = zp;
                int bad = abm_add_tensor(w, ws, &d, NULL, e);
                free(sc);
                free(zp);
                if (bad) goto done;
            }
            for (uint32_t c = 0; c < st.core_count; c++)
                for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                    AbmStream s = abm_stream(v, net.first_stage + k, c, g);
                    if (abm_set_stream(w, ws, c, g, s.data, (size_t)s.size, e)) goto done;
                }
        }
    }
    if (!abm_writer_has_metadata(w)) {
        AbmMeta m = abm_meta(v);
        if (abm_set_metadata(w, m.producer, m.options, m.source_hash, e)) goto done;
    }
    rc = 0;
done:
    free(tmp);
    free(newoff);
    free(scratch);
    free(cv);
    free(cur);
    return rc;
}
