/* cmd_inspect.c - `atoll inspect`: describe an .abm model (nets, variants, IO
 * tensors, memory plan, section checksums; --cmds command counts per core
 * and engine; --weights blob sizes), and `--combine` several models into one.
 * A file with a bad checksum is still described as far as its structure is
 * sound, and the command then exits 1.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "isa/abm.h"
#include "tools/cli.h"
#include "util/file.h"
#include "util/limits.h"

const char cmd_inspect_summary[] = "describe an .abm model, or combine several into one";

static const char usage_text[] =
            "usage: atoll inspect MODEL.abm [--cmds] [--weights] [--chip CHIP]\n"
            "       atoll inspect --combine A.abm B.abm [...] -o OUT.abm\n"
            "\n"
            "Prints the nets, variants, input/output tensors (shape, dtype, quantisation),\n"
            "the memory plan and every section with its checksum (OK or BAD).\n"
            "  --cmds         instruction counts per variant, core and engine\n"
            "  --weights      weight blobs: raw and stored bytes, compression, checksum\n"
            "  --chip CHIP    also check the model was compiled for this chip: a config file,\n"
            "                 a name (a1) or a fingerprint (0x...)\n"
            "  --combine ...  merge the nets and variants of several models (same chip,\n"
            "                 no variant twice); shared weights are stored once\n"
            "Exit status: 0 ok, 1 invalid model or bad checksum, 2 usage.\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

static void print_shape(const AbmTensor *t)
{
    printf("[");
    for (uint32_t d = 0; d < t->ndim; d++) printf("%s%u", d ? "," : "", t->dims[d]);
    printf("]");
}

static void print_tensor(const AbmView *v, const AbmTensor *t)
{
    printf("      %-6s %-16s %-5s ", abm_role_name(t->role), t->name, abm_dtype_name(t->dtype));
    print_shape(t);
    printf(" %s", abm_layout_name(t->layout));
    if (t->quant_kind == ABM_QUANT_PER_TENSOR) {
        AbmQuant q = abm_quant(v, t->quant_first);
        printf("  scale %g zero_point %d", (double)q.scale, (int)q.zero_point);
    } else if (t->quant_kind == ABM_QUANT_PER_CHANNEL) {
        AbmQuant q = abm_quant(v, t->quant_first);
        printf("  per-channel (axis %u, %u scales, first %g)", t->quant_axis, t->quant_count, (double)q.scale);
    }
    printf("  %s @%" PRIu64 ", %" PRIu64 " bytes\n", abm_region_name(t->region), t->offset, t->size);
}

static void describe(const AbmView *v, int show_cmds, int show_weights, int *bad)
{
    AbmMeta m = abm_meta(v);
    printf("producer: %s\noptions:  %s\nsource:   ", m.producer[0] ? m.producer : "-", m.options[0] ? m.options : "-");
    for (int i = 0; i < ABM_HASH_BYTES; i++) printf("%02x", m.source_hash[i]);
    printf("\n");
    uint64_t max_act = 0, max_io = 0;
    for (uint32_t s = 0; s < v->n_variants; s++) {
        AbmVariant st = abm_variant(v, s);
        if (st.activation_bytes > max_act) max_act = st.activation_bytes;
        if (st.io_bytes > max_io) max_io = st.io_bytes;
    }
    printf("memory plan: weights %" PRIu64 " bytes, activations %" PRIu64 " bytes, io %" PRIu64 " bytes (largest variant)\n",
           v->weight_bytes, max_act, max_io);
    for (uint32_t n = 0; n < v->n_nets; n++) {
        AbmNet net = abm_net(v, n);
        printf("net '%s': %u variant%s\n", net.name, net.variant_count, net.variant_count == 1 ? "" : "s");
        for (uint32_t k = 0; k < net.variant_count; k++) {
            uint32_t s = net.first_variant + k;
            AbmVariant st = abm_variant(v, s);
            printf("  variant %u: batch %u, %u core%s, %u tensors, activations %" PRIu64 " bytes, io %" PRIu64 " bytes\n", s,
                   st.batch, st.core_count, st.core_count == 1 ? "" : "s", st.tensor_count, st.activation_bytes, st.io_bytes);
            for (uint32_t t = 0; t < st.tensor_count; t++) {
                AbmTensor x = abm_tensor(v, st.tensor_first + t);
                if (x.role == ABM_ROLE_INPUT || x.role == ABM_ROLE_OUTPUT) print_tensor(v, &x);
            }
            for (uint32_t i = 0; i < v->n_stages; i++) {   /* a staged schedule's stages */
                AbmStage g = abm_stage(v, i);
                if (g.variant != s) continue;
                printf("      stage %u: layers %u-%u, %u instance%s of %u image%s on %u cores%s%s%s\n", g.stage, g.first_layer,
                       g.first_layer + g.layers - 1, g.instances, g.instances == 1 ? "" : "s", g.micro_batch,
                       g.micro_batch == 1 ? "" : "s", g.cores, g.input[0] ? " (reads '" : "", g.input, g.input[0] ? "')" : "");
            }
            if (!show_cmds) continue;
            uint64_t total[ABM_ENGINES] = { 0 };
            for (uint32_t c = 0; c < st.core_count; c++) {
                printf("      core %-3u", c);
                for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                    uint64_t cnt = abm_stream(v, s, c, g).size / ABM_INSN_BYTES;
                    total[g] += cnt;
                    printf("  %s %-6" PRIu64, abm_engine_name(g), cnt);
                }
                printf("\n");
            }
            printf("      total   ");
            for (uint32_t g = 0; g < ABM_ENGINES; g++) printf("  %s %-6" PRIu64, abm_engine_name(g), total[g]);
            printf("\n");
        }
    }
    if (show_weights) {
        uint64_t raw = 0, stored = 0;
        uint64_t biggest = 0;
        for (uint32_t i = 0; i < v->n_blobs; i++) {
            AbmBlob b = abm_blob(v, i);
            raw += b.raw_size;
            stored += b.stored_size;
            if (b.raw_size > biggest && b.raw_size <= atl_limit(ATL_LIMIT_INFLATE_BYTES)) biggest = b.raw_size;
        }
        printf("weights: %u blobs, raw %" PRIu64 " bytes, stored %" PRIu64 " bytes (ratio %.3f)\n", v->n_blobs, raw, stored,
               stored ? (double)raw / (double)stored : 1.0);
        /* every blob is inflated to check it, those within the inflate limit */
        uint8_t *tmp = biggest ? malloc(biggest) : NULL;
        for (uint32_t i = 0; i < v->n_blobs; i++) {
            AbmBlob b = abm_blob(v, i);
            AtlErr e;
            const char *status = "BAD";
            if (b.raw_size > atl_limit(ATL_LIMIT_INFLATE_BYTES)) status = "unchecked (larger than ATOLL_MAX_INFLATE_BYTES)";
            else if (!tmp) status = "unchecked (out of memory)";
            else if (abm_blob_read(v, i, tmp, b.raw_size, &e) == 0) status = "OK";
            else *bad = 1;
            printf("  blob %-4u dram @%-10" PRIu64 " raw %-10" PRIu64 " stored %-10" PRIu64 " %-4s crc 0x%08x %s\n", i,
                   b.dram_offset, b.raw_size, b.stored_size, b.compression == ABM_COMP_ZLIB ? "zlib" : "none", b.crc32, status);
        }
        free(tmp);
    }
}

