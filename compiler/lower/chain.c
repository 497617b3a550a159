/* chain.c - a layer group of window layers (Conv, MaxPool, AveragePool,
 * each with its fused activation and residual tail) lowered as one layer
 * whose intermediate tensors never leave LMEM.
 *
 * Reads: the members' own lowerings (their geometry, weight images, biases,
 *   activations and tails, BkLow), in execution order, and the graph for
 *   which tensor each reads and writes (storage roots, alloc/place.c).
 * Does: slices the last member's output along N and H (images x chunks of
 *   `rows` rows, the last chunk uneven); for each slice, the output rows
 *   every member must produce are propagated backwards (slice inference:
 *   a window's input rows with its halo, bk_window_span; a residual the
 *   same rows), so a member computes the rows its consumers in the group
 *   need, halos recomputed by the neighbouring slices rather than
 *   exchanged. When no height of whole rows fits, float chains are also
 *   offered W slices: chunks of output columns, propagated backwards the
 *   same way (cols_ok: every member reads exactly the columns its input
 *   buffer holds, since a window instruction has no row pitch of its own).
 *   Every tensor the group touches has an HWC row buffer in the
 *   slot ([rows][columns][C], sized for the most any slice needs): the
 *   group's inputs are loaded into theirs (NCHW -> HWC, the tile's loads),
 *   each member computes from its input buffer into its output buffer
 *   (conv on the matrix unit into an f32 accumulator, bias, activation,
 *   residual, activation, cast; pools on the vector unit), and the last
 *   member's buffer is stored (the tile's stores). All members' weights
 *   and f32 biases are resident below the slots for the whole group,
 *   multicast once per cluster (the schedule's MCAST/WAIT), so a slice
 *   loads only activations. When they do not fit (or --group-weights
 *   stream), the largest weights stream instead: a slice runs as steps,
 *   each loading one output-channel chunk into its slot (plan_steps),
 *   the row buffers below the slots (docs/backend.md, "Streamed
 *   weights"). The schedule pipelines the slices as any
 *   layer's tiles: the loads of slice i+1 and the stores of slice i-1
 *   overlap the computes of slice i.
 * Other members (lower/chain_ops.c): a Concat along C (its inputs' rows
 *   moved into their channels of its buffer), a nearest Resize upsampling
 *   by integers (rows propagate as o / f; whole rows only) and a float
 *   Add/Sub/Mul/Max/Min of two same-shaped tensors (its own one-step
 *   program over the rows); docs/backend.md, "Concat, Resize and
 *   elementwise members".
 * int8 chains: Int8Conv, i8 MaxPool, Int8Add, Concat and nearest Resize
 *   members (member_kind) with i8 row buffers (a Concat or Resize moves
 *   bytes: the quantiser gives a Concat's inputs the output's scale and
 *   zero point, rescaling with one-input Int8Adds, ops/qdq_fuse.c); a
 *   conv runs one i8 conv per as many output rows as its i32 accumulator
 *   (scratch region 0) holds, then the bias and v.requant; an Int8Add its
 *   own register program over aligned element chunks (docs/backend.md,
 *   "int8 members").
 * Valid when: every member is a 2-D NCHW window layer with constant weights
 *   in the float storage dtype (or all are int8 members, every row of
 *   every buffer a multiple of the LMEM alignment), every member's output but the last is read
 *   only by members (not by other layers, a Gelu's input included, not a
 *   graph output), the group's output shares no DRAM byte with its inputs
 *   (placement does not know groups) unless it takes one input's bytes
 *   exactly (a residual tail in place, alloc/place.c) and every slice reads
 *   just the rows and columns of that input it stores over (inplace_ok),
 *   and the weights and two slots fit
 *   LMEM. Slice heights
 *   where some member's slice reads no input row (rows wholly in a padding
 *   border) are not offered. bk_lower_chain returns 1 (no error) when the
 *   members are not such a chain.
 * Lifetimes: row buffers never live at the same step of a slice (the
 *   loads, each member, the store: buf_life) may share bytes; layout packs
 *   them so (alloc/memplan.c), float and int8 chains, only where a buffer
 *   each does not fit, so plans that fit without it stay as they were
 *   (docs/backend.md, "Lifetimes in a slot").
 * Checked: bk_chain_check proves every plan the compiler applies sound
 *   (buffers and scratch inside the slot, aligned, large enough for every
 *   slice, disjoint unless never live at the same step; resident weights
 *   below the slots), so a bad plan is a compile error, not a silent
 *   corruption.
 * Guarantees: the results equal the members' own lowerings' exactly (the
 *   same instructions on the same rows; f32 accumulation per conv), which
 *   test_backend_group.c checks against the interpreter. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <limits.h>
#include "compiler/lower/quant.h"
#include "compiler/alloc/memplan.h"

enum { CHAIN_MAX_BUFS = 2 * BK_CHAIN_MAX + 2, CHAIN_MAX_SCR = 4 };
enum { CHAIN_MAX_STEPS = 64, CHAIN_MAX_ITEMS = CHAIN_MAX_STEPS + BK_CHAIN_MAX };

/* A candidate plan: `rows` output rows of `cols` columns per slice; the `nstream` members
 * with the largest weights (of those that may stream) stream them; vdw: the
 * depthwise members that may (ChainMember.dwv) run on the vector unit; ws:
 * the streamed weights staged in the cluster's SRAM (BkChain.ws); csl:
 * hidden slices (C slices of an inverted residual block); xc: channel
 * slices across cores. */
typedef struct ChainShape { int rows, cols, nstream, vdw, ws, csl, xc, ost; } ChainShape;

/* Streaming chains: a slice runs as steps (tiles of one run); each step
 * computes items [lo, hi) in order, item w (-1 none) from the weight
 * chunk the step loads into its slot. An item is output channels
 * [oc0, oc0+ocn) of member m (all of them unless it streams). */
typedef struct ChainItem { int m, oc0, ocn, streamed; } ChainItem;
typedef struct ChainStep { int lo, hi, w; } ChainStep;

/* What a member is: a float window layer (conv or pool; pools of the int8
 * chains too), an Int8Conv (i8 conv, i32 accumulator, integer
 * requantisation), or an elementwise layer over whole rows (Int8Add: its
 * own register program on the rows of its two inputs). */
enum { CM_WINDOW, CM_QCONV, CM_ELEM, CM_CONCAT, CM_RESIZE, CM_LRESIZE };

/* An HWC row buffer of one tensor: a group input (dram != 0) or a
 * member's output. lo, n: the rows the slice being generated holds. */
typedef struct ChainBuf {
    int t;                        /* storage root of the tensor */
    int C, H, W;
    uint64_t dram;                /* group input: its tagged DRAM address; 0: a member's output */
    uint64_t off;                 /* in the slot; streaming: absolute, in the resident region */
    uint64_t off2;                /* streaming: the copy odd slices use (group inputs and the
                                   * group's output: loads and stores overlap the neighbours'), 0 none */
    int max_rows;                 /* the most rows any slice puts in it */
    int max_px;                   /* the most pixels (rows x columns) any slice puts in it */
} ChainBuf;

typedef struct ChainMember {
    const BkLayer *ly;            /* the member's own lowering (not owned) */
    int kind;                     /* CM_* */
    int in, res, out;             /* buffers: input, tail residual or an elementwise
                                   * member's second input (-1 none), output */
    int C, H, W;                  /* an elementwise, Concat or Resize member's output dims */
    int nx, xin[BK_MOP_MAXIN];    /* a Concat's inputs after in and res (buffers) */
    int fh, fw;                   /* a Resize's factors (lower/chain_ops.c) */
    uint64_t rz;                  /* an interpolating Resize resizing H: its rows' block of R_h
                                   * in the slot (f32; lower/resize.c), its R_w resident at w */
    int pc;                       /* an elementwise member's res is per channel ([N, C, 1, 1]) */
    uint64_t w, b, rq;            /* resident LMEM of its weight image, bias (f32; i32 for
                                   * CM_QCONV) and requantisation pairs (0 none) */
    int stream;                   /* its weights come through the slots' chunk buffer (w unused) */
    int ocmax;                    /* streaming: its chunks' most channels (the f32 scratch), 0 any */
    uint64_t wbytes;              /* its weight image's bytes (0: not a conv) */
    uint64_t sw;                  /* streaming with BkChain.ws: its weight image's SRAM address */
    int dwv;                      /* an f32 depthwise conv that may run on the vector unit
                                   * (bk_dw_chain_ok), which it does when BkChain.vdw */
} ChainMember;

struct BkChain {
    int nm, nb;
    int ndw, vdw;                 /* members with dwv; the plan runs them on the vector unit */
    ChainMember m[BK_CHAIN_MAX];
    ChainBuf buf[CHAIN_MAX_BUFS];
    int N, OH, rows, nrc;         /* slices: N images x nrc chunks of `rows` output rows */
    int OW, cols, nwc;            /* x nwc chunks of `cols` output columns (1: whole rows) */
    int inplace;                  /* the group input whose bytes the output takes (placement's
                                   * residual tail in place), -1 none: every slice reads exactly
                                   * the rows and columns of it that it stores over */
    uint64_t resident;            /* weights and biases below the slots (the multicast) */
    uint64_t y;                   /* the group's output in DRAM (tagged) */
    /* streaming (nstream > 0): the members that may stream by weight size,
     * largest first; the steps of a slice; the slot's weight chunk at l_wc
     * (wchunk bytes, the largest chunk) and an int8 chain's i8 chunk temp */
    int nstream, nelig, elig[BK_CHAIN_MAX];
    int nsteps, nitems;
    ChainStep step[CHAIN_MAX_STEPS];
    ChainItem item[CHAIN_MAX_ITEMS];
    uint64_t l_wc, wchunk, l_q8;
    /* ws: the streamed weights staged whole in each cluster's SRAM by the
     * prologue (one DRAM read per cluster), the steps' chunks loaded from
     * there (docs/backend.md, "Streamed weights"); SRAM [sram_stage, sw_top) */
    int ws;
    uint64_t sw_top;
    uint64_t l_acc, l_resf, l_tmp; /* slot scratch (f32): accumulator, residual, activation temp */
    uint64_t l_rt;                /* slot scratch (f32): an interpolating Resize's rows resized along H */
    uint64_t used;                /* slot bytes of the current shape */
    int dt, es;                   /* storage dtype of every buffer: BkCtx.dt, or i8 (int8 chains) */
    /* int8 chains: the i32 / f32 scratch is nscr regions at l_scr, the
     * first of scr0 bytes (a convolution's accumulator: it computes as
     * many output rows per instruction as fit, at least one row of
     * scr_row bytes), the others of scr1 bytes; an elementwise member
     * runs its program over chunks of its rows' elements that fit all */
    int nscr;
    uint64_t scr_row, scr0, scr1, l_scr[CHAIN_MAX_SCR];
    /* C slices of an inverted residual block (the "cslice" block below):
     * cs_ok when the members are expand -> depthwise -> project; the plan
     * runs csl > 0 hidden slices of hn channels (the last fewer) */
    int cs_ok, csl, hn;
    uint64_t l_cp;                /* C slices, not f32: the project's f32 accumulator */
    /* channel slices across cores (the "xc" block below): the tiles
     * compute xc > 0 slices of xn output channels each (the last fewer) */
    int xc, xn;
    int xr;                       /* xc: the input rows resident (buffer off absolute), multicast */
    /* output-channel steps (ost_eligible): the last member streams its
     * weights in chunks of at most ost channels, and its output and
     * residual rows are loaded and stored chunk by chunk through slot
     * buffers of ost channels a pixel, 0 off */
    int ost;
};

/* 1 when buffer b is one of an output-channel-stepped chain's slot buffers
 * (the last member's output or residual, ost channels a pixel). */
static int ost_slot(const BkChain *ch, int b)
{
    const ChainMember *l = &ch->m[ch->nm - 1];
    return ch->ost && (b == l->out || b == l->res);
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* The input rows (cols 0) or columns (cols 1, W slices) a member's output
 * rows or columns [lo, lo+n) read: the window with its halo, or the same
 * ones (elementwise). */
static BkSpan member_span(const ChainMember *m, int cols, int lo, int n)
{
    const BkLow *l = &m->ly->lw;
    if (m->kind == CM_RESIZE) {   /* output o reads input o / f */
        int f = cols ? m->fw : m->fh;
        BkSpan s = {lo / f, (lo + n - 1) / f - lo / f + 1, 0, 0};
        return s;
    }
    if (m->kind == CM_LRESIZE) return bk_resize_span(l, cols, lo, n);   /* its taps' rows */
    if (m->kind == CM_ELEM || m->kind == CM_CONCAT) {
        BkSpan s = {lo, n, 0, 0};
        return s;
    }
    return cols ? bk_window_span(lo, n, l->sw, l->pl, l->dw, l->kw, l->W)
                : bk_window_span(lo, n, l->sh, l->pt, l->dh, l->kh, l->H);
}

/* A member's output dims (channels, rows, columns). */
static void member_out(const ChainMember *m, int *C, int *H, int *W)
{
    const BkLow *l = &m->ly->lw;
    int own = m->kind != CM_WINDOW && m->kind != CM_QCONV;
    *C = own ? m->C : l->OC;
    *H = own ? m->H : l->OH;
    *W = own ? m->W : l->OW;
}

/* Rows [lo, lo+n) of every buffer for slice (img, r) of the chain. */
typedef struct ChainRows {
    int lo[CHAIN_MAX_BUFS], n[CHAIN_MAX_BUFS];      /* rows */
    int clo[CHAIN_MAX_BUFS], cn[CHAIN_MAX_BUFS];    /* columns (all of them when nwc is 1) */
} ChainRows;

static void widen_span(int *at, int *cnt, int lo, int n)
{
    if (n <= 0) return;
    if (*cnt <= 0) { *at = lo; *cnt = n; return; }
    int hi = imax(*at + *cnt, lo + n);
    *at = imin(*at, lo);
    *cnt = hi - *at;
}

static void widen(ChainRows *r, int b, int lo, int n) { widen_span(&r->lo[b], &r->n[b], lo, n); }

/* Slice (rci, wci): output rows chunk rci, columns chunk wci of the last
 * member, propagated backwards as the rows are (whole rows: every buffer
 * holds all its columns). */
static void slice_rows(const BkChain *ch, int rci, int wci, ChainRows *r)
{
    for (int b = 0; b < ch->nb; b++) {
        r->n[b] = 0;
        r->clo[b] = 0;
        r->cn[b] = ch->nwc > 1 ? 0 : ch->buf[b].W;
    }
    int o0 = rci * ch->rows, last = ch->m[ch->nm - 1].out, on = imin(ch->rows, ch->OH - o0);
    if (ch->ost) {   /* output-channel steps: the rows spread evenly over the nrc slices (at most `rows` each) */
        o0 = (int)((int64_t)rci * ch->OH / ch->nrc);
        on = (int)((int64_t)(rci + 1) * ch->OH / ch->nrc) - o0;
    }
    widen(r, last, o0, on);
    if (ch->nwc > 1) widen_span(&r->clo[last], &r->cn[last], wci * ch->cols, imin(ch->cols, ch->OW - wci * ch->cols));
    for (int i = ch->nm - 1; i >= 0; i--) {
        const ChainMember *m = &ch->m[i];
        int lo = r->lo[m->out], n = r->n[m->out];
        if (n <= 0) continue;
        BkSpan ys = member_span(m, 0, lo, n);
        widen(r, m->in, ys.a, ys.n);
        if (m->res >= 0) widen(r, m->res, m->pc ? 0 : lo, m->pc ? 1 : n);
        for (int x = 0; x < m->nx; x++) widen(r, m->xin[x], lo, n);
        if (ch->nwc < 2) continue;
        BkSpan xs = member_span(m, 1, r->clo[m->out], r->cn[m->out]);
        widen_span(&r->clo[m->in], &r->cn[m->in], xs.a, xs.n);
        if (m->res >= 0) widen_span(&r->clo[m->res], &r->cn[m->res], m->pc ? 0 : r->clo[m->out], m->pc ? 1 : r->cn[m->out]);
        for (int x = 0; x < m->nx; x++) widen_span(&r->clo[m->xin[x]], &r->cn[m->xin[x]], r->clo[m->out], r->cn[m->out]);
    }
}

/* The slice's index in the tiles: images, then row chunks, then column chunks. */
static void slice_of(const BkChain *ch, int sl, int *img, int *rci, int *wci)
{
    *img = sl / (ch->nrc * ch->nwc);
    *rci = sl / ch->nwc % ch->nrc;
    *wci = sl % ch->nwc;
}

static int is_f32(int dt) { return dt == ISA_F32; }

/* A window member's columns: every input column (the buffers hold whole
 * rows, so the instruction's row pitch is W), with the layer's padding. */
static BkSpan full_width(const BkLow *l)
{
    BkSpan xs = {0, l->W, l->pl, l->pr};
    return xs;
}

/* The input columns of member m in slice r: whole rows, or with W slices
 * the window of its output columns (its input buffer holds exactly those:
 * cols_ok). */
static BkSpan slice_width(const BkChain *ch, const ChainMember *m, const ChainRows *r)
{
    if (ch->nwc < 2) return full_width(&m->ly->lw);
    return member_span(m, 1, r->clo[m->out], r->cn[m->out]);
}

/* W slices: 1 when every member computing in slice r reads exactly the
 * columns its input buffer holds (a conv or pool instruction has no row
 * pitch of its own: it reads [rows][columns][C] packed), its residual the
 * columns of its output, with padding the fields hold. Whole rows: 1. */
static int cols_ok(const BkChain *ch, const ChainRows *r)
{
    if (ch->nwc < 2) return 1;
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        if (r->n[m->out] <= 0) continue;
        BkSpan xs = member_span(m, 1, r->clo[m->out], r->cn[m->out]);
        if (m->kind == CM_RESIZE || m->kind == CM_LRESIZE) return 0;   /* whole rows only (lower/chain_ops.c) */
        if (xs.n <= 0 || xs.pa > 63 || xs.pb > 63 || xs.a != r->clo[m->in] || xs.n != r->cn[m->in]) return 0;
        if (m->res >= 0 && !m->pc && (r->clo[m->res] != r->clo[m->out] || r->cn[m->res] != r->cn[m->out])) return 0;
        for (int x = 0; x < m->nx; x++)
            if (r->clo[m->xin[x]] != r->clo[m->out] || r->cn[m->xin[x]] != r->cn[m->out]) return 0;
    }
    return 1;
}

/* 1 when the window over whole rows gives exactly the layer's OW columns
 * and its padding fits the instruction's fields. */
static int width_ok(const BkLow *l)
{
    BkSpan xs = full_width(l);
    int span = xs.n + xs.pa + xs.pb - l->dw * (l->kw - 1) - 1;
    return xs.pa <= 63 && xs.pb <= 63 && span >= 0 && span / l->sw + 1 == l->OW;
}

/* 1 when every member computing rows in slice r reads at least one input
 * row, with no more padding rows than the instruction's fields hold (a
 * slice of rows that lie wholly in a padding border, e.g. of a 1x1 conv
 * with pads, cannot be generated). */
static int slice_ok(const BkChain *ch, const ChainRows *r)
{
    for (int i = 0; i < ch->nm; i++) {
        int n = r->n[ch->m[i].out];
        if (n <= 0) continue;
        BkSpan ys = member_span(&ch->m[i], 0, r->lo[ch->m[i].out], n);
        if (ys.n <= 0 || ys.pa > 63 || ys.pb > 63) return 0;
    }
    return 1;
}

/* 1 unless the output is written over a group input (ch->inplace) and
 * slice r reads rows or columns of that input other than the ones it
 * stores: another slice's store could then overwrite them first. */
static int inplace_ok(const BkChain *ch, const ChainRows *r)
{
    int b = ch->inplace, o = ch->m[ch->nm - 1].out;
    return b < 0 || (r->lo[b] == r->lo[o] && r->n[b] == r->n[o] && r->clo[b] == r->clo[o] && r->cn[b] == r->cn[o]);
}

/* The byte offset of rows from `at` in buffer b in slice r (rows from
 * r->lo[b] of r->cn[b] columns). */
static uint64_t row_offset(const BkChain *ch, const ChainRows *r, int b, int at)
{
    return (uint64_t)(at - r->lo[b]) * (uint64_t)r->cn[b] * ch->buf[b].C * ch->es;
}

