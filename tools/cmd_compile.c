/* cmd_compile.c - `atoll compile MODEL.onnx [--chip CHIP] -o MODEL.abm`:
 * the compile driver (compiler/driver/driver.h: import, input shapes, passes,
 * backend per batch size), the .abm written atomically, and a summary:
 * layers, estimated cycles and the memory plan. `--batch 1,8` compiles one
 * variant per batch size into the same net; a dimension the model fixed may
 * be changed (fixed-batch exports at another batch). --estimate adds the
 * cost model's cycles per layer, --layer-info records them in the .abm for
 * `atoll run --profile`; --dump-ir prints the IR after the passes instead
 * of compiling. --synthetic-weights fills initializers whose external data
 * file is missing (timing studies on full-size graphs). --time prints the
 * wall time of each compiler phase. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "util/file.h"
#include "tools/model_io.h"
#include "tools/quantize.h"
#include "compiler/driver/driver.h"
#include "compiler/passes/passes.h"
#include "isa/config.h"
#include "util/clock.h"
#include "util/csv.h"
#include "util/strbuf.h"

const char cmd_compile_summary[] = "compile an ONNX model for a chip into an .abm (or --dump-ir)";

#define MAXOPT 64

static const char usage_text[] =
    "usage: atoll compile MODEL.onnx [--chip CHIP] -o MODEL.abm [options]\n"
    "       atoll compile MODEL.onnx --dump-ir [--no-passes] [--input-shape NAME=DIMS]... [--batch N]\n"
    "options:\n"
    "  --chip CHIP            a config file, or a name (a1 = configs/a1.ini, or the installed\n"
    "                         share/atoll/configs/a1.ini); default a1\n"
    "  -o FILE                output .abm\n"
    "  --dtype f32|fp32|f16|fp16|bf16|int8   storage/compute dtype (default fp32); int8 quantises\n"
    "                         the model first (needs --calib; docs/quantization.md)\n"
    "  --calib DATA           int8: calibration data (.npy, .npz or a folder of them; repeatable)\n"
    "  --method M             int8: minmax (default), percentile, kl, mse\n"
    "  --fallback auto|none   int8: keep the most sensitive layers float until --target-cos (0.99)\n"
    "  --target-cos C         int8: the cosine --fallback auto reaches on the calibration data\n"
    "  --float-dtype fp32|bf16 int8: the dtype of the layers that stay float (default fp32)\n"
    "  --qdq FILE             int8: also write the QDQ model (the interpreter's golden model)\n"
    "  --batch N[,N...]       set dimension 0 of every graph input (default: the model's, 1\n"
    "                         where it is open); several sizes give one variant each in the\n"
    "                         same net; also for models exported with a fixed batch\n"
    "  --input-shape NAME=1x3x224x224   fix or change an input's shape (repeatable)\n"
    "  --name NAME            net name in the .abm (default: the graph's name)\n"
    "  --estimate             print the cost model's cycles per layer\n"
    "  --groups               print the schedule's units (a layer, or a layer group whose inner\n"
    "                         tensors stay in LMEM): members, core set, slicing, LMEM per core,\n"
    "                         DRAM bytes in and out, estimated cycles\n"
    "  --csv FILE             write the cost model's per-layer table as CSV (batch, layer, name, op,\n"
    "                         split, tiles, cores, macs, est_cycles, est_compute, est_dma, is_matrix,\n"
    "                         members, core_first, core_count, dram_rd, dram_wr, lmem_peak)\n"
    "  --layer-info           record each layer's name, op and estimate in the .abm (read by\n"
    "                         atoll run --profile; the file becomes version 1.1)\n"
    "  --time                 print the wall time of each compiler phase\n"
    "  --zlevel N             zlib level of weights and sections, 0..9 (default 6, but 0 when\n"
    "                         any weight is synthetic); 0 stores them raw: a faster compile\n"
    "                         (ResNet-50: 3 of its 5 CPU-s are deflating weights), a larger\n"
    "                         file; the model is the same\n"
    "  --group auto|none      auto (default): layer groups where the cost model finds them\n"
    "                         cheaper (docs/backend.md); none: every layer on its own\n"
    "  --group-max N          at most N layers in a group (1: fusions only, e.g. a residual\n"
    "                         Add in its convolution)\n"
    "  --group-weights auto|resident|stream  a group's weights: auto (default) resident when\n"
    "                         they fit, else streamed in chunks where the cost model finds it\n"
    "                         cheaper; resident: never streamed; stream: every group that can\n"
    "                         streams, and such groups are taken before layers alone (studies)\n"
    "  --group-cslice auto|never|only  inverted residual blocks (1x1 -> depthwise -> 1x1) run\n"
    "                         their hidden channels in slices, a conv -> depthwise pair its\n"
    "                         output channels in slices across the cores: auto (default) where\n"
    "                         the cost model finds it cheaper; only: every one that can (studies)\n"
    "  --placement auto|chip|split|pipeline  where the images of a batch run: chip, every layer\n"
    "                         of the whole batch on all cores; split, the batch cut into instances\n"
    "                         of --micro-batch images, each run whole on one cluster with its\n"
    "                         activations in the cluster's SRAM where they fit; pipeline (chips\n"
    "                         with cluster links), the network cut into stages on clusters of\n"
    "                         their own, instances of --micro-batch images (default 1) streaming\n"
    "                         through, each stage's output sent over the NoC into the next\n"
    "                         stage's SRAM; auto (default): what the cost model prices lowest\n"
    "                         (split or pipeline only when the graph keeps images apart)\n"
    "                         (docs/backend.md, Placement over clusters)\n"
    "  --schedule staged|uniform  with placement split: staged (default) lets the cost model\n"
    "                         cut the network into stages, each with its own micro-batch (1, 2,\n"
    "                         4, ... growing stage by stage: late weights read once per\n"
    "                         micro-batch); uniform keeps one micro-batch for all layers\n"
    "  --micro-batch M        images per instance with placement split, one for all layers\n"
    "                         (default: chosen by the cost model)\n"
    "  --stages               print each stage of a split schedule: units, micro-batch,\n"
    "                         instances, clusters, SRAM and LMEM peak, DRAM bytes in and out of\n"
    "                         one instance, intermediate tensors in DRAM, the matrix-unit\n"
    "                         utilisation the cost model expects, the boundary it reads\n"
    "  --stage-plan M0,TENSOR:M1,...  the stages themselves (placement split): stage 0 in\n"
    "                         instances of M0 images, the next from where TENSOR is the only\n"
    "                         tensor crossing, in instances of M1, ...; c instead of a\n"
    "                         micro-batch runs that stage as placement chip (the whole batch\n"
    "                         on every core, after a chip barrier): 1,TENSOR:c\n"
    "  --sram-activations auto|never|bands|rows  with placement chip: auto (default) keeps\n"
    "                         the activations that fit in cluster SRAM when every cluster can hold\n"
    "                         a copy (one cluster, or clusters joined by NoC links: each layer's\n"
    "                         stores reach every cluster), with layer groups on; on clusters that\n"
    "                         share only DRAM it builds the DRAM plan and bands (batch 1) and\n"
    "                         keeps the one the cost model prices lower; never: in DRAM;\n"
    "                         bands (several clusters): each cluster's SRAM keeps the cells its\n"
    "                         cores computed, layers may split their rows or their output\n"
    "                         channels over the clusters; rows: bands by rows only\n"
    "  --sram-weights auto|never|always  convolution weight chunks staged in cluster SRAM, read\n"
    "                         from DRAM once per cluster however many of its cores use them:\n"
    "                         auto (default) where the cost model finds it cheaper\n"
    "  --stage-sram auto|never|always  a staged boundary between two split stages on the same\n"
    "                         clusters kept in each cluster's SRAM instead of DRAM: auto (default)\n"
    "                         where it takes at most a quarter of the SRAM and the cost model\n"
    "                         prices it lower; always: wherever it fits\n"
    "  --sram-pair            convolutions may also stage both their input and their weights in\n"
    "                         cluster SRAM in every plan built (default: where the plan choice\n"
    "                         finds it pays, see --bytes-slack); --no-sram-pair: never\n"
    "  --no-halo-staging      a row-banded convolution whose input is staged never gathers its\n"
    "                         halo rows into its cluster's window (default: where it prices lower)\n"
    "  --no-shards            bands keep every channel of a tensor of several images in each\n"
    "                         cluster's window (default: a large one may be sharded by channels)\n"
    "  --no-chain-pack        every row buffer of a layer group has its own LMEM bytes (default:\n"
    "                         buffers never live at once share bytes where taller slices fit)\n"
    "  --no-reorder           staged split stages keep their node order and strided 1x1\n"
    "                         convolutions (default: shortcuts run late, subsampled copies, where\n"
    "                         they price lower)\n"
    "  --bytes-slack PCT      the plan kept of those built for one activation placement is the\n"
    "                         fastest whose estimated DRAM bytes are within PCT% of the fewest\n"
    "                         or 1.5x the compulsory bytes (default 10; -1: the fastest)\n"
    "  --prefetch auto|never  a layer's first staged weights copied to SRAM by the layer before,\n"
    "                         overlapping its compute: auto (default) where the cost model finds\n"
    "                         it cheaper; never: each layer stages its own\n"
    "  --kbands never|auto|always  with bands, a channel-banded 1x1 conv split by input channels\n"
    "                         over the clusters (partial sums added after a barrier): auto\n"
    "                         (default) where the cost model finds it cheaper; never; always\n"
    "  --depthwise auto|matrix  depthwise convolutions (float and int8; f32 also in layer groups)\n"
    "                         on the vector unit where the cost model finds it cheaper (auto,\n"
    "                         default) or on the matrix unit only\n"
    "  --keep-activations     no reuse of activation memory (and --group none): every activation listed in\n"
    "                         the .abm keeps its value after a run (atoll run --dump-tensors)\n"
    "  --dump-ir              print the IR after the passes and stop\n"
    "  --synthetic-weights    invent initializers whose external data file is missing\n"
    "  --no-passes            with --dump-ir: the IR as imported\n"
    "  --progress             report progress on stderr even when it is not a terminal\n"
    "Exit status: 0 ok, 1 error (the message names the model, node or option), 2 usage.\n";

enum { DT_INT8 = 100 };   /* --dtype int8: a QDQ model compiled with float parts in --float-dtype */

