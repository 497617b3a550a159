/* elem_prog.c - register programs of the elementwise ops that are
 * decompositions into the vector unit's rounding, comparison, select,
 * bitwise, integer division and transcendental instructions (v.floor ..
 * v.erf, v.eq/lt/le, v.sel, v.and/or/xor, v.div, v.mod).
 *
 * One table row per op (or attribute / dtype variant, see row_name): its
 * steps on symbolic registers, the inputs X0..X2 and the scratch registers
 * S0..S4, which bk_elem_program maps to registers nin, nin + 1, ... of the
 * layer's program (compiler/lower/vec.c runs it on each tile box, every
 * register a box of the tile). Kept apart from lower/vec.c so that
 * adding an op is adding a row. Dtypes: every register has one (BkLow.
 * reg_dt): the inputs their tensors' storage dtypes, a step's dst its
 * source's, a v.cast's dst the layer's output dtype (comparisons end with
 * one into bool = i8); an input whose dtype differs from the row's `like`
 * input is converted first (Where's bool condition, Pow's integer exponent).
 * The decompositions (docs/backend.md, lowering table):
 * - single instructions: Floor Ceil Round (half to even) Sin Cos Tan Asin
 *   Acos Atan Sinh Cosh Asinh Acosh Atanh Erf; And Or Xor on bools; Mod
 *   (fmod=1 on floats: fmodf; integers fmod=0: v.mod), integer Div (v.div);
 * - integer Mod fmod=1 (C %): a - trunc(a / b) * b;
 * - Sign: v.sign, but 0 for NaN as the interpreter's (x > 0) - (x < 0):
 *   m = (x == x), then m ? sign(x) : m;
 * - comparisons: v.eq / v.lt / v.le (Greater, GreaterOrEqual with the
 *   operands swapped), then v.cast to bool; Not = 1 - x; IsNaN = 1 - (x == x);
 *   IsInf = (x == x) - (x - x == x - x), times (-x < x) or (x < -x) for one
 *   sign only;
 * - Where: c ? x : y as a copy of y, then v.sel(c, x);
 * - Cast float -> integer: v.trunc then v.cast; float -> bool: 1 - (x == -x);
 * - Pow of an integer base: generated (int_pow_program), exponentiation by
 *   squaring over the exponent's bits, longer than a table row;
 * - BitShift(x, 2^s) (after legalize/rewrite_int.c): RIGHT x / 2^s (v.div);
 *   LEFT (x & (2^W / 2^s - 1)) * 2^s, the bits shifted out masked first;
 * - Pow with a run-time exponent (x^y as C pow): |x|^y = exp(y log|x|);
 *   for x < 0 (x < |x|) times g = +1 for an even integer y (y/2 ==
 *   trunc(y/2)), -1 for an odd one, NaN for a non-integer y (sqrt(I - 1)
 *   with I = (trunc(y) == y) adds -0 or NaN); 1 where y == 0 (y == -y),
 *   which also covers 0^0, inf^0 and NaN^0.
 */
#include <stdio.h>
#include <string.h>
#include "compiler/legalize/legalize.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/quant.h"
#include "compiler/ops/ops.h"

enum { X0 = 0, X1 = 1, X2 = 2, S0 = 32, S1, S2, S3, S4, S5 };
#define PROG_MAXSTEP 24   /* steps of a table row */

/* like: the input whose dtype the program computes in (the others are
 * converted to it first, see bk_elem_program); a v.cast step converts to
 * the layer's output dtype. */
typedef struct ElemProg {
    const char *op;
    int out, like, nsteps;
    BkStep steps[PROG_MAXSTEP];
} ElemProg;

#define UN(op, d, a) {ISA_OP_V_##op, d, a, -1, 0, 0}
#define BIN(op, d, a, b) {ISA_OP_V_##op, d, a, b, 0, 0}
#define AFF(d, a, al, be) {ISA_OP_V_AFFINE, d, a, -1, al, be}
#define ONE_STEP(name, op) {name, S0, 0, 1, {UN(op, S0, X0)}}
#define ONE_BIN(name, op) {name, S0, 0, 1, {BIN(op, S0, X0, X1)}}
/* a comparison: 1 / 0 in the inputs' dtype, then v.cast to bool (i8) */
#define CMP(name, op, a, b) {name, S1, 0, 2, {BIN(op, S0, a, b), UN(CAST, S1, S0)}}
/* isinf(x) = (x == x) - (x - x == x - x): x - x is NaN for +-inf and NaN */
#define ISINF_STEPS BIN(SUB, S1, X0, X0), BIN(EQ, S1, S1, S1), BIN(EQ, S0, X0, X0), BIN(SUB, S0, S0, S1)