/* -1, or the first member of slice r that reads its input or residual
 * rows at an offset inside their buffer that is not a multiple of the
 * alignment (every compute operand starts aligned; a buffer's rows need
 * not be, e.g. 3 columns of 56 f32 channels, so a residual one halo row
 * into the block input's buffer would fault). */
static int misaligned_read(const BkCtx *c, const BkChain *ch, const ChainRows *r)
{
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        int lo = r->lo[m->out], n = r->n[m->out];
        if (n <= 0) continue;
        BkSpan ys = member_span(m, 0, lo, n);
        if (row_offset(ch, r, m->in, ys.a) % c->align) return i;
        if (m->res >= 0 && !m->pc && row_offset(ch, r, m->res, lo) % c->align) return i;
        for (int x = 0; x < m->nx; x++) if (row_offset(ch, r, m->xin[x], lo) % c->align) return i;
    }
    return -1;
}

/* The elements of an elementwise member's chunk: a multiple of the
 * alignment (its rows are, so every chunk starts aligned in i8). */
static uint64_t elem_chunk(const BkCtx *c, const BkChain *ch)
{
    uint64_t b = ch->nscr > 1 && ch->scr1 < ch->scr0 ? ch->scr1 : ch->scr0, g = c->align;
    return b / 4 / g * g;
}

static int has_elem(const BkChain *ch)
{
    for (int i = 0; i < ch->nm; i++) if (ch->m[i].kind == CM_ELEM) return 1;
    return 0;
}

/* An int8 chain's scratch after its buffers (`used` bytes of the slot):
 * region 0 at least one row of the widest convolution, all of them at
 * least one aligned chunk of elements; as large as the slot allows, up
 * to what the largest member's rows need. */
static int int8_scratch(const BkCtx *c, const BkLayer *ly, BkChain *ch, uint64_t used, uint64_t limit)
{
    uint64_t al = c->align, want = 0, min0 = ch->scr_row, minel = has_elem(ch) ? 4 * al : 0;
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        int C, H, W;
        member_out(m, &C, &H, &W);
        uint64_t b = (uint64_t)ch->buf[m->out].max_px * C * 4;
        if ((m->kind == CM_QCONV || m->kind == CM_ELEM) && b > want) want = b;
    }
    ch->l_acc = ch->l_resf = ch->l_tmp = 0;
    ch->scr0 = ch->scr1 = 0;
    if (used > limit) return -1;
    if (!ch->nscr) { ch->used = used; return 0; }
    min0 = bk_align_up(c, min0 > minel ? min0 : minel);
    want = bk_align_up(c, want);
    uint64_t avail = limit - used, even = avail / (uint64_t)ch->nscr / al * al;
    if (even >= min0) {
        ch->scr0 = ch->scr1 = even < want ? even : want;
    } else {
        if (avail < min0) return -1;
        ch->scr0 = min0;
        ch->scr1 = ch->nscr > 1 ? (avail - min0) / (uint64_t)(ch->nscr - 1) / al * al : 0;
        if (ch->nscr > 1 && ch->scr1 < minel) return -1;
    }
    for (int i = 0; i < ch->nscr; i++) ch->l_scr[i] = bk_slot_alloc(c, &used, i ? ch->scr1 : ch->scr0);
    ch->used = used;
    return used <= ly->slot_size ? 0 : -1;
}

/* The resident region's multicast part: every conv member's bias (and
 * an Int8Conv's requantisation pairs) and the weights of those that do
 * not stream (the first nstream of elig stream); sets m->stream, w, b,
 * rq and ch->resident. */
static void resident_plan(const BkCtx *c, BkChain *ch)
{
    uint64_t at = ch->nstream ? c->align : 0;   /* 0 means "none": a streaming first member's bias is not at 0 */
    for (int i = 0; i < ch->nm; i++) ch->m[i].stream = 0;
    for (int k = 0; k < ch->nstream && k < ch->nelig; k++) ch->m[ch->elig[k]].stream = 1;
    for (int i = 0; ch->ost && i < ch->nm; i++) ch->m[i].stream = i == ch->nm - 1;   /* the last member only */
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *cm = &ch->m[i];
        const BkLow *l = &cm->ly->lw;
        cm->w = cm->b = cm->rq = 0;
        if (cm->kind == CM_LRESIZE && l->kw) {   /* R_w, every row's */
            cm->w = bk_align_up(c, at);
            at = cm->w + bk_align_up(c, (uint64_t)l->OW * l->W * 4);
        }
        if (l->kind != BK_K_CONV) continue;
        if (!cm->stream) {
            cm->w = bk_align_up(c, at);
            at = cm->w + bk_align_up(c, cm->wbytes);
        }
        if (l->b) {
            cm->b = bk_align_up(c, at);
            at = cm->b + bk_align_up(c, (uint64_t)l->OC * 4);
        }
        if (cm->kind == CM_QCONV) {
            cm->rq = bk_align_up(c, at);
            at = cm->rq + bk_align_up(c, (uint64_t)l->OC * 8);
        }
    }
    ch->resident = at;
}

/* SRAM bytes the first ns members of elig (the streaming ones) take
 * staged whole, each at a 64-byte boundary. */
static uint64_t staged_bytes(const BkChain *ch, int ns)
{
    uint64_t n = 0;
    if (ch->ost) return (ch->m[ch->nm - 1].wbytes + 63) / 64 * 64;
    for (int k = 0; k < ns && k < ch->nelig; k++) n += (ch->m[ch->elig[k]].wbytes + 63) / 64 * 64;
    return n;
}

/* 1 when a plan streaming the first ns of elig may stage those weights
 * in its clusters' SRAM (BkChain.ws; float or int8 chains: a staged chain
 * is not prefetched into, which the group search does not price, see
 * docs/backend.md, "Streamed weights staged in cluster SRAM"), SRAM above
 * BkCtx.sram_stage is free for the layer
 * and holds them, and the flag fits the resident region's first aligned
 * block (unused while streaming, resident_plan). --sram-weights never:
 * not offered. */
static int stage_ok(const BkCtx *c, const BkChain *ch, int ns)
{
    /* not in a plan with SRAM bands: a streamed group priced cheaper so
     * would take band tensors out of SRAM, which the group search does
     * not price in their consumers (ResNet-50 fp16 with a 64x64 array and
     * 2 MiB of LMEM: bands 1,394,393 -> 1,516,821 estimated cycles) */
    return ns > 0 && c->grouping && !c->wsram_never && !c->split && !c->bands &&
           c->align >= 64 &&   /* one core a cluster too: its slices share the chunks (tiny) */
           c->sram_stage + staged_bytes(ch, ns) <= (uint64_t)c->chip->sram_bytes;
}

/* ws: each streaming member's SRAM address, from BkChain.sw_top = sram_stage up. */
static void stage_plan(const BkCtx *c, BkChain *ch)
{
    ch->sw_top = c->sram_stage;
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *m = &ch->m[i];
        m->sw = 0;
        if (!ch->ws || !m->stream) continue;
        m->sw = ch->sw_top;
        ch->sw_top += (m->wbytes + 63) / 64 * 64;
    }
}

/* Streaming: the items and steps of a slice, the weight chunk after
 * `used` bytes of the slot. A streaming member's output channels go in
 * equal chunks (a multiple of the alignment in elements, so each chunk's
 * channels start aligned) as wide as the slot has room for, at least two
 * (with two steps each slot keeps its chunk: one chunk would only double
 * the slots' weights); each chunk
 * opens a step (the items before the first join it, those after the last
 * the last step). 0 when it fits in at least 2 and at most
 * CHAIN_MAX_STEPS steps. */
static int plan_steps(const BkCtx *c, const BkLayer *ly, BkChain *ch, uint64_t used)
{
    ch->l_wc = bk_align_up(c, used);
    if (ch->l_wc >= ly->slot_size) return -1;
    uint64_t cap = ly->slot_size - ch->l_wc, unit = c->align / (uint64_t)ch->es, most = 0;
    int ni = 0, ns = 0;
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        int OC, OH, OW;
        member_out(m, &OC, &OH, &OW);
        if (!m->stream) {
            ChainItem it = {i, 0, OC, 0};
            ch->item[ni++] = it;
            continue;
        }
        uint64_t per = m->wbytes / (uint64_t)OC, fit = cap / per, half = ((uint64_t)OC + 1) / 2;
        if (m->ocmax && fit > (uint64_t)m->ocmax) fit = (uint64_t)m->ocmax;
        if (fit > half) fit = (half + unit - 1) / unit * unit;   /* two chunks at least (OC > unit) */
        if (fit < (uint64_t)OC) fit = fit / unit * unit;
        if (!fit) return -1;
        int n = (int)(((uint64_t)OC + fit - 1) / fit);
        uint64_t w = ((uint64_t)OC + n - 1) / n;
        if (w < (uint64_t)OC) w = (w + unit - 1) / unit * unit;
        if (ni + n > CHAIN_MAX_ITEMS) return -1;
        for (int o = 0; o < OC; o += (int)w) {
            ChainItem it = {i, o, imin((int)w, OC - o), 1};
            ch->item[ni++] = it;
        }
        most = most > bk_align_up(c, per * w) ? most : bk_align_up(c, per * w);
    }
    ch->step[0].lo = 0;
    ch->step[0].w = -1;
    for (int k = 0; k < ni; k++) {
        if (!ch->item[k].streamed) continue;
        if (ch->step[ns].w >= 0) {
            ch->step[ns].hi = k;
            if (++ns == CHAIN_MAX_STEPS) return -1;
            ch->step[ns].lo = k;
        }
        ch->step[ns].w = k;
    }
    ch->step[ns].hi = ni;
    ch->nsteps = ns + 1;
    ch->nitems = ni;
    ch->wchunk = most;
    ch->used = ch->l_wc + most;
    return ch->nsteps >= 2 && ch->used <= ly->slot_size ? 0 : -1;
}

/* The steps of a slice during which buffer b holds data (inclusive):
 * 0 the loads, 1 + i member i, nm + 1 the store. A group input from the
 * loads to its last reader, a member's output from that member to its
 * last reader (the last member's to the store). Streaming: the group's
 * inputs and output (two copies, which the neighbouring slices' loads
 * and stores use while this slice computes) every step. */
static void buf_life(const BkChain *ch, int b, int *first, int *last)
{
    int nm = ch->nm, out = ch->m[nm - 1].out;
    *first = *last = 0;
    if (ch->nstream && (ch->buf[b].dram || b == out)) { *last = nm + 1; return; }
    for (int i = 0; i < nm; i++) {
        const ChainMember *m = &ch->m[i];
        if (m->out == b) *first = i + 1;
        if (m->in == b || m->res == b) *last = i + 1;
        for (int x = 0; x < m->nx; x++) if (m->xin[x] == b) *last = i + 1;   /* a Concat's later inputs */
    }
    if (b == out) *last = nm + 1;
    if (*last < *first) *last = *first;
}

/* Row buffers packed by lifetime (alloc/memplan.c) from `base`: bytes of
 * buffers never live at the same step may be shared (with streaming,
 * second copies live every step). Sets off and off2; returns the end,
 * UINT64_MAX when the packer fails. */
static uint64_t pack_bufs(const BkCtx *c, BkChain *ch, uint64_t base)
{
    MemBuffer mb[2 * CHAIN_MAX_BUFS];
    int n = 0, last = ch->m[ch->nm - 1].out, copy[CHAIN_MAX_BUFS];
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *bf = &ch->buf[b];
        MemBuffer z = {.size = bk_align_up(c, (uint64_t)bf->max_px * bf->C * ch->es), .align = c->align, .alias_of = -1};
        buf_life(ch, b, &z.first, &z.last);
        mb[n++] = z;
        copy[b] = ch->nstream && (bf->dram || b == last) ? n : -1;
        if (copy[b] >= 0) mb[n++] = z;
    }
    MemPlanResult res;
    AtlErr e = {{0}};
    if (memplan_assign(mb, n, &res, &e)) return UINT64_MAX;
    for (int b = 0, k = 0; b < ch->nb; b++, k++) {
        ch->buf[b].off = base + mb[k].offset;
        ch->buf[b].off2 = copy[b] >= 0 ? base + mb[++k].offset : 0;
    }
    return base + res.footprint;
}

/* 1 when some two row buffers are never live at the same step (packing
 * them by lifetime may need fewer bytes than one range each). */
static int can_share(const BkChain *ch)
{
    int f[CHAIN_MAX_BUFS], l[CHAIN_MAX_BUFS];
    for (int b = 0; b < ch->nb; b++) {
        buf_life(ch, b, &f[b], &l[b]);
        for (int a = 0; a < b; a++) if (f[b] > l[a] || f[a] > l[b]) return 1;
    }
    return 0;
}

static int layout_with(const BkCtx *c, BkLayer *ly, BkChain *ch, int pack);

/* Slot layout and resident region for ch->rows; 0 if it fits. Each row
 * buffer its own bytes when that fits, else (when some buffers' lifetimes
 * are disjoint) packed by lifetime, so a plan that fit before is
 * unchanged. int8 chains too: their i32 scratch takes what the packed
 * buffers leave (int8_scratch). */
static int layout(const BkCtx *c, BkLayer *ly, BkChain *ch)
{
    if (!layout_with(c, ly, ch, 0)) return 0;
    return !c->no_chain_pack && !ch->ost && can_share(ch) ? layout_with(c, ly, ch, 1) : -1;
}

static int layout_with(const BkCtx *c, BkLayer *ly, BkChain *ch, int pack)
{
    ch->nrc = (ch->OH + ch->rows - 1) / ch->rows;
    ch->nwc = (ch->OW + ch->cols - 1) / ch->cols;
    for (int b = 0; b < ch->nb; b++) ch->buf[b].max_rows = ch->buf[b].max_px = 0;
    ChainRows r;
    for (int i = 0; i < ch->nrc * ch->nwc; i++) {
        slice_rows(ch, i / ch->nwc, i % ch->nwc, &r);
        if (!slice_ok(ch, &r) || !cols_ok(ch, &r) || !inplace_ok(ch, &r) || misaligned_read(c, ch, &r) >= 0) return -1;
        for (int b = 0; b < ch->nb; b++) {
            ch->buf[b].max_rows = imax(ch->buf[b].max_rows, r.n[b]);
            ch->buf[b].max_px = imax(ch->buf[b].max_px, r.n[b] * r.cn[b]);
        }
    }
    resident_plan(c, ch);
    stage_plan(c, ch);
    ch->nsteps = 1;
    uint64_t used = 0, scratch = 0, top = ch->resident;
    int es = ch->es, last = ch->m[ch->nm - 1].out;
    for (int b = 0; b < ch->nb; b++) {
        ChainBuf *bf = &ch->buf[b];
        uint64_t bytes = (uint64_t)bf->max_px * bf->C * es;
        if ((uint64_t)bf->max_px > 65535 || bf->C > 65535) return -1;
        bf->off2 = 0;
        if (pack) continue;
        if (ost_slot(ch, b)) bytes = (uint64_t)bf->max_px * ch->ost * es;   /* a chunk of channels, in the slot */
        if (!ch->nstream || ost_slot(ch, b)) { bf->off = bk_slot_alloc(c, &used, bytes); continue; }
        bf->off = bk_slot_alloc(c, &top, bytes);   /* streaming: per core, below the slots */
        /* output-channel steps: a group input is read on a slice's first
         * step only, and the next slice's loads come a tile ahead, during
         * its last step (ns >= 2): one copy */
        if ((bf->dram || b == last) && !ch->ost) bf->off2 = bk_slot_alloc(c, &top, bytes);
    }
    if (pack) {   /* in the slot; streaming: per core, after the resident weights */
        uint64_t end = pack_bufs(c, ch, ch->nstream ? bk_align_up(c, top) : 0);
        if (end == UINT64_MAX) return -1;
        if (ch->nstream) top = end; else used = end;
    }
    if (bk_reserve_resident(c, ly, top)) return -1;
    if (ch->dt == ISA_I8) {
        uint64_t lim = ch->nstream ? used + (ly->slot_size - used) / 2 : ly->slot_size;
        if (int8_scratch(c, ly, ch, used, lim)) return -1;
        if (!ch->nstream) return 0;
        used = ch->used;
        ch->l_q8 = bk_slot_alloc(c, &used, ch->scr0 / 4);
        return plan_steps(c, ly, ch, used);
    }
    int need_res = 0, need_tmp = 0;
    for (int i = 0; i < ch->nm; i++) {
        const BkLow *l = &ch->m[i].ly->lw;
        need_res |= ch->m[i].kind == CM_WINDOW && ch->m[i].res >= 0 && !is_f32(c->dt);
        need_tmp |= !strcmp(l->act, "HardSwish") || !strcmp(l->t_act, "HardSwish") || (ch->vdw && ch->m[i].dwv);
    }
    /* streaming: each f32 scratch region gets at most half the slot over
     * their count; a streaming member's chunk is at most as wide as fits */
    uint64_t half = ly->slot_size / 2 / (uint64_t)(1 + need_res + need_tmp) / c->align * c->align;
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *m = &ch->m[i];
        const ChainBuf *o = &ch->buf[m->out];
        uint64_t row = (uint64_t)o->max_px * 4, u = c->align / (uint64_t)ch->es;
        m->ocmax = 0;
        /* output-channel steps: no scratch for the members computing
         * straight into their f32 rows */
        const BkLow *ml = &m->ly->lw;
        if (ch->ost && is_f32(c->dt) && !m->stream && strcmp(ml->act, "HardSwish") && strcmp(ml->t_act, "HardSwish") &&
            !(ch->vdw && m->dwv))
            continue;
        if (m->stream) {
            uint64_t w = ch->ost ? (uint64_t)ch->ost : half / row;
            w = w < (uint64_t)o->C ? w / u * u : (uint64_t)o->C;
            if (!w) return -1;
            m->ocmax = (int)w;
            row *= w;
            if (ch->ost && is_f32(c->dt) && !need_tmp) row = 0;   /* it computes straight into its slot rows */
        } else row *= (uint64_t)o->C;
        scratch = scratch > row ? scratch : row;
    }
    ch->l_acc = !is_f32(c->dt) || ch->nstream ? bk_slot_alloc(c, &used, scratch) : 0;
    ch->l_resf = need_res ? bk_slot_alloc(c, &used, scratch) : 0;
    ch->l_tmp = need_tmp ? bk_slot_alloc(c, &used, scratch) : 0;
    /* interpolating Resize members: R_h's block for a slice's rows, each
     * its own (loaded with the slice); the rows resized along H, shared */
    uint64_t rt = 0;
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        if (m->kind != CM_LRESIZE) continue;
        uint64_t rows = (uint64_t)ch->buf[m->out].max_rows;
        m->rz = l->kh ? bk_slot_alloc(c, &used, rows * (uint64_t)ch->buf[m->in].max_rows * 4) : 0;
        if (l->kh && l->kw && rows * (uint64_t)l->W * m->C * 4 > rt) rt = rows * (uint64_t)l->W * m->C * 4;
    }
    ch->l_rt = rt ? bk_slot_alloc(c, &used, rt) : 0;
    ch->used = used;
    if (ch->nstream) return plan_steps(c, ly, ch, used);
    return used <= ly->slot_size ? 0 : -1;
}

/* Member tags: the instructions a member computes with (its weight loads,
 * its computes, the loads of the group inputs it is the first to read,
 * and for the last member the store) carry layer = member + 1, which the
 * emitter turns into the layer field's member tag (isa_member_tag), so
 * the simulator reports each member's share of the group. */
_Static_assert(BK_CHAIN_MAX <= ISA_MAX_MEMBERS, "a member tag holds the member's index in 4 bits");
typedef struct ChainMark { int ld, cp, st; } ChainMark;

static ChainMark mark(const BkCode *k)
{
    ChainMark m = {k->nld, k->ncp, k->nst};
    return m;
}

static void tag_since(BkCode *k, ChainMark from, int member)
{
    if (k->oom) return;
    for (int i = from.ld; i < k->nld; i++) k->ld[i].layer = (uint16_t)(member + 1);
    for (int i = from.cp; i < k->ncp; i++) k->cp[i].layer = (uint16_t)(member + 1);
    for (int i = from.st; i < k->nst; i++) k->st[i].layer = (uint16_t)(member + 1);
}

/* The first member reading buffer b (its input or its second input). */
static int first_reader(const BkChain *ch, int b)
{
    for (int i = 0; i < ch->nm; i++) {
        if (ch->m[i].in == b || ch->m[i].res == b) return i;
        for (int x = 0; x < ch->m[i].nx; x++) if (ch->m[i].xin[x] == b) return i;
    }
    return 0;
}

