/* test_backend_group.c - layer groups: chains of window layers lowered as
 * one layer whose intermediates stay in LMEM (lower/chain.c), formed by
 * the interval programme of group/form.c, and the chain's LMEM checker.
 *
 * Every graph is built here, compiled with grouping on (the default) and
 * with --group none, run on the simulator in full mode (arithmetic,
 * timing and the race detector, which stops a run when one engine touches
 * LMEM bytes another engine's unfinished instruction reads or writes:
 * two pipelined slices sharing a buffer) and compared with the reference
 * interpreter; the program is checked structurally (bk_check.h). In f32
 * the two compiles agree bit for bit, K splits and C slices included
 * (a float conv sums blocks of 8 channels tap by tap, and chunks are whole
 * blocks: isa/numerics.h NUM_CONV_CBLOCK): a chain runs its members' own
 * instructions on the same rows. The per-layer summary (BkSummary) says
 * which layers exist, so a test fails when grouping wrongly happens or
 * wrongly does not: "Group(n)" rows, their split ("N<images> H<slices>
 * x<members>"), and on which cores the group's convolutions run. Where
 * grouping is the cost model's free choice (a chip where the layers alone
 * are as fast) the case only checks the answers (ops NULL).
 * Cases: conv->conv; ResNet's downsampling bottleneck (1x1, 3x3 stride 2,
 * 1x1 with the residual Add + Relu of a 1x1 stride-2 shortcut, the
 * shortcut before or after the main path); conv->MaxPool and
 * conv->AveragePool (pads, ceil_mode, count_include_pad); MobileNetV2's
 * stem with a depthwise conv; bf16; uneven last slices (a prime number of
 * output rows); batch 2; pools alone; HardSwish; a residual that is an
 * earlier member's output; dilation; SAME_UPPER padding; no bias; W
 * slices (column chunks with halos) where whole rows fit no slot (all
 * with activations in DRAM: --sram-activations never); on
 * configs/a1.ini (4 clusters of 4 cores), configs/tiny.ini (1 core, 64 KiB
 * LMEM) and configs/edge16k.ini (2 cores, 16 KiB LMEM). What must not
 * group (each beside a control that groups): a member's output read by a
 * layer outside the group (also through a Gelu pattern) or being a graph
 * output, run-time weights, a layer that is not a window layer in the
 * middle. A group that runs on a1's first cluster alone. The LMEM checker
 * (bk_chain_check, which the compiler runs on every slice height it
 * applies): it accepts the compiler's plans and refuses a plan whose
 * slots, resident region, alignment or element size are changed under
 * it, naming the chain's first node and what is wrong, or with a row
 * buffer moved onto one live at the same step of a slice (and accepts one
 * moved onto a dead one). Lifetimes in a slot: three convolutions whose
 * row buffers, packed by lifetime, let a1 take taller slices than a
 * buffer each (--no-chain-pack), with the same answers. The cost model's
 * estimate of every group unit against its simulated span (EST_TOL), and
 * a group with resident weights reading each weight byte from DRAM once
 * per cluster it runs on (issue 11, Deliver 5). C slices of an inverted
 * residual block (--group-cslice only; f32, bf16, f16; uneven slices)
 * against the interpreter, and the checker on their plans. Members other
 * than window layers (lower/chain_ops.c): an Inception concat, a U-Net
 * step (Resize and concat), a Mul gate, an Add of two pools and a
 * per-channel (squeeze-and-excitation) gate, and the checker's refusals
 * of their misaligned concat channels and Resize rows. YOLO's SPPF block
 * (a 1x1, three 5x5 MaxPools in sequence, the Concat of all four, a 1x1)
 * on a1 with packed buffers: one group of six in taller slices than with
 * a buffer each, bit for bit, its Concat's third and fourth inputs kept
 * alive until the Concat (their bytes were packed over before; the
 * checker refuses the Concat's output on them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_check.h"
#include "compiler/group/group.h"
#include "compiler/legalize/legalize.h"
#include "compiler/lower/lower.h"

#define A1 "configs/a1.ini"
#define TINY "configs/tiny.ini"
#define EDGE "configs/edge16k.ini"
#define MAXOUT 4

static const char *const chips3[] = {A1, TINY, EDGE};

static uint32_t rng = 11;

/* ---- graph builders ---- */

static void new_graph(IrGraph *g, const int64_t xd[4])
{
    bkc_new_graph(g, "x", 4, xd);
}

/* Conv `name`: x (C channels) -> out (M channels), k x k, stride s,
 * symmetric padding p, `group` groups, with a bias; weights uniform in
 * +-1/sqrt(fan-in) so values stay near 1 through a chain. */
