/* list.h - the op implementation families (infer_X/eval_X pairs);
 * included by ops/ops.h with OP() defined. Not an include-guarded header. */
OP(unary) OP(binary) OP(variadic) OP(where) OP(cast) OP(clip) OP(identity)
OP(dropout) OP(conv) OP(convtranspose) OP(gemm) OP(matmul) OP(pool)
OP(globalpool) OP(batchnorm) OP(instancenorm) OP(layernorm) OP(lrn)
OP(softmax) OP(concat) OP(split) OP(slice) OP(reshape) OP(flatten)
OP(transpose) OP(squeeze) OP(unsqueeze) OP(constant) OP(shape) OP(gather)
OP(reduce) OP(resize) OP(pad) OP(constantofshape) OP(range) OP(expand)
OP(tile) OP(depthspace) OP(castlike) OP(argmax) OP(size) OP(gatherelements)
OP(trilu) OP(hardmax) OP(cumsum) OP(nllloss) OP(sceloss)
OP(quantize) OP(dequantize) OP(onehot) OP(eyelike) OP(scatterelements)
OP(convinteger) OP(qlinearconv) OP(matmulinteger) OP(qlinearmatmul)
OP(gathernd) OP(scatternd) OP(topk) OP(nonzero) OP(compress) OP(mvn) OP(window) OP(nms) OP(einsum) OP(rnn)
OP(reversesequence) OP(dynquant) OP(det)
