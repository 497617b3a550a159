/* fw_main.c - the firmware's entry points: initialisation, the mailbox
 * command handler (fw_mailbox), and the commands that are not about
 * loading: ALLOC/FREE of device DRAM for the host, QUERY, RUN.
 *
 * RUN is the launch protocol of DESIGN.md section 5: point every core's
 * engine queues at the variant's relocated streams, ring the doorbells of the
 * non-empty ones, take interrupts until every rung core reports done (or a
 * fault), then post the counters. Commands are a table, not a switch.
 */
#include "firmware/fw_int.h"

int fw_error(Fw *fw, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fw_vfmt(fw->msg, sizeof fw->msg, fmt, ap);
    va_end(ap);
    return code;
}

FwModel *fw_model(Fw *fw, uint32_t handle, int *code)
{
    if (handle < FW_MAX_MODELS && fw->model[handle].used) return &fw->model[handle];
    *code = fw_error(fw, ATL_ERR_FW_BAD_HANDLE, "no model is loaded under handle %u", handle);
    return NULL;
}

int fw_init(Fw *fw, const FwHal *hal, void *heap, size_t heap_size)
{
    fw_memset(fw, 0, sizeof *fw);
    fw->hal = *hal;
    if (fw_rd(fw, ATL_REG_ID) != ATL_REGS_ID_VALUE || fw_rd(fw, ATL_REG_VERSION) != ATL_REGS_VERSION_VALUE) return -1;
    fw->ncores = fw_rd(fw, ATL_REG_NCORES);
    fw->cores_per_cluster = fw_rd(fw, ATL_REG_CORES_PER_CLUSTER);
    fw->chip_fp = fw_rd64(fw, ATL_REG_CHIP_FP_LO);
    fw->timing_only = fw_rd(fw, ATL_REG_DEVICE_MODE) == 1;
    fw->dram.size = fw_rd(fw, ATL_REG_DRAM_SIZE);
    fw->region_align = fw_rd(fw, ATL_REG_DRAM_ALIGN);
    if (fw->dram.size > hal->dram_size) fw->dram.size = hal->dram_size;
    if (fw->ncores == 0 || fw->ncores > ATL_MAX_CORES) return -1;
    if (fw_heap_init(&fw->heap, heap, heap_size)) return -1;
    fw_wr(fw, ATL_REG_INT_MASK, ATL_INT_DONE | ATL_INT_FAULT | ATL_INT_MAILBOX);
    return 0;
}

static int cmd_nop(Fw *fw, const uint32_t *arg) { return 0; }

static int cmd_alloc(Fw *fw, const uint32_t *arg)
{
    uint64_t size = arg[0] | (uint64_t)arg[1] << 32, align = arg[2] ? arg[2] : 64, addr;
    if (size == 0 || (align & (align - 1)))
        return fw_error(fw, ATL_ERR_FW_BAD_ARG, "ALLOC: size %llu and alignment %llu: size must be > 0, alignment a power of two",
                        (unsigned long long)size, (unsigned long long)align);
    if (fw_dram_alloc(&fw->dram, size, align, 0, &addr))
        return fw_error(fw, ATL_ERR_FW_NO_DRAM, "ALLOC: no free block of %llu bytes in the %llu bytes of device DRAM",
                        (unsigned long long)size, (unsigned long long)fw->dram.size);
    fw_set64(fw, 0, addr);
    return 0;
}

static int cmd_free(Fw *fw, const uint32_t *arg)
{
    uint64_t addr = arg[0] | (uint64_t)arg[1] << 32;
    if (fw_dram_free(&fw->dram, addr, 0))
        return fw_error(fw, ATL_ERR_FW_BAD_ARG, "FREE: 0x%llx is not a block allocated by the host", (unsigned long long)addr);
    return 0;
}

static void put_name(Fw *fw, const char *name)
{
    fw_fmt(fw->msg, sizeof fw->msg, "%s", name);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    fw_memcpy(&u, &f, 4);
    return u;
}

