# harden_sim.sh - issue 15, assembler and simulator: hostile programs end in
# a clear error or fault, fast (a stack overflow and multi-minute host work
# before); simulated memories cost host RAM only where touched, and
# `atoll config check` says what a config will cost.
. test/cli/lib.inc
H=test/data/harden
A1=configs/a1.ini
T="timeout 60"

# item 2: deep nesting overflowed the assembler's stack
expect_fail asm_deep_parens "expression nested more than 64 levels deep" "$ATOLL" asm $H/deep_parens.s -o "$TMPD/x.bin"
expect_fail asm_deep_minus "deep_minus.s:1: .equ: expression nested more than 64 levels deep" "$ATOLL" asm $H/deep_minus.s -o "$TMPD/x.bin"
printf '.equ A %s1%s\n.cores 1\n.core 0\n.engine dma\n    end\n' "$(printf '(%.0s' $(seq 60))" "$(printf ')%.0s' $(seq 60))" > "$TMPD/ok_nest.s"
expect_ok asm_nesting_60_is_fine "$ATOLL" asm "$TMPD/ok_nest.s" -o "$TMPD/x.bin"

# item 3: one instruction cannot escape the cycle limit or the host work limit
expect_fail dma_copy_max_cycles "dma.copy: moving 18445618199572250625 bytes takes at least" $T "$ATOLL" sim --chip $A1 --max-cycles 1000 $H/dma_copy_huge.s
expect_fail dma_fill_max_cycles "past the limit of 1000 cycles (--max-cycles)" $T "$ATOLL" sim --chip $A1 --max-cycles 1000 $H/dma_fill_huge.s
expect_fail dma_copy_default_limit "max cycles exceeded" $T "$ATOLL" sim --chip $A1 $H/dma_copy_huge.s
expect_fail dma_copy_functional "host work limit exceeded at cycle 0: core 0 (cluster 0) dma engine, instruction #0" $T "$ATOLL" sim --chip $A1 --mode functional $H/dma_copy_huge.s
expect_fail v_exp_work_limit "its 98781233175 units of work (bytes moved, elements computed) would pass the host work limit of 68719476736" $T "$ATOLL" sim --chip $A1 $H/v_exp_huge.s
expect_fail sim_max_work_option "would pass the host work limit of 1000 (--max-work" "$ATOLL" sim --chip $A1 --max-work 1000 examples/gemm1.s
expect_fail sim_max_work_env "host work limit of 1000" env ATOLL_MAX_SIM_WORK=1000 "$ATOLL" sim --chip $A1 examples/gemm1.s
expect_ok sim_max_work_enough "$ATOLL" sim --chip $A1 --max-work 100M examples/gemm1.s
expect_ok sim_timing_mode_no_exec_work "$ATOLL" sim --chip $A1 --mode timing --max-work 1M examples/gemm1.s

# item 13: a statically faulting stream (clang's UBSan saw a NULL plan offset here) faults cleanly
expect_fail static_fault_reported "out-of-bounds access at cycle 0: core 0 (cluster 0) dma engine, instruction #0" "$ATOLL" sim --chip configs/tiny.ini $H/static_fault.s

# item 7: memories are taken as touched; config check says what a chip costs
"$ATOLL" config check --chip $A1 > "$TMPD/check.out" 2>&1
expect_grep config_check_cost "host memory to simulate it: .* at once, plus up to 1098907652 bytes (1.02 GiB) as a run touches the simulated memories (DRAM 1073741824 bytes (1 GiB), SRAM 4 x 4194304 bytes (4 MiB), LMEM 16 x 524288 bytes (512 KiB))" "$TMPD/check.out"
sed 's/^bytes *= 512K .*/bytes = 1G/' $A1 > "$TMPD/lmem1g.ini"
"$ATOLL" config check --chip "$TMPD/lmem1g.ini" > "$TMPD/check1g.out" 2>&1
expect_grep config_check_cost_1g "LMEM 16 x 1073741824 bytes (1 GiB)" "$TMPD/check1g.out"
# 16 GiB of LMEM: a one-core program runs (it used to be committed, and fail)
expect_ok sim_lmem_1g $T "$ATOLL" sim --chip "$TMPD/lmem1g.ini" examples/gemm1.s
cli_summary harden_sim