static int inspect_one(const char *path, uint64_t chip, int show_cmds, int show_weights)
{
    AtlErr e;
    unsigned char *data;
    size_t n;
    if (atl_read_file(path, &data, &n, &e)) { fprintf(stderr, "atoll inspect: %s\n", e.msg); return 1; }
    AbmView *v = malloc(sizeof *v);
    if (!v) { free(data); fprintf(stderr, "atoll inspect: out of memory\n"); return 1; }
    int rc = 0, bad = 0;
    uint8_t *scratch = NULL;
    if (abm_open(v, data, n, chip, ABM_OPEN_IGNORE_CRC, &e)) {
        fprintf(stderr, "atoll inspect: %s: %s\n", path, e.msg);
        rc = 1;
        goto done;
    }
    printf("file:     %s (%zu bytes)\nformat:   %u.%u\nchip:     0x%016" PRIx64 "\nflags:    %s\n", path, n,
           v->version_major, v->version_minor, v->chip_fingerprint, v->flags & ABM_FLAG_COMBINED ? "combined" : "-");
    printf("header checksum: %s\nsection table checksum: %s\n", v->header_crc_ok ? "OK" : "BAD", v->table_crc_ok ? "OK" : "BAD");
    printf("sections:\n   #  %-12s %10s %10s %10s  %-4s  %-10s  %s\n", "type", "offset", "stored", "raw", "comp", "crc32", "check");
    for (uint32_t i = 0; i < v->section_count; i++) {
        const AbmSection *s = &v->sec[i];
        printf("  %2u  %-12s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  %-4s  0x%08x  %s\n", i, abm_section_name(s->type),
               s->offset, s->stored_size, s->raw_size, s->compression == ABM_COMP_ZLIB ? "zlib" : "none", s->crc32,
               s->crc_ok ? "OK" : "BAD");
    }
    if (abm_check_host_limits(v, &e)) {
        fprintf(stderr, "atoll inspect: %s: cannot describe further: %s\n", path, e.msg);
        rc = 1;
        goto done;
    }
    if (v->scratch_needed > SIZE_MAX || !(scratch = malloc((size_t)v->scratch_needed))) {
        fprintf(stderr, "atoll inspect: %s: out of memory (decoding needs %" PRIu64 " bytes)\n", path, v->scratch_needed);
        rc = 1;
        goto done;
    }
    if (abm_decode(v, scratch, (size_t)v->scratch_needed, &e)) {
        fprintf(stderr, "atoll inspect: %s: cannot describe further: %s\n", path, e.msg);
        rc = 1;
        goto done;
    }
    describe(v, show_cmds, show_weights, &bad);
    if (bad) rc = 1;
done:
    if (v->bad_crcs) {
        fprintf(stderr, "atoll inspect: %s: %u checksum%s BAD\n", path, v->bad_crcs, v->bad_crcs == 1 ? "" : "s");
        rc = 1;
    }
    if (bad) fprintf(stderr, "atoll inspect: %s: weight blob checksum BAD\n", path);
    free(scratch);
    free(v);
    free(data);
    return rc;
}

