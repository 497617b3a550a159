/* test_sha256.c - SHA-256 against the FIPS 180-4 / NIST example vectors and
 * sha256sum of a generated buffer crossing the 55/56/64-byte padding edges. */
#include <stdio.h>
#include "test/test.h"
#include "util/sha256.h"

static void hex(const uint8_t *h, char *s)
{
    for (int i = 0; i < 32; i++) sprintf(s + 2 * i, "%02x", h[i]);
}

static void check_vec(const char *msg, size_t len, const char *want)
{
    uint8_t h[32];
    char s[65];
    atl_sha256(msg, len, h);
    hex(h, s);
    CHECKF(!strcmp(s, want), "sha256 of %zu bytes: %s, want %s", len, s, want);
}

TEST(nist_vectors)
{
    check_vec("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_vec("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check_vec("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    check_vec("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
              112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(padding_edges)
{
    char buf[64];
    memset(buf, 'a', sizeof buf);
    /* printf 'a%.0s' {1..55} | sha256sum, etc. */
    check_vec(buf, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    check_vec(buf, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

int main(void)
{
    RUN(nist_vectors);
    RUN(padding_edges);
    return test_summary("test_sha256");
}
