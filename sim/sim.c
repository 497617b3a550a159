/* sim.c - the simulated chip and its run loop: creation from an AtlChip,
 * program loading, and the event-driven execution of every core's three
 * engines (in-order queues that meet only at semaphores and barriers).
 *
 * Events: EV_ISSUE (an engine tries its next instruction), EV_COMPLETE (the
 * current instruction finishes: its result is applied, semaphores signalled,
 * the next one issued), EV_DMA_CHECK (a DMA transfer's projected delivery:
 * it completes, or re-projects if other transfers joined its resources
 * since), EV_BARRIER (a full barrier releases its waiters). A DMA joins
 * the resources on its path when it starts (no event of its own). An instruction's inputs
 * cannot change while it is in flight without the race detector stopping
 * the run, so computing the result at completion equals reading at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "sim/account.h"
#include "isa/timing.h"
#include "util/limits.h"
#include "util/zmem.h"

void sim_options_default(AtlSimOptions *o)
{
    memset(o, 0, sizeof *o);
    o->mode = SIM_MODE_FULL;
    o->max_cycles = 0;
}

void sim_free(AtlSim *s)
{
    if (!s) return;
    if (s->core)
        for (int i = 0; i < s->ncores; i++) atl_zmem_free(s->core[i].lmem, (size_t)s->chip.lmem_bytes);
    free(s->core);
    if (s->eng)
        for (int i = 0; i < s->ncores * ISA_NUM_ENGINES; i++) { free(s->eng[i].pre); free(s->eng[i].plan); }
    free(s->eng);
    atl_zmem_free(s->dram, (size_t)s->chip.dram_bytes);
    if (s->sram)
        for (int i = 0; i < s->chip.clusters; i++) atl_zmem_free(s->sram[i], (size_t)s->chip.sram_bytes + 1);
    free(s->sram);
    free(s->servers);
    for (int i = 0; s->ps && i < s->nps; i++) free(s->ps[i].mem);
    free(s->ps);
    free(s->uses);
    free(s->chan_work[0]);
    free(s->chan_work[1]);
    free(s->chan_list[0]);
    free(s->chan_list[1]);
    free(s->chan_bursts[0]);
    free(s->chan_bursts[1]);
    free(s->bar);
    free(s->race_far);
    free(s->race_mem);
    free(s->race_pos);
    free(s->race_geo);
    free(s->chan_bytes);
    free(s->chan_touched);
    dma_memo_free(&s->dma_memo);
    free(s->scratch);
    free(s->stats.engine);
    free(s->stats.layers);
    free(s->stats.members);
    ddma_free(s);
    evq_free(&s->q);
    sbuf_free(&s->trace);
    free(s->trace_span);
    free(s);
}

AtlSim *sim_create(const AtlChip *chip, const AtlSimOptions *opt, AtlErr *e)
{
    if (chip->clusters < 1 || chip->cores_per_cluster < 1 || chip->cores_per_cluster > CFG_MAX_CORES_PER_CLUSTER ||
        chip->semaphores < 1 || chip->semaphores > ISA_MAX_SEMAPHORES || chip->lmem_banks < 1 || chip->lmem_banks > 256 ||
        chip->lmem_bytes < 1 || chip->dram_bytes < 1 || chip->dram_channels < 1 || chip->sram_ports < 1 ||
        chip->freq_mhz <= 0 || chip->dram_gbps <= 0 || chip->dma_burst_bytes < 1 || chip->mm_rows < 1 || chip->mm_cols < 1 ||
        chip->vec_lanes < 1 || chip->lmem_bank_width < 1 || chip->dram_interleave < 1) {
        atl_fail(e, "sim: chip '%s' has an invalid configuration (run it through cfg_validate)", chip->name);
        return NULL;
    }
    AtlSim *s = calloc(1, sizeof *s);
    if (!s) { atl_fail(e, "sim: out of memory"); return NULL; }
    s->chip = *chip;
    if (opt) s->opt = *opt; else sim_options_default(&s->opt);
    s->cpc = chip->cores_per_cluster;
    s->ncores = chip->clusters * s->cpc;
    s->max_cycles = s->opt.max_cycles ? s->opt.max_cycles : 1000000000000ull;
    if (!s->opt.max_work) s->opt.max_work = atl_limit(ATL_LIMIT_SIM_WORK);
    int nb = chip->lmem_banks, ok = 1;
    s->core = calloc((size_t)s->ncores, sizeof *s->core);
    s->eng = calloc((size_t)s->ncores * ISA_NUM_ENGINES, sizeof *s->eng);
    /* the memories cost host RAM only where a run touches them (util/zmem.h) */
    s->dram = atl_zmem_alloc((size_t)chip->dram_bytes);
    s->sram = calloc((size_t)chip->clusters, sizeof *s->sram);
    s->servers = calloc((size_t)s->ncores * (size_t)nb, sizeof *s->servers);
    /* DMA servers: channels, NoC in and out per cluster, SRAM per cluster, LMEM port per core */
    s->ps_noc_in = chip->dram_channels;
    s->ps_noc_out = s->ps_noc_in + chip->clusters;
    s->ps_sram = s->ps_noc_out + chip->clusters;
    s->ps_port = s->ps_sram + chip->clusters;
    s->ps_link = s->ps_port + s->ncores;
    s->nps = s->ps_link + (chip->noc_cluster_links ? chip->clusters * TIM_NOC_DIRS : 0);
    s->ps = calloc((size_t)s->nps, sizeof *s->ps);
    /* a transfer's servers: channels of both ends, ports, SRAMs, links, NoC in and out */
    s->maxuse = 2 * chip->dram_channels + s->cpc + 4 + (chip->noc_cluster_links ? TIM_NOC_MAX_HOPS : 0);
    s->uses = calloc((size_t)s->ncores * ISA_NUM_ENGINES * (size_t)s->maxuse, sizeof *s->uses);
    for (int i = 0; i < 2; i++) {
        s->chan_work[i] = calloc((size_t)chip->dram_channels, sizeof *s->chan_work[i]);
        s->chan_list[i] = calloc((size_t)chip->dram_channels, sizeof *s->chan_list[i]);
        s->chan_bursts[i] = calloc((size_t)chip->dram_channels, sizeof *s->chan_bursts[i]);
    }
    s->bar = calloc((size_t)(chip->clusters + 1) * 256, sizeof *s->bar);
    s->chan_bytes = calloc((size_t)chip->dram_channels, sizeof *s->chan_bytes);
    s->chan_touched = calloc((size_t)chip->dram_channels, sizeof *s->chan_touched);
    s->stats.engine = calloc((size_t)s->ncores * ISA_NUM_ENGINES, sizeof *s->stats.engine);
    ok = race_init(s) == 0 && s->core && s->eng && s->dram && s->sram && s->servers && s->bar && s->stats.engine && s->chan_bytes && s->chan_touched &&
         s->ps && s->uses && s->chan_work[0] && s->chan_work[1] && s->chan_list[0] && s->chan_list[1] &&
         s->chan_bursts[0] && s->chan_bursts[1];
    /* room for one transfer per DMA engine, and as many ghosts (grows if needed) */
    for (int i = 0; ok && i < s->nps; i++) {
        s->ps[i].cap = 2 * s->ncores;
        ok = (s->ps[i].mem = s->ps[i].job = calloc((size_t)s->ps[i].cap, sizeof *s->ps[i].job)) != NULL;
    }
    for (int i = 0; ok && i < chip->clusters; i++) ok = (s->sram[i] = atl_zmem_alloc((size_t)chip->sram_bytes + 1)) != NULL;
    for (int i = 0; ok && i < s->ncores; i++) {
        SimCore *c = &s->core[i];
        c->lmem = atl_zmem_alloc((size_t)chip->lmem_bytes);
        c->banks = s->servers ? s->servers + (size_t)i * nb : NULL;
        c->capinfl = ISA_NUM_ENGINES * s->cpc;
        ok = c->lmem && c->banks;
    }
    if (!ok) { sim_free(s); atl_fail(e, "sim: out of memory for chip '%s'", chip->name); return NULL; }
    if (chip->dram_model == CFG_DRAM_BANKED) {
        if (chip->dram_access_bytes < 1 || chip->dram_tck_ps < 1 || chip->dram_queue_depth < 1 || chip->dram_ranks < 1 ||
            chip->dram_bankgroups < 1 || chip->dram_banks < 1 || chip->dram_rows < 1 || chip->dram_row_bytes < chip->dram_access_bytes) {
            sim_free(s);
            atl_fail(e, "sim: chip '%s' has an invalid [dram_device] (run it through cfg_validate)", chip->name);
            return NULL;
        }
        if (ddma_create(s, e)) { sim_free(s); return NULL; }
    }
    s->il_shift = s->bank_shift = -1;
    for (int i = 0; i < 31; i++) {
        if ((1 << i) == chip->dram_interleave && !(chip->dram_channels & (chip->dram_channels - 1))) s->il_shift = i;
        if ((1 << i) == chip->lmem_bank_width && !(chip->lmem_banks & (chip->lmem_banks - 1))) s->bank_shift = i;
    }
    return s;
}

