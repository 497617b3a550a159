/* test_backend_ops.c - the backend op by op: small graphs built in code
 * (odd sizes, broadcasts, groups, strides, dilations, padding, transposes),
 * compiled for configs/tiny.ini and configs/a1.ini, run on the simulator
 * and compared with the reference interpreter. Each compiled program is
 * also checked structurally:
 *   - tile planner: every matrix/vector operand and every LMEM end of a DMA
 *     lies inside LMEM, matrix/vector operands are aligned to the chip's
 *     LMEM alignment;
 *   - pipeline emitter: per core, every semaphore is signalled exactly as
 *     often as it is waited on (no leftover counts, no wait without a
 *     signal), every engine stream has the same number of barriers and
 *     ends with `end`; the simulator (race detector on) ran it to the end.
 * Plus error messages that name the node and op. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static uint32_t rng = 1;

static int cst(IrGraph *g, const char *name, int ndim, const int64_t *dims, float scale)
{
    return e2e_rand_const(g, name, ndim, dims, scale, &rng);
}

static int cst_i64(IrGraph *g, const char *name, int n, const int64_t *v)
{
    AtlErr e;
    int64_t d = n;
    return ir_add_const(g, name, IR_I64, 1, &d, v, &e);
}

static int cst_scalar(IrGraph *g, const char *name, float v)
{
    AtlErr e;
    return ir_add_const(g, name, IR_F32, 0, NULL, &v, &e);
}

/* Structural checks of a compiled program (see the file comment). */
static void check_program(const AtlProgram *p, const char *chipfile, const char *what)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load(chipfile, &chip, &e) == 0);
    /* signals of a multicast DMA land on every core of its mask */
    int (*sig)[ISA_MAX_SEMAPHORES] = calloc((size_t)p->ncores, sizeof *sig);
    REQUIRE(sig);
    for (int core = 0; core < p->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            const AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
            for (int i = 0; i < s->count; i++) {
                const AtlInsn *in = &s->insns[i];
                if (!in->signal) continue;
                if ((in->op == ISA_OP_DMA_COPY || in->op == ISA_OP_DMA_FILL) && in->dst_space == ISA_SPACE_LMEM && in->mask) {
                    int base = core / chip.cores_per_cluster * chip.cores_per_cluster;
                    for (int k = 0; k < chip.cores_per_cluster; k++)
                        if (in->mask >> k & 1) sig[base + k][in->signal - 1]++;
                } else sig[core][in->signal - 1]++;
            }
        }
    for (int core = 0; core < p->ncores; core++) {
        int wai[ISA_MAX_SEMAPHORES] = {0}, bars[ISA_NUM_ENGINES] = {0};
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            const AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
            CHECKF(s->count > 0 && s->insns[s->count - 1].op == ISA_OP_END, "%s: core %d engine %d does not end with end", what, core, eng);
            for (int i = 0; i < s->count; i++) {
                const AtlInsn *in = &s->insns[i];
                if (in->wait) wai[in->wait - 1]++;
                if (in->op == ISA_OP_BARRIER) bars[eng]++;
                int f = isa_ops[in->op].format;
                if (f == ISA_FMT_MM || f == ISA_FMT_CONV || f == ISA_FMT_VBIN || f == ISA_FMT_VUN || f == ISA_FMT_VPOOL ||
                    f == ISA_FMT_VRED || f == ISA_FMT_VCAST) {
                    CHECKF(in->dst % (uint64_t)chip.lmem_alignment == 0 && in->src % (uint64_t)chip.lmem_alignment == 0,
                           "%s: core %d: misaligned operand of %s", what, core, isa_ops[in->op].mnemonic);
                    CHECKF(in->dst < (uint64_t)chip.lmem_bytes && in->src < (uint64_t)chip.lmem_bytes,
                           "%s: core %d: operand outside LMEM", what, core);
                }
                if (in->op == ISA_OP_DMA_COPY && in->dst_space == ISA_SPACE_LMEM)
                    CHECKF(in->dst < (uint64_t)chip.lmem_bytes, "%s: DMA into LMEM beyond its size", what);
            }
        }
        for (int k = 0; k < ISA_MAX_SEMAPHORES; k++)
            CHECKF(sig[core][k] == wai[k], "%s: core %d semaphore %d signalled %d times, waited %d times", what, core, k, sig[core][k], wai[k]);
        CHECKF(bars[0] == bars[1] && bars[1] == bars[2], "%s: core %d barrier counts differ per engine", what, core);
    }
    free(sig);
}

