/* vec.c - elementwise ops, reductions and (Log)Softmax on the vector unit.
 *
 * Elementwise (Add Sub Mul Div Max Min Pow, variadic Sum Mean Max Min of up
 * to BK_MAXIN inputs (Mean: the sum times 1/n; more inputs are chained
 * into several nodes by legalize/rewrite_ops.c), Relu LeakyRelu Clip Sigmoid Tanh
 * Exp Log Sqrt Reciprocal Neg Abs HardSigmoid HardSwish Gelu, the Gelu/erf
 * pattern, unfused BatchNormalization): the output is collapsed to at most
 * 4 dims (adjacent dims merge when every input walks them contiguously),
 * each input gets element strides per output dim (0 where it broadcasts).
 * A tile is a box of the output; each input is loaded as its own box with
 * extent 1 along broadcast dims (so broadcasting costs no DMA), and the
 * vector ops read it with stride 0 there. The op becomes a short register
 * program (BkStep): Div = recip + mul; Pow by a constant 2/3/1/0.5/-1 = mul/
 * copy/sqrt/recip, otherwise exp(p * log x) (x > 0); BatchNormalization =
 * x * s + t with s, t per channel computed at compile time; Neg = affine;
 * Abs = max(x, -x); HardSwish = x * clip(x/6 + 1/2, 0, 1); Clip by constant
 * scalar bounds = v.clip, by a run-time (one-value) min / max = v.max /
 * v.min with that bound as an input broadcast by stride 0; PRelu Elu Celu
 * Selu Softplus Softsign Shrink ThresholdedRelu use a second scratch
 * register (act_steps; comparisons as exact 0/1 masks, mask_steps); a fused
 * activation is appended. Ops with a row in compiler/lower/elem_prog.c's table
 * (rounding, Sign, trigonometric and hyperbolic functions, Erf, Mod fmod=1,
 * Pow with a run-time or non-scalar exponent, Pow of an integer base,
 * BitShift) take their program from it.
 * Reductions (ReduceSum/Mean/Max/Min/SumSquare/L1/L2/LogSum/LogSumExp/Prod over
 * a contiguous run of axes; with noop_with_empty_axes and no axes a copy as a
 * sum over one element; GlobalAveragePool, GlobalMaxPool), Softmax and
 * LogSoftmax: [outer][red][inner], tiles over outer (a reduction over
 * whole channel planes of a banded input loads them as channels x rows,
 * planes_of_rows, so its cluster's cells come from SRAM); one register program
 * per op (table red_defs: vector steps and v.rsum / v.rmax steps), e.g.
 * min = -max(-x), L2 = sqrt(sum(x*x)), LogSumExp and (Log)Softmax subtract
 * the row maximum first, ReduceProd = sign * exp(sum(log |x|)).
 * LayerNormalization (opset 17): [rows][L] tiles: sum/L, subtract, square,
 * sum/L + eps, rsqrt, multiply, scale, shift (scale/bias kept in the slot;
 * constants or run-time tensors of L elements);
 * the optional Mean and InvStdDev outputs ([rows], the normalised axes
 * reduced to 1) are stored from the row mean and 1/sqrt registers.
 * Dtypes: each layer works in its tensors' storage dtypes (BkLow.dt/xdt,
 * compiler/target/dtype.c): floats in the --dtype, integers as i8/i16/i32 for
 * the ops the vector unit does exactly on them (Add Sub Mul Max Min Neg
 * Abs Relu Clip Identity, ReduceSum/Max/Min; an integer Clip reads its
 * bounds as registers, v.max / v.min). Every register of an elementwise
 * program has its own dtype (BkLow.reg_dt): inputs are loaded in their
 * tensors' dtypes, a step computes in its source's, a v.cast writes the
 * output's (bk_step_dtypes; table programs may convert inputs first). Cast
 * is a one-step program, a v.cast from the input's dtype to the output's;
 * an integer -> bool Cast is min(max(x, -x), 1) in the input's dtype, then
 * that v.cast.
 * All tile boxes are sized to fit one LMEM slot and, when possible, give
 * every core at least one tile. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#include "compiler/lower/lower.h"

static int op_is(const IrNode *n, const char *s) { return !strcmp(n->op, s); }

/* ---- the box tiling shared by elementwise and reductions ---- */

static void box_of(const BkLow *l, int t, uint32_t o[4], uint32_t ext[4])
{
    int r = t;
    for (int d = 3; d >= 0; d--) {
        int i = r % (int)l->nch[d];
        r /= (int)l->nch[d];
        o[d] = (uint32_t)i * l->chunk[d];
        ext[d] = l->od[d] - o[d] < l->chunk[d] ? l->od[d] - o[d] : l->chunk[d];
    }
}

static uint64_t box_elems(const uint32_t ch[4]) { return (uint64_t)ch[0] * ch[1] * ch[2] * ch[3]; }

static void set_counts(BkLow *l)
{
    for (int d = 0; d < 4; d++) l->nch[d] = (l->od[d] + l->chunk[d] - 1) / l->chunk[d];
}

static int elem_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    uint32_t o[4], ext[4];
    box_of(l, t, o, ext);
    int64_t full[4];
    bk_compact(ext, full);
    int64_t rs[BK_MAXIN + BK_MAXSTEP][4];
    for (int i = 0; i < l->nin; i++) {
        uint32_t ie[4];
        int64_t ss[4], ds[4];
        uint64_t src = l->in_addr[i];
        for (int d = 0; d < 4; d++) {
            ie[d] = l->in_str[i][d] ? ext[d] : 1;
            src += (uint64_t)(o[d] * l->in_str[i][d]) * (uint64_t)isa_dtype_size(l->reg_dt[i]);
            ss[d] = l->in_str[i][d];
        }
        bk_compact(ie, ds);
        for (int d = 0; d < 4; d++) rs[i][d] = l->in_str[i][d] ? ds[d] : 0;
        AtlInsn in = bk_dma(l->reg_dt[i], ISA_SPACE_LMEM, slot + l->l_reg[i], ISA_SPACE_DRAM, src, ie, ds, ss);
        bk_code_ld(k, &in, 0);
    }
    for (int r = l->nin; r < l->nregs; r++) memcpy(rs[r], full, sizeof full);
    for (int s = 0; s < l->nsteps; s++) {
        const BkStep *st = &l->steps[s];
        int dt = l->reg_dt[st->a];   /* a v.cast converts into its dst's dtype */
        AtlInsn in;
        if (st->b >= 0)
            in = bk_vbin(st->op, dt, slot + l->l_reg[st->dst], slot + l->l_reg[st->a], slot + l->l_reg[st->b], ext,
                         rs[st->dst], rs[st->a], rs[st->b]);
        else
            in = bk_vun(st->op, dt, slot + l->l_reg[st->dst], slot + l->l_reg[st->a], ext, rs[st->dst], rs[st->a],
                        st->alpha, st->beta);
        if (st->op == ISA_OP_V_CAST) in.otype = (uint8_t)l->reg_dt[st->dst];
        bk_code_cp(k, &in);
    }
    uint32_t n = (uint32_t)box_elems(ext);
    int dt = l->dt;
    if (l->act[0] && bk_act_code(k, l->act, l->act_alpha, l->act_beta, dt, slot + l->l_reg[l->out_reg],
                                 slot + l->l_tmp, n, 0))
        return bk_fail(c, ly->node, e, "activation %s cannot be fused", l->act);
    int64_t ds[4];
    uint64_t dst = l->y;
    bk_compact(l->od, ds);
    for (int d = 0; d < 4; d++) dst += (uint64_t)(o[d] * ds[d]) * (uint64_t)l->es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, slot + l->l_reg[l->out_reg], ext, ds, full);
    bk_code_st(k, &in);
    return 0;
}