/* A program being mapped: a table row's, or a generated one (longer). */
typedef struct ElemProgSteps {
    int out, like, nsteps;
    BkStep steps[BK_MAXSTEP];
} ElemProgSteps;

static const ElemProg progs[] = {
    ONE_STEP("Floor", FLOOR), ONE_STEP("Ceil", CEIL), ONE_STEP("Round", ROUND),
    ONE_STEP("Sin", SIN), ONE_STEP("Cos", COS), ONE_STEP("Tan", TAN),
    ONE_STEP("Asin", ASIN), ONE_STEP("Acos", ACOS), ONE_STEP("Atan", ATAN),
    ONE_STEP("Sinh", SINH), ONE_STEP("Cosh", COSH), ONE_STEP("Asinh", ASINH),
    ONE_STEP("Acosh", ACOSH), ONE_STEP("Atanh", ATANH), ONE_STEP("Erf", ERF),
    {"Sign", S0, 0, 3, {UN(SIGN, S1, X0), BIN(EQ, S0, X0, X0), BIN(SEL, S0, S0, S1)}},
    ONE_BIN("Mod_fmod", MOD), ONE_BIN("Mod_int", MOD), ONE_BIN("Div_int", DIV),
    /* C's remainder on integers: a - trunc(a / b) * b */
    {"Mod_fmod_int", S0, 0, 3, {BIN(DIV, S0, X0, X1), BIN(MUL, S0, S0, X1), BIN(SUB, S0, X0, S0)}},
    {"Pow", S0, 0, 20,
     {AFF(S1, X0, -1.0f, 0), BIN(MAX, S1, X0, S1),      /* S1 = |x| */
      BIN(LT, S4, X0, S1),                               /* S4 = x < 0 */
      UN(LOG, S1, S1), BIN(MUL, S1, S1, X1), UN(EXP, S0, S1), /* S0 = |x|^y */
      UN(TRUNC, S2, X1), BIN(EQ, S2, S2, X1), AFF(S2, S2, 1.0f, -1.0f), UN(SQRT, S2, S2), /* -0 or NaN */
      AFF(S3, X1, 0.5f, 0), UN(TRUNC, S1, S3), BIN(EQ, S3, S1, S3), AFF(S3, S3, 2.0f, -1.0f), /* +-1 */
      BIN(ADD, S3, S3, S2), BIN(MUL, S3, S3, S0), BIN(SEL, S0, S4, S3), /* x < 0: times g */
      AFF(S1, X1, -1.0f, 0), BIN(EQ, S1, X1, S1), BIN(SEL, S0, S1, S1)}}, /* y == 0: 1 */
    CMP("Equal", EQ, X0, X1), CMP("Less", LT, X0, X1), CMP("Greater", LT, X1, X0),
    CMP("LessOrEqual", LE, X0, X1), CMP("GreaterOrEqual", LE, X1, X0),
    {"Not", S0, 0, 1, {AFF(S0, X0, -1.0f, 1.0f)}},
    ONE_BIN("And", AND), ONE_BIN("Or", OR), ONE_BIN("Xor", XOR),
    {"IsNaN", S1, 0, 3, {BIN(EQ, S0, X0, X0), AFF(S0, S0, -1.0f, 1.0f), UN(CAST, S1, S0)}},
    {"IsInf", S2, 0, 5, {ISINF_STEPS, UN(CAST, S2, S0)}},
    {"IsInf_pos", S2, 0, 8, {ISINF_STEPS, AFF(S1, X0, -1.0f, 0), BIN(LT, S1, S1, X0), BIN(MUL, S0, S0, S1), UN(CAST, S2, S0)}},
    {"IsInf_neg", S2, 0, 8, {ISINF_STEPS, AFF(S1, X0, -1.0f, 0), BIN(LT, S1, X0, S1), BIN(MUL, S0, S0, S1), UN(CAST, S2, S0)}},
    {"IsInf_none", S1, 0, 3, {BIN(EQ, S0, X0, X0), BIN(LT, S0, S0, S0), UN(CAST, S1, S0)}},
    /* the condition arrives converted to the data's dtype */
    {"Where", S0, 1, 2, {UN(MOV, S0, X2), BIN(SEL, S0, X0, X1)}},
    /* BitShift(x, p = 2^s) (legalize/rewrite_int.c), x >= 0: RIGHT is x / p;
     * LEFT keeps the bits that stay below 2^W, m = 2^W / p - 1, then
     * (x & m) * p < 2^W never saturates. uint32 (i32, values < 2^31):
     * m = (2^31 - 1) / p, so the result is x << s mod 2^31 */
    ONE_BIN("BitShift_right", DIV),
    /* integer Pow: no steps here, generated by int_pow_program */
    {"Pow_int", S0, 0, 0, {{0}}},
    {"BitShift_left8", S0, 0, 5, {AFF(S1, X1, 0, 256.0f), BIN(DIV, S1, S1, X1), AFF(S1, S1, 1.0f, -1.0f),
                                  BIN(AND, S0, X0, S1), BIN(MUL, S0, S0, X1)}},
    {"BitShift_left16", S0, 0, 5, {AFF(S1, X1, 0, 65536.0f), BIN(DIV, S1, S1, X1), AFF(S1, S1, 1.0f, -1.0f),
                                   BIN(AND, S0, X0, S1), BIN(MUL, S0, S0, X1)}},
    {"BitShift_left32", S0, 0, 4, {AFF(S1, X1, 0, 2147483647.0f), BIN(DIV, S1, S1, X1), BIN(AND, S0, X0, S1),
                                   BIN(MUL, S0, S0, X1)}},
    /* float -> integer truncates toward zero; float -> bool is x != 0
     * (x == -x only for +-0; NaN is true) */
    {"Cast_trunc", S1, 0, 2, {UN(TRUNC, S0, X0), UN(CAST, S1, S0)}},
    {"Cast_nonzero", S1, 0, 4, {AFF(S0, X0, -1.0f, 0), BIN(EQ, S0, X0, S0), AFF(S0, S0, -1.0f, 1.0f), UN(CAST, S1, S0)}},
};

