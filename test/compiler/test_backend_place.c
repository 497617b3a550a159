/* test_backend_place.c - DRAM placement of compiled models, checked from the
 * .abm itself (the tensors a variant lists, with offsets and shapes):
 *   - any two activation tensors that are live at the same step (interval
 *     [producer node, last consumer node] in graph order) and are not views
 *     of one another occupy disjoint bytes of the activations region;
 *   - a view (Reshape/Flatten/...) has the same offset as the tensor it
 *     views, so it costs no copy;
 *   - io tensors are disjoint and inside the io region; every activation is
 *     inside the activations region;
 *   - reuse works: the activation region is smaller than the sum of the
 *     activations, and keep_activations makes it (at least) that sum;
 *   - identical constants are stored once (two Convs sharing one weight
 *     tensor add no weight bytes for the second). */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

typedef struct Span { const char *name; uint64_t off, size; int first, last, root; } Span;

/* Compiles `name` for a1 and checks the placement rules above. */
static void check_model(const char *name, int keep, uint64_t *act_bytes, uint64_t *act_sum)
{
    AtlErr e = {{0}};
    char path[256];
    AtlNdArray *ref = NULL;
    int nref = 0;
    snprintf(path, sizeof path, "models/%s.ref.npz", name);
    REQUIRE(atl_npz_read(path, &ref, &nref, &e) == 0);
    const AtlNdArray *rin = !strcmp(ref[0].name, "input") ? &ref[0] : &ref[1];
    IrGraph g;
    AtlChip chip;
    ir_init(&g);
    snprintf(path, sizeof path, "models/%s.onnx", name);
    REQUIRE(cfg_load("configs/a1.ini", &chip, &e) == 0);
    REQUIRE(e2e_load_model(path, rin, &g, &e) == 0);
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    BkOptions o;
    bk_options_default(&o);
    o.keep_activations = keep;
    o.group = BK_GROUP_NONE;   /* placement of every activation: no layer groups */
    BkSummary sum;
    uint8_t *buf = NULL;
    size_t len = 0;
    REQUIRE(w && bk_compile(&g, &chip, &o, w, &sum, &e) == 0 && abm_serialize(w, &buf, &len, &e) == 0);
    AbmModel m;
    memset(&m, 0, sizeof m);
    REQUIRE(abm_load_buffer(&m, buf, len, 0, ABM_LOAD_SKIP_WEIGHTS, &e) == 0);
    AbmVariant st = abm_variant(&m.view, 0);
    int n = (int)m.view.n_tensors;
    Span *sp = calloc((size_t)n, sizeof *sp);
    REQUIRE(sp);
    int na = 0;
    uint64_t io_end = 0;
    for (int i = 0; i < n; i++) {
        AbmTensor t = abm_tensor(&m.view, (uint32_t)i);
        if (t.region == ABM_REGION_IO) {
            CHECKF(t.offset + t.size <= st.io_bytes, "%s: io tensor %s outside the io region", name, t.name);
            CHECKF(t.offset >= io_end, "%s: io tensors overlap at %s", name, t.name);
            io_end = t.offset + t.size;
            continue;
        }
        if (t.role != ABM_ROLE_ACTIVATION) continue;
        CHECKF(t.offset + t.size <= st.activation_bytes, "%s: %s outside the activations region", name, t.name);
        int ti = ir_find(&g, t.name);
        REQUIRE(ti >= 0);
        /* liveness in graph order; a view's root is the tensor it views */
        int root = ti;
        while (g.t[root].is_view && g.t[root].producer >= 0) root = g.nodes[g.t[root].producer].in[0];
        int first = g.t[ti].producer, last = first;
        for (int k = 0; k < g.nn; k++)
            for (int j = 0; j < g.nodes[k].nin; j++)
                if (g.nodes[k].in[j] == ti && k > last) last = k;
        sp[na++] = (Span){t.name, t.offset, t.size, first, last, root};
        if (root != ti) {
            /* the viewed tensor is listed too: same offset */
            for (int j = 0; j < n; j++) {
                AbmTensor r = abm_tensor(&m.view, (uint32_t)j);
                if (!strcmp(r.name, g.t[root].name)) CHECKF(r.offset == t.offset, "%s: view %s not at its input's offset", name, t.name);
            }
        }
    }
    int pairs = 0;
    for (int i = 0; i < na; i++)
        for (int j = i + 1; j < na; j++) {
            if (sp[i].root == sp[j].root) continue;
            int live = sp[i].first <= sp[j].last && sp[j].first <= sp[i].last;
            int overlap = sp[i].off < sp[j].off + sp[j].size && sp[j].off < sp[i].off + sp[i].size;
            if (live) pairs++;
            CHECKF(!(live && overlap), "%s: %s [%llu,+%llu) and %s [%llu,+%llu) are live together and overlap", name,
                   sp[i].name, (unsigned long long)sp[i].off, (unsigned long long)sp[i].size, sp[j].name,
                   (unsigned long long)sp[j].off, (unsigned long long)sp[j].size);
        }
    CHECK(pairs > 0);
    *act_bytes = st.activation_bytes;
    *act_sum = sum.act_sum;
    printf("  %-16s keep=%d: %d activations, region %llu bytes, sum %llu bytes\n", name, keep, na,
           (unsigned long long)st.activation_bytes, (unsigned long long)sum.act_sum);
    free(sp);
    bk_summary_free(&sum);
    abm_model_free(&m);
    free(buf);
    abm_writer_free(w);
    ir_free(&g);
    atl_ndarray_list_free(ref, nref);
}

