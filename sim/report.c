/* report.c - statistics and reports: the end-of-run figures (utilisation,
 * energy from the config's pJ table), the text report, the stats JSON and
 * the `.expect` checker. The per-instruction accounting they start from is
 * sim/account.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "sim/dram.h"
#include "isa/numerics.h"
#include "isa/area.h"

/* A layer's (or member's) figures from its counts: sync, bound, held, and
 * its span as its cycles. */
static void layer_finish(AtlLayerStats *l)
{
    uint64_t compute = l->busy[ISA_ENGINE_MAT] > l->busy[ISA_ENGINE_VEC] ? l->busy[ISA_ENGINE_MAT] : l->busy[ISA_ENGINE_VEC];
    uint64_t span = l->last - l->first;
    /* sync: the part of the span no engine kind was busy */
    uint64_t busiest = compute > l->busy[ISA_ENGINE_DMA] ? compute : l->busy[ISA_ENGINE_DMA];
    l->stall_sync = span > busiest ? span - busiest : 0;
    l->bound = l->stall_sync > busiest ? "sync" : (l->busy[ISA_ENGINE_DMA] > compute ? "dma" : "compute");
    l->held = 0;
    for (int g = 0; g < ISA_NUM_ENGINES; g++)
        if (l->held_by[g] > l->held) l->held = l->held_by[g];
    l->cycles = span;
}

static uint64_t busy_sum(const AtlLayerStats *l)
{
    uint64_t b = 0;
    for (int g = 0; g < ISA_NUM_ENGINES; g++) b += l->busy[g];
    return b;
}

/* The members m[0..ISA_MAX_MEMBERS) of group g share its span in
 * proportion to their busy cycles (their instructions if none was busy),
 * rounded so that the shares add up to the span exactly: each gets the
 * floor of its exact share, the cycles left go one each to the largest
 * remainders (the first member on ties). */
static void member_shares(const AtlLayerStats *g, AtlLayerStats *m)
{
    __extension__ typedef unsigned __int128 u128;
    uint64_t span = g->last - g->first, total = 0, given = 0, w[ISA_MAX_MEMBERS];
    int by_insns = 1;
    for (int i = 0; i < ISA_MAX_MEMBERS; i++) by_insns &= !m[i].used || !busy_sum(&m[i]);
    for (int i = 0; i < ISA_MAX_MEMBERS; i++) total += w[i] = !m[i].used ? 0 : by_insns ? m[i].insns : busy_sum(&m[i]);
    if (!total) return;
    u128 rem[ISA_MAX_MEMBERS];
    for (int i = 0; i < ISA_MAX_MEMBERS; i++) {
        u128 x = (u128)span * w[i];
        m[i].cycles = (uint64_t)(x / total);
        rem[i] = x % total;
        given += m[i].cycles;
    }
    for (; given < span; given++) {
        int best = -1;
        for (int i = 0; i < ISA_MAX_MEMBERS; i++)
            if (w[i] && (best < 0 || rem[i] > rem[best])) best = i;
        m[best].cycles++;
        rem[best] = 0;
    }
}

