/* progress.c - a status line on stderr for work that takes seconds (see
 * cli.h): rewritten in place on a terminal and cleared when the work is
 * done, one line a second when asked for with --progress elsewhere. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tools/cli.h"
#include "util/clock.h"

void cli_progress_init(CliProgress *p, const char *cmd, CliProgressMode mode)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->tty = isatty(STDERR_FILENO);
    p->enabled = mode == CLI_PROGRESS_ON || (mode == CLI_PROGRESS_AUTO && p->tty);
    p->start = atl_clock_s();
}

void cli_progress(CliProgress *p, const char *fmt, ...)
{
    if (!p || !p->enabled) return;
    double now = atl_clock_s(), gap = p->tty ? 0.2 : 1.0;
    if (p->last && now - p->last < gap) return;
    p->last = now;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (p->tty) fprintf(stderr, "\ratoll %s: %s (%.0f s)\033[K", p->cmd, text, now - p->start);
    else fprintf(stderr, "atoll %s: %s (%.0f s)\n", p->cmd, text, now - p->start);
    fflush(stderr);
    p->shown = p->tty;
}

void cli_progress_end(CliProgress *p)
{
    if (!p || !p->shown) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->shown = 0;
}
