/* test_stage_chip.c - a chip stage of a staged schedule starts after a
 * chip barrier (docs/backend.md, "Staged schedules"): resnet20_cifar at
 * batch 2 on a1 (two clusters run stage 0, one image each; the other two
 * have nothing to do in it) with stage 1 on the whole chip.
 *
 * Checks, in the .abm's streams: every engine of every core of the chip
 * has one barrier of chip scope counting every engine of the chip, no
 * instruction of the chip stage before it and none of stage 0 after it
 * (the barrier itself counts for stage 0's last layer on the clusters
 * that ran stage 0, for the chip stage's first on the others). Without it the idle clusters'
 * cores would start stage 1 at once and read the boundary before the
 * other clusters wrote it (a race the simulator's detector may miss: the
 * reads and the writes need not overlap in time). */
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/driver/driver.h"
#include "isa/abm.h"

#define MODEL "models/resnet20_cifar.onnx"
#define PLAN "1,/stages/stages.5/relu_1/Relu_output_0:c"

TEST(chip_stage_opens_with_a_chip_barrier)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &chip, &e) == 0);
    DrvRequest rq;
    DrvResult res;
    memset(&rq, 0, sizeof rq);
    rq.chip = &chip;
    rq.dtype = ISA_F32;
    rq.batches[0] = 2;
    rq.nbatch = 1;
    rq.stage_plan = PLAN;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    REQUIRE(w);
    int rc = drv_compile(MODEL, &rq, w, &res, &e);
    CHECKF(rc == 0, "%s", e.msg);
    REQUIRE(rc == 0);
    const BkSummary *s = &res.variants[0];
    REQUIRE(s->nstages == 2);
    CHECK(!s->stage_chip[0] && s->stage_chip[1] && s->stage_m[1] == 2 && s->stage_cores[1] == 16);
    int first = s->layers[s->stage_row[1]].layer_id;
    uint8_t *buf = NULL;
    size_t len = 0;
    REQUIRE(abm_serialize(w, &buf, &len, &e) == 0);
    AbmView v;
    REQUIRE(abm_open(&v, buf, len, 0, 0, &e) == 0);
    uint8_t *sc = malloc(v.scratch_needed);
    REQUIRE(sc);
    REQUIRE(abm_decode(&v, sc, v.scratch_needed, &e) == 0);
    AbmVariant var = abm_variant(&v, 0);
    CHECK_EQ_INT((int)var.core_count, 16);
    int opened = 0, late = 0, early = 0;
    for (uint32_t c = 0; c < var.core_count; c++)
        for (uint32_t g = 0; g < ABM_ENGINES; g++) {
            AbmStream str = abm_stream(&v, 0, c, g);
            int seen = 0;
            for (uint64_t k = 0; k + ISA_INSN_BYTES <= str.size; k += ISA_INSN_BYTES) {
                AtlInsn in;
                if (isa_decode(str.data + k, &in, &e)) { CHECKF(0, "%s", e.msg); break; }
                if (in.op == ISA_OP_END) break;
                int layer = (int)isa_tag_layer(in.layer);   /* a group member's tag counts for its group */
                if (!seen && in.op == ISA_OP_BARRIER && in.scope == ISA_SCOPE_CHIP && in.bar_count == 16 * ISA_NUM_ENGINES) {
                    opened++;
                    seen = 1;
                } else if (seen && layer < first) {
                    late++;
                } else if (!seen && layer >= first) {
                    early++;
                }
            }
        }
    CHECK_EQ_INT(opened, 16 * ABM_ENGINES);
    CHECK_EQ_INT(early, 0);
    CHECK_EQ_INT(late, 0);
    free(sc);
    free(buf);
    drv_result_free(&res);
    abm_writer_free(w);
}

int main(void)
{
    RUN(chip_stage_opens_with_a_chip_barrier);
    return test_summary("test_stage_chip");
}