static int parse_dtype(const char *s)
{
    if (!strcmp(s, "int8")) return DT_INT8;
    if (!strcmp(s, "f32") || !strcmp(s, "fp32")) return ISA_F32;
    if (!strcmp(s, "f16") || !strcmp(s, "fp16")) return ISA_F16;
    if (!strcmp(s, "bf16")) return ISA_BF16;
    return -1;
}

static void print_summary(const char *model, const char *out, const AtlChip *chip, const BkSummary *s, int dt)
{
    printf("%s -> %s: %d layers on %s (%d cores), batch %d, %s\n", model, out, s->nlayers, chip->name, s->cores,
           s->batch, isa_dtype_name(dt));
    printf("  estimated cycles : %llu (%.3f ms at %.0f MHz)\n", (unsigned long long)s->est_cycles,
           (double)s->est_cycles / chip->freq_mhz / 1000.0, chip->freq_mhz);
    printf("  instructions     : %llu\n", (unsigned long long)s->insns);
    printf("  weights          : %llu bytes\n", (unsigned long long)s->weight_bytes);
    printf("  activations      : %llu bytes peak (liveness packed) vs %llu bytes for all activation tensors\n",
           (unsigned long long)s->act_peak, (unsigned long long)s->act_sum);
    printf("  io               : %llu bytes\n", (unsigned long long)s->io_bytes);
    printf("  in DRAM          : %d intermediate tensors (the others stay in LMEM or SRAM)\n", s->act_dram_tensors);
    if (s->pipeline) {
        printf("  placement        : pipeline of %d stages on %d clusters (%d cores each), %d instances of %d images streaming "
               "through; the layers below are one instance of each stage\n", s->nstages, s->clusters, chip->cores_per_cluster,
               s->instances, s->micro_batch);
        for (int i = 0; i < s->nstages; i++) {
            int end = i + 1 < s->nstages ? s->stage_row[i + 1] : s->nlayers;
            printf("    stage %d        : layers %d-%d on clusters %d-%d, %llu cycles an instance%s%s%s", i, s->stage_row[i], end - 1,
                   s->stage_first_cluster[i], s->stage_first_cluster[i] + s->stage_clusters[i] - 1,
                   (unsigned long long)s->stage_est[i], i ? " (reads '" : "", i ? s->stage_in[i] : "", i ? "'" : "");
            if (i) printf(" from %d buffer%s in its SRAM, sent over the NoC)", s->stage_slots[i], s->stage_slots[i] > 1 ? "s" : "");
            printf("\n");
        }
        if (s->placement_why[0]) printf("    chosen         : %s\n", s->placement_why);
    } else if (s->split && s->nstages > 1) {
        int nchip = 0;
        for (int i = 0; i < s->nstages; i++) nchip += s->stage_chip[i];
        printf("  placement        : split on %d clusters (%d cores each), %d stages%s; up to %llu bytes of activations per "
               "cluster in SRAM; the layers below are one instance of each stage\n", s->clusters, chip->cores_per_cluster,
               s->nstages, nchip ? " (chip stages on the whole chip)" : "", (unsigned long long)s->act_sram);
        for (int i = 0; i < s->nstages; i++) {
            int end = i + 1 < s->nstages ? s->stage_row[i + 1] : s->nlayers;
            if (s->stage_chip[i])
                printf("    stage %d        : layers %d-%d, chip: the batch of %d images on every core (%d)%s%s%s\n", i, s->stage_row[i],
                       end - 1, s->stage_m[i], s->stage_cores[i], i ? " (reads '" : "", i ? s->stage_in[i] : "",
                       i ? "' from DRAM after a chip barrier)" : "");
            else
                printf("    stage %d        : layers %d-%d, %d instances of %d images%s%s%s\n", i, s->stage_row[i], end - 1,
                       s->batch / s->stage_m[i], s->stage_m[i], i ? " (reads '" : "", i ? s->stage_in[i] : "",
                       i && s->stage_chip[i - 1] ? "' from DRAM after the chip stage)"
                       : i && s->stage_in_sram[i] ? "' from its clusters' SRAM)" : i ? "' from DRAM)" : "");
        }
    } else if (s->split)
        printf("  placement        : split, %d instances of %d images on %d clusters (%d cores each); "
               "%llu bytes of activations per cluster in SRAM; the layers below are one instance's\n",
               s->instances, s->micro_batch, s->clusters, chip->cores_per_cluster, (unsigned long long)s->act_sram);
    else if (chip->clusters > 1 || s->sram_copies)
        printf("  placement        : chip (%s)\n", s->placement_why[0] ? s->placement_why : "asked for");
    if (!s->split && s->sram_bands)
        printf("  SRAM             : %llu bytes of activations in cluster SRAM (bands over %d clusters)\n",
               (unsigned long long)s->act_sram, s->sram_bands);
    if (!s->split && s->sram_why[0])
        printf(s->sram_bands ? "    chosen         : %s\n" : "  SRAM             : activations in DRAM (%s)\n", s->sram_why);
    if (!s->split && s->sram_copies)
        printf("  SRAM             : %llu bytes of activations in cluster SRAM%s\n", (unsigned long long)s->act_sram,
               s->sram_copies > 1 ? " (a copy in every cluster: each store reaches them all)" : "");
}