static int chain_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkChain *ch = ly->chain;
    ChainMark at = mark(k);   /* each member's weights get its tag */
    for (int i = 0; i < ch->nm; tag_since(k, at, i), at = mark(k), i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        if (m->kind == CM_LRESIZE && l->kw) bk_resize_member_wmatrix(k, l, m->w);
        if (l->kind != BK_K_CONV) continue;
        uint64_t nw = (uint64_t)l->kh * l->kw * (l->C / l->groups) * l->OC;
        if (m->kind == CM_QCONV) {
            if ((!m->stream && bk_flat_copy(k, ISA_I8, m->w, l->w, nw)) || (m->b && bk_flat_copy(k, ISA_I32, m->b, l->b, (uint64_t)l->OC)) ||
                bk_flat_copy(k, ISA_I32, m->rq, l->q_mults, 2 * (uint64_t)l->OC))
                return -1;
            continue;
        }
        if (!m->stream && bk_flat_copy(k, l->dt, m->w, l->w, nw)) return -1;
        if (m->b && bk_flat_copy(k, ISA_F32, m->b, l->b, (uint64_t)l->OC)) return -1;
    }
    /* ws: then the streamed weights, DRAM -> this cluster's SRAM, step by
     * step (each step's chunk, laid out as in DRAM), each followed by a
     * 64-byte flag multicast into resident LMEM [0, 64) (unused while
     * streaming) whose signal tells the cluster's cores that the chunk
     * (and everything the prologue copied before: the DMA queue runs one
     * transfer at a time) has landed; copied whole, one flag at the end
     * (the emitter sets the signal of the last) */
    int np = bk_chain_stage_pieces(ly);
    for (int s = 0; ch->ws && s < ch->nsteps; s++) {
        const ChainItem *it = &ch->item[ch->step[s].w];
        const ChainMember *m = &ch->m[it->m];
        const BkLow *l = &m->ly->lw;
        int wdt = m->kind == CM_QCONV ? ISA_I8 : l->dt, wes = isa_dtype_size(wdt);
        uint32_t sh[4] = {1, 1, (uint32_t)(m->wbytes / ((uint64_t)l->OC * wes)), (uint32_t)it->ocn};
        int64_t st[4] = {0, 0, l->OC, 1};
        uint64_t off = (uint64_t)it->oc0 * wes;
        AtlInsn in = bk_dma(wdt, ISA_SPACE_SRAM, m->sw + off, ISA_SPACE_DRAM, l->w + off, sh, st, st);
        in.layer = (uint16_t)(it->m + 1);   /* member tag */
        bk_code_st(k, &in);
        if (np > 1 && s < ch->nsteps - 1) {
            uint32_t fs[4] = {1, 1, 1, 64};
            int64_t fst[4];
            bk_compact(fs, fst);
            AtlInsn f = bk_dma(ISA_I8, ISA_SPACE_LMEM, 0, ISA_SPACE_SRAM, m->sw + off, fs, fst, fst);
            f.signal = 1;   /* a piece's flag: the walk (schedule.c) sets the semaphore */
            bk_code_st(k, &f);
        }
    }
    if (ch->ws) {
        uint32_t fs[4] = {1, 1, 1, 64};
        int64_t st[4];
        bk_compact(fs, st);
        AtlInsn f = bk_dma(ISA_I8, ISA_SPACE_LMEM, 0, ISA_SPACE_SRAM, c->sram_stage, fs, st, st);
        bk_code_st(k, &f);
    }
    return k->oom ? -1 : 0;
}

int bk_chain_stage_pieces(const BkLayer *ly)
{
    const BkChain *ch = ly->chain;
    return ch && ch->ws && !ly->gather_whole && ch->nsteps > 1 ? ch->nsteps : 1;
}

int bk_chain_tile_piece(const BkLayer *ly, int t)
{
    const BkChain *ch = ly->chain;
    return ch && ch->nstream ? t % ch->nsteps : 0;
}

/* Where the buffers of one tile lie: at[b] the LMEM of buffer b (in the
 * slot, or resident when streaming), slot the tile's slot. */
typedef struct ChainAt { uint64_t at[CHAIN_MAX_BUFS], slot; } ChainAt;

/* Rows from s0 of buffer b in slice r. */
static uint64_t rows_at(const BkChain *ch, const ChainAt *a, const ChainRows *r, int b, int s0)
{
    return a->at[b] + row_offset(ch, r, b, s0);
}

/* Output rows [s0, s0+sn), channels [oc0, oc0+ocn), of an Int8Conv
 * member (weights at w): the i8 conv into the i32 scratch, bias, the
 * integer requantisation into its output buffer; a chunk of channels
 * requantises into the i8 temp and moves into its channels of the rows. */
static void qconv_rows(const BkChain *ch, const ChainAt *a, const ChainMember *m, const ChainRows *r, int s0, int sn,
                       int oc0, int ocn, uint64_t w, BkCode *k)
{
    const BkLow *l = &m->ly->lw;
    BkSpan ys = member_span(m, 0, s0, sn);
    uint64_t acc = a->slot + ch->l_scr[0], out = rows_at(ch, a, r, m->out, s0);
    AtlInsn op = bk_window_insn(l, ISA_OP_CONV, ISA_I8, rows_at(ch, a, r, m->in, ys.a), l->C, ys,
                                slice_width(ch, m, r));
    op.dst = acc;
    op.src2 = w;
    op.cout = (uint32_t)ocn;
    op.groups = (uint16_t)l->groups;
    op.ival = l->q_xz;
    bk_code_cp(k, &op);
    int ow = r->cn[m->out];
    uint32_t osh[4] = {1, (uint32_t)sn, (uint32_t)ow, (uint32_t)ocn};
    int64_t oc[4], bs[4] = {0, 0, 0, 1}, ds[4] = {0, (int64_t)ow * l->OC, l->OC, 1};
    bk_compact(osh, oc);
    if (m->b) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_I32, acc, acc, m->b + (uint64_t)oc0 * 4, osh, oc, oc, bs);
        bk_code_cp(k, &add);
    }
    if (ocn == l->OC) {
        bk_q_requant_int(k, l, acc, m->rq, out, osh, 0);
        return;
    }
    bk_q_requant_int(k, l, acc, m->rq + (uint64_t)oc0 * 8, a->slot + ch->l_q8, osh, 0);
    AtlInsn mv = bk_vun(ISA_OP_V_MOV, ISA_I8, out + (uint64_t)oc0, a->slot + ch->l_q8, osh, ds, oc, 0, 0);
    bk_code_cp(k, &mv);
}

/* The member's program over the block sh at the registers' addresses. */
static void elem_steps(const BkLow *l, const uint64_t *reg, const uint32_t sh[4], const int64_t cs[4], BkCode *k)
{
    for (int s = 0; s < l->nsteps; s++) {
        const BkStep *st = &l->steps[s];
        int dt = l->reg_dt[st->a];
        AtlInsn in = st->b >= 0 ? bk_vbin(st->op, dt, reg[st->dst], reg[st->a], reg[st->b], sh, cs, cs, cs)
                                : bk_vun(st->op, dt, reg[st->dst], reg[st->a], sh, cs, cs, st->alpha, st->beta);
        if (st->op == ISA_OP_V_CAST) in.otype = (uint8_t)l->reg_dt[st->dst];
        bk_code_cp(k, &in);
    }
}

/* Output rows [o0, o0+on) of an elementwise member: its own register
 * program (lower/vec.c's steps) over chunks of the rows' elements, the
 * inputs and the output in their row buffers (the same [rows][W][C]
 * layout, so one offset in elements), the other registers in the scratch
 * regions. */
static void elem_rows(const BkCtx *c, const BkChain *ch, const ChainAt *a, const ChainMember *m, const ChainRows *r,
                      int o0, int on, BkCode *k)
{
    const BkLow *l = &m->ly->lw;
    uint64_t g = c->align, most = elem_chunk(c, ch), n = (uint64_t)on * r->cn[m->out] * m->C;
    const int ins[2] = {m->in, m->res};
    for (uint64_t at = 0; at < n; at += most) {
        uint64_t cnt = n - at < most ? n - at : most, reg[BK_MAXIN + BK_MAXSTEP];
        for (int i = 0, j = 0; i < l->nregs; i++)
            reg[i] = i < l->nin ? rows_at(ch, a, r, ins[i], o0) + at
                   : i == l->out_reg ? rows_at(ch, a, r, m->out, o0) + at : a->slot + ch->l_scr[j++];
        uint32_t sh[4] = {1, 1, (uint32_t)(cnt / g), (uint32_t)g};
        int64_t cs[4];
        bk_compact(sh, cs);
        elem_steps(l, reg, sh, cs, k);
    }
}

/* Output rows [o0, o0+on) of a float elementwise member (bk_member_op):
 * its own program, one instruction per step over all the rows (inputs
 * and output hold the same rows and columns, [rows][columns][C]), then
 * its fused activation, as its own lowering (lower/vec.c) runs them. */
static int float_elem_rows(const BkChain *ch, const ChainAt *a, const ChainMember *m, const ChainRows *r, int o0, int on,
                           BkCode *k)
{
    const BkLow *l = &m->ly->lw;
    uint64_t reg[BK_MAXIN + BK_MAXSTEP];
    const int ins[2] = {m->in, m->res};
    for (int i = 0; i < l->nregs; i++) reg[i] = rows_at(ch, a, r, i < l->nin ? ins[i] : m->out, m->pc && i == 1 ? 0 : o0);
    uint32_t sh[4] = {1, (uint32_t)on, (uint32_t)r->cn[m->out], (uint32_t)m->C};
    int64_t cs[4], ps[4] = {0, 0, 0, 1};
    bk_compact(sh, cs);
    if (!m->pc) elem_steps(l, reg, sh, cs, k);
    for (int s = 0; m->pc && s < l->nsteps; s++) {   /* register 1: its channels, stride 0 over the pixels */
        const BkStep *st = &l->steps[s];
        AtlInsn in = st->b >= 0 ? bk_vbin(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], reg[st->b], sh, cs,
                                          st->a == 1 ? ps : cs, st->b == 1 ? ps : cs)
                                : bk_vun(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], sh, cs, st->a == 1 ? ps : cs,
                                         st->alpha, st->beta);
        if (st->op == ISA_OP_V_CAST) in.otype = (uint8_t)l->reg_dt[st->dst];
        bk_code_cp(k, &in);
    }
    uint32_t n = sh[1] * sh[2] * sh[3];
    return l->act[0] ? bk_act_code(k, l->act, l->act_alpha, l->act_beta, l->dt, reg[l->out_reg], a->slot + ch->l_tmp, n, 0) : 0;
}

/* Output rows [o0, o0+on) of a Concat member: each input's rows into its
 * channels of the output rows (lower/chain_ops.c). */
static void concat_rows(const BkChain *ch, const ChainAt *a, const ChainMember *m, const ChainRows *r, int o0, int on,
                        BkCode *k)
{
    int b[2 + BK_MOP_MAXIN], nb = 0, c0 = 0;
    b[nb++] = m->in;
    b[nb++] = m->res;
    for (int x = 0; x < m->nx; x++) b[nb++] = m->xin[x];
    uint32_t px = (uint32_t)on * (uint32_t)r->cn[m->out];
    for (int j = 0; j < nb; j++) {
        bk_member_concat_code(k, ch->dt, rows_at(ch, a, r, m->out, o0), m->C, c0, rows_at(ch, a, r, b[j], o0),
                              ch->buf[b[j]].C, px);
        c0 += ch->buf[b[j]].C;
    }
}

/* Output channels [oc0, oc0+ocn) of a float conv member whose weights
 * stream (chunk at w): the conv into the f32 accumulator, then the
 * member's own epilogue in its order (bias, activation, residual, the
 * Add's activation), then a cast (or, in f32, a move) into the chunk's
 * channels of its output rows. */
static int conv_chunk(const BkCtx *c, const BkChain *ch, const ChainAt *a, const ChainMember *m, const ChainRows *r,
                      int oc0, int ocn, uint64_t w, BkCode *k)
{
    (void)c;
    const BkLow *l = &m->ly->lw;
    int dt = ch->dt, es = ch->es, o0 = r->lo[m->out], on = r->n[m->out];
    BkSpan ys = member_span(m, 0, o0, on);
    int direct = ost_slot(ch, m->out) && is_f32(dt);   /* [on][ow][ocn]: the accumulator's layout */
    uint64_t acc = direct ? rows_at(ch, a, r, m->out, o0) : a->slot + ch->l_acc, tmp = a->slot + ch->l_tmp;
    AtlInsn op = bk_window_insn(l, ISA_OP_CONV, dt, rows_at(ch, a, r, m->in, ys.a), l->C, ys, slice_width(ch, m, r));
    op.dst = acc;
    op.src2 = w;
    op.cout = (uint32_t)ocn;
    op.groups = (uint16_t)l->groups;
    bk_code_cp(k, &op);
    int ow = r->cn[m->out], pc = ost_slot(ch, m->out) ? ocn : l->OC;   /* a pixel's channels in its output rows */
    uint64_t at0 = ost_slot(ch, m->out) ? 0 : (uint64_t)oc0 * es;          /* the chunk's first channel there */
    uint32_t osh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)ocn}, n = (uint32_t)on * ow * ocn;
    int64_t oc[4], bs[4] = {0, 0, 0, 1}, rs[4] = {0, (int64_t)ow * pc, pc, 1};
    bk_compact(osh, oc);
    if (m->b) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, m->b + (uint64_t)oc0 * 4, osh, oc, oc, bs);
        bk_code_cp(k, &add);
    }
    if (l->act[0] && bk_act_code(k, l->act, l->act_alpha, l->act_beta, ISA_F32, acc, tmp, n, 0)) return -1;
    if (m->res >= 0) {
        uint64_t resid = rows_at(ch, a, r, m->res, o0) + at0;
        const int64_t *rst = rs;
        if (!is_f32(dt)) {
            AtlInsn cv = bk_vun(ISA_OP_V_CAST, dt, a->slot + ch->l_resf, resid, osh, oc, rs, 0, 0);
            cv.otype = ISA_F32;
            bk_code_cp(k, &cv);
            resid = a->slot + ch->l_resf;
            rst = oc;
        }
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, resid, osh, oc, oc, rst);
        bk_code_cp(k, &add);
        if (l->t_act[0] && bk_act_code(k, l->t_act, l->t_alpha, l->t_beta, ISA_F32, acc, tmp, n, 0)) return -1;
    }
    uint64_t out = rows_at(ch, a, r, m->out, o0) + at0;
    if (direct) return 0;
    AtlInsn wr = bk_vun(is_f32(dt) ? ISA_OP_V_MOV : ISA_OP_V_CAST, ISA_F32, out, acc, osh, rs, oc, 0, 0);
    if (!is_f32(dt)) wr.otype = (uint8_t)dt;
    bk_code_cp(k, &wr);
    return 0;
}

/* Output channels [oc0, oc0+ocn) of member i's rows of the slice (all of
 * them unless its weights stream), its weights at w. */
static int member_rows(BkCtx *c, const BkChain *ch, const ChainAt *a, int i, const ChainRows *r, int oc0, int ocn,
                       uint64_t w, BkCode *k, AtlErr *e)
{
    const ChainMember *m = &ch->m[i];
    const BkLow *l = &m->ly->lw;
    int dt = ch->dt, o0 = r->lo[m->out], on = r->n[m->out];
    if (on <= 0) return 0;
    BkSpan ys = member_span(m, 0, o0, on);
    if (ys.n <= 0 || ys.pa > 63 || ys.pb > 63)
        return bk_fail(c, m->ly->node, e, "output rows %d..%d read no input (padding too large)", o0, o0 + on - 1);
    if (m->kind == CM_ELEM && ch->dt != ISA_I8) {
        if (float_elem_rows(ch, a, m, r, o0, on, k))
            return bk_fail(c, m->ly->node, e, "activation %s cannot be fused", l->act);
        return 0;
    }
    if (m->kind == CM_ELEM) {
        elem_rows(c, ch, a, m, r, o0, on, k);
        return 0;
    }
    if (m->kind == CM_CONCAT) {
        concat_rows(ch, a, m, r, o0, on, k);
        return 0;
    }
    if (m->kind == CM_LRESIZE) {
        bk_resize_member_code(k, l, m->C, rows_at(ch, a, r, m->out, o0), o0, on, rows_at(ch, a, r, m->in, r->lo[m->in]),
                              r->lo[m->in], m->w, a->slot + m->rz, a->slot + ch->l_rt);
        return 0;
    }
    if (m->kind == CM_RESIZE) {
        bk_member_resize_code(k, dt, rows_at(ch, a, r, m->out, o0), o0, on, rows_at(ch, a, r, m->in, ys.a), ys.a, m->fh,
                              m->fw, ch->buf[m->in].W, m->C);
        return 0;
    }
    if (m->kind == CM_QCONV) {   /* as many rows per conv as the accumulator holds */
        int sub = (int)(ch->scr0 / ((uint64_t)r->cn[m->out] * ocn * 4));
        for (int s0 = o0; s0 < o0 + on; s0 += sub) qconv_rows(ch, a, m, r, s0, imin(sub, o0 + on - s0), oc0, ocn, w, k);
        return 0;
    }
    if (m->stream) {
        if (conv_chunk(c, ch, a, m, r, oc0, ocn, w, k))
            return bk_fail(c, m->ly->node, e, "activation %s cannot be fused", l->act[0] ? l->act : l->t_act);
        return 0;
    }
    BkSpan xs = slice_width(ch, m, r);   /* the buffer holds the columns it reads: its pitch */
    uint64_t src = rows_at(ch, a, r, m->in, ys.a), out = a->at[m->out];
    if (l->kind == BK_K_POOL) {
        AtlInsn op = bk_window_insn(l, l->pool_op, dt, src, l->C, ys, xs);
        op.dst = out;
        bk_code_cp(k, &op);
        return 0;
    }
    uint64_t acc = is_f32(dt) ? out : a->slot + ch->l_acc;
    AtlInsn op = bk_window_insn(l, ISA_OP_CONV, dt, src, l->C, ys, xs);
    op.dst = acc;
    op.src2 = w;
    op.cout = (uint32_t)l->OC;
    op.groups = (uint16_t)l->groups;
    if (ch->vdw && m->dwv) {   /* a depthwise conv on the vector unit (lower/dwvec.c) */
        if (bk_dw_chain_taps(l, k, src, ys, xs, w, acc, a->slot + ch->l_tmp, on, r->cn[m->out]))
            return bk_fail(c, m->ly->node, e, "layer group: the depthwise centre tap misses outputs");
    } else bk_code_cp(k, &op);
    uint32_t osh[4] = {1, (uint32_t)on, (uint32_t)r->cn[m->out], (uint32_t)l->OC};
    int64_t oc[4], bs[4] = {0, 0, 0, 1};
    bk_compact(osh, oc);
    if (m->b) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, m->b, osh, oc, oc, bs);
        bk_code_cp(k, &add);
    }
    uint64_t resid = 0;
    if (m->res >= 0) {
        resid = rows_at(ch, a, r, m->res, o0);
        if (!is_f32(dt)) {
            AtlInsn cv = bk_vun(ISA_OP_V_CAST, dt, a->slot + ch->l_resf, resid, osh, oc, oc, 0, 0);
            cv.otype = ISA_F32;
            bk_code_cp(k, &cv);
            resid = a->slot + ch->l_resf;
        }
    }
    uint64_t res;
    if (bk_matrix_epilogue(k, l, dt, acc, a->slot + ch->l_tmp, out, resid, osh, oc, &res))
        return bk_fail(c, m->ly->node, e, "activation %s cannot be fused", l->act[0] ? l->act : l->t_act);
    return 0;
}

/* A vector nop in a tile's compute list: a streaming step begins and ends
 * on the vector engine, so the next step (whose first instruction follows
 * this one in the vector stream, the emitter's hand-overs ordering the
 * rest) starts once every instruction of this step has completed. */
static void vec_nop(BkCode *k)
{
    AtlInsn n;
    memset(&n, 0, sizeof n);
    n.op = ISA_OP_NOP;
    bk_code_cp(k, &n);
}

/* Output-channel steps: the load (load 1) of the residual rows or the
 * store (0) of the output rows of item it's channels (the last member's
 * chunk) of slice r, image img, through the slot buffer at a. */