/* Puts every resource, engine, semaphore and counter back to time 0. */
static void sim_reset(AtlSim *s)
{
    const AtlChip *c = &s->chip;
    mem_reset(s);
    if (s->dd) ddma_reset(s);
    for (int i = 0; i < c->clusters; i++) atl_zmem_zero(s->sram[i], (size_t)c->sram_bytes + 1);
    for (int i = 0; i < s->ncores; i++) {
        SimCore *k = &s->core[i];
        atl_zmem_zero(k->lmem, (size_t)c->lmem_bytes);
        memset(k->sem, 0, sizeof k->sem);
        memset(k->sigq_n, 0, sizeof k->sigq_n);
        memset(k->sigq_head, 0, sizeof k->sigq_head);
        for (int b = 0; b < c->lmem_banks; b++) k->banks[b] = (SimServer){0};
        k->banks_free = 0;
        k->ninfl = 0;
    }
    race_reset(s);
    for (int i = 0; i < (c->clusters + 1) * 256; i++) s->bar[i] = (SimBarrier){0, -1};
    evq_reset(&s->q);
    s->now = 0;
    s->work_left = s->opt.max_work;
    s->done_engines = 0;
    s->flow_seq = 0;
    memset(&s->fault, 0, sizeof s->fault);
    AtlEngineStats *es = s->stats.engine;
    AtlLayerStats *ls = s->stats.layers, *ms = s->stats.members;
    int nl = s->stats.nlayers;
    memset(&s->stats, 0, sizeof s->stats);
    memset(es, 0, (size_t)s->ncores * ISA_NUM_ENGINES * sizeof *es);
    s->stats.engine = es;
    s->stats.layers = ls;
    s->stats.members = ms;
    s->stats.nlayers = nl;
    s->stats.ncores = s->ncores;
    sbuf_free(&s->trace);
}

