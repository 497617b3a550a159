/* test_backend_rnn.c - RNN, GRU and LSTM on the chip, unrolled by
 * compiler/legalize/rewrite_rnn.c: graphs built in code, compiled for
 * configs/tiny.ini and configs/a1.ini, simulated and compared with the
 * reference interpreter (fp32, relative 1e-4), plus the structural checks of
 * bk_graph_run.h. Covers forward, reverse and bidirectional; initial_h /
 * initial_c given or absent; B absent; sequence_lens absent or constant and
 * equal to the length; GRU linear_before_reset 0 and 1; LSTM peepholes;
 * clip; layout 0 and 1; each output absent or present; run-time W, R and B;
 * an opset-9 graph (Slice and Clip with attributes); and the clear error for
 * sequence_lens the unrolling cannot honour. */
#include <stdio.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

enum { OUT_Y = 1, OUT_YH = 2, OUT_YC = 4 };

typedef struct Case {
    const char *op, *dir;
    int layout, lbr, bias, h0, c0, peep, outs, opset;
    float clip;
    int seq_lens;  /* 0: absent, 1: constant equal to S, 2: one entry shorter */
    int runtime_w; /* W (the graph input), R and B computed at run time */
} Case;

enum { S = 4, NB = 2, NI = 3, NH = 4 };

static int gates_of(const char *op) { return !strcmp(op, "RNN") ? 1 : !strcmp(op, "GRU") ? 3 : 4; }

/* x -> op -> outputs; constants pseudo-random. */
static void rnn_graph(IrGraph *g, const Case *c)
{
    AtlErr e;
    int D = !strcmp(c->dir, "bidirectional") ? 2 : 1, G = gates_of(c->op), lstm = !strcmp(c->op, "LSTM");
    int64_t xd[3] = {S, NB, NI}, wd[3] = {D, G * NH, NI}, rd[3] = {D, G * NH, NH}, bd[2] = {D, 2 * G * NH};
    int64_t sd[3] = {D, NB, NH}, pd[2] = {D, 3 * NH};
    if (c->layout) { xd[0] = NB; xd[1] = S; sd[0] = NB; sd[1] = D; }
    char ins[128];
    new_graph(g, "x", 3, xd);
    cst(g, c->runtime_w ? "Wc" : "W", 3, wd, 0.6f);
    cst(g, c->runtime_w ? "Rc" : "R", 3, rd, 0.6f);
    if (c->bias) cst(g, c->runtime_w ? "Bc" : "B", 2, bd, 0.5f);
    if (c->runtime_w) {
        /* W, R, B scaled by a run-time scalar: s = 1 + mean(x) */
        ir_add_op(g, "ReduceMean", "mean_x", "x", "mx", &e);
        cst_scalar(g, "one", 1.0f);
        ir_add_op(g, "Add", "s_of_x", "mx,one", "s", &e);
        cst_i64(g, "s2_shape", 2, (const int64_t[]){1, 1});
        ir_add_op(g, "Reshape", "s2_of_s", "s,s2_shape", "s2", &e);
        ir_add_op(g, "Mul", "w_rt", "Wc,s", "W", &e);
        ir_add_op(g, "Mul", "r_rt", "Rc,s", "R", &e);
        if (c->bias) ir_add_op(g, "Mul", "b_rt", "Bc,s2", "B", &e);
    }
    if (c->opset) g->opset = c->opset;
    if (c->h0) cst(g, "h0", 3, sd, 0.8f);
    if (c->c0) cst(g, "c0", 3, sd, 0.8f);
    if (c->peep) cst(g, "P", 2, pd, 0.5f);
    if (c->seq_lens) {
        int32_t v[NB] = {S, c->seq_lens == 2 ? S - 1 : S};
        int64_t n = NB;
        ir_add_const(g, "sl", IR_I32, 1, &n, v, &e);
    }
    snprintf(ins, sizeof ins, "x,W,R,%s,%s,%s%s%s", c->bias ? "B" : "", c->seq_lens ? "sl" : "",
             c->h0 ? "h0" : "", lstm ? (c->c0 ? ",c0" : ",") : "", lstm ? (c->peep ? ",P" : ",") : "");
    char outs[64];
    snprintf(outs, sizeof outs, "%s,%s%s", c->outs & OUT_Y ? "Y" : "", c->outs & OUT_YH ? "Y_h" : "",
             lstm ? (c->outs & OUT_YC ? ",Y_c" : ",") : "");
    int n = ir_add_op(g, c->op, "rec", ins, outs, &e);
    REQUIRE(n >= 0);
    ir_set_attr_int(g, n, "hidden_size", NH, &e);
    ir_set_attr_str(g, n, "direction", c->dir, &e);
    if (c->layout) ir_set_attr_int(g, n, "layout", 1, &e);
    if (c->lbr) ir_set_attr_int(g, n, "linear_before_reset", 1, &e);
    if (c->clip > 0) ir_set_attr_float(g, n, "clip", c->clip, &e);
    if (c->outs & OUT_Y) ir_add_output(g, "Y", &e);
    if (c->outs & OUT_YH) ir_add_output(g, "Y_h", &e);
    if (c->outs & OUT_YC) ir_add_output(g, "Y_c", &e);
}