static void ost_chunk_io(const BkChain *ch, const ChainRows *r, int img, const ChainItem *it, const ChainAt *a, int load,
                         BkCode *k)
{
    const ChainMember *m = &ch->m[ch->nm - 1];
    int b = load ? m->res : m->out;
    const ChainBuf *bf = &ch->buf[b];
    if (it->m != ch->nm - 1 || b < 0 || r->n[b] <= 0) return;
    AtlInsn x = bk_nchw_box(ch->dt, load, load ? bf->dram : ch->y, bf->C, bf->H, bf->W, img, it->oc0, it->ocn, r->lo[b], r->n[b],
                            r->clo[b], r->cn[b], a->at[b]);
    x.layer = (uint16_t)ch->nm;   /* member tag: the last member's */
    if (load) bk_code_ld(k, &x, 0);
    else bk_code_st(k, &x);
}

/* Tile t: slice t (or, streaming, step t % nsteps of slice t / nsteps):
 * its loads (the group inputs' rows on a slice's first step; a streaming
 * step's weight chunk), its members' computes, the last member's rows
 * stored (on a slice's last step). */
static int chain_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    int ns = ch->nstream ? ch->nsteps : 1, sl = t / ns, step = t % ns;
    int img, rci, wci, dt = ch->dt;
    ChainRows r;
    ChainAt a;
    slice_of(ch, sl, &img, &rci, &wci);
    slice_rows(ch, rci, wci, &r);
    a.slot = slot;
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *bf = &ch->buf[b];
        a.at[b] = !ch->nstream || ost_slot(ch, b) ? slot + bf->off : bf->off2 && (sl & 1) ? bf->off2 : bf->off;
    }
    for (int b = 0; b < ch->nb && step == 0; b++) {
        const ChainBuf *bf = &ch->buf[b];
        if (!bf->dram || r.n[b] <= 0 || ost_slot(ch, b)) continue;
        AtlInsn in = bk_nchw_box(dt, 1, bf->dram, bf->C, bf->H, bf->W, img, 0, bf->C, r.lo[b], r.n[b], r.clo[b], r.cn[b], a.at[b]);
        in.layer = (uint16_t)(first_reader(ch, b) + 1);   /* member tag */
        bk_code_ld(k, &in, 0);
    }
    if (!ch->nstream) {
        for (int i = 0; i < ch->nm; i++) {
            int OC, OH, OW;
            member_out(&ch->m[i], &OC, &OH, &OW);
            ChainMark at = mark(k);   /* the member's computes get its tag */
            if (member_rows(c, ch, &a, i, &r, 0, OC, ch->m[i].w, k, e)) return -1;
            tag_since(k, at, i);
        }
    } else {
        const ChainStep *sp = &ch->step[step];
        if (sp->w >= 0) {   /* the step's weight chunk: [kh][kw][cpg][OC] -> [kh][kw][cpg][ocn] */
            const ChainItem *it = &ch->item[sp->w];
            const BkLow *l = &ch->m[it->m].ly->lw;
            int wdt = ch->m[it->m].kind == CM_QCONV ? ISA_I8 : l->dt, wes = isa_dtype_size(wdt);
            uint32_t sh[4] = {1, 1, (uint32_t)(ch->m[it->m].wbytes / ((uint64_t)l->OC * wes)), (uint32_t)it->ocn};
            int64_t ds[4], ss[4] = {0, 0, l->OC, 1};
            bk_compact(sh, ds);
            int ws = ch->ws;   /* from the cluster's SRAM, staged by the prologue */
            AtlInsn in = bk_dma(wdt, ISA_SPACE_LMEM, slot + ch->l_wc, ws ? ISA_SPACE_SRAM : ISA_SPACE_DRAM,
                                (ws ? ch->m[it->m].sw : l->w) + (uint64_t)it->oc0 * wes, sh, ds, ss);
            in.layer = (uint16_t)(it->m + 1);   /* member tag */
            bk_code_ld(k, &in, 1);
            if (ch->ost) ost_chunk_io(ch, &r, img, it, &a, 1, k);   /* the chunk's residual rows */
        }
        vec_nop(k);
        for (int j = sp->lo; j < sp->hi; j++) {
            const ChainItem *it = &ch->item[j];
            uint64_t w = it->streamed ? slot + ch->l_wc : ch->m[it->m].w;
            ChainMark at = mark(k);
            if (member_rows(c, ch, &a, it->m, &r, it->oc0, it->ocn, w, k, e)) return -1;
            tag_since(k, at, it->m);
        }
        if (isa_ops[k->cp[k->ncp - 1].op].engine == ISA_ENGINE_MAT) vec_nop(k);
        if (ch->ost && sp->w >= 0) ost_chunk_io(ch, &r, img, &ch->item[sp->w], &a, 0, k);   /* the chunk's output rows */
    }
    if (step == ns - 1 && !ch->ost) {
        const ChainMember *last = &ch->m[ch->nm - 1];
        int OC, OH, OW;
        member_out(last, &OC, &OH, &OW);
        AtlInsn st = bk_nchw_box(dt, 0, ch->y, OC, OH, OW, img, 0, OC, r.lo[last->out], r.n[last->out], r.clo[last->out], r.cn[last->out],
                                 a.at[last->out]);
        st.layer = (uint16_t)ch->nm;   /* member tag: the last member's */
        bk_code_st(k, &st);
    }
    return k->oom ? atl_fail(e, "out of memory generating code") : 0;
}

/* The buffer of root tensor t, added as a group input when new. */
static int buf_of(BkCtx *c, BkChain *ch, int t, int C, int H, int W, AtlErr *e)
{
    for (int b = 0; b < ch->nb; b++) if (ch->buf[b].t == t) return b;
    if (ch->nb == CHAIN_MAX_BUFS) return -1;
    ChainBuf *bf = &ch->buf[ch->nb];
    memset(bf, 0, sizeof *bf);
    bf->t = t;
    bf->C = C; bf->H = H; bf->W = W;
    if (bk_tensor_in_dram(c, t, &bf->dram, e)) return -2;
    return ch->nb++;
}

/* The tensor an absorbed residual Add of node `node` reads beside the
 * member's own output, -1 none. */
static int residual_of(const BkCtx *c, int node)
{
    int tn = c->tail[node];
    if (tn < 0) return -1;
    const IrNode *a = &c->g->nodes[tn], *n = &c->g->nodes[node];
    return a->in[0] == n->out[0] ? a->in[1] : a->in[0];
}

/* 1 when some layer outside the members, or the graph's outputs, reads root r. */
static int read_outside(const BkCtx *c, int r, const BkLayer *const *members, int nm)
{
    const IrGraph *g = c->g;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].is_output && bk_tensor_root(c, t) == r) return 1;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        int owner = i;
        if (c->skip[i]) {
            owner = -1;   /* a fused activation belongs to its producer; a tail to its conv */
            for (int k = 0; k < g->nn && owner < 0; k++) if (c->tail[k] == i) owner = k;
            if (owner < 0) continue;
        }
        int inside = 0;
        for (int m = 0; m < nm; m++) if (members[m]->node == owner) inside = 1;
        if (inside) continue;
        if (c->gelu_src[i] >= 0 && bk_tensor_root(c, c->gelu_src[i]) == r) return 1;   /* a Gelu reads its x */
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0 && !g->t[n->in[k]].data && bk_tensor_root(c, n->in[k]) == r) return 1;
    }
    return 0;
}

/* MACs the slices execute: every conv member's rows of every slice. */
static uint64_t run_macs_of(const BkChain *ch, int vec);

static uint64_t run_macs(const BkChain *ch) { return run_macs_of(ch, 0); }

uint64_t bk_chain_vec_macs(const BkLayer *ly) { return ly->chain ? run_macs_of(ly->chain, 1) : 0; }

/* The MACs the slices execute, halos included: of every conv member
 * (vec 0), or of the depthwise members on the vector unit only (vec 1). */
static uint64_t run_macs_of(const BkChain *ch, int vec)
{
    uint64_t n = 0;
    ChainRows r;
    for (int i = 0; i < ch->nrc * ch->nwc; i++) {
        slice_rows(ch, i / ch->nwc, i % ch->nwc, &r);
        for (int k = 0; k < ch->nm; k++) {
            const BkLayer *m = ch->m[k].ly;
            int o = ch->m[k].out;
            if (m->lw.kind == BK_K_CONV && m->lw.OH && m->lw.OW && (!vec || (ch->vdw && ch->m[k].dwv)))
                n += m->macs / (uint64_t)m->lw.OH / (uint64_t)m->lw.OW * (uint64_t)r.n[o] * (uint64_t)r.cn[o];
        }
    }
    return n;
}

/* The checker (bk_chain_check): one LMEM region of the plan, [lo, hi),
 * named by fmt with name for its %s, holding data from step first to
 * last of a slice (buf_life; INT_MIN..INT_MAX: always). */
typedef struct ChainRegion { char what[96]; uint64_t lo, hi; int first, last; } ChainRegion;

static void region(ChainRegion *r, int *n, uint64_t lo, uint64_t bytes, const char *fmt, const char *name)
{
    if (!bytes) return;
    snprintf(r[*n].what, sizeof r[*n].what, fmt, name);
    r[*n].lo = lo;
    r[*n].hi = lo + bytes;
    r[*n].first = INT_MIN;
    r[*n].last = INT_MAX;
    (*n)++;
}

/* A row buffer's region, live during its buffer's steps (buf_life). */
static void buf_region(const BkChain *ch, int b, ChainRegion *r, int *n, uint64_t lo, uint64_t bytes, const char *fmt,
                       const char *name)
{
    int n0 = *n;
    region(r, n, lo, bytes, fmt, name);
    if (*n > n0) buf_life(ch, b, &r[n0].first, &r[n0].last);
}

/* 0 when every region is aligned, ends by `limit` and overlaps no other
 * that holds data at the same step (row buffers of disjoint lifetimes
 * may share bytes: every step of a slice finishes before the next
 * starts, and the slice two later in the same slot starts after the
 * store, docs/backend.md "Lifetimes in a slot"). */
static int regions_sound(const BkCtx *c, int node, const ChainRegion *r, int n, uint64_t limit, const char *where,
                         AtlErr *e)
{
    for (int i = 0; i < n; i++) {
        if (r[i].lo % c->align)
            return bk_fail(c, node, e, "layer group: %s at LMEM %llu is not aligned to %llu bytes", r[i].what,
                           (unsigned long long)r[i].lo, (unsigned long long)c->align);
        if (r[i].hi > limit)
            return bk_fail(c, node, e, "layer group: %s [%llu, %llu) ends beyond the %s (%llu bytes)", r[i].what,
                           (unsigned long long)r[i].lo, (unsigned long long)r[i].hi, where, (unsigned long long)limit);
        for (int j = 0; j < i; j++)
            if (r[i].lo < r[j].hi && r[j].lo < r[i].hi && r[i].first <= r[j].last && r[j].first <= r[i].last)
                return bk_fail(c, node, e, "layer group: %s [%llu, %llu) overlaps %s [%llu, %llu) in the %s, both live at step %d",
                               r[j].what, (unsigned long long)r[j].lo, (unsigned long long)r[j].hi, r[i].what,
                               (unsigned long long)r[i].lo, (unsigned long long)r[i].hi, where,
                               imax(r[i].first, r[j].first));
    }
    return 0;
}

/* 1 when rows [lo, lo+n) lie in the rows buffer b holds in slice r. */
static int rows_inside(const ChainRows *r, int b, int lo, int n)
{
    return n <= 0 || (lo >= r->lo[b] && lo + n <= r->lo[b] + r->n[b]);
}

/* A streaming chain's steps: at least 2, in member order; every
 * streaming member's channels covered once by chunks whose channels start
 * aligned and whose weights fit the chunk buffer, each its step's load;
 * every other member computed whole once. */
static int check_steps(const BkCtx *c, const BkLayer *ly, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    int node = ch->m[0].ly->node, at = 0, next = 0, prev = -1, prev_oc = 0;
    if (ch->nsteps < 2 || ch->nsteps > CHAIN_MAX_STEPS)
        return bk_fail(c, node, e, "layer group: %d streaming steps per slice (2 to %d)", ch->nsteps, CHAIN_MAX_STEPS);
    for (int s = 0; s < ch->nsteps; s++) {
        const ChainStep *sp = &ch->step[s];
        if (sp->lo != at || sp->hi < sp->lo || sp->hi > ch->nitems)
            return bk_fail(c, node, e, "layer group: step %d computes items [%d, %d), not from %d", s, sp->lo, sp->hi, at);
        for (int j = sp->lo; j < sp->hi; j++) {
            const ChainItem *it = &ch->item[j];
            const ChainMember *m = &ch->m[it->m];
            int OC, OH, OW;
            member_out(m, &OC, &OH, &OW);
            if (it->m != prev && (it->m != prev + 1 || next != prev_oc))
                return bk_fail(c, m->ly->node, e, "layer group: step %d starts a member before the previous one is whole", s);
            if (it->streamed != m->stream || (it->streamed ? j != sp->w : sp->w == j))
                return bk_fail(c, m->ly->node, e, "layer group: step %d loads weights its items do not use", s);
            if (it->m != prev) next = 0;
            prev = it->m;
            prev_oc = OC;
            if (it->oc0 != next || it->ocn < 1 || it->oc0 + it->ocn > OC || (!m->stream && it->ocn != OC))
                return bk_fail(c, m->ly->node, e, "layer group: step %d computes channels %d..%d, not from %d of %d", s,
                               it->oc0, it->oc0 + it->ocn - 1, next, OC);
            next = it->oc0 + it->ocn;
            if (!m->stream) continue;
            if ((uint64_t)it->oc0 * ch->es % c->align || m->wbytes / OC * it->ocn > ch->wchunk)
                return bk_fail(c, m->ly->node, e, "layer group: the weight chunk of channels %d..%d is unaligned or exceeds %llu bytes",
                               it->oc0, it->oc0 + it->ocn - 1, (unsigned long long)ch->wchunk);
        }
        at = sp->hi;
    }
    if (prev != ch->nm - 1 || next != prev_oc) return bk_fail(c, node, e, "layer group: the steps leave members uncomputed");
    if (at != ch->nitems) return bk_fail(c, node, e, "layer group: the steps leave items from %d uncomputed", at);
    return 0;
}

/* ---- C slices of an inverted residual block ----------------------------
 * A float chain expand (1x1 conv) -> depthwise -> project (1x1 conv, its
 * residual tail) may run its hidden (expanded) channels in csl slices of
 * hn channels: for hidden slice j the expand computes channels j (its
 * weights pre-chunked [j][C][hn] in the resident region by the
 * prologue), the depthwise those channels only (channel-local: only its
 * spatial halo; on the vector unit in f32 when it may, else a grouped
 * conv on the matrix unit with its weights pre-chunked [j][kh kw][hn]),
 * and the project accumulates the partial sums of K slice j (conv acc)
 * into its f32 output rows; after the last slice its bias, residual and
 * activation. The hidden tensors exist one slice at a time: their row
 * buffers hold hn channels, so taller row slices fit. All in one tile
 * per row slice, like any resident chain (docs/backend.md, "C slices of
 * an inverted residual block"). */

/* 1 when buffer b is one of a C-sliced chain's hidden tensors. */
static int cs_hidden(const BkChain *ch, int b)
{
    return ch->csl && (b == ch->m[0].out || b == ch->m[1].out);
}

/* 1 when l is a 1x1 conv of one group, stride 1, no padding. */
static int pointwise(const BkLow *l)
{
    return l->kind == BK_K_CONV && l->groups == 1 && l->kh == 1 && l->kw == 1 && l->sh == 1 && l->sw == 1 && !l->pt &&
           !l->pb && !l->pl && !l->pr && !l->w_oihw;
}

static int cs_act_ok(const BkLow *l)
{
    return strcmp(l->act, "HardSwish") && strcmp(l->t_act, "HardSwish");   /* no activation temp */
}

/* The members are expand -> depthwise -> project in a float dtype. */
static int cs_eligible(const BkChain *ch)
{
    if (ch->nm != 3 || ch->dt == ISA_I8) return 0;
    const ChainMember *e = &ch->m[0], *d = &ch->m[1], *p = &ch->m[2];
    const BkLow *le = &e->ly->lw, *ld = &d->ly->lw, *lp = &p->ly->lw;
    int hd = le->OC;
    return e->kind == CM_WINDOW && d->kind == CM_WINDOW && p->kind == CM_WINDOW && pointwise(le) && pointwise(lp) &&
           ld->kind == BK_K_CONV && ld->groups == hd && ld->C == hd && ld->OC == hd && !ld->w_oihw && e->res < 0 &&
           d->res < 0 && d->in == e->out && p->in == d->out && lp->C == hd && cs_act_ok(le) && cs_act_ok(ld) &&
           cs_act_ok(lp);
}

/* The f32 scratch of a C-sliced plan: the depthwise product temp (vector
 * depthwise), and unless f32 the hidden accumulator (expand and
 * depthwise), the project's accumulator and its residual in f32; in f32
 * the convolutions write their buffers. */
static void cs_scratch(const BkChain *ch, const int *most, uint64_t *tmp, uint64_t *acc, uint64_t *cp, uint64_t *resf)
{
    const ChainMember *mp = &ch->m[2];
    uint64_t hid = (uint64_t)imax(most[ch->m[0].out], most[ch->m[1].out]) * (uint64_t)ch->hn * 4;
    uint64_t out = (uint64_t)most[mp->out] * (uint64_t)mp->ly->lw.OC * 4;
    int f32 = is_f32(ch->dt);
    *tmp = ch->vdw ? hid : 0;
    *acc = f32 ? 0 : hid;
    *cp = f32 ? 0 : out;
    *resf = !f32 && mp->res >= 0 ? out : 0;
}

/* Slot layout of csl hidden slices for ch->rows: every buffer in the
 * slot, the hidden ones hn channels wide, the f32 scratch; the resident
 * region every member's weights (the expand's and a matrix depthwise's
 * pre-chunked) and bias. 0 if it fits. */
static int cs_layout(const BkCtx *c, BkLayer *ly, BkChain *ch)
{
    int hd = ch->m[0].ly->lw.OC, unit = (int)(c->align / (uint64_t)ch->es), es = ch->es;
    int hn = (hd + ch->csl - 1) / ch->csl;
    hn = (hn + unit - 1) / unit * unit;
    if (ch->vdw) hn = (hn + (int)c->align / 4 - 1) / ((int)c->align / 4) * ((int)c->align / 4);   /* f32 taps */
    if (hn < 1 || hn >= hd || (hd + hn - 1) / hn != ch->csl) return -1;   /* csl slices exactly */
    ch->hn = hn;
    ch->nrc = (ch->OH + ch->rows - 1) / ch->rows;
    ch->nwc = 1;
    int most[CHAIN_MAX_BUFS] = {0};
    for (int b = 0; b < ch->nb; b++) ch->buf[b].max_rows = ch->buf[b].max_px = 0;
    ChainRows r;
    for (int i = 0; i < ch->nrc; i++) {
        slice_rows(ch, i, 0, &r);
        if (!slice_ok(ch, &r) || !inplace_ok(ch, &r)) return -1;
        for (int b = 0; b < ch->nb; b++) {
            ch->buf[b].max_rows = imax(ch->buf[b].max_rows, r.n[b]);
            ch->buf[b].max_px = most[b] = imax(ch->buf[b].max_px, r.n[b] * r.cn[b]);
        }
        /* the expand's input and the residual rows start aligned (1x1: the output's rows) */
        for (int k = 0; k < ch->nm; k += 2) {
            const ChainMember *m = &ch->m[k];
            if (row_offset(ch, &r, m->in, r.lo[m->out]) % c->align) return -1;
            if (m->res >= 0 && row_offset(ch, &r, m->res, r.lo[m->out]) % c->align) return -1;
        }
    }
    uint64_t at = 0, used = 0, tmp, acc, cp, resf;
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        m->stream = 0;
        m->ocmax = 0;
        m->rq = 0;
        m->w = bk_align_up(c, at);
        at = m->w + bk_align_up(c, m->wbytes);
        m->b = 0;
        if (l->b) {
            m->b = bk_align_up(c, at);
            at = m->b + bk_align_up(c, (uint64_t)l->OC * 4);
        }
    }
    ch->resident = at;
    if (bk_reserve_resident(c, ly, at)) return -1;
    for (int b = 0; b < ch->nb; b++) {
        ChainBuf *bf = &ch->buf[b];
        int C = cs_hidden(ch, b) ? hn : bf->C;
        if ((uint64_t)bf->max_px > 65535) return -1;
        bf->off2 = 0;
        bf->off = bk_slot_alloc(c, &used, (uint64_t)bf->max_px * C * es);
    }
    cs_scratch(ch, most, &tmp, &acc, &cp, &resf);
    ch->l_tmp = tmp ? bk_slot_alloc(c, &used, tmp) : 0;
    ch->l_acc = acc ? bk_slot_alloc(c, &used, acc) : 0;
    ch->l_cp = cp ? bk_slot_alloc(c, &used, cp) : 0;
    ch->l_resf = resf ? bk_slot_alloc(c, &used, resf) : 0;
    ch->nsteps = 1;
    ch->used = used;
    return used <= ly->slot_size ? 0 : -1;
}