static int conv(IrGraph *g, const char *name, const char *x, int C, int M, int k, int s, int p, int group, const char *out)
{
    AtlErr e;
    char w[64], b[64], ins[200];
    int64_t wd[4] = {M, C / group, k, k}, bd[1] = {M}, pads[4] = {p, p, p, p}, st[2] = {s, s};
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(b, sizeof b, "%s_b", name);
    e2e_rand_const(g, w, 4, wd, 1.0f / sqrtf((float)(C / group * k * k)), &rng);
    e2e_rand_const(g, b, 1, bd, 0.2f, &rng);
    snprintf(ins, sizeof ins, "%s,%s,%s", x, w, b);
    int n = ir_add_op(g, "Conv", name, ins, out, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    if (group > 1) ir_set_attr_int(g, n, "group", group, &e);
    return n;
}

/* Conv then Relu: x -> out. */
static void conv_relu(IrGraph *g, const char *name, const char *x, int C, int M, int k, int s, int p, int group,
                      const char *out)
{
    AtlErr e;
    char mid[80], rn[80];
    snprintf(mid, sizeof mid, "%s_c", name);
    snprintf(rn, sizeof rn, "%s_relu", name);
    conv(g, name, x, C, M, k, s, p, group, mid);
    ir_add_op(g, "Relu", rn, mid, out, &e);
}

/* x -> k x k conv (C -> M) + Relu -> k x k conv (M -> C) -> + x -> Relu -> y:
 * a residual block with its skip connection (pad p each). */
static void residual_block(IrGraph *g, int C, int M, int k, int p)
{
    AtlErr e;
    conv_relu(g, "r1", "x", C, M, k, 1, p, 1, "a");
    conv(g, "r2", "a", M, C, k, 1, p, 1, "c");
    ir_add_op(g, "Add", "add", "c,x", "s", &e);
    ir_add_op(g, "Relu", "relu", "s", "y", &e);
    ir_add_output(g, "y", &e);
}

/* A pool `op` of kernel k, stride s, symmetric padding p. */
static void pool(IrGraph *g, const char *op, const char *name, const char *x, int k, int s, int p, int ceil_mode,
                 int count_pad, const char *out)
{
    AtlErr e;
    int64_t ks[2] = {k, k}, st[2] = {s, s}, pads[4] = {p, p, p, p};
    int n = ir_add_op(g, op, name, x, out, &e);
    ir_set_attr_ints(g, n, "kernel_shape", ks, 2, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    if (p) ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    if (ceil_mode) ir_set_attr_int(g, n, "ceil_mode", 1, &e);
    if (count_pad) ir_set_attr_int(g, n, "count_include_pad", 1, &e);
}

/* x -> 3x3 conv + Relu -> 3x3 conv -> y (pad 1 each). */
static void conv_conv(IrGraph *g, const int64_t xd[4], int M)
{
    AtlErr e;
    new_graph(g, xd);
    conv_relu(g, "c1", "x", (int)xd[1], M, 3, 1, 1, 1, "a");
    conv(g, "c2", "a", M, M, 3, 1, 1, 1, "y");
    ir_add_output(g, "y", &e);
}

/* ---- running a graph ---- */

/* A graph after the passes, its input and the interpreter's outputs. */
typedef struct Prep {
    IrGraph g;
    IrTensor in;
    IrTensor *ref;
} Prep;

/* One compile and run. */
typedef struct Run {
    BkSummary sum;
    char ops[512];                /* the summary's ops joined by spaces */
    int group;                    /* the first "Group" row, -1 none */
    uint32_t conv_cores;          /* bit per core running a conv of that group */
    double *out[MAXOUT];          /* each output as read back */
    double err;                   /* max |chip - interpreter| / (1 + |interpreter|) */
    int fault;                    /* the simulator's fault kind (SIM_FAULT_NONE after a clean run) */
    uint64_t group_wrd;           /* bytes the first group's DMAs read from the DRAM weights region */
    int group_clusters;           /* clusters its cores span */
    double est_err;               /* the worst (estimate - simulated span) / span of a Group unit */
    char est_at[160];             /* that unit and its figures ("" no group) */
    char msg[1024];
} Run;

static void prep_free(Prep *p)
{
    if (p->ref) interp_free_outputs(p->ref, p->g.nout);
    ir_tensor_free_contents(&p->in);
    ir_free(&p->g);
    memset(p, 0, sizeof *p);
}

static void run_free(Run *r)
{
    bk_summary_free(&r->sum);
    for (int k = 0; k < MAXOUT; k++) free(r->out[k]);
    memset(r, 0, sizeof *r);
}

/* A copy of g0 through the passes, a pseudo-random input, the
 * interpreter's outputs. */
static int prepare(const IrGraph *g0, Prep *p, char *msg, size_t cap)
{
    AtlErr e = {{0}};
    PbBuf pb = {0};
    memset(p, 0, sizeof *p);
    ir_init(&p->g);
    int rc = -1;
    if (onnx_save_buffer(g0, &pb, &e) || onnx_load_buffer(pb.p, pb.n, "group", &p->g, &e)) goto done;
    if (ir_toposort(&p->g, &e) || ir_infer_shapes(&p->g, &e) || pass_run_all(&p->g, &e)) goto done;
    if (p->g.nout > MAXOUT) { atl_fail(&e, "more than %d outputs", MAXOUT); goto done; }
    const IrTensor *gi = &p->g.t[p->g.inputs[0]];
    p->in.name = ir_strdup(gi->name);
    p->in.dtype = IR_F32;
    p->in.ndim = gi->ndim;
    memcpy(p->in.dims, gi->dims, sizeof p->in.dims);
    p->in.producer = -1;
    if (ir_alloc_data(&p->in, &e)) goto done;
    uint32_t seed = 4242;
    for (int64_t i = 0; i < ir_numel(&p->in); i++) ((float *)p->in.data)[i] = e2e_frand(&seed);
    rc = interp_run(&p->g, &p->in, 1, &p->ref, &e);
done:
    if (rc) snprintf(msg, cap, "%s", e.msg);
    pb_free(&pb);
    return rc;
}

/* The cores with a conv instruction of layer `layer`. */
static uint32_t conv_cores_of(const AtlProgram *prog, int layer)
{
    uint32_t m = 0;
    for (int core = 0; core < prog->ncores && core < 32; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            const AtlStream *s = &prog->streams[core * ISA_NUM_ENGINES + eng];
            for (int i = 0; i < s->count; i++)
                if (s->insns[i].op == ISA_OP_CONV && (int)isa_tag_layer(s->insns[i].layer) == layer) m |= 1u << core;
        }
    return m;
}

/* Bytes that layer `layer`'s DMAs read from the DRAM weights region (at 0,
 * below the activations and io regions); a multicast copy reads once. */
static uint64_t weight_reads_of(const AtlProgram *prog, const AbmRegionBases *b, int layer)
{
    uint64_t top = b->base[ABM_REGION_ACTIVATIONS] < b->base[ABM_REGION_IO] ? b->base[ABM_REGION_ACTIVATIONS]
                                                                           : b->base[ABM_REGION_IO];
    uint64_t n = 0;
    for (int core = 0; core < prog->ncores; core++) {
        const AtlStream *s = &prog->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        for (int i = 0; i < s->count; i++) {
            const AtlInsn *in = &s->insns[i];
            if (in->op == ISA_OP_DMA_COPY && in->src_space == ISA_SPACE_DRAM && in->src < top &&
                (int)isa_tag_layer(in->layer) == layer)
                n += isa_shape_bytes(in);
        }
    }
    return n;
}

/* Compiles p's graph for chipfile with options o, runs it in full mode,
 * reads every output back. 0 when it ran (r->err then says how close it
 * came). */
static int run_opts(const Prep *p, const char *chipfile, const BkOptions *o, Run *r)
{
    AtlErr e = {{0}};
    AtlChip chip;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    AtlProgram prog;
    AtlSim *s = NULL;
    AbmRegionBases b;
    int rc = -1;
    memset(r, 0, sizeof *r);
    memset(&m, 0, sizeof m);
    memset(&prog, 0, sizeof prog);
    r->group = -1;
    r->fault = -1;
    if (cfg_load(chipfile, &chip, &e) || e2e_build_opt(&p->g, &chip, o, &r->sum, NULL, &buf, &len, &m, &prog, &b, &s, &e))
        goto done;
    size_t k = 0;
    for (int i = 0; i < r->sum.nlayers && k + 40 < sizeof r->ops; i++) {
        k += (size_t)snprintf(r->ops + k, sizeof r->ops - k, "%s%s", i ? " " : "", r->sum.layers[i].op);
        if (r->group < 0 && !strncmp(r->sum.layers[i].op, "Group", 5)) r->group = i;
    }
    if (r->group >= 0) {
        const BkLayerInfo *gl = &r->sum.layers[r->group];
        r->conv_cores = conv_cores_of(&prog, gl->layer_id);
        r->group_wrd = weight_reads_of(&prog, &b, gl->layer_id);
        int cpc = chip.cores_per_cluster;
        r->group_clusters = (gl->core_first + gl->core_count - 1) / cpc - gl->core_first / cpc + 1;
    }
    if (e2e_put_input(s, &b, abm_tensor(&m.view, 0), o->dtype, (const float *)p->in.data, ir_numel(&p->in), &e))
        goto done;
    int ran = sim_run(s, &e);
    r->fault = (int)sim_fault(s)->kind;
    if (ran) goto done;
    bkc_check_program(&prog, chipfile, "group");
    /* the cost model on every group unit: its estimate against the span of
     * its layer id (a full run's cycles are a timing-only run's) */
    const AtlSimStats *st = sim_stats(s);
    for (int i = 0; i < r->sum.nlayers; i++) {
        const BkLayerInfo *l = &r->sum.layers[i];
        if (strncmp(l->op, "Group", 5)) continue;
        const AtlLayerStats *ls = l->layer_id < st->nlayers ? &st->layers[l->layer_id] : NULL;
        double sim = ls && ls->used ? (double)(ls->last - ls->first) : 0, est = (double)l->est_cycles;
        double err = sim > 0 ? (est - sim) / sim : 1;
        if (fabs(err) >= fabs(r->est_err))
            snprintf(r->est_at, sizeof r->est_at, "unit %d %s: estimate %.0f, simulated %.0f (%+.2f%%)", i, l->split, est,
                     sim, 100 * err);
        if (fabs(err) >= fabs(r->est_err)) r->est_err = err;
    }
    r->err = 0;
    for (int q = 0; q < p->g.nout; q++) {
        const char *name = p->g.t[p->g.outputs[q]].name;
        uint32_t j = 0;
        while (j < m.view.n_tensors && strcmp(abm_tensor(&m.view, j).name, name)) j++;
        if (j == m.view.n_tensors) { atl_fail(&e, "output '%s' not in the model", name); goto done; }
        AbmTensor to = abm_tensor(&m.view, j);
        int64_t n = ir_numel(&p->ref[q]);
        int dt = e2e_isa_of_abm(to.dtype), es = isa_dtype_size(dt);
        const uint8_t *d = sim_dram(s, b.base[ABM_REGION_IO] + to.offset, (uint64_t)n * es);
        r->out[q] = malloc((size_t)n * sizeof *r->out[q]);
        if (!d || !r->out[q]) { atl_fail(&e, "output '%s' unreadable", name); goto done; }
        for (int64_t i = 0; i < n; i++) {
            double want = ir_get_f(&p->ref[q], i), got = num_load_f64(d + i * es, dt);
            r->out[q][i] = got;
            double dd = fabs(got - want) / (1 + fabs(want));
            if (!(dd <= r->err)) r->err = dd;
        }
    }
    rc = 0;
done:
    if (rc) snprintf(r->msg, sizeof r->msg, "%s", e.msg);
    sim_free(s);
    prog_free(&prog);
    abm_model_free(&m);
    free(buf);
    return rc;
}

static int run_mode(const Prep *p, const char *chipfile, int dtype, int group, int weights, Run *r)
{
    BkOptions o = bkc_group_options(dtype, group);
    o.group_weights = weights;
    /* depthwise convolutions on the matrix unit, as a chain's members run
     * them (on the vector unit, lower/dwvec.c, the stem, depthwise and 1x1
     * of depthwise_in_a_chain are cheaper as three layers than as a group) */
    o.dw_matrix = 1;
    return run_opts(p, chipfile, &o, r);
}

/* The number after `key` in the group row's split (0 when absent). */
static int split_field(const Run *r, char key)
{
    if (r->group < 0) return 0;
    char pat[3] = {key, 0, 0};
    const char *s = strstr(r->sum.layers[r->group].split, pat);
    return s ? atoi(s + 1) : 0;
}

/* The cost model on every group unit of the grouped runs: its estimate
 * against the simulated span of its layer id, within 2.5% (issue 11 asks
 * 10%; test_backend_estimate holds the bundled models' units on a1 to
 * 2.5% too). No bundled model forms a group on tiny or edge16k by
 * default (their activations stay in SRAM), so these chains are where
 * groups are priced on those chips: 79 group units on a1, tiny and
 * edge16k, streamed weights and W slices included, all exact when this
 * was written. */
static const double EST_TOL = 0.025;

/* Tolerances: f32 within the interpreter's rounding, bf16 as the other
 * bf16 backend tests (test_backend_tail.c), f16 with its 3 more bits. */
static double tol_of(int dtype) { return dtype == ISA_BF16 ? 3e-2 : dtype == ISA_F16 ? 2e-3 : 2e-5; }

/* Compiles g on chipfile in dtype, grouped (with the group weight mode
 * `weights`, BK_GW_*) and with --group none; both must run and match the
 * interpreter, the grouped summary's ops must be `ops` (NULL: not
 * checked), the ungrouped one must have no group, and in f32 both must
 * agree bit for bit. The grouped run is left in *grouped
 * when non-NULL (caller run_free). */
static void check_weights(const IrGraph *g, const char *what, const char *chipfile, int dtype, int weights,
                          const char *ops, Run *grouped)
{
    Prep p;
    Run a, n;
    char msg[1024] = "";
    if (grouped) memset(grouped, 0, sizeof *grouped);
    int rc = prepare(g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "%s: %s", what, msg);
    if (rc) { prep_free(&p); return; }
    const char *dn = isa_dtype_name(dtype);
    int ra = run_mode(&p, chipfile, dtype, BK_GROUP_AUTO, weights, &a);
    int rn = run_mode(&p, chipfile, dtype, BK_GROUP_NONE, BK_GW_AUTO, &n);
    printf("  %-26s %-20s %-4s err %.3g, none %.3g  %s%s%s%s%s\n", what, chipfile, dn, ra ? -1.0 : a.err,
           rn ? -1.0 : n.err, a.ops, a.group >= 0 ? "  split " : "", a.group >= 0 ? a.sum.layers[a.group].split : "",
           a.msg, n.msg);
    CHECKF(ra == 0, "%s on %s %s (grouped): %s", what, chipfile, dn, a.msg);
    CHECKF(rn == 0, "%s on %s %s (--group none): %s", what, chipfile, dn, n.msg);
    double tol = tol_of(dtype);
    if (ra == 0) {
        CHECKF(a.err <= tol, "%s on %s %s (grouped): error %g > %g", what, chipfile, dn, a.err, tol);
        if (a.est_at[0]) printf("    estimate: %s\n", a.est_at);
        /* resident weights (no streamed member, split " w"): each byte read
         * from DRAM once per cluster the group runs on (multicast to its
         * cores); the weights region also holds up to 63 bytes of
         * alignment after each member's weights and bias. Streamed chunks
         * are read once per core (docs/backend.md, "Streamed weights").
         * An interpolating Resize member reads its R_h rows with each
         * slice (only their band: lower/resize.c), not whole. */
        const char *mem = a.group >= 0 ? a.sum.layers[a.group].members : NULL;
        if (a.group >= 0 && a.sum.nlayers == 1 && !strstr(a.sum.layers[0].split, " w") && !(mem && strstr(mem, "Resize"))) {
            uint64_t per = a.group_wrd / (uint64_t)a.group_clusters, wb = a.sum.weight_bytes;
            uint64_t pad = 2 * 63 * (uint64_t)a.sum.layers[0].nmembers;
            printf("    weights: %llu bytes read from DRAM = %d clusters x %llu (region %llu)\n",
                   (unsigned long long)a.group_wrd, a.group_clusters, (unsigned long long)per, (unsigned long long)wb);
            CHECKF(per * (uint64_t)a.group_clusters == a.group_wrd && per <= wb && per + pad >= wb,
                   "%s on %s %s: the group read %llu weight bytes on %d clusters, its weights are %llu", what, chipfile, dn,
                   (unsigned long long)a.group_wrd, a.group_clusters, (unsigned long long)wb);
        }
        CHECKF(fabs(a.est_err) <= EST_TOL, "%s on %s %s: a group's estimate off by more than %.0f%%: %s", what, chipfile,
               dn, 100 * EST_TOL, a.est_at);
        if (ops) CHECKF(!strcmp(a.ops, ops), "%s on %s %s: layers '%s', expected '%s'", what, chipfile, dn, a.ops, ops);
    }
    if (rn == 0) {
        CHECKF(n.err <= tol, "%s on %s %s (--group none): error %g > %g", what, chipfile, dn, n.err, tol);
        CHECKF(n.group < 0, "%s on %s: --group none made a group: %s", what, chipfile, n.ops);
    }
    if (ra == 0 && rn == 0 && dtype == ISA_F32)
        for (int q = 0; q < p.g.nout; q++) {
            int64_t k = 0, cnt = ir_numel(&p.ref[q]);
            while (k < cnt && a.out[q][k] == n.out[q][k]) k++;
            CHECKF(k == cnt, "%s on %s: output %d element %lld: grouped %.9g, --group none %.9g", what, chipfile, q,
                   (long long)k, k < cnt ? a.out[q][k] : 0, k < cnt ? n.out[q][k] : 0);
        }
    if (grouped && ra == 0) *grouped = a;
    else run_free(&a);
    run_free(&n);
    prep_free(&p);
}

/* check_weights with the weights as the cost model chooses. */
static void check_on(const IrGraph *g, const char *what, const char *chipfile, int dtype, const char *ops, Run *grouped)
{
    check_weights(g, what, chipfile, dtype, BK_GW_AUTO, ops, grouped);
}

/* check_on for a1, tiny and edge16k with the ops expected on each. */
static void check_chips(const IrGraph *g, const char *what, int dtype, const char *const ops[3])
{
    for (int c = 0; c < 3; c++) check_on(g, what, chips3[c], dtype, ops[c], NULL);
}

/* ---- chains ---- */

TEST(conv_conv_chain)
{
    IrGraph g;
    int64_t xd[4] = {1, 8, 20, 16};
    conv_conv(&g, xd, 16);
    const char *const ops[3] = {"Group(2)", NULL, NULL};
    check_chips(&g, "conv3x3->conv3x3", ISA_F32, ops);
    check_chips(&g, "conv3x3->conv3x3", ISA_BF16, ops);
    check_on(&g, "conv3x3->conv3x3", A1, ISA_F16, "Group(2)", NULL);
    ir_free(&g);
}

/* ResNet's downsampling bottleneck: 1x1 -> 3x3 stride 2 -> 1x1, plus a
 * 1x1 stride-2 shortcut (before the main path or before its last conv),
 * whose output the last conv adds in its epilogue, then Relu. */
static void bottleneck(IrGraph *g, int shortcut_first)
{
    AtlErr e;
    int64_t xd[4] = {1, 16, 18, 14};
    new_graph(g, xd);
    if (shortcut_first) conv(g, "sc", "x", 16, 32, 1, 2, 0, 1, "s");
    conv_relu(g, "b1", "x", 16, 8, 1, 1, 0, 1, "a");
    conv_relu(g, "b2", "a", 8, 8, 3, 2, 1, 1, "b");
    if (!shortcut_first) conv(g, "sc", "x", 16, 32, 1, 2, 0, 1, "s");
    conv(g, "b3", "b", 8, 32, 1, 1, 0, 1, "c");
    ir_add_op(g, "Add", "add", "c,s", "sum", &e);
    ir_add_op(g, "Relu", "relu", "sum", "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(downsampling_bottleneck)
{
    const char *const ops[3] = {"Group(4)", "Group(4)", NULL};
    for (int f = 0; f < 2; f++) {
        IrGraph g;
        bottleneck(&g, f);
        const char *what = f ? "bottleneck s2, sc first" : "bottleneck s2";
        check_chips(&g, what, ISA_F32, ops);
        check_chips(&g, what, ISA_BF16, ops);
        ir_free(&g);
    }
}

typedef struct PoolCase { const char *what, *op; int k, s, p, ceil, count_pad, edge_groups; } PoolCase;

static const PoolCase pools[] = {
    {"conv->maxpool k3 s2 p1", "MaxPool", 3, 2, 1, 0, 0, 1},
    {"conv->maxpool k2 s2 ceil", "MaxPool", 2, 2, 0, 1, 0, 1},
    {"conv->maxpool k3 s1 p1", "MaxPool", 3, 1, 1, 0, 0, 0},
    {"conv->maxpool k3 s2 p1 ceil", "MaxPool", 3, 2, 1, 1, 0, 1},
    {"conv->avgpool k3 s2 p1", "AveragePool", 3, 2, 1, 0, 0, 1},
    {"conv->avgpool k3 s2 p1 cip", "AveragePool", 3, 2, 1, 0, 1, 1},
    {"conv->avgpool k3 s2 ceil", "AveragePool", 3, 2, 0, 1, 0, 1},
    {"conv->avgpool k2 s2", "AveragePool", 2, 2, 0, 0, 0, 1},
};

/* A conv of 2 -> 4 channels at 93 x 32 and the pool: small channels, many
 * rows, so even edge16k's 8 KiB slots hold a chain of a few rows. */
static void conv_pool(IrGraph *g, const PoolCase *pc)
{
    AtlErr e;
    int64_t xd[4] = {1, 2, 93, 32};
    new_graph(g, xd);
    conv_relu(g, "c", "x", 2, 4, 3, 1, 1, 1, "a");
    pool(g, pc->op, "pool", "a", pc->k, pc->s, pc->p, pc->ceil, pc->count_pad, "y");
    ir_add_output(g, "y", &e);
}

TEST(conv_pool_chains)
{
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
        IrGraph g;
        conv_pool(&g, &pools[i]);
        const char *const ops[3] = {"Group(2)", "Group(2)", pools[i].edge_groups ? "Group(2)" : NULL};
        check_chips(&g, pools[i].what, ISA_F32, ops);
        if (pools[i].p && !pools[i].count_pad && pools[i].s == 2) check_chips(&g, pools[i].what, ISA_BF16, ops);
        ir_free(&g);
    }
}

/* MobileNetV2's stem: 3x3 stride-2 conv + Relu6, 3x3 depthwise + Relu6,
 * 1x1 projection. */
TEST(depthwise_in_a_chain)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 3, 96, 80};
    float lo = 0, hi = 6;
    new_graph(&g, xd);
    ir_add_const(&g, "lo", IR_F32, 0, NULL, &lo, &e);
    ir_add_const(&g, "hi", IR_F32, 0, NULL, &hi, &e);
    conv(&g, "stem", "x", 3, 16, 3, 2, 1, 1, "a0");
    ir_add_op(&g, "Clip", "stem_clip", "a0,lo,hi", "a", &e);
    conv(&g, "dw", "a", 16, 16, 3, 1, 1, 16, "b0");
    ir_add_op(&g, "Clip", "dw_clip", "b0,lo,hi", "b", &e);
    conv(&g, "pw", "b", 16, 8, 1, 1, 0, 1, "y");
    ir_add_output(&g, "y", &e);
    check_on(&g, "stem->depthwise->1x1", A1, ISA_F32, "Group(3)", NULL);
    check_on(&g, "stem->depthwise->1x1", A1, ISA_BF16, "Group(3)", NULL);
    ir_free(&g);
}

TEST(batch_two)
{
    IrGraph g;
    int64_t xd[4] = {2, 8, 14, 12};
    conv_conv(&g, xd, 16);
    check_on(&g, "conv->conv batch 2", TINY, ISA_F32, NULL, NULL);
    check_on(&g, "conv->conv batch 2", EDGE, ISA_F32, NULL, NULL);
    Run r;
    check_on(&g, "conv->conv batch 2", A1, ISA_F32, "Group(2)", &r);
    CHECKF(split_field(&r, 'N') == 2, "batch 2: the group's split '%s' is not N2",
           r.group >= 0 ? r.sum.layers[r.group].split : "-");
    run_free(&r);
    ir_free(&g);
}

/* A prime number of output rows: any slice height between 1 and all of
 * them leaves the last slice short. 23 rows of conv->conv on a1; 47 rows
 * of conv->maxpool on every chip. On tiny and edge16k several slices run
 * on each core, through both slots in turn, in the simulator's full mode,
 * so a buffer two pipelined slices shared would be a race: none may be
 * found. */
TEST(uneven_last_slices)
{
    IrGraph g;
    int64_t xd[4] = {1, 16, 23, 40};
    Run r;
    conv_conv(&g, xd, 32);
    check_on(&g, "conv->conv OH 23", A1, ISA_F32, "Group(2)", &r);
    int h = split_field(&r, 'H');
    CHECKF(h > 1 && h < 23, "OH 23 on a1: %d slices", h);
    CHECK_EQ_INT(r.fault, SIM_FAULT_NONE);
    run_free(&r);
    ir_free(&g);
    conv_pool(&g, &pools[0]);
    for (int c = 0; c < 3; c++) {
        check_on(&g, "conv->maxpool OH 47", chips3[c], ISA_F32, "Group(2)", &r);
        h = split_field(&r, 'H');
        int ncores = r.sum.cores;
        CHECKF(h > 1 && h < 47, "OH 47 on %s: %d slices", chips3[c], h);
        if (c > 0)   /* on a1 one slice per core */
            CHECKF(h >= 2 * ncores, "OH 47 on %s: %d slices on %d cores: not two per core", chips3[c], h, ncores);
        CHECK_EQ_INT(r.fault, SIM_FAULT_NONE);
        run_free(&r);
    }
    ir_free(&g);
}

/* ---- what must not group ---- */

/* A conv->conv chain that groups on a1 (the control), or that chain with
 * what forbids it. */
typedef enum {
    NG_CONTROL, NG_READ_OUTSIDE, NG_GRAPH_OUTPUT, NG_GELU_READER, NG_NOT_WINDOW, NG_CONST_MIDDLE, NG_RUNTIME_MIDDLE
} NoGroup;

/* The Gelu pattern (x/sqrt2, Erf, +1, *x, *0.5) of x into out. */
static void gelu(IrGraph *g, const char *x, const char *out)
{
    AtlErr e;
    float half = 0.5f, one = 1.0f, r2 = 1.41421356f;
    char ins[96];
    ir_add_const(g, "half", IR_F32, 0, NULL, &half, &e);
    ir_add_const(g, "one", IR_F32, 0, NULL, &one, &e);
    ir_add_const(g, "r2", IR_F32, 0, NULL, &r2, &e);
    snprintf(ins, sizeof ins, "%s,r2", x);
    ir_add_op(g, "Div", "gdiv", ins, "gd", &e);
    ir_add_op(g, "Erf", "gerf", "gd", "ge", &e);
    ir_add_op(g, "Add", "gadd", "ge,one", "ga", &e);
    snprintf(ins, sizeof ins, "%s,ga", x);
    ir_add_op(g, "Mul", "gmul", ins, "gm", &e);
    ir_add_op(g, "Mul", "gelu", "gm,half", out, &e);
}

static void no_group_graph(IrGraph *g, NoGroup kind)
{
    AtlErr e;
    int64_t xd[4] = {1, 16, 12, 12}, wshape[4] = {16, 16, 3, 3}, four = 4, p1[4] = {1, 1, 1, 1};
    float k = 0.75f;
    new_graph(g, xd);
    conv_relu(g, "c1", "x", 16, 16, 3, 1, 1, 1, "a");
    const char *mid = "a";
    if (kind == NG_NOT_WINDOW) {
        ir_add_const(g, "k", IR_F32, 0, NULL, &k, &e);
        ir_add_op(g, "Mul", "scale", "a,k", "am", &e);
        mid = "am";
    }
    if (kind == NG_CONST_MIDDLE) {
        conv(g, "cw", "a", 16, 16, 3, 1, 1, 1, "aw");
        mid = "aw";
    }
    if (kind == NG_RUNTIME_MIDDLE) {
        /* the middle conv's weights: the graph input (16 x 12 x 12 = 16 x 16 x 3 x 3), reshaped */
        ir_add_const(g, "wshape", IR_I64, 1, &four, wshape, &e);
        ir_add_op(g, "Reshape", "wview", "x,wshape", "wx", &e);
        int n = ir_add_op(g, "Conv", "cw", "a,wx", "aw", &e);
        ir_set_attr_ints(g, n, "pads", p1, 4, &e);
        mid = "aw";
    }
    conv(g, "c2", mid, 16, 16, 3, 1, 1, 1, "y");
    ir_add_output(g, "y", &e);
    if (kind == NG_READ_OUTSIDE) {
        ir_add_op(g, "Sigmoid", "side", "a", "z", &e);
        ir_add_output(g, "z", &e);
    }
    if (kind == NG_GRAPH_OUTPUT) ir_add_output(g, "a", &e);
    if (kind == NG_GELU_READER) {
        gelu(g, "a", "z");
        ir_add_output(g, "z", &e);
    }
}

TEST(what_must_not_group)
{
    static const struct { NoGroup kind; const char *what, *ops; } cases[] = {
        {NG_CONTROL, "control", "Group(2)"},
        {NG_READ_OUTSIDE, "member read outside", "Conv+Relu Conv Sigmoid"},
        {NG_GRAPH_OUTPUT, "member is a graph output", "Conv+Relu Conv"},
        /* the Gelu layer reads its x through BkCtx.gelu_src, not its inputs */
        {NG_GELU_READER, "member read by a Gelu", "Conv+Relu Conv Gelu"},
        {NG_NOT_WINDOW, "Mul in the middle", "Conv+Relu Mul Conv"},
        /* the cost model takes c1 and cw as a group, c2 alone */
        {NG_CONST_MIDDLE, "control of 3", "Group(2) Conv"},
        {NG_RUNTIME_MIDDLE, "run-time weights in the middle", "Conv+Relu Conv Conv"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrGraph g;
        Run r;
        no_group_graph(&g, cases[i].kind);
        check_on(&g, cases[i].what, A1, ISA_F32, cases[i].ops, &r);
        if (cases[i].kind == NG_CONST_MIDDLE && r.group >= 0)
            CHECKF(!strcmp(r.sum.layers[r.group].name, "c1 .. cw"), "control of 3: group '%s'", r.sum.layers[r.group].name);
        run_free(&r);
        ir_free(&g);
    }
}

/* ---- core sets ---- */

/* ResNet-20's second-stage block (3x3 conv + Relu, 3x3 conv + the input,
 * Relu; 32 channels at 16 x 16): on a1 its group is cheaper on the first
 * cluster alone (its weights cross DRAM once, not once per cluster) than
 * on all four; its convolutions run on cores 0-3 only, every one of them
 * busy (the same four slices on all 16 cores would go to cores 0, 4, 8
 * and 12). */
TEST(group_on_the_first_cluster)
{
    IrGraph g;
    int64_t xd[4] = {1, 32, 16, 16};
    new_graph(&g, xd);
    residual_block(&g, 32, 32, 3, 1);
    for (int d = 0; d < 2; d++) {
        Run r;
        check_on(&g, "resnet20 block", A1, d ? ISA_BF16 : ISA_F32, "Group(2)", &r);
        if (r.group >= 0) {
            CHECKF(r.conv_cores == 0xf, "resnet20 block: the group's convs run on cores 0x%x, not 0-3", r.conv_cores);
            CHECK_EQ_INT(r.sum.layers[r.group].cores, 4);
        }
        run_free(&r);
    }
    ir_free(&g);
}

/* ---- more members ---- */

/* Pools alone: a chain with no weights (no multicast: an empty one left
 * its wait unsignalled, a deadlock on a1). */
TEST(pools_alone)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 16, 32, 32};
    new_graph(&g, xd);
    pool(&g, "MaxPool", "p1", "x", 3, 1, 1, 0, 0, "a");
    pool(&g, "AveragePool", "p2", "a", 3, 2, 1, 0, 0, "y");
    ir_add_output(&g, "y", &e);
    const char *const ops[3] = {"Group(2)", "Group(2)", NULL};
    check_chips(&g, "maxpool->avgpool", ISA_F32, ops);
    ir_free(&g);
}

