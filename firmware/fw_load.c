/* fw_load.c - LOAD and UNLOAD: a model image in device DRAM becomes a
 * loaded model.
 *
 * LOAD checks the image (version first, then structure with checksums
 * recorded, then checksums, then the chip fingerprint, then every record
 * with abm_decode), so each kind of damage gets its own error code; places
 * the weights, activations, io, relocated command streams and the profile
 * buffer in DRAM; inflates or copies every weight blob to its place;
 * copies every stream and relocates its DRAM addresses (fw_reloc.c); and
 * clears the activation and io regions so runs are deterministic. On any
 * failure everything taken so far is given back. On a timing-only device
 * (DEVICE_MODE 1) memories hold no values: the weights are neither checked
 * nor moved and the regions not cleared, but every cycle is charged as if
 * they were, so the firmware's time is the same in both modes.
 */
#include "firmware/fw_int.h"

static int abm_problem(Fw *fw, int code, const char *what)
{
    return fw_error(fw, code, "%s: %s", what, fw->err.msg);
}

static int starts_with(const char *s, const char *p)
{
    while (*p) if (*s++ != *p++) return 0;
    return 1;
}

/* Names the first part of an image whose checksum failed. */
static int checksum_error(Fw *fw, const AbmView *v)
{
    if (!v->header_crc_ok) return fw_error(fw, ATL_ERR_FW_CHECKSUM, "model image: header CRC-32 mismatch");
    if (!v->table_crc_ok) return fw_error(fw, ATL_ERR_FW_CHECKSUM, "model image: section table CRC-32 mismatch");
    for (uint32_t i = 0; i < v->section_count; i++)
        if (!v->sec[i].crc_ok)
            return fw_error(fw, ATL_ERR_FW_CHECKSUM, "model image: CRC-32 mismatch in section %u '%s' (file offset 0x%llx, %llu bytes)",
                            i, abm_section_name(v->sec[i].type), (unsigned long long)v->sec[i].offset,
                            (unsigned long long)v->sec[i].stored_size);
    return fw_error(fw, ATL_ERR_FW_CHECKSUM, "model image: %u checksum mismatches", v->bad_crcs);
}

static void release(Fw *fw, uint32_t handle)
{
    FwModel *m = &fw->model[handle];
    fw_heap_free(&fw->heap, m->stream_addr);
    fw_heap_free(&fw->heap, m->scratch);
    fw_dram_free_owner(&fw->dram, handle + 1);
    fw_memset(m, 0, sizeof *m);
}

static int place(Fw *fw, uint32_t handle, uint64_t size, uint64_t *addr, const char *what)
{
    FwModel *m = &fw->model[handle];
    if (size == 0) { *addr = 0; return 0; }
    if (fw_dram_alloc(&fw->dram, size, fw->region_align, handle + 1, addr))
        return fw_error(fw, ATL_ERR_FW_NO_DRAM, "cannot place the %s region (%llu bytes) in device DRAM: no free block large enough "
                        "(the model needs %llu bytes so far)", what, (unsigned long long)size,
                        (unsigned long long)(m->dram_used + size));
    m->dram_used += size;
    return 0;
}

static int load_weights(Fw *fw, FwModel *m)
{
    const AbmView *v = &m->view;
    for (uint32_t i = 0; i < v->n_blobs; i++) {
        AbmBlob b = abm_blob(v, i);
        uint8_t *dst = fw->hal.dram + m->base[ABM_REGION_WEIGHTS] + b.dram_offset;
        if (!fw->timing_only && abm_blob_read(v, i, dst, m->size[ABM_REGION_WEIGHTS] - b.dram_offset, &fw->err))
            return abm_problem(fw, starts_with(fw->err.msg, "CRC") ? ATL_ERR_FW_CHECKSUM : ATL_ERR_FW_BAD_IMAGE, "model image");
        fw_charge_bytes(fw, b.raw_size, b.compression == ABM_COMP_NONE ? FW_COST_COPY_KIB : FW_COST_INFLATE_KIB);
        fw_charge_bytes(fw, b.raw_size, FW_COST_VALIDATE_KIB);
    }
    return 0;
}