static void estimate_csv(const BkSummary *s, StrBuf *b)
{
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        sbuf_printf(b, "%d,%d,", s->batch, l->layer_id);
        csv_put_field(b, l->name);
        sbuf_put(b, ",", 1);
        csv_put_field(b, l->op);
        sbuf_put(b, ",", 1);
        csv_put_field(b, l->split);
        sbuf_printf(b, ",%d,%d,%llu,%llu,%llu,%llu,%d,%d,%d,%d,%llu,%llu,%llu\n", l->tiles, l->cores,
                    (unsigned long long)l->macs, (unsigned long long)l->est_cycles, (unsigned long long)l->est_compute,
                    (unsigned long long)l->est_dma, l->is_matrix, l->nmembers, l->core_first, l->core_count,
                    (unsigned long long)l->dram_rd, (unsigned long long)l->dram_wr, (unsigned long long)l->lmem_peak);
    }
}

/* The --csv file: one table over every variant compiled. */
static int write_csv(const char *path, const DrvResult *res, AtlErr *e)
{
    StrBuf b = {0};
    sbuf_printf(&b, "batch,layer,name,op,split,tiles,cores,macs,est_cycles,est_compute,est_dma,is_matrix,"
                    "members,core_first,core_count,dram_rd,dram_wr,lmem_peak\n");
    for (int i = 0; i < res->nvariants; i++) estimate_csv(&res->variants[i], &b);
    char *text = sbuf_take(&b);
    int rc = !text ? atl_fail(e, "out of memory") : atl_write_file_atomic(path, text, strlen(text), e);
    free(text);
    sbuf_free(&b);
    return rc;
}