/* The prologue's image of a member's weights in slices of hn output
 * channels: slice [h0, h0+n) as [taps][n] at w + h0 taps (taps = kh kw
 * cpg, the elements before the channel in the [.][OC] image). */
static int cs_chunk_weights(const BkChain *ch, const ChainMember *m, BkCode *k)
{
    const BkLow *l = &m->ly->lw;
    int oc = l->OC, hn = ch->hn, es = isa_dtype_size(l->dt);
    uint64_t taps = (uint64_t)l->kh * l->kw * (l->C / l->groups);
    for (int h0 = 0; h0 < oc; h0 += hn) {
        uint32_t sh[4] = {1, 1, (uint32_t)taps, (uint32_t)imin(hn, oc - h0)};
        int64_t ds[4], ss[4] = {0, 0, oc, 1};
        bk_compact(sh, ds);
        AtlInsn in = bk_dma(l->dt, ISA_SPACE_LMEM, m->w + (uint64_t)h0 * taps * es, ISA_SPACE_DRAM,
                            l->w + (uint64_t)h0 * es, sh, ds, ss);
        if (bk_code_st(k, &in)) return -1;
    }
    return 0;
}

static int cs_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkChain *ch = ly->chain;
    ChainMark at = mark(k);
    for (int i = 0; i < ch->nm; tag_since(k, at, i), at = mark(k), i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        int chunked = i == 0 || (i == 1 && !ch->vdw);
        if (chunked ? cs_chunk_weights(ch, m, k) : bk_flat_copy(k, l->dt, m->w, l->w, m->wbytes / isa_dtype_size(l->dt)))
            return -1;
        if (m->b && bk_flat_copy(k, ISA_F32, m->b, l->b, (uint64_t)l->OC)) return -1;
    }
    return 0;
}

/* Rows from s0 of a hidden buffer b (hn channels a pixel) in slice r. */
static uint64_t cs_rows_at(const BkChain *ch, const ChainAt *a, const ChainRows *r, int b, int s0)
{
    return a->at[b] + (uint64_t)(s0 - r->lo[b]) * (uint64_t)r->cn[b] * (uint64_t)ch->hn * (uint64_t)ch->es;
}

/* The bias slice at b (0 none) and l's activation on the f32 block osh
 * at p, then (not f32) its cast into out. */
static int cs_bias_act(const BkChain *ch, const BkLow *l, uint64_t b, uint64_t p, uint64_t tmp, uint64_t out,
                       const uint32_t osh[4], BkCode *k)
{
    int64_t oc[4], bs[4] = {0, 0, 0, 1};
    bk_compact(osh, oc);
    if (b) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, p, p, b, osh, oc, oc, bs);
        bk_code_cp(k, &add);
    }
    if (l->act[0] && bk_act_code(k, l->act, l->act_alpha, l->act_beta, ISA_F32, p, tmp, osh[1] * osh[2] * osh[3], 0))
        return -1;
    if (is_f32(ch->dt)) return 0;
    AtlInsn cv = bk_vun(ISA_OP_V_CAST, ISA_F32, out, p, osh, oc, oc, 0, 0);
    cv.otype = (uint8_t)ch->dt;
    bk_code_cp(k, &cv);
    return 0;
}

/* Hidden slice [h0, h0+n) of slice r: the expand's channels, the
 * depthwise on them, the project's partial sums (acc after the first). */
static int cs_hidden_slice(BkCtx *c, const BkChain *ch, const ChainAt *a, const ChainRows *r, int h0, int n, BkCode *k,
                           AtlErr *e)
{
    const ChainMember *me = &ch->m[0], *md = &ch->m[1], *mp = &ch->m[2];
    const BkLow *le = &me->ly->lw, *ld = &md->ly->lw, *lp = &mp->ly->lw;
    int dt = ch->dt, es = ch->es, f32 = is_f32(dt);
    uint64_t tmp = a->slot + ch->l_tmp;
    ChainMark at = mark(k);
    /* expand: channels [h0, h0+n) */
    int o0 = r->lo[me->out], on = r->n[me->out], ow = r->cn[me->out];
    uint64_t h1 = a->at[me->out], p = f32 ? h1 : a->slot + ch->l_acc;
    BkSpan ys = member_span(me, 0, o0, on);
    AtlInsn op = bk_window_insn(le, ISA_OP_CONV, dt, rows_at(ch, a, r, me->in, ys.a), le->C, ys, full_width(le));
    op.dst = p;
    op.src2 = me->w + (uint64_t)h0 * le->C * es;
    op.cout = (uint32_t)n;
    op.groups = 1;
    bk_code_cp(k, &op);
    uint32_t esh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)n};
    if (cs_bias_act(ch, le, me->b ? me->b + (uint64_t)h0 * 4 : 0, p, tmp, h1, esh, k)) goto act;
    tag_since(k, at, 0);
    at = mark(k);
    /* depthwise: the same channels */
    o0 = r->lo[md->out], on = r->n[md->out], ow = r->cn[md->out];
    uint64_t h2 = a->at[md->out], src;
    p = f32 ? h2 : a->slot + ch->l_acc;
    ys = member_span(md, 0, o0, on);
    src = cs_rows_at(ch, a, r, md->in, ys.a);
    if (ch->vdw) {
        if (bk_dw_chain_taps_band(ld, k, src, ys, full_width(ld), md->w + (uint64_t)h0 * 4, n, p, tmp, on, ow))
            return bk_fail(c, md->ly->node, e, "layer group: the depthwise centre tap misses outputs");
    } else {
        op = bk_window_insn(ld, ISA_OP_CONV, dt, src, n, ys, full_width(ld));
        op.dst = p;
        op.src2 = md->w + (uint64_t)h0 * ld->kh * ld->kw * es;
        op.cout = (uint32_t)n;
        op.groups = (uint16_t)n;
        bk_code_cp(k, &op);
    }
    uint32_t dsh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)n};
    if (cs_bias_act(ch, ld, md->b ? md->b + (uint64_t)h0 * 4 : 0, p, tmp, h2, dsh, k)) goto act;
    tag_since(k, at, 1);
    at = mark(k);
    /* project: K rows [h0, h0+n) of its [hd][OC] image */
    o0 = r->lo[mp->out], on = r->n[mp->out];
    ys = member_span(mp, 0, o0, on);
    op = bk_window_insn(lp, ISA_OP_CONV, dt, cs_rows_at(ch, a, r, mp->in, ys.a), n, ys, full_width(lp));
    op.dst = f32 ? a->at[mp->out] : a->slot + ch->l_cp;
    op.src2 = mp->w + (uint64_t)h0 * lp->OC * es;
    op.cout = (uint32_t)lp->OC;
    op.groups = 1;
    op.acc = h0 > 0;
    bk_code_cp(k, &op);
    tag_since(k, at, 2);
    return 0;
act:
    return bk_fail(c, me->ly->node, e, "layer group: an activation cannot be fused");
}

/* Slice t: the group inputs' rows, every hidden slice, the project's
 * epilogue (bias, residual, activation, cast) and the store. */
static int cs_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    int img, rci, wci, dt = ch->dt;
    ChainRows r;
    ChainAt a;
    slice_of(ch, t, &img, &rci, &wci);
    slice_rows(ch, rci, wci, &r);
    a.slot = slot;
    for (int b = 0; b < ch->nb; b++) a.at[b] = slot + ch->buf[b].off;
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *bf = &ch->buf[b];
        if (!bf->dram || r.n[b] <= 0) continue;
        AtlInsn in = bk_nchw_box(dt, 1, bf->dram, bf->C, bf->H, bf->W, img, 0, bf->C, r.lo[b], r.n[b], r.clo[b], r.cn[b], a.at[b]);
        in.layer = (uint16_t)(first_reader(ch, b) + 1);
        bk_code_ld(k, &in, 0);
    }
    int hd = ch->m[0].ly->lw.OC;
    for (int h0 = 0; h0 < hd; h0 += ch->hn)
        if (cs_hidden_slice(c, ch, &a, &r, h0, imin(ch->hn, hd - h0), k, e)) return -1;
    const ChainMember *mp = &ch->m[2];
    const BkLow *lp = &mp->ly->lw;
    int o0 = r.lo[mp->out], on = r.n[mp->out], ow = r.cn[mp->out];
    uint32_t osh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)lp->OC};
    int64_t oc[4], bs[4] = {0, 0, 0, 1};
    bk_compact(osh, oc);
    uint64_t out = a.at[mp->out], p = is_f32(dt) ? out : slot + ch->l_cp, resid = 0, res;
    ChainMark at = mark(k);
    if (mp->b) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, p, p, mp->b, osh, oc, oc, bs);
        bk_code_cp(k, &add);
    }
    if (mp->res >= 0) {
        resid = rows_at(ch, &a, &r, mp->res, o0);
        if (!is_f32(dt)) {
            AtlInsn cv = bk_vun(ISA_OP_V_CAST, dt, slot + ch->l_resf, resid, osh, oc, oc, 0, 0);
            cv.otype = ISA_F32;
            bk_code_cp(k, &cv);
            resid = slot + ch->l_resf;
        }
    }
    if (bk_matrix_epilogue(k, lp, dt, p, slot + ch->l_tmp, out, resid, osh, oc, &res))
        return bk_fail(c, mp->ly->node, e, "layer group: an activation cannot be fused");
    tag_since(k, at, 2);
    AtlInsn st = bk_nchw_box(dt, 0, lp->y, lp->OC, ch->OH, ch->OW, img, 0, lp->OC, o0, on, 0, ow, out);
    st.layer = (uint16_t)ch->nm;
    bk_code_st(k, &st);
    return k->oom ? atl_fail(e, "out of memory generating code") : 0;
}

/* The row checks a C-sliced and a channel-sliced plan share: for every
 * row slice (one column chunk), each buffer holds the rows put in it
 * (their most, per buffer, into most[]), in-place members store over
 * rows they have read, and every member's input and residual rows are in
 * its buffers. 0, or -1 with e naming the slice. */
static int check_row_slices(const BkCtx *c, const BkChain *ch, int node, int most[CHAIN_MAX_BUFS], AtlErr *e)
{
    const IrGraph *g = c->g;
    ChainRows r;
    for (int s = 0; s < ch->nrc; s++) {
        slice_rows(ch, s, 0, &r);
        for (int b = 0; b < ch->nb; b++) {
            most[b] = imax(most[b], r.n[b] * r.cn[b]);
            if (r.n[b] * r.cn[b] > ch->buf[b].max_px)
                return bk_fail(c, node, e, "layer group: the row buffer of '%s' holds %d pixels, slice %d puts %d x %d in it",
                               g->t[ch->buf[b].t].name, ch->buf[b].max_px, s, r.n[b], r.cn[b]);
        }
        if (!inplace_ok(ch, &r)) return bk_fail(c, node, e, "layer group: slice %d reads rows it does not store over", s);
        for (int i = 0; i < ch->nm; i++) {
            const ChainMember *m = &ch->m[i];
            int lo = r.lo[m->out], n = r.n[m->out];
            BkSpan ys = member_span(m, 0, lo, n);
            if (n > 0 && (!rows_inside(&r, m->in, ys.a, ys.n) || (m->res >= 0 && !rows_inside(&r, m->res, lo, n))))
                return bk_fail(c, m->ly->node, e, "layer group: slice %d reads rows its buffers do not hold", s);
        }
    }
    return 0;
}

/* bk_chain_check of a C-sliced plan: every slice's reads inside its
 * buffers, the hidden slices cover the hidden channels in aligned
 * slices, the slot's buffers and scratch and the resident weights and
 * biases aligned, disjoint and inside their regions. */
static int cs_check(const BkCtx *c, const BkLayer *ly, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    const IrGraph *g = c->g;
    int node = ch->m[0].ly->node, hd = ch->m[0].ly->lw.OC, es = ch->dt == c->dt ? c->es : ch->es;   /* as bk_chain_check */
    if (!cs_eligible(ch) || ch->nwc != 1 || ch->hn < 1 || (uint64_t)ch->hn * (ch->vdw ? 4 : es) % c->align ||
        (hd + ch->hn - 1) / ch->hn != ch->csl || (ch->vdw && !ch->m[1].dwv))
        return bk_fail(c, node, e, "layer group: %d hidden slices of %d channels do not cover %d aligned", ch->csl, ch->hn, hd);
    if (ch->rows < 1 || ch->nrc != (ch->OH + ch->rows - 1) / ch->rows)
        return bk_fail(c, node, e, "layer group: %d slices of %d rows do not cover %d output rows", ch->nrc, ch->rows, ch->OH);
    int most[CHAIN_MAX_BUFS] = {0};
    if (check_row_slices(c, ch, node, most, e)) return -1;
    ChainRegion reg[CHAIN_MAX_BUFS + 2 * BK_CHAIN_MAX + 4];
    int n = 0;
    for (int b = 0; b < ch->nb; b++) {
        int C = cs_hidden(ch, b) ? ch->hn : ch->buf[b].C;
        region(reg, &n, ch->buf[b].off, (uint64_t)most[b] * C * es, "the row buffer of '%s'", g->t[ch->buf[b].t].name);
    }
    uint64_t tmp, acc, cp, resf;
    cs_scratch(ch, most, &tmp, &acc, &cp, &resf);
    region(reg, &n, ch->l_tmp, tmp, "the depthwise product temp", NULL);
    region(reg, &n, ch->l_acc, acc, "the f32 hidden accumulator", NULL);
    region(reg, &n, ch->l_cp, cp, "the project's f32 accumulator", NULL);
    region(reg, &n, ch->l_resf, resf, "the f32 residual", NULL);
    if (regions_sound(c, node, reg, n, ly->slot_size, "slot", e)) return -1;
    n = 0;
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        const char *name = g->nodes[m->ly->node].name ? g->nodes[m->ly->node].name : "";
        if (l->b && !m->b) return bk_fail(c, m->ly->node, e, "layer group: the bias is not resident");
        region(reg, &n, m->w, (uint64_t)l->kh * l->kw * (l->C / l->groups) * l->OC * es, "the weights of '%s'", name);
        if (l->b) region(reg, &n, m->b, (uint64_t)l->OC * 4, "the bias of '%s'", name);
    }
    return regions_sound(c, node, reg, n, ly->slot_off, "resident region below the slots", e);
}
/* ---- end of C slices ---------------------------------------------------- */

/* ---- channel slices across cores ----------------------------------------
 * A float chain of a conv (one group; all input channels) followed by a
 * depthwise conv on its output (channel-local: each output channel reads
 * only its own input channel) -- e.g. an inverted residual block's expand
 * and depthwise -- may split the conv's output channels across the
 * cores: tile (image, row chunk, j) computes channels [j xn, (j+1) xn) of
 * both members over its rows. It loads the input rows (all channels) and
 * only its slice of each member's weights and biases into its slot (no
 * resident weights, no multicast), so each weight byte is read once per
 * chip for whole-height tiles, instead of once per core or cluster; the
 * expanded tensor never leaves LMEM. The depthwise runs on the vector unit
 * in f32 where it may (its tap weights at their [kh kw][C] pitch, only
 * the slice's columns loaded), else as a grouped conv on the matrix unit
 * ([kh kw][xn]). Each tile stores its channels of the output; no sums
 * are split, so the results equal the layers' bit for bit
 * (docs/backend.md, "Channel slices across cores"). */

/* The members are a conv of one group -> a depthwise conv on all its
 * output channels, float, no residual tails. */
static int xc_eligible(const BkChain *ch)
{
    if (ch->nm != 2 || ch->dt == ISA_I8) return 0;
    const ChainMember *e = &ch->m[0], *d = &ch->m[1];
    const BkLow *le = &e->ly->lw, *ld = &d->ly->lw;
    return e->kind == CM_WINDOW && d->kind == CM_WINDOW && le->kind == BK_K_CONV && le->groups == 1 && !le->w_oihw &&
           ld->kind == BK_K_CONV && ld->groups == le->OC && ld->C == le->OC && ld->OC == le->OC && !ld->w_oihw &&
           e->res < 0 && d->res < 0 && d->in == e->out && cs_act_ok(le) && cs_act_ok(ld);
}

/* The taps (elements before the channel in the [.][OC] image) of l. */
static uint64_t xc_taps(const BkLow *l) { return (uint64_t)l->kh * l->kw * (l->C / l->groups); }

/* Bytes of the slot's image of member i's weight slice: the conv's
 * [taps][xn]; the depthwise's [taps][xn], or on the vector unit its taps
 * at their [taps][C] pitch with the slice's columns. */
static uint64_t xc_wbytes(const BkChain *ch, int i)
{
    const BkLow *l = &ch->m[i].ly->lw;
    uint64_t taps = xc_taps(l);
    if (i == 1 && ch->vdw) return ((taps - 1) * (uint64_t)l->C + (uint64_t)ch->xn) * 4;
    return taps * (uint64_t)ch->xn * (uint64_t)isa_dtype_size(l->dt);
}

/* The f32 scratch: the depthwise product temp (vector depthwise) and,
 * unless f32, the accumulator of both members before their casts. */
static void xc_scratch(const BkChain *ch, const int *most, uint64_t *tmp, uint64_t *acc)
{
    uint64_t hid = (uint64_t)imax(most[ch->m[0].out], most[ch->m[1].out]) * (uint64_t)ch->xn * 4;
    *tmp = ch->vdw ? hid : 0;
    *acc = is_f32(ch->dt) ? 0 : hid;
}

/* 1 when buffer b holds a slice of the channels (the members' outputs). */
static int xc_sliced(const BkChain *ch, int b) { return b == ch->m[0].out || b == ch->m[1].out; }

/* Slot layout of xc channel slices for ch->rows: the input rows (every
 * channel), the two sliced buffers, the weight and bias slices, the f32
 * scratch. 0 if it fits. */
static int xc_layout(const BkCtx *c, BkLayer *ly, BkChain *ch)
{
    int hd = ch->m[0].ly->lw.OC, unit = (int)(c->align / (uint64_t)ch->es), es = ch->es;
    if (ch->vdw) unit = imax(unit, (int)c->align / 4);   /* f32 taps */
    int xn = (hd + ch->xc - 1) / ch->xc;
    xn = (xn + unit - 1) / unit * unit;
    if (xn < 1 || xn >= hd || (hd + xn - 1) / xn != ch->xc) return -1;   /* xc slices exactly */
    if (ch->inplace >= 0) return -1;   /* a slice's store would overwrite input channels others read */
    ch->xn = xn;
    ch->nrc = (ch->OH + ch->rows - 1) / ch->rows;
    ch->nwc = 1;
    int most[CHAIN_MAX_BUFS] = {0};
    for (int b = 0; b < ch->nb; b++) ch->buf[b].max_rows = ch->buf[b].max_px = 0;
    ChainRows r;
    for (int i = 0; i < ch->nrc; i++) {
        slice_rows(ch, i, 0, &r);
        if (!slice_ok(ch, &r) || !inplace_ok(ch, &r)) return -1;
        for (int b = 0; b < ch->nb; b++) {
            ch->buf[b].max_rows = imax(ch->buf[b].max_rows, r.n[b]);
            ch->buf[b].max_px = most[b] = imax(ch->buf[b].max_px, r.n[b] * r.cn[b]);
        }
        const ChainMember *m = &ch->m[0];
        BkSpan ys = member_span(m, 0, r.lo[m->out], r.n[m->out]);
        if (row_offset(ch, &r, m->in, ys.a) % c->align) return -1;
    }
    uint64_t used = 0, tmp, acc;
    int in = ch->m[0].in;
    ch->xr = ch->N == 1 && ch->nrc == 1;
    ch->resident = ch->xr ? bk_align_up(c, (uint64_t)ch->buf[in].max_px * ch->buf[in].C * es) : 0;
    if (bk_reserve_resident(c, ly, ch->resident)) return -1;
    for (int i = 0; i < ch->nm; i++) {
        ChainMember *m = &ch->m[i];
        m->stream = 0;
        m->ocmax = 0;
        m->rq = 0;
        m->w = bk_slot_alloc(c, &used, xc_wbytes(ch, i));
        m->b = m->ly->lw.b ? bk_slot_alloc(c, &used, (uint64_t)xn * 4) : 0;
    }
    for (int b = 0; b < ch->nb; b++) {
        ChainBuf *bf = &ch->buf[b];
        int C = xc_sliced(ch, b) ? xn : bf->C;
        if ((uint64_t)bf->max_px > 65535) return -1;
        bf->off2 = 0;
        bf->off = ch->xr && b == in ? 0 : bk_slot_alloc(c, &used, (uint64_t)bf->max_px * C * es);
    }
    xc_scratch(ch, most, &tmp, &acc);
    ch->l_tmp = tmp ? bk_slot_alloc(c, &used, tmp) : 0;
    ch->l_acc = acc ? bk_slot_alloc(c, &used, acc) : 0;
    ch->l_cp = ch->l_resf = 0;
    ch->nsteps = 1;
    ch->used = used;
    return used <= ly->slot_size ? 0 : -1;
}

