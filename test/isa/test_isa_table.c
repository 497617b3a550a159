/* test_isa_table.c - the instruction tables are consistent: every format fits
 * in 64 bytes, mnemonics are unique and look up both ways. */
#include "test/test.h"
#include "isa/isa.h"
#include "isa/layout.h"

static int format_bits(const AtlFormatInfo *f)
{
    return isa_format_layout(f, NULL);
}

TEST(every_format_fits_in_an_instruction)
{
    for (int i = 0; i < ISA_NUM_FORMATS; i++)
        CHECKF(format_bits(&isa_formats[i]) <= ISA_INSN_BYTES * 8, "format %s needs %d bits",
               isa_formats[i].name, format_bits(&isa_formats[i]));
}

TEST(mnemonics_are_unique_and_found)
{
    for (int i = 0; i < ISA_NUM_OPS; i++) {
        CHECK_EQ_INT(isa_op_from_mnemonic(isa_ops[i].mnemonic), i);
        for (int j = i + 1; j < ISA_NUM_OPS; j++)
            CHECK(strcmp(isa_ops[i].mnemonic, isa_ops[j].mnemonic) != 0);
    }
    CHECK_EQ_INT(isa_op_from_mnemonic("no.such.op"), -1);
}

TEST(dtype_names_round_trip)
{
    for (int d = 0; d < ISA_NUM_DTYPES; d++) {
        CHECK_EQ_INT(isa_dtype_from_name(isa_dtype_name(d)), d);
        CHECK(isa_dtype_size(d) == 1 || isa_dtype_size(d) == 2 || isa_dtype_size(d) == 4);
    }
    CHECK_EQ_INT(isa_dtype_size(99), 0);
}

TEST(format_field_names_unique_within_format)
{
    for (int i = 0; i < ISA_NUM_FORMATS; i++) {
        const AtlFormatInfo *f = &isa_formats[i];
        for (int a = 0; a < f->nfields; a++)
            for (int b = a + 1; b < f->nfields; b++)
                CHECKF(strcmp(isa_fields[f->fields[a].field].name, isa_fields[f->fields[b].field].name) != 0,
                       "format %s repeats field %s", f->name, isa_fields[f->fields[a].field].name);
    }
}

int main(void)
{
    RUN(every_format_fits_in_an_instruction);
    RUN(mnemonics_are_unique_and_found);
    RUN(dtype_names_round_trip);
    RUN(format_field_names_unique_within_format);
    return test_summary("test_isa_table");
}