static int cmd_query(Fw *fw, const uint32_t *arg)
{
    int code;
    FwModel *m = fw_model(fw, arg[0], &code);
    if (!m) return code;
    const AbmView *v = &m->view;
    uint32_t kind = arg[1], i = arg[2];
    fw_charge(fw, FW_COST_QUERY);
    switch (kind) {
    case ATL_QK_MODEL:
        fw->result[0] = v->n_nets;
        fw->result[1] = v->n_variants;
        fw->result[2] = v->n_tensors;
        fw_set64(fw, 3, v->chip_fingerprint);
        put_name(fw, abm_meta(v).producer);
        return 0;
    case ATL_QK_NET: {
        if (i >= v->n_nets) return fw_error(fw, ATL_ERR_FW_UNKNOWN_NET, "QUERY: net %u does not exist (the model has %u)", i, v->n_nets);
        AbmNet n = abm_net(v, i);
        fw->result[0] = n.first_variant;
        fw->result[1] = n.variant_count;
        put_name(fw, n.name);
        return 0;
    }
    case ATL_QK_VARIANT: {
        if (i >= v->n_variants) return fw_error(fw, ATL_ERR_FW_UNKNOWN_VARIANT, "QUERY: variant %u does not exist (the model has %u)", i, v->n_variants);
        AbmVariant s = abm_variant(v, i);
        fw->result[0] = s.net;
        fw->result[1] = s.batch;
        fw->result[2] = s.tensor_first;
        fw->result[3] = s.tensor_count;
        fw->result[4] = s.core_count;
        fw_set64(fw, 5, s.activation_bytes);
        fw_set64(fw, 7, s.io_bytes);
        put_name(fw, abm_net(v, s.net).name);
        return 0;
    }
    case ATL_QK_TENSOR:
    case ATL_QK_QUANT: {
        if (i >= v->n_tensors) return fw_error(fw, ATL_ERR_FW_BAD_ARG, "QUERY: tensor %u does not exist (the model has %u)", i, v->n_tensors);
        AbmTensor t = abm_tensor(v, i);
        if (kind == ATL_QK_QUANT) {
            if (arg[3] >= t.quant_count)
                return fw_error(fw, ATL_ERR_FW_BAD_ARG, "QUERY: tensor '%s' has %u quantisation entries, not %u", t.name, t.quant_count, arg[3] + 1);
            AbmQuant q = abm_quant(v, t.quant_first + arg[3]);
            fw->result[0] = f32_bits(q.scale);
            fw->result[1] = (uint32_t)q.zero_point;
            put_name(fw, t.name);
            return 0;
        }
        fw->result[0] = t.dtype;
        fw->result[1] = t.role;
        fw->result[2] = t.region;
        fw->result[3] = t.layout;
        fw->result[4] = t.ndim;
        for (int d = 0; d < ABM_MAX_DIMS; d++) fw->result[5 + d] = t.dims[d];
        fw_set64(fw, 11, m->base[t.region] + t.offset);
        fw_set64(fw, 13, t.size);
        fw->result[15] = t.quant_kind;
        fw->result[16] = t.quant_axis;
        fw->result[17] = t.quant_count;
        if (t.quant_count) {
            AbmQuant q = abm_quant(v, t.quant_first);
            fw->result[18] = f32_bits(q.scale);
            fw->result[19] = (uint32_t)q.zero_point;
        }
        put_name(fw, t.name);
        return 0;
    }
    default:
        return fw_error(fw, ATL_ERR_FW_BAD_ARG, "QUERY: unknown kind %u", kind);
    }
}

static const char *const fault_names[] = {
#define X(id, v, doc) [v] = #id,
    ATL_FAULTS(X)
#undef X
};

/* The fault of the last launch as an error for the host. */
static int post_fault(Fw *fw)
{
    uint32_t fault = fw_rd(fw, ATL_REG_FAULT_CODE), core = fw_rd(fw, ATL_REG_FAULT_CORE);
    uint32_t engine = fw_rd(fw, ATL_REG_FAULT_ENGINE), index = fw_rd(fw, ATL_REG_FAULT_INDEX);
    char text[ATL_MSG_BYTES];
    for (uint32_t w = 0; w < ATL_REG_FAULT_MSG_COUNT; w++) {
        uint32_t x = fw_rd(fw, ATL_REG_FAULT_MSG + 4 * w);
        for (int b = 0; b < 4; b++) text[4 * w + b] = (char)(x >> (8 * b));
    }
    text[sizeof text - 1] = '\0';
    fw->result[24] = fault;
    fw->result[25] = core;
    fw->result[26] = engine;
    fw->result[27] = index;
    fw_set64(fw, 0, fw_rd64(fw, ATL_REG_CYCLES_LO));
    const char *name = fault < sizeof fault_names / sizeof fault_names[0] && fault_names[fault] ? fault_names[fault] : "?";
    if (core == 0xFFFFFFFFu)
        return fw_error(fw, ATL_ERR_FW_FAULT, "fault %u (%s): %s", fault, name, text);
    return fw_error(fw, ATL_ERR_FW_FAULT, "fault %u (%s) on core %u engine %s instruction %u: %s", fault, name, core,
                    abm_engine_name(engine), index, text);
}

