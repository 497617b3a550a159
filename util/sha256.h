/* sha256.h - SHA-256 (FIPS 180-4), for the source-model hash the compiler
 * records in an .abm's metadata. One call over a buffer; no state kept. */
#ifndef ATOLL_UTIL_SHA256_H
#define ATOLL_UTIL_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define ATL_SHA256_BYTES 32
void atl_sha256(const void *data, size_t len, uint8_t out[ATL_SHA256_BYTES]);
#endif