void stats_finish(AtlSim *s)
{
    AtlSimStats *st = &s->stats;
    const AtlChip *c = &s->chip;
    memset(st->total, 0, sizeof st->total);
    for (int eid = 0; eid < s->ncores * ISA_NUM_ENGINES; eid++) {
        AtlEngineStats *src = &s->eng[eid].st, *t = &st->total[eid % ISA_NUM_ENGINES];
        st->engine[eid] = *src;
        t->insns += src->insns;
        t->busy += src->busy;
        t->stall_sem += src->stall_sem;
        t->stall_bar += src->stall_bar;
        t->stall_res += src->stall_res;
    }
    st->seconds = (double)st->cycles / (c->freq_mhz * 1e6);
    memset(&st->dram, 0, sizeof st->dram);
    if (s->dd) {
        DramStats d;
        ddma_stats(s, &d);
        st->dram = (AtlSimDram){1, d.reads, d.writes, d.row_hits, d.row_misses, d.row_conflicts, d.acts, d.pres, d.refs,
                                d.reads ? (double)d.read_latency / (double)d.reads : 0};
    }
    double peak = (double)st->cycles * c->mm_rows * c->mm_cols * s->ncores;
    st->mm_util = peak > 0 ? (double)st->macs / peak : 0.0;
    AtlSimEnergy *en = &st->energy;
    en->mac = (double)st->macs_by_dtype[ISA_I8] * c->e_mac_i8 +
              (double)(st->macs_by_dtype[ISA_F16] + st->macs_by_dtype[ISA_BF16]) * c->e_mac_f16 +
              (double)st->macs_by_dtype[ISA_F32] * c->e_mac_f32;
    en->vec = (double)st->vec_elems * c->e_vec_op;
    en->lmem = (double)(st->bytes.lmem_rd + st->bytes.lmem_wr) * c->e_lmem_byte;
    en->sram = (double)(st->bytes.sram_rd + st->bytes.sram_wr) * c->e_sram_byte;
    en->noc = (double)(st->bytes.noc + st->bytes.peer_link) * c->e_noc_byte;   /* every link a byte crosses */
    en->dram = (double)(st->bytes.dram_rd + st->bytes.dram_wr) * c->e_dram_byte;
    en->stat = c->e_static_mw_core * 1e-3 * s->ncores * st->seconds * 1e12;
    en->total = en->mac + en->vec + en->lmem + en->sram + en->noc + en->dram + en->stat;
    for (int i = 0; i < st->nlayers; i++) {
        AtlLayerStats *l = &st->layers[i];
        if (!l->used) continue;
        layer_finish(l);
        if (!st->members) continue;
        AtlLayerStats *m = &st->members[(size_t)i * ISA_MAX_MEMBERS];
        int kind = 0;   /* the engine kind whose sum is the group's held */
        while (l->held_by[kind] != l->held) kind++;
        for (int k = 0; k < ISA_MAX_MEMBERS; k++) {
            if (!m[k].used) continue;
            layer_finish(&m[k]);
            m[k].held = m[k].held_by[kind];   /* its part of the group's: they add up to it */
        }
        member_shares(l, m);
    }
}

const AtlLayerStats *sim_member_stats(const AtlSimStats *st, int layer, int member)
{
    if (!st->members || layer < 0 || layer >= st->nlayers || member < 0 || member >= ISA_MAX_MEMBERS) return NULL;
    const AtlLayerStats *m = &st->members[(size_t)layer * ISA_MAX_MEMBERS + member];
    return m->used ? m : NULL;
}

static void human_bytes(char *buf, size_t cap, uint64_t b)
{
    if (b >= (1ull << 30)) snprintf(buf, cap, "%.2f GiB", (double)b / (1ull << 30));
    else if (b >= (1ull << 20)) snprintf(buf, cap, "%.2f MiB", (double)b / (1ull << 20));
    else if (b >= 1024) snprintf(buf, cap, "%.2f KiB", (double)b / 1024);
    else snprintf(buf, cap, "%llu B", (unsigned long long)b);
}