static void run_graph(IrGraph *g, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) {
        IrGraph copy;
        /* each chip gets a fresh copy: passes modify the graph */
        PbBuf pb = {0};
        AtlErr e;
        REQUIRE(onnx_save_buffer(g, &pb, &e) == 0);
        REQUIRE(onnx_load_buffer(pb.p, pb.n, what, &copy, &e) == 0);
        pb_free(&pb);
        double err;
        char msg[1024] = "";
        AtlProgram p;
        memset(&p, 0, sizeof p);
        int rc = e2e_graph(&copy, chips[c], ISA_F32, &err, &p, msg, sizeof msg);
        printf("  %-22s %-18s max err %.3g%s%s\n", what, chips[c], rc ? -1.0 : err, rc ? " ERROR: " : "", msg);
        CHECKF(rc == 0, "%s on %s: %s", what, chips[c], msg);
        if (rc == 0) {
            CHECKF(err <= tol, "%s on %s: error %g > %g", what, chips[c], err, tol);
            check_program(&p, chips[c], what);
            prog_free(&p);
        }
        ir_free(&copy);
    }
}

static void new_graph(IrGraph *g, const char *in, int ndim, const int64_t *dims)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, in, IR_F32, ndim, dims, &e);
}

TEST(conv_grouped_strided)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 4, 9, 11}, wd[4] = {6, 2, 3, 3}, bd[1] = {6};
    new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    int n = ir_add_op(&g, "Conv", "conv", "x,w,b", "y", &e);
    int64_t pads[4] = {1, 0, 2, 1}, st[2] = {2, 2};
    ir_set_attr_int(&g, n, "group", 2, &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(&g, n, "strides", st, 2, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv groups=2 s2", 1e-5);
    ir_free(&g);
}

TEST(conv_dilated_relu)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 12, 12}, wd[4] = {5, 3, 3, 3};
    new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    int n = ir_add_op(&g, "Conv", "conv", "x,w", "c", &e);
    int64_t pads[4] = {2, 2, 2, 2}, dl[2] = {2, 2};
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(&g, n, "dilations", dl, 2, &e);
    ir_add_op(&g, "Relu", "relu", "c", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv dil=2 +relu", 1e-5);
    ir_free(&g);
}

TEST(conv_depthwise_clip)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 8, 10, 10}, wd[4] = {8, 1, 3, 3}, bd[1] = {8};
    new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 1.0f);
    cst(&g, "b", 1, bd, 0.5f);
    cst_scalar(&g, "lo", 0.0f);
    cst_scalar(&g, "hi", 0.5f);
    int n = ir_add_op(&g, "Conv", "dw", "x,w,b", "c", &e);
    int64_t pads[4] = {1, 1, 1, 1};
    ir_set_attr_int(&g, n, "group", 8, &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_add_op(&g, "Clip", "clip", "c,lo,hi", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "depthwise +clip", 1e-5);
    ir_free(&g);
}

TEST(gemm_transposed)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {7, 5}, bd[2] = {4, 7}, cd[1] = {4};
    new_graph(&g, "x", 2, xd);
    cst(&g, "B", 2, bd, 0.5f);
    cst(&g, "C", 1, cd, 0.5f);
    int n = ir_add_op(&g, "Gemm", "gemm", "x,B,C", "y", &e);
    ir_set_attr_int(&g, n, "transA", 1, &e);
    ir_set_attr_int(&g, n, "transB", 1, &e);
    ir_set_attr_float(&g, n, "alpha", 0.5f, &e);
    ir_set_attr_float(&g, n, "beta", 2.0f, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "gemm transA transB", 1e-5);
    ir_free(&g);
}

