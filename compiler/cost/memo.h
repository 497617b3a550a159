/* memo.h - the cost model's memo tables (memo.c): a string of words as the
 * key, a string of words as the value. flow.c keeps the work of a DMA end
 * in one, banked.c the work of a merge of sibling DMAs. */
#ifndef ATOLL_COMPILER_COST_MEMO_H
#define ATOLL_COMPILER_COST_MEMO_H
#include <stdint.h>

typedef struct BkMemo BkMemo;
/* An empty table; NULL on OOM. bk_memo_free frees it and what it holds. */
BkMemo *bk_memo_new(void);
void bk_memo_free(BkMemo *m);
/* The value stored under key[0..nkey) (*nval words), NULL if none. Valid
 * until the next bk_memo_store. (Not const: it keeps what it found at hand
 * for the next ask, memo.c's front table.) */
const uint64_t *bk_memo_find(BkMemo *m, const uint64_t *key, int nkey, int *nval);
/* Stores val[0..nval) under a key not stored yet; returns the stored
 * copy (valid until the next store), NULL on OOM. */
const uint64_t *bk_memo_store(BkMemo *m, const uint64_t *key, int nkey, const uint64_t *val, int nval);
#endif