char *sim_report_text(const AtlSim *s)
{
    const AtlSimStats *st = &s->stats;
    SimBuf b = {0};
    static const char *const mode[] = {"full", "timing", "functional"};
    sbuf_printf(&b, "chip %s: %d clusters x %d cores, %dx%d array, %.0f MHz; mode %s\n", s->chip.name,
                s->chip.clusters, s->cpc, s->chip.mm_rows, s->chip.mm_cols, s->chip.freq_mhz, mode[s->opt.mode]);
    if (s->fault.kind != SIM_FAULT_NONE) sbuf_printf(&b, "FAULT: %s\n", s->fault.msg);
    sbuf_printf(&b, "cycles          %llu (%.3f us)\n", (unsigned long long)st->cycles, st->seconds * 1e6);
    sbuf_printf(&b, "instructions    %llu\n", (unsigned long long)st->insns);
    sbuf_printf(&b, "MACs            %llu; matrix utilisation %.2f%% of peak\n", (unsigned long long)st->macs, st->mm_util * 100);
    sbuf_printf(&b, "\nengine  insns        busy   stall:sem   stall:bar   stall:res  (sums over %d cores)\n", s->ncores);
    for (int en = 0; en < ISA_NUM_ENGINES; en++) {
        const AtlEngineStats *t = &st->total[en];
        sbuf_printf(&b, "%-6s %6llu %11llu %11llu %11llu %11llu\n", isa_engine_name(en), (unsigned long long)t->insns,
                    (unsigned long long)t->busy, (unsigned long long)t->stall_sem, (unsigned long long)t->stall_bar,
                    (unsigned long long)t->stall_res);
    }
    char h[7][32];
    human_bytes(h[0], 32, st->bytes.dram_rd); human_bytes(h[1], 32, st->bytes.dram_wr);
    human_bytes(h[2], 32, st->bytes.sram_rd); human_bytes(h[3], 32, st->bytes.sram_wr);
    human_bytes(h[4], 32, st->bytes.lmem_rd); human_bytes(h[5], 32, st->bytes.lmem_wr);
    human_bytes(h[6], 32, st->bytes.noc);
    sbuf_printf(&b, "\nbytes   DRAM rd %s wr %s | SRAM rd %s wr %s | LMEM rd %s wr %s | NoC %s",
                h[0], h[1], h[2], h[3], h[4], h[5], h[6]);
    if (s->chip.noc_cluster_links) {
        char p[32], l[32];
        human_bytes(p, 32, st->bytes.peer);
        human_bytes(l, 32, st->bytes.peer_link);
        sbuf_printf(&b, " | cluster to cluster %s (%s over links)", p, l);
    }
    sbuf_printf(&b, "\n");
    if (st->dram.banked) {
        const AtlSimDram *d = &st->dram;
        uint64_t all = d->row_hits + d->row_misses + d->row_conflicts;
        sbuf_printf(&b, "dram    %llu reads, %llu writes of %d bytes; rows %llu hits (%.1f%%), %llu misses, %llu conflicts; "
                        "%llu ACT, %llu PRE, %llu REF; read latency %.1f DRAM cycles\n",
                    (unsigned long long)d->reads, (unsigned long long)d->writes, s->chip.dram_access_bytes,
                    (unsigned long long)d->row_hits, all ? 100.0 * (double)d->row_hits / (double)all : 0.0,
                    (unsigned long long)d->row_misses, (unsigned long long)d->row_conflicts, (unsigned long long)d->acts,
                    (unsigned long long)d->pres, (unsigned long long)d->refs, d->read_latency);
    }
    const AtlSimEnergy *e = &st->energy;
    sbuf_printf(&b, "energy  %.3f uJ: MAC %.3f, vector %.3f, LMEM %.3f, SRAM %.3f, NoC %.3f, DRAM %.3f, static %.3f uJ\n",
                e->total * 1e-6, e->mac * 1e-6, e->vec * 1e-6, e->lmem * 1e-6, e->sram * 1e-6, e->noc * 1e-6,
                e->dram * 1e-6, e->stat * 1e-6);
    int any = 0;
    for (int i = 0; i < st->nlayers; i++) any += st->layers[i].used;
    if (any) {
        sbuf_printf(&b, "\nlayer       first        last   insns          MACs   DMA bytes    dma busy    mat busy    vec busy  bound\n");
        for (int i = 0; i < st->nlayers; i++) {
            if (!st->layers[i].used) continue;
            for (int k = -1; k < ISA_MAX_MEMBERS; k++) {   /* the layer, then its members as L.M */
                const AtlLayerStats *l = k < 0 ? &st->layers[i] : sim_member_stats(st, i, k);
                if (!l) continue;
                char id[16];
                if (k < 0) snprintf(id, sizeof id, "%d", i);
                else snprintf(id, sizeof id, "%d.%d", i, k);
                sbuf_printf(&b, "%5s %11llu %11llu %7llu %13llu %11llu %11llu %11llu %11llu  %s\n", id,
                            (unsigned long long)l->first, (unsigned long long)l->last, (unsigned long long)l->insns,
                            (unsigned long long)l->macs, (unsigned long long)l->dma_bytes,
                            (unsigned long long)l->busy[0], (unsigned long long)l->busy[1], (unsigned long long)l->busy[2],
                            l->bound ? l->bound : "-");
            }
        }
    }
    return sbuf_take(&b);
}