/* Chooses chunk[] so that bytes_per_elem x box fits the slot and, when
 * possible, there are at least `cores` tiles; keeps inner dims whole first.
 * `keep` dims (bit d) are never split. */
static int fit_box(BkCtx *c, BkLow *l, uint64_t cap, uint64_t bytes_per_elem, unsigned keep)
{
    for (int d = 0; d < 4; d++) l->chunk[d] = l->od[d];
    for (;;) {
        int fits = box_elems(l->chunk) * bytes_per_elem + 8 * c->align <= cap;
        set_counts(l);
        uint64_t tiles = (uint64_t)l->nch[0] * l->nch[1] * l->nch[2] * l->nch[3];
        if (fits && (tiles >= (uint64_t)c->ncores || box_elems(l->chunk) <= 1024)) return 0;
        int d = 0;
        while (d < 4 && (l->chunk[d] == 1 || (keep >> d & 1))) d++;
        if (d == 4) return fits ? 0 : -1;
        l->chunk[d] = (l->chunk[d] + 1) / 2;
    }
}

/* The box tiling for other vector lowerings (lower/quant.c). */
void bk_box_of(const BkLow *l, int t, uint32_t o[4], uint32_t ext[4]) { box_of(l, t, o, ext); }
int bk_fit_box(BkCtx *c, BkLow *l, uint64_t cap, uint64_t bytes_per_elem) { return fit_box(c, l, cap, bytes_per_elem, 0); }

/* ---- elementwise ---- */

/* Strides of input tensor shape (rank r) broadcast to output dims od (rank ro). */
static void bcast_strides(const int64_t *dims, int r, const int64_t *od, int ro, int64_t *st)
{
    int64_t s = 1;
    for (int d = ro - 1; d >= 0; d--) {
        int id = d - (ro - r);
        if (id < 0 || dims[id] == 1) st[d] = 0;
        else { st[d] = s; s *= dims[id]; }
        (void)od;
    }
}

typedef struct ElemIn { uint64_t addr; int ndim; int64_t dims[IR_MAXDIM]; } ElemIn;

static int add_step(BkLow *l, int op, int dst, int a, int b, float alpha, float beta)
{
    if (l->nsteps == BK_MAXSTEP) return -1;
    l->steps[l->nsteps++] = (BkStep){op, dst, a, b, alpha, beta};
    return 0;
}

static int const_scalar(const IrGraph *g, int t, double *v)
{
    if (t < 0 || !g->t[t].data || ir_numel(&g->t[t]) != 1) return 0;
    *v = ir_get_f(&g->t[t], 0);
    return 1;
}

/* out = max(x, 0) + a * (exp(k * min(x, 0)) - 1): the negative branch of
 * Elu (k = 1), Celu (k = 1/alpha), Selu (then times gamma); min(x, 0) is
 * x - max(x, 0), exact. */
static void neg_exp_steps(BkLow *l, int out, int tmp, float k, float a)
{
    add_step(l, ISA_OP_V_RELU, out, 0, -1, 0, 0);
    add_step(l, ISA_OP_V_SUB, tmp, 0, out, 0, 0);
    if (k != 1.0f) add_step(l, ISA_OP_V_AFFINE, tmp, tmp, -1, k, 0);
    add_step(l, ISA_OP_V_EXP, tmp, tmp, -1, 0, 0);
    add_step(l, ISA_OP_V_AFFINE, tmp, tmp, -1, a, -a);
    add_step(l, ISA_OP_V_ADD, out, out, tmp, 0, 0);
}

/* dst = clip(src * 2^254, lo, 1): with lo = 0 the step 1 if src > 0 else 0,
 * with lo = -1 the sign of src; exact, since the smallest denormal times
 * 2^254 still exceeds 1 and the vector unit compares no other way. */
static void mask_steps(BkLow *l, int dst, int src, float lo)
{
    add_step(l, ISA_OP_V_AFFINE, dst, src, -1, 0x1p127f, 0);
    add_step(l, ISA_OP_V_AFFINE, dst, dst, -1, 0x1p127f, 0);
    add_step(l, ISA_OP_V_CLIP, dst, dst, -1, lo, 1.0f);
}

/* Activations that need a second scratch register `tmp` (x is register 0,
 * PRelu's slope register 1). Returns -1 with *why set when the op or its
 * attributes have no exact form with the vector ops. */
static int act_steps(BkLow *l, const IrNode *nd, int out, int tmp, const char **why)
{
    if (op_is(nd, "PRelu")) {
        /* max(x, 0) + slope * min(x, 0) */
        add_step(l, ISA_OP_V_RELU, out, 0, -1, 0, 0);
        add_step(l, ISA_OP_V_SUB, tmp, 0, out, 0, 0);
        add_step(l, ISA_OP_V_MUL, tmp, tmp, 1, 0, 0);
        add_step(l, ISA_OP_V_ADD, out, out, tmp, 0, 0);
    } else if (op_is(nd, "Elu")) neg_exp_steps(l, out, tmp, 1.0f, ir_attr_float(nd, "alpha", 1.0f));
    else if (op_is(nd, "Celu")) {
        float a = ir_attr_float(nd, "alpha", 1.0f);
        if (a == 0) { *why = "Celu with alpha 0"; return -1; }
        neg_exp_steps(l, out, tmp, 1.0f / a, a);
    } else if (op_is(nd, "Selu")) {
        neg_exp_steps(l, out, tmp, 1.0f, ir_attr_float(nd, "alpha", 1.67326319217681884765625f));
        add_step(l, ISA_OP_V_AFFINE, out, out, -1, ir_attr_float(nd, "gamma", 1.05070102214813232421875f), 0);
    } else if (op_is(nd, "Softplus")) {
        /* max(x, 0) + log(1 + exp(-|x|)): no overflow for large |x| */
        add_step(l, ISA_OP_V_RELU, out, 0, -1, 0, 0);
        add_step(l, ISA_OP_V_AFFINE, tmp, 0, -1, -1.0f, 0);
        add_step(l, ISA_OP_V_MIN, tmp, 0, tmp, 0, 0);
        add_step(l, ISA_OP_V_EXP, tmp, tmp, -1, 0, 0);
        add_step(l, ISA_OP_V_AFFINE, tmp, tmp, -1, 1.0f, 1.0f);
        add_step(l, ISA_OP_V_LOG, tmp, tmp, -1, 0, 0);
        add_step(l, ISA_OP_V_ADD, out, out, tmp, 0, 0);
    } else if (op_is(nd, "Softsign")) {
        /* x / (1 + |x|) */
        add_step(l, ISA_OP_V_AFFINE, tmp, 0, -1, -1.0f, 0);
        add_step(l, ISA_OP_V_MAX, tmp, 0, tmp, 0, 0);
        add_step(l, ISA_OP_V_AFFINE, tmp, tmp, -1, 1.0f, 1.0f);
        add_step(l, ISA_OP_V_RECIP, tmp, tmp, -1, 0, 0);
        add_step(l, ISA_OP_V_MUL, out, 0, tmp, 0, 0);
    } else if (op_is(nd, "Shrink")) {
        float lambd = ir_attr_float(nd, "lambd", 0.5f), bias = ir_attr_float(nd, "bias", 0.0f);
        if (lambd < 0) { *why = "Shrink with a negative lambd is not lowered"; return -1; }
        if (bias == lambd) {
            /* soft shrink: x - clip(x, -lambd, lambd) */
            add_step(l, ISA_OP_V_CLIP, tmp, 0, -1, -lambd, lambd);
            add_step(l, ISA_OP_V_SUB, out, 0, tmp, 0, 0);
        } else {
            /* step(|x| - lambd) * (x - bias * sign(x)) */
            add_step(l, ISA_OP_V_AFFINE, tmp, 0, -1, -1.0f, 0);
            add_step(l, ISA_OP_V_MAX, tmp, 0, tmp, 0, 0);
            add_step(l, ISA_OP_V_AFFINE, tmp, tmp, -1, 1.0f, -lambd);
            mask_steps(l, tmp, tmp, 0.0f);
            mask_steps(l, out, 0, -1.0f);
            add_step(l, ISA_OP_V_AFFINE, out, out, -1, -bias, 0);
            add_step(l, ISA_OP_V_ADD, out, out, 0, 0, 0);
            add_step(l, ISA_OP_V_MUL, out, out, tmp, 0, 0);
        }
    } else if (op_is(nd, "ThresholdedRelu")) {
        /* x * step(x - alpha) */
        add_step(l, ISA_OP_V_AFFINE, tmp, 0, -1, 1.0f, -ir_attr_float(nd, "alpha", 1.0f));
        mask_steps(l, tmp, tmp, 0.0f);
        add_step(l, ISA_OP_V_MUL, out, 0, tmp, 0, 0);
    } else {
        *why = "the vector unit has no lowering for this op";
        return -1;
    }
    return 0;
}

