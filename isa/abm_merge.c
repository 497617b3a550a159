/* abm_merge.c - adds the nets and variants of a decoded model to a writer:
 * the library half of `atoll inspect --combine`. Weights go through
 * abm_add_weight, so blobs shared by both models are stored once; tensor
 * offsets are moved with their blob, and so are the weight addresses in the
 * command streams (DMA operands tagged as weights, docs/firmware.md
 * "Relocation convention"). Everything is checked before the writer is
 * touched, so a refused merge leaves it unchanged.
 */
#include "isa/abm.h"
#include "isa/isa.h"
#include "isa/regs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte extent [lo, hi) of a DMA operand relative to its address. */
static void dma_extent(const AtlInsn *in, const int32_t *stride, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) {
        if (in->shape[d] == 0) { *lo = *hi = 0; return; }
        int64_t span = (int64_t)(in->shape[d] - 1) * stride[d];
        if (span < 0) *lo += span; else *hi += span;
    }
}

/* Moves one weight-tagged DRAM operand with its blob. */
static int move_weight_addr(const AbmView *v, const uint64_t *newoff, const AtlInsn *in, uint64_t *addr,
                            const int32_t *stride, const char *where, AtlErr *e)
{
    uint64_t off = *addr & 0xFFFFFFFFull;
    int64_t lo, hi;
    dma_extent(in, stride, &lo, &hi);
    uint32_t a = 0, b = v->n_blobs;          /* last blob starting at or before off */
    while (b - a > 1) {
        uint32_t mid = a + (b - a) / 2;
        if (abm_blob(v, mid).dram_offset <= off) a = mid; else b = mid;
    }
    AbmBlob blob = v->n_blobs ? abm_blob(v, a) : (AbmBlob){0};
    if (!v->n_blobs || blob.dram_offset > off || (int64_t)off + lo < (int64_t)blob.dram_offset ||
        (int64_t)off + hi > (int64_t)(blob.dram_offset + blob.raw_size))
        return atl_fail(e, "%s: weights bytes [%lld, %lld) are not inside one weight blob, so they cannot follow it",
                        where, (long long)off + lo, (long long)off + hi);
    *addr = ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, newoff[a] + (off - blob.dram_offset));
    return 0;
}

/* A copy of stream bytes with every weight-tagged DRAM operand moved to its
 * blob's new offset (records that do not decode are copied as they are).
 * *out is malloc'd (caller frees). */
static int relocate_stream(const AbmView *v, const uint64_t *newoff, AbmStream s, uint32_t variant, uint32_t core,
                           uint32_t engine, uint8_t **out, AtlErr *e)
{
    uint8_t *buf = malloc(s.size ? (size_t)s.size : 1);
    if (!buf) return atl_fail(e, "out of memory");
    memcpy(buf, s.data, (size_t)s.size);
    for (uint64_t i = 0; i < s.size / ABM_INSN_BYTES; i++) {
        uint8_t *rec = buf + i * ABM_INSN_BYTES;
        AtlInsn in;
        char where[160];
        /* The container treats records as opaque: one that does not decode
         * has no operand we could move, and the device will refuse it. */
        if (isa_decode(rec, &in, NULL)) continue;
        int moved = 0;
        const AtlFormatInfo *f = &isa_formats[isa_ops[in.op].format];
        for (int k = 0; k < f->nfields; k++) {
            int id = f->fields[k].field;
            if (isa_fields[id].kind != ISA_K_ADDR) continue;
            int dst = id == ISA_F_DST;
            uint64_t *addr = dst ? &in.dst : &in.src;
            if ((dst ? in.dst_space : in.src_space) != ISA_SPACE_DRAM || (*addr >> ATL_RELOC_SHIFT) != ABM_REGION_WEIGHTS + 1) continue;
            snprintf(where, sizeof where, "merge: variant %u core %u engine %s instruction %llu", variant, core,
                     abm_engine_name(engine), (unsigned long long)i);
            if (move_weight_addr(v, newoff, &in, addr, dst ? in.dst_stride : in.src_stride, where, e)) { free(buf); return -1; }
            moved = 1;
        }
        if (moved) {
            memset(rec, 0, ABM_INSN_BYTES);
            if (isa_encode(&in, rec, e)) { free(buf); return atl_err_prefix(e, "%s", where); }
        }
    }
    *out = buf;
    return 0;
}