static int cmd_run(Fw *fw, const uint32_t *arg)
{
    int code;
    FwModel *m = fw_model(fw, arg[0], &code);
    if (!m) return code;
    const AbmView *v = &m->view;
    if (arg[1] >= v->n_nets) return fw_error(fw, ATL_ERR_FW_UNKNOWN_NET, "RUN: net %u does not exist (the model has %u)", arg[1], v->n_nets);
    AbmNet net = abm_net(v, arg[1]);
    if (arg[2] >= net.variant_count)
        return fw_error(fw, ATL_ERR_FW_UNKNOWN_VARIANT, "RUN: net '%s' has %u variant(s), there is no variant %u", net.name, net.variant_count, arg[2]);
    uint32_t sidx = net.first_variant + arg[2];
    AbmVariant st = abm_variant(v, sidx);
    if (st.core_count > fw->ncores)
        return fw_error(fw, ATL_ERR_FW_CORES, "RUN: variant %u of net '%s' needs %u cores, the chip has %u", arg[2], net.name, st.core_count, fw->ncores);
    /* Start from a clean slate: no stale interrupts or done bits. */
    fw_wr(fw, ATL_REG_INT_STATUS, ATL_INT_DONE | ATL_INT_FAULT);
    for (uint32_t w = 0; w < (st.core_count + 31) / 32; w++) fw_wr(fw, ATL_REG_CORE_DONE + 4 * w, 0xFFFFFFFFu);
    fw_wr(fw, ATL_REG_PROF_ADDR_LO, (uint32_t)m->prof_addr);
    fw_wr(fw, ATL_REG_PROF_ADDR_HI, (uint32_t)(m->prof_addr >> 32));
    fw_wr(fw, ATL_REG_PROF_CAP, FW_PROF_RECORDS);
    uint32_t rung_cores = 0;
    for (uint32_t c = 0; c < st.core_count; c++) {
        int rung = 0;
        for (uint32_t g = 0; g < ABM_ENGINES; g++) {
            uint32_t rec = st.stream_first + c * ABM_ENGINES + g;
            uint64_t addr = m->stream_addr[rec];
            uint64_t n = abm_stream(v, sidx, c, g).size / ABM_INSN_BYTES;
            if (!n) continue;
            fw_wr(fw, ATL_REG_ENG(c, g, ATL_ENG_Q_BASE_LO), (uint32_t)addr);
            fw_wr(fw, ATL_REG_ENG(c, g, ATL_ENG_Q_BASE_HI), (uint32_t)(addr >> 32));
            fw_wr(fw, ATL_REG_ENG(c, g, ATL_ENG_Q_LEN), (uint32_t)n);
            fw_wr(fw, ATL_REG_ENG(c, g, ATL_ENG_Q_DOORBELL), 1);
            fw_charge(fw, FW_COST_DOORBELL);
            rung = 1;
        }
        rung_cores += (uint32_t)rung;
    }
    uint32_t done = 0;
    while (done < rung_cores) {
        if (fw->hal.wait_for_interrupt(fw->hal.ctx))
            return fw_error(fw, ATL_ERR_FW_HANG, "RUN: %u of %u cores still running but no interrupt can arrive", rung_cores - done, rung_cores);
        fw_charge(fw, FW_COST_INTERRUPT);
        uint32_t pending = fw_rd(fw, ATL_REG_INT_STATUS);
        if (pending & ATL_INT_FAULT) {
            fw_wr(fw, ATL_REG_INT_STATUS, ATL_INT_FAULT | ATL_INT_DONE);
            return post_fault(fw);
        }
        if (pending & ATL_INT_DONE) {
            fw_wr(fw, ATL_REG_INT_STATUS, ATL_INT_DONE);
            for (uint32_t w = 0; w < (st.core_count + 31) / 32; w++) {
                uint32_t bits = fw_rd(fw, ATL_REG_CORE_DONE + 4 * w);
                if (!bits) continue;
                fw_wr(fw, ATL_REG_CORE_DONE + 4 * w, bits);
                while (bits) { done++; bits &= bits - 1; }
            }
        } else if (!(pending & ATL_INT_MAILBOX)) {
            return fw_error(fw, ATL_ERR_FW_HANG, "RUN: woken with no pending interrupt (INT_STATUS 0x%x)", pending);
        }
    }
    /* Counters: launch totals, then per engine summed over the variant's cores. */
    fw_set64(fw, 0, rung_cores ? fw_rd64(fw, ATL_REG_CYCLES_LO) : 0);
    fw_set64(fw, 4, rung_cores ? fw_rd64(fw, ATL_REG_MACS_LO) : 0);
    fw_set64(fw, 6, rung_cores ? fw_rd64(fw, ATL_REG_DRAM_RD_LO) + fw_rd64(fw, ATL_REG_DRAM_WR_LO) : 0);
    for (uint32_t g = 0; g < ABM_ENGINES && rung_cores; g++) {
        uint64_t busy = 0, stall = 0;
        for (uint32_t c = 0; c < st.core_count; c++) {
            busy += fw_rd64(fw, ATL_REG_ENG(c, g, ATL_ENG_BUSY_LO));
            stall += fw_rd64(fw, ATL_REG_ENG(c, g, ATL_ENG_STALL_LO));
        }
        fw_set64(fw, 8 + 2 * (int)g, busy);
        fw_set64(fw, 14 + 2 * (int)g, stall);
    }
    fw->result[20] = rung_cores ? fw_rd(fw, ATL_REG_PROF_COUNT) : 0;
    fw_set64(fw, 21, m->prof_addr);
    return 0;
}