int bk_lower_elem(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_ELEM;
    const IrTensor *y = &gr->t[nd->out[0]];
    /* the inputs' dtype (a Gelu pattern's and BatchNormalization's are float) */
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->xdt = c->gelu_src[node] >= 0 ? c->dt : bk_tensor_dt(c, nd->in[0]);
    l->es = isa_dtype_size(l->dt);
    l->xes = isa_dtype_size(l->xdt);
    int is_int = bk_is_int_dt(l->xdt);
    /* register dtypes: inputs as loaded, scratch in the inputs' dtype until
     * a step writes it (bk_step_dtypes) */
    for (int r = 0; r < BK_MAXIN + BK_MAXSTEP; r++) l->reg_dt[r] = (int8_t)l->xdt;
    ElemIn ins[BK_MAXIN];
    int clip_reg[3] = {-1, -1, -1};   /* Clip: register of a run-time min / max, -1 constant or absent */
    int nin = 0;
    int out = -1;
    /* inputs */
    int gelu = c->gelu_src[node];
    if (gelu >= 0) {
        ins[0].ndim = gr->t[gelu].ndim;
        memcpy(ins[0].dims, gr->t[gelu].dims, sizeof ins[0].dims);
        if (bk_tensor_in_dram(c, gelu, &ins[0].addr, e)) return -1;
        nin = 1;
    } else if (op_is(nd, "BatchNormalization")) {
        const IrTensor *x = &gr->t[nd->in[0]];
        int C = x->ndim >= 2 ? (int)x->dims[1] : 1;
        float eps = ir_attr_float(nd, "epsilon", 1e-5f);
        for (int i = 1; i < 5; i++)
            if (nd->in[i] < 0 || !gr->t[nd->in[i]].data) return bk_fail(c, node, e, "BatchNormalization parameters must be constants");
        uint8_t *s = malloc((size_t)C * c->es), *t = malloc((size_t)C * c->es);
        if (!s || !t) { free(s); free(t); return bk_fail(c, node, e, "out of memory"); }
        for (int ch = 0; ch < C; ch++) {
            double sc = ir_get_f(&gr->t[nd->in[1]], ch) / sqrt(ir_get_f(&gr->t[nd->in[4]], ch) + eps);
            bk_store_elem(c->dt, s, (size_t)ch, sc);
            bk_store_elem(c->dt, t, (size_t)ch, ir_get_f(&gr->t[nd->in[2]], ch) - ir_get_f(&gr->t[nd->in[3]], ch) * sc);
        }
        ins[0].ndim = x->ndim;
        memcpy(ins[0].dims, x->dims, sizeof ins[0].dims);
        int rc = bk_tensor_in_dram(c, nd->in[0], &ins[0].addr, e);
        for (int i = 1; i < 3 && !rc; i++) {
            ins[i].ndim = x->ndim;
            for (int d = 0; d < x->ndim; d++) ins[i].dims[d] = d == 1 ? C : 1;
            rc = bk_weight(c, i == 1 ? s : t, (size_t)C * c->es, &ins[i].addr, e);
        }
        free(s); free(t);
        if (rc) return -1;
        nin = 3;
    } else {
        double pv0;   /* not read: a float base's constant scalar exponent (folded into the steps), the "like" */
        int lim = (op_is(nd, "Pow") && !is_int && const_scalar(gr, nd->in[1], &pv0)) || op_is(nd, "CastLike") ? 1 : nd->nin;
        for (int i = 0; i < lim; i++) {
            if (nd->in[i] < 0) continue;
            double bound;
            if (op_is(nd, "Clip") && i > 0) {   /* a constant float bound goes into v.clip, others are read */
                if (!is_int && const_scalar(gr, nd->in[i], &bound)) continue;
                if (ir_numel(&gr->t[nd->in[i]]) != 1) return bk_fail(c, node, e, "Clip %s must hold one value", i == 1 ? "min" : "max");
                clip_reg[i] = nin;
            }
            if (nin == BK_MAXIN) return bk_fail(c, node, e, "more than %d inputs", BK_MAXIN);
            const IrTensor *x = &gr->t[nd->in[i]];
            ins[nin].ndim = x->ndim;
            memcpy(ins[nin].dims, x->dims, sizeof ins[nin].dims);
            if (bk_tensor_in_dram(c, nd->in[i], &ins[nin].addr, e)) return -1;
            l->reg_dt[nin++] = (int8_t)bk_tensor_dt(c, nd->in[i]);
        }
        if (op_is(nd, "PRelu") && nin == 2 && gr->opset < 7 && ins[0].ndim >= 2 && ins[1].ndim == 1 &&
            ins[1].dims[0] == ins[0].dims[1] && ins[1].dims[0] != ins[0].dims[ins[0].ndim - 1]) {
            /* opset-6 PRelu: a per-channel slope lines up with axis 1 */
            int64_t ch = ins[1].dims[0];
            ins[1].ndim = ins[0].ndim;
            for (int d = 0; d < ins[1].ndim; d++) ins[1].dims[d] = d == 1 ? ch : 1;
        }
    }
    if (nin < 1) return bk_fail(c, node, e, "no inputs");
    /* register program */
    l->nin = nin;
    l->nsteps = 0;
    int R = nin;               /* first scratch register */
    int scratch = 1;           /* scratch registers: out, and a temporary for act_steps */
    out = R;
    struct { const char *name; int op; } bin[] = {
        {"Add", ISA_OP_V_ADD}, {"Sub", ISA_OP_V_SUB}, {"Mul", ISA_OP_V_MUL}, {"Max", ISA_OP_V_MAX}, {"Min", ISA_OP_V_MIN},
        {"Sum", ISA_OP_V_ADD}, {"Mean", ISA_OP_V_ADD}, {NULL, 0}};
    struct { const char *name; int op; } un[] = {
        {"Relu", ISA_OP_V_RELU}, {"Sigmoid", ISA_OP_V_SIGMOID}, {"Tanh", ISA_OP_V_TANH}, {"Exp", ISA_OP_V_EXP},
        {"Log", ISA_OP_V_LOG}, {"Sqrt", ISA_OP_V_SQRT}, {"Reciprocal", ISA_OP_V_RECIP}, {"Gelu", ISA_OP_V_GELU},
        {"Identity", ISA_OP_V_MOV}, {"Cast", ISA_OP_V_CAST}, {"CastLike", ISA_OP_V_CAST}, {NULL, 0}};
    /* a table program (lower/elem_prog.c) sets its registers' dtypes itself */
    int table = gelu < 0 ? bk_elem_program(gr, nd, l, nin, &out, &scratch) : 0;
    if (table < 0) return bk_fail(c, node, e, "program longer than %d steps", BK_MAXSTEP);
    int done = table;
    if (!done && gelu >= 0) {
        add_step(l, ISA_OP_V_GELU, out, 0, -1, 0, 0);
        done = 1;
    }
    if (!done && (op_is(nd, "Cast") || op_is(nd, "CastLike")) && y->dtype == IR_BOOL) {
        /* integer x != 0 as min(max(x, -x), 1): exact (|INT_MIN| saturates
         * to INT_MAX), then v.cast into a second register when x is wider */
        add_step(l, ISA_OP_V_AFFINE, out, 0, -1, -1.0f, 0);
        add_step(l, ISA_OP_V_MAX, out, 0, out, 0, 0);
        add_step(l, ISA_OP_V_CLIP, out, out, -1, 0.0f, 1.0f);
        if (l->xdt != l->dt) { add_step(l, ISA_OP_V_CAST, out + 1, out, -1, 0, 0); out++; scratch = 2; }
        done = 1;
    }
    if (!done && op_is(nd, "BatchNormalization")) {
        add_step(l, ISA_OP_V_MUL, out, 0, 1, 0, 0);
        add_step(l, ISA_OP_V_ADD, out, out, 2, 0, 0);
        done = 1;
    }
    for (int i = 0; !done && bin[i].name; i++)
        if (op_is(nd, bin[i].name)) {
            if (nin == 1) add_step(l, ISA_OP_V_MOV, out, 0, -1, 0, 0);
            else {
                add_step(l, bin[i].op, out, 0, 1, 0, 0);
                for (int k = 2; k < nin; k++) add_step(l, bin[i].op, out, out, k, 0, 0);
            }
            if (op_is(nd, "Mean") && nin > 1) add_step(l, ISA_OP_V_AFFINE, out, out, -1, 1.0f / (float)nin, 0);
            done = 1;
        }
    for (int i = 0; !done && un[i].name; i++)
        if (op_is(nd, un[i].name)) { add_step(l, un[i].op, out, 0, -1, 0, 0); done = 1; }
    double pv;
    if (!done) {
        if (op_is(nd, "Div")) {
            add_step(l, ISA_OP_V_RECIP, out, 1, -1, 0, 0);
            add_step(l, ISA_OP_V_MUL, out, 0, out, 0, 0);
        } else if (op_is(nd, "Pow") && const_scalar(gr, nd->in[1], &pv)) {
            if (pv == 2) add_step(l, ISA_OP_V_MUL, out, 0, 0, 0, 0);
            else if (pv == 3) { add_step(l, ISA_OP_V_MUL, out, 0, 0, 0, 0); add_step(l, ISA_OP_V_MUL, out, out, 0, 0, 0); }
            else if (pv == 1) add_step(l, ISA_OP_V_MOV, out, 0, -1, 0, 0);
            else if (pv == 0.5) add_step(l, ISA_OP_V_SQRT, out, 0, -1, 0, 0);
            else if (pv == -1) add_step(l, ISA_OP_V_RECIP, out, 0, -1, 0, 0);
            else if (pv == -0.5) add_step(l, ISA_OP_V_RSQRT, out, 0, -1, 0, 0);
            else {
                add_step(l, ISA_OP_V_LOG, out, 0, -1, 0, 0);
                add_step(l, ISA_OP_V_AFFINE, out, out, -1, (float)pv, 0);
                add_step(l, ISA_OP_V_EXP, out, out, -1, 0, 0);
            }
        } else if (op_is(nd, "LeakyRelu")) add_step(l, ISA_OP_V_LRELU, out, 0, -1, ir_attr_float(nd, "alpha", 0.01f), 0);
        else if (op_is(nd, "Clip")) {
            double lo = -INFINITY, hi = INFINITY;
            if (clip_reg[1] < 0 && nd->nin > 1 && nd->in[1] >= 0) const_scalar(gr, nd->in[1], &lo);
            if (clip_reg[2] < 0 && nd->nin > 2 && nd->in[2] >= 0) const_scalar(gr, nd->in[2], &hi);
            if (nd->nin == 1) { lo = ir_attr_float(nd, "min", -INFINITY); hi = ir_attr_float(nd, "max", INFINITY); }
            if (clip_reg[1] < 0 && clip_reg[2] < 0) add_step(l, ISA_OP_V_CLIP, out, 0, -1, (float)lo, (float)hi);
            else {   /* min(max(x, lo), hi), a run-time bound by v.max / v.min (broadcast by its strides) */
                int src = 0;
                if (clip_reg[1] >= 0) { add_step(l, ISA_OP_V_MAX, out, src, clip_reg[1], 0, 0); src = out; }
                else if (lo > -INFINITY) { add_step(l, ISA_OP_V_CLIP, out, src, -1, (float)lo, INFINITY); src = out; }
                if (clip_reg[2] >= 0) add_step(l, ISA_OP_V_MIN, out, src, clip_reg[2], 0, 0);
                else if (hi < INFINITY) add_step(l, ISA_OP_V_CLIP, out, src, -1, -INFINITY, (float)hi);
            }
        } else if (op_is(nd, "Neg")) add_step(l, ISA_OP_V_AFFINE, out, 0, -1, -1.0f, 0);
        else if (op_is(nd, "Abs")) {
            add_step(l, ISA_OP_V_AFFINE, out, 0, -1, -1.0f, 0);
            add_step(l, ISA_OP_V_MAX, out, 0, out, 0, 0);
        } else if (op_is(nd, "HardSigmoid")) {
            add_step(l, ISA_OP_V_AFFINE, out, 0, -1, ir_attr_float(nd, "alpha", 0.2f), ir_attr_float(nd, "beta", 0.5f));
            add_step(l, ISA_OP_V_CLIP, out, out, -1, 0.0f, 1.0f);
        } else if (op_is(nd, "HardSwish")) {
            add_step(l, ISA_OP_V_AFFINE, out, 0, -1, 1.0f / 6.0f, 0.5f);
            add_step(l, ISA_OP_V_CLIP, out, out, -1, 0.0f, 1.0f);
            add_step(l, ISA_OP_V_MUL, out, 0, out, 0, 0);
        } else {
            const char *why = NULL;
            if (act_steps(l, nd, out, out + 1, &why)) return bk_fail(c, node, e, "%s", why);
            scratch = 2;
        }
    }
    if (!table) bk_step_dtypes(l, 0, l->dt);   /* a v.cast step converts to the output's dtype */
    l->nregs = R + scratch;
    l->out_reg = out;
    if (c->act_on[node]) {
        snprintf(l->act, sizeof l->act, "%s", nd->act);
        l->act_alpha = nd->act_alpha;
        l->act_beta = nd->act_beta;
    }
    /* shapes: collapse output dims */
    int ro = y->ndim;
    int64_t od[IR_MAXDIM], st[BK_MAXIN][IR_MAXDIM];
    for (int d = 0; d < ro; d++) od[d] = y->dims[d];
    for (int i = 0; i < nin; i++) bcast_strides(ins[i].dims, ins[i].ndim, od, ro, st[i]);
    int64_t cd[IR_MAXDIM], cs[BK_MAXIN][IR_MAXDIM];
    int nc = 0;
    for (int d = 0; d < ro; d++) {
        if (od[d] == 1) continue;
        int merge = nc > 0;
        for (int i = 0; i < nin && merge; i++)
            if (cs[i][nc - 1] != st[i][d] * od[d]) merge = 0;
        if (merge) {
            cd[nc - 1] *= od[d];
            for (int i = 0; i < nin; i++) cs[i][nc - 1] = st[i][d];
        } else {
            cd[nc] = od[d];
            for (int i = 0; i < nin; i++) cs[i][nc] = st[i][d];
            nc++;
        }
    }
    if (nc > 4) return bk_fail(c, node, e, "broadcast pattern needs %d dimensions (at most 4 are lowered)", nc);
    int pad = 4 - nc;
    for (int d = 0; d < 4; d++) {
        int s = d - pad;
        int64_t v = s < 0 ? 1 : cd[s];
        if (v > 65535) {
            /* split a long contiguous dim into two: only possible in the leading pad */
            if (s <= 0 && pad > 0 && d > 0) { /* handled below */ }
        }
        l->od[d] = (uint32_t)v;
        for (int i = 0; i < nin; i++) l->in_str[i][d] = s < 0 ? 0 : cs[i][s];
    }
    /* a dim above 65535: split it into (q, r) using a free leading dim */
    for (int d = 3; d >= 1; d--) {
        if (l->od[d] <= 65535) continue;
        if (l->od[0] != 1) return bk_fail(c, node, e, "tensor dimension %u too long for the vector unit", l->od[d]);
        uint32_t f = 1;
        for (uint32_t q = 2; q <= 65535; q++) if (l->od[d] % q == 0 && l->od[d] / q <= 65535) { f = q; break; }
        if (f == 1) return bk_fail(c, node, e, "tensor dimension %u cannot be split for the vector unit", l->od[d]);
        /* shift dims 1..d-1 outward by one, place (f, od/f) at d-1, d */
        for (int k = 0; k < d - 1; k++) {
            l->od[k] = l->od[k + 1];
            for (int i = 0; i < nin; i++) l->in_str[i][k] = l->in_str[i][k + 1];
        }
        uint32_t in2 = l->od[d] / f;
        for (int i = 0; i < nin; i++) l->in_str[i][d - 1] = l->in_str[i][d] * in2;
        l->od[d - 1] = f;
        l->od[d] = in2;
    }
    for (int i = 0; i < nin; i++) l->in_addr[i] = ins[i].addr;
    if (bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    /* LMEM: every register is a full box (inputs may be smaller; sized full) */
    int hs = !strcmp(l->act, "HardSwish");
    uint64_t es = (uint64_t)l->es;   /* every register sized for the widest dtype */
    for (int r = 0; r < l->nregs; r++) if ((uint64_t)isa_dtype_size(l->reg_dt[r]) > es) es = (uint64_t)isa_dtype_size(l->reg_dt[r]);
    if (fit_box(c, l, ly->slot_size, (uint64_t)(l->nregs + hs) * es, 0))
        return bk_fail(c, node, e, "even one element box does not fit LMEM");
    uint64_t used = 0, box = box_elems(l->chunk) * es;
    for (int r = 0; r < l->nregs; r++) l->l_reg[r] = bk_slot_alloc(c, &used, box);
    l->l_tmp = hs ? bk_slot_alloc(c, &used, box) : 0;
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    ly->gen = elem_gen;
    if (bk_set_tiles(ly, (int)(l->nch[0] * l->nch[1] * l->nch[2] * l->nch[3]), 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "%ux%ux%ux%u", l->nch[0], l->nch[1], l->nch[2], l->nch[3]);
    return 0;
}

/* ---- reductions and softmax: [outer][red][inner] ---- */

static int red_full(int reg) { return reg == BK_R_IN || reg == BK_R_ACC; }

/* The register program of one reduction / softmax tile of shape sh
 * (reduced along dim 2). */
static void red_program(const BkLow *l, int dt, uint64_t slot, const uint32_t sh[4], BkCode *k)
{
    const uint64_t addr[BK_R_NREGS] = {slot + l->l_in, slot + l->l_acc, slot + l->l_out, slot + l->l_tmp};
    bk_red_steps(l, dt, addr, sh, k);
}

void bk_red_steps(const BkLow *l, int dt, const uint64_t addr[BK_R_NREGS], const uint32_t sh[4], BkCode *k)
{
    const uint64_t slot = 0;
    uint32_t rsh[4] = {sh[0], sh[1], 1, sh[3]};
    int64_t cs[4], rc[4];
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    int64_t bst[4] = {rc[0], rc[1], 0, rc[3]};
    for (int s = 0; s < l->nsteps; s++) {
        const BkStep *st = &l->steps[s];
        AtlInsn in;
        if (st->op == ISA_OP_V_RSUM || st->op == ISA_OP_V_RMAX) {
            memset(&in, 0, sizeof in);
            in.op = (uint8_t)st->op;
            in.dtype = (uint8_t)dt;
            in.otype = (uint8_t)dt;
            in.axis = 2;
            memcpy(in.shape, sh, sizeof in.shape);
            in.dst = slot + addr[st->dst];
            in.src = slot + addr[st->a];
            bk_code_cp(k, &in);
            continue;
        }
        int full = red_full(st->dst);
        const uint32_t *shape = full ? sh : rsh;
        const int64_t *sd = full ? cs : rc, *sa = red_full(st->a) ? cs : full ? bst : rc;
        if (st->b >= 0)
            in = bk_vbin(st->op, dt, slot + addr[st->dst], slot + addr[st->a], slot + addr[st->b], shape, sd, sa,
                         red_full(st->b) ? cs : full ? bst : rc);
        else
            in = bk_vun(st->op, dt, slot + addr[st->dst], slot + addr[st->a], shape, sd, sa, st->alpha, st->beta);
        bk_code_cp(k, &in);
    }
}

/* The load's shape of a reduction over the rows of channel planes (a
 * GlobalAveragePool's [channels][H x W]) whose input is banded in the
 * clusters' SRAM: [channels][H][W], the same bytes, so the band rewrite
 * (schedule/bands.c) can cut it into channels x rows and read the cells
 * its cluster keeps from its SRAM instead of DRAM (a flat copy reads DRAM
 * and makes the producer store its whole output there); sh otherwise. */
static void planes_of_rows(const BkCtx *c, const BkLayer *ly, const uint32_t sh[4], uint32_t out[4])
{
    memcpy(out, sh, 4 * sizeof *out);
    if (!c->bands || ly->node < 0 || ly->lw.kind != BK_K_REDUCE || sh[3] != 1) return;
    int xt = c->g->nodes[ly->node].in[0];
    const IrTensor *x = &c->g->t[xt];
    if (x->ndim != 4 || x->dims[0] < 1 || x->dims[2] * x->dims[3] != (int64_t)sh[2] || !c->pl[bk_tensor_root(c, xt)].band) return;
    out[2] = (uint32_t)x->dims[2];
    out[3] = (uint32_t)x->dims[3];
}

/* The chunk of planes tile t of nt reads. On a channel-sharded input
 * (red_shard) the tiles go to the cores in contiguous blocks, a K-th of
 * them a cluster (bk_sched_distribute over the chip), so tile t takes a
 * chunk of the shard its cluster keeps in its SRAM: the j-th of cluster
 * k's block reads image j / (chunks a shard), chunk j mod that of k's
 * channels; else chunk t. */
static uint32_t shard_chunk(const BkCtx *c, const BkLow *l, int t, int nt)
{
    if (!l->red_shard) return (uint32_t)t;
    int K = c->bands, per = nt / K, cps = l->red_shard / (int)l->chunk[1], k = t / per, j = t % per;
    return (uint32_t)(j / cps * (l->red_ci / (int)l->chunk[1]) + k * cps + j % cps);
}

static int red_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)e;
    /* od = {1, outer, red, inner}; chunk only along outer */
    uint32_t o0 = shard_chunk(c, l, t, ly->ntiles) * l->chunk[1];
    uint32_t on = l->od[1] - o0 < l->chunk[1] ? l->od[1] - o0 : l->chunk[1];
    uint32_t sh[4] = {1, on, l->od[2], l->od[3]};
    int64_t cs[4];
    bk_compact(sh, cs);
    int dt = l->dt, es = l->es;
    uint64_t src = l->x + (uint64_t)o0 * l->od[2] * l->od[3] * es;
    uint32_t lsh[4];
    int64_t lcs[4];
    planes_of_rows(c, ly, sh, lsh);
    bk_compact(lsh, lcs);
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM, src, lsh, lcs, lcs);
    bk_code_ld(k, &in, 0);
    uint32_t rsh[4] = {1, on, 1, l->od[3]};
    int64_t rc[4];
    bk_compact(rsh, rc);
    AtlInsn r;
    memset(&r, 0, sizeof r);
    r.dtype = (uint8_t)dt;
    r.otype = (uint8_t)dt;
    r.axis = 2;
    memcpy(r.shape, sh, sizeof sh);
    if (l->kind == BK_K_REDUCE || l->kind == BK_K_SOFTMAX) {
        red_program(l, dt, slot, sh, k);
        int full = l->kind == BK_K_SOFTMAX;
        uint64_t dst = l->y + (uint64_t)o0 * (full ? l->od[2] : 1) * l->od[3] * es;
        in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, slot + (full ? l->l_in : l->l_out), full ? sh : rsh,
                    full ? cs : rc, full ? cs : rc);
        bk_code_st(k, &in);
        return 0;
    }
    if (l->kind == BK_K_LAYERNORM) {
        /* rows x L: mean, centre, variance, 1/sqrt(var + eps), scale, shift */
        int64_t bst[4] = {rc[0], rc[1], 0, rc[3]}, gst[4] = {0, 0, 1, 0};
        uint32_t gsh[4] = {1, 1, l->od[2], 1};
        int64_t gcs[4];
        bk_compact(gsh, gcs);
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w, gsh, gcs, gcs);
        bk_code_ld(k, &in, 1);
        if (l->b) {
            in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, l->b, gsh, gcs, gcs);
            bk_code_ld(k, &in, 1);
        }
        r.op = ISA_OP_V_RSUM;
        r.dst = slot + l->l_tmp;
        r.src = slot + l->l_in;
        bk_code_cp(k, &r);
        in = bk_vun(ISA_OP_V_AFFINE, dt, slot + l->l_tmp, slot + l->l_tmp, rsh, rc, rc, 1.0f / (float)l->od[2], 0);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SUB, dt, slot + l->l_in, slot + l->l_in, slot + l->l_tmp, sh, cs, cs, bst);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_MUL, dt, slot + l->l_acc, slot + l->l_in, slot + l->l_in, sh, cs, cs, cs);
        bk_code_cp(k, &in);
        r.dst = slot + l->l_out;
        r.src = slot + l->l_acc;
        bk_code_cp(k, &r);
        in = bk_vun(ISA_OP_V_AFFINE, dt, slot + l->l_out, slot + l->l_out, rsh, rc, rc, 1.0f / (float)l->od[2], l->eps);
        bk_code_cp(k, &in);
        in = bk_vun(ISA_OP_V_RSQRT, dt, slot + l->l_out, slot + l->l_out, rsh, rc, rc, 0, 0);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_MUL, dt, slot + l->l_in, slot + l->l_in, slot + l->l_out, sh, cs, cs, bst);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_MUL, dt, slot + l->l_in, slot + l->l_in, slot + l->l_w, sh, cs, cs, gst);
        bk_code_cp(k, &in);
        if (l->b) {
            in = bk_vbin(ISA_OP_V_ADD, dt, slot + l->l_in, slot + l->l_in, slot + l->l_b, sh, cs, cs, gst);
            bk_code_cp(k, &in);
        }
        in = bk_dma(dt, ISA_SPACE_DRAM, l->y + (uint64_t)o0 * l->od[2] * es, ISA_SPACE_LMEM, slot + l->l_in, sh, cs, cs);
        bk_code_st(k, &in);
        /* the optional per-row Mean (l_tmp) and InvStdDev (l_out) */
        if (l->y_mean) {
            in = bk_dma(dt, ISA_SPACE_DRAM, l->y_mean + (uint64_t)o0 * es, ISA_SPACE_LMEM, slot + l->l_tmp, rsh, rc, rc);
            bk_code_st(k, &in);
        }
        if (l->y_istd) {
            in = bk_dma(dt, ISA_SPACE_DRAM, l->y_istd + (uint64_t)o0 * es, ISA_SPACE_LMEM, slot + l->l_out, rsh, rc, rc);
            bk_code_st(k, &in);
        }
        return 0;
    }
    return bk_fail(c, ly->node, e, "internal: reduction kind %d", (int)l->kind);
}

