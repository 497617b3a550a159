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
 * with fixed precision, so the bytes are deterministic. */
#include <stdio.h>
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
    sim_disasm(in, dis, sizeof dis);
    sbuf_printf(b, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"ts\":", core, engine, isa_ops[in->op].mnemonic);
    ts(b, s, start);
    sbuf_printf(b, ",\"dur\":");
    ts(b, s, end - start);
    sbuf_printf(b, ",\"args\":{\"index\":%d,\"layer\":%d,\"start_cycle\":%llu,\"end_cycle\":%llu,\"insn\":", index, in->layer,
                (unsigned long long)start, (unsigned long long)end);
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

char *sim_trace_json(const AtlSim *s)
{
    SimBuf b = {0};
    if (s->trace.p) sbuf_put(&b, s->trace.p, s->trace.len);
    else sbuf_printf(&b, "{\"traceEvents\":[\n");
    sbuf_printf(&b, "{\"ph\":\"M\",\"name\":\"trace_end\",\"pid\":0,\"args\":{\"cycles\":%llu}}\n]}\n",
                (unsigned long long)s->stats.cycles);
    if (s->trace.oom) { sbuf_free(&b); return NULL; }
    return sbuf_take(&b);
}