/* A DMA transfer that needs more cycles than the limit even at the chip's
 * highest bandwidth can never complete in time: it faults when reached,
 * without planning its bursts (whose host work grows with its size).
 * Returns 1 (and the fault) when so, else 0. Functional runs take no time. */
static int dma_within_limits(const AtlSim *s, const AtlInsn *in, const SimPre *pre, AtlSimFaultKind *kind, char *msg,
                             size_t cap)
{
    if (s->opt.mode == SIM_MODE_FUNCTIONAL) return 0;
    const AtlChip *c = &s->chip;
    double bw = c->dram_channels * tim_dram_channel_bytes_per_cycle(c), x;
    if ((x = (double)c->sram_ports * c->sram_bytes_per_cycle) > bw) bw = x;
    if ((x = (double)c->noc_bytes_per_cycle) > bw) bw = x;
    if ((x = (double)c->dma_lmem_bytes_per_cycle) > bw) bw = x;
    if (c->noc_cluster_links && (x = (double)c->noc_link_bytes_per_cycle) > bw) bw = x;
    double least = (double)pre->bytes / bw;
    if (least <= (double)s->max_cycles) return 0;
    *kind = SIM_FAULT_MAX_CYCLES;
    snprintf(msg, cap, "%s: moving %llu bytes takes at least %.0f cycles (at %g bytes/cycle, the chip's highest "
             "bandwidth), past the limit of %llu cycles (--max-cycles)", isa_ops[in->op].mnemonic,
             (unsigned long long)pre->bytes, least, bw, (unsigned long long)s->max_cycles);
    return 1;
}

/* Layer group members: an instruction of a layer whose other
 * instructions carry member tags (isa_member_tag) but carries none itself
 * (the emitter's waits, hand-overs and barriers) belongs to the member of
 * the next tagged instruction of its layer in its stream, the work it
 * waits for, or after the last one to the member of the previous; in a
 * stream without any of the layer's tagged instructions, to the layer's
 * last member (the one that ends the group). So every instruction of a
 * group counts for one member. Returns 1 when some instruction has a
 * member, -1 when out of memory. */
static int inherit_members(AtlSim *s)
{
    int any = 0;
    uint8_t *last = calloc((size_t)s->stats.nlayers, 1);   /* 1 + each layer's last member */
    if (!last) return -1;
    for (int eid = 0; eid < s->ncores * ISA_NUM_ENGINES; eid++) {
        SimEngine *en = &s->eng[eid];
        for (int i = 0; i < en->bad_index && i < en->count; i++)
            if (en->pre[i].member > last[en->pre[i].layer]) last[en->pre[i].layer] = en->pre[i].member;
    }
    for (int eid = 0; eid < s->ncores * ISA_NUM_ENGINES; eid++) {
        SimEngine *en = &s->eng[eid];
        int n = en->bad_index < en->count ? en->bad_index : en->count, layer = -1, member = 0;
        for (int i = n - 1; i >= 0; i--) {   /* the next tagged one */
            SimPre *p = &en->pre[i];
            if (p->layer != layer) { layer = p->layer; member = 0; }
            if (p->member) member = p->member;
            else p->member = (uint8_t)member;
        }
        layer = -1;
        for (int i = 0; i < n; i++) {        /* after the last: the previous */
            SimPre *p = &en->pre[i];
            if (p->layer != layer) { layer = p->layer; member = 0; }
            if (p->member) member = p->member;
            else p->member = (uint8_t)(member ? member : last[p->layer]);
            any |= p->member != 0;
        }
    }
    free(last);
    return any;
}