/* The figures of a layer or member object of the stats JSON, without braces. */
static void json_layer_fields(SimBuf *b, const AtlLayerStats *l)
{
    sbuf_printf(b, "\"first\":%llu,\"last\":%llu,\"insns\":%llu,\"macs\":%llu,\"dma_bytes\":%llu,"
                "\"dram_bytes\":%llu,\"busy_dma\":%llu,\"busy_mat\":%llu,\"busy_vec\":%llu,\"sync\":%llu,\"bound\":\"%s\","
                "\"held\":%llu", (unsigned long long)l->first, (unsigned long long)l->last,
                (unsigned long long)l->insns, (unsigned long long)l->macs, (unsigned long long)l->dma_bytes,
                (unsigned long long)l->dram_bytes,
                (unsigned long long)l->busy[0], (unsigned long long)l->busy[1], (unsigned long long)l->busy[2],
                (unsigned long long)l->stall_sync, l->bound ? l->bound : "", (unsigned long long)l->held);
}

static void json_engine(SimBuf *b, const AtlEngineStats *t)
{
    sbuf_printf(b, "{\"insns\":%llu,\"busy\":%llu,\"stall_sem\":%llu,\"stall_bar\":%llu,\"stall_res\":%llu}",
                (unsigned long long)t->insns, (unsigned long long)t->busy, (unsigned long long)t->stall_sem,
                (unsigned long long)t->stall_bar, (unsigned long long)t->stall_res);
}

/* What a reader of the stats needs to place them against the chip: clock,
 * cores, array, peak ops/s per matrix dtype and DRAM bandwidth (the roofs
 * of a roofline), and the area model's figures (null without [area]). */
static void json_chip_figures(SimBuf *b, const AtlChip *c)
{
    sbuf_printf(b, "  \"chip_figures\": {\"freq_mhz\":%.9g,\"clusters\":%d,\"cores\":%d,\"mm_rows\":%d,\"mm_cols\":%d,"
                "\"dram_bytes_per_s\":%.9g,\"peak_ops_per_s\":{", c->freq_mhz, c->clusters, cfg_total_cores(c), c->mm_rows,
                c->mm_cols, c->dram_gbps * 1e9);
    int first = 1;
    for (int d = 0; d < ISA_NUM_DTYPES; d++) {
        double ops = cfg_peak_ops_per_s(c, d);
        if (ops <= 0) continue;
        sbuf_printf(b, "%s\"%s\":%.9g", first ? "" : ",", isa_dtype_name(d), ops);
        first = 0;
    }
    sbuf_printf(b, "}},\n  \"area_mm2\": ");
    AtlArea a;
    if (!cfg_area(c, &a)) sbuf_printf(b, "null");
    else {
        sbuf_printf(b, "{\"node\":");
        sbuf_json_str(b, c->area_node);
        for (int p = 0; p < AREA_PARTS; p++) sbuf_printf(b, ",\"%s\":%.6g", area_part_name(p), a.part[p]);
        sbuf_printf(b, ",\"total\":%.6g}", a.total);
    }
    sbuf_printf(b, ",\n");
}

/* The engine-busy timeline (AtlSimTimeline): the buckets up to the end of
 * the run, busy cycles summed over cores. */
static void json_timeline(SimBuf *b, const AtlSimStats *st)
{
    const AtlSimTimeline *t = &st->timeline;
    uint64_t w = t->bucket_cycles ? t->bucket_cycles : 64;
    uint64_t n = (st->cycles + w - 1) / w;
    if (n > SIM_TIMELINE_BUCKETS) n = SIM_TIMELINE_BUCKETS;
    sbuf_printf(b, "  \"timeline\": {\"bucket_cycles\":%llu", (unsigned long long)w);
    for (int g = 0; g < ISA_NUM_ENGINES; g++) {
        sbuf_printf(b, ",\"%s\":[", isa_engine_name(g));
        for (uint64_t i = 0; i < n; i++) sbuf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)t->busy[g][i]);
        sbuf_printf(b, "]");
    }
    sbuf_printf(b, "}\n");
}