/* A 1x1 conv with pads 1 last: its first and last output rows read only
 * padding, so a slice of one of those rows alone has no input rows (such
 * slice heights were offered, and pricing them failed the compile:
 * "node 'c2' (Conv): output rows 21..21 read no input"). */
TEST(border_rows_of_padding)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 16, 20, 20};
    new_graph(&g, xd);
    conv_relu(&g, "c1", "x", 16, 32, 3, 1, 1, 1, "a");
    conv(&g, "c2", "a", 32, 32, 1, 1, 1, 1, "y");
    ir_add_output(&g, "y", &e);
    check_on(&g, "conv->1x1 pad 1", A1, ISA_F32, "Group(2)", NULL);
    check_on(&g, "conv->1x1 pad 1", TINY, ISA_F32, NULL, NULL);
    ir_free(&g);
}

/* HardSwish (the activation temp), a residual that is an earlier member's
 * output, dilation, SAME_UPPER stride 2 (padding below only), no bias,
 * pads that differ above and below. */
TEST(more_members)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 16, 20, 20}, wd[4] = {16, 32, 3, 3}, d2[2] = {2, 2}, s2[2] = {2, 2};
    int64_t top0[4] = {0, 1, 2, 1}, bottom0[4] = {2, 1, 0, 1};   /* top, left, bottom, right */
    new_graph(&g, xd);
    conv(&g, "h1", "x", 16, 32, 3, 1, 1, 1, "a0");
    ir_add_op(&g, "HardSwish", "hs", "a0", "a", &e);
    conv(&g, "h2", "a", 32, 16, 3, 1, 1, 1, "b");
    ir_add_op(&g, "Add", "add", "b,x", "y", &e);
    ir_add_output(&g, "y", &e);
    for (int d = 0; d < 2; d++) check_on(&g, "hardswish + residual", A1, d ? ISA_BF16 : ISA_F32, "Group(2)", NULL);
    ir_free(&g);

    new_graph(&g, xd);
    conv_relu(&g, "c1", "x", 16, 32, 3, 1, 1, 1, "a");
    conv_relu(&g, "c2", "a", 32, 32, 3, 1, 1, 1, "b");
    conv(&g, "c3", "b", 32, 32, 3, 1, 1, 1, "c");
    ir_add_op(&g, "Add", "add", "c,a", "y", &e);
    ir_add_output(&g, "y", &e);
    for (int d = 0; d < 2; d++) check_on(&g, "residual of a member", A1, d ? ISA_BF16 : ISA_F32, "Group(3)", NULL);
    ir_free(&g);

    new_graph(&g, xd);
    int n = conv(&g, "d1", "x", 16, 32, 3, 1, 2, 1, "a0");
    ir_set_attr_ints(&g, n, "dilations", d2, 2, &e);
    ir_add_op(&g, "Relu", "d1_relu", "a0", "a", &e);
    e2e_rand_const(&g, "s2_w", 4, wd, 0.06f, &rng);
    n = ir_add_op(&g, "Conv", "s2", "a,s2_w", "y", &e);
    ir_set_attr_str(&g, n, "auto_pad", "SAME_UPPER", &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_add_output(&g, "y", &e);
    check_on(&g, "dilated -> same_upper s2", A1, ISA_F32, "Group(2)", NULL);
    ir_free(&g);

    new_graph(&g, xd);
    n = conv(&g, "a1", "x", 16, 32, 3, 1, 1, 1, "a0");
    ir_set_attr_ints(&g, n, "pads", top0, 4, &e);
    ir_add_op(&g, "Relu", "a1_relu", "a0", "a", &e);
    n = conv(&g, "a2", "a", 32, 32, 3, 2, 1, 1, "y");
    ir_set_attr_ints(&g, n, "pads", bottom0, 4, &e);
    ir_add_output(&g, "y", &e);
    check_on(&g, "pads 0/2 -> 2/0 s2", A1, ISA_F32, "Group(2)", NULL);
    ir_free(&g);
}

/* ---- streamed weights ---- */

/* With --group-weights stream on a1, tiny and edge16k (nchips of them):
 * the summary's ops must be ops[chip] (NULL: not checked), the first
 * group must stream weights (its split "w<members>/<steps>") over more
 * than one slice, on a1 and tiny with an uneven last slice (`rows` output
 * rows, a prime; edge16k's slots hold one row: its slices pipeline
 * through both slots on each core, the streamed chains' doubled input and
 * output buffers under the race detector), and the answers must be the
 * interpreter's (and --group none's, bit for bit in f32). */
static void check_streamed(const IrGraph *g, const char *what, int dtype, const char *const ops[3], int rows, int nchips)
{
    for (int c = 0; c < nchips; c++) {
        Run r;
        check_weights(g, what, chips3[c], dtype, BK_GW_STREAM, ops[c], &r);
        int h = split_field(&r, 'H');
        CHECKF(split_field(&r, 'w') >= 1, "%s on %s: the group streams no weights (split '%s')", what, chips3[c],
               r.group >= 0 ? r.sum.layers[r.group].split : "-");
        CHECKF(h > 1 && (c == 2 || h < rows), "%s on %s: %d slices of %d rows: no uneven last slice", what, chips3[c], h,
               rows);
        CHECK_EQ_INT(r.fault, SIM_FAULT_NONE);
        run_free(&r);
    }
}

/* Chains forced to stream, in f32 and bf16, 23 output rows: 3x3 16 -> 64
 * -> 64 convolutions on a1 (184 KB of f32 weights; a 16-channel chunk of
 * the second is 36 KB, more than tiny's slots); a 3x3 4 -> 32, 1x1 32 ->
 * 64, 1x1 64 -> 32 stack on every chip; a bottleneck of 1x1s 64 -> 32 ->
 * 64 with the residual Add + Relu in the second (16 KB of f32 weights,
 * edge16k's whole LMEM; its chunks add their channels of the residual).
 * The stack also as the cost model chooses on tiny and edge16k. */
TEST(streamed_weights)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 16, 23, 12}, sd[4] = {1, 4, 23, 8}, bd[4] = {1, 64, 23, 4};
    /* edge16k in f32: the first two of the stack (all three do not fit) */
    const char *const two[3] = {"Group(2)", "Group(2)", "Group(2)"}, *const three[3] = {"Group(3)", "Group(3)", NULL};
    conv_conv(&g, xd, 64);
    for (int d = 0; d < 2; d++) check_streamed(&g, "3x3 conv->conv", d ? ISA_BF16 : ISA_F32, two, 23, 1);
    ir_free(&g);
    new_graph(&g, sd);
    conv_relu(&g, "s1", "x", 4, 32, 3, 1, 1, 1, "a");
    conv_relu(&g, "s2", "a", 32, 64, 1, 1, 0, 1, "b");
    conv(&g, "s3", "b", 64, 32, 1, 1, 0, 1, "y");
    ir_add_output(&g, "y", &e);
    for (int d = 0; d < 2; d++) check_streamed(&g, "3x3->1x1->1x1", d ? ISA_BF16 : ISA_F32, three, 23, 3);
    check_on(&g, "3x3->1x1->1x1 weights auto", TINY, ISA_F32, NULL, NULL);
    check_on(&g, "3x3->1x1->1x1 weights auto", EDGE, ISA_F32, NULL, NULL);
    ir_free(&g);
    new_graph(&g, bd);
    residual_block(&g, 64, 32, 1, 0);
    for (int d = 0; d < 2; d++) check_streamed(&g, "1x1 block + residual", d ? ISA_BF16 : ISA_F32, two, 23, 3);
    ir_free(&g);
}