int sim_load(AtlSim *s, const AtlProgram *p, AtlErr *e)
{
    s->loaded = 0;
    if (p->ncores > s->ncores || p->ncores < 1)
        return atl_fail(e, "%s: program uses %d cores but chip '%s' has %d", p->source, p->ncores, s->chip.name, s->ncores);
    for (int i = 0; i < p->nsegs; i++) {
        const AtlDataSeg *g = &p->segs[i];
        if (g->addr > (uint64_t)s->chip.dram_bytes || g->size > (uint64_t)s->chip.dram_bytes - g->addr)
            return atl_fail(e, "%s: data segment '%s' [0x%llx, +%zu) does not fit the %d-byte DRAM", p->source, g->name,
                            (unsigned long long)g->addr, g->size, s->chip.dram_bytes);
    }
    sim_reset(s);
    int maxlayer = 0;
    for (int eid = 0; eid < s->ncores * ISA_NUM_ENGINES; eid++) {
        SimEngine *en = &s->eng[eid];
        static const AtlStream none;
        const AtlStream *st = eid < p->ncores * ISA_NUM_ENGINES ? &p->streams[eid] : &none;
        free(en->pre);
        free(en->plan);
        memset(en, 0, sizeof *en);
        en->use = en->scratch = s->uses + (size_t)eid * s->maxuse;
        if (!st->count) { en->state = ST_DONE; s->done_engines++; } /* nothing to run: ended */
        en->insns = st->insns;
        en->lines = st->src_line;
        en->count = st->count;
        en->bad_index = st->count;
        en->next_waiter = -1;
        en->pre = calloc((size_t)st->count + 1, sizeof *en->pre);
        if (!en->pre) return atl_fail(e, "sim: out of memory");
        for (int i = 0; i < st->count; i++) {
            if ((int)isa_tag_layer(st->insns[i].layer) > maxlayer) maxlayer = (int)isa_tag_layer(st->insns[i].layer);
            if (sim_check_insn(s, eid / ISA_NUM_ENGINES, eid % ISA_NUM_ENGINES, &st->insns[i], &en->pre[i],
                               &en->bad_kind, en->bad_msg, sizeof en->bad_msg)) {
                en->bad_index = i;
                break;
            }
            int op = st->insns[i].op;
            if (isa_ops[op].engine == ISA_ENGINE_DMA && eid % ISA_NUM_ENGINES == ISA_ENGINE_DMA) {
                /* a transfer that cannot end in time or whose plan would take too
                 * long on the host faults when reached, unplanned */
                int r = dma_within_limits(s, &st->insns[i], &en->pre[i], &en->bad_kind, en->bad_msg, sizeof en->bad_msg);
                if (!r) r = mem_dma_plan(s, eid / ISA_NUM_ENGINES, ISA_ENGINE_DMA, &st->insns[i], &en->pre[i]);
                if (r < 0) return atl_fail(e, "sim: out of memory");
                if (r > 0) {
                    if (r == 2) {
                        en->bad_kind = SIM_FAULT_WORK;
                        snprintf(en->bad_msg, sizeof en->bad_msg, "%s: planning the bursts of its %llu bytes would pass the host work "
                                 "limit of %llu (--max-work, ATOLL_MAX_SIM_WORK)", isa_ops[op].mnemonic,
                                 (unsigned long long)sim_exec_work(&en->pre[i]), (unsigned long long)s->opt.max_work);
                    }
                    en->bad_index = i;
                    break;
                }
            }
            if (op == ISA_OP_END) break; /* nothing after `end` runs */
        }
    }
    if (mem_dma_mark_exclusive(s)) return atl_fail(e, "sim: out of memory");
    free(s->stats.layers);
    free(s->stats.members);
    s->stats.members = NULL;
    s->stats.nlayers = maxlayer + 1;
    s->stats.layers = calloc((size_t)s->stats.nlayers, sizeof *s->stats.layers);
    if (!s->stats.layers) return atl_fail(e, "sim: out of memory");
    int grouped = inherit_members(s);
    if (grouped < 0 || (grouped && !(s->stats.members = calloc((size_t)s->stats.nlayers * ISA_MAX_MEMBERS, sizeof *s->stats.members))))
        return atl_fail(e, "sim: out of memory");
    for (int i = 0; i < p->nsegs; i++) memcpy(s->dram + p->segs[i].addr, p->segs[i].bytes, p->segs[i].size);
    s->prog = p;
    s->loaded = 1;
    return 0;
}

