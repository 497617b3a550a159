/* fuzz_onnx.c - libFuzzer harness over the ONNX decoder, graph checks,
 * shape inference and the passes: any input must end in success or an
 * error message, never a crash, leak or undefined behaviour. TensorProto
 * decoding is exercised on the same bytes. */
#include <stdint.h>
#include <stddef.h>
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    AtlErr e = {{0}};
    IrGraph g;
    if (onnx_load_buffer(data, size, NULL, &g, &e) == 0 && ir_toposort(&g, &e) == 0 && ir_verify(&g, &e) == 0 &&
        ir_infer_shapes(&g, &e) == 0) {
        pass_run_all(&g, &e);
    }
    ir_free(&g);
    IrTensor t;
    if (onnx_decode_tensor(data, size, NULL, &t, &e) == 0) ir_tensor_free_contents(&t);
    return 0;
}