static void run_case(const char *what, const Case *c)
{
    IrGraph g;
    rnn_graph(&g, c);
    run_graph(&g, what, 1e-4);
    ir_free(&g);
}

TEST(rnn_directions_states_outputs)
{
    run_case("rnn fwd, no B/h0", &(Case){"RNN", "forward", .outs = OUT_Y | OUT_YH});
    run_case("rnn rev B h0 clip", &(Case){"RNN", "reverse", .bias = 1, .h0 = 1, .clip = 0.9f, .outs = OUT_Y});
    run_case("rnn bidir layout1", &(Case){"RNN", "bidirectional", .layout = 1, .bias = 1, .h0 = 1, .outs = OUT_YH});
    run_case("rnn bidir seq_lens", &(Case){"RNN", "bidirectional", .bias = 1, .seq_lens = 1, .outs = OUT_Y | OUT_YH});
}

TEST(gru_linear_before_reset)
{
    run_case("gru fwd lbr0 B h0", &(Case){"GRU", "forward", .bias = 1, .h0 = 1, .outs = OUT_Y | OUT_YH});
    run_case("gru bidir lbr1 B", &(Case){"GRU", "bidirectional", .lbr = 1, .bias = 1, .outs = OUT_Y | OUT_YH});
    run_case("gru rev lbr1 noB l1", &(Case){"GRU", "reverse", .lbr = 1, .layout = 1, .clip = 1.1f, .h0 = 1, .outs = OUT_Y});
    run_case("gru rev lbr0 noB", &(Case){"GRU", "reverse", .outs = OUT_YH});
}

TEST(lstm_peepholes_clip_layouts)
{
    run_case("lstm fwd noB all out", &(Case){"LSTM", "forward", .outs = OUT_Y | OUT_YH | OUT_YC});
    run_case("lstm bidir P clip Yc", &(Case){"LSTM", "bidirectional", .bias = 1, .h0 = 1, .c0 = 1, .peep = 1, .clip = 0.8f,
                                             .outs = OUT_YC});
    run_case("lstm rev l1 P seq_lens", &(Case){"LSTM", "reverse", .layout = 1, .bias = 1, .peep = 1, .seq_lens = 1,
                                               .outs = OUT_Y | OUT_YC});
    run_case("lstm bidir l1 h0 only", &(Case){"LSTM", "bidirectional", .layout = 1, .h0 = 1, .outs = OUT_Y | OUT_YH});
    run_case("lstm c0 only, Y_h", &(Case){"LSTM", "forward", .bias = 1, .c0 = 1, .outs = OUT_YH});
}

TEST(runtime_weights_and_old_opset)
{
    run_case("gru run-time W R B", &(Case){"GRU", "bidirectional", .lbr = 1, .bias = 1, .runtime_w = 1, .outs = OUT_Y | OUT_YH});
    run_case("lstm run-time W R B", &(Case){"LSTM", "forward", .bias = 1, .peep = 1, .runtime_w = 1, .outs = OUT_Y | OUT_YC});
    run_case("rnn run-time W R", &(Case){"RNN", "reverse", .runtime_w = 1, .h0 = 1, .outs = OUT_Y});
    run_case("lstm opset 9 clip", &(Case){"LSTM", "bidirectional", .opset = 9, .bias = 1, .peep = 1, .clip = 0.7f,
                                          .outs = OUT_Y | OUT_YH | OUT_YC});
}

TEST(unequal_sequence_lens_rejected)
{
    IrGraph g;
    rnn_graph(&g, &(Case){"GRU", "forward", .bias = 1, .seq_lens = 2, .outs = OUT_Y});
    expect_not_lowered(&g, "'rec' (GRU)", "sequence_lens must be a constant equal to the sequence length 4");
    ir_free(&g);
}

int main(void)
{
    RUN(rnn_directions_states_outputs);
    RUN(gru_linear_before_reset);
    RUN(lstm_peepholes_clip_layouts);
    RUN(runtime_weights_and_old_opset);
    RUN(unequal_sequence_lens_rejected);
    return test_summary("test_backend_rnn");
}
