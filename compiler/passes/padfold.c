/* padfold.c - a zero constant Pad of H and W in front of a 2-D Conv
 * becomes the conv's own padding.
 *
 * Reads: Conv nodes (4-D input, auto_pad NOTSET or VALID) whose input a live Pad
 *   produces: mode constant, value 0 (attribute before opset 11, else the
 *   optional constant_value input), pads constant (attribute, or the pads
 *   input from opset 11), no axes input (opset 18), N and C unpadded, H
 *   and W pads non-negative.
 * Does: the Conv reads the Pad's input and its pads grow by the Pad's
 *   (begin H, W; end H, W), when every resulting pad is at most the
 *   dilated kernel extent less one (as a conv's own padding is, so every
 *   output still reads an input pixel: what the backend's window
 *   lowerings expect) and at most 63, the conv instruction's 6-bit pad
 *   fields (isa/isa.h; a wider Pad stays a copy layer rather than fail
 *   the compile). A VALID conv becomes NOTSET with the Pad's pads. The
 *   Pad is left to dead-node removal when nothing
 *   else reads it.
 * Guarantees: results unchanged: the zeros a folded Pad wrote were
 *   multiplied into the conv's sums, which now leave those taps out (only
 *   the sign of a zero sum can differ).
 * Why: TF-exported graphs pad explicitly before a VALID conv (ResNet's
 *   stride-2 convs, MobileNet's); alone, the Pad is a DRAM-to-DRAM copy
 *   of the whole tensor (lower/pad.c) and stops a layer group at the conv,
 *   whereas conv padding costs nothing and keeps the conv a group member. */
#include <string.h>
#include "compiler/passes/passes.h"

enum { PAD_FIELD_MAX = 63 };   /* the conv instruction's PT/PL/PB/PR fields are 6 bits */

/* The Pad's 8 pads of a 4-D tensor (begin N C H W, end N C H W) into p;
 * 0, or -1 when they are not known constants. */
static int pad_amounts(const IrGraph *g, const IrNode *pd, int64_t p[8])
{
    if (g->opset < 11) {
        const IrAttr *a = ir_attr(pd, g->opset < 2 ? "paddings" : "pads");
        if (!a || a->type != IR_ATTR_INTS || a->n != 8) return -1;
        for (int i = 0; i < 8; i++) p[i] = a->ints[i];
        return 0;
    }
    if (pd->nin < 2 || pd->in[1] < 0) return -1;
    const IrTensor *t = &g->t[pd->in[1]];
    if (!t->data || ir_numel(t) != 8) return -1;
    for (int i = 0; i < 8; i++) p[i] = ir_get_i(t, i);
    return 0;
}

/* 1 when the Pad pads with zeros. */
static int zero_constant(const IrGraph *g, const IrNode *pd)
{
    if (strcmp(ir_attr_str(pd, "mode", "constant"), "constant")) return 0;
    if (g->opset < 11) return ir_attr_float(pd, "value", 0.0f) == 0.0f;
    if (pd->nin > 3 && pd->in[3] >= 0) return 0;   /* axes */
    if (pd->nin < 3 || pd->in[2] < 0) return 1;
    const IrTensor *v = &g->t[pd->in[2]];
    return v->data && ir_numel(v) == 1 && v->dtype == IR_F32 && ir_get_f(v, 0) == 0.0;
}

int pass_fold_pad(IrGraph *g, AtlErr *e)
{
    for (int i = 0; i < g->nn; i++) {
        IrNode *cv = &g->nodes[i];
        if (cv->dead || strcmp(cv->op, "Conv") || cv->nin < 2 || cv->in[0] < 0 || cv->in[1] < 0) continue;
        const IrTensor *px = &g->t[cv->in[0]], *w = &g->t[cv->in[1]];
        int pi = px->producer;
        if (pi < 0 || px->ndim != 4 || w->ndim != 4 || w->dims[2] < 1 || w->dims[3] < 1) continue;
        const IrNode *pd = &g->nodes[pi];
        if (pd->dead || strcmp(pd->op, "Pad") || pd->nin < 1 || pd->in[0] < 0 || g->t[pd->in[0]].ndim != 4) continue;
        const char *ap = ir_attr_str(cv, "auto_pad", "NOTSET");
        int valid = !strcmp(ap, "VALID");
        int64_t p[8];
        if ((!valid && strcmp(ap, "NOTSET")) || !zero_constant(g, pd) || pad_amounts(g, pd, p)) continue;
        if (p[0] || p[1] || p[4] || p[5] || p[2] < 0 || p[3] < 0 || p[6] < 0 || p[7] < 0) continue;
        int64_t cp[4] = {0, 0, 0, 0}, dl[2] = {1, 1};
        const IrAttr *a = valid ? NULL : ir_attr(cv, "pads");   /* VALID: no padding of its own */
        if (a && (a->type != IR_ATTR_INTS || a->n != 4)) continue;
        for (int k = 0; a && k < 4; k++) cp[k] = a->ints[k];
        const IrAttr *d = ir_attr(cv, "dilations");
        if (d && (d->type != IR_ATTR_INTS || d->n != 2)) continue;
        for (int k = 0; d && k < 2; k++) dl[k] = d->ints[k];
        int64_t np[4] = {cp[0] + p[2], cp[1] + p[3], cp[2] + p[6], cp[3] + p[7]};
        int64_t ext[2] = {dl[0] * (w->dims[2] - 1), dl[1] * (w->dims[3] - 1)};
        if (np[0] > ext[0] || np[2] > ext[0] || np[1] > ext[1] || np[3] > ext[1]) continue;
        if (np[0] > PAD_FIELD_MAX || np[1] > PAD_FIELD_MAX || np[2] > PAD_FIELD_MAX || np[3] > PAD_FIELD_MAX) continue;
        if (ir_set_attr_ints(g, i, "pads", np, 4, e)) return -1;
        if (valid && ir_set_attr_str(g, i, "auto_pad", "NOTSET", e)) return -1;
        g->nodes[i].in[0] = g->nodes[pi].in[0];
    }
    return 0;
}