char *sim_stats_json(const AtlSim *s)
{
    const AtlSimStats *st = &s->stats;
    SimBuf b = {0};
    static const char *const mode[] = {"full", "timing", "functional"};
    sbuf_printf(&b, "{\n  \"chip\": ");
    sbuf_json_str(&b, s->chip.name);
    sbuf_printf(&b, ",\n  \"mode\": \"%s\",\n  \"fault\": ", mode[s->opt.mode]);
    if (s->fault.kind == SIM_FAULT_NONE) sbuf_printf(&b, "null");
    else {
        sbuf_printf(&b, "{\"kind\":\"%s\",\"core\":%d,\"engine\":\"%s\",\"index\":%d,\"cycle\":%llu,\"disasm\":",
                    sim_fault_name(s->fault.kind), s->fault.core,
                    s->fault.core >= 0 ? isa_engine_name(s->fault.engine) : "", s->fault.index,
                    (unsigned long long)s->fault.time);
        sbuf_json_str(&b, s->fault.disasm);
        sbuf_printf(&b, ",\"message\":");
        sbuf_json_str(&b, s->fault.msg);
        sbuf_printf(&b, "}");
    }
    sbuf_printf(&b, ",\n  \"cycles\": %llu,\n  \"seconds\": %.9g,\n  \"instructions\": %llu,\n  \"events\": %llu,\n",
                (unsigned long long)st->cycles, st->seconds, (unsigned long long)st->insns, (unsigned long long)st->events);
    sbuf_printf(&b, "  \"macs\": %llu,\n  \"mm_utilisation\": %.6f,\n  \"vector_elements\": %llu,\n",
                (unsigned long long)st->macs, st->mm_util, (unsigned long long)st->vec_elems);
    const AtlSimBytes *y = &st->bytes;
    sbuf_printf(&b, "  \"bytes\": {\"dram_rd\":%llu,\"dram_wr\":%llu,\"sram_rd\":%llu,\"sram_wr\":%llu,\"lmem_rd\":%llu,\"lmem_wr\":%llu,\"noc\":%llu,"
                    "\"peer\":%llu,\"peer_link\":%llu},\n",
                (unsigned long long)y->dram_rd, (unsigned long long)y->dram_wr, (unsigned long long)y->sram_rd,
                (unsigned long long)y->sram_wr, (unsigned long long)y->lmem_rd, (unsigned long long)y->lmem_wr,
                (unsigned long long)y->noc, (unsigned long long)y->peer, (unsigned long long)y->peer_link);
    const AtlSimDram *d = &st->dram;
    if (d->banked)
        sbuf_printf(&b, "  \"dram\": {\"model\":\"banked\",\"reads\":%llu,\"writes\":%llu,\"row_hits\":%llu,\"row_misses\":%llu,"
                        "\"row_conflicts\":%llu,\"acts\":%llu,\"pres\":%llu,\"refs\":%llu,\"read_latency_cycles\":%.3f},\n",
                    (unsigned long long)d->reads, (unsigned long long)d->writes, (unsigned long long)d->row_hits,
                    (unsigned long long)d->row_misses, (unsigned long long)d->row_conflicts, (unsigned long long)d->acts,
                    (unsigned long long)d->pres, (unsigned long long)d->refs, d->read_latency);
    else sbuf_printf(&b, "  \"dram\": {\"model\":\"flow\"},\n");
    const AtlSimEnergy *e = &st->energy;
    sbuf_printf(&b, "  \"energy_pj\": {\"mac\":%.6g,\"vector\":%.6g,\"lmem\":%.6g,\"sram\":%.6g,\"noc\":%.6g,\"dram\":%.6g,\"static\":%.6g,\"total\":%.6g},\n",
                e->mac, e->vec, e->lmem, e->sram, e->noc, e->dram, e->stat, e->total);
    json_chip_figures(&b, &s->chip);
    sbuf_printf(&b, "  \"engines\": {");
    for (int en = 0; en < ISA_NUM_ENGINES; en++) {
        sbuf_printf(&b, "%s\"%s\":", en ? "," : "", isa_engine_name(en));
        json_engine(&b, &st->total[en]);
    }
    sbuf_printf(&b, "},\n  \"cores\": [");
    for (int c = 0; c < s->ncores; c++) {
        sbuf_printf(&b, "%s\n    {\"core\":%d", c ? "," : "", c);
        for (int en = 0; en < ISA_NUM_ENGINES; en++) {
            sbuf_printf(&b, ",\"%s\":", isa_engine_name(en));
            json_engine(&b, &st->engine[sim_eid(c, en)]);
        }
        sbuf_printf(&b, "}");
    }
    sbuf_printf(&b, "\n  ],\n  \"layers\": [");
    int first = 1;
    for (int i = 0; i < st->nlayers; i++) {
        const AtlLayerStats *l = &st->layers[i];
        if (!l->used) continue;
        sbuf_printf(&b, "%s\n    {\"layer\":%d,", first ? "" : ",", i);
        json_layer_fields(&b, l);
        int n = 0;
        for (int k = 0; k < ISA_MAX_MEMBERS; k++) {
            const AtlLayerStats *m = sim_member_stats(st, i, k);
            if (!m) continue;
            sbuf_printf(&b, "%s{\"member\":%d,\"cycles\":%llu,", n++ ? "," : ",\"members\":[", k, (unsigned long long)m->cycles);
            json_layer_fields(&b, m);
            sbuf_printf(&b, "}");
        }
        sbuf_printf(&b, "%s}", n ? "]" : "");
        first = 0;
    }
    sbuf_printf(&b, "\n  ],\n");
    json_timeline(&b, st);
    sbuf_printf(&b, "}\n");
    return sbuf_take(&b);
}