/* Reductions, Softmax and LogSoftmax as register programs (registers
 * BK_R_*; b = -1: unary step). ReduceMin is -max(-x); means scale the
 * result by 1/count (mean = 1); the stable forms subtract the row maximum
 * first. ReduceProd: sign * exp(sum(log |x|)), the sign 1 - 8 (h - r)^2
 * with h = n/2 for n negatives and r = h rounded to an integer (ties to
 * even, by adding and subtracting 2^23): h - r is 0 or +-1/2; f32 only,
 * since f16 / bf16 cannot hold 2^23 + h (f32_only). */
typedef struct RedDef {
    const char *op;
    int mean, f32_only, nsteps;
    BkStep steps[BK_MAXSTEP];
} RedDef;

#define NEG(r) {ISA_OP_V_AFFINE, r, r, -1, -1.0f, 0}
#define UN(op, r) {ISA_OP_V_##op, r, r, -1, 0, 0}
#define BIN(op, d, a, b) {ISA_OP_V_##op, d, a, b, 0, 0}
#define AFF(d, a, al, be) {ISA_OP_V_AFFINE, d, a, -1, al, be}
#define RED(op, d, a) {ISA_OP_V_##op, d, a, -1, 0, 0}
#define SUM RED(RSUM, BK_R_OUT, BK_R_IN)
#define SHIFT RED(RMAX, BK_R_MAX, BK_R_IN), BIN(SUB, BK_R_IN, BK_R_IN, BK_R_MAX)
static const RedDef red_defs[] = {
    {"ReduceSum", 0, 0, 1, {SUM}},
    {"ReduceMean", 1, 0, 1, {SUM}},
    {"GlobalAveragePool", 1, 0, 1, {SUM}},
    {"ReduceMax", 0, 0, 1, {RED(RMAX, BK_R_OUT, BK_R_IN)}},
    {"GlobalMaxPool", 0, 0, 1, {RED(RMAX, BK_R_OUT, BK_R_IN)}},
    {"ReduceMin", 0, 0, 3, {NEG(BK_R_IN), RED(RMAX, BK_R_OUT, BK_R_IN), NEG(BK_R_OUT)}},
    {"ReduceSumSquare", 0, 0, 2, {BIN(MUL, BK_R_IN, BK_R_IN, BK_R_IN), SUM}},
    {"ReduceL1", 0, 0, 3, {AFF(BK_R_ACC, BK_R_IN, -1.0f, 0), BIN(MAX, BK_R_IN, BK_R_IN, BK_R_ACC), SUM}},
    {"ReduceL2", 0, 0, 3, {BIN(MUL, BK_R_IN, BK_R_IN, BK_R_IN), SUM, UN(SQRT, BK_R_OUT)}},
    {"ReduceLogSum", 0, 0, 2, {SUM, UN(LOG, BK_R_OUT)}},
    {"ReduceLogSumExp", 0, 0, 6, {SHIFT, UN(EXP, BK_R_IN), SUM, UN(LOG, BK_R_OUT), BIN(ADD, BK_R_OUT, BK_R_OUT, BK_R_MAX)}},
    {"ReduceProd", 0, 1, 16,
     {AFF(BK_R_ACC, BK_R_IN, -0x1p127f, 0), AFF(BK_R_ACC, BK_R_ACC, 0x1p127f, 0), {ISA_OP_V_CLIP, BK_R_ACC, BK_R_ACC, -1, 0, 1.0f},
      RED(RSUM, BK_R_MAX, BK_R_ACC), AFF(BK_R_OUT, BK_R_MAX, 0.5f, 0x1p23f), AFF(BK_R_OUT, BK_R_OUT, 1.0f, -0x1p23f),
      AFF(BK_R_MAX, BK_R_MAX, 0.5f, 0), BIN(SUB, BK_R_MAX, BK_R_MAX, BK_R_OUT), BIN(MUL, BK_R_MAX, BK_R_MAX, BK_R_MAX),
      AFF(BK_R_MAX, BK_R_MAX, -8.0f, 1.0f), AFF(BK_R_ACC, BK_R_IN, -1.0f, 0), BIN(MAX, BK_R_ACC, BK_R_IN, BK_R_ACC),
      UN(LOG, BK_R_ACC), RED(RSUM, BK_R_OUT, BK_R_ACC), UN(EXP, BK_R_OUT), BIN(MUL, BK_R_OUT, BK_R_OUT, BK_R_MAX)}},
    {"Softmax", 0, 0, 6, {SHIFT, UN(EXP, BK_R_IN), SUM, UN(RECIP, BK_R_OUT), BIN(MUL, BK_R_IN, BK_R_IN, BK_R_OUT)}},
    {"LogSoftmax", 0, 0, 6,
     {SHIFT, {ISA_OP_V_EXP, BK_R_ACC, BK_R_IN, -1, 0, 0}, RED(RSUM, BK_R_OUT, BK_R_ACC), UN(LOG, BK_R_OUT),
      BIN(SUB, BK_R_IN, BK_R_IN, BK_R_OUT)}},
};