static int load_streams(Fw *fw, FwModel *m)
{
    const AbmView *v = &m->view;
    uint64_t at = m->code_addr;
    char why[200];
    for (uint32_t s = 0; s < v->n_variants; s++) {
        AbmVariant st = abm_variant(v, s);
        uint64_t size[ABM_REGION_COUNT] = { m->size[ABM_REGION_WEIGHTS], st.activation_bytes, st.io_bytes };
        for (uint32_t c = 0; c < st.core_count; c++)
            for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                AbmStream str = abm_stream(v, s, c, g);
                uint8_t *dst = fw->hal.dram + at;
                m->stream_addr[st.stream_first + c * ABM_ENGINES + g] = str.size ? at : 0;
                if (!str.size) continue;
                fw_memcpy(dst, str.data, str.size);
                fw_charge_bytes(fw, str.size, FW_COST_COPY_KIB);
                uint64_t n = str.size / ABM_INSN_BYTES;
                fw_charge(fw, n * FW_COST_RELOC_INSN);
                for (uint64_t i = 0; i < n; i++)
                    if (fw_reloc_insn(dst + i * ABM_INSN_BYTES, m->base, size, why, sizeof why))
                        return fw_error(fw, ATL_ERR_FW_RELOC, "variant %u core %u engine %s instruction %llu: %s", s, c,
                                        abm_engine_name(g), (unsigned long long)i, why);
                at += str.size;
            }
    }
    return 0;
}

static int load_into(Fw *fw, uint32_t handle, uint64_t addr, uint64_t len)
{
    FwModel *m = &fw->model[handle];
    AbmView *v = &m->view;
    const uint8_t *img = fw->hal.dram + addr;
    m->used = 1;
    m->image_addr = addr;
    m->image_size = len;
    /* Version before anything else: a newer container may differ in every other respect. */
    if (len >= 12 && starts_with((const char *)img, "ATOLLABM")) {
        uint32_t major = (uint32_t)img[8] | (uint32_t)img[9] << 8, minor = (uint32_t)img[10] | (uint32_t)img[11] << 8;
        if (major != ABM_VERSION_MAJOR)
            return fw_error(fw, ATL_ERR_FW_VERSION, "model image has container version %u.%u; this firmware reads version %u.x",
                            major, minor, ABM_VERSION_MAJOR);
    }
    fw_charge_bytes(fw, len, FW_COST_VALIDATE_KIB);
    unsigned open_flags = ABM_OPEN_IGNORE_CRC | (fw->timing_only ? ABM_OPEN_SKIP_WEIGHT_CRC : 0);
    if (abm_open(v, img, (size_t)len, 0, open_flags, &fw->err)) return abm_problem(fw, ATL_ERR_FW_BAD_IMAGE, "model image");
    fw_charge(fw, (uint64_t)v->section_count * FW_COST_SECTION);
    if (v->bad_crcs) return checksum_error(fw, v);
    if (v->chip_fingerprint != fw->chip_fp)
        return fw_error(fw, ATL_ERR_FW_CHIP, "model was compiled for chip fingerprint 0x%llx, this chip is 0x%llx",
                        (unsigned long long)v->chip_fingerprint, (unsigned long long)fw->chip_fp);
    m->scratch = fw_heap_alloc(&fw->heap, v->scratch_needed ? (size_t)v->scratch_needed : 1);
    if (!m->scratch || v->scratch_needed > (uint64_t)(size_t)-1)
        return fw_error(fw, ATL_ERR_FW_NO_MEMORY, "firmware heap: %llu bytes needed to decode the model, largest free block %llu of %llu",
                        (unsigned long long)v->scratch_needed, (unsigned long long)fw_heap_largest_free(&fw->heap),
                        (unsigned long long)fw->heap.size);
    if (abm_decode(v, m->scratch, (size_t)v->scratch_needed, &fw->err)) return abm_problem(fw, ATL_ERR_FW_BAD_IMAGE, "model image");
    for (uint32_t i = 0; i < v->section_count; i++)
        if (v->sec[i].compression != ABM_COMP_NONE) fw_charge_bytes(fw, v->sec[i].raw_size, FW_COST_INFLATE_KIB);
    /* Region sizes: weights for the whole file, activations and io the largest of any variant. */
    uint64_t act = 0, io = 0, code = 0;
    for (uint32_t s = 0; s < v->n_variants; s++) {
        AbmVariant st = abm_variant(v, s);
        if (st.activation_bytes > act) act = st.activation_bytes;
        if (st.io_bytes > io) io = st.io_bytes;
        for (uint32_t c = 0; c < st.core_count; c++)
            for (uint32_t g = 0; g < ABM_ENGINES; g++) code += abm_stream(v, s, c, g).size;
    }
    m->size[ABM_REGION_WEIGHTS] = v->weight_bytes;
    m->size[ABM_REGION_ACTIVATIONS] = act;
    m->size[ABM_REGION_IO] = io;
    m->code_size = code;
    m->stream_addr = fw_heap_alloc(&fw->heap, (size_t)(v->n_streams ? v->n_streams : 1) * sizeof(uint64_t));
    if (!m->stream_addr)
        return fw_error(fw, ATL_ERR_FW_NO_MEMORY, "firmware heap: no room for the stream table of %u streams (largest free block %llu)",
                        v->n_streams, (unsigned long long)fw_heap_largest_free(&fw->heap));
    static const char *const what[ABM_REGION_COUNT] = { "weights", "activations", "io" };
    for (int r = 0; r < ABM_REGION_COUNT; r++)
        if (place(fw, handle, m->size[r], &m->base[r], what[r])) return ATL_ERR_FW_NO_DRAM;
    if (place(fw, handle, code, &m->code_addr, "command stream")) return ATL_ERR_FW_NO_DRAM;
    if (place(fw, handle, FW_PROF_BYTES, &m->prof_addr, "profile")) return ATL_ERR_FW_NO_DRAM;
    int rc = load_weights(fw, m);
    if (rc) return rc;
    rc = load_streams(fw, m);
    if (rc) return rc;
    for (int r = ABM_REGION_ACTIVATIONS; r < ABM_REGION_COUNT; r++) {
        if (m->size[r] && !fw->timing_only) fw_memset(fw->hal.dram + m->base[r], 0, m->size[r]);
        fw_charge_bytes(fw, m->size[r], FW_COST_COPY_KIB);
    }
    return 0;
}