/* Streamed weights staged once per cluster (split " wsram"; lower/chain.c,
 * BkChain.ws): the 3x3 16 -> 64 -> 64 pair on a1 forced to stream (4
 * steps: from DRAM every core reads the chunks again each slice), once
 * with its chunks from DRAM (--sram-weights never), once staged in each
 * cluster's SRAM (always) and once as the cost model chooses (auto: the
 * staged plan, 9% faster here). Staged, the group must read each weight
 * byte from DRAM once per cluster it runs on (the simulator's program, as
 * for resident weights), less than from DRAM, give the interpreter's
 * answers (and the DRAM plan's, bit for bit in f32) with the race
 * detector on, and its estimate must hold. */
TEST(streamed_weights_once_per_cluster)
{
    IrGraph g;
    int64_t xd[4] = {1, 16, 61, 12};   /* 61 rows: the group spreads over the 4 clusters */
    conv_conv(&g, xd, 64);
    Prep p;
    char msg[1024] = "";
    int rc = prepare(&g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "prepare: %s", msg);
    for (int d = 0; d < 2 && !rc; d++) {
        int dt = d ? ISA_BF16 : ISA_F32;
        Run r[3];
        for (int ws = 0; ws < 3; ws++) {
            BkOptions o = bkc_group_options(dt, BK_GROUP_AUTO);
            o.group_weights = BK_GW_STREAM;
            o.sram_weights = ws == 2 ? BK_SRAM_AUTO : ws ? BK_SRAM_ALWAYS : BK_SRAM_NEVER;
            int rr = run_opts(&p, A1, &o, &r[ws]);
            const char *how = ws == 2 ? "auto" : ws ? "SRAM" : "DRAM";
            CHECKF(rr == 0 && r[ws].group >= 0, "%s, chunks from %s: %s (%s)", isa_dtype_name(dt), how,
                   r[ws].msg, r[ws].ops);
            if (rr || r[ws].group < 0) continue;
            const BkLayerInfo *gl = &r[ws].sum.layers[r[ws].group];
            printf("  %-4s %-5s split %-22s err %.3g, weights read %llu on %d clusters (region %llu), estimate %s\n",
                   isa_dtype_name(dt), how, gl->split, r[ws].err, (unsigned long long)r[ws].group_wrd,
                   r[ws].group_clusters, (unsigned long long)r[ws].sum.weight_bytes, r[ws].est_at);
            CHECKF(r[ws].err <= tol_of(dt), "%s: error %g", gl->split, r[ws].err);
            CHECK_EQ_INT(r[ws].fault, SIM_FAULT_NONE);
            CHECKF(fabs(r[ws].est_err) <= EST_TOL, "estimate: %s", r[ws].est_at);
            /* auto: the cost model takes the staged plan, the cheaper here */
            CHECKF((strstr(gl->split, " wsram") != NULL) == (ws > 0) && split_field(&r[ws], 'w') >= 1, "split '%s'", gl->split);
        }
        if (r[0].group >= 0 && r[1].group >= 0) {
            uint64_t wb = r[1].sum.weight_bytes, pad = 2 * 63 * 2, cl = (uint64_t)r[1].group_clusters;
            uint64_t per = r[1].group_wrd / cl;
            CHECKF(cl > 1 && per * cl == r[1].group_wrd && per <= wb && per + pad >= wb,
                   "staged: %llu weight bytes read on %llu clusters, the weights are %llu",
                   (unsigned long long)r[1].group_wrd, (unsigned long long)cl, (unsigned long long)wb);
            CHECKF(r[0].group_wrd > r[1].group_wrd, "from DRAM %llu weight bytes, staged %llu",
                   (unsigned long long)r[0].group_wrd, (unsigned long long)r[1].group_wrd);
            int64_t k = 0, n = ir_numel(&p.ref[0]);
            while (dt == ISA_F32 && k < n && r[0].out[0][k] == r[1].out[0][k]) k++;
            CHECKF(dt != ISA_F32 || k == n, "element %lld: staged %.9g, from DRAM %.9g", (long long)k,
                   k < n ? r[1].out[0][k] : 0, k < n ? r[0].out[0][k] : 0);
        }
        for (int ws = 0; ws < 3; ws++) run_free(&r[ws]);
    }
    /* a plan with SRAM bands never stages (stage_ok), even when forced */
    if (!rc) {
        BkOptions o = bkc_group_options(ISA_F32, BK_GROUP_AUTO);
        o.group_weights = BK_GW_STREAM;
        o.sram_acts = BK_SRAM_ACTS_BANDS;
        o.sram_weights = BK_SRAM_ALWAYS;
        Run rb;
        int rr = run_opts(&p, A1, &o, &rb);
        CHECKF(rr == 0, "bands: %s", rb.msg);
        if (!rr) {
            for (int i = 0; i < rb.sum.nlayers; i++)
                CHECKF(!strstr(rb.sum.layers[i].split, " wsram") || !strstr(rb.sum.layers[i].split, " x"),
                       "bands: a group staged its streamed weights: '%s'", rb.sum.layers[i].split);
            CHECKF(rb.err <= tol_of(ISA_F32), "bands: error %g", rb.err);
            run_free(&rb);
        }
    }
    prep_free(&p);
    ir_free(&g);
}

/* Staged on a chip of one core a cluster (tiny): the 3x3 -> 1x1 -> 1x1
 * stack forced to stream in more than two steps, whose chunks from DRAM
 * every slice reads again (no other core shares them, but the slices do):
 * staged in the cluster's SRAM (" wsram") the group must read each
 * weight byte from DRAM once, fewer than from DRAM, and give the DRAM
 * plan's answers bit for bit (f32) and the interpreter's. Fails where
 * stage_ok refuses one-core clusters (no " wsram" plan). */
TEST(streamed_weights_staged_on_one_core)
{
    IrGraph g;
    AtlErr e;
    int64_t sd[4] = {1, 4, 23, 8};
    new_graph(&g, sd);
    conv_relu(&g, "s1", "x", 4, 32, 3, 1, 1, 1, "a");
    conv_relu(&g, "s2", "a", 32, 64, 1, 1, 0, 1, "b");
    conv(&g, "s3", "b", 64, 32, 1, 1, 0, 1, "y");
    ir_add_output(&g, "y", &e);
    Prep p;
    char msg[1024] = "";
    int rc = prepare(&g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "prepare: %s", msg);
    Run r[2];
    memset(r, 0, sizeof r);
    for (int ws = 0; ws < 2 && !rc; ws++) {
        BkOptions o;
        bk_options_default(&o);
        o.group_weights = BK_GW_STREAM;
        o.sram_acts = BK_SRAM_ACTS_NEVER;
        o.sram_weights = ws ? BK_SRAM_ALWAYS : BK_SRAM_NEVER;
        int rr = run_opts(&p, TINY, &o, &r[ws]);
        CHECKF(rr == 0 && r[ws].group >= 0, "chunks from %s: %s (%s)", ws ? "SRAM" : "DRAM", r[ws].msg, r[ws].ops);
        if (rr || r[ws].group < 0) { rc = -1; break; }
        const char *split = r[ws].sum.layers[r[ws].group].split, *sl = strchr(strstr(split, " w"), '/');
        printf("  %-4s split %-26s err %.3g, weights read %llu (region %llu), estimate %s\n", ws ? "SRAM" : "DRAM", split,
               r[ws].err, (unsigned long long)r[ws].group_wrd, (unsigned long long)r[ws].sum.weight_bytes, r[ws].est_at);
        CHECKF(r[ws].err <= tol_of(ISA_F32), "%s: error %g", split, r[ws].err);
        CHECK_EQ_INT(r[ws].fault, SIM_FAULT_NONE);
        CHECKF(fabs(r[ws].est_err) <= EST_TOL, "estimate: %s", r[ws].est_at);
        CHECKF((strstr(split, " wsram") != NULL) == ws && sl && atoi(sl + 1) > 2, "split '%s'", split);
    }
    if (!rc) {
        uint64_t wb = r[1].sum.weight_bytes, pad = 3 * 63 * 2;
        CHECKF(r[1].group_wrd <= wb && r[1].group_wrd + pad >= wb && r[0].group_wrd > r[1].group_wrd,
               "staged: %llu weight bytes read, from DRAM %llu, the weights are %llu",
               (unsigned long long)r[1].group_wrd, (unsigned long long)r[0].group_wrd, (unsigned long long)wb);
        int64_t k = 0, n = ir_numel(&p.ref[0]);
        while (k < n && r[0].out[0][k] == r[1].out[0][k]) k++;
        CHECKF(k == n, "element %lld: staged %.9g, from DRAM %.9g", (long long)k, k < n ? r[1].out[0][k] : 0,
               k < n ? r[0].out[0][k] : 0);
    }
    for (int ws = 0; ws < 2; ws++) run_free(&r[ws]);
    prep_free(&p);
    ir_free(&g);
}

/* ---- the LMEM checker ---- */


/* The backend's first phases by hand, as backend/compile.c runs them, up
 * to one chain layer of the nodes named in `members`, its slice height
 * chosen (and checked) on all cores. */
typedef struct ChainFix {
    Prep p;
    AtlChip chip;
    AbmWriter *w;
    BkCtx c;
    BkLayer layers[BK_CHAIN_MAX], chain;
    int n;
} ChainFix;

static void fix_free(ChainFix *f)
{
    for (int i = 0; i < f->n; i++) bk_layer_free(&f->layers[i]);
    bk_layer_free(&f->chain);
    abm_writer_free(f->w);
    free(f->c.pl); free(f->c.skip); free(f->c.gelu_src); free(f->c.act_on); free(f->c.tail);
    prep_free(&f->p);
}

static int node_named(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->nn; i++)
        if (g->nodes[i].name && !strcmp(g->nodes[i].name, name)) return i;
    return -1;
}

static int fix_setup(ChainFix *f, const IrGraph *g0, const char *chipfile, int dtype, const char *const *members, int nm,
                     AtlErr *e)
{
    char msg[1024];
    memset(f, 0, sizeof *f);
    if (prepare(g0, &f->p, msg, sizeof msg)) return atl_fail(e, "%s", msg);
    if (cfg_load(chipfile, &f->chip, e)) return -1;
    const IrGraph *g = &f->p.g;
    BkCtx *c = &f->c;
    c->g = g;
    c->chip = &f->chip;
    c->w = f->w = abm_writer_new(cfg_fingerprint(&f->chip));
    c->dt = dtype;
    c->es = isa_dtype_size(dtype);
    c->ncores = cfg_total_cores(&f->chip);
    c->grouping = 1;
    uint64_t row = (uint64_t)f->chip.lmem_banks * f->chip.lmem_bank_width;
    c->slot = (uint64_t)f->chip.lmem_bytes / 2 / row * row;
    c->align = (uint64_t)(f->chip.lmem_alignment > f->chip.lmem_bank_width ? f->chip.lmem_alignment
                                                                             : f->chip.lmem_bank_width);
    c->pl = calloc((size_t)g->nt + 1, sizeof *c->pl);
    c->skip = calloc((size_t)g->nn + 1, sizeof *c->skip);
    c->gelu_src = calloc((size_t)g->nn + 1, sizeof *c->gelu_src);
    c->act_on = calloc((size_t)g->nn + 1, sizeof *c->act_on);
    c->tail = calloc((size_t)g->nn + 1, sizeof *c->tail);
    if (!f->w || !c->pl || !c->skip || !c->gelu_src || !c->act_on || !c->tail) return atl_fail(e, "out of memory");
    for (int t = 0; t < g->nt; t++) c->pl[t].root = t;
    for (int i = 0; i < g->nn; i++) c->gelu_src[i] = c->tail[i] = -1;
    if (bk_match_patterns(c, e) || bk_place(c, e)) return -1;
    BkCoreSet all = {0, c->ncores};
    const BkLayer *mem[BK_CHAIN_MAX];
    for (; f->n < nm; f->n++) {
        BkLayer *ly = &f->layers[f->n];
        int node = node_named(g, members[f->n]);
        if (node < 0) return atl_fail(e, "no node '%s'", members[f->n]);
        ly->node = node;
        ly->tensor = -1;
        ly->slot_size = c->slot;
        if (bk_lower_node(c, node, ly, e) || bk_choose_shape(c, ly, all, e)) return -1;
        mem[f->n] = ly;
    }
    f->chain.node = f->layers[nm - 1].node;
    f->chain.tensor = -1;
    f->chain.slot_size = c->slot;
    int rc = bk_lower_chain(c, mem, nm, &f->chain, e);
    if (rc > 0) return atl_fail(e, "the members are no chain");
    return rc || bk_choose_shape(c, &f->chain, all, e) ? -1 : 0;
}

/* 0 when the checker refuses the plan with a message holding `node`
 * and `has`. */
static void expect_refused_at(ChainFix *f, const char *what, const char *node, const char *has)
{
    AtlErr e = {{0}};
    int rc = bk_chain_check(&f->c, &f->chain, &e);
    printf("    %-34s %s\n", what, rc ? e.msg : "(accepted)");
    CHECKF(rc != 0, "%s: the checker accepted the plan", what);
    CHECK_STR_CONTAINS(e.msg, node);
    CHECK_STR_CONTAINS(e.msg, has);
}

static void expect_refused(ChainFix *f, const char *what, const char *has)
{
    expect_refused_at(f, what, "node 'b1' (Conv): layer group", has);
}

TEST(checker_accepts_plans_and_refuses_corrupted_ones)
{
    IrGraph g;
    bottleneck(&g, 0);
    static const char *const members[] = {"b1", "b2", "sc", "b3"};
    for (int d = 0; d < 2; d++) {
        ChainFix f;
        AtlErr e = {{0}};
        int dt = d ? ISA_BF16 : ISA_F32;
        int rc = fix_setup(&f, &g, A1, dt, members, 4, &e);
        CHECKF(rc == 0, "setup: %s", e.msg);
        if (rc) { fix_free(&f); continue; }
        printf("  bottleneck on a1 %s: split %s, slots at %llu of %llu bytes\n", isa_dtype_name(dt), f.chain.split,
               (unsigned long long)f.chain.slot_off, (unsigned long long)f.chain.slot_size);
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
        /* a layer that is not a group */
        CHECK(bk_chain_check(&f.c, &f.layers[0], &e) != 0);
        CHECK_STR_CONTAINS(e.msg, "not a layer group");
        BkLayer keep = f.chain;
        f.chain.slot_size = 2 * f.c.align;
        expect_refused(&f, "slot too small", "ends beyond the slot");
        f.chain = keep;
        f.chain.slot_off = f.c.align;
        expect_refused(&f, "slots over the weights", "ends beyond the resident region below the slots");
        f.chain = keep;
        f.chain.slot_size = (uint64_t)f.chip.lmem_bytes / 2;
        expect_refused(&f, "slots beyond LMEM", "end beyond LMEM");
        f.chain = keep;
        uint64_t align = f.c.align;
        f.c.align = 3 * align;
        expect_refused(&f, "a coarser alignment", "not aligned");
        f.c.align = align;
        /* every buffer twice as large as planned: neighbours overlap */
        f.c.es *= 2;
        expect_refused(&f, "elements twice as large", "overlaps the row buffer of");
        f.c.es /= 2;
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the restored plan: %s", e.msg);
        /* buffers 1 a (b1's output, read by b2: steps 1..2) and 3 s (sc's,
         * read by b3: 3..4) may share bytes: s over a (as large or
         * smaller) is accepted, and s over x (0, read by sc: 0..3) not */
        CHECK_EQ_INT(bk_chain_buffers(&f.chain), 5);
        uint64_t *xo = bk_chain_buffer_off(&f.chain, 0), *ao = bk_chain_buffer_off(&f.chain, 1);
        uint64_t *so = bk_chain_buffer_off(&f.chain, 3), ks = *so;
        *so = *ao;
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "s over a: %s", e.msg);
        *so = *xo;
        expect_refused(&f, "s over x", "both live at step 3");
        *so = ks;
        fix_free(&f);
    }
    ir_free(&g);
}