/* Does the view's variant vs have the same inputs (count, dtype, shape) as the
 * view's variant of other? Works on two views or the same one. */
static int same_inputs(const AbmView *a, uint32_t sa, const AbmView *b, uint32_t sb)
{
    AbmVariant x = abm_variant(a, sa), y = abm_variant(b, sb);
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
    /* Serialise what w holds so far and compare variants through the reader. */
    uint8_t *cur = NULL;
    size_t cur_n = 0;
    AbmView *cv = NULL;
    uint8_t *scratch = NULL;
    uint64_t *newoff = NULL;
    uint8_t *tmp = NULL;
    int rc = -1, moved = 0;       /* some blob lands at another offset */
    uint64_t chip = abm_writer_chip(w);
    if (chip != v->chip_fingerprint)
        return atl_fail(e, "cannot combine models for different chips: fingerprint 0x%llx vs 0x%llx",
                        (unsigned long long)chip, (unsigned long long)v->chip_fingerprint);
    if (abm_writer_variant_count(w) > 0) {
        if (abm_serialize(w, &cur, &cur_n, e)) goto done;
        if (!(cv = malloc(sizeof *cv))) { atl_fail(e, "out of memory"); goto done; }
        if (abm_open(cv, cur, cur_n, 0, 0, e)) goto done;
        if (!(scratch = malloc(cv->scratch_needed))) { atl_fail(e, "out of memory"); goto done; }
        if (abm_decode(cv, scratch, cv->scratch_needed, e)) goto done;
        for (uint32_t s = 0; s < v->n_variants; s++) {
            AbmVariant st = abm_variant(v, s);
            const char *net = abm_net(v, st.net).name;
            int cn = abm_find_net(cv, net);
            if (cn < 0) continue;
            AbmNet c = abm_net(cv, (uint32_t)cn);
            for (uint32_t k = 0; k < c.variant_count; k++)
                if (same_inputs(cv, c.first_variant + k, v, s))
                    { atl_fail(e, "duplicate variant: net '%s' batch %u with the same input shapes is in both models", net, st.batch); goto done; }
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
        if (newoff[i] != b.dram_offset) moved = 1;
    }
    for (uint32_t n = 0; n < v->n_nets; n++) {
        AbmNet net = abm_net(v, n);
        uint32_t wn;
        if (abm_writer_find_net(w, net.name, &wn) && abm_add_net(w, net.name, &wn, e)) goto done;
        for (uint32_t k = 0; k < net.variant_count; k++) {
            AbmVariant st = abm_variant(v, net.first_variant + k);
            uint32_t ws;
            if (abm_add_variant(w, wn, st.batch, st.core_count, &ws, e) ||
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
                    AbmStream s = abm_stream(v, net.first_variant + k, c, g);
                    if (!moved) {
                        if (abm_set_stream(w, ws, c, g, s.data, (size_t)s.size, e)) goto done;
                        continue;
                    }
                    if (relocate_stream(v, newoff, s, net.first_variant + k, c, g, &tmp, e)) goto done;
                    if (abm_set_stream(w, ws, c, g, tmp, (size_t)s.size, e)) goto done;
                    free(tmp);
                    tmp = NULL;
                }
            for (uint32_t l = 0; l < v->n_layers; l++) {
                AbmLayer row = abm_layer(v, l);
                if (row.variant == net.first_variant + k && abm_add_layer(w, ws, &row, e)) goto done;
            }
            for (uint32_t l = 0; l < v->n_stages; l++) {
                AbmStage row = abm_stage(v, l);
                if (row.variant == net.first_variant + k && abm_add_stage(w, ws, &row, e)) goto done;
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