static const RedDef *red_def(const char *op)
{
    for (size_t i = 0; i < sizeof red_defs / sizeof red_defs[0]; i++)
        if (!strcmp(red_defs[i].op, op)) return &red_defs[i];
    return NULL;
}

/* Copies d's program into l, then the mean's 1/count scaling (scale != 1). */
static int red_program_of(BkLow *l, const RedDef *d, float scale)
{
    l->nsteps = d->nsteps;
    memcpy(l->steps, d->steps, (size_t)d->nsteps * sizeof d->steps[0]);
    if (scale != 1.0f) return add_step(l, ISA_OP_V_AFFINE, BK_R_OUT, BK_R_OUT, -1, scale, 0);
    return 0;
}

static int red_setup(BkCtx *c, int node, BkLayer *ly, int a0, int a1, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    const IrTensor *x = &gr->t[nd->in[0]];
    int64_t outer = 1, red = 1, inner = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < a0) outer *= x->dims[d];
        else if (d <= a1) red *= x->dims[d];
        else inner *= x->dims[d];
    }
    if (outer > 65535 || red > 65535 || inner > 65535) return bk_fail(c, node, e, "reduced shape %lldx%lldx%lld exceeds 65535 per dimension",
                                                                     (long long)outer, (long long)red, (long long)inner);
    l->od[0] = 1; l->od[1] = (uint32_t)outer; l->od[2] = (uint32_t)red; l->od[3] = (uint32_t)inner;
    l->red_len = (uint32_t)red;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    int acc = 0;
    for (int i = 0; i < l->nsteps; i++) acc |= l->steps[i].dst == BK_R_ACC;
    uint64_t per_outer = ((uint64_t)(1 + acc) * red * inner + 2 * (uint64_t)inner) * (uint64_t)l->es;
    uint64_t fit = ly->slot_size > 4 * c->align ? (ly->slot_size - 4 * c->align) / per_outer : 0;
    if (fit < 1) return bk_fail(c, node, e, "one reduced row (%lld x %lld elements) does not fit half of LMEM", (long long)red, (long long)inner);
    uint64_t ch = (uint64_t)(outer + c->ncores - 1) / c->ncores;
    if (ch > fit) ch = fit;
    if (ch < 1) ch = 1;
    /* a GlobalAveragePool's planes of an input in channel shards: chunks
     * of a divisor of the shard, a whole number of them a core */
    l->red_shard = l->red_ci = 0;
    int xr = bk_tensor_root(c, nd->in[0]);
    if (c->bands && a0 == 2 && x->ndim == 4 && xr >= 0 && c->pl[xr].band && c->band[xr].shard && c->ncores % c->bands == 0) {
        int S = c->band[xr].shard;
        for (int d = S; d >= 1; d--)
            if (S % d == 0 && (uint64_t)d <= fit && (uint64_t)outer % ((uint64_t)d * c->ncores) == 0) {
                ch = (uint64_t)d;
                l->red_shard = S;
                l->red_ci = (int)x->dims[1];
                break;
            }
    }
    l->chunk[0] = 1; l->chunk[1] = (uint32_t)ch; l->chunk[2] = (uint32_t)red; l->chunk[3] = (uint32_t)inner;
    uint64_t used = 0;
    l->l_in = bk_slot_alloc(c, &used, ch * red * inner * (uint64_t)l->es);
    l->l_acc = acc ? bk_slot_alloc(c, &used, ch * red * inner * (uint64_t)l->es) : 0;
    l->l_out = bk_slot_alloc(c, &used, ch * inner * (uint64_t)l->es);
    l->l_tmp = bk_slot_alloc(c, &used, ch * inner * (uint64_t)l->es);
    if (used > ly->slot_size) return bk_fail(c, node, e, "reduction tile does not fit LMEM");
    ly->gen = red_gen;
    int nt = (int)((outer + ch - 1) / ch);
    if (bk_set_tiles(ly, nt, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "rows %d", nt);
    return 0;
}

