/* fault.c - turning a fault into a report: the kind, the core/engine/
 * instruction index, the source line when known, the disassembly and the
 * simulated time; deadlock reports list every blocked engine and what it
 * waits for. The first fault wins and stops the run. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sim/sim_int.h"

const char *sim_fault_name(AtlSimFaultKind k)
{
    static const char *const names[SIM_NUM_FAULTS] = {
#define X(id, name) [SIM_FAULT_##id] = name,
        SIM_FAULTS(X)
#undef X
    };
    return k >= 0 && k < SIM_NUM_FAULTS ? names[k] : "?";
}

void sim_raise(AtlSim *s, AtlSimFaultKind kind, int core, int engine, int index, const char *fmt, ...)
{
    AtlSimFault *f = &s->fault;
    if (f->kind != SIM_FAULT_NONE) return;
    f->kind = kind;
    f->core = core;
    f->engine = engine;
    f->index = index;
    f->time = s->now;
    f->disasm[0] = 0;
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (core < 0) {
        snprintf(f->msg, sizeof f->msg, "%s at cycle %llu: %s", sim_fault_name(kind),
                 (unsigned long long)s->now, detail);
        return;
    }
    const SimEngine *e = &s->eng[sim_eid(core, engine)];
    char where[64] = "";
    if (index >= 0 && index < e->count) {
        sim_disasm(&e->insns[index], f->disasm, sizeof f->disasm);
        if (e->lines && e->lines[index]) snprintf(where, sizeof where, " (%s:%d)", s->prog ? s->prog->source : "", e->lines[index]);
    }
    snprintf(f->msg, sizeof f->msg, "%s at cycle %llu: core %d (cluster %d) %s engine, instruction #%d%s `%s`: %s",
             sim_fault_name(kind), (unsigned long long)s->now, core, core / s->cpc, isa_engine_name(engine),
             index, where, f->disasm[0] ? f->disasm : "(past the end of the stream)", detail);
}

void sim_raise_deadlock(AtlSim *s)
{
    char list[480];
    size_t len = 0;
    int first = -1, nblocked = 0;
    list[0] = 0;
    for (int eid = 0; eid < s->ncores * ISA_NUM_ENGINES; eid++) {
        const SimEngine *e = &s->eng[eid];
        if (e->state != ST_WAIT_SEM && e->state != ST_WAIT_BAR) continue;
        nblocked++;
        if (first < 0) first = eid;
        const AtlInsn *in = &e->insns[e->pc];
        char item[160];
        if (e->state == ST_WAIT_SEM)
            snprintf(item, sizeof item, "%score %d %s #%d waits on semaphore %d (value %d)", len ? "; " : "",
                     eid / ISA_NUM_ENGINES, isa_engine_name(eid % ISA_NUM_ENGINES), e->pc, e->blocked_sem,
                     s->core[eid / ISA_NUM_ENGINES].sem[e->blocked_sem]);
        else
            snprintf(item, sizeof item, "%score %d %s #%d waits at %s barrier %d (needs %d)", len ? "; " : "",
                     eid / ISA_NUM_ENGINES, isa_engine_name(eid % ISA_NUM_ENGINES), e->pc,
                     in->scope == ISA_SCOPE_CHIP ? "chip" : "cluster", in->bar_id, in->bar_count);
        size_t n = strlen(item);
        if (len + n + 8 < sizeof list) { memcpy(list + len, item, n + 1); len += n; }
        else if (len + 5 < sizeof list) { memcpy(list + len, "; ...", 6); len += 5; }
    }
    if (first < 0) { sim_raise(s, SIM_FAULT_DEADLOCK, -1, 0, -1, "no event left but engines unfinished"); return; }
    sim_raise(s, SIM_FAULT_DEADLOCK, first / ISA_NUM_ENGINES, first % ISA_NUM_ENGINES, s->eng[first].pc,
              "every unfinished engine is blocked and nothing can release it (%d blocked: %s)", nblocked, list);
}
