/* bk_elem_prog.c - register programs of the elementwise ops that are
 * decompositions into the vector unit's rounding, comparison, select and
 * transcendental instructions (v.floor .. v.erf, v.eq/lt/le, v.sel, v.mod).
 *
 * One table row per op (or attribute variant, see row_name): its steps on
 * symbolic registers, the inputs X0..X3 and the scratch registers S0..S4,
 * which bk_elem_program maps to registers nin, nin + 1, ... of the layer's
 * program (compiler/bk_lower_vec.c runs it on each tile box, every register
 * a box of the tile). Kept apart from bk_lower_vec.c so that adding an op is
 * adding a row. The decompositions (docs/backend.md, lowering table):
 * - single instructions: Floor Ceil Round (half to even) Sin Cos Tan Asin
 *   Acos Atan Sinh Cosh Asinh Acosh Atanh Erf, Mod with fmod=1 (fmodf);
 * - Sign: v.sign, but 0 for NaN as the interpreter's (x > 0) - (x < 0):
 *   m = (x == x), then m ? sign(x) : m;
 * - Pow with a run-time exponent (x^y as C pow): |x|^y = exp(y log|x|);
 *   for x < 0 (x < |x|) times g = +1 for an even integer y (y/2 ==
 *   trunc(y/2)), -1 for an odd one, NaN for a non-integer y (sqrt(I - 1)
 *   with I = (trunc(y) == y) adds -0 or NaN); 1 where y == 0 (y == -y),
 *   which also covers 0^0, inf^0 and NaN^0.
 */
#include <stdio.h>
#include <string.h>
#include "compiler/bk_int.h"

enum { X0 = 0, X1 = 1, S0 = 32, S1, S2, S3, S4 };

typedef struct ElemProg {
    const char *op;
    int out, nsteps;
    BkStep steps[BK_MAXSTEP];
} ElemProg;

#define UN(op, d, a) {ISA_OP_V_##op, d, a, -1, 0, 0}
#define BIN(op, d, a, b) {ISA_OP_V_##op, d, a, b, 0, 0}
#define AFF(d, a, al, be) {ISA_OP_V_AFFINE, d, a, -1, al, be}
#define ONE_STEP(name, op) {name, S0, 1, {UN(op, S0, X0)}}

static const ElemProg progs[] = {
    ONE_STEP("Floor", FLOOR), ONE_STEP("Ceil", CEIL), ONE_STEP("Round", ROUND),
    ONE_STEP("Sin", SIN), ONE_STEP("Cos", COS), ONE_STEP("Tan", TAN),
    ONE_STEP("Asin", ASIN), ONE_STEP("Acos", ACOS), ONE_STEP("Atan", ATAN),
    ONE_STEP("Sinh", SINH), ONE_STEP("Cosh", COSH), ONE_STEP("Asinh", ASINH),
    ONE_STEP("Acosh", ACOSH), ONE_STEP("Atanh", ATANH), ONE_STEP("Erf", ERF),
    {"Sign", S0, 3, {UN(SIGN, S1, X0), BIN(EQ, S0, X0, X0), BIN(SEL, S0, S0, S1)}},
    {"Mod_fmod", S0, 1, {BIN(MOD, S0, X0, X1)}},
    {"Pow", S0, 20,
     {AFF(S1, X0, -1.0f, 0), BIN(MAX, S1, X0, S1),      /* S1 = |x| */
      BIN(LT, S4, X0, S1),                               /* S4 = x < 0 */
      UN(LOG, S1, S1), BIN(MUL, S1, S1, X1), UN(EXP, S0, S1), /* S0 = |x|^y */
      UN(TRUNC, S2, X1), BIN(EQ, S2, S2, X1), AFF(S2, S2, 1.0f, -1.0f), UN(SQRT, S2, S2), /* -0 or NaN */
      AFF(S3, X1, 0.5f, 0), UN(TRUNC, S1, S3), BIN(EQ, S3, S1, S3), AFF(S3, S3, 2.0f, -1.0f), /* +-1 */
      BIN(ADD, S3, S3, S2), BIN(MUL, S3, S3, S0), BIN(SEL, S0, S4, S3), /* x < 0: times g */
      AFF(S1, X1, -1.0f, 0), BIN(EQ, S1, X1, S1), BIN(SEL, S0, S1, S1)}}, /* y == 0: 1 */
};

/* The table row of node nd: Mod by its fmod attribute. */
static void row_name(const IrNode *nd, char *buf, size_t n)
{
    if (!strcmp(nd->op, "Mod") && ir_attr_int(nd, "fmod", 0)) snprintf(buf, n, "Mod_fmod");
    else snprintf(buf, n, "%s", nd->op);
}

static const ElemProg *find_prog(const IrNode *nd)
{
    char name[64];
    row_name(nd, name, sizeof name);
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++)
        if (!strcmp(progs[i].op, name)) return &progs[i];
    return NULL;
}

int bk_elem_has_program(const IrNode *nd) { return find_prog(nd) != NULL; }

static int map_reg(int r, int nin) { return r >= S0 ? nin + (r - S0) : r; }

int bk_elem_program(const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch)
{
    const ElemProg *p = find_prog(nd);
    if (!p) return 0;
    if (l->nsteps + p->nsteps > BK_MAXSTEP) return -1;
    int top = p->out;
    for (int s = 0; s < p->nsteps; s++) {
        BkStep st = p->steps[s];
        if (st.dst > top) top = st.dst;
        st.dst = map_reg(st.dst, nin);
        st.a = map_reg(st.a, nin);
        if (st.b >= 0) st.b = map_reg(st.b, nin);
        l->steps[l->nsteps++] = st;
    }
    *out = map_reg(p->out, nin);
    *nscratch = top - S0 + 1;
    return 1;
}