/* ------------------------------------------------------------- events */

/* The run loop leaves the event it is handling at the heap's root until the
 * handler is done (s->live_top); the handler's first new event takes its
 * place in one sift (same order as popping first, then pushing: keys are
 * unique), and the loop pops the root only if nothing replaced it. */
static void sim_push(AtlSim *s, uint64_t t, uint32_t kind, uint32_t arg)
{
    if (s->live_top) { evq_replace_top(&s->q, t, kind, arg); s->live_top = 0; }
    else evq_push(&s->q, t, kind, arg);
}

/* The earliest event still to come (not the one being handled). */
static const SimEvent *next_event(const AtlSim *s)
{
    return s->live_top ? evq_second(&s->q) : evq_top(&s->q);
}

/* ---------------------------------------------------------------- sync */

SIM_HOT static void wake_sem(AtlSim *s, int core, int sid, uint64_t t)
{
    for (int en = 0; en < ISA_NUM_ENGINES; en++) {
        SimEngine *e = &s->eng[sim_eid(core, en)];
        if (e->state == ST_WAIT_SEM && e->blocked_sem == sid) sim_push(s, t, EV_ISSUE, (uint32_t)sim_eid(core, en));
    }
}

SIM_HOT static void signal_one(AtlSim *s, int core, int sid, int eid, int index, uint64_t t)
{
    SimCore *c = &s->core[core];
    c->sem[sid]++;
    if (s->opt.trace) {
        int slot = (c->sigq_head[sid] + c->sigq_n[sid]) % SIM_SIGQ;
        if (c->sigq_n[sid] == SIM_SIGQ) c->sigq_head[sid] = (uint8_t)((c->sigq_head[sid] + 1) % SIM_SIGQ);
        else c->sigq_n[sid]++;
        c->sigq[sid][slot] = (SimSigRec){eid, index, s->eng[eid].t_start, t};
    }
    wake_sem(s, core, sid, t);
}

SIM_HOT static void do_signal(AtlSim *s, int core, int engine, const SimPre *pre, int index, uint64_t t)
{
    if (!pre->signal) return;
    int sid = pre->signal - 1, eid = sim_eid(core, engine);
    if (engine == ISA_ENGINE_DMA && (pre->dst_space == ISA_SPACE_LMEM || pre->dst_space == ISA_SPACE_PEER) && pre->mask &&
        (pre->op == ISA_OP_DMA_COPY || pre->op == ISA_OP_DMA_FILL)) {
        /* the cores of the mask: in the own cluster (LMEM multicast), or in the
         * destination's (a peer copy: its data has landed there) */
        int base = (pre->dst_space == ISA_SPACE_PEER ? pre->peer : core / s->cpc) * s->cpc;
        for (int i = 0; i < s->cpc; i++)
            if (pre->mask >> i & 1) signal_one(s, base + i, sid, eid, index, t);
    } else {
        signal_one(s, core, sid, eid, index, t);
    }
}

/* -------------------------------------------------------------- engines */

SIM_HOT static void engine_try(AtlSim *s, int eid, uint64_t t);

/* Completes the engine's current instruction at time t; the caller then
 * issues the next one with engine_try (no recursion: streams can be long). */
SIM_HOT static void engine_complete(AtlSim *s, int eid, uint64_t t)
{
    SimEngine *e = &s->eng[eid];
    int core = eid / ISA_NUM_ENGINES, en = eid % ISA_NUM_ENGINES;
    const SimPre *pre = &e->pre[e->pc];
    if (s->opt.mode != SIM_MODE_TIMING && sim_exec_table[pre->op](s, core, &e->insns[e->pc])) {
        sim_raise(s, SIM_FAULT_DATA, core, en, e->pc, "%s", s->exec_msg);
        return;
    }
    if (pre->nr && s->opt.mode != SIM_MODE_FUNCTIONAL) race_end(s, core, en, pre);
    stats_account(s, core, en, pre, e->t_start, t);
    if (s->opt.trace) trace_insn(s, core, en, e->pc, &e->insns[e->pc], e->t_start, t);
    do_signal(s, core, en, pre, e->pc, t);
    e->pc++;
    e->state = ST_READY;
}