TEST(matmul_batched_and_activations)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {3, 5, 16}, bd[2] = {16, 9}, biasd[1] = {9}, perm[3] = {0, 2, 1};
    new_graph(&g, "x", 3, xd);
    cst(&g, "B", 2, bd, 0.5f);
    cst(&g, "bias", 1, biasd, 0.5f);
    ir_add_op(&g, "MatMul", "mm", "x,B", "m", &e);
    ir_add_op(&g, "Add", "add", "m,bias", "a", &e);                 /* [3,5,9] */
    int t = ir_add_op(&g, "Transpose", "tr", "a", "at", &e);        /* [3,9,5] */
    ir_set_attr_ints(&g, t, "perm", perm, 3, &e);
    ir_add_op(&g, "MatMul", "mm2", "a,at", "y", &e);                /* [3,5,5] both activations */
    ir_add_output(&g, "y", &e);
    run_graph(&g, "matmul batched x act", 1e-5);
    ir_free(&g);
}

TEST(elementwise_broadcast)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 5}, c1[3] = {3, 1, 1}, c2[1] = {5}, c3[3] = {1, 4, 1};
    new_graph(&g, "x", 4, xd);
    cst(&g, "c1", 3, c1, 1.0f);
    cst(&g, "c2", 1, c2, 1.0f);
    int t3 = cst(&g, "c3", 3, c3, 1.0f);
    for (int i = 0; i < 4; i++) ((float *)g.t[t3].data)[i] = 1.5f + (float)i;   /* no division by ~0 */
    ir_add_op(&g, "Add", "add", "x,c1", "a", &e);
    ir_add_op(&g, "Mul", "mul", "a,c2", "b", &e);
    ir_add_op(&g, "Div", "div", "b,c3", "c", &e);
    ir_add_op(&g, "Sub", "sub", "c,x", "d", &e);
    ir_add_op(&g, "Max", "max", "d,c2", "f", &e);
    ir_add_op(&g, "Min", "min", "f,c1", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "add/mul/div/sub/max/min", 1e-5);
    ir_free(&g);
}

TEST(activations)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 37};
    new_graph(&g, "x", 2, xd);
    ir_add_op(&g, "Sigmoid", "sig", "x", "a", &e);
    ir_add_op(&g, "Tanh", "tanh", "a", "b", &e);
    int n = ir_add_op(&g, "LeakyRelu", "lrelu", "x", "c", &e);
    ir_set_attr_float(&g, n, "alpha", 0.2f, &e);
    ir_add_op(&g, "HardSwish", "hsw", "c", "d", &e);
    ir_add_op(&g, "HardSigmoid", "hsg", "d", "f", &e);
    ir_add_op(&g, "Exp", "exp", "b", "h", &e);
    ir_add_op(&g, "Log", "log", "h", "i", &e);
    ir_add_op(&g, "Abs", "abs", "x", "j", &e);
    ir_add_op(&g, "Sqrt", "sqrt", "j", "k", &e);
    ir_add_op(&g, "Neg", "neg", "k", "l", &e);
    ir_add_op(&g, "Add", "s1", "f,i", "m", &e);
    ir_add_op(&g, "Add", "s2", "m,l", "o", &e);
    cst_scalar(&g, "three", 3.0f);
    ir_add_op(&g, "Pow", "pow", "o,three", "p", &e);
    ir_add_op(&g, "Reciprocal", "rec", "h", "q", &e);
    ir_add_op(&g, "Add", "s3", "p,q", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "unary chain", 1e-5);
    ir_free(&g);
}