/* The tile's load of member m's weight slice [h0, h0+n) into the slot at
 * w (destination pitch dp elements a tap), and of its bias slice. */
static void xc_load_weights(const ChainMember *m, int h0, int n, uint64_t dp, uint64_t w, uint64_t b, BkCode *k)
{
    const BkLow *l = &m->ly->lw;
    int es = isa_dtype_size(l->dt);
    uint32_t sh[4] = {1, 1, (uint32_t)xc_taps(l), (uint32_t)n};
    int64_t ds[4] = {0, 0, (int64_t)dp, 1}, ss[4] = {0, 0, l->OC, 1};
    AtlInsn in = bk_dma(l->dt, ISA_SPACE_LMEM, w, ISA_SPACE_DRAM, l->w + (uint64_t)h0 * es, sh, ds, ss);
    bk_code_ld(k, &in, 1);
    if (!l->b) return;
    uint32_t bsh[4] = {1, 1, 1, (uint32_t)n};
    int64_t bst[4];
    bk_compact(bsh, bst);
    in = bk_dma(ISA_F32, ISA_SPACE_LMEM, b, ISA_SPACE_DRAM, l->b + (uint64_t)h0 * 4, bsh, bst, bst);
    bk_code_ld(k, &in, 1);
}

/* The prologue with the input resident (xr): its rows, every channel,
 * into resident LMEM from 0, multicast once per cluster. */
static int xc_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkChain *ch = ly->chain;
    const ChainBuf *bf = &ch->buf[ch->m[0].in];
    ChainRows r;
    slice_rows(ch, 0, 0, &r);
    int b = ch->m[0].in;
    AtlInsn in = bk_nchw_box(ch->dt, 1, bf->dram, bf->C, bf->H, bf->W, 0, 0, bf->C, r.lo[b], r.n[b], 0, r.cn[b], bf->off);
    in.layer = 1;
    bk_code_st(k, &in);
    return k->oom ? -1 : 0;
}

/* Tile t: image, row chunk and channel slice j = t mod xc; the input
 * rows and the weight slices, the conv's channels, the depthwise on
 * them, the store of those channels of the output. */
static int xc_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    const ChainMember *me = &ch->m[0], *md = &ch->m[1];
    const BkLow *le = &me->ly->lw, *ld = &md->ly->lw;
    int dt = ch->dt, f32 = is_f32(dt), j = t % ch->xc, s = t / ch->xc, img = s / ch->nrc, rci = s % ch->nrc;
    int hd = le->OC, h0 = j * ch->xn, n = imin(ch->xn, hd - h0);
    ChainRows r;
    ChainAt a;
    slice_rows(ch, rci, 0, &r);
    a.slot = slot;
    for (int b = 0; b < ch->nb; b++) a.at[b] = (ch->xr && b == me->in ? 0 : slot) + ch->buf[b].off;
    ChainMark at = mark(k);
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *bf = &ch->buf[b];
        if (!bf->dram || r.n[b] <= 0 || (ch->xr && b == me->in)) continue;
        AtlInsn in = bk_nchw_box(dt, 1, bf->dram, bf->C, bf->H, bf->W, img, 0, bf->C, r.lo[b], r.n[b], 0, r.cn[b], a.at[b]);
        bk_code_ld(k, &in, 0);
    }
    xc_load_weights(me, h0, n, (uint64_t)n, slot + me->w, slot + me->b, k);
    tag_since(k, at, 0);
    at = mark(k);
    xc_load_weights(md, h0, n, ch->vdw ? (uint64_t)ld->C : (uint64_t)n, slot + md->w, slot + md->b, k);
    tag_since(k, at, 1);
    at = mark(k);
    uint64_t tmp = slot + ch->l_tmp;
    /* the conv: output channels [h0, h0+n) */
    int o0 = r.lo[me->out], on = r.n[me->out], ow = r.cn[me->out];
    uint64_t h1 = a.at[me->out], p = f32 ? h1 : slot + ch->l_acc;
    BkSpan ys = member_span(me, 0, o0, on);
    AtlInsn op = bk_window_insn(le, ISA_OP_CONV, dt, rows_at(ch, &a, &r, me->in, ys.a), le->C, ys, full_width(le));
    op.dst = p;
    op.src2 = slot + me->w;
    op.cout = (uint32_t)n;
    op.groups = 1;
    bk_code_cp(k, &op);
    uint32_t esh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)n};
    if (cs_bias_act(ch, le, me->b ? slot + me->b : 0, p, tmp, h1, esh, k)) goto act;
    tag_since(k, at, 0);
    at = mark(k);
    /* the depthwise: the same channels (n a pixel in both buffers) */
    o0 = r.lo[md->out], on = r.n[md->out], ow = r.cn[md->out];
    uint64_t h2 = a.at[md->out], src;
    p = f32 ? h2 : slot + ch->l_acc;
    ys = member_span(md, 0, o0, on);
    src = a.at[md->in] + (uint64_t)(ys.a - r.lo[md->in]) * (uint64_t)r.cn[md->in] * (uint64_t)n * (uint64_t)ch->es;
    if (ch->vdw) {
        if (bk_dw_chain_taps_band(ld, k, src, ys, full_width(ld), slot + md->w, n, p, tmp, on, ow))
            return bk_fail(c, md->ly->node, e, "layer group: the depthwise centre tap misses outputs");
    } else {
        op = bk_window_insn(ld, ISA_OP_CONV, dt, src, n, ys, full_width(ld));
        op.dst = p;
        op.src2 = slot + md->w;
        op.cout = (uint32_t)n;
        op.groups = (uint16_t)n;
        bk_code_cp(k, &op);
    }
    uint32_t dsh[4] = {1, (uint32_t)on, (uint32_t)ow, (uint32_t)n};
    if (cs_bias_act(ch, ld, md->b ? slot + md->b : 0, p, tmp, h2, dsh, k)) goto act;
    tag_since(k, at, 1);
    AtlInsn st = bk_nchw_box(dt, 0, ld->y, hd, ch->OH, ch->OW, img, h0, n, o0, on, 0, ow, h2);
    st.layer = (uint16_t)ch->nm;
    bk_code_st(k, &st);
    return k->oom ? atl_fail(e, "out of memory generating code") : 0;
act:
    return bk_fail(c, me->ly->node, e, "layer group: an activation cannot be fused");
}

/* bk_chain_check of a plan with xc channel slices: the slices cover the
 * channels in aligned slices and the rows in chunks, every slice's reads
 * inside its buffers, nothing resident, and the slot's buffers, weight
 * and bias slices and scratch aligned, disjoint and inside the slot. */
static int xc_check(const BkCtx *c, const BkLayer *ly, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    const IrGraph *g = c->g;
    int node = ch->m[0].ly->node, hd = ch->m[0].ly->lw.OC, es = ch->dt == c->dt ? c->es : ch->es;   /* as bk_chain_check */
    if (ch->rows < 1 || ch->nrc != (ch->OH + ch->rows - 1) / ch->rows || !xc_eligible(ch) || ch->nwc != 1 ||
        ch->xn < 1 || (uint64_t)ch->xn * (ch->vdw ? 4 : es) % c->align || (uint64_t)ch->xn * es % c->align ||
        (hd + ch->xn - 1) / ch->xn != ch->xc || (ch->vdw && !ch->m[1].dwv) || ch->inplace >= 0)
        return bk_fail(c, node, e, "layer group: %d channel slices of %d do not cover %d aligned", ch->xc, ch->xn, hd);
    int most[CHAIN_MAX_BUFS] = {0};
    if (check_row_slices(c, ch, node, most, e)) return -1;
    ChainRegion reg[CHAIN_MAX_BUFS + 2 * BK_CHAIN_MAX + 4];
    int n = 0;
    int xin = ch->m[0].in;
    if (ch->xr != (ch->N == 1 && ch->nrc == 1) || ch->resident != (ch->xr ? bk_align_up(c, (uint64_t)most[xin] * ch->buf[xin].C * es) : 0))
        return bk_fail(c, node, e, "layer group: the resident input rows take %llu bytes", (unsigned long long)ch->resident);
    for (int b = 0; b < ch->nb; b++) {
        int C = xc_sliced(ch, b) ? ch->xn : ch->buf[b].C;
        if (ch->xr && b == xin) continue;
        region(reg, &n, ch->buf[b].off, (uint64_t)most[b] * C * es, "the row buffer of '%s'", g->t[ch->buf[b].t].name);
    }
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        const char *name = g->nodes[m->ly->node].name ? g->nodes[m->ly->node].name : "";
        if (l->b && !m->b) return bk_fail(c, m->ly->node, e, "layer group: the bias slice has no room");
        uint64_t wb = i == 1 && ch->vdw ? ((xc_taps(l) - 1) * (uint64_t)l->C + (uint64_t)ch->xn) * 4
                                        : xc_taps(l) * (uint64_t)ch->xn * (uint64_t)es;
        region(reg, &n, m->w, wb, "the weight slice of '%s'", name);
        if (l->b) region(reg, &n, m->b, (uint64_t)ch->xn * 4, "the bias slice of '%s'", name);
    }
    uint64_t tmp, acc;
    xc_scratch(ch, most, &tmp, &acc);
    region(reg, &n, ch->l_tmp, tmp, "the depthwise product temp", NULL);
    region(reg, &n, ch->l_acc, acc, "the f32 accumulator", NULL);
    if (regions_sound(c, node, reg, n, ly->slot_size, "slot", e)) return -1;
    n = 0;
    if (ch->xr) region(reg, &n, ch->buf[xin].off, ch->resident, "the resident rows of '%s'", g->t[ch->buf[xin].t].name);
    return regions_sound(c, node, reg, n, ly->slot_off, "resident region below the slots", e);
}

/* The plans offered: each width of aligned slices whose count lies in
 * [cores / 2, 2 cores] (at least 2), each with the most rows a tile that
 * fits (fewer rows only reload the weight slices and recompute halos);
 * --group-cslice only: just those. */
static int xc_offer(const BkCtx *c, BkLayer *ly, BkChain *ch, AtlErr *e)
{
    int hd = ch->m[0].ly->lw.OC, unit = (int)(c->align / (uint64_t)ch->es), last = 0;
    int lo = imax(2, c->ncores / 2), hi = imax(2, 2 * c->ncores);
    if (c->bands && ch->m[ch->nm - 1].ly->bands != BK_BANDS_CHANNELS && !c->cslice_only) return 0;
    if (c->cslice_only) ly->shapes.n = 0;
    ch->vdw = ch->m[1].dwv;   /* the depthwise on the vector unit where it may */
    if (ch->vdw) unit = imax(unit, (int)c->align / 4);
    for (int xn = (hd + hi - 1) / hi; xn < hd; xn++) {
        int n = (hd + xn - 1) / xn;
        if (xn % unit || n < lo || n == last) continue;
        last = n;
        ch->xc = n;
        for (int rows = ch->OH;; rows = (rows + 1) / 2) {
            ChainShape sh = {.rows = rows, .cols = ch->OW, .vdw = ch->vdw, .xc = n};
            ch->rows = rows;
            ch->cols = ch->OW;
            if (xc_layout(c, ly, ch) == 0) {
                if (bk_push_shape(ly, &sh, sizeof sh, (int64_t)ch->N * ch->nrc * n, e)) return -1;
                break;
            }
            if (rows == 1) break;
        }
    }
    ch->xc = 0;
    return 0;
}
/* ---- end of channel slices across cores --------------------------------- */

/* A Concat member's inputs fill its channels exactly, each starting
 * aligned in the output pixels; a Resize member's input and output rows
 * are its factors apart and every row of its input starts aligned (its
 * row phases start there); an elementwise member's buffers hold its
 * output's channels. 0, or -1 naming the member. */
static int members_unsound(const BkCtx *c, const BkChain *ch, const ChainMember *m, AtlErr *e)
{
    const ChainBuf *o = &ch->buf[m->out], *in = &ch->buf[m->in];
    uint64_t es = (uint64_t)ch->es;
    if (m->kind == CM_CONCAT) {
        int b[2 + BK_MOP_MAXIN], nb = 0, c0 = 0;
        b[nb++] = m->in;
        b[nb++] = m->res;
        for (int x = 0; x < m->nx; x++) b[nb++] = m->xin[x];
        for (int j = 0; j < nb; j++) {
            const ChainBuf *bf = &ch->buf[b[j]];
            if ((uint64_t)c0 * es % c->align || bf->H != o->H || bf->W != o->W)
                return bk_fail(c, m->ly->node, e, "layer group: concat input %d (channels from %d) is unaligned or not of the output's rows", j, c0);
            c0 += bf->C;
        }
        if (c0 != o->C) return bk_fail(c, m->ly->node, e, "layer group: concat inputs of %d channels, output of %d", c0, o->C);
    }
    if (m->kind == CM_RESIZE && (in->H * m->fh != o->H || in->W * m->fw != o->W || in->C != o->C ||
                                 (uint64_t)in->W * in->C * es % c->align || ch->nwc > 1))
        return bk_fail(c, m->ly->node, e, "layer group: resize rows of %d x %d channels are unaligned or not %d x %d apart",
                       in->W, in->C, m->fh, m->fw);
    if (m->kind == CM_LRESIZE) {
        const BkLow *l = &m->ly->lw;
        if (in->C != o->C || in->H != l->H || in->W != l->W || o->H != l->OH || o->W != l->OW || ch->nwc > 1 ||
            (uint64_t)in->W * in->C * 4 % c->align || (uint64_t)o->W * o->C * 4 % c->align || (int64_t)in->W * in->C > 65535)
            return bk_fail(c, m->ly->node, e, "layer group: interpolated rows of %d x %d channels are unaligned or not the layer's",
                           in->W, in->C);
    }
    if (m->kind == CM_ELEM && (in->C != o->C || (m->res >= 0 && ch->buf[m->res].C != o->C) ||
                               (m->pc && (ch->buf[m->res].H != 1 || ch->buf[m->res].W != 1))))
        return bk_fail(c, m->ly->node, e, "layer group: elementwise inputs of other channels than the output's");
    return 0;
}

/* ---- output-channel steps -----------------------------------------------
 * A float chain whose last member is a conv of one group with a residual
 * tail (e.g. a bottleneck's conv2 -> conv3 + Add + Relu) may run that
 * member in steps of at most ost output channels: its weights stream (a
 * chunk a step, BkChain.nstream), the other members compute whole on the
 * first step into their resident row buffers (as any streaming chain),
 * and each step loads the residual's rows of its channels into the slot,
 * computes them, and stores them. Only the chunk's channels of the last
 * member's output and residual are ever in LMEM, so a slice holds many
 * more full-width rows of the members before it: wide outputs (256
 * channels) no longer force one-row slices (docs/backend.md, "Output
 * channels in steps"). The same instructions as the streaming lowering
 * on the same rows and channels: bit for bit the layers' results. */

/* The last member is a float conv of one group (on the matrix unit) with
 * a residual of its output's shape that is a group input no other
 * member reads; the output over no input but (in place) that residual. */
static int ost_eligible(const BkChain *ch)
{
    int nm = ch->nm;
    if (nm < 2 || ch->dt == ISA_I8) return 0;
    const ChainMember *m = &ch->m[nm - 1];
    const BkLow *l = &m->ly->lw;
    if (m->kind != CM_WINDOW || l->kind != BK_K_CONV || l->groups != 1 || m->dwv || m->res < 0 || m->pc) return 0;
    const ChainBuf *rb = &ch->buf[m->res], *ob = &ch->buf[m->out];
    if (!rb->dram || rb->C != ob->C || rb->H != ob->H || rb->W != ob->W || (ch->inplace >= 0 && ch->inplace != m->res)) return 0;
    for (int i = 0; i < nm - 1; i++) {
        if (ch->m[i].in == m->res || ch->m[i].res == m->res) return 0;
        for (int x = 0; x < ch->m[i].nx; x++) if (ch->m[i].xin[x] == m->res) return 0;
    }
    return m->in != m->res;
}

/* bk_chain_check's conditions of output-channel steps: eligible, whole
 * rows, only the last member streaming, and no chunk wider than the slot
 * buffers' ost channels. */
static int ost_unsound(const BkCtx *c, const BkChain *ch, AtlErr *e)
{
    int node = ch->m[0].ly->node;
    if (!ost_eligible(ch) || ch->nwc != 1 || !ch->nstream || (uint64_t)ch->ost * ch->es % c->align)
        return bk_fail(c, node, e, "layer group: output-channel steps of %d on a chain that cannot take them", ch->ost);
    for (int i = 0; i < ch->nm; i++)
        if (ch->m[i].stream != (i == ch->nm - 1))
            return bk_fail(c, ch->m[i].ly->node, e, "layer group: output-channel steps stream a member other than the last");
    for (int j = 0; j < ch->nitems; j++)
        if (ch->item[j].m == ch->nm - 1 && ch->item[j].ocn > ch->ost)
            return bk_fail(c, node, e, "layer group: a step of %d channels in slot buffers of %d", ch->item[j].ocn, ch->ost);
    /* the group inputs have one copy, which the next slice's step-0 loads
     * overwrite during this slice's last step: only step 0 may read them
     * (every other member computes there), and the last member reads its
     * input from a row buffer the chain computed, not from DRAM */
    const ChainMember *last = &ch->m[ch->nm - 1];
    if (ch->nsteps < 2 || ch->buf[last->in].dram)
        return bk_fail(c, last->ly->node, e, "layer group: output-channel steps need 2 steps and a computed input");
    for (int s = 1; s < ch->nsteps; s++)
        for (int j = ch->step[s].lo; j < ch->step[s].hi; j++)
            if (ch->item[j].m != ch->nm - 1)
                return bk_fail(c, ch->m[ch->item[j].m].ly->node, e,
                               "layer group: output-channel steps compute a member other than the last after step 0");
    return 0;
}

static int halving(int OH, int rows);
static int push_plan(const BkCtx *c, BkLayer *ly, const BkChain *ch, ChainShape sh, int64_t tiles, AtlErr *e);

/* How even_heights walks the slice counts for a set of P cores: j from
 * ceil(least / P) on, ceil(j x P / div) slices (div: the images that
 * share the slices), at most `tries` of them (0: until they exceed OH). */
typedef struct {
    int least, div, tries;
    int exact;      /* only counts that ceil(OH / rows) slices give back */
    int below;      /* only heights below this (0: any) */
    int halvings;   /* the halvings of OH count as offered already */
} EvenScan;

/* The heights that spread the rows evenly over all the cores and over one
 * cluster's (P of them, when that differs): per set, the first of sc's
 * slice counts whose height fits, added to cand (n of them) unless it is
 * there already. Shared by the output-channel steps and more_heights. */
static void even_heights(const BkCtx *c, BkLayer *ly, BkChain *ch, const EvenScan *sc, int *cand, int *n)
{
    int sets[2] = {c->chip->clusters * c->chip->cores_per_cluster, c->chip->cores_per_cluster};
    for (int s = 0; s < 2; s++) {
        int P = sets[s];
        if (P < 2 || (s && P == sets[0])) continue;
        for (int j = (sc->least + P - 1) / P, k = 0; !sc->tries || k < sc->tries; j++, k++) {
            int nrc = (j * P + sc->div - 1) / sc->div;
            if (nrc > ch->OH) break;
            int rows = (ch->OH + nrc - 1) / nrc;
            if (sc->exact && (ch->OH + rows - 1) / rows != nrc) continue;
            if (sc->below && rows >= sc->below) continue;
            int seen = sc->halvings && halving(ch->OH, rows);
            for (int i = 0; i < *n; i++) seen |= cand[i] == rows;
            ch->rows = rows;
            if (layout(c, ly, ch)) continue;
            if (!seen) cand[(*n)++] = rows;
            break;
        }
    }
}

