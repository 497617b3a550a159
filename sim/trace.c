/* trace.c - Chrome trace JSON (loads in Perfetto and chrome://tracing):
 * one process per core (pid = core), one thread per engine (tid = engine),
 * a complete event ("X") per instruction with its disassembly, and flow
 * events ("s"/"f") from each semaphore signal to the wait it released: the
 * start is stamped inside the signalling instruction's slice (enclosing
 * binding), the end at the moment the wait was satisfied, binding to the
 * next slice of the waiting engine, i.e. the instruction that waited (a
 * copy into another cluster's SRAM that signals cores there draws its
 * arrow across clusters; its slice names the clusters and links crossed).
 * Timestamps are microseconds of simulated time (cycles / MHz) printed
 * with fixed precision, so the bytes are deterministic. Each cluster's
 * span of every layer is kept too, for the stage slices of
 * sim_trace_json_ranges. */
#include <stdio.h>
#include <stdlib.h>
#include "sim/sim_int.h"
#include "isa/timing.h"

static void ts(SimBuf *b, const AtlSim *s, uint64_t cycles)
{
    /* exact decimal of cycles / MHz with 6 fractional digits for integral MHz */
    sbuf_printf(b, "%.6f", (double)cycles / s->chip.freq_mhz);
}

void trace_begin(AtlSim *s)
{
    SimBuf *b = &s->trace;
    sbuf_free(b);
    size_t nspan = (size_t)s->chip.clusters * (size_t)s->stats.nlayers;
    free(s->trace_span);
    s->trace_span = malloc((nspan ? nspan : 1) * 2 * sizeof *s->trace_span);
    if (!s->trace_span) { b->oom = 1; return; }
    for (size_t i = 0; i < nspan; i++) { s->trace_span[2 * i] = UINT64_MAX; s->trace_span[2 * i + 1] = 0; }
    sbuf_printf(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"chip\":");
    sbuf_json_str(b, s->chip.name);
    sbuf_printf(b, "},\"traceEvents\":[\n");
    for (int c = 0; c < s->ncores; c++) {
        sbuf_printf(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"core %d (cluster %d)\"}},\n",
                    c, c, c / s->cpc);
        for (int en = 0; en < ISA_NUM_ENGINES; en++)
            sbuf_printf(b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}},\n",
                        c, en, isa_engine_name(en));
    }
}

void trace_insn(AtlSim *s, int core, int engine, int index, const AtlInsn *in, uint64_t start, uint64_t end)
{
    SimBuf *b = &s->trace;
    char dis[256];
    const SimPre *pre = &s->eng[sim_eid(core, engine)].pre[index];   /* its layer and member, decoded */
    if (s->trace_span && pre->layer < s->stats.nlayers && in->op != ISA_OP_END) {
        uint64_t *sp = &s->trace_span[2 * ((size_t)(core / s->cpc) * (size_t)s->stats.nlayers + pre->layer)];
        if (start < sp[0]) sp[0] = start;
        if (end > sp[1]) sp[1] = end;
    }
    sim_disasm(in, dis, sizeof dis);
    sbuf_printf(b, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"ts\":", core, engine, isa_ops[in->op].mnemonic);
    ts(b, s, start);
    sbuf_printf(b, ",\"dur\":");
    ts(b, s, end - start);
    sbuf_printf(b, ",\"args\":{\"index\":%d,\"layer\":%d,", index, pre->layer);
    if (pre->member) sbuf_printf(b, "\"member\":%d,", pre->member - 1);
    sbuf_printf(b, "\"start_cycle\":%llu,\"end_cycle\":%llu,\"insn\":", (unsigned long long)start, (unsigned long long)end);
    sbuf_json_str(b, dis);
    /* a copy to or from another cluster's SRAM: which cluster, and over how many links */
    int peer = isa_ops[in->op].format == ISA_FMT_DMA_COPY
                   ? in->dst_space == ISA_SPACE_PEER ? 0 : in->src_space == ISA_SPACE_PEER ? 1 : -1 : -1;
    if (peer >= 0) {
        int cl = isa_peer_cluster(peer ? in->src : in->dst), own = core / s->cpc;
        sbuf_printf(b, ",\"noc\":{\"from_cluster\":%d,\"to_cluster\":%d,\"hops\":%d}", peer ? cl : own, peer ? own : cl,
                    tim_noc_route(&s->chip, own, cl, NULL));
    }
    sbuf_printf(b, "}},\n");
}