static void barrier_arrive(AtlSim *s, int eid, const AtlInsn *in, uint64_t t)
{
    SimEngine *e = &s->eng[eid];
    int core = eid / ISA_NUM_ENGINES;
    int slot = (in->scope == ISA_SCOPE_CHIP ? s->chip.clusters : core / s->cpc) * 256 + in->bar_id;
    SimBarrier *b = &s->bar[slot];
    e->state = ST_WAIT_BAR;
    e->t_block = t;
    e->next_waiter = b->waiters;
    b->waiters = eid;
    if (++b->arrived >= in->bar_count) {
        uint64_t at = s->opt.mode == SIM_MODE_FUNCTIONAL ? t : t + (uint64_t)s->chip.barrier_cycles;
        sim_push(s, at, EV_BARRIER, (uint32_t)b->waiters);
        b->arrived = 0;
        b->waiters = -1;
    }
}

/* The waiter list from head (linked by next_waiter) sorted by engine id:
 * a merge sort of the list in place. */
static int waiters_sorted(AtlSim *s, int head)
{
    if (head < 0 || s->eng[head].next_waiter < 0) return head;
    int slow = head, fast = s->eng[head].next_waiter;
    while (fast >= 0 && s->eng[fast].next_waiter >= 0) {
        slow = s->eng[slow].next_waiter;
        fast = s->eng[s->eng[fast].next_waiter].next_waiter;
    }
    int b = s->eng[slow].next_waiter;
    s->eng[slow].next_waiter = -1;
    int a = waiters_sorted(s, head);
    b = waiters_sorted(s, b);
    int first = -1, *tail = &first;
    while (a >= 0 && b >= 0) {
        int *take = a < b ? &a : &b;
        *tail = *take;
        tail = &s->eng[*take].next_waiter;
        *take = *tail;
    }
    *tail = a >= 0 ? a : b;
    return first;
}

/* Releases a barrier's engines at t, in engine id order (core by core),
 * whatever order they arrived in: equal-time starts (DMAs joining their
 * servers, compute engines taking LMEM banks) then go in an order that
 * does not depend on how the previous work ended, the order the
 * compiler's cost model assumes. */
static void barrier_release(AtlSim *s, int head, uint64_t t)
{
    head = waiters_sorted(s, head);
    while (head >= 0) {
        SimEngine *e = &s->eng[head];
        int next = e->next_waiter;
        e->next_waiter = -1;
        e->st.stall_bar += t - e->t_block;
        e->t_start = t;
        engine_complete(s, head, t);
        sim_push(s, t, EV_ISSUE, (uint32_t)head);
        head = next;
    }
}

/* An event at time t would be the very next one popped (its sequence number
 * is larger than every queued one's, so it must be strictly earlier): doing
 * its work inline gives the same order as pushing and popping it. */
SIM_HOT static int can_inline(AtlSim *s, uint64_t t)
{
    const SimEvent *top = next_event(s);
    return t <= s->max_cycles && (!top || t < top->time) && !(s->dd && ddma_before(s, t));
}

/* The engine's DMA transfer is delivered at time t: it leaves its servers;
 * the time it lost to other transfers is a resource stall. */
SIM_HOT static void dma_finish(AtlSim *s, int eid, uint64_t t)
{
    SimEngine *e = &s->eng[eid];
    mem_dma_leave(s, eid, t);
    uint64_t alone = e->dma_start + e->dma_solo + e->dma_latency;
    if (t > alone) e->st.stall_res += t - alone;
}

/* The engine's DMA transfer joins its servers at *t (its issue cycles are
 * added after delivery, with the path latency: alone, the order does not
 * matter, and it saves an event per transfer). Returns 1 when it is
 * delivered before any other event and its completion at *t can run
 * inline, else 0 (an EV_DMA_CHECK event was queued at its projected
 * delivery). */
SIM_HOT static int dma_start(AtlSim *s, int eid, uint64_t *t)
{
    SimEngine *e = &s->eng[eid];
    uint64_t due = mem_dma_join(s, eid, &e->pre[e->pc], *t);
    int dram = 0;
    if (s->dd && (dram = ddma_start(s, eid / ISA_NUM_ENGINES, &e->insns[e->pc], *t)) < 0) {
        sim_raise(s, SIM_FAULT_DATA, eid / ISA_NUM_ENGINES, ISA_ENGINE_DMA, e->pc, "out of memory for the DRAM requests");
        return 0;
    }
    if (!dram && can_inline(s, due)) { dma_finish(s, eid, due); *t = due; return 1; }
    sim_push(s, due, EV_DMA_CHECK, (uint32_t)eid);
    return 0;
}

/* The projected delivery of the engine's DMA at t: 1 if it is delivered
 * (later arrivals on its servers can only have delayed it), else 0 and the
 * new projection is queued. With the banked DRAM model its DRAM requests
 * must be done too; while they run, the last of them queues the check. */