char *sim_layers_csv(const AtlSim *s)
{
    const AtlSimStats *st = &s->stats;
    SimBuf b = {0};
    sbuf_printf(&b, "layer,first,last,cycles,insns,macs,dma_bytes,dram_bytes,busy_dma,busy_mat,busy_vec,sync,bound,held,member\n");
    for (int i = 0; i < st->nlayers; i++) {
        if (!st->layers[i].used) continue;
        for (int k = -1; k < ISA_MAX_MEMBERS; k++) {   /* the layer, then its members */
            const AtlLayerStats *l = k < 0 ? &st->layers[i] : sim_member_stats(st, i, k);
            if (!l) continue;
            char member[16] = "";
            if (k >= 0) snprintf(member, sizeof member, "%d", k);
            sbuf_printf(&b, "%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%s,%llu,%s\n", i,
                        (unsigned long long)l->first, (unsigned long long)l->last, (unsigned long long)l->cycles,
                        (unsigned long long)l->insns, (unsigned long long)l->macs, (unsigned long long)l->dma_bytes,
                        (unsigned long long)l->dram_bytes, (unsigned long long)l->busy[0], (unsigned long long)l->busy[1],
                        (unsigned long long)l->busy[2], (unsigned long long)l->stall_sync, l->bound ? l->bound : "",
                        (unsigned long long)l->held, member);
        }
    }
    return sbuf_take(&b);
}

int sim_check_expect(AtlSim *s, const AtlProgram *p, char **report)
{
    SimBuf b = {0};
    int bad = 0;
    for (int r = 0; r < p->nregions; r++) {
        const AtlRegion *g = &p->regions[r];
        if (!g->expect) continue;
        int es = isa_dtype_size(g->dtype);
        uint64_t n = 1;
        for (int d = 0; d < g->ndim && d < 4; d++) n *= g->shape[d];
        const uint8_t *got = es ? sim_dram(s, g->addr, n * (uint64_t)es) : NULL;
        if (!got) { bad++; sbuf_printf(&b, "expect %s: FAIL: region outside DRAM or bad dtype\n", g->name); continue; }
        uint64_t mism = 0, firsti = 0;
        double gv0 = 0, ev0 = 0;
        for (uint64_t i = 0; i < n; i++) {
            double gv = num_load_f64(got + i * (uint64_t)es, g->dtype), ev = num_load_f64(g->expect + i * (uint64_t)es, g->dtype);
            int ok = num_is_float(g->dtype) ? ((isnan(gv) && isnan(ev)) || gv == ev || fabs(gv - ev) <= g->tolerance)
                                            : gv == ev;
            if (!ok) { if (!mism) { firsti = i; gv0 = gv; ev0 = ev; } mism++; }
        }
        if (mism) {
            bad++;
            sbuf_printf(&b, "expect %s: FAIL: %llu of %llu elements differ; first at %llu: got %.9g, expected %.9g\n", g->name,
                        (unsigned long long)mism, (unsigned long long)n, (unsigned long long)firsti, gv0, ev0);
        } else {
            sbuf_printf(&b, "expect %s: pass (%llu elements)\n", g->name, (unsigned long long)n);
        }
    }
    if (report) *report = sbuf_take(&b); else sbuf_free(&b);
    return bad;
}
