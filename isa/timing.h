/* timing.h - instruction latency formulas shared by the simulator and the
 * compiler's cost model, so their estimates agree. docs/timing.md derives
 * each one. All results are in core clock cycles and exclude contention
 * (the simulator adds resource stalls on top).
 */
#ifndef ATOLL_ISA_TIMING_H
#define ATOLL_ISA_TIMING_H
#include <math.h>
#include <stdint.h>
#include "isa/isa.h"
#include "isa/config.h"

/* Matrix unit rate (cycles per step) for an mm/conv operand dtype; 0 if the
 * dtype is not a matrix dtype. */
int tim_mm_rate(const AtlChip *c, int dtype);
/* Weight-stationary R x C array, C[m,n] = A[m,k] x B[k,n]:
 *   folds = ceil(k/R) * ceil(n/C)
 *   weight_double_buffer = 0: folds * (2R + C + m - 2) * rate - 1
 *   weight_double_buffer = 1: ((2R + C + m - 2) + (folds-1) * (R + C + m - 2)) * rate - 1
 *   fold_overlap = 1: ((2R + C + m - 2) + (folds-1) * (wdb ? max(m, R) : R + m)) * rate - 1
 * plus issue_cycles. (SCALE-Sim WS: 32x32, m=k=n=256 -> 22,399.) */
uint64_t tim_mm_cycles(const AtlChip *c, int dtype, uint64_t m, uint64_t k, uint64_t n);
uint64_t tim_mm_folds(const AtlChip *c, uint64_t k, uint64_t n);
/* Conv output size along one axis: (in + pad_a + pad_b - dil*(k-1) - 1)/stride + 1,
 * 0 if the window does not fit. */
uint32_t tim_conv_out(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t pa, uint32_t pb);
/* Conv as implicit GEMM per group: m = OH*OW, k = kh*kw*cin/groups,
 * n = cout/groups; groups run back to back on the array:
 *   groups * folds_g * per_fold * rate - 1 + issue (per_fold as for mm). */
uint64_t tim_conv_cycles(const AtlChip *c, const AtlInsn *in);
/* Useful multiply-accumulates of an mm / conv. */
uint64_t tim_mm_macs(const AtlInsn *in);
uint64_t tim_conv_macs(const AtlInsn *in);

/* Elements per 32-bit lane for a dtype: 4 (8-bit), 2 (16-bit), 1 (32-bit). */
int tim_elems_per_lane(int dtype);
/* Vector op classes, each priced by a [vector] key: *_cycles per lane group. */
enum { TIM_VEC_ARITH, TIM_VEC_DIV, TIM_VEC_TRANSCENDENTAL, TIM_VEC_REDUCE, TIM_VEC_COMPARE, TIM_VEC_NUM_CLASSES };
int tim_vec_class(int op);
uint64_t tim_vec_class_cycles(const AtlChip *c, int cls);
/* Elementwise: ceil(elems / (lanes * epl(dtype))) * class_cycles(op) + issue. */
uint64_t tim_vec_cycles(const AtlChip *c, int op, int dtype, uint64_t elems);
/* Pooling: ceil(oh*ow*c / (lanes*epl)) * kh*kw * reduce_cycles + issue. */
uint64_t tim_pool_cycles(const AtlChip *c, const AtlInsn *in);
/* Reduction over a contiguous tensor of `elems` inputs: ceil(elems/(lanes*epl)) * reduce_cycles + issue. */
uint64_t tim_reduce_cycles(const AtlChip *c, int dtype, uint64_t elems);
/* Requant (i32 in): ceil(elems/lanes) + issue. Cast: ceil(elems/(lanes*epl(wider)))+issue. */
uint64_t tim_requant_cycles(const AtlChip *c, uint64_t elems);
uint64_t tim_cast_cycles(const AtlChip *c, int dtype, int otype, uint64_t elems);
/* Cycles of any matrix/vector instruction (dispatches on the op's format);
 * 0 for DMA and sync ops. */
uint64_t tim_compute_cycles(const AtlChip *c, const AtlInsn *in);

