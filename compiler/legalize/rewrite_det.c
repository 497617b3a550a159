/* rewrite_det.c - Det of matrices up to 3x3 as ops the chip lowers.
 *
 * Reads: a Det node of the backend's private, shape-inferred copy; x is
 *   [..., n, n].
 * Does: the Leibniz formula, det = sum over the permutations s of n of
 *   sign(s) * a[0][s0] * ... * a[n-1][s(n-1)]. x is seen as [B, n*n]; the
 *   even permutations and the odd ones form two groups; per group and row
 *   i one Gather (axis 1) of the elements a[i][s(i)] of every permutation
 *   of the group gives [B, count], the n of them multiplied; a ReduceSum
 *   per group, even minus odd, a Reshape to the output's shape. No
 *   constant of the input's dtype is needed, so float64 and float16 work
 *   as they are.
 * Not lowered: n > 3 (an error naming the node and n): n! terms grow fast
 *   and f32 cancellation makes the explicit formula inexact.
 * Why: Gathers, Muls and reductions are existing lowerings. */
#include <stdio.h>
#include <string.h>
#include "compiler/legalize/legalize.h"

#define DET_MAXN 3
#define DET_MAXPERM 6 /* 3! */

/* The permutations of n, split by parity: perms[parity][k][i]. */
static void permutations(int n, int perms[2][DET_MAXPERM][DET_MAXN], int cnt[2])
{
    int total = 1;
    cnt[0] = cnt[1] = 0;
    for (int i = 0; i < n; i++) total *= n;
    for (int code = 0; code < total; code++) {
        int s[DET_MAXN], used = 0, ok = 1, inv = 0;
        for (int i = 0, c = code; i < n; i++, c /= n) {
            s[i] = c % n;
            ok &= !(used >> s[i] & 1);
            used |= 1 << s[i];
        }
        if (!ok) continue;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) inv += s[i] > s[j];
        memcpy(perms[inv & 1][cnt[inv & 1]++], s, sizeof s);
    }
}

/* The sum over one parity group's products, [B]. */
static int group_sum(IrGraph *g, const char *base, int flat, int n, int par, int perms[DET_MAXPERM][DET_MAXN], int cnt,
                     AtlErr *e)
{
    char w[64];
    int prod = -1;
    for (int i = 0; i < n; i++) {
        int64_t idx[DET_MAXPERM];
        for (int k = 0; k < cnt; k++) idx[k] = (int64_t)i * n + perms[k][i];
        snprintf(w, sizeof w, "det_p%d_row%d_idx", par, i);
        int it = bk_rw_int_const(g, base, w, idx, cnt, e);
        snprintf(w, sizeof w, "det_p%d_row%d", par, i);
        int ins[2] = {flat, it}, gy = it < 0 ? -1 : bk_rw_tensor(g, base, w, e), k;
        if (gy < 0 || (k = bk_rw_node(g, "Gather", base, ins, 2, gy, e)) < 0 || ir_set_attr_int(g, k, "axis", 1, e)) return -1;
        if (prod >= 0) {
            int mi[2] = {prod, gy};
            snprintf(w, sizeof w, "det_p%d_prod%d", par, i);
            gy = bk_rw_op(g, "Mul", base, w, mi, 2, e);
            if (gy < 0) return -1;
        }
        prod = gy;
    }
    int64_t axis = 1;
    snprintf(w, sizeof w, "det_p%d_sum", par);
    return bk_rw_reduce(g, "ReduceSum", base, w, prod, &axis, 1, 0, -1, e);
}

int bk_rewrite_det(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *nd = &g->nodes[node];
    int x = nd->in[0], y = nd->out[0], r = g->t[x].ndim;
    const char *name = nd->name ? nd->name : "?";
    int64_t n = r >= 2 ? g->t[x].dims[r - 1] : 0, B = 1, yd[IR_MAXDIM];
    if (r < 2 || n < 1 || g->t[x].dims[r - 2] != n) return atl_fail(e, "node '%s' (Det): input must be [..., n, n]", name);
    if (n > DET_MAXN)
        return atl_fail(e, "node '%s' (Det): %lld x %lld matrices (the chip lowers n <= %d by the explicit formula)", name,
                        (long long)n, (long long)n, DET_MAXN);
    for (int d = 0; d < r - 2; d++) B *= g->t[x].dims[d];
    int yr = g->t[y].ndim;
    for (int d = 0; d < yr; d++) yd[d] = g->t[y].dims[d];
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int perms[2][DET_MAXPERM][DET_MAXN], cnt[2];
    permutations((int)n, perms, cnt);
    int64_t fd[2] = {B, n * n};
    int flat = bk_rw_reshape(g, base, "det_flat", x, fd, 2, e);
    int even = flat < 0 ? -1 : group_sum(g, base, flat, (int)n, 0, perms[0], cnt[0], e);
    int det = even;
    if (even >= 0 && cnt[1]) {
        int odd = group_sum(g, base, flat, (int)n, 1, perms[1], cnt[1], e);
        int si[2] = {even, odd};
        det = odd < 0 ? -1 : bk_rw_op(g, "Sub", base, "det_value", si, 2, e);
    }
    return det < 0 || bk_rw_reshape_to(g, base, "det_out", det, yd, yr, y, e) < 0 ? -1 : 0;
}