void trace_flow(AtlSim *s, const SimSigRec *from, int core, int engine, int index, uint64_t t)
{
    SimBuf *b = &s->trace;
    uint64_t id = ++s->flow_seq;
    int fc = from->eid / ISA_NUM_ENGINES, fe = from->eid % ISA_NUM_ENGINES;
    sbuf_printf(b, "{\"ph\":\"s\",\"cat\":\"sem\",\"name\":\"signal\",\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":",
                (unsigned long long)id, fc, fe);
    ts(b, s, from->start);  /* inside the signalling slice, so the arrow binds to it */
    sbuf_printf(b, "},\n{\"ph\":\"f\",\"cat\":\"sem\",\"name\":\"signal\",\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":",
                (unsigned long long)id, core, engine);
    ts(b, s, t);
    sbuf_printf(b, ",\"args\":{\"wait_index\":%d,\"signal_index\":%d,\"signal_cycle\":%llu}},\n", index, from->index,
                (unsigned long long)from->time);
}

/* The range slices of sim_trace_json_ranges, into b. */
static void range_slices(SimBuf *b, const AtlSim *s, const AtlSimLayerRange *r, int n)
{
    int nl = s->stats.nlayers;
    for (int k = 0; k < s->chip.clusters && s->trace_span; k++) {
        int named = 0;
        for (int i = 0; i < n; i++) {
            uint64_t first = UINT64_MAX, last = 0;
            for (uint64_t l = r[i].first; l < (uint64_t)r[i].first + r[i].count && l < (uint64_t)nl; l++) {
                const uint64_t *sp = &s->trace_span[2 * ((size_t)k * (size_t)nl + l)];
                if (sp[0] < first) first = sp[0];
                if (sp[1] > last) last = sp[1];
            }
            if (first > last) continue;
            int pid = s->ncores + k;
            if (!named++)
                sbuf_printf(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"cluster %d: stages\"}},\n", pid, k);
            sbuf_printf(b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", pid, i);
            sbuf_json_str(b, r[i].name ? r[i].name : "");
            sbuf_printf(b, "}},\n{\"ph\":\"X\",\"cat\":\"stage\",\"pid\":%d,\"tid\":%d,\"name\":", pid, i);
            sbuf_json_str(b, r[i].name ? r[i].name : "");
            sbuf_printf(b, ",\"ts\":");
            ts(b, s, first);
            sbuf_printf(b, ",\"dur\":");
            ts(b, s, last - first);
            sbuf_printf(b, ",\"args\":{\"layers\":\"%u-%u\",\"start_cycle\":%llu,\"end_cycle\":%llu}},\n", r[i].first,
                        r[i].first + r[i].count - 1, (unsigned long long)first, (unsigned long long)last);
        }
    }
}

char *sim_trace_json(const AtlSim *s) { return sim_trace_json_ranges(s, NULL, 0); }

char *sim_trace_json_ranges(const AtlSim *s, const AtlSimLayerRange *r, int n)
{
    SimBuf b = {0};
    if (s->trace.p) sbuf_put(&b, s->trace.p, s->trace.len);
    else sbuf_printf(&b, "{\"traceEvents\":[\n");
    if (n > 0 && r) range_slices(&b, s, r, n);
    sbuf_printf(&b, "{\"ph\":\"M\",\"name\":\"trace_end\",\"pid\":0,\"args\":{\"cycles\":%llu}}\n]}\n",
                (unsigned long long)s->stats.cycles);
    if (s->trace.oom) { sbuf_free(&b); return NULL; }
    return sbuf_take(&b);
}