/* Cycles a server of `bw` bytes/cycle is busy with `bytes`: ceil(bytes/bw)
 * (with a 1e-9 tolerance so exact ratios computed in floating point do not
 * round up). Used for every burst and port occupancy. */
uint64_t tim_occupancy(uint64_t bytes, double bw);

/* LMEM banks and matrix/vector instructions (docs/timing.md, "LMEM
 * banks"), for the simulator (sim/check.c, sim/mem.c) and the compiler's
 * cost model (compiler/cost/cost.c): an instruction holds the banks its
 * LMEM operands touch for tim_lmem_occ cycles from its start, and runs
 * for at least that long.
 * tim_lmem_bytes: the LMEM bytes it reads and writes (matrix ops: their
 * operands, the accumulator they add to and the i32 result; v.sel also
 * reads its old dst); 0 for DMA and sync ops. The fields are assumed valid.
 * tim_lmem_span: marks in banks (a bit per bank) the banks of bytes
 * [lo, hi) of one core's LMEM (interleaved every bank_width bytes).
 * tim_lmem_occ: the marked banks' busy cycles for bytes, at their summed
 * bandwidth (0 when none is marked). */
void tim_lmem_bytes(const AtlInsn *in, uint64_t *rd, uint64_t *wr);
void tim_lmem_span(const AtlChip *c, uint64_t lo, uint64_t hi, uint64_t banks[4]);
uint64_t tim_lmem_occ(const AtlChip *c, const uint64_t banks[4], uint64_t bytes);

/* Bursts served whole (docs/timing.md, "Bursts, not fluid, at the end"),
 * for the DMA servers of the simulator (sim/mem.c) and of the compiler's
 * cost model (compiler/cost/share.c): a flow with `work` cycles of
 * service on a server, in bursts of q cycles on average (iq = 1/q; q = 0:
 * no bursts), whose bursts are served in the order of their fluid finish.
 * tim_burst_prepare gives what depends on the flow alone (wl, last, none);
 * tim_burst_lag the service it still lacks behind its fluid share when it
 * has received `got`: the part of its current burst not served yet (all of
 * its last burst once its work is done; none before it starts). Inline:
 * it is on the simulator's hot path. */
static inline double tim_burst_floor(double x) { return (double)(int64_t)x; } /* x >= 0 */
static inline void tim_burst_prepare(double work, double q, double iq, double *wl, double *last, double *none)
{
    *wl = work - 1e-9;
    *last = work - tim_burst_floor((work - 1e-9) * iq) * q;
    *none = q <= 0 ? INFINITY : 1e-9;
}
static inline double tim_burst_lag(double got, double q, double iq, double wl, double last, double none)
{
    /* without branches on the data: every case is computed, the right one selected */
    double r = got - tim_burst_floor(got * iq) * q;
    r = r < 1e-9 ? q : r;
    r = r < got ? r : got;
    r = got >= wl ? last : r;
    return got <= none ? 0 : r;
}

/* The banked DRAM's address mapping (`[dram] mapping`, docs/timing.md),
 * for the simulator (sim/dram_map.c) and the compiler's cost model
 * (compiler/cost/banked.c): which bits of the access index (address /
 * access_bytes) hold each field, lo[f] the lowest and bits[f] the width,
 * f one of TIM_DRAM_CH .. TIM_DRAM_COL; returns the bits of all fields. */
enum { TIM_DRAM_CH, TIM_DRAM_RANK, TIM_DRAM_BG, TIM_DRAM_BANK, TIM_DRAM_ROW, TIM_DRAM_COL, TIM_DRAM_FIELDS };
int tim_dram_fields(const AtlChip *c, int lo[TIM_DRAM_FIELDS], int bits[TIM_DRAM_FIELDS]);
/* The order in which a DMA engine walks one DRAM end of a transfer with
 * the banked model (docs/timing.md, "DMA as requests"): its dimensions
 * from the largest stride (outermost) to the smallest (innermost), by
 * magnitude, ties and dimensions of size 1 kept in the instruction's order
 * (size 1 outermost), so that the elements come in address order when the
 * dimensions do not overlap and the elements of one access unit are
 * consecutive. oshape/ost: shape and strides permuted so. */