int bk_lower_reduce(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_REDUCE;
    l->dt = l->xdt = bk_tensor_dt(c, nd->out[0]);
    l->es = l->xes = bk_tensor_es(c, nd->out[0]);
    const IrTensor *x = &gr->t[nd->in[0]];
    int r = x->ndim, a0, a1;
    int glob = !strncmp(nd->op, "Global", 6);
    if (glob) { a0 = 2; a1 = r - 1; }
    else {
        int64_t axes[IR_MAXDIM];
        int na = 0;
        const IrAttr *at = ir_attr(nd, "axes");
        if (at) { for (int i = 0; i < at->n && i < IR_MAXDIM; i++) axes[na++] = at->ints[i]; }
        else if (nd->nin > 1 && nd->in[1] >= 0 && gr->t[nd->in[1]].data) {
            const IrTensor *ax = &gr->t[nd->in[1]];
            for (int64_t i = 0; i < ir_numel(ax) && na < IR_MAXDIM; i++) axes[na++] = ir_get_i(ax, i);
        }
        if (na == 0 && ir_attr_int(nd, "noop_with_empty_axes", 0)) {
            /* the output is x (as the interpreter defines it for every Reduce*): a
             * sum over one element copies it; rows split where the inner part fits */
            int k = 0;
            int64_t inner = ir_numel(x);
            while (k < r && inner > 65535) inner /= x->dims[k++];
            red_program_of(l, red_def("ReduceSum"), 1.0f);
            return red_setup(c, node, ly, k, k - 1, e);
        }
        if (na == 0) for (int d = 0; d < r; d++) axes[na++] = d;
        a0 = r; a1 = -1;
        for (int i = 0; i < na; i++) {
            int a = (int)(axes[i] < 0 ? axes[i] + r : axes[i]);
            if (a < a0) a0 = a;
            if (a > a1) a1 = a;
        }
        if (a1 - a0 + 1 != na) return bk_fail(c, node, e, "reducing non-adjacent axes is not lowered");
    }
    int64_t cnt = 1;
    for (int d = a0; d <= a1; d++) cnt *= x->dims[d];
    const RedDef *d = red_def(nd->op);
    if (!d) return bk_fail(c, node, e, "the vector unit has no lowering for %s", nd->op);
    if (d->f32_only && c->dt != ISA_F32) return bk_fail(c, node, e, "%s is lowered for f32 only", nd->op);
    if (red_program_of(l, d, d->mean ? (float)(1.0 / (double)cnt) : 1.0f)) return bk_fail(c, node, e, "program too long");
    return red_setup(c, node, ly, a0, a1, e);
}

