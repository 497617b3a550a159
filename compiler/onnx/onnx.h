/* onnx.h - ONNX model and tensor decoding (protobuf wire format, no library)
 * into the graph IR, and the reverse (IR -> ModelProto) for tests, the
 * benchmark and fuzz seeds.
 *
 * Errors name the file, the byte offset and the message/field being read,
 * e.g. "m.onnx: byte 1234: NodeProto.input (field 1): length 99 runs past
 * the end of its message (ends at byte 1200)".
 */
#ifndef ATOLL_COMPILER_ONNX_H
#define ATOLL_COMPILER_ONNX_H
#include <stdint.h>
#include <stddef.h>
#include "compiler/ir/ir.h"

/* Decodes a serialized ModelProto into g (initialised here; caller frees
 * with ir_free, also on failure). `path` names the model in messages and is
 * the base for external data locations; with path NULL, external data is an
 * error. Nodes are left in file order; call ir_toposort afterwards. */
int onnx_load_buffer(const uint8_t *buf, size_t len, const char *path, IrGraph *g, AtlErr *e);
int onnx_load_file(const char *path, IrGraph *g, AtlErr *e);

/* Import options. With synthetic_weights set, an initializer whose
 * external-data file does not exist is filled deterministically
 * (compiler/onnx/synth_weights.h) instead of failing; a file that exists but is
 * short or unreadable is still an error. nsynthetic / synthetic_bytes
 * report what was invented. Without the option the error names the tensor
 * and the missing file. */
typedef struct OnnxLoadOpts {
    int synthetic_weights;      /* in */
    int nsynthetic;             /* out: tensors synthesised */
    int64_t synthetic_bytes;    /* out: their bytes */
    int64_t synthetic_max_bytes; /* in: refuse to invent more in all (the chip's DRAM); 0 = 2 GiB - 1,
                                 * the largest DRAM a chip config can have */
} OnnxLoadOpts;
int onnx_load_buffer_opts(const uint8_t *buf, size_t len, const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e);
int onnx_load_file_opts(const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e);

/* Decodes one serialized TensorProto (the test suites' input_N.pb files).
 * On success t holds name, dtype, shape and data (free with
 * ir_tensor_free_contents). */
int onnx_decode_tensor(const uint8_t *buf, size_t len, const char *path, IrTensor *t, AtlErr *e);
int onnx_load_tensor_file(const char *path, IrTensor *t, AtlErr *e);

/* A growable byte buffer for writing protobuf. */
typedef struct PbBuf { uint8_t *p; size_t n, cap; int oom; } PbBuf;
void pb_put_varint(PbBuf *b, uint64_t v);
void pb_put_tag(PbBuf *b, int field, int wiretype);
void pb_put_uint(PbBuf *b, int field, uint64_t v);          /* varint field */
void pb_put_bytes(PbBuf *b, int field, const void *p, size_t n); /* length-delimited */
void pb_put_str(PbBuf *b, int field, const char *s);
void pb_put_float(PbBuf *b, int field, float f);            /* fixed32 */
void pb_free(PbBuf *b);

/* Serializes the graph as an ONNX ModelProto (ir_version 8, default-domain
 * opset g->opset). Constants that a live node or a graph output reads
 * become initializers with raw_data (others are left out). On success
 * out holds the bytes (caller pb_free's it). */
int onnx_save_buffer(const IrGraph *g, PbBuf *out, AtlErr *e);
int onnx_save_file(const IrGraph *g, const char *path, AtlErr *e);
#endif