void tim_dram_walk(const uint32_t shape[4], const int32_t st[4], uint32_t oshape[4], int32_t ost[4]);
/* What a DRAM region's base is aligned to, so that the compiler's cost
 * model, which sees offsets into regions, and the simulator see the same
 * channel (and, with the banked model, the same bank, bank group, rank and
 * column, and rows one region apart) of every address: interleave x
 * channels, at least 4 KiB; with model = banked, also the bytes below the
 * row field of the mapping. abm_variant_program places regions so, and the
 * firmware places a model's regions so (the device's DRAM_ALIGN register
 * holds it). */
uint64_t tim_dram_region_align(const AtlChip *c);

/* DMA. Bandwidths in bytes per cycle; latencies in cycles. */
double tim_dram_bytes_per_cycle(const AtlChip *c);      /* all channels */
double tim_dram_channel_bytes_per_cycle(const AtlChip *c);
uint64_t tim_dram_latency(const AtlChip *c);            /* ceil(latency_ns * MHz / 1000) + noc latency */
/* Path bandwidth / latency for a copy from space `src` to `dst`
 * (ISA_SPACE_*): the minimum bandwidth and the maximum latency of the
 * levels on the path (DRAM is reached through the cluster's NoC link; the
 * DMA engine's LMEM port is a level for LMEM ends). */
double tim_dma_path_bw(const AtlChip *c, int dst, int src);
uint64_t tim_dma_path_latency(const AtlChip *c, int dst, int src);
/* The same with a peer end (ISA_SPACE_PEER: another cluster's SRAM) `hops`
 * cluster links away: that end's latency is the SRAM's plus hops x
 * [noc] hop_cycles, its bandwidth the smaller of an SRAM port's and a
 * link's ([noc] link_bytes_per_cycle). */
uint64_t tim_dma_route_latency(const AtlChip *c, int dst, int src, int hops);
/* One uncontended DMA of `bytes`, cut into bursts of burst_bytes, each
 * burst occupying the bottleneck for ceil(burst/bw) cycles:
 *   issue + latency + sum over bursts of ceil(burst_i / bw). */
uint64_t tim_dma_cycles(const AtlChip *c, int dst, int src, uint64_t bytes);
/* With a peer end `hops` links away (route latency). */
uint64_t tim_dma_route_cycles(const AtlChip *c, int dst, int src, int hops, uint64_t bytes);

/* The NoC's cluster links ([noc] cluster_links = 1). Link l = cluster x 4
 * + direction leaves `cluster`: direction 0 towards the next cluster
 * (ring: i+1 mod clusters; mesh: column + 1), 1 the previous (i-1; column
 * - 1), 2 the next row, 3 the previous row (mesh only). tim_noc_route
 * writes the links a transfer from cluster `from` to `to` crosses, in
 * order, into links (room for TIM_NOC_MAX_HOPS; may be NULL) and returns
 * their number (0 for the same cluster): on a ring the shorter way round,
 * clockwise (+1) on a tie; on a mesh along the row first, then the column
 * (dimension-order routing: deadlock-free, and the same path every time). */
#define TIM_NOC_DIRS 4
#define TIM_NOC_MAX_HOPS 128
int tim_noc_route(const AtlChip *c, int from, int to, int *links);
/* Mesh columns: [noc] mesh_cols, or when 0 the divisor of clusters nearest
 * its square root (the smaller on a tie). */
int tim_noc_mesh_cols(const AtlChip *c);
/* dma.gather and dma.scatter: reading the n i32 indices from `idx_space`
 * comes before the row transfers (priced like a dma.copy of the same shape):
 *   latency(idx_space) + ceil(4n / bw(idx_space)). */
uint64_t tim_gather_index_cycles(const AtlChip *c, int idx_space, uint64_t n);
#endif