static int is_float(const IrGraph *g, int t) { return t >= 0 && op_dtype_is_float(g->t[t].dtype); }

/* The table row of node nd ("" none): variants by attribute and dtype. */
static void row_name(const IrGraph *g, const IrNode *nd, char *buf, size_t n)
{
    const char *op = nd->op;
    int fx = is_float(g, nd->in[0]);
    if (!strcmp(op, "Mod")) op = ir_attr_int(nd, "fmod", 0) ? (fx ? "Mod_fmod" : "Mod_fmod_int") : fx ? "" : "Mod_int";
    else if (!strcmp(op, "Div")) op = fx ? "" : "Div_int";   /* floats: v.recip + v.mul (lower/vec.c) */
    else if (!strcmp(op, "Pow")) {
        const IrTensor *y = &g->t[nd->in[1]];
        /* a float base by a constant scalar exponent: lower/vec.c */
        op = !fx ? "Pow_int" : !(y->data && ir_numel(y) == 1) ? "Pow" : "";
    } else if (!strcmp(op, "BitShift")) {
        int dt = g->t[nd->in[0]].dtype;
        if (!ir_attr_int(nd, BK_SHIFT_BY_POW2, 0)) op = "";   /* not rewritten (legalize/rewrite_int.c) */
        else if (!strcmp(ir_attr_str(nd, "direction", ""), "RIGHT")) op = "BitShift_right";
        else op = dt == IR_U8 ? "BitShift_left8" : dt == IR_U16 ? "BitShift_left16" : dt == IR_U32 ? "BitShift_left32" : "";
    } else if (!strcmp(op, "IsInf")) {
        int pos = ir_attr_int(nd, "detect_positive", 1) != 0, neg = ir_attr_int(nd, "detect_negative", 1) != 0;
        op = pos && neg ? "IsInf" : pos ? "IsInf_pos" : neg ? "IsInf_neg" : "IsInf_none";
    } else if (!strcmp(op, "Cast") || !strcmp(op, "CastLike")) {
        int yt = nd->out[0];
        op = !fx || is_float(g, yt) ? "" : g->t[yt].dtype == IR_BOOL ? "Cast_nonzero" : "Cast_trunc";
    }
    snprintf(buf, n, "%s", op);
}

static const ElemProg *find_prog(const IrGraph *g, const IrNode *nd)
{
    char name[64];
    row_name(g, nd, name, sizeof name);
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++)
        if (!strcmp(progs[i].op, name)) return &progs[i];
    return NULL;
}

/* Integer x^y by squaring over the exponent's bits (nbits: the dtype's
 * value bits), into p's steps (out S0): r = 1, b = x; per bit
 * bit = y mod 2 (v.mod: the divisor's sign, so the parity of |y|),
 * y = y / 2 (toward zero: the bits of |y|), r = bit ? r * b : r (v.sel),
 * b = b * b; so r = x^|y| (0^0 = 1). Saturated squares are only used
 * when the result itself overflows. Then y < 0: x^y is 0 unless
 * x * x <= 1 (x = 0 gives 0^|y| = 0 already, +-1 their power). */