/* ---- W slices ---- */

/* A pair whose whole rows do not fit a1's LMEM, resident or streamed: a
 * 1x1 64 -> 128 + Relu then a 3x3 128 -> 32 over 160 columns (three rows
 * of the 1x1's output are 240 KB, a slot about 166 KB beside 180 KB of
 * weights). It must group with slices of fewer columns ("W<n>" in the
 * split), every buffer holding the columns its reader's window needs, and
 * give the interpreter's answers (and --group none's, bit for bit in f32)
 * in full mode with the race detector. */
TEST(column_slices)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 64, 6, 160};
    new_graph(&g, xd);
    conv_relu(&g, "w1", "x", 64, 128, 1, 1, 0, 1, "a");
    conv(&g, "w2", "a", 128, 32, 3, 1, 1, 1, "y");
    ir_add_output(&g, "y", &e);
    for (int d = 0; d < 2; d++) {
        Run r;
        check_on(&g, "1x1->3x3 over 160 columns", A1, d ? ISA_BF16 : ISA_F32, "Group(2)", &r);
        CHECKF(split_field(&r, 'W') > 1, "the group has no column slices (split '%s')",
               r.group >= 0 ? r.sum.layers[r.group].split : "-");
        CHECK_EQ_INT(r.fault, SIM_FAULT_NONE);
        run_free(&r);
    }
    ir_free(&g);
}

/* ResNet-50's layer1 pair in small: conv1 1x1 256 -> 64 + Relu, conv2 3x3
 * 64 -> 64 + Relu over 56 columns (a row of the input is 57 KB in f32,
 * the three a slice of conv2 reads more than a1's slot beside the
 * weights). bk_lower_chain plans it with column slices, and the checker
 * accepts the plan and refuses it when its buffers are twice as large
 * as planned. */
TEST(resnet_pair_lowers_with_column_slices)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[4] = {1, 256, 4, 56};
    new_graph(&g, xd);
    conv_relu(&g, "b1", "x", 256, 64, 1, 1, 0, 1, "a");
    conv_relu(&g, "b2", "a", 64, 64, 3, 1, 1, 1, "y");
    ir_add_output(&g, "y", &e);
    static const char *const members[] = {"b1", "b2"};
    ChainFix f;
    int rc = fix_setup(&f, &g, A1, ISA_F32, members, 2, &e);
    CHECKF(rc == 0, "setup: %s", e.msg);
    if (rc == 0) {
        printf("  resnet layer1 pair on a1: split %s\n", f.chain.split);
        CHECK(strstr(f.chain.split, " W") != NULL);
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
        f.c.es *= 2;   /* every column slice's buffer twice as large as planned */
        expect_refused(&f, "W slices, elements twice as large", "the row buffer of");
        f.c.es /= 2;
    }
    fix_free(&f);
    ir_free(&g);
}

/* Placement split with too little SRAM writes a residual tail's result
 * over its dying residual (alloc/place.c, pair_in_place): x -> Sigmoid ->
 * t -> 1x1 + Relu -> 1x1 + t -> Relu -> y -> Sigmoid, batch 2, every
 * activation 16 x 256 x 192 f32 (3 MiB; a1's 4 MiB of SRAM holds one).
 * The chain of the two 1x1s (forced: --group-weights stream) reads t, as
 * the first's input and the second's residual, only in the rows each
 * slice stores y over, so it may form with y over t: it must, keep one
 * tensor in SRAM and none in DRAM, and give the interpreter's answers
 * and placement chip's bit for bit, with the race detector (which covers
 * SRAM and DRAM) finding nothing. */
TEST(chain_over_its_dying_residual)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 16, 256, 192};
    const uint64_t act = 16 * 256 * 192 * 4;
    new_graph(&g, xd);
    ir_add_op(&g, "Sigmoid", "s0", "x", "t", &e);
    conv_relu(&g, "c1", "t", 16, 16, 1, 1, 0, 1, "u");
    conv(&g, "c2", "u", 16, 16, 1, 1, 0, 1, "v");
    ir_add_op(&g, "Add", "add", "v,t", "s", &e);
    ir_add_op(&g, "Relu", "r2", "s", "y", &e);
    ir_add_op(&g, "Sigmoid", "s3", "y", "out", &e);
    ir_add_output(&g, "out", &e);
    Prep p;
    char msg[1024] = "";
    int rc = prepare(&g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    Run r[2];
    for (int split = 0; split < 2 && rc == 0; split++) {
        BkOptions o;
        bk_options_default(&o);
        o.placement = split ? BK_PLACE_SPLIT : BK_PLACE_CHIP;
        o.micro_batch = split;
        o.schedule = BK_SCHED_UNIFORM;
        o.group_weights = BK_GW_STREAM;
        int ra = run_opts(&p, A1, &o, &r[split]);
        printf("  %s: err %.3g  %s  %s\n", split ? "split" : "chip", ra ? -1.0 : r[split].err, r[split].ops, r[split].msg);
        CHECKF(ra == 0, "%s: %s", split ? "split" : "chip", r[split].msg);
        CHECK_EQ_INT(r[split].fault, SIM_FAULT_NONE);
        if (ra == 0) CHECKF(r[split].err <= 2e-6, "error %g", r[split].err);
    }
    if (rc == 0) {
        CHECKF(strstr(r[1].ops, "Group(2)") != NULL, "split: no group of c1, c2 (layers '%s')", r[1].ops);
        /* u stays in LMEM, y takes t's bytes: one tensor in SRAM, none in DRAM */
        CHECK_EQ_INT(r[1].sum.split, 1);
        CHECKF(r[1].sum.act_sram == act, "SRAM peak %llu bytes, expected %llu (y over t)",
               (unsigned long long)r[1].sum.act_sram, (unsigned long long)act);
        CHECK_EQ_INT(r[1].sum.act_dram_tensors, 0);
        int64_t n = ir_numel(&p.ref[0]), k = 0;
        while (r[0].out[0] && r[1].out[0] && k < n && r[0].out[0][k] == r[1].out[0][k]) k++;
        CHECKF(k == n, "split and chip differ at element %lld", (long long)k);
        run_free(&r[0]);
        run_free(&r[1]);
    }
    prep_free(&p);
    ir_free(&g);
}

/* ---- lifetimes in a slot ---- */

/* x (C channels, H x W) -> 1x1 + Relu -> a -> 3x3 + Relu -> b -> 1x1
 * -> y: x is dead once a is written, a once b is: x and b, a and y may
 * share bytes, about half of what a buffer each needs. */
static void three_convs(IrGraph *g, int C, int H, int W)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, W};
    new_graph(g, xd);
    conv_relu(g, "p1", "x", C, C, 1, 1, 0, 1, "a");
    conv_relu(g, "p2", "a", C, C, 3, 1, 1, 1, "b");
    conv(g, "p3", "b", C, C, 1, 1, 0, 1, "y");
    ir_add_output(g, "y", &e);
}

/* On a1, activations in DRAM, 32 channels of 32 x 224 (64 rows until
 * session 33: twice the simulated work for the same point): the three
 * convs take 32 slices when every buffer has its own bytes, 16 taller ones when
 * buffers share bytes by lifetime (lower/chain.c, layout): the group must take the
 * taller slices (fewer halo rows recomputed), give the interpreter's
 * answers and the unpacked plan's bit for bit in full mode (the race
 * detector finds no engine writing bytes another still reads), and the
 * cost model's estimate must stay within EST_TOL. */
/* g as one group (ops, e.g. "Group(3)") of `members` layers on a1,
 * activations in DRAM, packed and with a buffer each (--no-chain-pack):
 * both in full mode (race detector on) against the interpreter with
 * their estimates within EST_TOL; packed takes fewer, taller slices and
 * gives the unpacked plan's bits. */
static void packed_against_unpacked(IrGraph *g, const char *what, const char *ops, int members)
{
    Prep p;
    char msg[1024] = "";
    int rc = prepare(g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    Run r[2];
    int ok[2] = {0, 0};
    for (int pack = 0; pack < 2 && rc == 0; pack++) {
        BkOptions o = bkc_group_options(ISA_F32, BK_GROUP_AUTO);
        o.no_chain_pack = !pack;
        int ra = run_opts(&p, A1, &o, &r[pack]);
        ok[pack] = ra == 0;
        printf("  %s, %s: err %.3g  %s  split %s  %s\n", what, pack ? "packed" : "a buffer each", ra ? -1.0 : r[pack].err,
               r[pack].ops, r[pack].group >= 0 ? r[pack].sum.layers[r[pack].group].split : "-", r[pack].msg);
        CHECKF(ra == 0, "%s", r[pack].msg);
        if (ra) continue;
        CHECK_EQ_INT(r[pack].fault, SIM_FAULT_NONE);
        CHECKF(r[pack].err <= 2e-5, "%s: error %g", pack ? "packed" : "a buffer each", r[pack].err);
        CHECKF(!strcmp(r[pack].ops, ops), "layers '%s', expected %s", r[pack].ops, ops);
        CHECKF(fabs(r[pack].est_err) <= EST_TOL, "estimate: %s", r[pack].est_at);
    }
    if (ok[0] && ok[1]) {
        CHECKF(r[1].group >= 0 && r[1].sum.layers[r[1].group].nmembers == members, "packed: the group has %d members",
               r[1].group >= 0 ? r[1].sum.layers[r[1].group].nmembers : 0);
        CHECKF(split_field(&r[1], 'H') > 0 && split_field(&r[1], 'H') < split_field(&r[0], 'H'),
               "packed: %d slices, a buffer each: %d", split_field(&r[1], 'H'), split_field(&r[0], 'H'));
        int64_t n = ir_numel(&p.ref[0]), k = 0;
        while (k < n && r[0].out[0][k] == r[1].out[0][k]) k++;
        CHECKF(k == n, "packed and unpacked differ at element %lld", (long long)k);
    }
    for (int i = 0; i < 2; i++) if (ok[i]) run_free(&r[i]);
    if (rc == 0) prep_free(&p);
}

/* 1 when rows is a halving of OH (OH, ceil(OH / 2), ..., 1). */
static int is_halving(int OH, int rows)
{
    for (int h = OH;; h = (h + 1) / 2) {
        if (h == rows) return 1;
        if (h == 1) return 0;
    }
}

/* Slice heights beside the halvings (lower/chain.c, more_heights): on
 * tiny a 3x3 conv 2 -> 16 over 93 x 48 and a 2x2 MaxPool (46 output rows,
 * halvings 46, 23, 12, 6, 3, ...): 6 rows do not fit a slot, 5 do not
 * either, 4 do; the cost model takes the 4-row slices (12 of them, fewer
 * halo rows than 3-row ones), which only the tallest-fit candidate
 * offers; the answers the interpreter's and --group none's bit for bit. */
TEST(slice_heights_between_halvings)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 2, 93, 48};
    new_graph(&g, xd);
    conv_relu(&g, "c", "x", 2, 16, 3, 1, 1, 1, "a");
    pool(&g, "MaxPool", "pool", "a", 2, 2, 0, 0, 0, "y");
    ir_add_output(&g, "y", &e);
    Run r;
    check_on(&g, "conv->maxpool 46 rows", TINY, ISA_F32, "Group(2)", &r);
    int h = split_field(&r, 'H'), rows = h > 0 ? (46 + h - 1) / h : 0;
    CHECKF(h > 0 && !is_halving(46, rows) && split_field(&r, 'W') == 0, "split '%s': %d rows a slice, a halving of 46",
           r.group >= 0 ? r.sum.layers[r.group].split : "-", rows);
    run_free(&r);
    ir_free(&g);
}

/* A smaller group when a chain does not fit (group/form.c: the interval
 * programme prices every interval of joinable layers, so a chain that
 * does not fit only drops out, its sub-chains stay offered): on edge16k
 * with resident weights, a 3x3 conv 8 -> 16, MaxPool, 3x3 conv 16 -> 8,
 * MaxPool has no chain of all four (their weights and rows fit no slot,
 * not even in one-row, one-column slices), but the first conv and its pool form
 * a group rather than every layer running alone, with the interpreter's
 * answers and --group none's bit for bit. */
TEST(smaller_group_when_a_chain_does_not_fit)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 8, 93, 32};
    new_graph(&g, xd);
    conv_relu(&g, "c1", "x", 8, 16, 3, 1, 1, 1, "a");
    pool(&g, "MaxPool", "p1", "a", 2, 2, 0, 0, 0, "b");
    conv_relu(&g, "c2", "b", 16, 8, 3, 1, 1, 1, "c");
    pool(&g, "MaxPool", "p2", "c", 2, 2, 0, 0, 0, "y");
    ir_add_output(&g, "y", &e);
    static const char *const members[] = {"c1", "p1", "c2", "p2"};
    ChainFix f;
    int rc = fix_setup(&f, &g, EDGE, ISA_F32, members, 4, &e);
    CHECKF(rc != 0 && strstr(e.msg, "no chain"), "all four layers lower as one chain: %s", rc ? e.msg : f.chain.split);
    fix_free(&f);
    Run r;
    check_weights(&g, "conv->pool->conv->pool", EDGE, ISA_F32, BK_GW_RESIDENT, NULL, &r);
    CHECKF(r.group >= 0 && r.sum.nlayers < 4 && r.sum.nlayers > 1, "layers '%s': no smaller group formed", r.ops);
    run_free(&r);
    ir_free(&g);
}

TEST(packed_buffers_give_taller_slices)
{
    IrGraph g;
    three_convs(&g, 32, 32, 224);
    packed_against_unpacked(&g, "three convs", "Group(3)", 3);
    ir_free(&g);
}

/* The checker on a packed plan: it accepts the compiler's (some buffers
 * sharing bytes) and refuses it with a buffer moved onto one live at the
 * same step. Buffers, as the members meet them: 0 x, 1 a, 2 b, 3 y;
 * steps 0 the loads, 1..3 the members, 4 the store: x 0..1, a 1..2, b
 * 2..3, y 3..4. (checker_accepts_plans_and_refuses_corrupted_ones moves
 * a buffer onto a dead one.) */