typedef int (*FwCommand)(Fw *fw, const uint32_t *arg);
static const FwCommand commands[ATL_MB_NUM_CMDS] = {
    [ATL_MB_NOP] = cmd_nop,
    [ATL_MB_ALLOC] = cmd_alloc,
    [ATL_MB_FREE] = cmd_free,
    [ATL_MB_LOAD] = fw_cmd_load,
    [ATL_MB_UNLOAD] = fw_cmd_unload,
    [ATL_MB_QUERY] = cmd_query,
    [ATL_MB_RUN] = cmd_run,
};

int fw_mailbox(Fw *fw)
{
    fw->cmd_cycles = 0;
    fw_charge(fw, FW_COST_COMMAND);
    fw_wr(fw, ATL_REG_INT_STATUS, ATL_INT_MAILBOX);
    fw_wr(fw, ATL_REG_MB_STATUS, ATL_MBS_BUSY);
    uint32_t cmd = fw_rd(fw, ATL_REG_MB_CMD), arg[ATL_MB_ARGS];
    for (int i = 0; i < ATL_MB_ARGS; i++) arg[i] = fw_rd(fw, ATL_REG_MB_ARG + 4 * (uint32_t)i);
    fw_memset(fw->result, 0, sizeof fw->result);
    fw->msg[0] = '\0';
    int code = cmd < ATL_MB_NUM_CMDS ? commands[cmd](fw, arg)
                                     : fw_error(fw, ATL_ERR_FW_BAD_COMMAND, "unknown mailbox command %u", cmd);
    if (cmd == ATL_MB_RUN && code == 0) fw_set64(fw, 2, fw->cmd_cycles);
    for (int i = 0; i < ATL_MB_RESULTS; i++) fw_wr(fw, ATL_REG_MB_RESULT + 4 * (uint32_t)i, fw->result[i]);
    for (uint32_t w = 0; w < ATL_REG_MB_MSG_COUNT; w++) {
        uint32_t x = 0;
        for (int b = 0; b < 4; b++) x |= (uint32_t)(uint8_t)fw->msg[4 * w + (uint32_t)b] << (8 * b);
        fw_wr(fw, ATL_REG_MB_MSG + 4 * w, x);
    }
    fw_wr(fw, ATL_REG_MB_ERROR, (uint32_t)code);
    fw_wr(fw, ATL_REG_MB_STATUS, code ? ATL_MBS_ERROR : ATL_MBS_DONE);
    return code;
}
