/* What the GPU tests' helper processes share (ipc_child.c, multi_gpu_child.c;
 * their parent side is child_process.hpp): one report line per step on the
 * report descriptor, a failure count, hex arguments, and the byte pattern the
 * parents write and check.
 *   "ok <step>" | "fail <step>: <detail>" | ... | "done <live objects>" */
#ifndef CUCORE_TESTS_GPU_CHILD_REPORT_H
#define CUCORE_TESTS_GPU_CHILD_REPORT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cucore.h>

static int g_report = -1;  /* the report descriptor (argv[1]) */
static int g_failures = 0;

/* Writes one line to the report descriptor. */
static void report(const char *format, ...) {
    char line[1024];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t off = 0;
    while (off < n) {
        ssize_t w = write(g_report, line + off, (size_t)(n - off));
        if (w <= 0) return;
        off += w;
    }
}

/* Reports a failed step (status and message of the library's last error). */
static void fail(const char *step, const char *what) {
    ++g_failures;
    report("fail %s: %s (%s: %s)", step, what, cucore_status_string(cucore_last_error_status()),
           cucore_last_error_message());
}

/* `size` bytes from 2 * size hex digits; -1 for anything else. */
static int from_hex(const char *text, uint8_t *out, size_t size) {
    if (strlen(text) != 2 * size) return -1;
    for (size_t i = 0; i < size; ++i) {
        unsigned v = 0;
        if (sscanf(text + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* The pattern the parents write (tests/gpu/ipc_test.cpp, communicator_test.cpp). */
static uint8_t pattern_byte(size_t i, unsigned seed) { return (uint8_t)(i * 31u + seed * 7u + (i >> 8)); }

#endif /* CUCORE_TESTS_GPU_CHILD_REPORT_H */