TEST(checker_proves_lifetimes)
{
    IrGraph g;
    three_convs(&g, 16, 16, 32);
    static const char *const members[] = {"p1", "p2", "p3"};
    ChainFix f;
    AtlErr e = {{0}};
    int rc = fix_setup(&f, &g, TINY, ISA_F32, members, 3, &e);
    CHECKF(rc == 0, "setup: %s", e.msg);
    if (rc == 0) {
        printf("  three convs on tiny: split %s, %d buffers, %d pairs sharing bytes\n", f.chain.split,
               bk_chain_buffers(&f.chain), bk_chain_shared_pairs(&f.chain));
        CHECK_EQ_INT(bk_chain_buffers(&f.chain), 4);
        CHECK(bk_chain_buffer_off(&f.chain, 4) == NULL);
        CHECK(bk_chain_shared_pairs(&f.chain) > 0);
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
        uint64_t *a = bk_chain_buffer_off(&f.chain, 1), *b = bk_chain_buffer_off(&f.chain, 2), keep = *b;
        *b = *a;   /* p2 reads a while it writes b */
        expect_refused_at(&f, "b over a", "node 'p1' (Conv): layer group", "both live at step 2");
        *b = keep;
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the restored plan: %s", e.msg);
    }
    fix_free(&f);
    ir_free(&g);
}

/* ---- C slices of an inverted residual block ---- */

/* MobileNetV2's inverted residual block: x (C channels) -> 1x1 expand to
 * hd + Relu -> 3x3 depthwise (stride s) + Relu -> 1x1 project to M, plus
 * x when s is 1 and M is C. */
static void inverted_residual(IrGraph *g, const int64_t xd[4], int hd, int s, int M)
{
    AtlErr e;
    int C = (int)xd[1], res = s == 1 && M == C;
    new_graph(g, xd);
    conv_relu(g, "expand", "x", C, hd, 1, 1, 0, 1, "h1");
    conv_relu(g, "dw", "h1", hd, hd, 3, s, 1, hd, "h2");
    conv(g, "project", "h2", hd, M, 1, 1, 0, 1, res ? "p" : "y");
    if (res) ir_add_op(g, "Add", "add", "p,x", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Compiles g on chipfile with --group-cslice `mode` (the depthwise on the
 * vector unit, activations in DRAM) into r. */
static int run_cslice(const Prep *p, const char *chipfile, int dtype, int group, int mode, Run *r)
{
    BkOptions o = bkc_group_options(dtype, group);
    o.group_cslice = mode;
    return run_opts(p, chipfile, &o, r);
}

/* The block as one group with C slices (--group-cslice only: split
 * " c<slices>") against the interpreter and --group none on chipfile:
 * the project's partial sums over the hidden slices change only the
 * order of its f32 additions (the f32 tolerance); the estimate within
 * EST_TOL of the simulated span. With `never` no group has C slices. */
static void check_cslice(const IrGraph *g, const char *what, const char *chipfile, int dtype)
{
    Prep p;
    Run a, n, v;
    char msg[1024] = "";
    int rc = prepare(g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "%s: %s", what, msg);
    if (rc) { prep_free(&p); return; }
    int ra = run_cslice(&p, chipfile, dtype, BK_GROUP_AUTO, BK_CS_ONLY, &a);
    int rn = run_cslice(&p, chipfile, dtype, BK_GROUP_NONE, BK_CS_AUTO, &n);
    int rv = run_cslice(&p, chipfile, dtype, BK_GROUP_AUTO, BK_CS_NEVER, &v);
    printf("  %-26s %-20s %-4s err %.3g, none %.3g  %s%s%s%s%s\n", what, chipfile, isa_dtype_name(dtype), ra ? -1.0 : a.err, rn ? -1.0 : n.err, a.ops,
           a.group >= 0 ? "  split " : "", a.group >= 0 ? a.sum.layers[a.group].split : "", a.msg, n.msg);
    CHECKF(ra == 0 && rn == 0 && rv == 0, "%s on %s: %s%s%s", what, chipfile, a.msg, n.msg, v.msg);
    if (ra == 0 && rn == 0 && rv == 0) {
        CHECKF(!strcmp(a.ops, "Group(3)") && split_field(&a, 'c') >= 2, "%s on %s: layers '%s' split '%s', expected a C-sliced Group(3)",
               what, chipfile, a.ops, a.group >= 0 ? a.sum.layers[a.group].split : "");
        CHECKF(a.err <= tol_of(dtype) && n.err <= tol_of(dtype), "%s on %s: error %g (none %g) > %g", what, chipfile,
               a.err, n.err, tol_of(dtype));
        if (a.est_at[0]) printf("    estimate: %s\n", a.est_at);
        CHECKF(fabs(a.est_err) <= EST_TOL, "%s on %s: a group's estimate off by more than %.0f%%: %s", what, chipfile,
               100 * EST_TOL, a.est_at);
        for (int i = 0; i < v.sum.nlayers; i++)
            CHECKF(!strstr(v.sum.layers[i].split, " c"), "%s on %s: --group-cslice never made C slices: %s", what, chipfile,
                   v.sum.layers[i].split);
    }
    run_free(&a);
    run_free(&n);
    run_free(&v);
    prep_free(&p);
}

/* The checker on a C-sliced plan (the inverted residual on a1, f32 and
 * bf16, lowered again with --group-cslice only): it accepts the
 * compiler's plan and refuses it with its slot too small, its slots over
 * the resident weights, a coarser alignment or elements twice as large. */
static void cslice_checker(const IrGraph *g, int dt)
{
    static const char *const members[] = {"expand", "dw", "project"};
    ChainFix f;
    AtlErr e = {{0}};
    int rc = fix_setup(&f, g, A1, dt, members, 3, &e);
    CHECKF(rc == 0, "setup: %s", e.msg);
    if (rc) { fix_free(&f); return; }
    const BkLayer *mem[3] = {&f.layers[0], &f.layers[1], &f.layers[2]};
    BkCoreSet all = {0, f.c.ncores};
    bk_layer_free(&f.chain);
    memset(&f.chain, 0, sizeof f.chain);
    f.chain.node = f.layers[2].node;
    f.chain.tensor = -1;
    f.chain.slot_size = f.c.slot;
    f.c.cslice_only = 1;
    rc = bk_lower_chain(&f.c, mem, 3, &f.chain, &e) || bk_choose_shape(&f.c, &f.chain, all, &e);
    CHECKF(rc == 0, "C-sliced chain: %s", e.msg);
    if (rc) { fix_free(&f); return; }
    printf("  inverted residual on a1 %s: split %s\n", isa_dtype_name(dt), f.chain.split);
    CHECK(strstr(f.chain.split, " c") != NULL);
    CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
    BkLayer keep = f.chain;
    uint64_t align = f.c.align;
    for (int k = 0; k < 4; k++) {
        static const char *const what[] = {"slot too small", "slots over the weights", "a coarser alignment",
                                           "elements twice as large"};
        static const char *const has[] = {"ends beyond the slot", "ends beyond the resident region", "align",
                                          "overlaps"};
        if (k == 0) f.chain.slot_size = 2 * f.c.align;
        if (k == 1) f.chain.slot_off = f.c.align;
        if (k == 2) f.c.align = 3 * align;
        if (k == 3) f.c.es *= 2;
        rc = bk_chain_check(&f.c, &f.chain, &e);
        printf("    %-34s %s\n", what[k], rc ? e.msg : "(accepted)");
        CHECKF(rc != 0, "%s: the checker accepted the plan", what[k]);
        CHECK_STR_CONTAINS(e.msg, "node 'expand' (Conv): layer group");
        CHECK_STR_CONTAINS(e.msg, has[k]);
        f.chain = keep;
        f.c.align = align;
        f.c.es = isa_dtype_size(dt);
    }
    CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the restored plan: %s", e.msg);
    fix_free(&f);
}

/* hd = 80 hidden channels: every count of slices the plan may take (16
 * f32 or 32 bf16 channels a unit of the 64-byte alignment) leaves the
 * last slice narrower (f32 48 + 32 or 32 + 32 + 16, bf16 64 + 16 or
 * 32 + 32 + 16): uneven slices on every chip. bf16: the depthwise on the
 * matrix unit (pre-chunked weights), the f32 accumulators in the slot. */
TEST(c_slices_of_an_inverted_residual)
{
    IrGraph g;
    int64_t xd[4] = {1, 4, 10, 4};   /* narrow enough for edge16k's 16 KiB */
    inverted_residual(&g, xd, 80, 1, 4);
    for (int c = 0; c < 3; c++) check_cslice(&g, "inverted residual", chips3[c], ISA_F32);
    for (int c = 0; c < 2; c++) check_cslice(&g, "inverted residual", chips3[c], ISA_BF16);   /* edge16k: no room for the f32 scratch */
    check_cslice(&g, "inverted residual", A1, ISA_F16);
    cslice_checker(&g, ISA_F32);
    cslice_checker(&g, ISA_BF16);
    ir_free(&g);
    inverted_residual(&g, xd, 80, 2, 8);
    for (int c = 0; c < 3; c++) check_cslice(&g, "inverted residual s2", chips3[c], ISA_F32);
    check_cslice(&g, "inverted residual s2", A1, ISA_BF16);
    ir_free(&g);
}

/* ---- channel slices across cores ---- */

/* x (C channels) -> 1x1 expand to hd + Relu -> 3x3 depthwise (stride s)
 * + Relu -> h2; then (tail) a 3x3 conv to 8 channels -> y, a consumer
 * that reads every channel of h2 (no C-sliced block: not a 1x1). */
static void expand_depthwise(IrGraph *g, const int64_t xd[4], int hd, int s, int tail)
{
    AtlErr e;
    new_graph(g, xd);
    conv_relu(g, "expand", "x", (int)xd[1], hd, 1, 1, 0, 1, "h1");
    conv_relu(g, "dw", "h1", hd, hd, 3, s, 1, hd, tail ? "h2" : "y");
    if (tail) conv(g, "tail", "h2", hd, 8, 3, 1, 1, 1, "y");
    ir_add_output(g, "y", &e);
}

/* The expand and depthwise as one group with channel slices across cores
 * (--group-cslice only: split " C<slices>") on chipfile, activations in
 * DRAM (sram 0) or as placement chip chooses (sram 1: on a1 the group's
 * output in channel bands of the clusters' SRAM, which the tail reads):
 * no sum is split, so bit for bit --group none's answers (f32 and bf16),
 * within the tolerance of the interpreter's, the estimate within EST_TOL
 * of the simulated span (exact 0: a plan around the group may differ,
 * within the tolerance). */
static void check_xc(const IrGraph *g, const char *what, const char *chipfile, int dtype, int sram, int exact)
{
    Prep p;
    Run a, n;
    char msg[1024] = "";
    int rc = prepare(g, &p, msg, sizeof msg);
    CHECKF(rc == 0, "%s: %s", what, msg);
    if (rc) { prep_free(&p); return; }
    BkOptions o = bkc_group_options(dtype, BK_GROUP_AUTO);
    if (sram) o.sram_acts = BK_SRAM_ACTS_AUTO;
    o.group_cslice = BK_CS_ONLY;
    int ra = run_opts(&p, chipfile, &o, &a);
    o.group = BK_GROUP_NONE;
    o.group_cslice = BK_CS_AUTO;
    int rn = run_opts(&p, chipfile, &o, &n);
    printf("  %-22s %-20s %-4s %s err %.3g, none %.3g  %s%s%s%s%s\n", what, chipfile, isa_dtype_name(dtype),
           sram ? "sram" : "dram", ra ? -1.0 : a.err, rn ? -1.0 : n.err, a.ops, a.group >= 0 ? "  split " : "",
           a.group >= 0 ? a.sum.layers[a.group].split : "", a.msg, n.msg);
    CHECKF(ra == 0 && rn == 0, "%s on %s: %s%s", what, chipfile, a.msg, n.msg);
    if (ra == 0 && rn == 0) {
        CHECKF(!strncmp(a.ops, "Group(2)", 8) && split_field(&a, 'C') >= 2,
               "%s on %s: layers '%s' split '%s', expected a Group(2) with channel slices", what, chipfile, a.ops,
               a.group >= 0 ? a.sum.layers[a.group].split : "");
        CHECKF(a.err <= tol_of(dtype) && n.err <= tol_of(dtype), "%s on %s: error %g (none %g) > %g", what, chipfile,
               a.err, n.err, tol_of(dtype));
        int64_t m = ir_numel(&p.ref[0]), bad = 0;
        for (int64_t i = 0; i < m && exact; i++) bad += a.out[0][i] != n.out[0][i];
        CHECKF(bad == 0, "%s on %s: %lld of %lld outputs differ from --group none", what, chipfile, (long long)bad,
               (long long)m);
        if (a.est_at[0]) printf("    estimate: %s\n", a.est_at);
        CHECKF(fabs(a.est_err) <= EST_TOL, "%s on %s: a group's estimate off by more than %.0f%%: %s", what, chipfile,
               100 * EST_TOL, a.est_at);
    }
    run_free(&a);
    run_free(&n);
    prep_free(&p);
}

/* The checker on a plan with channel slices (expand + depthwise on a1,
 * lowered again with --group-cslice only): it accepts the compiler's
 * plan and refuses it with its slot too small, a coarser alignment and
 * elements twice as large (its resident input rows then too small). */
static void xc_checker(const IrGraph *g, int dt)
{
    static const char *const members[] = {"expand", "dw"};
    ChainFix f;
    AtlErr e = {{0}};
    int rc = fix_setup(&f, g, A1, dt, members, 2, &e);
    CHECKF(rc == 0, "setup: %s", e.msg);
    if (rc) { fix_free(&f); return; }
    const BkLayer *mem[2] = {&f.layers[0], &f.layers[1]};
    BkCoreSet all = {0, f.c.ncores};
    bk_layer_free(&f.chain);
    memset(&f.chain, 0, sizeof f.chain);
    f.chain.node = f.layers[1].node;
    f.chain.tensor = -1;
    f.chain.slot_size = f.c.slot;
    f.c.cslice_only = 1;
    rc = bk_lower_chain(&f.c, mem, 2, &f.chain, &e) || bk_choose_shape(&f.c, &f.chain, all, &e);
    CHECKF(rc == 0, "channel-sliced chain: %s", e.msg);
    if (rc) { fix_free(&f); return; }
    printf("  expand + depthwise on a1 %s: split %s\n", isa_dtype_name(dt), f.chain.split);
    CHECK(strstr(f.chain.split, " C") != NULL);
    CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
    BkLayer keep = f.chain;
    uint64_t align = f.c.align;
    for (int k = 0; k < 3; k++) {
        static const char *const what[] = {"slot too small", "a coarser alignment", "elements twice as large"};
        static const char *const has[] = {"ends beyond the slot", "align", "the resident input rows take"};
        if (k == 0) f.chain.slot_size = 2 * f.c.align;
        if (k == 1) f.c.align = 3 * align;
        if (k == 2) f.c.es *= 2;
        rc = bk_chain_check(&f.c, &f.chain, &e);
        printf("    %-34s %s\n", what[k], rc ? e.msg : "(accepted)");
        CHECKF(rc != 0, "%s: the checker accepted the plan", what[k]);
        CHECK_STR_CONTAINS(e.msg, "node 'expand' (Conv): layer group");
        CHECK_STR_CONTAINS(e.msg, has[k]);
        f.chain = keep;
        f.c.align = align;
        f.c.es = isa_dtype_size(dt);
    }
    CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the restored plan: %s", e.msg);
    fix_free(&f);
}

/* Uneven slices (the last narrower) on every chip: 80 hidden channels on
 * tiny (2 slices of 48 + 32) and edge16k (2 or 3 slices, a 2 x 2 image
 * for its 16 KiB), 272 on a1 (8 to 32 slices: 9 of 32 + 16, ...); stride
 * 1 and 2; f32 with the depthwise on the vector unit, bf16 on the matrix
 * unit (f32 accumulators in the slot); on a1 also with the activations
 * placed by placement chip. Bit for bit --group none's answers where the
 * group's output is the graph's (with the tail, whose plan the forced
 * pricing may change, within the tolerance). */
TEST(channel_slices_across_cores)
{
    IrGraph g;
    int64_t small[4] = {1, 16, 4, 4}, xd[4] = {1, 16, 6, 6}, least[4] = {1, 16, 2, 2};
    expand_depthwise(&g, small, 80, 1, 0);
    check_xc(&g, "expand + depthwise", TINY, ISA_F32, 0, 1);
    check_xc(&g, "expand + depthwise", TINY, ISA_BF16, 0, 1);
    ir_free(&g);
    expand_depthwise(&g, least, 80, 1, 0);
    check_xc(&g, "expand + depthwise", EDGE, ISA_F32, 0, 1);
    ir_free(&g);
    expand_depthwise(&g, xd, 272, 1, 0);
    check_xc(&g, "expand + depthwise", A1, ISA_F32, 0, 1);
    check_xc(&g, "expand + depthwise", A1, ISA_BF16, 0, 1);
    xc_checker(&g, ISA_F32);
    xc_checker(&g, ISA_BF16);
    ir_free(&g);
    expand_depthwise(&g, xd, 272, 2, 1);
    check_xc(&g, "expand + dw s2 + conv", A1, ISA_F32, 0, 0);
    check_xc(&g, "expand + dw s2 + conv", A1, ISA_F32, 1, 0);
    check_xc(&g, "expand + dw s2 + conv", A1, ISA_BF16, 1, 0);
    ir_free(&g);
    expand_depthwise(&g, small, 80, 2, 1);
    check_xc(&g, "expand + dw s2 + conv", TINY, ISA_F32, 0, 0);
    ir_free(&g);
}

/* ---- Concat, Resize and elementwise members (lower/chain_ops.c) ---- */

/* The graphs: an Inception-like concat of two conv branches of x, then a
 * conv; a U-Net-like step (a stride-2 conv, a nearest 2x Resize, the
 * concat with x, a conv); a Mul gate (x times a sigmoid conv of x, then a
 * conv); the Add + Relu of a max and an average pool of a conv, then a
 * conv; a squeeze-and-excitation gate (a conv, its global average pool
 * through a 1x1 conv + Sigmoid, the conv's output times that per-channel
 * gate, a conv). C channels in, every conv 3x3 pad 1 unless said. */
typedef enum { MG_INCEPTION, MG_UNET, MG_GATE, MG_ADD_POOLS, MG_SE } MemberGraph;

static void resize2x(IrGraph *g, const char *name, const char *x, const char *out)
{
    AtlErr e;
    char roi[64], sc[64], ins[200];
    float scales[4] = {1, 1, 2, 2};
    int64_t four = 4, zero = 0;
    snprintf(roi, sizeof roi, "%s_roi", name);
    snprintf(sc, sizeof sc, "%s_scales", name);
    ir_add_const(g, roi, IR_F32, 1, &zero, NULL, &e);
    ir_add_const(g, sc, IR_F32, 1, &four, scales, &e);
    snprintf(ins, sizeof ins, "%s,%s,%s", x, roi, sc);
    int n = ir_add_op(g, "Resize", name, ins, out, &e);
    ir_set_attr_str(g, n, "mode", "nearest", &e);
}

static void member_graph(IrGraph *g, MemberGraph kind, int C, int H, int W)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, W};
    new_graph(g, xd);
    int n;
    switch (kind) {
    case MG_INCEPTION:
        conv_relu(g, "ca", "x", C, C, 1, 1, 0, 1, "a");
        conv_relu(g, "cb", "x", C, C, 3, 1, 1, 1, "b");
        n = ir_add_op(g, "Concat", "cat", "a,b", "ab", &e);
        ir_set_attr_int(g, n, "axis", 1, &e);
        conv(g, "co", "ab", 2 * C, C, 3, 1, 1, 1, "y");
        break;
    case MG_UNET:
        conv_relu(g, "cd", "x", C, C, 3, 2, 1, 1, "d");
        resize2x(g, "up", "d", "u");
        n = ir_add_op(g, "Concat", "cat", "u,x", "ux", &e);
        ir_set_attr_int(g, n, "axis", 1, &e);
        conv(g, "co", "ux", 2 * C, C, 3, 1, 1, 1, "y");
        break;
    case MG_GATE:
        conv(g, "cg", "x", C, C, 3, 1, 1, 1, "gc");
        ir_add_op(g, "Sigmoid", "sig", "gc", "gs", &e);
        ir_add_op(g, "Mul", "gate", "x,gs", "m", &e);
        conv(g, "co", "m", C, C, 3, 1, 1, 1, "y");
        break;
    case MG_ADD_POOLS:
        conv_relu(g, "c1", "x", C, C, 3, 1, 1, 1, "a");
        pool(g, "MaxPool", "mp", "a", 3, 1, 1, 0, 0, "p");
        pool(g, "AveragePool", "ap", "a", 3, 1, 1, 0, 0, "q");
        ir_add_op(g, "Add", "padd", "p,q", "s0", &e);
        ir_add_op(g, "Relu", "prelu", "s0", "s", &e);
        conv(g, "co", "s", C, C, 3, 1, 1, 1, "y");
        break;
    case MG_SE:
        conv_relu(g, "c1", "x", C, C, 3, 1, 1, 1, "a");
        ir_add_op(g, "GlobalAveragePool", "gap", "a", "p", &e);
        conv(g, "fc", "p", C, C, 1, 1, 0, 1, "fz");
        ir_add_op(g, "Sigmoid", "fsig", "fz", "f", &e);
        ir_add_op(g, "Mul", "se", "a,f", "m", &e);
        conv(g, "co", "m", C, C, 3, 1, 1, 1, "y");
        break;
    }
    ir_add_output(g, "y", &e);
}