/* Offers each of the n heights in cand that fits as plan sh (its rows the
 * height's). */
static int push_heights(const BkCtx *c, BkLayer *ly, BkChain *ch, ChainShape sh, const int *cand, int n, AtlErr *e)
{
    for (int i = 0; i < n; i++) {
        sh.rows = ch->rows = cand[i];
        if (layout(c, ly, ch)) continue;
        if (push_plan(c, ly, ch, sh, (int64_t)ch->N * ch->nrc * ch->nwc * ch->nsteps, e)) return -1;
    }
    return 0;
}

/* Offers output-channel steps of 32 and 64 channels (as many as a multiple
 * of the alignment allows, fewer than the output's): per width, the
 * tallest whole-row height that fits and, for all the cores and for one
 * cluster's (P of them), the fewest slices that fit in a multiple of P
 * (the rows spread evenly over the slices, slice_rows, so each core gets
 * the same rows). */
static int ost_offer(const BkCtx *c, BkLayer *ly, BkChain *ch, AtlErr *e)
{
    static const int widths[] = {32, 64};
    int OC = ch->m[ch->nm - 1].ly->lw.OC;
    if (c->cslice_only) return 0;
    ch->vdw = ch->ws = ch->csl = ch->xc = 0;   /* the earlier offers' state: these plans have none */
    for (int wi = 0; wi < 2; wi++) {
        int w = widths[wi];
        if (w >= OC || (uint64_t)w * ch->es % c->align) continue;
        ch->ost = w;
        ch->nstream = 1;
        ch->cols = ch->OW;
        int cand[3], n = 0, top = 0;
        for (int rows = ch->OH; rows >= 1 && !top; rows--) {
            ch->rows = rows;
            if (layout(c, ly, ch) == 0) top = rows;
        }
        if (!top) continue;
        cand[n++] = top;
        /* from the fewest slices (a multiple of P), only counts that nrc slices of at most `rows` give back */
        EvenScan sc = {.least = (ch->OH + top - 1) / top, .div = 1, .exact = 1};
        even_heights(c, ly, ch, &sc, cand, &n);
        ChainShape sh = {.cols = ch->OW, .nstream = 1, .ost = w};
        if (push_heights(c, ly, ch, sh, cand, n, e)) { ch->ost = 0; return -1; }
    }
    ch->ost = 0;
    ch->nstream = 0;
    return 0;
}
/* ---- end of output-channel steps ---------------------------------------- */

int bk_chain_check(const BkCtx *c, const BkLayer *ly, AtlErr *e)
{
    const BkChain *ch = ly->chain;
    if (!ch) return atl_fail(e, "layer group check: the layer is not a layer group");
    const IrGraph *g = c->g;
    int node = ch->m[0].ly->node, es = ch->dt == c->dt ? c->es : ch->es;   /* float: the context's element */
    uint64_t lm = (uint64_t)c->chip->lmem_bytes;
    if (ly->slot_off % c->align || ly->slot_size % c->align)
        return bk_fail(c, node, e, "layer group: slots at %llu of %llu bytes are not aligned to %llu bytes",
                       (unsigned long long)ly->slot_off, (unsigned long long)ly->slot_size, (unsigned long long)c->align);
    if (ly->slot_off + 2 * ly->slot_size > lm)
        return bk_fail(c, node, e, "layer group: slots at %llu of %llu bytes end beyond LMEM (%llu bytes)",
                       (unsigned long long)ly->slot_off, (unsigned long long)ly->slot_size, (unsigned long long)lm);
    if (ch->rows < 1 || ch->nrc != (ch->OH + ch->rows - 1) / ch->rows)
        return bk_fail(c, node, e, "layer group: %d slices of %d rows do not cover %d output rows", ch->nrc, ch->rows,
                       ch->OH);
    if (ch->cols < 1 || ch->nwc != (ch->OW + ch->cols - 1) / ch->cols || (ch->nwc > 1 && ch->dt == ISA_I8))
        return bk_fail(c, node, e, "layer group: %d slices of %d columns do not cover %d output columns", ch->nwc,
                       ch->cols, ch->OW);
    if (ch->csl) return cs_check(c, ly, e);   /* C slices: their own buffers and scratch */
    if (ch->xc) return xc_check(c, ly, e);
    /* every slice: the rows each buffer holds, what each member reads */
    int most[CHAIN_MAX_BUFS] = {0};   /* pixels (rows x columns) */
    uint64_t rzb[BK_CHAIN_MAX] = {0}, rtb = 0;   /* interpolating Resize members' R_h blocks, their T */
    ChainRows r;
    for (int s = 0; s < ch->nrc * ch->nwc; s++) {
        slice_rows(ch, s / ch->nwc, s % ch->nwc, &r);
        for (int b = 0; b < ch->nb; b++) {
            most[b] = imax(most[b], r.n[b] * r.cn[b]);
            if (r.n[b] * r.cn[b] > ch->buf[b].max_px || r.cn[b] > ch->buf[b].W)
                return bk_fail(c, node, e, "layer group: the row buffer of '%s' holds %d pixels, slice %d puts %d x %d in it",
                               g->t[ch->buf[b].t].name, ch->buf[b].max_px, s, r.n[b], r.cn[b]);
        }
        if (!cols_ok(ch, &r))
            return bk_fail(c, node, e, "layer group: slice %d reads columns its buffers do not hold", s);
        if (!inplace_ok(ch, &r))
            return bk_fail(c, node, e, "layer group: slice %d reads rows of '%s' other than those it stores over", s,
                           g->t[ch->buf[ch->inplace].t].name);
        for (int i = 0; i < ch->nm; i++) {
            const ChainMember *m = &ch->m[i];
            int lo = r.lo[m->out], n = r.n[m->out];
            if (n <= 0) continue;
            BkSpan ys = member_span(m, 0, lo, n);
            int outside = !rows_inside(&r, m->in, ys.a, ys.n) ||
                          (m->res >= 0 && !rows_inside(&r, m->res, m->pc ? 0 : lo, m->pc ? 1 : n));
            for (int x = 0; x < m->nx; x++) outside |= !rows_inside(&r, m->xin[x], lo, n);
            if (outside) return bk_fail(c, m->ly->node, e, "layer group: slice %d reads rows its buffers do not hold", s);
            if (m->kind == CM_LRESIZE && m->ly->lw.kh) {
                uint64_t blk = (uint64_t)n * ys.n * 4;
                if (blk > rzb[i]) rzb[i] = blk;
                if (m->ly->lw.kw && (uint64_t)n * m->ly->lw.W * m->C * 4 > rtb) rtb = (uint64_t)n * m->ly->lw.W * m->C * 4;
            }
        }
        int bad = misaligned_read(c, ch, &r);
        if (bad >= 0)
            return bk_fail(c, ch->m[bad].ly->node, e, "layer group: slice %d reads rows at an offset not aligned to %llu bytes",
                           s, (unsigned long long)c->align);
    }
    /* the slot: row buffers (streaming: resident, below) and scratch at
     * the sizes the slices use */
    ChainRegion reg[4 * BK_CHAIN_MAX + 2 * CHAIN_MAX_BUFS + 9];
    int n = 0;
    uint64_t acc = 0, resf = 0, tmp = 0;
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *bf = &ch->buf[b];
        uint64_t pitch = (uint64_t)bf->W * bf->C * es;
        if (ch->dt == ISA_I8 && pitch % c->align)   /* int8 members address rows inside their buffers */
            return bk_fail(c, node, e, "layer group: a row of '%s' (%llu bytes) is not a multiple of the %llu-byte alignment",
                           g->t[bf->t].name, (unsigned long long)pitch, (unsigned long long)c->align);
        if (!ch->nstream || ost_slot(ch, b))
            buf_region(ch, b, reg, &n, bf->off, (uint64_t)most[b] * (ost_slot(ch, b) ? ch->ost : bf->C) * es, "the row buffer of '%s'",
                       g->t[bf->t].name);
    }
    if (ch->dt == ISA_I8) {   /* an accumulator row; an elementwise chunk in every region */
        for (int i = 0; i < ch->nm; i++) {
            const BkLow *l = &ch->m[i].ly->lw;
            if (ch->m[i].kind == CM_QCONV && ch->scr0 < (uint64_t)l->OW * l->OC * 4)
                return bk_fail(c, ch->m[i].ly->node, e, "layer group: the accumulator of %llu bytes does not hold a row of %llu",
                               (unsigned long long)ch->scr0, (unsigned long long)l->OW * l->OC * 4);
        }
        if (has_elem(ch) && !elem_chunk(c, ch))
            return bk_fail(c, node, e, "layer group: scratch regions of %llu and %llu bytes hold no elementwise chunk",
                           (unsigned long long)ch->scr0, (unsigned long long)ch->scr1);
        for (int i = 0; i < ch->nscr; i++)
            region(reg, &n, ch->l_scr[i], i ? ch->scr1 : ch->scr0, "scratch region %s", i ? "2+" : "1");
    }
    for (int i = 0; i < ch->nm && ch->dt == ISA_I8; i++)   /* Concat and Resize members */
        if (members_unsound(c, ch, &ch->m[i], e)) return -1;
    for (int i = 0; i < ch->nm && ch->dt != ISA_I8; i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        int OC, OH, OW;
        member_out(m, &OC, &OH, &OW);
        uint64_t f32 = (uint64_t)most[m->out] * OC * 4;
        if (l->kind == BK_K_CONV && m->stream) {   /* a chunk's channels */
            uint64_t w = 0;
            for (int j = 0; j < ch->nitems; j++) if (ch->item[j].m == i && (uint64_t)ch->item[j].ocn > w) w = (uint64_t)ch->item[j].ocn;
            f32 = f32 / (uint64_t)l->OC * w;
        }
        int direct = ch->ost && i == ch->nm - 1 && is_f32(c->dt);   /* into its slot rows (conv_chunk) */
        if (l->kind == BK_K_CONV && (!is_f32(c->dt) || m->stream) && !direct) acc = f32 > acc ? f32 : acc;
        if (m->kind == CM_WINDOW && m->res >= 0 && !is_f32(c->dt)) resf = f32 > resf ? f32 : resf;
        if (members_unsound(c, ch, m, e)) return -1;
        if (!strcmp(l->act, "HardSwish") || !strcmp(l->t_act, "HardSwish") || (ch->vdw && m->dwv)) tmp = f32 > tmp ? f32 : tmp;
    }
    region(reg, &n, ch->l_acc, acc, "the f32 accumulator", NULL);
    region(reg, &n, ch->l_resf, resf, "the f32 residual", NULL);
    region(reg, &n, ch->l_tmp, tmp, "the activation (or depthwise product) temp", NULL);
    for (int i = 0; i < ch->nm; i++)
        region(reg, &n, ch->m[i].rz, rzb[i], "the interpolation rows of '%s'",
               g->nodes[ch->m[i].ly->node].name ? g->nodes[ch->m[i].ly->node].name : "");
    region(reg, &n, ch->l_rt, rtb, "the rows interpolated along H", NULL);
    for (int i = 0; ch->ws && i < ch->nm; i++) {   /* staged streamed weights: in SRAM's free room, in order */
        const ChainMember *m = &ch->m[i];
        uint64_t lo = i ? ch->m[i - 1].sw : 0;
        if (m->stream && (m->sw < c->sram_stage || m->sw % 64 || m->sw < lo || m->sw + m->wbytes > ch->sw_top ||
                          ch->sw_top > (uint64_t)c->chip->sram_bytes || !ch->nstream))
            return bk_fail(c, m->ly->node, e, "layer group: streamed weights staged at SRAM %llu (%llu bytes) outside [%llu, %llu)",
                           (unsigned long long)m->sw, (unsigned long long)m->wbytes, (unsigned long long)c->sram_stage,
                           (unsigned long long)ch->sw_top);
    }
    if (ch->ost && ost_unsound(c, ch, e)) return -1;
    if (ch->nstream) {
        if (check_steps(c, ly, e)) return -1;
        region(reg, &n, ch->l_wc, ch->wchunk, "the weight chunk", NULL);
        if (ch->dt == ISA_I8) region(reg, &n, ch->l_q8, ch->scr0 / 4, "the i8 chunk temp", NULL);
    }
    if (regions_sound(c, node, reg, n, ly->slot_size, "slot", e)) return -1;
    /* the resident weights and biases, below the slots */
    n = 0;
    for (int i = 0; i < ch->nm; i++) {
        const ChainMember *m = &ch->m[i];
        const BkLow *l = &m->ly->lw;
        const char *name = g->nodes[m->ly->node].name ? g->nodes[m->ly->node].name : "";
        if (m->kind == CM_LRESIZE && l->kw) region(reg, &n, m->w, (uint64_t)l->OW * l->W * 4, "the column interpolation of '%s'", name);
        if (l->kind != BK_K_CONV) continue;
        if (l->b && !m->b) return bk_fail(c, m->ly->node, e, "layer group: the bias is not resident");
        if (m->kind == CM_QCONV && !m->rq) return bk_fail(c, m->ly->node, e, "layer group: the requantisation is not resident");
        if (!m->stream)
            region(reg, &n, m->w, (uint64_t)l->kh * l->kw * (l->C / l->groups) * l->OC * es, "the weights of '%s'", name);
        if (l->b) region(reg, &n, m->b, (uint64_t)l->OC * 4, "the bias of '%s'", name);
        if (m->kind == CM_QCONV) region(reg, &n, m->rq, (uint64_t)l->OC * 8, "the requantisation of '%s'", name);
    }
    for (int b = 0; b < ch->nb && ch->nstream; b++) {   /* streaming: the row buffers, per core */
        const ChainBuf *bf = &ch->buf[b];
        if (ost_slot(ch, b)) continue;   /* in the slot (above) */
        uint64_t bytes = (uint64_t)most[b] * bf->C * es;
        buf_region(ch, b, reg, &n, bf->off, bytes, "the row buffer of '%s'", g->t[bf->t].name);
        if (bf->off2) buf_region(ch, b, reg, &n, bf->off2, bytes, "the second row buffer of '%s'", g->t[bf->t].name);
        if (!bf->off2 && (bf->dram || b == ch->m[ch->nm - 1].out) && !ch->ost)
            return bk_fail(c, node, e, "layer group: '%s' has one row buffer; slices overlap on it", g->t[bf->t].name);
    }
    return regions_sound(c, node, reg, n, ly->slot_off, "resident region below the slots", e);
}

static int apply_rows(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    BkChain *ch = ly->chain;
    const ChainShape *sh = shape;
    ch->rows = sh->rows;
    ch->cols = sh->cols;
    ch->nstream = sh->nstream;
    ch->vdw = sh->vdw;
    ch->ws = sh->ws;
    ch->csl = sh->csl;
    ch->xc = sh->xc;
    ch->ost = sh->ost;
    if (ch->xc ? xc_layout(c, ly, ch) : ch->csl ? cs_layout(c, ly, ch) : layout(c, ly, ch))
        return atl_fail(e, "internal: a candidate slice height does not fit");
    if (bk_chain_check(c, ly, e)) return -1;
    ly->run_macs = run_macs(ch);
    int ns = ch->nstream ? ch->nsteps : 1;
    if (bk_set_tiles(ly, ch->N * ch->nrc * ch->nwc * ns * (ch->xc ? ch->xc : 1), ns, e)) return -1;
    /* a step's weight chunk: the same in every slice (with 2 steps each
     * slot keeps its chunk from slice to slice: the loads are skipped) */
    for (int t = 0; ch->nstream && t < ly->ntiles; t++) ly->tile_wkey[t] = ch->step[t % ns].w >= 0 ? t % ns : -1;
    /* resident weights multicast once per cluster; a chain of pools has
     * none (an empty multicast would leave its wait unsignalled) */
    ly->mcast = ch->resident > 0;
    ly->prologue = ly->mcast ? (ch->xc ? xc_prologue : ch->csl ? cs_prologue : chain_prologue) : NULL;
    ly->gen = ch->xc ? xc_gen : ch->csl ? cs_gen : chain_gen;
    ly->wsram_lo = ch->ws ? c->sram_stage : 0;
    ly->wsram_hi = ch->ws ? ch->sw_top : 0;
    char wpart[16] = "";
    if (ch->nwc > 1) snprintf(wpart, sizeof wpart, " W%d", ch->nwc);
    const char *vec = ch->vdw ? " vec" : "";
    if (ch->xc)
        snprintf(ly->split, sizeof ly->split, "N%d C%d H%d x%d%s", ch->N, ch->xc, ch->nrc, ch->nm, vec);
    else if (ch->csl)
        snprintf(ly->split, sizeof ly->split, "N%d H%d x%d c%d%s", ch->N, ch->nrc, ch->nm, ch->csl, vec);
    else if (ch->nstream)
        snprintf(ly->split, sizeof ly->split, "N%d H%d%s x%d %s%d/%d%s%s", ch->N, ch->nrc, wpart, ch->nm, ch->ost ? "o" : "w",
                 ch->ost ? ch->ost : ch->nstream, ns, vec, ch->ws ? " wsram" : "");
    else snprintf(ly->split, sizeof ly->split, "N%d H%d%s x%d%s", ch->N, ch->nrc, wpart, ch->nm, vec);
    return 0;
}

/* Registers of an elementwise member's program that live in the chain's
 * scratch (all but its inputs and its output); -1 when one is wider than
 * 4 bytes. */
static int elem_scratch(const BkLow *l)
{
    int n = 0;
    for (int r = l->nin; r < l->nregs; r++) {
        if (isa_dtype_size(l->reg_dt[r]) > 4) return -1;
        n += r != l->out_reg;
    }
    return n;
}

/* The kind (CM_*) of layer m as a member of a chain whose buffers hold
 * dtype dt (BkCtx.dt: float members; i8: Int8Conv, i8 pools, Int8Add,
 * Concat and Resize of i8 tensors), -1 when it cannot be one. */
static int member_kind(const BkCtx *c, const BkLayer *m, int dt)
{
    const IrGraph *g = c->g;
    const BkLow *l = &m->lw;
    if (m->node < 0) return -1;
    int mop = bk_member_op(c, m);   /* Concat and Resize move bytes: int8 too; elementwise: float */
    if (m->direct && mop != BK_MOP_CONCAT && mop != BK_MOP_RESIZE) return -1;
    const IrNode *nd = &g->nodes[m->node];
    const IrTensor *y = &g->t[nd->out[0]];
    if (mop == BK_MOP_LRESIZE)   /* f32 rows: its `mm`s read and write them as they are */
        return dt == ISA_F32 && g->t[nd->in[0]].ndim == 4 && y->ndim == 4 ? CM_LRESIZE : -1;
    if (g->t[nd->in[0]].ndim != 4 || y->ndim != 4 || l->dt != dt) return -1;
    if (mop == BK_MOP_CONCAT) return CM_CONCAT;
    if (mop == BK_MOP_RESIZE) return CM_RESIZE;
    if (mop == BK_MOP_ELEM)   /* its one-step program over the buffers, no scratch registers */
        return l->nin == 2 && elem_scratch(l) == 0 && l->reg_dt[0] == dt && l->reg_dt[1] == dt &&
               l->reg_dt[l->out_reg] == dt ? CM_ELEM : -1;
    if (l->kind == BK_K_ELEM) {
        if (dt != ISA_I8 || strcmp(nd->op, "Int8Add") || l->act[0] || l->nin != nd->nin || l->nin < 1 || l->nin > 2 ||
            l->out_reg < l->nin || l->reg_dt[l->out_reg] != ISA_I8)
            return -1;
        for (int i = 0; i < l->nin; i++) {
            const IrTensor *x = &g->t[nd->in[i]];
            if (x->data || x->ndim != 4 || l->reg_dt[i] != ISA_I8) return -1;
            for (int d = 0; d < 4; d++) if (x->dims[d] != y->dims[d]) return -1;
        }
        int ns = elem_scratch(l);
        return ns >= 0 && ns <= CHAIN_MAX_SCR ? CM_ELEM : -1;
    }
    if ((l->kind != BK_K_CONV && l->kind != BK_K_POOL) || l->w_oihw || !width_ok(l)) return -1;
    if (l->kind == BK_K_POOL) return CM_WINDOW;
    if ((uint64_t)l->OC > 65535) return -1;
    if (dt != ISA_I8) return CM_WINDOW;
    return !strcmp(nd->op, "Int8Conv") && l->q_mode == BK_RQ_INT && !l->q_mm && l->xdt == ISA_I8 ? CM_QCONV : -1;
}