static void print_estimate(const BkSummary *s)
{
    printf("%5s  %-40s %-18s %-14s %6s %5s %12s %12s %12s %12s\n", "layer", "node", "op", "split", "tiles", "cores",
           "MACs", "est_cycles", "compute", "dma");
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        printf("%5d  %-40.40s %-18.18s %-14.14s %6d %5d %12llu %12llu %12llu %12llu\n", l->layer_id, l->name, l->op, l->split,
               l->tiles, l->cores, (unsigned long long)l->macs, (unsigned long long)l->est_cycles,
               (unsigned long long)l->est_compute, (unsigned long long)l->est_dma);
    }
}

/* 1234567 -> "1.2 MB" (binary prefixes for LMEM, decimal for DRAM traffic). */
static void bytes_text(uint64_t v, int binary, char *out, size_t cap)
{
    static const char *const dec[] = {"B", "KB", "MB", "GB"}, *const bin[] = {"B", "KiB", "MiB", "GiB"};
    double x = (double)v, step = binary ? 1024 : 1000;
    int k = 0;
    while (x >= step && k < 3) { x /= step; k++; }
    snprintf(out, cap, k ? "%.1f %s" : "%.0f %s", x, binary ? bin[k] : dec[k]);
}

/* --stages: each stage of a split schedule: its units, micro-batch,
 * instances, clusters, SRAM and LMEM peak, DRAM traffic of one instance,
 * intermediate tensors in DRAM, the matrix-unit utilisation the cost model
 * expects (useful matrix-unit cycles / (cores x its cycles)) and the
 * boundary it reads. */
static void print_stages(const BkSummary *s, const AtlChip *chip)
{
    if (!s->split) { printf("stages: none (placement chip: %s)\n", s->placement_why[0] ? s->placement_why : "asked for"); return; }
    int n = s->nstages > 1 ? s->nstages : 1;
    printf("%5s  %-9s %7s %9s %8s %12s %12s %12s %12s %5s %8s  %s\n", "stage", "units", "mb", "instances", "clusters",
           "SRAM/cluster", "LMEM/core", "DRAM in", "DRAM out", "DRAM", "est util", "reads");
    for (int i = 0; i < n; i++) {
        int first = s->nstages > 1 ? s->stage_row[i] : 0, end = i + 1 < n ? s->stage_row[i + 1] : s->nlayers;
        int mb = s->nstages > 1 ? s->stage_m[i] : s->micro_batch;
        uint64_t lm = 0, rd = 0, wr = 0, mat = 0;
        for (int k = first; k < end; k++) {
            if (s->layers[k].lmem_peak > lm) lm = s->layers[k].lmem_peak;
            rd += s->layers[k].dram_rd;
            wr += s->layers[k].dram_wr;
            mat += s->layers[k].mat_cycles * (uint64_t)(s->batch / mb);
        }
        /* one stage: the whole schedule on its clusters */
        double room = s->nstages > 1 ? (double)s->stage_cores[i] * (double)s->stage_est[i]
                                     : (double)s->clusters * chip->cores_per_cluster * (double)s->est_cycles;
        char units[24], sram[16], lms[16], in[16], out[16];
        snprintf(units, sizeof units, "%d-%d", first, end - 1);
        bytes_text(s->nstages > 1 ? s->stage_sram[i] : s->act_sram, 1, sram, sizeof sram);
        bytes_text(lm, 1, lms, sizeof lms);
        bytes_text(rd, 0, in, sizeof in);
        bytes_text(wr, 0, out, sizeof out);
        char util[16] = "-";   /* a pipeline's stages hold no core-cycle room here */
        if (room > 0 && !s->pipeline) snprintf(util, sizeof util, "%.1f%%", 100.0 * (double)mat / room);
        char mbs[16];
        snprintf(mbs, sizeof mbs, s->nstages > 1 && s->stage_chip[i] ? "chip %d" : "%d", mb);
        printf("%5d  %-9s %7s %9d %8d %12s %12s %12s %12s %5d %8s  %s%s\n", i, units, mbs, s->batch / mb,
               s->pipeline ? s->stage_clusters[i] : s->nstages > 1 && s->stage_chip[i] ? chip->clusters : s->clusters, sram, lms, in, out,
               s->nstages > 1 ? s->stage_dram_tensors[i] : s->act_dram_tensors, util,
               i && s->nstages > 1 ? s->stage_in[i] : "the inputs", i && s->nstages > 1 && s->stage_in_sram[i] ? " (in SRAM)" : "");
    }
}

