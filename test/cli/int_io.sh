# int_io.sh - integer and bool graph inputs/outputs through the host tools:
# test/data/int_io.onnx (made by test/data/gen_int_io.py: int64 Add, Mul by
# a constant, Transpose; a bool Identity) compiles with int32/int8 io
# tensors, `atoll compare` converts the int64/bool inputs to the chip's
# dtypes and the outputs back, and matches the interpreter exactly; an
# int64 input beyond int32 is refused by the host, naming the input and the
# element, with exit 1, by `atoll compare` and by `atoll run` (which
# converts int64/bool arrays to the model's int32/int8 inputs).
. test/cli/lib.inc
CHIP=configs/tiny.ini
D=test/data
expect_ok int_io_compile "$ATOLL" compile $D/int_io.onnx --chip $CHIP -o "$TMPD/i.abm"
expect_ok int_io_inspect "$ATOLL" inspect "$TMPD/i.abm"
expect_grep int_io_a_int32 "a .*int32" "$TMPD/out"
expect_grep int_io_m_int8 "m .*int8" "$TMPD/out"
expect_ok int_io_compare "$ATOLL" compare $D/int_io.onnx "$TMPD/i.abm" --chip $CHIP --input $D/int_io_in.npz
expect_grep int_io_exact_y "^y .*0.0000e+00 .*yes" "$TMPD/out"
expect_grep int_io_exact_mo "^mo .*0.0000e+00 .*yes" "$TMPD/out"
expect_fail int_io_too_big "input 'a' element 4 = 1099511627776 does not fit the chip's int32" \
    "$ATOLL" compare $D/int_io.onnx "$TMPD/i.abm" --chip $CHIP --input $D/int_io_big.npz
expect_ok int_io_run "$ATOLL" run "$TMPD/i.abm" --chip $CHIP --input $D/int_io_in.npz --output "$TMPD/o.npz"
expect_grep int_io_run_y "output y int32\[3,2\]" "$TMPD/out"
expect_fail int_io_run_too_big "input 'a' element 4 = 1099511627776 does not fit int32" \
    "$ATOLL" run "$TMPD/i.abm" --chip $CHIP --input $D/int_io_big.npz
cli_summary int_io.sh