TEST(softmax_and_reductions)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 6}, ax23[2] = {2, 3}, ax1[1] = {1};
    new_graph(&g, "x", 4, xd);
    ir_add_op(&g, "Softmax", "sm", "x", "a", &e);                   /* axis -1 */
    int n = ir_add_op(&g, "Softmax", "sm1", "x", "b", &e);
    ir_set_attr_int(&g, n, "axis", 1, &e);                           /* inner > 1 */
    ir_add_op(&g, "Add", "ab", "a,b", "c", &e);
    n = ir_add_op(&g, "ReduceMean", "rm", "c", "d", &e);             /* [2,3,1,1] */
    ir_set_attr_ints(&g, n, "axes", ax23, 2, &e);
    cst_i64(&g, "ax1", 1, ax1);
    ir_add_op(&g, "ReduceSum", "rs", "x,ax1", "f", &e);              /* [2,1,4,6], axes as input (opset 13+) */
    n = ir_add_op(&g, "ReduceMax", "rx", "f", "h", &e);              /* [2,1,4,6] -> [2,1,4] */
    int64_t axl[1] = {-1};
    ir_set_attr_ints(&g, n, "axes", axl, 1, &e);
    ir_set_attr_int(&g, n, "keepdims", 0, &e);
    ir_add_op(&g, "GlobalAveragePool", "gap0", "x", "gp0", &e);      /* [2,3,1,1] */
    n = ir_add_op(&g, "ReduceMin", "rmin", "x", "mn", &e);           /* [2,3,1,1] */
    ir_set_attr_ints(&g, n, "axes", ax23, 2, &e);
    ir_add_op(&g, "Add", "gpm", "gp0,mn", "gp", &e);
    ir_add_op(&g, "Add", "dg", "d,gp", "dd", &e);                    /* [2,3,1,1] */
    ir_add_op(&g, "Flatten", "fl", "dd", "fd", &e);                  /* [2,3] view */
    ir_add_op(&g, "Flatten", "fh", "h", "fh2", &e);                  /* [2,4] */
    n = ir_add_op(&g, "Concat", "cat", "fd,fh2", "y", &e);           /* [2,7] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "softmax/reduce/concat", 1e-5);
    ir_free(&g);
}

TEST(pools)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 5, 11, 9}, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, k2[2] = {2, 2};
    new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, "MaxPool", "mp", "x", "a", &e);            /* [2,5,6,5] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    n = ir_add_op(&g, "AveragePool", "ap", "x", "b", &e);            /* [2,5,6,5] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    ir_set_attr_int(&g, n, "count_include_pad", 1, &e);
    ir_add_op(&g, "Add", "add", "a,b", "c", &e);
    n = ir_add_op(&g, "AveragePool", "ap2", "c", "y", &e);           /* [2,5,3,2] */
    ir_set_attr_ints(&g, n, "kernel_shape", k2, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "maxpool/avgpool", 1e-5);
    ir_free(&g);
}

TEST(data_movement)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 6, 5}, perm[4] = {0, 2, 3, 1};
    new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, "Transpose", "tr", "x", "t", &e);          /* [2,6,5,3] */
    ir_set_attr_ints(&g, n, "perm", perm, 4, &e);
    int64_t st[2] = {1, 0}, en[2] = {6, 5}, ax[2] = {1, 2}, sp[2] = {2, 2};
    cst_i64(&g, "st", 2, st); cst_i64(&g, "en", 2, en); cst_i64(&g, "ax", 2, ax); cst_i64(&g, "sp", 2, sp);
    ir_add_op(&g, "Slice", "sl", "t,st,en,ax,sp", "s", &e);          /* [2,3,3,3] */
    int64_t pads[8] = {0, 1, 0, 2, 0, 0, 1, 0};
    cst_i64(&g, "pads", 8, pads);
    cst_scalar(&g, "pv", 0.25f);
    ir_add_op(&g, "Pad", "pad", "s,pads,pv", "p", &e);               /* [2,4,4,5] */
    int64_t idx[3] = {3, 0, -1};
    cst_i64(&g, "idx", 3, idx);
    n = ir_add_op(&g, "Gather", "ga", "p,idx", "q", &e);             /* [2,3,4,5] axis 1 */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    int64_t split[2] = {1, 2};
    cst_i64(&g, "split", 2, split);
    n = ir_add_op(&g, "Split", "sp", "q,split", "q1,q2", &e);        /* [2,1,4,5] [2,2,4,5] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_op(&g, "Relu", "r", "q2", "r2", &e);
    n = ir_add_op(&g, "Concat", "cat", "r2,q1", "y", &e);            /* [2,3,4,5] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "transpose/slice/pad/gather/split/concat", 0);
    ir_free(&g);
}

static void resize_case(const char *what, const float *scales, const char *ctm, const char *nm, int expect_ok)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 3, 5, 4}, four = 4;
    new_graph(&g, "x", 4, xd);
    ir_add_const(&g, "roi", IR_F32, 1, (int64_t[]){0}, NULL, &e);
    ir_add_const(&g, "scales", IR_F32, 1, &four, scales, &e);
    int n = ir_add_op(&g, "Resize", "rs", "x,roi,scales", "r", &e);
    if (ctm) ir_set_attr_str(&g, n, "coordinate_transformation_mode", ctm, &e);
    if (nm) ir_set_attr_str(&g, n, "nearest_mode", nm, &e);
    ir_add_op(&g, "Relu", "relu", "r", "y", &e);          /* a consumer, so the Resize is not the output */
    ir_add_output(&g, "y", &e);
    if (expect_ok) run_graph(&g, what, 0);
    else {
        double err;
        char msg[1024] = "";
        CHECK(e2e_graph(&g, "configs/tiny.ini", ISA_F32, &err, NULL, msg, sizeof msg) != 0);
        CHECK_STR_CONTAINS(msg, "node 'rs' (Resize)");
        printf("  %-22s rejected: %s\n", what, msg);
    }
    ir_free(&g);
}

