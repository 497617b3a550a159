/* fw_util.c - the few string helpers the freestanding firmware needs:
 * a bounded formatter for messages to the host (no stdio on the control
 * processor) and strlen. Memory copies use the compiler builtins, which a
 * freestanding environment backs with memcpy/memset. */
#include <stdarg.h>
#include "firmware/fw.h"

size_t fw_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

typedef struct Out { char *d; size_t cap, n; } Out;

static void out_c(Out *o, char c)
{
    if (o->n + 1 < o->cap) o->d[o->n] = c;
    o->n++;
}

static void out_num(Out *o, unsigned long long x, unsigned base, int neg)
{
    char digits[24];
    int k = 0;
    if (neg) out_c(o, '-');
    do {
        digits[k++] = "0123456789abcdef"[x % base];
        x /= base;
    } while (x);
    while (k) out_c(o, digits[--k]);
}

size_t fw_vfmt(char *dst, size_t cap, const char *f, va_list ap)
{
    Out o = { dst, cap, 0 };
    while (*f) {
        char c = *f++;
        if (c != '%') { out_c(&o, c); continue; }
        int longs = 0;
        while (*f == 'l') { longs++; f++; }
        char conv = *f;
        if (!conv) break;
        f++;
        if (conv == 's') {
            const char *s = va_arg(ap, const char *);
            for (s = s ? s : "(null)"; *s; s++) out_c(&o, *s);
        } else if (conv == 'c') {
            out_c(&o, (char)va_arg(ap, int));
        } else if (conv == 'd') {
            long long x = longs >= 2 ? va_arg(ap, long long) : longs ? va_arg(ap, long) : va_arg(ap, int);
            out_num(&o, x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x, 10, x < 0);
        } else if (conv == 'u' || conv == 'x') {
            unsigned long long x = longs >= 2 ? va_arg(ap, unsigned long long)
                                 : longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            out_num(&o, x, conv == 'u' ? 10 : 16, 0);
        } else {
            out_c(&o, conv); /* %% and anything unknown: the character itself */
        }
    }
    if (cap) dst[o.n < cap ? o.n : cap - 1] = '\0';
    return o.n;
}

size_t fw_fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = fw_vfmt(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}