static void int_pow_program(ElemProgSteps *p, int nbits)
{
    BkStep *st = p->steps;
    int n = 0;
    enum { R = S0, B = S1, Y = S2, BIT = S3, T = S4, TWO = S5 };
    st[n++] = (BkStep)AFF(TWO, X0, 0, 2.0f);
    st[n++] = (BkStep)AFF(R, X0, 0, 1.0f);
    for (int k = 0; k < nbits; k++) {
        int yk = k ? Y : X1, bk = k ? B : X0;
        st[n++] = (BkStep)BIN(MOD, BIT, yk, TWO);
        st[n++] = (BkStep)BIN(DIV, Y, yk, TWO);
        st[n++] = (BkStep)BIN(MUL, T, R, bk);
        st[n++] = (BkStep)BIN(SEL, R, BIT, T);
        if (k + 1 < nbits) st[n++] = (BkStep)BIN(MUL, B, bk, bk);
    }
    st[n++] = (BkStep)AFF(T, X0, 0, 0);          /* T = 0 */
    st[n++] = (BkStep)BIN(LT, BIT, X1, T);       /* y < 0 */
    st[n++] = (BkStep)AFF(TWO, X0, 0, 1.0f);     /* 1 */
    st[n++] = (BkStep)BIN(MUL, Y, X0, X0);
    st[n++] = (BkStep)BIN(LT, Y, TWO, Y);        /* x * x > 1 */
    st[n++] = (BkStep)BIN(MUL, BIT, BIT, Y);
    st[n++] = (BkStep)BIN(SEL, R, BIT, T);
    p->nsteps = n;
    p->out = R;
}

int bk_elem_has_program(const IrGraph *g, const IrNode *nd) { return find_prog(g, nd) != NULL; }

void bk_step_dtypes(BkLow *l, int from, int cast_dt)
{
    for (int s = from; s < l->nsteps; s++) {
        const BkStep *st = &l->steps[s];
        l->reg_dt[st->dst] = (int8_t)(st->op == ISA_OP_V_CAST ? cast_dt : st->op == ISA_OP_V_SEL ? l->reg_dt[st->b] : l->reg_dt[st->a]);
    }
}

int bk_elem_program(const IrGraph *g, const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch)
{
    if (!strcmp(nd->op, "Int8Add")) return bk_int8_add_program(g, nd, l, nin, out, nscratch);   /* lower/qelem.c */
    const ElemProg *row = find_prog(g, nd);
    if (!row) return 0;
    ElemProgSteps gen, *p = &gen;
    if (!strcmp(row->op, "Pow_int")) {
        int dt = l->reg_dt[row->like];
        int_pow_program(&gen, dt == ISA_I8 ? 7 : dt == ISA_I16 ? 15 : 31);
    } else {
        gen.out = row->out;
        gen.nsteps = row->nsteps;
        memcpy(gen.steps, row->steps, sizeof row->steps);
    }
    gen.like = row->like;
    int top = p->out;
    for (int s = 0; s < p->nsteps; s++) if (p->steps[s].dst > top) top = p->steps[s].dst;
    int ntab = top - S0 + 1, nconv = 0, reg[BK_MAXIN];
    /* inputs in another dtype than input `like` get a v.cast into a scratch
     * register after the table's (e.g. Where's bool condition, Pow's
     * integer exponent); a float into an integer dtype a v.trunc first,
     * toward zero as ONNX's Cast (an integer Pow's float exponent) */
    int cdt = l->reg_dt[p->like];
    for (int i = 0; i < nin; i++) {
        reg[i] = i;
        if (l->reg_dt[i] == cdt) continue;
        int trunc = bk_is_int_dt(cdt) && !bk_is_int_dt(l->reg_dt[i]);
        if (l->nsteps + 1 + trunc > BK_MAXSTEP) return -1;
        int src = i;   /* a register holds one dtype: the truncated float gets its own */
        if (trunc) {
            src = nin + ntab + nconv++;
            l->steps[l->nsteps++] = (BkStep){ISA_OP_V_TRUNC, src, i, -1, 0, 0};
        }
        reg[i] = nin + ntab + nconv++;
        l->steps[l->nsteps++] = (BkStep){ISA_OP_V_CAST, reg[i], src, -1, 0, 0};
    }
    bk_step_dtypes(l, 0, cdt);
    if (l->nsteps + p->nsteps > BK_MAXSTEP) return -1;
    int first = l->nsteps;
    for (int s = 0; s < p->nsteps; s++) {
        BkStep st = p->steps[s];
        st.dst = st.dst >= S0 ? nin + (st.dst - S0) : reg[st.dst];
        st.a = st.a >= S0 ? nin + (st.a - S0) : reg[st.a];
        if (st.b >= 0) st.b = st.b >= S0 ? nin + (st.b - S0) : reg[st.b];
        l->steps[l->nsteps++] = st;
    }
    bk_step_dtypes(l, first, l->dt);
    *out = nin + (p->out - S0);
    *nscratch = ntab + nconv;
    return 1;
}