TEST(liveness_views_and_reuse)
{
    const char *models[] = {"resnet20_cifar", "encoder_block", "digits_cnn"};
    for (int i = 0; i < 3; i++) {
        uint64_t a, s, ak, sk;
        check_model(models[i], 0, &a, &s);
        check_model(models[i], 1, &ak, &sk);
        if (i < 2) CHECKF(a < s, "%s: no reuse (%llu vs %llu)", models[i], (unsigned long long)a, (unsigned long long)s);
        CHECKF(ak >= sk, "%s: keep_activations region %llu < sum %llu", models[i], (unsigned long long)ak, (unsigned long long)sk);
    }
}

TEST(shared_weights_stored_once)
{
    AtlErr e = {{0}};
    AtlChip chip;
    REQUIRE(cfg_load("configs/tiny.ini", &chip, &e) == 0);
    uint64_t bytes[2];
    for (int twice = 0; twice < 2; twice++) {
        IrGraph g;
        ir_init(&g);
        g.opset = 13;
        int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {4, 4, 3, 3};
        float wv[144];
        for (int i = 0; i < 144; i++) wv[i] = (float)(i % 7) * 0.125f - 0.375f;
        ir_add_input(&g, "x", IR_F32, 4, xd, &e);
        ir_add_const(&g, "w", IR_F32, 4, wd, wv, &e);
        int64_t pads[4] = {1, 1, 1, 1};
        int n = ir_add_op(&g, "Conv", "c1", "x,w", "y1", &e);
        ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
        if (twice) {
            n = ir_add_op(&g, "Conv", "c2", "y1,w", "y2", &e);
            ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
        }
        ir_add_output(&g, twice ? "y2" : "y1", &e);
        REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0 && pass_run_all(&g, &e) == 0);
        AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
        BkSummary sum;
        BkOptions o;
        bk_options_default(&o);
        o.group = BK_GROUP_NONE;   /* two layers, not one group */
        REQUIRE(w && bk_compile(&g, &chip, &o, w, &sum, &e) == 0);
        bytes[twice] = sum.weight_bytes;
        CHECK_EQ_INT(sum.nlayers, twice ? 2 : 1);
        bk_summary_free(&sum);
        abm_writer_free(w);
        ir_free(&g);
    }
    CHECK_EQ_INT(bytes[0], bytes[1]);
    CHECK_EQ_INT(bytes[0], 144 * 4);
}

int main(void)
{
    RUN(liveness_views_and_reuse);
    RUN(shared_weights_stored_once);
    return test_summary("test_backend_place");
}