/* Each graph on a1 in f32 forms one group holding its Concat, Resize or
 * elementwise layer (the summary has no such layer left), its estimate
 * within EST_TOL of the simulated span, bit for bit equal to --group none
 * and within rounding of the interpreter, with an uneven last slice (and
 * for the U-Net step, 10 output rows in slices of 3: the Resize's slices
 * start at odd rows); in bf16 (2C channels: each concat input's channels
 * start aligned); on tiny and edge16k as the cost model chooses, and on
 * tiny with --group-weights stream, where the Resize, the Mul gate and
 * the pools' Add join streaming groups. The squeeze-and-excitation gate's
 * group is its 1x1 conv (one row, recomputed by every slice), the Mul by
 * the per-channel gate and the last conv. */
TEST(concat_resize_elementwise_members)
{
    static const struct { MemberGraph kind; const char *what, *a1; int C, H, W; const char *tiny; } cases[] = {
        {MG_INCEPTION, "inception concat", "Group(4)", 16, 23, 20, "Conv+Relu Group(2) Conv"},
        {MG_UNET, "unet resize+concat", "Group(4)", 16, 20, 20, "Group(2) Concat Conv"},
        {MG_GATE, "mul gate", "Group(3)", 16, 23, 20, "Group(2) Conv"},
        {MG_ADD_POOLS, "add of two pools", "Conv+Relu Group(4)", 16, 23, 20, "Group(5)"},
        {MG_SE, "per-channel gate", "Conv+Relu GlobalAveragePool Group(3)", 16, 23, 20, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrGraph g;
        Run r;
        member_graph(&g, cases[i].kind, cases[i].C, cases[i].H, cases[i].W);
        check_on(&g, cases[i].what, A1, ISA_F32, cases[i].a1, &r);
        int oh = cases[i].kind == MG_UNET ? cases[i].H / 2 : cases[i].H, h = split_field(&r, 'H');
        int rows = h > 0 ? (oh + h - 1) / h : 0;
        CHECKF(h > 1 && oh % rows != 0, "%s on a1: %d slices of %d rows: no uneven last slice", cases[i].what, h, rows);
        if (cases[i].kind == MG_UNET) CHECKF(rows % 2, "%s on a1: slices of %d rows start at even rows only", cases[i].what, rows);
        run_free(&r);
        check_on(&g, cases[i].what, TINY, ISA_F32, NULL, NULL);
        check_on(&g, cases[i].what, EDGE, ISA_F32, NULL, NULL);
        ir_free(&g);
        member_graph(&g, cases[i].kind, 2 * cases[i].C, cases[i].H, cases[i].W);
        check_on(&g, cases[i].what, A1, ISA_BF16, cases[i].a1, NULL);
        check_weights(&g, cases[i].what, TINY, ISA_F32, BK_GW_STREAM, cases[i].tiny, NULL);
        ir_free(&g);
    }
}

/* The checker covers the new members: the compiler's plans of an
 * Inception concat and a U-Net step pass; with the alignment doubled
 * under them (128 bytes) the second concat input's channels (from 16
 * f32, 64 bytes) and the Resize's input rows (9 columns of 16 f32, 576
 * bytes) no longer start aligned, and it refuses them by name. */
TEST(checker_covers_concat_and_resize)
{
    static const struct { MemberGraph kind; int W; const char *members[4], *has; } cases[] = {
        {MG_INCEPTION, 20, {"ca", "cb", "cat", "co"}, "node 'cat' (Concat): layer group: concat input 1 (channels from 16) is unaligned"},
        {MG_UNET, 18, {"cd", "up", "cat", "co"}, "node 'up' (Resize): layer group: resize rows of 9 x 16 channels are unaligned"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrGraph g;
        ChainFix f;
        AtlErr e = {{0}};
        member_graph(&g, cases[i].kind, 16, 20, cases[i].W);
        int rc = fix_setup(&f, &g, A1, ISA_F32, cases[i].members, 4, &e);
        CHECKF(rc == 0, "%s: %s", cases[i].members[2], e.msg);
        if (rc == 0) {
            CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
            f.c.align = 128;
            rc = bk_chain_check(&f.c, &f.chain, &e);
            printf("    %-34s %s\n", cases[i].members[1], rc ? e.msg : "(accepted)");
            CHECK(rc != 0);
            CHECK_STR_CONTAINS(e.msg, cases[i].has);
        }
        fix_free(&f);
        ir_free(&g);
    }
}

/* ---- interpolating Resize members (lower/resize.c) ---- */

/* A Resize of x (C channels) to OH x OW by sizes, in `mode` with the
 * coordinate transformation `ctm`. */
static void resize_to(IrGraph *g, const char *name, const char *x, const char *out, const char *mode, const char *ctm,
                      int C, int OH, int OW)
{
    AtlErr e;
    char roi[64], sc[64], sz[64], ins[256];
    int64_t zero = 0, four = 4, sizes[4] = {1, C, OH, OW};
    snprintf(roi, sizeof roi, "%s_roi", name);
    snprintf(sc, sizeof sc, "%s_scales", name);
    snprintf(sz, sizeof sz, "%s_sizes", name);
    ir_add_const(g, roi, IR_F32, 1, &zero, NULL, &e);
    ir_add_const(g, sc, IR_F32, 1, &zero, NULL, &e);
    ir_add_const(g, sz, IR_I64, 1, &four, sizes, &e);
    snprintf(ins, sizeof ins, "%s,%s,%s,%s", x, roi, sc, sz);
    int n = ir_add_op(g, "Resize", name, ins, out, &e);
    ir_set_attr_str(g, n, "mode", mode, &e);
    ir_set_attr_str(g, n, "coordinate_transformation_mode", ctm, &e);
}

/* An FPN / segmentation head step: x (C x H x W) -> conv k x k stride s
 * pad p + Relu ("cd") -> Resize back to H x W ("up") -> Add x (or Concat
 * with x) -> conv 3x3 ("co", unless noconv: the Add is y) -> y; with k
 * 0, x of ih x iw -> Resize to H x W -> conv 3x3 -> y. */
typedef struct UpCase { const char *what, *mode, *ctm; int C, H, W, k, s, p, concat, a1, noconv, ih, iw; } UpCase;

static void up_graph(IrGraph *g, const UpCase *u)
{
    AtlErr e;
    int64_t xd[4] = {1, u->C, u->k ? u->H : u->ih, u->k ? u->W : u->iw};
    new_graph(g, xd);
    if (!u->k) {   /* x (ih x iw) -> Resize -> conv -> y */
        resize_to(g, "up", "x", "u", u->mode, u->ctm, u->C, u->H, u->W);
        conv(g, "co", "u", u->C, u->C, 3, 1, 1, 1, "y");
        ir_add_output(g, "y", &e);
        return;
    }
    conv_relu(g, "cd", "x", u->C, u->C, u->k, u->s, u->p, 1, "d");
    resize_to(g, "up", "d", "u", u->mode, u->ctm, u->C, u->H, u->W);
    if (u->concat) {
        int n = ir_add_op(g, "Concat", "cat", "u,x", "ux", &e);
        ir_set_attr_int(g, n, "axis", 1, &e);
    } else ir_add_op(g, "Add", "add", "u,x", u->noconv ? "y" : "ux", &e);
    if (!u->noconv) conv(g, "co", "ux", u->concat ? 2 * u->C : u->C, u->C, 3, 1, 1, 1, "y");
    ir_add_output(g, "y", &e);
}

static const UpCase up_cases[] = {
    {"bilinear x2 half_pixel + add", "linear", "half_pixel", 32, 20, 20, 3, 2, 1, 0, 1, 0, 0, 0},
    {"bilinear x2 align_corners cat", "linear", "align_corners", 32, 20, 18, 3, 2, 1, 1, 1, 0, 0, 0},
    {"bilinear 14->20 half_pixel", "linear", "half_pixel", 32, 20, 20, 7, 1, 0, 0, 1, 0, 0, 0},
    {"bilinear 9x8->17x15 pytorch", "linear", "pytorch_half_pixel", 32, 17, 15, 3, 2, 1, 0, 0, 0, 0, 0},
    {"bilinear x2 asymmetric cat", "linear", "asymmetric", 32, 18, 20, 3, 2, 1, 1, 1, 0, 0, 0},
    {"cubic 14->20 half_pixel", "cubic", "half_pixel", 32, 20, 20, 7, 1, 0, 0, 0, 0, 0, 0},
    {"bilinear 14->20 -> conv", "linear", "half_pixel", 32, 20, 20, 0, 0, 0, 0, 1, 0, 14, 14},
    {"bilinear 13x7->19x17 align -> conv", "linear", "align_corners", 32, 19, 17, 0, 0, 0, 0, 1, 0, 13, 7},
};

/* The small chips: 1x1 convs; a group holding the Resize is priced
 * cheaper on edge16k, and taken on tiny with --group-weights stream
 * (streamed steps around the member). */
static const UpCase up_small[] = {
    {"bilinear x2 1x1 conv, 16 ch", "linear", "half_pixel", 16, 8, 8, 1, 2, 0, 0, 1, 0, 0, 0},
    {"bilinear x2 1x1 conv, no tail", "linear", "half_pixel", 16, 8, 8, 1, 2, 0, 0, 1, 1, 0, 0},
};

/* 1 when the grouped run holds the graph's Resize in a group. */
static int resize_grouped(const Run *r) { return r->group >= 0 && !strstr(r->ops, "Resize"); }

/* Each head on a1 in f32 (those with a1 set: the others as the cost
 * model chooses) forms a group holding its interpolating Resize (no
 * Resize layer left), bit for bit equal to --group none (the member runs
 * the layer's sums in the layer's order) and within rounding of the
 * interpreter, its estimate within EST_TOL of the simulated span; the
 * small chips' heads likewise on tiny (streamed weights) and edge16k. */
TEST(interpolating_resize_members)
{
    Run r;
    for (size_t i = 0; i < sizeof up_cases / sizeof up_cases[0]; i++) {
        IrGraph g;
        up_graph(&g, &up_cases[i]);
        check_on(&g, up_cases[i].what, A1, ISA_F32, NULL, &r);
        CHECKF(!up_cases[i].a1 || resize_grouped(&r), "%s on a1: the Resize is not in a group: '%s'", up_cases[i].what, r.ops);
        run_free(&r);
        ir_free(&g);
    }
    for (int c = 0; c < 2; c++) {
        IrGraph g;
        const char *chip = c ? EDGE : TINY;
        up_graph(&g, &up_small[c]);
        check_weights(&g, up_small[c].what, chip, ISA_F32, c ? BK_GW_AUTO : BK_GW_STREAM, NULL, &r);
        CHECKF(resize_grouped(&r), "%s on %s: the Resize is not in a group: '%s'", up_small[c].what, chip, r.ops);
        run_free(&r);
        ir_free(&g);
    }
}

/* Slice inference of an interpolating Resize (bk_slice_need, the same
 * function the group's slices and checker use): output rows [o0, o0+n)
 * read input rows floor(x(o0)) .. ceil(x(o0+n-1)) of the mapped
 * coordinate x(o), clamped to the input, computed here from the ONNX
 * formulas; columns likewise; N and C pass through. */
static double mapped(const char *ctm, int o, int in, int out)
{
    double scale = (double)out / in;
    if (!strcmp(ctm, "align_corners")) return out > 1 ? (double)o * (in - 1) / (out - 1) : 0;
    if (!strcmp(ctm, "asymmetric")) return o / scale;
    if (!strcmp(ctm, "pytorch_half_pixel")) return out > 1 ? (o + 0.5) / scale - 0.5 : 0;
    return (o + 0.5) / scale - 0.5;   /* half_pixel */
}

static int clampi(double v, int n) { return v < 0 ? 0 : v > n - 1 ? n - 1 : (int)v; }

TEST(interpolating_resize_halo_rows)
{
    for (size_t i = 0; i < sizeof up_cases / sizeof up_cases[0]; i++) {
        const UpCase *u = &up_cases[i];
        if (strcmp(u->mode, "linear")) continue;
        IrGraph g;
        ChainFix f;
        AtlErr e = {{0}};
        const char *members[2] = {u->k ? "cd" : "up", u->k ? "up" : "co"};
        int li = u->k ? 1 : 0;   /* the Resize's layer */
        up_graph(&g, u);
        int rc = fix_setup(&f, &g, A1, ISA_F32, members, 2, &e);
        CHECKF(rc == 0, "%s: %s", u->what, e.msg);
        const BkLow *l = &f.layers[li].lw;
        int ih = l->H, iw = l->W, bad = 0, boxes = 0;
        for (int o0 = 0; rc == 0 && o0 < u->H; o0++)
            for (int n = 1; o0 + n <= u->H; n += 2) {
                int c0 = o0 % u->W, cn = u->W - c0 < n ? u->W - c0 : n;
                BkBox out = {4, {0, 3, o0, c0}, {1, 5, n, cn}}, need;
                REQUIRE(bk_slice_need(&f.c, &f.layers[li], 0, &out, &need, &e) == 0);
                int lo = clampi(floor(mapped(u->ctm, o0, ih, u->H)), ih);
                int hi = clampi(ceil(mapped(u->ctm, o0 + n - 1, ih, u->H)), ih);
                int clo = clampi(floor(mapped(u->ctm, c0, iw, u->W)), iw);
                int chi = clampi(ceil(mapped(u->ctm, c0 + cn - 1, iw, u->W)), iw);
                boxes++;
                if (need.lo[2] != lo || need.n[2] != hi - lo + 1 || need.lo[3] != clo || need.n[3] != chi - clo + 1 ||
                    need.lo[1] != 3 || need.n[1] != 5 || need.lo[0] != 0 || need.n[0] != 1) {
                    if (!bad++)
                        printf("    %s: rows %d+%d cols %d+%d need rows %lld+%lld cols %lld+%lld, expected %d..%d, %d..%d\n",
                               u->what, o0, n, c0, cn, (long long)need.lo[2], (long long)need.n[2], (long long)need.lo[3],
                               (long long)need.n[3], lo, hi, clo, chi);
                }
            }
        CHECKF(bad == 0, "%s: %d of %d boxes need other rows or columns", u->what, bad, boxes);
        if (rc == 0) {   /* rows 3..6 of a x2 upsampling (half_pixel: x = o / 2 - 1/4): rows 1..3 */
            BkBox out = {4, {0, 0, 3, 0}, {1, u->C, 4, u->W}}, need;
            REQUIRE(bk_slice_need(&f.c, &f.layers[li], 0, &out, &need, &e) == 0);
            if (i == 0) { CHECK_EQ_INT((int)need.lo[2], 1); CHECK_EQ_INT((int)need.n[2], 3); }
        }
        fix_free(&f);
        ir_free(&g);
    }
}

/* The checker on an interpolating Resize member: the compiler's plan of
 * Resize (10 x 9 -> 20 x 18, 16 f32 channels) -> conv passes; with the
 * alignment doubled under it (128 bytes) the Resize's input rows (9 x 16
 * f32, 576 bytes), which its `mm` reads from any row of the slice's band,
 * no longer start aligned, and it refuses them by name. */
TEST(checker_covers_interpolating_resize)
{
    UpCase u = {"resize -> conv", "linear", "half_pixel", 16, 20, 18, 0, 0, 0, 0, 1, 0, 10, 9};
    const char *members[2] = {"up", "co"};
    IrGraph g;
    ChainFix f;
    AtlErr e = {{0}};
    up_graph(&g, &u);
    int rc = fix_setup(&f, &g, A1, ISA_F32, members, 2, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (rc == 0) {
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
        f.c.align = 128;
        rc = bk_chain_check(&f.c, &f.chain, &e);
        printf("    %-34s %s\n", "up", rc ? e.msg : "(accepted)");
        CHECK(rc != 0);
        CHECK_STR_CONTAINS(e.msg, "node 'up' (Resize): layer group: interpolated rows of 9 x 16 channels are unaligned");
    }
    fix_free(&f);
    ir_free(&g);
}

/* A TF-style explicit zero Pad before a VALID conv (x -> 3x3 conv + Relu
 * -> Pad 1 on H and W -> 3x3 conv, no pads -> y) folds into the second
 * conv's padding (passes/padfold.c), so both convs form one group on a1
 * (before the fold, the Pad was a DRAM-to-DRAM layer between them; at
 * 20 x 16 the two layers alone now price lower than the group). */
TEST(zero_pad_folds_into_a_group)
{
    AtlErr e;
    IrGraph g;
    int64_t xd[4] = {1, 16, 40, 32}, eight = 8, pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    new_graph(&g, xd);
    conv_relu(&g, "c1", "x", 16, 16, 3, 1, 1, 1, "a");
    ir_add_const(&g, "pp", IR_I64, 1, &eight, pads, &e);
    ir_add_op(&g, "Pad", "pad", "a,pp", "ap", &e);
    conv(&g, "c2", "ap", 16, 16, 3, 1, 0, 1, "y");
    ir_add_output(&g, "y", &e);
    check_on(&g, "conv, Pad, VALID conv", A1, ISA_F32, "Group(2)", NULL);
    ir_free(&g);
}

/* ---- a Concat of four inputs with packed buffers ---- */

/* YOLO's SPPF block: x (C channels) -> 1x1 to h + Relu -> a -> MaxPool
 * 5x5 stride 1 pad 2 three times in sequence (a -> p1 -> p2 -> p3) ->
 * Concat(a, p1, p2, p3) -> q -> 1x1 to C -> y. p2 is read by mp3 and
 * the Concat, p3 by the Concat alone: its third and fourth inputs
 * (ChainMember.xin). Buffers, as the members meet them: 0 x, 1 a, 2 p1,
 * 3 p2, 4 p3, 5 q, 6 y; steps 0 the loads, 1..6 the members, 7 the
 * store: x 0..1, a 1..5, p1 2..5, p2 3..5, p3 4..5, q 5..6, y 6..7. */
static void sppf(IrGraph *g, int C, int h, int H, int W)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, W};
    new_graph(g, xd);
    conv_relu(g, "cv1", "x", C, h, 1, 1, 0, 1, "a");
    pool(g, "MaxPool", "mp1", "a", 5, 1, 2, 0, 0, "p1");
    pool(g, "MaxPool", "mp2", "p1", 5, 1, 2, 0, 0, "p2");
    pool(g, "MaxPool", "mp3", "p2", 5, 1, 2, 0, 0, "p3");
    int n = ir_add_op(g, "Concat", "cat", "a,p1,p2,p3", "q", &e);
    ir_set_attr_int(g, n, "axis", 1, &e);
    conv(g, "cv2", "q", 4 * h, C, 1, 1, 0, 1, "y");
    ir_add_output(g, "y", &e);
}

/* SPPF on a1 (32 channels of 32 x 28, activations in DRAM): with a
 * buffer each (--no-chain-pack) it groups all six layers in 16 slices of
 * 2 rows, packed by lifetime in 8 taller ones. The packed group must
 * hold the Concat (one Group(6), no Concat left), give the interpreter's
 * answers and the unpacked plan's bit for bit in full mode (race
 * detector on). Had p2 or p3 died at its producer's next member (their
 * lifetimes without the Concat's xin[]), packing put q over them and
 * the Concat's copies overwrote inputs it had still to read (error 0.63). */
TEST(sppf_concat_of_four_packed)
{
    IrGraph g;
    sppf(&g, 32, 32, 32, 28);
    packed_against_unpacked(&g, "sppf", "Group(6)", 6);
    ir_free(&g);
}

/* The checker on SPPF's packed plan: it accepts the compiler's and
 * refuses it with q (the Concat's output, steps 5..6) moved onto p2, or
 * p3 moved onto q: the Concat's third and fourth inputs, live until step
 * 5, when the Concat reads them. (q over p3 would first overlap a, below
 * p3 in this plan.) */
TEST(checker_keeps_concat_inputs_alive)
{
    IrGraph g;
    sppf(&g, 32, 32, 32, 28);
    static const char *const members[] = {"cv1", "mp1", "mp2", "mp3", "cat", "cv2"};
    ChainFix f;
    AtlErr e = {{0}};
    int rc = fix_setup(&f, &g, A1, ISA_F32, members, 6, &e);
    CHECKF(rc == 0, "setup: %s", e.msg);
    if (rc == 0) {
        printf("  sppf on a1: split %s, %d buffers, %d pairs sharing bytes\n", f.chain.split, bk_chain_buffers(&f.chain),
               bk_chain_shared_pairs(&f.chain));
        CHECK_EQ_INT(bk_chain_buffers(&f.chain), 7);
        CHECK(bk_chain_shared_pairs(&f.chain) > 0);
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the compiler's plan: %s", e.msg);
        static const struct { int moved, onto; const char *what, *has; } moves[] = {
            {5, 3, "q over p2", "the row buffer of 'p2'"},
            {4, 5, "p3 over q", "the row buffer of 'p3'"},
        };
        for (int i = 0; i < 2; i++) {
            uint64_t *mv = bk_chain_buffer_off(&f.chain, moves[i].moved), keep = *mv;
            *mv = *bk_chain_buffer_off(&f.chain, moves[i].onto);
            rc = bk_chain_check(&f.c, &f.chain, &e);
            printf("    %-34s %s\n", moves[i].what, rc ? e.msg : "(accepted)");
            CHECKF(rc != 0, "%s: the checker accepted the plan", moves[i].what);
            if (rc) {
                CHECK_STR_CONTAINS(e.msg, "node 'cv1' (Conv): layer group");
                CHECK_STR_CONTAINS(e.msg, moves[i].has);
                CHECK_STR_CONTAINS(e.msg, "overlaps the row buffer of 'q'");
                CHECK_STR_CONTAINS(e.msg, "both live at step 5");
            }
            *mv = keep;
        }
        CHECKF(bk_chain_check(&f.c, &f.chain, &e) == 0, "the restored plan: %s", e.msg);
    }
    fix_free(&f);
    ir_free(&g);
}

int main(void)
{
    RUN(conv_conv_chain);
    RUN(downsampling_bottleneck);
    RUN(conv_pool_chains);
    RUN(depthwise_in_a_chain);
    RUN(batch_two);
    RUN(uneven_last_slices);
    RUN(what_must_not_group);
    RUN(group_on_the_first_cluster);
    RUN(pools_alone);
    RUN(border_rows_of_padding);
    RUN(more_members);
    RUN(streamed_weights);
    RUN(streamed_weights_once_per_cluster);
    RUN(streamed_weights_staged_on_one_core);
    RUN(checker_accepts_plans_and_refuses_corrupted_ones);
    RUN(column_slices);
    RUN(resnet_pair_lowers_with_column_slices);
    RUN(chain_over_its_dying_residual);
    RUN(slice_heights_between_halvings);
    RUN(smaller_group_when_a_chain_does_not_fit);
    RUN(packed_buffers_give_taller_slices);
    RUN(checker_proves_lifetimes);
    RUN(c_slices_of_an_inverted_residual);
    RUN(channel_slices_across_cores);
    RUN(concat_resize_elementwise_members);
    RUN(checker_covers_concat_and_resize);
    RUN(interpolating_resize_members);
    RUN(interpolating_resize_halo_rows);
    RUN(checker_covers_interpolating_resize);
    RUN(zero_pad_folds_into_a_group);
    RUN(sppf_concat_of_four_packed);
    RUN(checker_keeps_concat_inputs_alive);
    return test_summary("test_backend_group");
}
