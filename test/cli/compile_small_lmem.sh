# compile_small_lmem.sh - `atoll compile` for a chip with 16 KiB of LMEM:
# Gemm/MatMul layers whose K is too deep for a slot split K into chunks
# (the --estimate table shows " K<chunks>" in the layer's split).
. test/cli/lib.inc
M=models
sed 's/^bytes = 64K .*/bytes = 16K/; s/^bytes = 16M .*/bytes = 256M/' configs/tiny.ini > "$TMPD/lm16.ini"
expect_ok lm16_mobilenet "$ATOLL" compile $M/mobilenetv2_035.onnx --chip "$TMPD/lm16.ini" -o "$TMPD/m.abm" --estimate
expect_grep lm16_classifier_split "/classifier/classifier.1/Gemm *Gemm *B1 M1 N1 K[0-9]" "$TMPD/out"
expect_ok lm16_bert "$ATOLL" compile $M/full/bert_base_layer.onnx --synthetic-weights --chip "$TMPD/lm16.ini" -o "$TMPD/b.abm" --estimate
expect_grep lm16_bert_ffn_split "/layer/ffn/ffn.2/MatMul *MatMul *B1 M[0-9]* N[0-9]* K[0-9]" "$TMPD/out"
expect_grep lm16_bert_layers "42 layers on tiny (1 cores), batch 1, f32" "$TMPD/out"
cli_summary compile_small_lmem
