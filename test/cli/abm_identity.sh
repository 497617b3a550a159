# abm_identity.sh - the .abm bytes of every bundled model (and ResNet-50 with
# synthetic weights) on tiny, a1 and edge16k in fp32 and bf16, compiled with
# `--group none` (one layer per segment: the per-layer schedule), equal the
# SHA-256 recorded in test/data/abm_sha256.txt. It guards refactorings of the
# backend that must not change what the compiler emits (issue 10); a change
# that legitimately alters the output regenerates the fixture in the same
# commit and says why:  ABM_IDENTITY_REGEN=1 BUILD=build ATOLL=build/atoll \
#   TMPD=$(mktemp -d) sh test/cli/abm_identity.sh
# History: recorded before the backend restructure (no --group option then);
# regenerated when --group arrived, because the metadata records
# " --group none" in the compile options: the same binary with the option
# left out of the metadata still gave the 42 recorded hashes. Regenerated
# when a conv's k chunks became whole blocks of 8 channels (isa/numerics.h
# NUM_CONV_CBLOCK): only ResNet-50 on edge16k (fp32, bf16) changed.
# Under the sanitizer builds (BUILD=*san*) ResNet-50 is left out: its
# compiles take minutes there; the plain pass checks it (on a1 and edge16k:
# tiny's DRAM cannot hold its weights, so it is refused there), with
# --zlevel 6 as recorded (synthetic weights are otherwise stored raw).
. test/cli/lib.inc
FIX=test/data/abm_sha256.txt
models="digits_cnn encoder_block lenet5 mobilenetv2_035 resnet20_cifar vit_tiny resnet50"
case "$BUILD" in *san*) models="digits_cnn encoder_block lenet5 mobilenetv2_035 resnet20_cifar vit_tiny";; esac
: > "$TMPD/now.txt"
for m in $models; do
    src=models/$m.onnx; extra=""
    [ "$m" = resnet50 ] && { src=models/full/resnet50.onnx; extra="--synthetic-weights --zlevel 6"; }
    chips="tiny a1 edge16k"
    # tiny's 16 MiB of DRAM cannot hold ResNet-50's weights: refused (alloc/limits.c, synthetic-weight cap)
    [ "$m" = resnet50 ] && chips="a1 edge16k"
    for c in $chips; do
        for d in fp32 bf16; do
            key="$m $c $d"
            if ! "$ATOLL" compile "$src" $extra --chip configs/$c.ini --dtype $d --group none -o "$TMPD/x.abm" > "$TMPD/out" 2>&1; then
                fail "abm_$m.$c.$d" "compile failed: $(head -c 400 "$TMPD/out")"; continue
            fi
            h=$(sha256sum "$TMPD/x.abm" | cut -c1-64)
            echo "$key $h" >> "$TMPD/now.txt"
            [ -n "${ABM_IDENTITY_REGEN:-}" ] && continue
            want=$(grep "^$key " "$FIX" | cut -d' ' -f4)
            if [ "$want" = "$h" ]; then ok "abm_$m.$c.$d"; else fail "abm_$m.$c.$d" "sha256 $h, fixture ${want:-missing}"; fi
        done
    done
done
if [ -n "${ABM_IDENTITY_REGEN:-}" ]; then cp "$TMPD/now.txt" "$FIX"; ok regenerated; fi
cli_summary abm_identity