/* --groups: each unit of the schedule, the members of a layer group below
 * it: DRAM in / out as emitted, est cycles and est DRAM (bytes read and
 * written) as the cost model prices them. */
static void print_groups(const BkSummary *s, const AtlChip *chip)
{
    int cpc = chip->cores_per_cluster, total = chip->clusters * cpc;
    printf("%4s  %-44s %-11s %-27s %10s %10s %10s %11s %10s\n", "unit", "layer (or group: first .. last)", "cores", "slicing",
           "LMEM/core", "DRAM in", "DRAM out", "est cycles", "est DRAM");
    uint64_t rd = 0, wr = 0, est = 0;
    for (int i = 0; i < s->nlayers; i++) {
        const BkLayerInfo *l = &s->layers[i];
        char cores[32], lm[16], in[16], out[16], eb[16];
        if (l->core_count == total) snprintf(cores, sizeof cores, "all %d", total);
        else if (l->core_first % cpc == 0 && l->core_count == cpc) snprintf(cores, sizeof cores, "cluster %d", l->core_first / cpc);
        else snprintf(cores, sizeof cores, "%d-%d", l->core_first, l->core_first + l->core_count - 1);
        bytes_text(l->lmem_peak, 1, lm, sizeof lm);
        bytes_text(l->dram_rd, 0, in, sizeof in);
        bytes_text(l->dram_wr, 0, out, sizeof out);
        bytes_text(l->est_rd + l->est_wr, 0, eb, sizeof eb);
        printf("%4d  %-44.44s %-11s %-27.27s %10s %10s %10s %11llu %10s\n", l->layer_id, l->nmembers > 1 ? l->op : l->name, cores,
               l->split, lm, in, out, (unsigned long long)l->est_cycles, eb);
        for (const char *m = l->nmembers > 1 && l->members ? l->members : ""; *m;) {
            const char *tab = strchr(m, '\t'), *nl = strchr(m, '\n');
            if (!tab || !nl) break;
            printf("        %-40.*s %.*s\n", (int)(tab - m), m, (int)(nl - tab - 1), tab + 1);
            m = nl + 1;
        }
        rd += l->dram_rd;
        wr += l->dram_wr;
        est += l->est_rd + l->est_wr;
    }
    char in[16], out[16], eb[16];
    bytes_text(rd, 0, in, sizeof in);
    bytes_text(wr, 0, out, sizeof out);
    bytes_text(est, 0, eb, sizeof eb);
    printf("%4s  %-44s %-11s %-27s %10s %10s %10s %11llu %10s\n", "", "total", "", "", "", in, out, (unsigned long long)s->est_cycles,
           eb);
}

static void print_times(const double *t, double write_s)
{
    double total = write_s;
    printf("  compile time (wall):\n");
    for (int i = 0; i < DRV_NPHASES; i++) {
        printf("    %-22s %8.3f s\n", drv_phase_name(i), t[i]);
        total += t[i];
    }
    printf("    %-22s %8.3f s\n", "write", write_s);
    printf("    %-22s %8.3f s\n", "total", total);
}

static void show_phase(void *ctx, const char *what) { cli_progress(ctx, "%s", what); }

/* --dump-ir: the IR (after the passes unless --no-passes). */
static int dump_ir(const char *model, const IrInputShape *shapes, int nshapes, int batch, OnnxLoadOpts *lo, int passes)
{
    IrGraph g;
    AtlErr e = {{0}};
    int ok = batch ? !model_load_batch("compile", model, shapes, nshapes, batch, lo, &g, &e)
                   : !model_load_opts("compile", model, shapes, nshapes, lo, &g, &e);
    if (ok && lo->nsynthetic)
        fprintf(stderr, "atoll compile: note: %d initializers (%lld bytes) have synthetic values: their external data file is missing\n",
                lo->nsynthetic, (long long)lo->synthetic_bytes);
    if (!ok || (passes && pass_run_all(&g, &e))) {
        fprintf(stderr, "atoll compile: %s\n", e.msg);
        ir_free(&g);
        return 1;
    }
    ir_print(&g, stdout);
    ir_free(&g);
    return 0;
}

int cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *chip_arg = NULL, *out = NULL, *csv = NULL, *v;
    IrInputShape shapes[MAXOPT];
    int nshapes = 0, bad = 0, dump = 0, nopasses = 0, estimate = 0, groups = 0, stages = 0, timing = 0, zlevel = -1;
    CliProgressMode pmode = CLI_PROGRESS_AUTO;
    DrvRequest rq;
    memset(&rq, 0, sizeof rq);
    rq.dtype = ISA_F32;
    int dt = ISA_F32, fdt = ISA_F32, ncalib = 0;
    const char *calib[MAXOPT], *qdq_out = NULL;
    QzOptions qo;
    qz_options_default(&qo);
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { fputs(usage_text, stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll compile: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_arg = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--name", &bad))) rq.net_name = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--zlevel", &bad))) {
            char *end;
            long z = strtol(v, &end, 10);
            if (end == v || *end || z < 0 || z > 9) { fprintf(stderr, "atoll compile: --zlevel '%s': a number 0..9\n", v); return 2; }
            zlevel = (int)z;
        }
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--dtype", &bad))) {
            if ((dt = parse_dtype(v)) < 0) { fprintf(stderr, "atoll compile: --dtype '%s': use fp32, fp16, bf16 or int8\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--float-dtype", &bad))) {
            if ((fdt = parse_dtype(v)) < 0 || fdt == DT_INT8) { fprintf(stderr, "atoll compile: --float-dtype '%s': use fp32, fp16 or bf16\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--calib", &bad))) {
            if (ncalib == MAXOPT) { fprintf(stderr, "atoll compile: too many --calib options\n"); return 2; }
            calib[ncalib++] = v;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--qdq", &bad))) qdq_out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--method", &bad))) {
            if ((qo.method = calib_method_parse(v)) < 0) { fprintf(stderr, "atoll compile: --method '%s': use minmax, percentile, kl or mse\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--target-cos", &bad))) {
            if (cli_parse_real("compile", "--target-cos", v, -1, 1, &qo.target_cos)) return 2;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--fallback", &bad))) {
            if (!strcmp(v, "auto")) qo.fallback = QZ_FALLBACK_AUTO;
            else if (!strcmp(v, "none")) qo.fallback = QZ_FALLBACK_NONE;
            else { fprintf(stderr, "atoll compile: --fallback '%s': use auto or none\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--batch", &bad))) {
            const char *p = v;
            rq.nbatch = 0;
            for (;;) {
                char *end;
                long b = strtol(p, &end, 10);
                if (end == p || (*end && *end != ',') || b < 1 || b > 65535 || rq.nbatch == DRV_MAX_BATCHES) {
                    fprintf(stderr, "atoll compile: --batch '%s': numbers 1..65535, comma separated, at most %d\n", v, DRV_MAX_BATCHES);
                    return 2;
                }
                rq.batches[rq.nbatch++] = (int)b;
                if (!*end) break;
                p = end + 1;
            }
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--dump-ir")) dump = 1;
        else if (!strcmp(argv[i], "--no-passes")) nopasses = 1;
        else if (!strcmp(argv[i], "--estimate")) estimate = 1;
        else if (!strcmp(argv[i], "--groups")) groups = 1;
        else if (!strcmp(argv[i], "--stages")) stages = 1;
        else if (!strcmp(argv[i], "--layer-info")) rq.layer_info = 1;
        else if (!strcmp(argv[i], "--time")) timing = 1;
        else if ((v = cli_opt(argc, argv, &i, "--csv", &bad))) csv = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--group-max", &bad))) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > 1000) { fprintf(stderr, "atoll compile: --group-max '%s': a number 1..1000\n", v); return 2; }
            rq.group_max = (int)n;
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--placement", &bad))) {
            if (!strcmp(v, "auto")) rq.placement = BK_PLACE_AUTO;
            else if (!strcmp(v, "chip")) rq.placement = BK_PLACE_CHIP;
            else if (!strcmp(v, "split")) rq.placement = BK_PLACE_SPLIT;
            else if (!strcmp(v, "pipeline")) rq.placement = BK_PLACE_PIPELINE;
            else { fprintf(stderr, "atoll compile: --placement '%s': use auto, chip, split or pipeline\n", v); return 2; }
        }
        else if ((v = cli_opt(argc, argv, &i, "--schedule", &bad))) {
            if (!strcmp(v, "staged")) rq.schedule = BK_SCHED_STAGED;
            else if (!strcmp(v, "uniform")) rq.schedule = BK_SCHED_UNIFORM;
            else { fprintf(stderr, "atoll compile: --schedule '%s': use staged or uniform\n", v); return 2; }
        }
        else if ((v = cli_opt(argc, argv, &i, "--stage-plan", &bad))) rq.stage_plan = v;
        else if ((v = cli_opt(argc, argv, &i, "--sram-activations", &bad))) {
            if (!strcmp(v, "auto")) rq.sram_acts = BK_SRAM_ACTS_AUTO;
            else if (!strcmp(v, "never")) rq.sram_acts = BK_SRAM_ACTS_NEVER;
            else if (!strcmp(v, "bands")) rq.sram_acts = BK_SRAM_ACTS_BANDS;
            else if (!strcmp(v, "rows")) rq.sram_acts = BK_SRAM_ACTS_ROWS;
            else { fprintf(stderr, "atoll compile: --sram-activations '%s': use auto, never, bands or rows\n", v); return 2; }
        } else if (!strcmp(argv[i], "--sram-pair")) {
            rq.sram_pair = BK_PAIR_ALWAYS;
        } else if (!strcmp(argv[i], "--no-sram-pair")) {
            rq.sram_pair = BK_PAIR_NEVER;
        } else if (!strcmp(argv[i], "--no-halo-staging")) {
            rq.no_halo_stage = 1;
        } else if (!strcmp(argv[i], "--no-shards")) {
            rq.no_shards = 1;
        } else if (!strcmp(argv[i], "--no-chain-pack")) {
            rq.no_chain_pack = 1;
        } else if (!strcmp(argv[i], "--no-reorder")) {
            rq.no_reorder = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--bytes-slack", &bad))) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < -1 || n > 1000) {
                fprintf(stderr, "atoll compile: --bytes-slack '%s': a percentage 1..1000, or -1: the fastest plan\n", v);
                return 2;
            }
            rq.bytes_slack = n ? (int)n : BK_BYTES_SLACK;
        } else if ((v = cli_opt(argc, argv, &i, "--sram-weights", &bad))) {
            if (!strcmp(v, "auto")) rq.sram_weights = BK_SRAM_AUTO;
            else if (!strcmp(v, "never")) rq.sram_weights = BK_SRAM_NEVER;
            else if (!strcmp(v, "always")) rq.sram_weights = BK_SRAM_ALWAYS;
            else { fprintf(stderr, "atoll compile: --sram-weights '%s': use auto, never or always\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--stage-sram", &bad))) {
            if (!strcmp(v, "auto")) rq.stage_sram = BK_SRAM_AUTO;
            else if (!strcmp(v, "never")) rq.stage_sram = BK_SRAM_NEVER;
            else if (!strcmp(v, "always")) rq.stage_sram = BK_SRAM_ALWAYS;
            else { fprintf(stderr, "atoll compile: --stage-sram '%s': use auto, never or always\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--kbands", &bad))) {
            if (!strcmp(v, "never")) rq.kbands = BK_KBANDS_NEVER;
            else if (!strcmp(v, "auto")) rq.kbands = BK_KBANDS_AUTO;
            else if (!strcmp(v, "always")) rq.kbands = BK_KBANDS_ALWAYS;
            else { fprintf(stderr, "atoll compile: --kbands '%s': use never, auto or always\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--depthwise", &bad))) {
            if (!strcmp(v, "auto")) rq.dw_matrix = 0;
            else if (!strcmp(v, "matrix")) rq.dw_matrix = 1;
            else { fprintf(stderr, "atoll compile: --depthwise '%s': use auto or matrix\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--prefetch", &bad))) {
            if (!strcmp(v, "auto")) rq.prefetch = BK_PREFETCH_AUTO;
            else if (!strcmp(v, "never")) rq.prefetch = BK_PREFETCH_NEVER;
            else { fprintf(stderr, "atoll compile: --prefetch '%s': use auto or never\n", v); return 2; }
        }
        else if ((v = cli_opt(argc, argv, &i, "--micro-batch", &bad))) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > 65536) { fprintf(stderr, "atoll compile: --micro-batch '%s': a number 1..65536\n", v); return 2; }
            rq.micro_batch = (int)n;
        }
        else if ((v = cli_opt(argc, argv, &i, "--group", &bad))) {
            if (!strcmp(v, "auto")) rq.group = BK_GROUP_AUTO;
            else if (!strcmp(v, "none")) rq.group = BK_GROUP_NONE;
            else { fprintf(stderr, "atoll compile: --group '%s': use auto or none\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--group-weights", &bad))) {
            if (!strcmp(v, "auto")) rq.group_weights = BK_GW_AUTO;
            else if (!strcmp(v, "resident")) rq.group_weights = BK_GW_RESIDENT;
            else if (!strcmp(v, "stream")) rq.group_weights = BK_GW_STREAM;
            else { fprintf(stderr, "atoll compile: --group-weights '%s': use auto, resident or stream\n", v); return 2; }
        } else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--group-cslice", &bad))) {
            if (!strcmp(v, "auto")) rq.group_cslice = BK_CS_AUTO;
            else if (!strcmp(v, "never")) rq.group_cslice = BK_CS_NEVER;
            else if (!strcmp(v, "only")) rq.group_cslice = BK_CS_ONLY;
            else { fprintf(stderr, "atoll compile: --group-cslice '%s': use auto, never or only\n", v); return 2; }
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--keep-activations")) rq.keep_activations = 1;
        else if (!strcmp(argv[i], "--synthetic-weights")) rq.synthetic_weights = 1;
        else if (!strcmp(argv[i], "--progress")) pmode = CLI_PROGRESS_ON;
        else if (argv[i][0] == '-') return cli_bad_option("compile", argv[i], usage_text);
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll compile: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll compile: no model given (see --help)\n"); return 2; }
    if (dt == DT_INT8 && !ncalib) { fprintf(stderr, "atoll compile: --dtype int8 needs --calib DATA (or compile a quantised model)\n"); return 2; }
    if (dt != DT_INT8 && (ncalib || qdq_out)) { fprintf(stderr, "atoll compile: --calib and --qdq go with --dtype int8\n"); return 2; }
    if (dt == DT_INT8 && dump) { fprintf(stderr, "atoll compile: --dump-ir of an int8 model: write it with --qdq or atoll quantize\n"); return 2; }
    rq.dtype = dt == DT_INT8 ? fdt : dt;
    if (dump) {
        OnnxLoadOpts lo = {rq.synthetic_weights, 0, 0, 0};
        return dump_ir(model, shapes, nshapes, rq.nbatch ? rq.batches[0] : 0, &lo, !nopasses);
    }
    if (!out) { fprintf(stderr, "atoll compile: -o FILE is required (or use --dump-ir)\n"); return 2; }
    AtlChip chip;
    char chip_file[4096];
    if (cli_load_chip("compile", chip_arg, NULL, &chip, chip_file, sizeof chip_file)) return 1;
    CliPath ins[MAXOPT + 2] = {{"model", model}, {"--chip", chip_file}}, outs[] = {{"-o", out}, {"--csv", csv}, {"--qdq", qdq_out}};
    for (int k = 0; k < ncalib; k++) ins[k + 2] = (CliPath){"--calib", calib[k]};
    if (cli_check_outputs("compile", ins, 2 + ncalib, outs, 3)) return 2;
    rq.chip = &chip;
    rq.synthetic_max_bytes = (uint64_t)chip.dram_bytes;   /* invented weights must fit the chip */
    rq.shapes = shapes;
    rq.nshapes = nshapes;
    CliProgress pr;
    cli_progress_init(&pr, "compile", pmode);
    rq.progress = show_phase;
    rq.progress_ctx = &pr;
    /* --dtype int8: quantise the batch-1 model, then compile the QDQ model at every batch */
    PbBuf qbuf = {0};
    char dtype_text[160] = "";
    int qsyn = 0;                /* the quantised model's synthetic initializers */
    int64_t qsyn_bytes = 0;
    if (dt == DT_INT8) {
        OnnxLoadOpts lo = {rq.synthetic_weights, 0, 0, rq.synthetic_max_bytes};
        cli_progress(&pr, "quantising");
        qo.keep_float = NULL;
        qo.progress = pr.enabled ? stderr : NULL;   /* progress lines only where progress is shown */
        if (qz_quantize_model(model, &lo, shapes, nshapes, calib, ncalib, NULL, &qo, qdq_out, &qbuf, NULL, &e)) {
            cli_progress_end(&pr);
            fprintf(stderr, "atoll compile: %s\n", e.msg);
            return 1;
        }
        snprintf(dtype_text, sizeof dtype_text, "--dtype int8 --float-dtype %s --method %s --fallback %s", isa_dtype_name(fdt),
                 calib_method_name(qo.method), qo.fallback == QZ_FALLBACK_AUTO ? "auto" : "none");
        rq.model_buf = qbuf.p;
        rq.model_len = qbuf.n;
        rq.model_synthetic = lo.nsynthetic > 0;
        qsyn = lo.nsynthetic;
        qsyn_bytes = lo.synthetic_bytes;
        rq.dtype_text = dtype_text;
    }
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    if (!w) { pb_free(&qbuf); fprintf(stderr, "atoll compile: out of memory\n"); return 1; }
    if (zlevel >= 0) abm_writer_set_level(w, zlevel);
    rq.synthetic_raw = zlevel < 0;    /* an explicit --zlevel applies to synthetic weights too */
    DrvResult res;
    int rc = drv_compile(model, &rq, w, &res, &e) ? 1 : 0;
    pb_free(&qbuf);
    cli_progress(&pr, "writing %s", out);
    double t0 = atl_clock_s();
    if (rc == 0 && abm_write_file(w, out, &e)) rc = 1;
    if (rc == 0 && csv && write_csv(csv, &res, &e)) rc = 1;
    double write_s = atl_clock_s() - t0;
    cli_progress_end(&pr);
    if (res.nsynthetic || qsyn)
        fprintf(stderr, "atoll compile: note: %d initializers (%lld bytes) have synthetic values: their external data file is missing%s\n",
                res.nsynthetic ? res.nsynthetic : qsyn, (long long)(res.nsynthetic ? res.synthetic_bytes : qsyn_bytes),
                zlevel < 0 ? " (stored raw; --zlevel N deflates them)" : "");
    if (res.batch_followed[0]) fprintf(stderr, "atoll compile: note: %s\n", res.batch_followed);
    if (res.chose_batch[0])
        fprintf(stderr, "atoll compile: note: input %s has an open batch (dimension 0); compiled for batch 1 "
                        "(--batch N for another, --batch 1,8 for several)\n", res.chose_batch);
    if (rc) {
        /* a list of unsupported ops longer than a message is printed whole */
        if (res.unsupported && strstr(e.msg, "\n  ... and "))
            fprintf(stderr, "atoll compile: %s: these ops are not supported:\n%s", model, res.unsupported);
        fprintf(stderr, "atoll compile: %s\n", e.msg);
    } else {
        for (int i = 0; i < res.nvariants; i++) {
            print_summary(model, out, &chip, &res.variants[i], dt == DT_INT8 ? ISA_I8 : dt);
            if (estimate) print_estimate(&res.variants[i]);
            if (groups) print_groups(&res.variants[i], &chip);
            if (stages) print_stages(&res.variants[i], rq.chip);
        }
        if (timing) print_times(res.phase_s, write_s);
    }
    drv_result_free(&res);
    abm_writer_free(w);
    return rc;
}