SIM_HOT static int dma_check(AtlSim *s, int eid, uint64_t t)
{
    uint64_t due = mem_dma_due(s, eid), dram_done;
    if (s->dd) {
        if (ddma_check(s, eid / ISA_NUM_ENGINES, &dram_done)) return 0;
        if (dram_done && dram_done + s->eng[eid].dma_latency > due) due = dram_done + s->eng[eid].dma_latency;
    }
    if (due > t) { sim_push(s, due, EV_DMA_CHECK, (uint32_t)eid); return 0; }
    dma_finish(s, eid, t);
    return 1;
}

/* Starts as many instructions of engine eid as can start at time t. */
SIM_HOT static void engine_try(AtlSim *s, int eid, uint64_t t)
{
    SimEngine *e = &s->eng[eid];
    int core = eid / ISA_NUM_ENGINES, en = eid % ISA_NUM_ENGINES;
    SimCore *c = &s->core[core];
    while (s->fault.kind == SIM_FAULT_NONE) {
        if (e->pc >= e->count) {
            sim_raise(s, SIM_FAULT_NO_END, core, en, e->pc, "the %s stream ran off its end (%d instructions) without `end`",
                      isa_engine_name(en), e->count);
            e->state = ST_FAULT;
            return;
        }
        if (e->pc == e->bad_index) {
            sim_raise(s, e->bad_kind, core, en, e->pc, "%s", e->bad_msg);
            e->state = ST_FAULT;
            return;
        }
        const SimPre *pre = &e->pre[e->pc];
        /* the streams of all engines interleave: fetch ahead of the hardware prefetcher */
        if (e->pc + 2 < e->count)
            for (size_t off = 0; off < sizeof *pre; off += 64) __builtin_prefetch((const char *)(pre + 2) + off);
        if (sim_pre_is_dma(&pre[1])) /* the next transfer's plan (pre + 1 was fetched ahead already) */
            for (size_t off = 0; off < pre[1].nuse * sizeof *e->plan; off += 64)
                __builtin_prefetch((const char *)(e->plan + pre[1].use_at) + off);
        if (pre->wait) {
            int sid = pre->wait - 1;
            if (c->sem[sid] <= 0) {
                if (e->state != ST_WAIT_SEM) { e->state = ST_WAIT_SEM; e->t_block = t; e->blocked_sem = sid; }
                return;
            }
            c->sem[sid]--;
            if (s->opt.trace && c->sigq_n[sid]) {
                trace_flow(s, &c->sigq[sid][c->sigq_head[sid]], core, en, e->pc, t);
                c->sigq_head[sid] = (uint8_t)((c->sigq_head[sid] + 1) % SIM_SIGQ);
                c->sigq_n[sid]--;
            }
        }
        if (e->state == ST_WAIT_SEM) e->st.stall_sem += t - e->t_block;
        e->state = ST_BUSY;
        e->t_start = t;
        int op = pre->op;
        if (op == ISA_OP_END) {
            e->state = ST_DONE;
            s->done_engines++;
            stats_account(s, core, en, pre, t, t);
            do_signal(s, core, en, pre, e->pc, t);
            return;
        }
        if (op == ISA_OP_BARRIER) { barrier_arrive(s, eid, &e->insns[e->pc], t); return; }
        if (s->opt.mode != SIM_MODE_TIMING) {   /* its arithmetic runs on the host: within the work limit */
            uint64_t w = sim_exec_work(pre);
            if (w > s->work_left) {
                sim_raise(s, SIM_FAULT_WORK, core, en, e->pc, "its %llu units of work (bytes moved, elements computed) would pass the host work limit "
                          "of %llu (--max-work, ATOLL_MAX_SIM_WORK)", (unsigned long long)w, (unsigned long long)s->opt.max_work);
                e->state = ST_FAULT;
                return;
            }
            s->work_left -= w;
        }
        if (op == ISA_OP_NOP || s->opt.mode == SIM_MODE_FUNCTIONAL) {
            /* zero-time: complete now and go on with the next instruction */
            engine_complete(s, eid, t);
            continue;
        }
        if (pre->nr && race_begin(s, core, en, e->pc, pre)) { e->state = ST_FAULT; return; }
        if (en == ISA_ENGINE_DMA) {
            uint64_t tb = t;
            if (!dma_start(s, eid, &tb)) return;
            s->now = t = tb;
            engine_complete(s, eid, t);
            continue;
        }
        uint64_t start = mem_lmem_reserve(s, core, en, t, pre);
        uint64_t dur = pre->cycles > pre->lmem_occ ? pre->cycles : pre->lmem_occ;
        e->st.stall_res += start - t;
        e->t_start = start;
        if (!can_inline(s, start + dur)) { sim_push(s, start + dur, EV_COMPLETE, (uint32_t)eid); return; }
        s->now = t = start + dur;
        engine_complete(s, eid, t);
    }
}