TEST(resize_nearest)
{
    const float up2[4] = {1, 1, 2, 2}, up3[4] = {1, 1, 3, 1}, down2[4] = {1, 1, 0.5f, 0.5f}, odd[4] = {1, 1, 1.5f, 1};
    resize_case("resize 2x half_pixel", up2, NULL, NULL, 1);
    resize_case("resize 3x asymmetric", up3, "asymmetric", "floor", 1);
    resize_case("resize 0.5x", down2, "asymmetric", "floor", 1);
    resize_case("resize 1.5x", odd, NULL, NULL, 0);
}

TEST(layernorm_opset17)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {2, 7, 24}, ld[1] = {24};
    new_graph(&g, "x", 3, xd);
    g.opset = 17;
    cst(&g, "gamma", 1, ld, 1.0f);
    cst(&g, "beta", 1, ld, 1.0f);
    ir_add_op(&g, "LayerNormalization", "ln", "x,gamma,beta", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "layernorm", 1e-5);
    ir_free(&g);
}

TEST(batchnorm_unfused)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 4, 3, 5}, cd[1] = {4};
    new_graph(&g, "x", 4, xd);
    cst(&g, "s", 1, cd, 1.0f);
    cst(&g, "bb", 1, cd, 1.0f);
    cst(&g, "m", 1, cd, 1.0f);
    int v = cst(&g, "v", 1, cd, 1.0f);
    for (int i = 0; i < 4; i++) ((float *)g.t[v].data)[i] = 0.5f + (float)i;
    ir_add_op(&g, "BatchNormalization", "bn", "x,s,bb,m,v", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "batchnorm", 1e-5);
    ir_free(&g);
}

TEST(unsupported_op_names_node)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[2] = {2, 3};
    new_graph(&g, "x", 2, xd);
    ir_add_op(&g, "Erf", "lonely_erf", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    double err;
    char msg[1024] = "";
    CHECK(e2e_graph(&g, "configs/tiny.ini", ISA_F32, &err, NULL, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "lonely_erf");
    CHECK_STR_CONTAINS(msg, "Erf");
    ir_free(&g);
}

int main(void)
{
    RUN(conv_grouped_strided);
    RUN(conv_dilated_relu);
    RUN(conv_depthwise_clip);
    RUN(gemm_transposed);
    RUN(matmul_batched_and_activations);
    RUN(elementwise_broadcast);
    RUN(activations);
    RUN(softmax_and_reductions);
    RUN(pools);
    RUN(data_movement);
    RUN(resize_nearest);
    RUN(layernorm_opset17);
    RUN(batchnorm_unfused);
    RUN(unsupported_op_names_node);
    return test_summary("test_backend_ops");
}