int fw_cmd_load(Fw *fw, const uint32_t *arg)
{
    uint64_t addr = arg[0] | (uint64_t)arg[1] << 32, len = arg[2] | (uint64_t)arg[3] << 32;
    if (len == 0 || addr > fw->hal.dram_size || len > fw->hal.dram_size - addr)
        return fw_error(fw, ATL_ERR_FW_BAD_ARG, "LOAD: image [0x%llx, +%llu) is not inside the %llu bytes of device DRAM",
                        (unsigned long long)addr, (unsigned long long)len, (unsigned long long)fw->hal.dram_size);
    uint32_t handle = 0;
    while (handle < FW_MAX_MODELS && fw->model[handle].used) handle++;
    if (handle == FW_MAX_MODELS)
        return fw_error(fw, ATL_ERR_FW_TOO_MANY, "LOAD: all %d model slots are in use; unload a model first", FW_MAX_MODELS);
    int rc = load_into(fw, handle, addr, len);
    if (rc) { release(fw, handle); return rc; }
    FwModel *m = &fw->model[handle];
    fw->result[0] = handle;
    fw->result[1] = m->view.n_nets;
    fw->result[2] = m->view.n_variants;
    fw->result[3] = m->view.n_tensors;
    fw_set64(fw, 4, m->base[ABM_REGION_WEIGHTS]);
    fw_set64(fw, 6, m->base[ABM_REGION_ACTIVATIONS]);
    fw_set64(fw, 8, m->base[ABM_REGION_IO]);
    fw_set64(fw, 10, m->dram_used);
    return 0;
}

int fw_cmd_unload(Fw *fw, const uint32_t *arg)
{
    int code;
    if (!fw_model(fw, arg[0], &code)) return code;
    release(fw, arg[0]);
    return 0;
}

void fw_shutdown(Fw *fw)
{
    for (uint32_t h = 0; h < FW_MAX_MODELS; h++)
        if (fw->model[h].used) release(fw, h);
}