/* LayerNormalization (opset 17) over the trailing axes from `axis`: rows of
 * L elements; constant scale and bias broadcast to [L] at compile time,
 * non-constant ones (L elements) read from DRAM as they are. */
int bk_lower_layernorm(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_LAYERNORM;
    l->dt = l->xdt = c->dt;
    l->es = l->xes = c->es;
    const IrTensor *x = &gr->t[nd->in[0]];
    int r = x->ndim;
    int ax = (int)ir_attr_int(nd, "axis", -1);
    if (ax < 0) ax += r;
    int64_t outer = 1, L = 1;
    for (int d = 0; d < x->ndim; d++) { if (d < ax) outer *= x->dims[d]; else L *= x->dims[d]; }
    if (outer > 65535 || L > 65535) return bk_fail(c, node, e, "shape exceeds 65535 per dimension");
    l->od[0] = 1; l->od[1] = (uint32_t)outer; l->od[2] = (uint32_t)L; l->od[3] = 1;
    l->eps = ir_attr_float(nd, "epsilon", 1e-5f);
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    l->y_mean = l->y_istd = 0;
    if (nd->nout > 1 && nd->out[1] >= 0 && bk_tensor_in_dram(c, nd->out[1], &l->y_mean, e)) return -1;
    if (nd->nout > 2 && nd->out[2] >= 0 && bk_tensor_in_dram(c, nd->out[2], &l->y_istd, e)) return -1;
    l->b = 0;
    for (int i = 1; i < 3 && i < nd->nin; i++) {
        if (nd->in[i] < 0) continue;
        const IrTensor *p = &gr->t[nd->in[i]];
        int64_t pn = ir_numel(p);
        if (pn != 1 && pn != L) return bk_fail(c, node, e, "scale/bias of %lld elements for rows of %lld", (long long)pn, (long long)L);
        if (!p->data) {   /* a run-time scale/bias of L elements is loaded from where it lives */
            if (pn != L) return bk_fail(c, node, e, "a non-constant scale/bias must have one value per row element (%lld)", (long long)L);
            if (bk_tensor_in_dram(c, nd->in[i], i == 1 ? &l->w : &l->b, e)) return -1;
            continue;
        }
        uint8_t *v = malloc((size_t)L * c->es);
        if (!v) return bk_fail(c, node, e, "out of memory");
        for (int64_t j = 0; j < L; j++) bk_store_elem(c->dt, v, (size_t)j, ir_get_f(p, pn == 1 ? 0 : j));
        int rc = bk_weight(c, v, (size_t)L * c->es, i == 1 ? &l->w : &l->b, e);
        free(v);
        if (rc) return -1;
    }
    uint64_t per_row = (2 * (uint64_t)L + 2) * c->es + 1;
    uint64_t fixed = 2 * (uint64_t)L * c->es + 8 * c->align;
    uint64_t fit = ly->slot_size > fixed ? (ly->slot_size - fixed) / per_row : 0;
    if (fit < 1) return bk_fail(c, node, e, "one row of %lld elements does not fit half of LMEM", (long long)L);
    uint64_t ch = (uint64_t)(outer + c->ncores - 1) / c->ncores;
    if (ch > fit) ch = fit;
    for (;;) {
        uint64_t used = 0;
        l->l_in = bk_slot_alloc(c, &used, ch * L * c->es);
        l->l_acc = bk_slot_alloc(c, &used, ch * L * c->es);
        l->l_tmp = bk_slot_alloc(c, &used, ch * c->es);
        l->l_out = bk_slot_alloc(c, &used, ch * c->es);
        l->l_w = bk_slot_alloc(c, &used, (uint64_t)L * c->es);
        l->l_b = bk_slot_alloc(c, &used, (uint64_t)L * c->es);
        if (used <= ly->slot_size) break;
        if (ch == 1) return bk_fail(c, node, e, "tile does not fit LMEM");
        ch = (ch + 1) / 2;
    }
    l->chunk[0] = 1; l->chunk[1] = (uint32_t)ch; l->chunk[2] = (uint32_t)L; l->chunk[3] = 1;
    ly->gen = red_gen;
    int nt = (int)((outer + ch - 1) / ch);
    if (bk_set_tiles(ly, nt, 1, e)) return -1;
    for (int t = 0; t < nt; t++) ly->tile_wkey[t] = 0;   /* scale/bias stay in the slot */
    snprintf(ly->split, sizeof ly->split, "rows %d", nt);
    return 0;
}

int bk_lower_softmax(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_SOFTMAX;
    l->dt = l->xdt = c->dt;
    l->es = l->xes = c->es;
    const IrTensor *x = &gr->t[nd->in[0]];
    int r = x->ndim;
    int ax = (int)ir_attr_int(nd, "axis", gr->opset >= 13 ? -1 : 1);
    if (ax < 0) ax += r;
    const RedDef *d = red_def(nd->op);
    if (!d) return bk_fail(c, node, e, "the vector unit has no lowering for %s", nd->op);
    red_program_of(l, d, 1.0f);
    if (gr->opset < 13) return red_setup(c, node, ly, ax, r - 1, e);
    return red_setup(c, node, ly, ax, ax, e);
}