int bk_chain_can_join(const BkCtx *c, const BkLayer *ly)
{
    if (ly->node < 0 || ly->lw.kb_parts) return 0;
    if (bk_member_op(c, ly) != BK_MOP_NONE) return 1;
    if (ly->direct) return 0;
    if (ly->lw.kind == BK_K_CONV || ly->lw.kind == BK_K_POOL) return 1;
    return ly->lw.kind == BK_K_ELEM && !strcmp(c->g->nodes[ly->node].op, "Int8Add");
}

/* Offers plan sh (tiles tiles): a streamed one with its chunks from DRAM
 * and, where they may be staged (stage_ok), from the cluster's SRAM; the
 * cost model keeps the cheaper (--sram-weights always: the staged one
 * alone where it may be). */
static int push_plan(const BkCtx *c, BkLayer *ly, const BkChain *ch, ChainShape sh, int64_t tiles, AtlErr *e)
{
    int ws = stage_ok(c, ch, sh.nstream);
    sh.ws = 0;
    if (!(ws && c->wsram_always) && bk_push_shape(ly, &sh, sizeof sh, tiles, e)) return -1;
    sh.ws = 1;
    return ws ? bk_push_shape(ly, &sh, sizeof sh, tiles, e) : 0;
}

/* 1 when rows is a halving of OH (OH, ceil(OH / 2), ... 1: offered already). */
static int halving(int OH, int rows)
{
    for (int h = OH;; h = (h + 1) / 2) {
        if (h == rows) return 1;
        if (h == 1) return 0;
    }
}

/* Whole-row heights beside the halvings (the rows loop of bk_lower_chain
 * offered every halving that fits; nofit is the shortest halving above
 * the tallest that fits, 0 when all of OH fit): the tallest height that
 * fits below nofit (packing and a plan's scratch make the fit not quite
 * monotone in rows, so a short scan down, at most FIT_SCAN heights, not a
 * bisection), and for all the cores and for one cluster's (P of them) the
 * tallest height ceil(OH / ceil(j x P / N)), j = 1, 2, ..., that fits:
 * j slices for every core, the rows spread evenly (61 rows on 16 cores:
 * 4 rows, 16 slices). Each a new height only, priced
 * by the tile-shape search like the halvings (offered after them: a tie
 * keeps the halving). */
enum { FIT_SCAN = 64, EVEN_TRIES = 8 };
static int more_heights(const BkCtx *c, BkLayer *ly, BkChain *ch, int ns, int vdw, int nofit, AtlErr *e)
{
    int cand[3], n = 0;
    for (int rows = nofit - 1, k = 0; rows >= 1 && k < FIT_SCAN && !halving(ch->OH, rows); rows--, k++) {
        ch->rows = rows;
        if (layout(c, ly, ch) == 0) { cand[n++] = rows; break; }
    }
    EvenScan sc = {.least = 1, .div = ch->N, .tries = EVEN_TRIES, .below = nofit, .halvings = 1};
    even_heights(c, ly, ch, &sc, cand, &n);
    ChainShape sh = {.cols = ch->OW, .nstream = ns, .vdw = vdw};
    return push_heights(c, ly, ch, sh, cand, n, e);
}

int bk_lower_chain(BkCtx *c, const BkLayer *const *members, int nm, BkLayer *ly, AtlErr *e)
{
    if (nm < 2 || nm > BK_CHAIN_MAX) return 1;
    BkChain *ch = calloc(1, sizeof *ch);
    if (!ch) return atl_fail(e, "out of memory");
    int rc = 1;
    const IrGraph *g = c->g;
    /* float members in BkCtx.dt, or int8 members in i8 */
    ch->dt = members[0]->lw.dt == ISA_I8 ? ISA_I8 : c->dt;
    ch->es = isa_dtype_size(ch->dt);
    for (int i = 0; i < nm; i++)
        if ((ch->m[i].kind = member_kind(c, members[i], ch->dt)) < 0) goto done;
    ch->nm = nm;
    int mat_before = 0;   /* a member before is a conv on the matrix unit */
    for (int i = 0; i < nm; i++) {
        const BkLayer *m = members[i];
        const BkLow *l = &m->lw;
        const IrNode *n = &g->nodes[m->node];
        ChainMember *cm = &ch->m[i];
        cm->ly = m;
        int OC, OH, OW;
        int own = cm->kind != CM_WINDOW && cm->kind != CM_QCONV;   /* dims from its tensors */
        if (own) {
            const IrTensor *y = &g->t[n->out[0]];
            cm->C = (int)y->dims[1]; cm->H = (int)y->dims[2]; cm->W = (int)y->dims[3];
            if ((int64_t)cm->C * cm->W > 65535) goto done;
        }
        if (cm->kind == CM_RESIZE) {
            int f[IR_MAXDIM];
            if (bk_resize_up(c, m->node, f)) goto done;
            cm->fh = f[2];
            cm->fw = f[3];
        }
        member_out(cm, &OC, &OH, &OW);
        const IrTensor *x0 = &g->t[n->in[0]];
        int in = own ? buf_of(c, ch, bk_tensor_root(c, n->in[0]), (int)x0->dims[1], (int)x0->dims[2], (int)x0->dims[3], e)
                     : buf_of(c, ch, bk_tensor_root(c, n->in[0]), l->C, l->H, l->W, e);
        int rt = cm->kind == CM_ELEM ? (l->nin > 1 ? n->in[1] : -1)
               : cm->kind == CM_CONCAT ? n->in[1] : cm->kind == CM_RESIZE || cm->kind == CM_LRESIZE ? -1 : residual_of(c, m->node);
        const IrTensor *xr = rt >= 0 ? &g->t[rt] : NULL;
        cm->pc = cm->kind == CM_ELEM && ch->dt != ISA_I8 && rt >= 0 && bk_member_per_channel(g, rt, &g->t[n->out[0]]);
        int res = rt >= 0 ? buf_of(c, ch, bk_tensor_root(c, rt), (int)xr->dims[1], (int)xr->dims[2], (int)xr->dims[3], e) : -1;
        if (in == -2 || res == -2) { rc = -1; goto done; }
        if (in < 0 || (rt >= 0 && res < 0)) goto done;
        cm->nx = 0;
        for (int x = 2; cm->kind == CM_CONCAT && x < n->nin; x++) {
            const IrTensor *xt = &g->t[n->in[x]];
            int b = buf_of(c, ch, bk_tensor_root(c, n->in[x]), (int)xt->dims[1], (int)xt->dims[2], (int)xt->dims[3], e);
            if (b == -2) { rc = -1; goto done; }
            if (b < 0) goto done;
            cm->xin[cm->nx++] = b;
        }
        cm->in = in;
        cm->res = res;
        /* the member's output: a new buffer, no longer a group input */
        int ot = bk_tensor_root(c, n->out[0]);
        for (int b = 0; b < ch->nb; b++) if (ch->buf[b].t == ot) goto done;   /* read before it is written */
        if (ch->nb == CHAIN_MAX_BUFS) goto done;
        ChainBuf *bo = &ch->buf[ch->nb];
        memset(bo, 0, sizeof *bo);
        bo->t = ot;
        bo->C = OC; bo->H = OH; bo->W = OW;
        cm->out = ch->nb++;
        if (i < nm - 1 && read_outside(c, ot, members, nm)) goto done;
        /* its weights (resident or streamed: resident_plan); a conv of one
         * group with more channels than one aligned chunk may stream */
        if (l->kind == BK_K_CONV) {
            cm->wbytes = (uint64_t)l->kh * l->kw * (l->C / l->groups) * l->OC * ch->es;
            /* only after a matrix conv: the wait for the resident weights'
             * multicast is on the matrix stream, which hands over to the
             * vector one within a slice (a vector depthwise first read its
             * weights while the multicast still wrote them, on a1-noc) */
            cm->dwv = cm->kind == CM_WINDOW && ch->dt == ISA_F32 && mat_before && bk_dw_chain_ok(c, l);
            ch->ndw += cm->dwv;
            mat_before |= !cm->dwv;
            if (l->groups == 1 && (uint64_t)l->OC * ch->es > c->align) {
                int k = ch->nelig++;
                while (k > 0 && ch->m[ch->elig[k - 1]].wbytes < cm->wbytes) { ch->elig[k] = ch->elig[k - 1]; k--; }
                ch->elig[k] = i;
            }
        }
        /* int8 members' scratch: an i32 accumulator, the program's registers */
        if (cm->kind == CM_QCONV || cm->kind == CM_ELEM) {
            ch->scr_row = ch->scr_row > (uint64_t)OW * OC * 4 ? ch->scr_row : (uint64_t)OW * OC * 4;
            ch->nscr = imax(ch->nscr, cm->kind == CM_QCONV ? 1 : elem_scratch(l));
        }
    }
    /* int8 members address rows inside their buffers: every row aligned */
    for (int b = 0; b < ch->nb && ch->dt == ISA_I8; b++)
        if ((uint64_t)ch->buf[b].W * ch->buf[b].C % c->align) goto done;
    /* a member's input that a later member writes is not a group input */
    for (int i = 0; i < nm; i++)
        for (int j = i; j < nm; j++) {
            if (ch->m[i].in == ch->m[j].out || ch->m[i].res == ch->m[j].out) goto done;
            for (int x = 0; x < ch->m[i].nx; x++) if (ch->m[i].xin[x] == ch->m[j].out) goto done;
        }
    /* the new members' alignment (members_unsound: the checker's
     * conditions; W slices are refused later, cols_ok) */
    {
        AtlErr ign;
        int nwc = ch->nwc;
        ch->nwc = 1;
        for (int i = 0; i < nm; i++)
            if (members_unsound(c, ch, &ch->m[i], &ign)) { ch->nwc = nwc; goto done; }
        ch->nwc = nwc;
    }
    /* the group's output shares no DRAM byte with its inputs: placement
     * (alloc/place.c) runs before groups exist and may give a layer's
     * output the space of an input that is dead once the member reading
     * it is done, but in a group other cores' slices still read that
     * input while one stores its rows (the simulator's race detector
     * found this on ResNet-50 bf16); except an input whose bytes the
     * output takes exactly, where each slice reads only what it stores
     * over (placement split's residual tails in place) */
    int gout = ch->buf[ch->m[nm - 1].out].t;
    uint64_t oa;
    if (bk_tensor_in_dram(c, gout, &oa, e)) { rc = -1; goto done; }
    uint64_t oz = (uint64_t)ir_numel(&g->t[gout]) * (uint64_t)bk_tensor_es(c, gout);
    const ChainBuf *ob = &ch->buf[ch->m[nm - 1].out];
    ch->inplace = -1;
    /* the last member's output address (a DMA layer's is its tensor's) */
    ch->y = ch->m[nm - 1].kind == CM_CONCAT || ch->m[nm - 1].kind == CM_RESIZE || ch->m[nm - 1].kind == CM_LRESIZE
          ? oa : members[nm - 1]->lw.y;
    for (int b = 0; b < ch->nb; b++) {
        const ChainBuf *in = &ch->buf[b];
        if (!in->dram) continue;
        uint64_t iz = (uint64_t)ir_numel(&g->t[in->t]) * (uint64_t)bk_tensor_es(c, in->t);
        if (!(in->dram < oa + oz && oa < in->dram + iz)) continue;
        /* written over exactly (a residual tail in place, alloc/place.c):
         * allowed where each slice reads just the box it stores over
         * (layout, inplace_ok) */
        if (in->dram != oa || iz != oz || in->C != ob->C || in->H != ob->H || in->W != ob->W || ch->inplace >= 0) goto done;
        ch->inplace = b;
    }
    int lastC;
    ch->N = (int)g->t[g->nodes[members[nm - 1]->node].out[0]].dims[0];
    member_out(&ch->m[nm - 1], &lastC, &ch->OH, &ch->OW);
    ly->chain = ch;
    ly->lw.kind = BK_K_CHAIN;
    ly->lw.dt = ch->dt;
    ly->lw.es = ch->es;
    ly->gen = chain_gen;
    ly->is_matrix = 1;
    for (int i = 0; i < nm; i++) ly->macs += members[i]->macs;
    /* candidate slice heights: every halving that fits, most rows first,
     * then the few more of more_heights (the tallest that fits, the
     * tallest spreading the rows evenly over the cores); when the weights of all members leave no room for any, the same
     * with the 1, 2, ... largest weights streamed (--group-weights
     * resident: never; stream: only those, when some member may) */
    int ns0 = c->weights_stream && ch->nelig ? 1 : 0, ns1 = c->weights_resident ? 0 : ch->nelig;
    /* every plan twice when some depthwise member may take the vector
     * unit: with it on the matrix unit, then on the vector unit (the
     * search keeps the cheaper; lower/dwvec.c) */
    for (int vdw = 0; vdw <= (ch->ndw > 0); vdw++) {
    int vbase = ly->shapes.n;
    ch->vdw = vdw;
    for (int ns = ns0; ns <= ns1; ns++) {
        if (ns == 1 && ly->shapes.n > vbase) break;   /* every member's weights resident fit */
        ch->nstream = ns;
        /* whole rows first; W slices (float chains) only where none fit,
         * each column width with the most rows that fit (fewer rows only
         * recompute more halo), and of those the two with the fewest MACs
         * with their halos (pricing more costs compile time; on ResNet-50
         * the others priced at most 1% cheaper, mostly dearer) */
        int before = ly->shapes.n, nw = 0, nofit = 0, anyfit = 0;
        ChainShape wsh[32];
        uint64_t wmacs[32];
        int64_t wtiles[32];
        for (int cols = ch->OW;; cols = (cols + 1) / 2) {
            for (int rows = ch->OH;; rows = (rows + 1) / 2) {
                ChainShape sh = {.rows = rows, .cols = cols, .nstream = ns, .vdw = vdw};
                ch->rows = rows;
                ch->cols = cols;
                int fits = layout(c, ly, ch) == 0;
                int64_t tiles = (int64_t)ch->N * ch->nrc * ch->nwc * ch->nsteps;
                if (cols == ch->OW && !fits && !anyfit) nofit = rows;
                anyfit |= cols == ch->OW && fits;
                if (fits && cols == ch->OW) {
                    if (push_plan(c, ly, ch, sh, tiles, e)) { rc = -1; goto done; }
                } else if (fits && nw < 32) {
                    int k = nw++;
                    uint64_t mc = run_macs(ch);
                    for (; k > 0 && wmacs[k - 1] > mc; k--) { wsh[k] = wsh[k - 1]; wmacs[k] = wmacs[k - 1]; wtiles[k] = wtiles[k - 1]; }
                    wsh[k] = sh; wmacs[k] = mc; wtiles[k] = tiles;
                    break;
                }
                if (rows == 1) break;
            }
            /* (not with the depthwise on the vector unit: a W-sliced group's
             * output leaves the SRAM bands, which the group search does not
             * price in its consumer; MobileNetV2-1.0's stem group was 2%
             * slower for it) */
            if (cols == 1 || ch->dt == ISA_I8 || vdw || (cols == ch->OW && ly->shapes.n > before)) break;
        }
        ch->cols = ch->OW;
        if (anyfit && more_heights(c, ly, ch, ns, vdw, nofit, e)) { rc = -1; goto done; }
        for (int k = 0; k < nw && k < 2; k++)
            if (push_plan(c, ly, ch, wsh[k], wtiles[k], e)) { rc = -1; goto done; }
    }
    }
    /* C slices of an inverted residual block: each count of hidden
     * slices (a distinct slice width) with every height that fits;
     * --group-cslice only: just those */
    if (cs_eligible(ch) && !c->cslice_never) {
        if (c->cslice_only) ly->shapes.n = 0;
        static const int counts[] = {2, 3, 4, 6, 8};
        ch->vdw = ch->m[1].dwv;   /* the depthwise on the vector unit where it may */
        for (int i = 0; i < (int)(sizeof counts / sizeof counts[0]); i++) {
            ch->csl = counts[i];
            for (int rows = ch->OH;; rows = (rows + 1) / 2) {
                ChainShape sh = {.rows = rows, .cols = ch->OW, .vdw = ch->vdw, .csl = counts[i]};
                ch->rows = rows;
                ch->cols = ch->OW;
                if (cs_layout(c, ly, ch) == 0 && bk_push_shape(ly, &sh, sizeof sh, (int64_t)ch->N * ch->nrc, e)) { rc = -1; goto done; }
                if (rows == 1) break;
            }
        }
        ch->csl = 0;
    }
    if (xc_eligible(ch) && !c->cslice_never && xc_offer(c, ly, ch, e)) { rc = -1; goto done; }
    if (ost_eligible(ch) && !c->weights_resident && ost_offer(c, ly, ch, e)) { rc = -1; goto done; }
    if (!ly->shapes.n) { ly->chain = NULL; goto done; }
    ly->shapes.apply = apply_rows;
    return 0;
done:
    if (ly->chain == ch) ly->chain = NULL;
    free(ch);
    return rc;
}

int bk_chain_nodes(const BkLayer *ly, int *nodes, int max)
{
    const BkChain *ch = ly->chain;
    if (!ch) return ly->lw.kind == BK_K_ATTN ? bk_attn_nodes(ly, nodes, max) : 0;
    for (int i = 0; i < ch->nm && i < max; i++) nodes[i] = ch->m[i].ly->node;
    return ch->nm;
}

int bk_chain_tile_rows(const BkLayer *ly, int t, int *r0, int *r1, int *oc)
{
    const BkChain *ch = ly->chain;
    int xc = ch && ch->xc ? ch->xc : 1;
    if (!ch || ch->nstream || ch->N != 1 || ch->rows < 1 || t < 0 || t >= ch->nrc * xc || ch->m[ch->nm - 1].kind != CM_WINDOW)
        return -1;
    int OH, OW;
    member_out(&ch->m[ch->nm - 1], oc, &OH, &OW);
    t /= xc;   /* channel slices across cores: the tiles of a row chunk */
    *r0 = t * ch->rows;
    *r1 = imin(*r0 + ch->rows, ch->OH);
    return 0;
}

void bk_chain_tile_chans(const BkLayer *ly, int t, int *c0, int *c1)
{
    const BkChain *ch = ly->chain;
    if (!ch || !ch->xc) return;
    *c0 = t % ch->xc * ch->xn;
    *c1 = imin(*c0 + ch->xn, ch->m[0].ly->lw.OC);
}

int bk_chain_streams(const BkLayer *ly)
{
    return ly->chain && ly->chain->nstream > 0;
}

int bk_chain_cslices(const BkLayer *ly)
{
    return ly->chain && (ly->chain->csl > 0 || ly->chain->xc > 0);
}

uint64_t bk_chain_lmem(const BkLayer *ly)
{
    return ly->chain ? ly->slot_off + 2 * ly->chain->used : 0;
}

void bk_chain_mark_internal(BkCtx *c, const BkLayer *ly)
{
    const BkChain *ch = ly->chain;
    if (ly->lw.kind == BK_K_ATTN) bk_attn_mark_internal(c, ly);
    for (int i = 0; ch && i < ch->nm - 1; i++) c->pl[ch->buf[ch->m[i].out].t].internal = 1;
}

int bk_chain_buffers(const BkLayer *ly) { return ly->chain ? ly->chain->nb : 0; }

uint64_t *bk_chain_buffer_off(BkLayer *ly, int b)
{
    return ly->chain && b >= 0 && b < ly->chain->nb ? &ly->chain->buf[b].off : NULL;
}

int bk_chain_shared_pairs(const BkLayer *ly)
{
    const BkChain *ch = ly->chain;
    int n = 0;
    for (int b = 0; ch && b < ch->nb; b++) {
        const ChainBuf *x = &ch->buf[b];
        uint64_t xe = x->off + (uint64_t)x->max_px * x->C * ch->es;
        for (int a = 0; a < b; a++) {
            const ChainBuf *y = &ch->buf[a];
            n += x->off < y->off + (uint64_t)y->max_px * y->C * ch->es && y->off < xe;
        }
    }
    return n;
}