/* The run would pass max_cycles: a fault at the first engine not done. */
static void raise_max_cycles(AtlSim *s)
{
    int neng = s->ncores * ISA_NUM_ENGINES, who = 0;
    while (who < neng - 1 && s->eng[who].state == ST_DONE) who++;
    s->now = s->max_cycles;
    sim_raise(s, SIM_FAULT_MAX_CYCLES, who / ISA_NUM_ENGINES, who % ISA_NUM_ENGINES, s->eng[who].pc,
              "simulated time would pass the limit of %llu cycles (--max-cycles)", (unsigned long long)s->max_cycles);
}

int sim_run(AtlSim *s, AtlErr *e)
{
    if (!s->loaded) return atl_fail(e, "sim: no program loaded");
    s->loaded = 0; /* a second run needs a fresh sim_load */
    s->running = 1;
    if (s->opt.trace) trace_begin(s);
    int neng = s->ncores * ISA_NUM_ENGINES;
    for (int eid = 0; eid < neng; eid++)
        if (s->eng[eid].state != ST_DONE) sim_push(s, 0, EV_ISSUE, (uint32_t)eid);
    SimEvent ev;
    while (s->fault.kind == SIM_FAULT_NONE) {
        if (s->dd) {
            /* the banked DRAM's steps before the next event (and before the
             * cycle limit); the one finishing a transfer someone waits for
             * queues its completion check */
            int core;
            uint64_t until = s->q.n && s->q.h[0].time <= s->max_cycles ? s->q.h[0].time : s->max_cycles + 1;
            if (ddma_advance(s, until, &core)) {
                int eid = sim_eid(core, ISA_ENGINE_DMA);
                evq_push(&s->q, ddma_done_at(s, core) + s->eng[eid].dma_latency, EV_DMA_CHECK, (uint32_t)eid);
                continue;
            }
            if (!s->q.n && s->done_engines < neng && ddma_before(s, UINT64_MAX)) { /* only DRAM work left, past the limit */
                raise_max_cycles(s);
                break;
            }
        }
        if (!s->q.n) break;
        ev = s->q.h[0];
        s->live_top = 1;
        s->stats.events++;
        if (ev.time > s->max_cycles) { raise_max_cycles(s); break; }
        s->now = ev.time;
        if (ev.kind == EV_BARRIER) {
            barrier_release(s, (int)ev.arg, ev.time);
        } else {
            /* one call site each: engine_complete and engine_try are inlined here */
            SimEngine *en = &s->eng[ev.arg];
            int done = ev.kind == EV_COMPLETE || (ev.kind == EV_DMA_CHECK && dma_check(s, (int)ev.arg, ev.time));
            if (done) engine_complete(s, (int)ev.arg, ev.time);
            if (done || (ev.kind == EV_ISSUE && (en->state == ST_READY || en->state == ST_WAIT_SEM)))
                engine_try(s, (int)ev.arg, ev.time);
        }
        if (s->live_top) { SimEvent gone; evq_pop(&s->q, &gone); s->live_top = 0; }
    }
    s->live_top = 0;
    if (s->fault.kind == SIM_FAULT_NONE && s->done_engines < neng) sim_raise_deadlock(s);
    s->running = 0;
    stats_finish(s);
    if (s->fault.kind != SIM_FAULT_NONE) return atl_fail(e, "%s", s->fault.msg);
    return 0;
}

const AtlSimFault *sim_fault(const AtlSim *s) { return &s->fault; }
const AtlSimStats *sim_stats(const AtlSim *s) { return &s->stats; }

uint8_t *sim_dram(AtlSim *s, uint64_t addr, uint64_t size)
{
    if (addr > (uint64_t)s->chip.dram_bytes || size > (uint64_t)s->chip.dram_bytes - addr) return NULL;
    return s->dram + addr;
}

uint8_t *sim_sram(AtlSim *s, int cluster, uint64_t addr, uint64_t size)
{
    if (cluster < 0 || cluster >= s->chip.clusters) return NULL;
    if (addr > (uint64_t)s->chip.sram_bytes || size > (uint64_t)s->chip.sram_bytes - addr) return NULL;
    return s->sram[cluster] + addr;
}

uint8_t *sim_lmem(AtlSim *s, int core, uint64_t addr, uint64_t size)
{
    if (core < 0 || core >= s->ncores) return NULL;
    if (addr > (uint64_t)s->chip.lmem_bytes || size > (uint64_t)s->chip.lmem_bytes - addr) return NULL;
    return s->core[core].lmem + addr;
}