static int combine(char **inputs, int n_inputs, const char *out)
{
    AtlErr e;
    AbmWriter *w = NULL;
    int rc = 1;
    CliPath *ins = calloc((size_t)n_inputs + 1, sizeof *ins), outs[] = {{"-o", out}};
    if (!ins) { fprintf(stderr, "atoll inspect: out of memory\n"); return 1; }
    for (int i = 0; i < n_inputs; i++) ins[i] = (CliPath){"input", inputs[i]};
    int clash = cli_check_outputs("inspect", ins, n_inputs, outs, 1);
    free(ins);
    if (clash) return 2;
    for (int i = 0; i < n_inputs; i++) {
        AbmModel m;
        if (abm_load_file(&m, inputs[i], 0, ABM_LOAD_SKIP_WEIGHTS, &e)) {
            fprintf(stderr, "atoll inspect: %s\n", e.msg);
            goto done;
        }
        if (!w && !(w = abm_writer_new(m.view.chip_fingerprint))) {
            abm_model_free(&m);
            fprintf(stderr, "atoll inspect: out of memory\n");
            goto done;
        }
        int bad = abm_writer_merge(w, &m.view, &e);
        abm_model_free(&m);
        if (bad) {
            fprintf(stderr, "atoll inspect: --combine: %s: %s\n", inputs[i], e.msg);
            goto done;
        }
    }
    abm_writer_set_flags(w, ABM_FLAG_COMBINED);
    if (abm_write_file(w, out, &e)) {
        fprintf(stderr, "atoll inspect: %s\n", e.msg);
        goto done;
    }
    uint64_t blobs, raw, stored, hits;
    abm_writer_weight_stats(w, &blobs, &raw, &stored, &hits);
    printf("wrote %s: %d models, %u variants, %" PRIu64 " weight blobs (%" PRIu64 " shared blobs stored once)\n", out,
           n_inputs, abm_writer_variant_count(w), blobs, hits);
    rc = 0;
done:
    abm_writer_free(w);
    return rc;
}

int cmd_inspect(int argc, char **argv)
{
    int show_cmds = 0, show_weights = 0, do_combine = 0, bad = 0;
    const char *out = NULL, *chip_s = NULL, *v;
    char **files = calloc((size_t)argc + 1, sizeof *files);
    int n_files = 0;
    if (!files) { fprintf(stderr, "atoll inspect: out of memory\n"); return 1; }
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); free(files); return 0; }
        else if (!strcmp(argv[i], "--cmds")) show_cmds = 1;
        else if (!strcmp(argv[i], "--weights")) show_weights = 1;
        else if (!strcmp(argv[i], "--combine")) do_combine = 1;
        else if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_s = v;
        else if (bad) { free(files); return 2; }
        else if (argv[i][0] == '-' && argv[i][1]) {
            free(files);
            return cli_bad_option("inspect", argv[i], usage_text);
        } else files[n_files++] = argv[i];
    }
    if (bad) { free(files); return 2; }
    int rc;
    if (do_combine) {
        if (n_files < 2 || !out) {
            fprintf(stderr, "atoll inspect: --combine needs at least two input models and -o OUT.abm\n");
            rc = 2;
        } else {
            rc = combine(files, n_files, out);
        }
    } else if (n_files != 1 || out) {
        fprintf(stderr, "atoll inspect: give exactly one model (or --combine A B -o OUT)\n");
        usage(stderr);
        rc = 2;
    } else {
        uint64_t chip = 0;
        AtlChip c;
        /* a number is a fingerprint; anything else (or a file that exists) a chip */
        if (chip_s && isdigit((unsigned char)chip_s[0]) && access(chip_s, F_OK) != 0) {
            if (cli_parse_u64("inspect", "--chip", chip_s, 1, UINT64_MAX, &chip)) {
                fprintf(stderr, "atoll inspect: --chip takes a chip config or a fingerprint, e.g. 0xa1c0ffee12345678\n");
                free(files);
                return 2;
            }
        } else if (chip_s && !cli_load_chip("inspect", chip_s, NULL, &c, NULL, 0)) {
            chip = cfg_fingerprint(&c);
        }
        rc = chip_s && !chip ? 1 : inspect_one(files[0], chip, show_cmds, show_weights);
    }
    free(files);
    return rc;
}
